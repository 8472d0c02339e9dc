"""oh-my-codex 0.20.3 ``scaleDown`` as a pure program (docs/scale-down.md, "Order of a scale-down"),
plus ``team.debt_*`` operations.

Order: gate → scaling lock → canonical read under the barrier → reconcile prior debt → select
targets → snapshot and mark ``draining`` → (drain wait) → under the barrier and every non-terminal
task's claim lock: canonical re-read, snapshot, ``pending_teardown`` debt, membership/task commit
(roll-forward journal), verification, pane teardown (docs/tmux-proofs.md, "Teardown") → unresolved
panes end as debt with the status artefacts restored byte for byte; otherwise reconcile (resource
cleanup) → event → result.

Results are oh-my-codex's JSON: ``{"ok": true, "removedWorkers": [...], "newWorkerCount": N}`` or
``{"ok": false, "error": ...}``. Outcome status: ``ok``; ``debt`` when panes or resources are left
as recorded debt; ``refused`` for argument/selection errors (nothing changed); ``error`` otherwise.
"""

from __future__ import annotations

import posixpath
from typing import Any

from attrs import evolve, field, frozen
from returns.result import Failure

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.omx import debt as d
from pure.omx import effects, kept_workers, locks, strays, transcripts, txn, undelivered
from pure.omx.codec import Parsed, parse_json, parse_object, render_json
from pure.omx.debt_report import explain as explain_debt
from pure.omx.names import sanitize_team_name
from pure.omx.records import ConfigPatch, Member, Task, TeamConfig, from_json, patch_json, to_json
from pure.omx.scaling import DISABLED, leader_nudge, scaling_enabled
from pure.omx.state import TeamPaths, TeamState, resolve_state_root, validate_config, worker_state
from pure.omx.tasks import TERMINAL, list_tasks, parse_iso_ms, read_task
from pure.program import (
    INTERRUPTED,
    Failed,
    Gen,
    Interrupted,
    PlanError,
    Program,
    expect,
    fail,
    refused,
    uninterrupted,
)

ALL_WORKERS = "Cannot remove all workers \u2014 at least 1 must remain"
DRAIN_POLL_MS = 2000


@frozen(kw_only=True)
class ScaleDownRequest:
    team: str
    cwd: str
    env: dict[str, str] = field(factory=dict)
    worker_names: tuple[str, ...] = ()
    count: int | None = None
    force: bool = False
    drain_timeout_ms: int = 30_000


@frozen(kw_only=True)
class DebtRequest:
    team: str
    cwd: str
    env: dict[str, str] = field(factory=dict)


def _team(name: str) -> str:
    sanitized = sanitize_team_name(name)
    if not sanitized.map(lambda _: True).value_or(False):
        raise fail(sanitized.failure())
    return sanitized.unwrap()


def context(team: str, cwd: str, env: dict[str, str]) -> d.Ctx:
    return d.Ctx(paths=TeamPaths(resolve_state_root(cwd, env), team), cwd=cwd)


def _now() -> Gen[str]:
    return (yield from expect(m.Clock(), m.Value)).value


# ------------------------------------------------------------------------------------ status files


@frozen
class StatusSnapshot:
    worker: str
    path: str
    text: str | None  # None: the file did not exist


def _status_text(path: str) -> Gen[str | None]:
    """A worker's ``status.json`` text (None: absent). Its content is not judged: oh-my-codex reads an
    invalid status as ``unknown`` and restores its bytes exactly (seed scenarios I14-I16); only bytes
    that are not text, which could not be restored, end the program (``team_state_malformed``)."""
    data = yield from expect(m.ReadFile(path=path), m.FileData)
    if data.error == txn.NOT_UTF8:
        raise txn.malformed(f"{path}: not UTF-8 text")
    if data.error:
        raise fail(data.error)
    return data.content


def _snapshot_status(rpaths: TeamPaths, worker: str) -> Gen[StatusSnapshot]:
    path = rpaths.worker_file(worker, "status.json")
    return StatusSnapshot(worker, path, (yield from _status_text(path)))


def _restore_statuses(snapshots: list[StatusSnapshot], workers: list[str]) -> Gen[None]:
    for snap in snapshots:
        if snap.worker not in workers:
            continue
        said = effects.worker(snap.worker, "change", "status restored")
        if snap.text is None:
            yield from expect(m.RemovePath(path=snap.path, note="restore status", effect=said), m.Ack)
        else:
            yield from txn.write_text(snap.path, snap.text, note="restore status", effect=said)


