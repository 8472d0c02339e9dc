"""Team tasks with oh-my-codex 0.20.3 semantics: listing, ``createTask`` and ``claimTask``.

Both operations take the membership barrier and recover an interrupted membership transaction
first, exactly like oh-my-codex, and a claim takes the task's claim lock
(``claims/task-<id>.lock``); the lock directories are shared with oh-my-codex.

* ``team.task_create`` answers ``{"ok": true, "task": {...}}``; the id is
  ``max(next_task_id, highest task file + 1)`` and ``next_task_id`` is advanced afterwards
  (config and manifest rewritten through a prepared journal, as oh-my-codex's ``writeConfig``).
* ``team.task_claim`` answers ``{"ok": true, "task": {...}, "claimToken": ...}`` or
  ``{"ok": false, "error": "task_not_found" | "blocked_dependency" | "claim_conflict" |
  "worker_not_found" | "already_terminal"}`` (``blocked_dependency`` adds ``dependencies``).
  ``expected_version`` ``None`` skips the version check. A claim-lock timeout is ``claim_conflict``.

Both refuse (status ``refused``) a name that is not a valid team name (``Invalid team name: …``)
and a team without ``config.json`` (``Team X not found``); a config that is present but malformed
ends with ``team_state_malformed:<file>: <what>`` (status ``error``).
"""

from __future__ import annotations

import datetime as _dt
import re

from attrs import field, frozen
from returns.result import Failure

from pure import model as m
from pure import operations
from pure.omx import effects, ids, locks, txn
from pure.omx.codec import Json, render_json
from pure.omx.debt import Ctx
from pure.omx.names import is_safe_task_id, validate_team_name
from pure.omx.state import TASK_STATUSES, TeamPaths, check_task, resolve_state_root
from pure.program import Gen, Program, changing, expect, fail

TERMINAL = ("completed", "failed")
TASK_FILE_RE = re.compile(r"task-([0-9]+)\.json")
CLAIM_LEASE_MS = 15 * 60 * 1000


@frozen
class TaskFile:
    task_id: str
    text: str
    task: Json  # normalized
    raw: Json  # as the file has it


def normalize_task(task: Json) -> Json:
    """``depends_on`` defaulted from ``blocked_by``; ``version`` at least 1 (key positions kept)."""
    out = dict(task)
    depends = task.get("depends_on")
    out["depends_on"] = depends if depends is not None else (task.get("blocked_by")
                                                             if task.get("blocked_by") is not None else [])
    version = task.get("version")
    out["version"] = max(1, int(version)) if isinstance(version, (int, float)) else 1
    return out


def parse_task(text: str | None, task_id: str, file: str = "") -> Json | None:
    """The normalized task, None when the file is absent; a file that is not a valid task of that id
    ends the program with ``team_state_malformed:<file>[ field <f>]: <what>``."""
    checked = check_task(text, task_id, file or f"task-{task_id}.json")
    if isinstance(checked, Failure):
        raise txn.malformed(str(checked.failure()))
    raw = checked.unwrap()
    return None if raw is None else normalize_task(raw)


def list_tasks(paths: TeamPaths) -> Gen[list[TaskFile]]:
    """Every ``tasks/task-<N>.json`` in ascending numeric id order; one that is not a valid task, or a
    tasks directory that cannot be listed, ends the program (``team_state_malformed``, ``cannot read``)."""
    listing = yield from expect(m.ListDir(path=paths.tasks_dir), m.Listing)
    if listing.error:
        raise fail(f"cannot read {paths.tasks_dir}: {listing.error}")
    ids = sorted((mt.group(1) for name in (listing.names or ()) if (mt := TASK_FILE_RE.fullmatch(name))),
                 key=int)
    out: list[TaskFile] = []
    for task_id in ids:
        text = yield from txn.read_text(paths.task(task_id))
        checked = check_task(text, task_id, paths.task(task_id))
        if isinstance(checked, Failure):
            raise txn.malformed(str(checked.failure()))
        raw = checked.unwrap()
        if raw is not None and text is not None:
            out.append(TaskFile(task_id, text, normalize_task(raw), raw))
    return out


def read_task(paths: TeamPaths, task_id: str) -> Gen[Json | None]:
    text = yield from txn.read_text(paths.task(task_id))
    return parse_task(text, task_id, paths.task(task_id))


# ------------------------------------------------------------------------------------------ create


@frozen(kw_only=True)
class TaskCreateRequest:
    team: str
    cwd: str
    subject: str
    description: str
    env: dict[str, str] = field(factory=dict)
    owner: str | None = None
    status: str | None = None
    blocked_by: tuple[str, ...] | None = None
    role: str | None = None


def _ctx(team: str, cwd: str, env: dict[str, str]) -> Ctx:
    return Ctx(paths=TeamPaths(resolve_state_root(cwd, env), team), cwd=cwd)


