"""Team state of oh-my-codex 0.20.3 (``<stateRoot>/team/<team>/…``): paths, validation, the canonical view.

Files are parsed by ``pure/omx/codec.py``, checked here field by field, and typed as the records of
``pure/omx/records.py``, which keep every key this module does not know for a rewrite
(docs/team-state.md, "Typed records"). Reading follows oh-my-codex's precedence: a valid
``manifest.v2.json`` wins and only ``config_generation`` comes from ``config.json``.

Malformed input never raises: it yields a :class:`StateError` naming the file and the field.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from typing import Literal

from attrs import frozen
from returns.result import Failure, Result, Success

from pure.model import MAX_SAFE_INTEGER
from pure.omx.codec import (
    Parsed,
    StateError,
    is_positive_int,
    is_safe_int,
    parse_json,
    parse_object,
)
from pure.omx.records import Identity, JsonObject, Task, TeamConfig, from_json, to_json
from pure.tmux.parse import server_of

DEFAULT_MAX_WORKERS = 20
TEAM_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,29}")
WORKER_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
TASK_ID_RE = re.compile(r"[0-9]{1,20}")

# -------------------------------------------------------------------------------------------- paths


def resolve_state_root(cwd: str, env: Mapping[str, str]) -> str:
    """``OMX_TEAM_STATE_ROOT`` (resolved against cwd), else ``<OMX_ROOT|OMX_STATE_ROOT>/.omx/state``,
    else ``<cwd>/.omx/state``."""
    explicit = env.get("OMX_TEAM_STATE_ROOT", "").strip()
    if explicit:
        return posixpath.normpath(posixpath.join(cwd, explicit))
    boxed = (env.get("OMX_ROOT") or env.get("OMX_STATE_ROOT") or "").strip()
    if boxed:
        return posixpath.normpath(posixpath.join(cwd, boxed, ".omx", "state"))
    return posixpath.normpath(posixpath.join(cwd, ".omx", "state"))


# A worker's name as scale-up makes it, and the files of ``runtime/`` named after one: its startup
# script and its intent. The one place a worker is read back from a file name.
WORKER_NAME = re.compile(r"worker-[1-9][0-9]{0,8}")
SCRIPT_SUFFIX = "-startup.sh"
INTENT_SUFFIX = ".intent"
RuntimeFile = Literal["script", "intent"]
_RUNTIME_FILES: tuple[tuple[str, RuntimeFile], ...] = ((SCRIPT_SUFFIX, "script"), (INTENT_SUFFIX, "intent"))


def runtime_file(name: str) -> tuple[str, RuntimeFile] | None:
    """The worker a file of ``runtime/`` is named after and which of its files it is, or None."""
    for suffix, kind in _RUNTIME_FILES:
        worker = name.removesuffix(suffix)
        if worker != name and WORKER_NAME.fullmatch(worker):
            return worker, kind
    return None


def runtime_worker(path: str, kind: RuntimeFile | None = None) -> str | None:
    """The worker a path ``…/runtime/<file>`` belongs to (``runtime_file``), of ``kind`` when given."""
    folder, name = posixpath.split(path)
    found = runtime_file(name) if posixpath.basename(folder) == "runtime" else None
    return found[0] if found is not None and kind in (None, found[1]) else None


@frozen
class TeamPaths:
    state_root: str
    team: str

    @property
    def team_dir(self) -> str:
        return posixpath.join(self.state_root, "team", self.team)

    def _in(self, *parts: str) -> str:
        return posixpath.join(self.team_dir, *parts)

    @property
    def config(self) -> str:
        return self._in("config.json")

    @property
    def manifest(self) -> str:
        return self._in("manifest.v2.json")

    @property
    def journal(self) -> str:
        return self._in(".membership-task-transaction.json")

    @property
    def debt(self) -> str:
        return self._in(".scale-down-cleanup-debt.json")

    @property
    def tasks_dir(self) -> str:
        return self._in("tasks")

    def task(self, task_id: str) -> str:
        return self._in("tasks", f"task-{task_id}.json")

    def claim_lock(self, task_id: str) -> str:
        return self._in("claims", f"task-{task_id}.lock")

    @property
    def workers_dir(self) -> str:
        return self._in("workers")

    def worker_dir(self, worker: str) -> str:
        return self._in("workers", worker)

    def worker_file(self, worker: str, name: str) -> str:
        return self._in("workers", worker, name)

    @property
    def transcripts_dir(self) -> str:
        """``transcripts/``: the scrollback of worker panes saved before they were killed (panefleet's own,
        ``pure/omx/transcripts.py``); the team's, not a worker's, so it outlives the worker's folder."""
        return self._in("transcripts")

    def transcript(self, worker: str, stamp: str) -> str:
        return self._in("transcripts", f"{worker}.{stamp}.log")

    def mailbox_file(self, worker: str) -> str:
        """``mailbox/<worker>.json``: the worker's messages (``pure/omx/mailbox.py``)."""
        return self._in("mailbox", f"{worker}.json")

    @property
    def dispatch_requests(self) -> str:
        return self._in("dispatch", "requests.json")

    @property
    def events(self) -> str:
        return self._in("events", "events.ndjson")

    @property
    def runtime_dir(self) -> str:
        return self._in("runtime")

    def startup_script(self, index: int) -> str:
        return self._in("runtime", f"worker-{index}{SCRIPT_SUFFIX}")

    def intent(self, worker: str) -> str:
        """``runtime/<worker>.intent``: the worker pane about to be created (``pure/omx/strays.py``)."""
        return self._in("runtime", f"{worker}{INTENT_SUFFIX}")

    @property
    def phase(self) -> str:
        return self._in("phase.json")

    @property
    def locks_dir(self) -> str:
        return posixpath.join(self.state_root, ".team-locks")

    @property
    def scaling_lock(self) -> str:
        return posixpath.join(self.locks_dir, f"{self.team}.scaling")

    @property
    def membership_lock(self) -> str:
        return posixpath.join(self.locks_dir, f"{self.team}.membership")


