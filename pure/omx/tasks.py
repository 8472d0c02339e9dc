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

from attrs import evolve, field, frozen
from returns.result import Failure

from pure import model as m
from pure import operations
from pure.omx import effects, ids, locks, txn
from pure.omx.codec import render_json
from pure.omx.debt import Ctx
from pure.omx.names import is_safe_task_id, validate_team_name
from pure.omx.records import Claim, ConfigPatch, Task, patch_json, to_json
from pure.omx.state import TASK_STATUSES, TeamPaths, check_task, resolve_state_root
from pure.program import Gen, Program, changing, expect, fail

TERMINAL = ("completed", "failed")
TASK_FILE_RE = re.compile(r"task-([0-9]+)\.json")
CLAIM_LEASE_MS = 15 * 60 * 1000


@frozen
class TaskFile:
    task_id: str
    text: str
    task: Task  # normalized
    raw: Task  # as the file has it


def parse_task(text: str | None, task_id: str, file: str = "") -> Task | None:
    """The normalized task, None when the file is absent; a file that is not a valid task of that id
    ends the program with ``team_state_malformed:<file>[ field <f>]: <what>``."""
    checked = check_task(text, task_id, file or f"task-{task_id}.json")
    if isinstance(checked, Failure):
        raise txn.malformed(str(checked.failure()))
    raw = checked.unwrap()
    return None if raw is None else raw.normalized()


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
            out.append(TaskFile(task_id, text, raw.normalized(), raw))
    return out


def read_task(paths: TeamPaths, task_id: str) -> Gen[Task | None]:
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


def _next_task_id(value: int | None) -> tuple[int, bool]:
    """(oh-my-codex normalizeNextTaskId, hasValidNextTaskId) of a ``next_task_id`` the config check let
    through: an integer or none."""
    return (1, False) if value is None else (max(1, value), value >= 1)


def write_config_pair(paths: TeamPaths, barrier: locks.Barrier, config_text: str, manifest_text: str | None,
                      patch: ConfigPatch) -> Gen[None]:
    """oh-my-codex ``writeConfig`` of ``patch``: config alone (``manifest_text`` None), or config +
    manifest through a prepared journal."""
    del barrier
    new_config = patch_json(config_text, patch)
    yield from changing(effects.config(config_text, new_config),
                        _config_pair_steps(paths, config_text, new_config, manifest_text, patch))


def _config_pair_steps(paths: TeamPaths, config_text: str, new_config: str, manifest_text: str | None,
                       patch: ConfigPatch) -> Gen[None]:
    if manifest_text is None:
        yield from txn.write_text(paths.config, new_config, note="config")
        return
    files = (txn.JournalFile(paths.config, config_text, new_config),
             txn.JournalFile(paths.manifest, manifest_text, patch_json(manifest_text, patch)))
    yield from txn.write_text(paths.journal, txn.journal_text(txn.Journal("prepared", files)), note="txn-journal")
    for f in files:
        assert f.new is not None
        yield from txn.write_text(f.path, f.new, note="txn")
    yield from txn.write_text(paths.journal, txn.journal_text(txn.Journal("committed", files)), note="txn-journal")
    yield from txn.remove_file(paths.journal, note="txn-journal")


