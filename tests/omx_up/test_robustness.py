"""Scale-up under a malformed manifest and unexpected exceptions: nothing tagged is ever leaked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pure.omx.scale_up import worker as su
from tests.omx_up.fixtures import StubTmux, UpTeam, dispatch, request, run, task

ROLLBACK_KILL = "L S(%31) L K(%31) L"
GARBAGE = "garbage\n"


def test_malformed_manifest_is_ignored_and_left_alone_like_oh_my_codex(tmp_path: Path) -> None:
    """oh-my-codex's writeConfig syncs the manifest only when readTeamManifestV2Raw parses it; an
    unparseable one is left as it is and only config.json is written, so the scale-up succeeds."""
    team = UpTeam(tmp_path)
    (team.dir / "manifest.v2.json").write_text(GARBAGE)
    out = run(team, request(team), StubTmux())
    assert out.result["ok"] is True, out.error
    assert out.sequence() == "V L L S(%21) L SPLIT(%21) L L TAG(%31) " + dispatch("%31")
    assert team.worker_names() == ["worker-1", "worker-2"]
    assert (team.dir / "manifest.v2.json").read_text() == GARBAGE


def test_malformed_manifest_rollback_restores_membership_and_kills_the_pane(tmp_path: Path) -> None:
    team = UpTeam(tmp_path)
    (team.dir / "manifest.v2.json").write_text(GARBAGE)
    env = {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "inbox"}
    out = run(team, request(team, tasks=(task(),), env=env), StubTmux())
    assert out.error == "scale_up_worker_materialization_failed:worker-2:injected_scale_up_failure:inbox"
    assert out.sequence().endswith(ROLLBACK_KILL)
    assert team.worker_names() == ["worker-1"]
    assert (team.dir / "manifest.v2.json").read_text() == GARBAGE
    assert not (team.dir / "workers" / "worker-2").exists()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".team-locks" not in str(p)}


@pytest.mark.parametrize(("name", "text", "field"), [
    ("tasks/task-1.json", "garbage\n", ""),
    ("tasks/task-1.json", '{"id": "1", "subject": "s", "description": "d", "created_at": "x", "status": "pending", '
                          '"owner": 5}', " field owner"),
    ("tasks/task-1.json", '{"id": "1", "version": ' + "9" * 5000 + "}", " field version"),
    ("manifest.v2.json", '{"schema_version": 2, "worker_count": 1e400}', " field worker_count"),
])
def test_malformed_state_is_refused_before_anything_is_created(tmp_path: Path, name: str, text: str,
                                                               field: str) -> None:
    """A task file that is not a valid task, or a manifest holding what JSON cannot carry: the
    scale-up names it and ends before its first write or tmux mutation."""
    team = UpTeam(tmp_path)
    (team.dir / name).write_text(text)
    before = _files(tmp_path)
    out = run(team, request(team, tasks=(task(),)), StubTmux())
    assert out.done.outcome.status == "error"
    assert out.error.startswith(f"team_state_malformed:{team.dir / name}{field}"), out.error
    assert not out.commands("split-window") and not out.commands("set-option")
    assert _files(tmp_path) == before


def _boom(*_args: object, **_kwargs: object) -> str:
    raise RuntimeError("boom")


@pytest.mark.parametrize(("target", "expect_kill"), [
    ("render_inbox", True),          # after the pane was pinned and tagged
    ("role_instructions", False),    # during preparation, before any pane exists
])
def test_unexpected_exception_goes_through_the_rollback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        target: str, expect_kill: bool) -> None:
    team = UpTeam(tmp_path)
    owner = su.dsp if target == "render_inbox" else su
    monkeypatch.setattr(owner, target, _boom)
    prompts = tmp_path / ".codex" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "executor.md").write_text("executor prompt\n")
    out = run(team, request(team, tasks=(task(),)), StubTmux())
    assert out.done.outcome.status == "error"
    assert out.error == "internal_error:RuntimeError:boom"
    assert "changesMade" not in out.result
    if expect_kill:
        assert out.sequence().endswith(ROLLBACK_KILL)
        assert out.commands("kill-pane") == [("kill-pane", "-t", "%31")]
    else:
        assert out.commands("split-window") == []
    assert team.worker_names() == ["worker-1"]
    assert team.config()["next_worker_index"] == 2
    assert not (team.dir / "workers" / "worker-2").exists()
    assert not (team.dir / "runtime" / "worker-2-startup.sh").exists()
    assert list((team.dir / "tasks").iterdir()) == []
    assert json.loads((team.dir / "dispatch" / "requests.json").read_text() or "[]") == [] \
        if (team.dir / "dispatch" / "requests.json").exists() else True


def test_unexpected_exception_right_after_the_split_keeps_the_unpinned_pane_as_debt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash between split-window and the pin: the pane cannot be proven ours, so it is kept as
    debt (named, a member) rather than leaked or killed."""
    team = UpTeam(tmp_path)
    real = su._worker_record
    monkeypatch.setattr(su, "_worker_record", lambda *a, **k: _boom() if k.get("pane") == "%31" else real(*a, **k))
    out = run(team, request(team), StubTmux())
    assert out.done.outcome.status == "debt"
    assert "pane_pid_unpinned:%31" in out.error
    assert out.commands("kill-pane") == []