def _status_state(paths: TeamPaths, worker: str) -> Gen[str]:
    """The worker's state word; an invalid status reads as ``unknown``, as in oh-my-codex."""
    data = yield from expect(m.ReadFile(path=paths.worker_file(worker, "status.json")), m.FileData)
    return worker_state(data.content)


def _preflight(ctx: d.Ctx, req: ScaleDownRequest, state: TeamState) -> Gen[None]:
    """Every team file this scale-down reads, validated before its first write (the reconcile of
    earlier debt included): the manifest it rewrites must be a JSON object, every task a valid task,
    and the ``status.json`` of each worker it may select text (``_status_text``). Anything else ends
    it with ``team_state_malformed:<file>[ field <f>]: <what>``, nothing changed. (The canonical read
    ignores a manifest that is not a v2 manifest, as oh-my-codex does; the commit patches
    ``workers`` into any JSON object, so only one that does not parse as an object is refused.)"""
    if state.manifest_text is not None:
        manifest = parse_object(state.manifest_text, ctx.paths.manifest)
        if isinstance(manifest, Failure):
            raise txn.malformed(str(manifest.failure()))
    yield from list_tasks(ctx.paths)
    members = [w.name for w in state.config.workers]
    candidates = [n for n in members if n in req.worker_names] if req.worker_names else members
    roots = sorted({ctx.paths.workers_dir, d.record_paths(ctx, state).workers_dir})  # where it reads and writes
    for name in candidates:
        for root in roots:
            yield from _status_text(posixpath.join(root, name, "status.json"))


# ----------------------------------------------------------------------------------------- program


def _load(ctx: d.Ctx, held: locks.Barrier | None = None) -> Gen[TeamState | None]:
    return (yield from locks.with_barrier(ctx.paths, lambda b: txn.load_team(ctx.paths, b), held=held))


def _select(ctx: d.Ctx, req: ScaleDownRequest, state: TeamState) -> Gen[list[Member]]:
    workers = state.config.workers
    team = ctx.paths.team
    if req.worker_names:
        targets = []
        for name in req.worker_names:
            found = next((w for w in workers if w.name == name), None)
            if found is None:
                raise refused(f"Worker {name} not found in team {team}")
            targets.append(found)
    else:
        count = 1 if req.count is None else req.count
        if count < 1:
            raise refused(f"count must be a positive integer (got {count})")
        idle = []
        for w in workers:
            if (yield from _status_state(ctx.paths, w.name)) in ("idle", "done", "unknown"):
                idle.append(w)
        if len(idle) < count and not req.force:
            raise refused(f"Not enough idle workers to remove: found {len(idle)}, requested {count}. "
                          "Use force=true to remove busy workers.")
        targets = idle[:count]
        if req.force and len(targets) < count:
            chosen = {w.name for w in targets}
            targets += [w for w in workers if w.name not in chosen][: count - len(targets)]
    if not targets:
        raise refused("No workers selected for removal")
    if len(workers) - len(targets) < 1:
        raise refused(ALL_WORKERS)
    return targets


def _drain(ctx: d.Ctx, req: ScaleDownRequest, names: list[str]) -> Gen[None]:
    """Wait until every target is idle/done/draining (it is: draining was just written)."""
    start = parse_iso_ms((yield from _now())) or 0
    deadline = start + req.drain_timeout_ms
    now = start
    while now < deadline:
        states = []
        for name in names:
            states.append((yield from _status_state(ctx.paths, name)))
        if all(s in ("idle", "done", "draining") for s in states):
            return
        yield from expect(m.Sleep(ms=DRAIN_POLL_MS), m.Ack)
        now = parse_iso_ms((yield from _now())) or deadline


def _next_task_bytes(task: Task) -> str:
    """A task of a removed worker released: no owner, no claim, ``pending`` again if it was in progress."""
    released = evolve(task, owner=None, claim=None, status="pending" if task.status == "in_progress" else task.status,
                      version=max(1, task.version or 1) + 1)
    return render_json(to_json(released))


def _references(task: Task, names: set[str]) -> bool:
    claim_owner = task.claim.owner if task.claim is not None else None
    return (task.owner or "") in names or (claim_owner or "") in names


@frozen
class CommitOutcome:
    removable: list[Member]
    failure: Failed | None  # always status ``debt``: panes left unresolved, recorded as debt
    new_count: int
    unresolved: list[d.DebtPane] = field(factory=list)
    reasons: list[str] = field(factory=list)
    transcript_warnings: list[str] = field(factory=list)  # killed panes whose transcript could not be kept


