"""``config.json`` and ``manifest.v2.json`` saved as oh-my-codex's ``saveTeamConfig`` saves them."""

from __future__ import annotations

from returns.result import Failure

from pure.omx import txn
from pure.omx.codec import Parsed, parse_object, render_json
from pure.omx.locks import Barrier, with_barrier
from pure.omx.records import ConfigPatch, patch_json, to_json
from pure.omx.state import TeamPaths, TeamState, read_team_state
from pure.program import Gen, fail

# The key order of config.json as oh-my-codex's saveTeamConfig writes it when a manifest exists (the
# config it saves was rebuilt from the manifest, so keys only config.json had are dropped).
SAVED_CONFIG_ORDER = (
    "name", "task", "agent_type", "worker_launch_mode", "lifecycle_profile", "worker_count", "max_workers",
    "workers", "created_at", "tmux_session", "tmux_session_id", "tmux_session_created", "next_task_id",
    "leader_cwd", "team_state_root", "workspace_mode", "worktree_mode", "leader_pane_id", "leader_pane_pid",
    "hud_pane_pid", "hud_pane_id", "tmux_pane_owner_id", "resize_hook_name", "resize_hook_target",
    "next_worker_index", "display_name", "requested_name", "identity_source", "config_generation",
)
ALWAYS_SAVED = ("leader_pane_id", "leader_pane_pid", "hud_pane_pid", "hud_pane_id")
# panefleet's own config keys, kept across a save (oh-my-codex never writes them), or as the patch sets them.
PANEFLEET_KEYS = ("worker_cli", "leader_tmux_server")


def json_object(text: str | None) -> Parsed | None:
    """``text`` parsed as a JSON object, else ``None`` (absent, not an object, or not JSON as the
    team state codec reads it: ``pure/omx/codec.py`` ``parse_json``, so that what the canonical read
    ignores is never patched and rewritten here)."""
    return None if text is None else parse_object(text, "").value_or(None)


def saved_config_text(state: TeamState, patch: ConfigPatch) -> str:
    """``config.json`` after oh-my-codex's ``saveTeamConfig`` of the canonical config plus ``patch``.

    With a manifest this rebuilds the object key by key in oh-my-codex's order, so it works on the
    JSON forms (``to_json``) of the manifest and the canonical config: the one place they are merged."""
    if state.raw_manifest is None:
        return patch_json(state.config_text, patch)
    config = to_json(state.config)
    patched = dict(patch.items())
    source = {**state.raw_manifest, **config, **patched}
    out: dict[str, object] = {}
    for key in SAVED_CONFIG_ORDER:
        if key in ("agent_type", "worker_launch_mode", "max_workers"):
            out[key] = config.get(key)
        elif key in source and (source[key] is not None or key in ALWAYS_SAVED or key in state.raw_manifest):
            out[key] = source[key]
        elif key in ALWAYS_SAVED:
            out[key] = None
    raw_config = to_json(state.raw_config)
    for key in PANEFLEET_KEYS:
        if key in patched or key in raw_config:
            out[key] = patched.get(key, raw_config.get(key))
    return render_json(out)


def locked_state(paths: TeamPaths, barrier: Barrier | None = None) -> Gen[TeamState | None]:
    return (yield from with_barrier(paths, lambda b: txn.load_team(paths, b), held=barrier))


def recovered_texts(paths: TeamPaths, barrier: Barrier) -> Gen[tuple[str, str | None]]:
    """Under the barrier: recover an interrupted commit, then the text of ``config.json`` and of
    ``manifest.v2.json`` (None when absent); a missing config ends the program
    (``team_config_missing:<team>``)."""
    yield from txn.recover(paths, barrier)
    config_text = yield from txn.read_text(paths.config)
    if config_text is None:
        raise fail(f"team_config_missing:{paths.team}")
    return config_text, (yield from txn.read_text(paths.manifest))


def save_config(paths: TeamPaths, generation: int, patch: ConfigPatch, barrier: Barrier | None) -> Gen[int]:
    """oh-my-codex ``saveTeamConfig``: generation-checked, config + manifest through a prepared
    journal. ``patch`` replaces keys of both raw files in place. Returns the new generation."""

    def body(b: Barrier) -> Gen[int]:
        yield from txn.recover(paths, b)
        config_text = yield from txn.read_text(paths.config)
        if config_text is None:
            raise fail(f"team_config_missing:{paths.team}")
        current = yield from txn.raw_generation(paths)
        if current != generation:
            raise fail(f"team_config_stale_generation:{paths.team}:{generation}:{current}")
        manifest_text = yield from txn.read_text(paths.manifest)
        loaded = read_team_state(paths, config_text, manifest_text)
        if isinstance(loaded, Failure):
            raise fail(f"team_state_malformed:{loaded.failure()}")
        state = loaded.unwrap()
        change = txn.Change(config_text, saved_config_text(state, patch))
        # oh-my-codex's writeConfig keeps the manifest in sync only when it reads as a v2 manifest;
        # a missing, unparseable or invalid one is left as it is and only config.json is written.
        manifest = (None if manifest_text is None or state.raw_manifest is None
                    else txn.Change(manifest_text, patch_json(manifest_text, patch)))
        return (yield from txn.commit(paths, b, txn.Transaction(
            base_generation=generation, tasks=(), config=change, manifest=manifest)))

    return (yield from with_barrier(paths, body, held=barrier))