# ------------------------------------------------------------------ worker CLI pre-flight (exit 4)


def test_missing_worker_cli_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    team = UpTeam(tmp_path)
    from attrs import evolve

    req = evolve(request(team, count=2), cli_paths={"codex": "", "claude": "/usr/bin/claude", "gemini": ""})
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if ".team-locks" not in str(p))
    out = run(team, req, StubTmux())
    assert out.done.outcome.status == "refused"
    assert out.error.startswith("worker_cli_unavailable:codex: the worker CLI 'codex' selected for worker-2 "
                                "was not found on PATH")
    assert out.sequence() == "V"
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if ".team-locks" not in str(p)) == before


def test_worker_cli_map_checks_each_worker(tmp_path: Path) -> None:
    from attrs import evolve

    team = UpTeam(tmp_path)
    req = evolve(request(team, count=2, env={"OMX_TEAM_WORKER_CLI_MAP": "codex,claude"}),
                 cli_paths={"codex": "/opt/codex", "claude": "", "gemini": ""})
    out = run(team, req, StubTmux())
    assert out.done.outcome.status == "refused"
    assert out.error.startswith("worker_cli_unavailable:claude:")
    assert "worker-3" in out.error


def test_resolved_or_placeholder_cli_passes_the_pre_flight(tmp_path: Path) -> None:
    from attrs import evolve

    team = UpTeam(tmp_path)
    req = evolve(request(team, env={"OMX_TEAM_WORKER_CLI": "placeholder"}),
                 cli_paths={"codex": "", "claude": "", "gemini": "", "placeholder": "/x/placeholder_agent.sh"})
    out = run(team, req, StubTmux())
    assert out.result["ok"] is True, out.error


def test_cli_refusal_text_names_the_cli_and_path() -> None:
    from pure.omx.scale_up import cli_unavailable
    from shell.cli.scale_up import build_request, explain

    text = explain({"ok": False, "error": cli_unavailable("codex", "worker-1")}, "refused", False, "/usr/bin:/bin")
    assert "'codex'" in text and "PATH searched: /usr/bin:/bin" in text and "Nothing was changed." in text
    import argparse

    args = argparse.Namespace(team="t", count=1, cwd=".", agent_type="executor", task=[], all_or_nothing=False)
    req = build_request(args, {"PATH": "/nonexistent-dir"})
    assert req.cli_paths["codex"] == "" and req.cli_paths["placeholder"].endswith("placeholder_agent.sh")