def _commit_block(ctx: d.Ctx, req: ScaleDownRequest, targets: list[Member],
                  snapshots: list[StatusSnapshot], barrier: locks.Barrier) -> Gen[CommitOutcome]:
    paths = ctx.paths
    state = yield from txn.load_team(paths, barrier)
    if state is None:
        raise fail("canonical_scale_down_config_missing")
    removable: list[Member] = []
    for target in targets:
        found = next((w for w in state.config.workers if w.name == target.name), None)
        if found is None:
            raise fail("canonical_scale_down_membership_changed")
        removable.append(found)
    names = {w.name for w in removable}
    rpaths = d.record_paths(ctx, state)
    candidates = [tf.task_id for tf in (yield from list_tasks(paths)) if tf.task.status not in TERMINAL]

    def locked() -> Gen[CommitOutcome]:
        tasks = yield from list_tasks(paths)
        config_text = yield from txn.read_text(paths.config)
        if config_text is None:
            raise fail(f"ENOENT: no such file or directory, open '{paths.config}'")
        manifest_text = yield from txn.read_text(paths.manifest)
        reconciled = [tf for tf in tasks if tf.task.status not in TERMINAL and _references(tf.task, names)]
        task_old: dict[str, str | None] = {}
        for tf in reconciled:
            task_old[tf.task_id] = yield from txn.read_text(paths.task(tf.task_id))
        marker = req.env.get("OMX_TEAM_SCALE_DOWN_POST_SNAPSHOT_MARKER")
        if marker:
            yield from txn.write_text(posixpath.join(ctx.cwd, marker), "snapshot-held\n", note="marker",
                                      effect=m.effect("add", "file", marker, "test marker (OMX_TEAM_SCALE_DOWN_POST_SNAPSHOT_MARKER)"))
        hold = _parse_int(req.env.get("OMX_TEAM_SCALE_DOWN_BOUNDARY_HOLD_MS", ""))
        if hold is not None and hold > 0:
            yield from expect(m.Sleep(ms=hold), m.Ack)
        current = _checked_config(config_text, paths.config)
        staying = tuple(w for w in current.workers if w.name not in names)
        patch = ConfigPatch(workers=tuple(to_json(w) for w in staying), worker_count=len(staying))
        next_config = evolve(current, workers=staying, worker_count=len(staying))
        next_manifest: str | None = None
        if manifest_text is not None:
            _checked_object(manifest_text, paths.manifest)
            next_manifest = patch_json(manifest_text, patch)
        inject = req.env.get("OMX_TEAM_SCALE_DOWN_INJECT_FAILURE")
        transaction = txn.Transaction(
            base_generation=current.generation,
            tasks=tuple(txn.TaskChange(tf.task_id, task_old[tf.task_id], _next_task_bytes(tf.task))
                        for tf in reconciled),
            config=txn.Change(config_text, render_json(to_json(next_config))),
            manifest=txn.Change(manifest_text, next_manifest),
            interrupt_after_first_task_write=inject == "after-first-task-write",
            fail_rollback_persistence=inject == "rollback-persistence-failure",
            recover_to_new_on_failure=True,
        )
        record = d.base_record(removable, (yield from _now()))
        yield from txn.write_text(rpaths.debt, render_json(record), note="debt", effect=effects.CONFIG_COMPANION)
        yield from txn.commit(paths, barrier, transaction)
        committed = yield from txn.load_team(paths, barrier)
        if committed is None or any(w.name in names for w in committed.config.workers):
            raise fail("canonical_scale_down_config_verification_failed")
        for tf in reconciled:
            again = yield from read_task(paths, tf.task_id)
            if again is not None and _references(again, names):
                raise fail(f"canonical_scale_down_task_verification_failed:{tf.task_id}")
        new_count = committed.config.worker_count
        count = new_count if new_count is not None else len(committed.config.workers)
        return (yield from _teardown(state, removable, snapshots, rpaths, record, count, paths))

    return (yield from locks.with_claim_locks(paths, candidates, locked))


def _checked_object(text: str, file: str) -> Parsed:
    """``text`` (read again under the claim locks) as a JSON object."""
    parsed = parse_object(text, file)
    if isinstance(parsed, Failure):
        raise txn.malformed(str(parsed.failure()))
    return parsed.unwrap()