def create_task(ctx: Ctx, req: TaskCreateRequest, held: locks.Barrier | None = None) -> Gen[m.Answer]:
    def body(barrier: locks.Barrier) -> Gen[m.Answer]:
        state = yield from txn.load_team(ctx.paths, barrier)
        if state is None:
            raise fail(f"Team {ctx.paths.team} not found", status="refused")
        next_id, valid = _next_task_id(state.config.next_task_id)
        listing = yield from expect(m.ListDir(path=ctx.paths.tasks_dir), m.Listing)
        on_disk = 1 + max((int(mt.group(1)) for name in (listing.names or ())
                           if (mt := TASK_FILE_RE.fullmatch(name))), default=0)
        if not valid or on_disk > next_id:
            next_id = on_disk
        task_id = str(next_id)
        now = (yield from expect(m.Clock(), m.Value)).value
        given: dict[str, object] = {"subject": req.subject, "description": req.description}
        if req.owner is not None:
            given["owner"] = req.owner
        if req.role is not None:
            given["role"] = req.role
        if req.status is not None:
            given["status"] = req.status
        if req.blocked_by is not None:
            given["blocked_by"] = list(req.blocked_by)
        # oh-my-codex's createTask: the given fields, then id and created_at, normalized (depends_on,
        # version), then status: each key where that order first puts it
        created: dict[str, object] = {**given, "id": task_id, "created_at": now, "depends_on": list(req.blocked_by or ()),
                         "version": 1, "status": req.status if req.status is not None else "pending"}
        yield from txn.write_text(ctx.paths.task(task_id), render_json(created), note="task",
                                  effect=effects.created_task(task_id, created))
        yield from write_config_pair(ctx.paths, barrier, state.config_text,
                                     state.manifest_text if state.raw_manifest is not None else None,
                                     ConfigPatch(next_task_id=next_id + 1))
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


def _lease_expired(claim: Claim | None, now_ms: int) -> bool:
    if claim is None or not claim.leased_until:
        return False
    until = parse_iso_ms(claim.leased_until)
    return until is not None and until <= now_ms


def _readiness(paths: TeamPaths, task: Task) -> Gen[list[str]]:
    """The ids of dependencies not yet completed ([] = ready)."""
    missing: list[str] = []
    for dep in task.depends_on if task.depends_on is not None else task.blocked_by or ():
        found = (yield from read_task(paths, dep)) if is_safe_task_id(dep) else None
        if found is None or found.status != "completed":
            missing.append(dep)
    return missing


def claim_task(ctx: Ctx, req: TaskClaimRequest, held: locks.Barrier | None = None) -> Gen[m.Answer]:
    paths = ctx.paths

    def locked() -> Gen[m.Answer]:
        current = yield from read_task(paths, req.task_id)
        if current is None:
            return {"ok": False, "error": "task_not_found"}
        if req.expected_version is not None and current.version != req.expected_version:
            return {"ok": False, "error": "claim_conflict"}
        missing = yield from _readiness(paths, current)
        if missing:
            return {"ok": False, "error": "blocked_dependency", "dependencies": missing}
        state = yield from txn.read_state(paths)
        if state is None or not any(w.name == req.worker for w in state.config.workers):
            return {"ok": False, "error": "worker_not_found"}
        if current.status in TERMINAL:
            return {"ok": False, "error": "already_terminal"}
        now_ms = parse_iso_ms((yield from expect(m.Clock(), m.Value)).value) or 0
        task = current
        if task.status == "in_progress":
            if not _lease_expired(task.claim, now_ms):
                return {"ok": False, "error": "claim_conflict"}
            task = evolve(task, owner=None, claim=None, status="pending")
        if task.status in ("pending", "blocked"):
            if task.claim is not None and task.claim.held:
                if not _lease_expired(task.claim, now_ms):
                    return {"ok": False, "error": "claim_conflict"}
            if task.owner and task.owner != req.worker:
                return {"ok": False, "error": "claim_conflict"}
        token = yield from ids.fresh_uuid()
        claimed = evolve(task, status="in_progress", owner=req.worker, version=(current.version or 1) + 1, claim=Claim(
            owner=req.worker, token=token, leased_until=iso_from_ms(now_ms + CLAIM_LEASE_MS)))
        updated = to_json(claimed)
        yield from txn.write_text(paths.task(req.task_id), render_json(updated), note="task",
                                  effect=effects.changed_task(req.task_id, to_json(current), updated))
        return {"ok": True, "task": updated, "claimToken": token}

    def body(barrier: locks.Barrier) -> Gen[m.Answer]:
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
