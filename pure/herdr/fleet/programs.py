"""The registered operation programs (under the fleet lock) and ``herdr status``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import evolve, field, frozen
from returns.result import Failure, Result, Success

from pure import operations
from pure.convert import OMIT_NONE
from pure.herdr.fleet import effects
from pure.herdr.fleet.calls import probe, probe_step, store, store_write
from pure.herdr.fleet.opening import Surface, ensure_workspace, open_pane
from pure.herdr.fleet.outcomes import debt_of
from pure.herdr.fleet.owned import (
    Discovery,
    Owned,
    PendingVerdict,
    apply_ownership,
    discover,
    list_all_panes,
    prove_recorded,
    settle_pending,
    weigh_pending,
)
from pure.herdr.fleet.reconcile import attribute, reconcile, recorded_panes, run_label
from pure.herdr.fleet.release import release_orphaned
from pure.herdr.fleet.vocabulary import (
    DEFAULT_SESSION,
    EnsureRequest,
    OpenRequest,
    ReconcileRequest,
    ReleaseRequest,
    RetireRequest,
    Target,
    Tracked,
    Unavailable,
    done_with,
    json_value,
    opened_json,
    target_of,
)
from pure.herdr.liveness import Pulse
from pure.herdr.parse import (
    PaneFact,
)
from pure.herdr.records import RunRecord, parse_run, parse_runs
from pure.model import Ack, AcquireLock, Done, ReleaseLock, Status
from pure.program import Gen, Program, announce, expect

# ------------------------------------------------------------------------------ operation programs

LOCK_TIMEOUT_MS = 60_000
LOCK_RETRY_MS = 100


def failed(why: str) -> dict[str, Any]:
    """panefleet's own failed answer, ``{"ok": false, "error": why}`` as oh-my-codex's (an outcome of
    omp-conductor's shapes keeps its ``reason``; docs/design-notes.md, "Outcomes")."""
    return {"ok": False, "error": why}


def _locked(lock_path: str | None, body: Program, busy: Callable[[str], dict[str, Any]]) -> Program:
    """Run ``body`` holding the fleet lock, so two panefleet processes never plan against each
    other (two reconciles would each open a pane for the same run). No lock path: no lock. ``busy``
    gives the refusal's result for why."""
    if lock_path is None:
        return (yield from body)
    held = yield from expect(AcquireLock(path=lock_path, timeout_ms=LOCK_TIMEOUT_MS, retry_ms=LOCK_RETRY_MS), Ack)
    if not held.ok:
        reason = f"another panefleet herdr operation holds {lock_path} ({held.error})"
        return done_with("refused", busy(reason), reason)
    done = yield from body
    yield from expect(ReleaseLock(path=lock_path), Ack)
    return done


def reconcile_program(request: ReconcileRequest) -> Program:
    if request.max_attempts < 0:
        return done_with("refused", failed("max_attempts must be >= 0"), "max_attempts must be >= 0")
    return (yield from _locked(request.lock_path, _reconcile_body(request), failed))


def _reconcile_body(request: ReconcileRequest) -> Program:
    result = yield from reconcile(request)
    if isinstance(result, Failure):
        reason = result.failure()
        return done_with("error", failed(reason), reason)
    outcomes = result.unwrap()
    debt = tuple(d for d in map(debt_of, outcomes) if d is not None)
    answer = {"ok": True, "outcomes": [o.to_json() for o in outcomes]}
    # the pass's debt replaces the last pass's record, which `herdr status` reads (pure/herdr/records.py)
    recorded = yield from store_write("herdr.debt.replace", {
        **target_of(request.session, request.machine).keys(),
        "debts": [{"kind": d.kind, "subject": d.subject, "reason": d.reason, "detail": d.detail} for d in debt]},
        effects.debt_record(len(debt)))
    if isinstance(recorded, Failure):
        why = f"{recorded.failure()}: the pass's debt is in this answer only"
        return done_with("error", {**answer, "ok": False, "error": why}, why, debt=debt)
    return done_with("debt" if debt else "ok", answer, debt=debt)


def ensure_program(request: EnsureRequest) -> Program:
    ready = yield from ensure_workspace(target_of(request.session, request.machine), request.project, None)
    if isinstance(ready, Unavailable):
        return done_with("error", {"kind": "unavailable", "reason": ready.reason}, ready.reason)
    result: dict[str, Any] = {"kind": "ready", "workspaceId": ready.workspace.workspace_id,
                              "anchorPaneId": ready.anchor.pane_id}
    if ready.created:
        result["created"] = True
    return done_with("ok", result)


def _load_run(run_id: str, session: Target) -> Gen[Result[RunRecord, str]]:
    answer = yield from store("get.herdr.run", {"run_id": run_id})
    loaded = parse_run(answer)
    if isinstance(loaded, Failure):
        return Failure(loaded.failure())
    record = loaded.unwrap()
    if record is None:
        return Failure(f"no run {run_id!r} in the store (panefleet herdr run start first)")
    recorded = target_of(record.session, record.machine)
    if recorded != session:
        return Failure(f"run {run_id!r} belongs to {recorded.describe()}, not {session.describe()}")
    return Success(record)


def _with_ok(done: Done) -> Done:
    """Every CLI result carries ``ok`` (true exactly when the operation succeeded) beside the seed's
    ``kind`` and field names."""
    result = done.outcome.result
    if not isinstance(result, dict) or "ok" in result:
        return done
    outcome = evolve(done.outcome, result=json_value({"ok": done.outcome.status == "ok", **result}))
    return evolve(done, outcome=outcome)


def open_program(request: OpenRequest) -> Program:
    done = yield from _locked(request.lock_path, _open_body(request), lambda why: {"kind": "unavailable", "reason": why})
    return _with_ok(done)


def _open_body(request: OpenRequest) -> Program:
    target = target_of(request.session, request.machine)
    loaded = yield from _load_run(request.run_id, target)
    if isinstance(loaded, Failure):
        return done_with("refused", {"kind": "unavailable", "reason": loaded.failure()}, loaded.failure())
    run = loaded.unwrap()
    if run.settled:
        reason = f"run {run.run_id} is settled; a settled run keeps no representation"
        return done_with("refused", {"kind": "unavailable", "reason": reason}, reason)
    if run.pid is None:
        reason = f"run {run.run_id} has no session-host pid (panefleet herdr run start --pid PID); nothing opened"
        return done_with("refused", {"kind": "unavailable", "reason": reason}, reason)
    surface: Surface | None = None
    if run.pane_id is not None:
        # The run already has a recorded pane: if it still stands in an owned workspace with a living
        # (or undecidable) follower, opening another would only make a duplicate. One listing serves
        # both the check and the anchor choice.
        found = yield from discover(target, (run.project,))
        if isinstance(found, Failure):
            return done_with("error", {"kind": "unavailable", "reason": found.failure()}, found.failure())
        disc = found.unwrap()
        listings = yield from list_all_panes(target, disc.owned)
        if isinstance(listings, Failure):
            return done_with("error", {"kind": "unavailable", "reason": listings.failure()}, listings.failure())
        # A workspace held by the record alone is used only when it shows this run's recorded pane
        # (owned.py ``prove_recorded``); it is not forgotten here, for this run knows no other's.
        entries, _unproven = prove_recorded(listings.unwrap(), recorded_panes([run]))
        weighed = yield from weigh_pending(target, disc, entries)
        if isinstance(weighed, Failure):
            return done_with("error", {"kind": "unavailable", "reason": weighed.failure()}, weighed.failure())
        wrote = yield from apply_ownership(disc)
        if isinstance(wrote, Failure):
            return done_with("error", {"kind": "unavailable", "reason": wrote.failure()}, wrote.failure())
        settled = yield from settle_pending(target, weighed.unwrap())
        if isinstance(settled, Failure):
            return done_with("error", {"kind": "unavailable", "reason": settled.failure()}, settled.failure())
        claimed, kept = settled.unwrap()
        entries = sorted([*entries, *claimed], key=lambda e: e[0].workspace_id)
        held, _junk = attribute(entries, [run])
        if run.run_id in held and run.pid is not None:
            pane, wid = held[run.run_id]
            pulse = yield from probe(target, pane.pane_id)
            if pulse.pulse != "dead":
                existing = opened_json(Tracked(pane.pane_id, run_label(run), run.pid, wid))
                return done_with("ok", {**existing, "reused": True, "pulse": pulse.pulse})
        surface = Surface(entries, disc.listed, kept)
    opened = yield from open_pane(target, run, request.follower, surface)
    if isinstance(opened, Unavailable):
        return done_with("error", opened_json(opened), opened.reason)
    yield from store(
        "herdr.run.set_pane", {"run_id": run.run_id, "pane_id": opened.pane_id, "pane_label": opened.label},
        effects.follower_recorded(opened.label),
    )
    return done_with("ok", opened_json(opened))


def retire_program(request: RetireRequest) -> Program:
    done = yield from _locked(request.lock_path, _retire_body(request), lambda why: {"kind": "failed", "reason": why})
    return _with_ok(done)


def _retire_body(request: RetireRequest) -> Program:
    target = target_of(request.session, request.machine)
    loaded = yield from _load_run(request.run_id, target)
    if isinstance(loaded, Failure):
        return done_with("refused", {"kind": "none", "reason": loaded.failure()}, loaded.failure())
    run = loaded.unwrap()
    released = yield from release_orphaned(target, run.pane_id, run.pane_label, run.run_id, run.project)
    if released.kind in ("released", "none") and run.pane_id is not None:
        yield from store("herdr.run.clear_pane", {"run_id": run.run_id}, effects.run_pane_cleared(run.run_id))
    status: Status = "ok" if released.kind in ("released", "none") else (
        "refused" if released.kind == "unowned" else "error"
    )
    return done_with(status, released.to_json(), released.reason)


def release_program(request: ReleaseRequest) -> Program:
    released = yield from release_orphaned(
        target_of(request.session, request.machine), request.pane_id, request.pane_label, request.run_id,
        request.project,
    )
    status: Status = "ok" if released.kind in ("released", "none") else (
        "refused" if released.kind == "unowned" else "error"
    )
    return done_with(status, released.to_json(), released.reason)


# ------------------------------------------------------------------------------------------ status


@frozen(kw_only=True)
class StatusRequest:
    session: str = DEFAULT_SESSION
    machine: str | None = field(default=None, metadata=OMIT_NONE)
    managed: tuple[str, ...] = ()


def status_program(request: StatusRequest) -> Program:
    """Read-only: the store's runs, the owned workspaces herdr lists, what each pane is, and the
    follower pulse of every held pane — exactly what a reconcile pass would read, and no write."""
    target = target_of(request.session, request.machine)
    answer = yield from store("list.herdr.runs", target.keys())
    runs_r = parse_runs(answer)
    if isinstance(runs_r, Failure):
        return done_with("error", failed(runs_r.failure()), runs_r.failure())
    runs = runs_r.unwrap()
    recorded_debt = yield from store("list.herdr.debts", target.keys())
    if not recorded_debt.ok or not isinstance(recorded_debt.value, list):
        why = f"store: list.herdr.debts failed: {recorded_debt.error or 'not a list'}"
        return done_with("error", failed(why), why)
    debt: list[Any] = recorded_debt.value
    scope = sorted(set(request.managed) | {r.project for r in runs})
    entries: list[tuple[Owned, tuple[PaneFact, ...]]] = []
    verdicts: tuple[PendingVerdict, ...] = ()
    disc = Discovery((), (), (), (), target)
    if scope:
        found = yield from discover(target, scope)
        if isinstance(found, Failure):
            return done_with("error", failed(found.failure()), found.failure())
        disc = found.unwrap()
        listings = yield from list_all_panes(target, disc.owned)
        if isinstance(listings, Failure):
            return done_with("error", failed(listings.failure()), listings.failure())
        entries, unproven = prove_recorded(listings.unwrap(), recorded_panes(runs))
        disc = evolve(disc, forget=(*disc.forget, *unproven))  # what the next reconcile forgets
        weighed = yield from weigh_pending(target, disc, entries)  # what the next reconcile claims or keeps
        if isinstance(weighed, Failure):
            return done_with("error", failed(weighed.failure()), weighed.failure())
        verdicts = weighed.unwrap()
    held, junk = attribute(entries, runs)
    holder = {pane.pane_id: run_id for run_id, (pane, _w) in held.items()}
    pulses: dict[str, Pulse] = {}
    yield from announce(probe_step(target, pane.pane_id) for pane, _w in held.values())
    for run_id, (pane, _w) in held.items():
        pulses[run_id] = yield from probe(target, pane.pane_id)
    out_runs: list[dict[str, Any]] = []
    for r in runs:
        row: dict[str, Any] = {
            "runId": r.run_id, "project": r.project, "issue": r.issue, "attempt": r.attempt, "pid": r.pid,
            "paneId": held[r.run_id][0].pane_id if r.run_id in held else None,
            "settled": r.settled, "attempts": r.attempts,
        }
        if r.run_id in pulses:
            row["pulse"] = pulses[r.run_id].pulse
            if pulses[r.run_id].reason:
                row["reason"] = pulses[r.run_id].reason
        out_runs.append(row)
    adopt = {wid for _p, wid in disc.adopt}
    workspaces: list[dict[str, Any]] = []
    for owned, panes in entries:
        rows: list[dict[str, Any]] = []
        for pane in panes:
            row = {"paneId": pane.pane_id, "label": pane.label}
            if pane.pane_id in holder:
                row["runId"] = holder[pane.pane_id]
            elif pane.pane_id in junk:
                row["runId"] = junk[pane.pane_id].run_id
                row["cause"] = junk[pane.pane_id].cause
            rows.append(row)
        workspaces.append({
            "workspaceId": owned.workspace_id, "project": owned.project, "label": owned.label,
            "recorded": owned.workspace_id not in adopt, "panes": rows,
        })
    forgotten = [{"project": p, "workspaceId": w} for p, w in disc.forget]
    where = {"session": request.session} if request.machine is None else {"machine": request.machine}
    pending = [_pending_json(v) for v in verdicts]
    # exit 3 while the last reconcile pass left debt: what it owned and could not close
    return done_with("debt" if debt else "ok", {"ok": True, **where, "runs": out_runs, "workspaces": workspaces,
                                                "staleRecords": forgotten, "debt": debt,
                                                **({"pendingCreates": pending} if pending else {})})


def _pending_json(verdict: PendingVerdict) -> dict[str, Any]:
    """A pending ``workspace create`` and what the next reconcile does with it."""
    out: dict[str, Any] = {"project": verdict.create.project, "listedBefore": list(verdict.create.before)}
    if verdict.claim is not None:
        out.update(next="claim", workspaceId=verdict.claim[0])
    elif verdict.candidates:
        out.update(next="keep", candidates=list(verdict.candidates), reason=verdict.reason)
    else:
        out["next"] = "clear"
    return out


operations.register("herdr.reconcile", ReconcileRequest, reconcile_program)
operations.register("herdr.open", OpenRequest, open_program)
operations.register("herdr.retire", RetireRequest, retire_program)
operations.register("herdr.release", ReleaseRequest, release_program)
operations.register("herdr.ensure", EnsureRequest, ensure_program)
operations.register("herdr.status", StatusRequest, status_program)