def config_generation(raw: Parsed) -> int:
    value = raw.get("config_generation")
    return value if type(value) is int and 0 <= value <= MAX_SAFE_INTEGER else 0


WORKER_STRINGS = ("pane_id", "role", "worker_cli", "working_dir", "worktree_path", "worktree_repo_root",
                  "worktree_branch", "team_state_root")
WORKER_BOOLS = ("worktree_detached", "worktree_created")
CONFIG_INTEGERS = ("worker_count", "max_workers", "next_worker_index", "next_task_id", "leader_pane_pid",
                   "hud_pane_pid")
CONFIG_STRINGS = ("leader_pane_id", "hud_pane_id", "tmux_pane_owner_id", "tmux_session", "team_state_root",
                  "leader_cwd", "worker_cli", "workspace_mode")


def _set(container: Parsed, key: str) -> bool:
    return key in container and container[key] is not None


def _check_worker(worker: object, where: str, file: str) -> StateError | None:
    if not isinstance(worker, dict):
        return StateError(file, where, "worker entry must be an object")
    if not isinstance(worker.get("name"), str) or WORKER_NAME_RE.fullmatch(worker["name"]) is None:
        return StateError(file, f"{where}.name", "worker name must match ^[a-z0-9][a-z0-9-]{0,63}$")
    if not is_positive_int(worker.get("index")):
        return StateError(file, f"{where}.index", "worker index must be a positive integer")
    for key in WORKER_STRINGS:
        if _set(worker, key) and not isinstance(worker[key], str):
            return StateError(file, f"{where}.{key}", "must be a string")
    for key in WORKER_BOOLS:
        if _set(worker, key) and not isinstance(worker[key], bool):
            return StateError(file, f"{where}.{key}", "must be a boolean")
    if _set(worker, "pid") and not is_safe_int(worker["pid"]):
        return StateError(file, f"{where}.pid", "must be an integer")
    if _set(worker, "tmux_server") and not is_server(worker["tmux_server"]):
        return StateError(file, f"{where}.tmux_server", SERVER_RULE)
    return None