def _next_task_id(raw: object) -> tuple[int, bool]:
    """(oh-my-codex normalizeNextTaskId, hasValidNextTaskId)."""
    if type(raw) in (int, float):
        number = float(raw)  # type: ignore[arg-type]
    elif isinstance(raw, str):
        try:
            number = float(raw.strip() or "0")
        except ValueError:
            return 1, False
    else:
        return 1, False
    if number != number or number in (float("inf"), float("-inf")):
        return 1, False
    return max(1, int(number // 1)), int(number // 1) >= 1


def _write_config_pair(ctx: Ctx, barrier: locks.Barrier, config_text: str, new_config: Json,
                       manifest_text: str | None, new_manifest: Json | None) -> Gen[None]:
    yield from write_config_pair(ctx.paths, barrier, config_text, new_config, manifest_text, new_manifest)


def write_config_pair(paths: TeamPaths, barrier: locks.Barrier, config_text: str, new_config: Json,
                      manifest_text: str | None, new_manifest: Json | None) -> Gen[None]:
    """oh-my-codex ``writeConfig``: config alone, or config + manifest through a prepared journal."""
    del barrier
    yield from changing(effects.config(config_text, render_json(new_config)),
                        _config_pair_steps(paths, config_text, new_config, manifest_text, new_manifest))


def _config_pair_steps(paths: TeamPaths, config_text: str, new_config: Json, manifest_text: str | None,
                       new_manifest: Json | None) -> Gen[None]:
    if manifest_text is None or new_manifest is None:
        yield from txn.write_text(paths.config, render_json(new_config), note="config")
        return
    files = (txn.JournalFile(paths.config, config_text, render_json(new_config)),
             txn.JournalFile(paths.manifest, manifest_text, render_json(new_manifest)))
    yield from txn.write_text(paths.journal, txn.journal_text(txn.Journal("prepared", files)), note="txn-journal")
    for f in files:
        assert f.new is not None
        yield from txn.write_text(f.path, f.new, note="txn")
    yield from txn.write_text(paths.journal, txn.journal_text(txn.Journal("committed", files)), note="txn-journal")
    yield from txn.remove_file(paths.journal, note="txn-journal")


def create_task(ctx: Ctx, req: TaskCreateRequest, held: locks.Barrier | None = None) -> Gen[Json]:
    def body(barrier: locks.Barrier) -> Gen[Json]:
        state = yield from txn.load_team(ctx.paths, barrier)
        if state is None:
            raise fail(f"Team {ctx.paths.team} not found", status="refused")
        next_id, valid = _next_task_id(state.config.get("next_task_id"))
        listing = yield from expect(m.ListDir(path=ctx.paths.tasks_dir), m.Listing)
        on_disk = 1 + max((int(mt.group(1)) for name in (listing.names or ())
                           if (mt := TASK_FILE_RE.fullmatch(name))), default=0)
        if not valid or on_disk > next_id:
            next_id = on_disk
        task_id = str(next_id)
        now = (yield from expect(m.Clock(), m.Value)).value
        given: Json = {"subject": req.subject, "description": req.description}
        if req.owner is not None:
            given["owner"] = req.owner
        if req.role is not None:
            given["role"] = req.role
        if req.status is not None:
            given["status"] = req.status
        if req.blocked_by is not None:
            given["blocked_by"] = list(req.blocked_by)
        created = normalize_task({**given, "id": task_id, "created_at": now})
        created["id"] = task_id
        created["status"] = req.status if req.status is not None else "pending"
        depends = given.get("depends_on", given.get("blocked_by"))
        created["depends_on"] = depends if depends is not None else []
        created["version"] = 1
        yield from txn.write_text(ctx.paths.task(task_id), render_json(created), note="task",
                                  effect=effects.created_task(task_id, created))
        raw_config = dict(state.raw_config)
        raw_config["next_task_id"] = next_id + 1
        manifest = dict(state.raw_manifest) if state.raw_manifest is not None else None
        if manifest is not None:
            manifest["next_task_id"] = next_id + 1
        yield from _write_config_pair(ctx, barrier, state.config_text, raw_config, state.manifest_text, manifest)
        return {"ok": True, "task": created}

    return (yield from locks.with_barrier(ctx.paths, body, held=held))


def task_create_program(req: TaskCreateRequest) -> Program:
    team = _team(req.team)
    if req.status is not None and req.status not in TASK_STATUSES:
        raise fail(f"Invalid task status: {req.status}", status="refused")
    result = yield from create_task(_ctx(team, req.cwd, req.env), req)
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))


def _team(name: str) -> str:
    """Task commands name an existing team exactly: no sanitising (scaling does that), a name that
    is not a valid team name is refused with oh-my-codex's state-layer message."""
    checked = validate_team_name(name)
    if isinstance(checked, Failure):
        raise fail(checked.failure(), status="refused")
    return checked.unwrap()


# ------------------------------------------------------------------------------------------- claim