def _checked_config(text: str, file: str) -> TeamConfig:
    """``config.json`` (read again under the claim locks) as the config it must be."""
    checked = validate_config(_checked_object(text, file), file)
    if isinstance(checked, Failure):
        raise txn.malformed(str(checked.failure()))
    return from_json(TeamConfig, checked.unwrap())


def _parse_int(text: str) -> int | None:
    """``Number.parseInt(text, 10)``: leading whitespace, sign, digits; NaN ⇒ None."""
    body = text.lstrip()
    sign = 1
    if body[:1] in "+-" and body[:1]:
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    digits = ""
    for ch in body:
        if not ch.isdigit() or not ch.isascii():
            break
        digits += ch
    return sign * int(digits) if digits else None


def _teardown(state: TeamState, removable: list[Member], snapshots: list[StatusSnapshot], rpaths: TeamPaths,
              record: dict[str, object], count: int, paths: TeamPaths) -> Gen[CommitOutcome]:
    with_pane = [w for w in removable if t.is_pane_id(w.pane_id)]
    pinned = [w for w in with_pane if t.is_positive_pid(w.pid)]
    unpinned = [w for w in with_pane if w not in pinned]
    resolved: set[str] = set()
    unpinned_reasons: list[str] = []
    for w in unpinned:
        pane = str(w.pane_id)
        proof = yield from t.prove(pane)
        if proof.gone:
            resolved.add(pane)
        elif proof.unavailable:
            unpinned_reasons.append(f"{pane}:{proof.code()}")
        else:
            unpinned_reasons.append(f"{pane}:legacy_pid_missing_live")
    owner_id = d.owner_id_of(state)
    leader, hud = state.config.leader_pane_id, state.config.hud_pane_id
    # each pane's transcript before any kill, after its own proof (pure/omx/transcripts.py)
    kept = yield from transcripts.keep_records(paths, pinned, owner_id, leader_pane_id=leader, hud_pane_id=hud)
    targets = [t.TeardownTarget(pane_id=str(w.pane_id), pid=w.pid, server=w.tmux_server) for w in pinned]
    killed = {target.pane_id: effects.killed(w.name, target.pane_id, target.pid, owner_id)
              for w, target in zip(pinned, targets, strict=True)}
    report = yield from t.teardown(
        targets,
        owner_id=owner_id or None, authorize=True, leader_pane_id=leader, hud_pane_id=hud, effects=killed)
    resolved.update(report.resolved_ids())
    warnings = transcripts.lost(kept, report)
    unresolved = [w for w in removable if w.pane_id is not None and w.pane_id not in resolved]
    if not unresolved:
        done_record = d.rewrite(record, "resource_cleanup_pending", (yield from _now()), [], None)
        yield from txn.write_text(rpaths.debt, render_json(done_record), note="debt", effect=effects.CONFIG_COMPANION)
        return CommitOutcome(removable, None, count, transcript_warnings=warnings)
    yield from _restore_statuses(snapshots, [w.name for w in unresolved])
    proof_debt = unpinned_reasons + [f"{r.pane_id}:{r.reason}" for r in report.proof_failures()]
    kill_debt = [f"{p}:kill_failed" for p in report.failed_kills()]
    panes = [d.DebtPane.of(w) for w in unresolved]
    debt_record = d.rewrite(record, "unresolved", (yield from _now()), [p.to_json() for p in panes],
                            proof_debt + kill_debt)
    yield from txn.write_text(rpaths.debt, render_json(debt_record), note="debt",
                              effect=effects.cleanup_debt(existed=False, removed=False))
    if report.proof_failures():
        error = "scale_down_pane_proof_unavailable:" + ",".join(proof_debt)
    else:
        failed = report.failed_kills()
        prefix = f"pane_teardown_failed:{','.join(failed)};" if failed else ""
        error = "scale_down_cleanup_debt:" + prefix + ";".join(f"pane_teardown_unresolved:{w.pane_id}"
                                                               for w in unresolved)
    return CommitOutcome(removable, Failed("debt", error), count, panes, proof_debt + kill_debt, warnings)


