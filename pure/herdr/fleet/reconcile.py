"""One reconcile pass: make the owned worker workspaces agree with the live run set."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import evolve, frozen
from returns.result import Failure, Result, Success

from pure.herdr.fleet import effects
from pure.herdr.fleet.calls import probe, probe_step, store
from pure.herdr.fleet.opening import Surface, open_pane
from pure.herdr.fleet.outcomes import (
    AttemptsExhausted,
    Intact,
    JunkCause,
    Reassociated,
    ReconcileOutcome,
    StaleReleased,
    StaleReleaseFailed,
    Untracked,
    VisualUnreadable,
    WorkspaceClaimed,
    WorkspaceCreatePending,
    WorkspaceGroupCloseRequired,
    WorkspaceRemoved,
    WorkspaceRemoveFailed,
)
from pure.herdr.fleet.owned import (
    Owned,
    apply_ownership,
    close_pane,
    close_pane_answer,
    close_workspace,
    discover,
    list_all_panes,
    mark_workspace,
    prove_recorded,
    release_agent,
    settle_pending,
    weigh_pending,
)
from pure.herdr.fleet.vocabulary import (
    IMPLICIT_CLOSE_REASON,
    ReconcileRequest,
    Target,
    Tracked,
    Unavailable,
    pane_label,
    target_of,
)
from pure.herdr.parse import (
    PaneFact,
    error_code,
    failure_text,
    succeeded,
)
from pure.herdr.records import RunRecord, parse_runs
from pure.model import Effect
from pure.program import Gen, announce

# ------------------------------------------------------------------------------------- reconcile

# What herdr answers a ``pane close`` that would close the pane's workspace with it, in 0.9:
# ``confirmation_required`` (0.9.2 "closing the last tab now asks for confirmation", if the CLI asks
# too) or ``workspace_group_close_required`` (the workspace has linked worktree workspaces).
WITH_ITS_WORKSPACE = ("confirmation_required", "workspace_group_close_required")


@frozen
class _Junk:
    run_id: str
    cause: JunkCause
    agent: str | None


def _label_fits(pane: PaneFact, recorded_label: str | None) -> bool:
    return pane.label is None or recorded_label is None or pane.label == recorded_label


def attribute(
    entries: Sequence[tuple[Owned, tuple[PaneFact, ...]]], runs: Sequence[RunRecord]
) -> tuple[dict[str, tuple[PaneFact, str]], dict[str, _Junk]]:
    """Every listed pane of the owned workspaces → the live run it represents, or junk with a cause.

    The recorded pane id wins (when herdr's rename label does not contradict it), the reported
    session id is the fallback; one representation per live run, the recorded one kept.
    """
    live = [r for r in runs if not r.settled]
    live_by_run = {r.run_id: r for r in live}
    settled_panes: dict[tuple[str, str], RunRecord] = {
        (r.project, r.pane_id): r for r in runs if r.settled and r.pane_id is not None
    }
    junk: dict[str, _Junk] = {}
    held: dict[str, tuple[PaneFact, str]] = {}
    for owned, panes in entries:
        project_live = [r for r in live if r.project == owned.project]
        for pane in panes:
            owner = next(
                (r for r in project_live if r.pane_id == pane.pane_id and _label_fits(pane, r.pane_label)), None
            )
            if owner is None and pane.run_id != "":
                owner = live_by_run.get(pane.run_id)
            if owner is None or owner.project != owned.project:
                run_id = pane.run_id
                if run_id == "":
                    former = settled_panes.get((owned.project, pane.pane_id))
                    if former is not None and _label_fits(pane, former.pane_label):
                        run_id = former.run_id
                junk[pane.pane_id] = _Junk(run_id, "settled" if run_id else "unidentified", pane.agent)
                continue
            bucket = held.get(owner.run_id)
            if bucket is None:
                held[owner.run_id] = (pane, owned.workspace_id)
                continue
            keep = bucket if bucket[0].pane_id == owner.pane_id else (
                (pane, owned.workspace_id) if pane.pane_id == owner.pane_id else bucket
            )
            drop = pane if keep[0].pane_id == bucket[0].pane_id else bucket[0]
            held[owner.run_id] = keep
            junk[drop.pane_id] = _Junk(owner.run_id, "duplicate", drop.agent)
    return held, junk


def reconcile(request: ReconcileRequest) -> Gen[Result[list[ReconcileOutcome], str]]:
    """``reconcileWorkerPanes`` against the store's live run set. Failure: the pass mutated nothing."""
    session = target_of(request.session, request.machine)
    answer = yield from store("list.herdr.runs", session.keys())
    runs_r = parse_runs(answer)
    if isinstance(runs_r, Failure):
        return Failure(runs_r.failure())
    runs = runs_r.unwrap()
    live = [r for r in runs if not r.settled]
    scope = sorted(set(request.managed) | {r.project for r in live})
    if not scope:
        return Success([])
    found = yield from discover(session, scope)
    if isinstance(found, Failure):
        return Failure(found.failure())
    disc = found.unwrap()
    listings = yield from list_all_panes(session, disc.owned)
    if isinstance(listings, Failure):
        return Failure(listings.failure())
    entries, unproven = prove_recorded(listings.unwrap(), recorded_panes(runs))
    weighed = yield from weigh_pending(session, disc, entries)
    if isinstance(weighed, Failure):
        return Failure(weighed.failure())
    disc = evolve(disc, forget=(*disc.forget, *unproven))
    wrote = yield from apply_ownership(disc)
    if isinstance(wrote, Failure):
        return Failure(wrote.failure())
    settled = yield from settle_pending(session, weighed.unwrap())
    if isinstance(settled, Failure):
        return Failure(settled.failure())
    claimed, kept = settled.unwrap()
    outcomes: list[ReconcileOutcome] = [
        WorkspaceClaimed(project=o.project, workspace_id=o.workspace_id) for o, _p in claimed]
    entries = sorted([*entries, *claimed], key=lambda e: e[0].workspace_id)
    for owned, _panes in entries:
        if owned.recorded_only:
            # Proven by a pane we recorded (after a restart dropped our token): mark it again, so a
            # pane this pass leaves unidentified (an unreadable split answer) is still ours next pass.
            yield from mark_workspace(session, owned, effects.workspace_remarked(owned.workspace_id))

    surface = Surface(entries, disc.listed, kept)
    held, junk = attribute(entries, runs)
    standing: dict[str, str] = {p.pane_id: o.workspace_id for o, panes in entries for p in panes}
    opened_ws: set[str] = set()
    # Every held run's follower is probed below, whatever the other probes answer: independent reads.
    yield from announce(probe_step(session, held[run.run_id][0].pane_id) for run in live if run.run_id in held)

    for run in live:
        hold = held.get(run.run_id)
        if hold is None:
            if run.pid is None:
                outcomes.append(Untracked(run_id=run.run_id, reason="no session-host pid was ever recorded for this run"))
                continue
            yield from _reopen(session, run, request, surface, opened_ws, outcomes)
            continue
        pane, _wid = hold
        pulse = yield from probe(session, pane.pane_id)
        if pulse.pulse != "dead":
            if pulse.pulse == "alive":
                outcomes.append(Intact(run_id=run.run_id, pane_id=pane.pane_id))
                if run.pane_id != pane.pane_id:
                    yield from store(
                        "herdr.run.set_pane",
                        {"run_id": run.run_id, "pane_id": pane.pane_id, "pane_label": run_label(run)},
                        effects.run_pane(run.run_id, pane.pane_id),
                    )
                if run.attempts:
                    yield from store("herdr.run.set_attempts", {"run_id": run.run_id, "attempts": 0},
                                     effects.run_attempts(run.run_id, 0))
            else:
                outcomes.append(VisualUnreadable(run_id=run.run_id, pane_id=pane.pane_id, reason=pulse.reason))
            continue
        if run.pid is None:
            outcomes.append(Untracked(
                run_id=run.run_id, reason="follower exited but no session-host pid was ever recorded; not replacing"))
            if run.pane_id is not None:
                yield from store("herdr.run.clear_pane", {"run_id": run.run_id}, effects.run_pane_cleared(run.run_id))
            continue
        replaced = yield from _reopen(session, run, request, surface, opened_ws, outcomes)
        if isinstance(replaced, Tracked):
            junk[pane.pane_id] = _Junk(run.run_id, "duplicate", pane.agent)
        elif replaced is not None:
            # The replacement failed: the dead pane has nothing left to show, so it goes now.
            closed = yield from close_pane(session, surface.ours[pane.pane_id],
                                           effects.pane_closed(pane.pane_id, run.run_id, "exited"))
            if isinstance(closed, Success):
                standing.pop(pane.pane_id, None)
                surface.pane_closed(pane.pane_id)

    # The root pane of a workspace (or tab) this pass made is a bare shell no run owns: once a
    # representation stands beside it, it goes in the same pass instead of lingering until the next.
    for root, wid in surface.fresh_roots.items():
        if wid in opened_ws and root in surface.panes.get(wid, []) and root not in junk:
            junk[root] = _Junk("", "unidentified", None)
            standing[root] = wid

    # Panes herdr would close only with their workspace (herdr 0.9: the last pane of a workspace may
    # ask for confirmation, or answer as a group close would): the workspace is closed explicitly below.
    deferred: dict[str, tuple[_Junk, str]] = {}
    for pane_id, info in junk.items():
        said = _junk_effect(surface, pane_id, info)
        if info.agent is not None:
            released = yield from release_agent(session, surface.ours[pane_id], info.agent, said)
            if isinstance(released, Failure):
                outcomes.append(_stale_failed(pane_id, info, released.failure()))
                continue
        proc = yield from close_pane_answer(session, surface.ours[pane_id], said)
        if error_code(proc) in WITH_ITS_WORKSPACE:
            deferred[pane_id] = (info, f"herdr pane close failed: {failure_text(proc)}")
            continue
        if not succeeded(proc):
            outcomes.append(_stale_failed(pane_id, info, f"herdr pane close failed: {failure_text(proc)}"))
            continue
        standing.pop(pane_id, None)
        surface.pane_closed(pane_id)
        outcomes.append(StaleReleased(pane_id=pane_id, run_id=info.run_id, cause=info.cause))

    occupied = {wid for pid, wid in standing.items() if pid not in deferred} | surface.unknown
    for owned, panes in entries:
        wid = owned.workspace_id
        if wid in opened_ws or wid in occupied:
            continue
        waiting = [pid for pid in deferred if standing.get(pid) == wid]
        forget = {**session.keys(), "project": owned.project, "workspace_id": wid}
        if panes and wid in surface.gone and not surface.panes.get(wid):
            # Every listed pane was closed by this pass: herdr closed the workspace with the last.
            yield from store("herdr.workspace.forget", forget, effects.workspace_closed_with_last_pane(wid))
            outcomes.append(WorkspaceRemoved(project=owned.project, workspace_id=wid, reason=IMPLICIT_CLOSE_REASON))
            continue
        closing = effects.workspace_closed(wid)
        proc = yield from close_workspace(session, owned, closing)
        if succeeded(proc) or error_code(proc) == "workspace_not_found":
            yield from store("herdr.workspace.forget", forget, closing)
            surface.drop_workspace(wid)
            for pid in waiting:
                info, _why = deferred.pop(pid)
                outcomes.append(StaleReleased(pane_id=pid, run_id=info.run_id, cause=info.cause))
            outcomes.append(WorkspaceRemoved(project=owned.project, workspace_id=wid,
                                             reason=None if succeeded(proc) else "herdr no longer had it"))
            continue
        reason = f"herdr workspace close failed: {failure_text(proc)}"
        if error_code(proc) == "workspace_group_close_required":
            # Never ``--group``: it would close the linked worktree workspaces, which are not ours.
            outcomes.append(WorkspaceGroupCloseRequired(project=owned.project, workspace_id=wid, reason=reason))
        else:
            outcomes.append(WorkspaceRemoveFailed(project=owned.project, workspace_id=wid, reason=reason))
    for pid, (info, why) in deferred.items():  # its workspace still stands: the pane stays, as debt
        outcomes.append(_stale_failed(pid, info, why))
    # Pending creates still unsettled (kept from the listing, or left by this pass's own create): debt.
    outcomes += [WorkspaceCreatePending(project=v.create.project, candidates=list(v.candidates), reason=v.reason)
                 for v in surface.pending.values()]
    return Success(outcomes)


def recorded_panes(runs: Sequence[RunRecord]) -> list[tuple[str, str, str]]:
    """``(project, pane id, rename label)`` of every run that recorded a pane: what proves a workspace
    held by the record alone (``pure/herdr/fleet/owned.py`` ``prove_recorded``)."""
    return [(r.project, r.pane_id, r.pane_label) for r in runs if r.pane_id is not None and r.pane_label is not None]


def run_label(run: RunRecord) -> str:
    return pane_label(run.project, run.issue, run.attempt, run.run_id)


def _reopen(session: Target, run: RunRecord, request: ReconcileRequest, surface: Surface, opened_ws: set[str],
            outcomes: list[ReconcileOutcome]) -> Gen[Tracked | Unavailable | None]:
    """Open a new pane for ``run`` and record the attempt and its outcome; None (nothing opened)
    once its attempts are exhausted, or once a change of this pass has an unknown outcome."""
    if run.attempts >= request.max_attempts:
        outcomes.append(AttemptsExhausted(run_id=run.run_id, attempts=run.attempts))
        return None
    pending = surface.pending.get(run.project)
    if pending is not None and not surface.candidates(run.project):
        # A workspace would be created, but an earlier create's is unresolved: nothing is created
        # beside it, no attempt spent (pure/herdr/fleet/owned.py ``weigh_pending``).
        outcomes.append(Untracked(run_id=run.run_id, reason=f"not opened: a workspace create of an earlier pass "
                                  f"is unresolved ({pending.reason})"))
        return None
    if surface.lost:
        # No attempt spent, nothing closed: the next pass lists first and decides from what it sees
        # (docs/herdr-fleet.md, "Saved machines").
        outcomes.append(Untracked(run_id=run.run_id, reason=f"not opened in this pass: an earlier change's "
                                  f"outcome is unknown ({surface.lost}); the next pass lists first"))
        return None
    opened = yield from open_pane(session, run, request.follower, surface)
    yield from _record_attempt(run, opened, request.max_attempts)
    if isinstance(opened, Tracked):
        opened_ws.add(opened.workspace_id)
        outcomes.append(Reassociated(run_id=run.run_id, pane_id=opened.pane_id, label=opened.label))
    else:
        outcomes.append(Untracked(run_id=run.run_id, reason=opened.reason, attempted=True, phase=opened.phase))
    return opened


def _record_attempt(run: RunRecord, opened: Tracked | Unavailable, max_attempts: int) -> Gen[None]:
    if isinstance(opened, Tracked):
        yield from store(
            "herdr.run.set_pane", {"run_id": run.run_id, "pane_id": opened.pane_id, "pane_label": opened.label},
            effects.follower_recorded(opened.label),
        )
        if run.attempts:
            yield from store("herdr.run.set_attempts", {"run_id": run.run_id, "attempts": 0},
                             effects.run_attempts(run.run_id, 0))
        return
    spent = max(max_attempts if opened.phase == "split" else run.attempts + 1, run.attempts + 1)
    yield from store("herdr.run.set_attempts", {"run_id": run.run_id, "attempts": spent},
                     effects.run_attempts(run.run_id, spent))
    if run.pane_id is not None:
        yield from store("herdr.run.clear_pane", {"run_id": run.run_id}, effects.run_pane_cleared(run.run_id))


def _junk_effect(surface: Surface, pane_id: str, info: _Junk) -> Effect:
    """What closing a junk pane changes: the root shell of a workspace (or tab) this pass made is part
    of that workspace's line; any other pane is closed for its cause."""
    wid = surface.fresh_roots.get(pane_id)
    if wid is None:
        return effects.pane_closed(pane_id, info.run_id, info.cause)
    owned = surface.owned[wid]
    return effects.root_shell_closed(effects.workspace_subject(wid, owned.project, wid in surface.created))


def _stale_failed(pane_id: str, info: _Junk, reason: str) -> StaleReleaseFailed:
    return StaleReleaseFailed(pane_id=pane_id, run_id=info.run_id, reason=reason, cause=info.cause)