@frozen(kw_only=True)
class TaskClaimRequest:
    team: str
    cwd: str
    task_id: str
    worker: str
    expected_version: int | None = None
    env: dict[str, str] = field(factory=dict)


def parse_iso_ms(text: str) -> int | None:
    try:
        moment = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.UTC)
    return int(moment.timestamp() * 1000)


def iso_from_ms(ms: int) -> str:
    moment = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _lease_expired(claim: object, now_ms: int) -> bool:
    if not isinstance(claim, dict) or not claim.get("leased_until"):
        return False
    until = parse_iso_ms(str(claim["leased_until"]))
    return until is not None and until <= now_ms


def _readiness(paths: TeamPaths, task: Json) -> Gen[list[str]]:
    """The ids of dependencies not yet completed ([] = ready)."""
    deps = task.get("depends_on")
    if deps is None:
        deps = task.get("blocked_by")
    missing: list[str] = []
    for dep in deps if isinstance(deps, list) else []:
        dep_id = str(dep)
        found = (yield from read_task(paths, dep_id)) if is_safe_task_id(dep_id) else None
        if found is None or found.get("status") != "completed":
            missing.append(dep)
    return missing


def claim_task(ctx: Ctx, req: TaskClaimRequest, held: locks.Barrier | None = None) -> Gen[Json]:
    paths = ctx.paths

    def locked() -> Gen[Json]:
        current = yield from read_task(paths, req.task_id)
        if current is None:
            return {"ok": False, "error": "task_not_found"}
        if req.expected_version is not None and current.get("version") != req.expected_version:
            return {"ok": False, "error": "claim_conflict"}
        missing = yield from _readiness(paths, current)
        if missing:
            return {"ok": False, "error": "blocked_dependency", "dependencies": missing}
        state = yield from txn.read_state(paths)
        workers = state.config.get("workers", []) if state is not None else []
        if state is None or not any(isinstance(w, dict) and w.get("name") == req.worker for w in workers):
            return {"ok": False, "error": "worker_not_found"}
        if current.get("status") in TERMINAL:
            return {"ok": False, "error": "already_terminal"}
        now_ms = parse_iso_ms((yield from expect(m.Clock(), m.Value)).value) or 0
        task = dict(current)
        if task.get("status") == "in_progress":
            if not _lease_expired(task.get("claim"), now_ms):
                return {"ok": False, "error": "claim_conflict"}
            task["owner"] = None
            task["claim"] = None
            task["status"] = "pending"
        if task.get("status") in ("pending", "blocked"):
            if task.get("claim"):
                if not _lease_expired(task["claim"], now_ms):
                    return {"ok": False, "error": "claim_conflict"}
                task["claim"] = None
            if task.get("owner") and task["owner"] != req.worker:
                return {"ok": False, "error": "claim_conflict"}
            if "owner" in task:
                task["owner"] = None
        token = yield from ids.fresh_uuid()
        task["status"] = "in_progress"
        task["owner"] = req.worker
        task["claim"] = {"owner": req.worker, "token": token, "leased_until": iso_from_ms(now_ms + CLAIM_LEASE_MS)}
        task["version"] = int(current.get("version", 1)) + 1
        updated = {k: v for k, v in task.items() if v is not None or k not in ("owner", "claim")}
        yield from txn.write_text(paths.task(req.task_id), render_json(updated), note="task",
                                  effect=effects.changed_task(req.task_id, current, updated))
        return {"ok": True, "task": updated, "claimToken": token}

    def body(barrier: locks.Barrier) -> Gen[Json]:
        yield from txn.recover(paths, barrier)
        if (yield from txn.read_state(paths)) is None:
            raise fail(f"Team {paths.team} not found", status="refused")
        existing = yield from read_task(paths, req.task_id)
        if existing is None:
            return {"ok": False, "error": "task_not_found"}
        missing = yield from _readiness(paths, existing)
        if missing:
            return {"ok": False, "error": "blocked_dependency", "dependencies": missing}
        result = yield from locks.with_claim_lock(paths, req.task_id, locked)
        if isinstance(result, locks.ClaimLockTimeout):
            return {"ok": False, "error": "claim_conflict"}
        return result

    return (yield from locks.with_barrier(paths, body, held=held))


def task_claim_program(req: TaskClaimRequest) -> Program:
    team = _team(req.team)
    if not is_safe_task_id(req.task_id):
        raise fail(f"Invalid task id: {req.task_id}", status="refused")
    result = yield from claim_task(_ctx(team, req.cwd, req.env), req)
    status: m.Status = "ok" if result.get("ok") else "refused"
    return m.Done(outcome=m.Outcome(status=status, result=m.JsonValue(result),
                                    message="" if result.get("ok") else str(result.get("error"))))


def _register() -> None:
    operations.register("team.task_create", TaskCreateRequest, task_create_program)
    operations.register("team.task_claim", TaskClaimRequest, task_claim_program)


_register()