def scale_down(ctx: d.Ctx, req: ScaleDownRequest) -> Gen[m.Done]:
    """The body under the scaling lock; answers oh-my-codex's result. Every failure ends the program
    where it happens, with its status and the debt it leaves (``pure/program.py`` ``PlanError``)."""
    state = yield from _load(ctx)
    if state is None:
        raise refused(f"Team {ctx.paths.team} not found")
    yield from _preflight(ctx, req, state)
    prior = yield from d.reconcile(ctx)
    if prior is not None:
        raise prior.error()
    # panefleet: what a crashed or interrupted run of this team left goes first, as in every command
    # that changes the team (pure/omx/strays.py); oh-my-codex leaves it
    owner = d.owner_id_of(state)
    swept = (yield from strays.sweep(ctx.paths, state.config, owner)) if owner else strays.Sweep()
    selected = yield from _select(ctx, req, state)
    rpaths = d.record_paths(ctx, state)
    snapshots = []
    for w in selected:
        snapshots.append((yield from _snapshot_status(rpaths, w.name)))
    names = [w.name for w in selected]
    try:
        for w in selected:
            status = {"state": "draining", "reason": "scale_down requested by leader",
                      "updated_at": (yield from _now())}
            yield from txn.write_text(ctx.paths.worker_file(w.name, "status.json"), render_json(status),
                                      note="status", effect=effects.worker(w.name, "remove", "draining"))
        if not req.force:
            yield from _drain(ctx, req, names)
    except Interrupted:  # before the commit: the workers are as they were (docs/design-notes.md, "Interrupts")
        yield from uninterrupted(_restore_statuses(snapshots, names), answers=True)
        raise fail(INTERRUPTED) from None
    # From the commit on, interrupts wait: the run ends its teardown or records what it could not do.
    result = yield from uninterrupted(_commit_and_tear_down(ctx, req, selected, snapshots, names), answers=True)
    return swept.onto(_ok(result))


def _commit_and_tear_down(ctx: d.Ctx, req: ScaleDownRequest, selected: list[Member],
                          snapshots: list[StatusSnapshot], names: list[str]) -> Gen[m.Answer]:
    try:
        outcome = yield from locks.with_barrier(
            ctx.paths, lambda b: _commit_block(ctx, req, selected, snapshots, b))
    except txn.StateMalformed:
        yield from _restore_statuses(snapshots, names)
        raise  # changed under us since the preflight: named as it is
    except PlanError as error:
        yield from _restore_statuses(snapshots, names)
        raise fail(f"scale_down_task_reconciliation_failed:Error: {error.outcome.message}") from None
    if outcome.failure is not None:
        message = outcome.failure.message
        raise fail(message, "debt", transcripts.with_warnings({"ok": False, "error": message},
                                                               outcome.transcript_warnings), debt=[
            m.Debt(kind="tmux_pane", subject=p.pane_id, reason=_reason_for(p.pane_id, outcome.reasons),
                   detail=f"worker {p.name}") for p in outcome.unresolved])
    removed = [w.name for w in outcome.removable]
    cleanup = yield from d.reconcile(ctx, own=True)
    if cleanup is not None:
        raise fail(cleanup.message, cleanup.status, transcripts.with_warnings(
            {"ok": False, "error": cleanup.message}, outcome.transcript_warnings),
            debt=[m.Debt(kind="cleanup", subject=ctx.paths.team, reason=cleanup.message)])
    reason = f"scale_down: removed {len(removed)} worker(s) [{', '.join(removed)}], new count={outcome.new_count}"
    yield from leader_nudge(ctx.paths, reason)  # oh-my-codex does not check this append
    return transcripts.with_warnings({"ok": True, "removedWorkers": removed, "newWorkerCount": outcome.new_count},
                                     outcome.transcript_warnings)


def _reason_for(pane: str, reasons: list[str]) -> str:
    mine = [r.split(":", 1)[1] for r in reasons if r.split(":", 1)[0] == pane]
    return ",".join(mine) or "teardown_unresolved"


def _ok(result: m.Answer) -> m.Done:
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))


def scale_down_program(req: ScaleDownRequest) -> Program:
    if not scaling_enabled(req.env):
        raise fail(DISABLED, status="refused")
    team = _team(req.team)
    ctx = context(team, req.cwd, req.env)
    return (yield from locks.with_scaling_lock(ctx.paths, lambda: scale_down(ctx, req)))


def debt_reconcile_program(req: DebtRequest) -> Program:
    """oh-my-codex's reconcile of the scale-down debt record, then (panefleet) under the scaling lock
    the team's stray panes — panes a crashed scale-up left behind are removed when provably ours, else
    reported (``pure/omx/strays.py``) — and the tasks no screen confirmed reaching their worker, typed
    again (``pure/omx/undelivered.py``)."""
    ctx = context(_team(req.team), req.cwd, req.env)
    failed = yield from d.reconcile(ctx)
    if failed is not None:
        raise failed.error()
    result: m.Answer = {"ok": True}
    state = yield from txn.read_state(ctx.paths)
    owner = d.owner_id_of(state) if state is not None else ""
    if state is None or not owner:
        return _ok(result)

    def retries() -> Gen[tuple[strays.Sweep, undelivered.Redelivery, KeptRetry]]:
        swept = yield from strays.sweep(ctx.paths, state.config, owner)
        redelivered = yield from undelivered.redeliver(ctx.paths, state.config, owner, req.cwd)
        return swept, redelivered, (yield from _retry_kept(ctx, req, swept.kept_members))

    swept, redelivered, kept = yield from locks.with_scaling_lock(ctx.paths, retries)
    return kept.onto(redelivered.onto(swept.onto(_ok(result))))