SERVER_RULE = "must be a tmux server as PID@START (its pid and start time) or null"


def is_server(value: object) -> bool:
    """A tmux server as a pin records it (pure/tmux/parse.py ``server_of``)."""
    return isinstance(value, str) and server_of(*value.partition("@")[::2]) == value


def validate_config(raw: Parsed, file: str) -> Result[Parsed, StateError]:
    """Every field panefleet reads must have the right JSON type; worker names are unique."""
    if not isinstance(raw.get("name"), str):
        return Failure(StateError(file, "name", "must be a string"))
    workers = raw.get("workers")
    if not isinstance(workers, list):
        return Failure(StateError(file, "workers", "must be an array"))
    names: set[str] = set()
    for position, worker in enumerate(workers):
        problem = _check_worker(worker, f"workers[{position}]", file)
        if problem is not None:
            return Failure(problem)
        if worker["name"] in names:
            return Failure(StateError(file, f"workers[{position}].name", f"duplicate worker name {worker['name']}"))
        names.add(worker["name"])
    for key in CONFIG_INTEGERS:
        if _set(raw, key) and not is_safe_int(raw[key]):
            return Failure(StateError(file, key, "must be an integer"))
    if _set(raw, "config_generation") and not (is_safe_int(raw["config_generation"])
                                               and raw["config_generation"] >= 0):
        return Failure(StateError(file, "config_generation", "must be a non-negative integer"))
    for key in CONFIG_STRINGS:
        if _set(raw, key) and not isinstance(raw[key], str):
            return Failure(StateError(file, key, "must be a string or null"))
    if _set(raw, "leader_tmux_server") and not is_server(raw["leader_tmux_server"]):
        return Failure(StateError(file, "leader_tmux_server", SERVER_RULE))
    return Success(raw)


def is_valid_manifest(value: object) -> bool:
    """oh-my-codex's manifest validity test (an invalid manifest is ignored on read)."""
    if not isinstance(value, dict):
        return False
    v = value
    checks = (
        v.get("schema_version") == 2 and type(v.get("schema_version")) is int,
        isinstance(v.get("name"), str),
        isinstance(v.get("task"), str),
        isinstance(v.get("tmux_session"), str),
        type(v.get("worker_count")) in (int, float),
        type(v.get("next_task_id")) in (int, float),
        isinstance(v.get("created_at"), str),
        isinstance(v.get("workers"), list),
        v.get("leader_pane_id", 0) is None or isinstance(v.get("leader_pane_id"), str),
        v.get("hud_pane_id", 0) is None or isinstance(v.get("hud_pane_id"), str),
        v.get("leader_pane_pid") is None or type(v.get("leader_pane_pid")) in (int, float),
        isinstance(v.get("leader"), dict),
        isinstance(v.get("policy"), dict),
        isinstance(v.get("permissions_snapshot"), dict),
    )
    return all(checks)