@frozen(kw_only=True)
class KeptRetry:
    """What ``team debt reconcile`` did with the members a rollback kept (``pure/omx/kept_workers.py``)."""

    workers: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    error: str = ""  # why the scale-down of them failed or was refused
    debt: tuple[m.Debt, ...] = ()

    def onto(self, done: m.Done) -> m.Done:
        if not self.workers:
            return done
        report: m.Answer = {"workers": list(self.workers), "removed": list(self.removed)}
        if self.error:
            report["error"] = self.error
        return done.adding("keptWorkers", report, self.debt)


def _retry_kept(ctx: d.Ctx, req: DebtRequest, kept: tuple[kept_workers.Kept, ...]) -> Gen[KeptRetry]:
    """The members a rollback kept, removed as a forced scale-down of them removes them (the caller holds
    the scaling lock): each pane killed only after its proof, or named in the scale-down's debt record.
    A worker's record goes with its membership; one still a member stays ``kept_worker`` debt."""
    if not kept:
        return KeptRetry()
    names = tuple(k.worker for k in kept)
    error = ""
    debt: tuple[m.Debt, ...] = ()
    try:
        yield from scale_down(ctx, ScaleDownRequest(team=req.team, cwd=req.cwd, env=req.env, worker_names=names,
                                                     force=True))
    except PlanError as failed:
        if failed.outcome.message == INTERRUPTED:
            raise
        error, debt = failed.outcome.message, failed.debt
    state = yield from txn.read_state(ctx.paths)
    members = {w.name for w in state.config.workers} if state is not None else set(names)
    removed = tuple(name for name in names if name not in members)
    for name in removed:
        yield from expect(m.RemovePath(path=ctx.paths.intent(name), effect=effects.worker(name, "remove")), m.Ack)
    still = tuple(m.Debt(kind="kept_worker", subject=k.worker, reason=error or "still a member",
                         detail=f"pane {k.pane_id}; {', '.join(k.debt)}") for k in kept if k.worker not in removed)
    return KeptRetry(workers=names, removed=removed, error=error, debt=(*debt, *still))


def debt_show_program(req: DebtRequest) -> Program:
    """Read-only: the recorded debt explained, and what runs that did not finish left (stray panes,
    workers' folders and startup scripts, as ``team status`` reports them: ``strays.survey``); no
    lock, no recovery, tmux asked only when a stray pane can exist."""
    ctx = context(_team(req.team), req.cwd, req.env)
    config = yield from txn.read_text(ctx.paths.config)
    if config is None:
        raise fail(f"Team {ctx.paths.team} not found", status="refused")
    state = yield from txn.read_state(ctx.paths)
    rpaths = d.record_paths(ctx, state) if state is not None else ctx.paths
    text = yield from txn.read_text(rpaths.debt)
    parsed: Any = None if text is None else parse_json(text, rpaths.debt).value_or(None)
    report = explain_debt(parsed if isinstance(parsed, dict) else None, text, ctx.paths.team)
    if state is not None:
        surveyed = yield from strays.survey(ctx.paths, state.config)
        named = {row.get("pane_id") for row in report.get("panes") or []
                 if isinstance(row, dict) and isinstance(row.get("pane_id"), str)}
        left = surveyed.to_json(excluded=named)
        if left["strayPanes"] or left["leftoverWorkers"] or left.get("leftoverWorktrees") \
                or left.get("keptWorkers") or left["strayListing"] != "read":
            report = {**report, "leftovers": left}
        tasks = yield from undelivered.reported(ctx.paths, state.config)
        if tasks:
            report = {**report, "undeliveredTasks": [u.to_json() for u in tasks]}
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(report)))


operations.register("team.scale_down", ScaleDownRequest, scale_down_program)
operations.register("team.debt_reconcile", DebtRequest, debt_reconcile_program)
operations.register("team.debt_show", DebtRequest, debt_show_program)