def _owner(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _positive_or_none(value: object) -> int | None:
    return value if is_positive_int(value) else None  # type: ignore[return-value]


def normalize_config(raw: Parsed) -> Parsed:
    out = dict(raw)
    out["config_generation"] = config_generation(raw)
    out["leader_pane_id"] = raw.get("leader_pane_id")
    out["leader_pane_pid"] = _positive_or_none(raw.get("leader_pane_pid"))
    out["hud_pane_pid"] = _positive_or_none(raw.get("hud_pane_pid"))
    out["hud_pane_id"] = raw.get("hud_pane_id")
    owner = _owner(raw.get("tmux_pane_owner_id"))
    if owner is None:
        out.pop("tmux_pane_owner_id", None)
    else:
        out["tmux_pane_owner_id"] = owner
    out["worker_launch_mode"] = "prompt" if raw.get("worker_launch_mode") == "prompt" else "interactive"
    return out


_FROM_MANIFEST = (
    "tmux_session", "tmux_session_id", "tmux_session_created", "next_task_id", "leader_cwd",
    "team_state_root", "workspace_mode", "worktree_mode", "leader_pane_id", "hud_pane_id",
    "resize_hook_name", "resize_hook_target", "next_worker_index", "display_name", "requested_name",
    "identity_source", "leader_tmux_server",
)


def config_from_manifest(manifest: Parsed, generation: int) -> Parsed:
    workers = manifest.get("workers") or []
    first_role = workers[0].get("role") if workers and isinstance(workers[0], dict) else None
    raw_policy = manifest.get("policy")
    policy: Parsed = raw_policy if isinstance(raw_policy, dict) else {}
    out: Parsed = {
        "name": manifest.get("name"),
        "task": manifest.get("task"),
        "agent_type": first_role if first_role is not None else "executor",
        "worker_launch_mode": "prompt" if policy.get("worker_launch_mode") == "prompt" else "interactive",
        "lifecycle_profile": manifest.get("lifecycle_profile"),
        "worker_count": manifest.get("worker_count"),
        "max_workers": DEFAULT_MAX_WORKERS,
        "workers": workers,
        "created_at": manifest.get("created_at"),
    }
    for key in _FROM_MANIFEST:  # JSON.stringify drops undefined, keeps null: copy present keys only
        if key in manifest:
            out[key] = manifest[key]
    out["leader_pane_pid"] = manifest.get("leader_pane_pid")
    out["hud_pane_pid"] = manifest.get("hud_pane_pid")
    owner = _owner(manifest.get("tmux_pane_owner_id"))
    if owner is not None:
        out["tmux_pane_owner_id"] = owner
    out["config_generation"] = generation
    return out


@frozen
class TeamState:
    """The canonical view of a team plus the raw files it came from."""

    config: TeamConfig  # the effective config (manifest-preferred), as oh-my-codex's readTeamConfig
    raw_config: TeamConfig  # config.json as it is
    raw_manifest: JsonObject | None  # None when absent or invalid; only ever a source of saved keys
    config_text: str
    manifest_text: str | None


def read_team_state(paths: TeamPaths, config_text: str | None, manifest_text: str | None) -> Result[TeamState, StateError]:
    """Build the canonical team view from the two files' text (``None`` = file absent).

    A manifest that is not JSON (a syntax error), not an object or not a v2 manifest is ignored, as
    oh-my-codex ignores it. One that is JSON but holds a value panefleet cannot write back unchanged
    (NaN or Infinity, a number beyond a double, a lone surrogate, nesting deeper than ``MAX_DEPTH``) is
    refused: oh-my-codex would read some of those as its manifest, so ignoring it would let the two
    tools disagree about the team."""
    parsed = parse_object(config_text, paths.config).bind(lambda raw: validate_config(raw, paths.config))
    if isinstance(parsed, Failure):
        return Failure(parsed.failure())
    raw_config = parsed.unwrap()
    manifest: Parsed | None = None
    if manifest_text is not None:
        parsed_manifest = parse_json(manifest_text, paths.manifest)
        if isinstance(parsed_manifest, Failure) and parsed_manifest.failure().syntax is None:
            return Failure(parsed_manifest.failure())  # JSON, but holding what panefleet cannot carry
        candidate = parsed_manifest.value_or(None)
        if isinstance(candidate, dict) and is_valid_manifest(candidate):
            manifest = candidate
    if manifest is not None:
        effective = config_from_manifest(manifest, config_generation(raw_config))
        checked = validate_config(effective, paths.manifest)
        if isinstance(checked, Failure):
            return Failure(checked.failure())
    else:
        effective = normalize_config(raw_config)
    return Success(TeamState(from_json(TeamConfig, effective), from_json(TeamConfig, raw_config), manifest,
                             config_text or "", manifest_text))


# ------------------------------------------------------------------------------------- init state

DEFAULT_POLICY: JsonObject = {
    "worker_launch_mode": "interactive",
    "display_mode": "auto",
    "dispatch_mode": "hook_preferred_with_fallback",
    "dispatch_ack_timeout_ms": 2000,
}
DEFAULT_GOVERNANCE: JsonObject = {
    "delegation_only": False,
    "plan_approval_required": False,
    "nested_teams_allowed": False,
    "one_team_per_leader_session": True,
    "cleanup_requires_all_workers_inactive": True,
}


def initial_config(
    *,
    team: str,
    task: str,
    agent_type: str,
    created_at: str,
    tmux_session: str,
    leader_pane_id: str | None,
    leader_pane_pid: int | None,
    leader_cwd: str,
    worker_cli: str | None = None,
    max_workers: int = DEFAULT_MAX_WORKERS,
    leader_tmux_server: str | None = None,
) -> TeamConfig:
    """What ``initTeamState(team, task, agentType, 0, cwd)`` writes, bound to a leader pane (and, panefleet's
    own key, the tmux server its pid was pinned on)."""
    config: dict[str, object] = {
        "name": team,
        "task": task,
        "agent_type": agent_type,
        "worker_launch_mode": "interactive",
        "lifecycle_profile": "default",
        "worker_count": 0,
        "max_workers": max_workers,
        "workers": [],
        "created_at": created_at,
        "tmux_session": tmux_session,
        "next_task_id": 1,
        "leader_cwd": leader_cwd,
        "leader_pane_id": leader_pane_id,
        "leader_pane_pid": leader_pane_pid,
        "hud_pane_pid": None,
        "hud_pane_id": None,
        "tmux_pane_owner_id": f"team:{team}",
        "resize_hook_name": None,
        "resize_hook_target": None,
        "next_worker_index": 1,
        "config_generation": 0,
    }
    if worker_cli is not None:
        config["worker_cli"] = worker_cli
    if leader_tmux_server is not None:
        config["leader_tmux_server"] = leader_tmux_server
    return from_json(TeamConfig, config)


def manifest_from_config(record: TeamConfig) -> JsonObject:
    """The ``manifest.v2.json`` that ``team init`` writes beside the config ``record``: a new file, built
    key by key in oh-my-codex's order from the config's JSON form."""
    config = to_json(record)
    manifest: dict[str, object] = {
        "schema_version": 2,
        "name": config["name"],
        "task": config["task"],
        "leader": {"session_id": "", "worker_id": "leader-fixed", "role": "coordinator"},
        "policy": dict(DEFAULT_POLICY),
        "governance": dict(DEFAULT_GOVERNANCE),
        "lifecycle_profile": "default",
        "permissions_snapshot": {"approval_mode": "unknown", "sandbox_mode": "unknown", "network_access": True},
        "tmux_session": config["tmux_session"],
        "worker_count": config["worker_count"],
        "workers": config["workers"],
        "next_task_id": config["next_task_id"],
        "created_at": config["created_at"],
    }
    for key in ("leader_cwd", "team_state_root", "workspace_mode", "worktree_mode"):
        if config.get(key) is not None:
            manifest[key] = config[key]
    for key in ("leader_pane_id", "leader_pane_pid", "hud_pane_pid", "hud_pane_id"):
        manifest[key] = config.get(key)
    if config.get("leader_tmux_server") is not None:
        manifest["leader_tmux_server"] = config["leader_tmux_server"]
    if _owner(config.get("tmux_pane_owner_id")) is not None:
        manifest["tmux_pane_owner_id"] = config["tmux_pane_owner_id"]
    manifest["resize_hook_name"] = config.get("resize_hook_name")
    manifest["resize_hook_target"] = config.get("resize_hook_target")
    manifest["next_worker_index"] = config.get("next_worker_index")
    return manifest


TASK_STATUSES = ("pending", "blocked", "in_progress", "completed", "failed")
TASK_STRINGS = ("subject", "description", "created_at")
TASK_OPTIONAL_STRINGS = ("owner", "role")
CLAIM_STRINGS = ("owner", "token", "leased_until")


def check_task(text: str | None, task_id: str, file: str) -> Result[Task | None, StateError]:
    """``tasks/task-<id>.json`` as the file it must be: absent (None), or oh-my-codex's task object for
    that id, every field panefleet reads of the right type (``version`` a safe integer, ``claim`` an
    object of strings, ``depends_on``/``blocked_by`` arrays of task ids)."""
    if text is None:
        return Success(None)
    parsed = parse_object(text, file)
    if isinstance(parsed, Failure):
        return Failure(parsed.failure())
    task = parsed.unwrap()
    if not isinstance(task.get("id"), str):
        return Failure(StateError(file, "id", "must be a string"))
    if task_id and task["id"] != task_id:
        return Failure(StateError(file, "id", f"must be {task_id!r}, the id in the file name"))
    for key in TASK_STRINGS:
        if not isinstance(task.get(key), str):
            return Failure(StateError(file, key, "must be a string"))
    if task.get("status") not in TASK_STATUSES:
        return Failure(StateError(file, "status", "must be one of " + ", ".join(TASK_STATUSES)))
    for key in TASK_OPTIONAL_STRINGS:
        if _set(task, key) and not isinstance(task[key], str):
            return Failure(StateError(file, key, "must be a string or null"))
    if _set(task, "version") and not is_safe_int(task["version"]):
        return Failure(StateError(file, "version", "must be an integer"))
    for key in ("depends_on", "blocked_by"):
        if not _set(task, key):
            continue
        if not isinstance(task[key], list):
            return Failure(StateError(file, key, "must be an array of task ids"))
        for position, dep in enumerate(task[key]):
            if not isinstance(dep, str):
                return Failure(StateError(file, f"{key}[{position}]", "must be a task id string"))
    claim = task.get("claim")
    if claim is not None:
        if not isinstance(claim, dict):
            return Failure(StateError(file, "claim", "must be an object or null"))
        for key in CLAIM_STRINGS:
            if _set(claim, key) and not isinstance(claim[key], str):
                return Failure(StateError(file, f"claim.{key}", "must be a string"))
    return Success(from_json(Task, task))


def check_identity(text: str | None, file: str) -> Result[Identity | None, StateError]:
    """``workers/<w>/identity.json`` as the file it must be: absent (None), or oh-my-codex's worker
    identity, whose fields panefleet compares with a recorded pane have their JSON types (``name`` a
    string, ``index`` a positive integer, ``pane_id`` a string and ``pid`` an integer when set). One
    of the right shape that names another pane is a mismatch, not malformed."""
    if text is None:
        return Success(None)
    parsed = parse_object(text, file)
    if isinstance(parsed, Failure):
        return Failure(parsed.failure())
    identity = parsed.unwrap()
    if not isinstance(identity.get("name"), str):
        return Failure(StateError(file, "name", "must be a string"))
    if not is_positive_int(identity.get("index")):
        return Failure(StateError(file, "index", "must be a positive integer"))
    if _set(identity, "pane_id") and not isinstance(identity["pane_id"], str):
        return Failure(StateError(file, "pane_id", "must be a string or null"))
    if _set(identity, "pid") and not is_safe_int(identity["pid"]):
        return Failure(StateError(file, "pid", "must be an integer or null"))
    return Success(from_json(Identity, identity))


WORKER_STATES = ("idle", "working", "blocked", "done", "failed", "draining", "unknown")


def worker_state(text: str | None) -> str:
    """The state word of a worker's ``status.json``; missing or invalid reads as ``unknown``
    (oh-my-codex WorkerStatus: a state it knows and an ``updated_at`` text)."""
    parsed = None if text is None else parse_object(text, "status.json").value_or(None)
    if parsed is None or parsed.get("state") not in WORKER_STATES or not isinstance(parsed.get("updated_at"), str):
        return "unknown"
    return str(parsed["state"])
