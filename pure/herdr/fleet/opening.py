"""Ensure a run's worker workspace and open its pane (docs/herdr-fleet.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from attrs import frozen
from returns.result import Failure

from pure.herdr.fleet import effects
from pure.herdr.fleet.calls import herdr, list_panes, store, store_write
from pure.herdr.fleet.owned import (
    Owned,
    OwnedHerdrPane,
    PendingCreate,
    PendingVerdict,
    apply_ownership,
    close_pane_answer,
    close_workspace,
    create_tab,
    create_workspace,
    created_pane,
    created_workspace,
    discover,
    listed_panes,
    mark_workspace,
    set_up_pane,
    settle_pending,
    split_below,
    weigh_pending,
)
from pure.herdr.fleet.vocabulary import (
    WORKER_PANE_SOURCE,
    Target,
    Tracked,
    Unavailable,
    follower_argv,
    pane_label,
    unsafe_word,
    workspace_label,
)
from pure.herdr.parse import (
    PaneFact,
    error_code,
    failure_text,
    outcome_unknown,
    parse_created_workspace,
    parse_root_pane,
    parse_split_pane,
    parse_workspace_list,
    succeeded,
)
from pure.herdr.records import RunRecord
from pure.model import Effect, Proc
from pure.program import Gen


@frozen
class Ready:
    """The workspace a pane is opened in, the pane it splits from, and whether this call made it
    (``new_anchor``: the anchor is the root pane of a tab this call made)."""

    workspace: Owned
    anchor: OwnedHerdrPane
    created: bool
    new_anchor: bool = False


# ------------------------------------------------------------------------------ the pass's surface


class Surface:
    """What one reconcile pass knows of its owned workspaces: listed panes, minus the ones it closed,
    plus the ones it opened. Lets ``ensure`` pick an anchor without listing again (one ``pane list``
    per owned workspace per pass) and without targeting a pane this pass already closed."""

    def __init__(self, entries: Sequence[tuple[Owned, Sequence[PaneFact]]], listed: Iterable[str] = (),
                 pending: Iterable[PendingVerdict] = ()) -> None:
        self.owned: dict[str, Owned] = {o.workspace_id: o for o, _ in entries}
        # Every workspace id the pass's listing showed, plus the ones it created since.
        self.listed: set[str] = set(listed) | set(self.owned)
        self.panes: dict[str, list[str]] = {o.workspace_id: [p.pane_id for p in panes] for o, panes in entries}
        # Every pane the pass may change: listed in an owned workspace, or made by the pass.
        self.ours: dict[str, OwnedHerdrPane] = {}
        for owned, panes in entries:
            self.ours.update(listed_panes(owned, panes))
        self.closed: dict[str, list[str]] = {wid: [] for wid in self.owned}
        self.gone: set[str] = set()
        # Root panes this pass made (workspace create, tab create): bare shells no run owns.
        self.fresh_roots: dict[str, str] = {}
        # Workspaces this pass created (named by their label in the plan: pure/herdr/fleet/effects.py).
        self.created: set[str] = set()
        # Workspaces holding a pane this pass made but could not identify (a split whose answer was
        # unreadable): never judged empty this pass; the next pass lists the pane and closes it.
        self.unknown: set[str] = set()
        # Why a change of this pass has an unknown outcome (a dropped connection to a saved machine,
        # a call that never finished), or "": no open is retried in this pass after one, since only
        # a fresh listing — the next pass's — says what that change did.
        self.lost = ""
        # Projects whose earlier ``workspace create`` is still pending (owned.py ``weigh_pending``):
        # no workspace is created for them until a listing settles it.
        self.pending: dict[str, PendingVerdict] = {v.create.project: v for v in pending}

    def candidates(self, project: str) -> list[str]:
        return sorted(w for w, o in self.owned.items() if o.project == project and w not in self.gone)

    def add_workspace(self, owned: Owned, root: OwnedHerdrPane) -> None:
        """A workspace this pass created, with its root pane."""
        self.created.add(owned.workspace_id)
        self.owned[owned.workspace_id] = owned
        self.listed.add(owned.workspace_id)
        self.panes[owned.workspace_id] = [root.pane_id]
        self.ours[root.pane_id] = root
        self.closed[owned.workspace_id] = []

    def drop_workspace(self, workspace_id: str) -> None:
        self.gone.add(workspace_id)

    def pane_closed(self, pane_id: str) -> None:
        for wid, ids in self.panes.items():
            if pane_id in ids:
                ids.remove(pane_id)
                self.closed[wid].append(pane_id)
                if not ids and wid not in self.unknown:
                    # herdr 0.8.2 closes a workspace with its last pane.
                    self.gone.add(wid)

    def pane_opened(self, pane: OwnedHerdrPane) -> None:
        self.panes.setdefault(pane.workspace_id, []).append(pane.pane_id)
        self.ours[pane.pane_id] = pane
        self.gone.discard(pane.workspace_id)


# --------------------------------------------------------------------------------- ensure and open


def ensure_workspace(session: Target, project: str, surface: Surface | None) -> Gen[Ready | Unavailable]:
    """``ensureWorkerWorkspace``: lowest-id owned workspace (first listed pane anchors), else create."""
    if surface is None:
        found = yield from discover(session, (project,))
        if isinstance(found, Failure):
            return Unavailable(found.failure())
        disc = found.unwrap()
        # Without the runs' records a workspace held by the record alone cannot be proven ours
        # (owned.py ``prove_recorded``): only a marked one is used here.
        marked = [o for o in disc.owned if not o.recorded_only]
        weighed = yield from weigh_pending(session, disc, [(o, ()) for o in marked])
        if isinstance(weighed, Failure):
            return Unavailable(weighed.failure())
        wrote = yield from apply_ownership(disc)
        if isinstance(wrote, Failure):
            return Unavailable(wrote.failure())
        settled = yield from settle_pending(session, weighed.unwrap())
        if isinstance(settled, Failure):
            return Unavailable(settled.failure())
        claimed, kept = settled.unwrap()
        claimed_panes = dict((o.workspace_id, p) for o, p in claimed)  # marked now, their panes listed
        for owned in sorted([*marked, *(o for o, _p in claimed)], key=lambda o: o.workspace_id):
            if owned.workspace_id in claimed_panes:
                panes = claimed_panes[owned.workspace_id]
            else:
                listed = yield from list_panes(session, owned.workspace_id)
                if isinstance(listed, Failure):
                    return Unavailable(listed.failure())
                panes = listed.unwrap()
            if panes:
                return Ready(owned, listed_panes(owned, panes)[panes[0].pane_id], False)
            return (yield from _fresh_tab(session, owned, None))
        if kept:
            return _still_pending(kept[0])
        before = frozenset(disc.listed)
    else:
        for wid in surface.candidates(project):
            known = surface.panes.get(wid, [])
            if known:
                return Ready(surface.owned[wid], surface.ours[known[0]], False)
            return (yield from _fresh_tab(session, surface.owned[wid], surface))
        before = frozenset(surface.listed)
    return (yield from _create_workspace(session, project, surface, before))


def _still_pending(verdict: PendingVerdict) -> Unavailable:
    return Unavailable(f"a workspace create of an earlier pass is unresolved: {verdict.reason}; nothing created",
                       residue=verdict.candidates)


def _fresh_tab(session: Target, workspace: Owned, surface: Surface | None) -> Gen[Ready | Unavailable]:
    proc = yield from create_tab(session, workspace, effects.new_tab(workspace.workspace_id))
    if not succeeded(proc):
        reason = f"herdr tab create failed: {failure_text(proc)}"
        if outcome_unknown(proc) and surface is not None:
            # A tab (and its root pane) may stand in the owned workspace: the next pass lists and closes it.
            surface.unknown.add(workspace.workspace_id)
            surface.lost = reason
        return Unavailable(reason, residue=(f"a tab herdr may have created in workspace {workspace.workspace_id}",)
                           if outcome_unknown(proc) else ())
    root = parse_root_pane(proc.stdout)
    if isinstance(root, Failure):
        return Unavailable(root.failure())
    anchor = created_pane(workspace, root.unwrap())
    if surface is not None:
        surface.pane_opened(anchor)
        surface.fresh_roots[anchor.pane_id] = workspace.workspace_id
    return Ready(workspace, anchor, False, new_anchor=True)


def _closed_or_gone(proc: Proc) -> bool:
    return succeeded(proc) or error_code(proc) == "workspace_not_found"


# The three record writes of a workspace this call created, each stating the effect its caller gives.


def _remember(session: Target, workspace: Owned, effect: Effect) -> Gen[None]:
    yield from store("herdr.workspace.remember",
                     {**session.keys(), "project": workspace.project, "workspace_id": workspace.workspace_id},
                     effect)


def _forget(session: Target, workspace: Owned, effect: Effect) -> Gen[None]:
    yield from store("herdr.workspace.forget",
                     {**session.keys(), "project": workspace.project, "workspace_id": workspace.workspace_id},
                     effect)


def _resolve(session: Target, project: str, effect: Effect) -> Gen[None]:
    yield from store("herdr.workspace.resolve", {**session.keys(), "project": project}, effect)


def _recover_created(
    session: Target, project: str, known: frozenset[str], reason: str
) -> Gen[tuple[Unavailable, bool]]:
    """herdr's answer to ``workspace create`` said neither "created X" nor a definite "no": find what
    it made — a workspace with this attempt's label that the listing before the create did not show —
    and close it. Zero residue is claimed only when a fresh listing proves it. The pending create
    recorded before it (``_create_workspace``) is cleared only when this settles it; otherwise the next
    listing settles it (owned.py ``weigh_pending``); the flag says it stays."""
    label = workspace_label(project)
    unknown = f"a {label} workspace herdr may have created"
    proc = yield from herdr(session, "workspace", "list")
    if not succeeded(proc):
        return Unavailable(f"{reason}; could not check for it: herdr workspace list failed: {failure_text(proc)}",
                           residue=(unknown,)), True
    listed = parse_workspace_list(proc.stdout)
    if isinstance(listed, Failure):
        return Unavailable(f"{reason}; could not check for it: {listed.failure()}", residue=(unknown,)), True
    new = [ws.workspace_id for ws in listed.unwrap() if ws.workspace_id not in known and ws.label == label]
    new_workspace = effects.new_workspace(project)
    if not new:
        yield from _resolve(session, project, new_workspace)
        return Unavailable(f"{reason}; herdr lists no workspace it created"), False
    if len(new) > 1:
        # More than one new workspace with our label: another party is creating them too. Which one
        # is ours is unknowable, so none is touched.
        return Unavailable(f"{reason}; herdr lists several new {label} workspaces, none provably ours",
                           residue=tuple(new)), True
    made = created_workspace(new[0], project)
    closed = yield from close_workspace(session, made, effects.workspace_rolled_back(project))
    if _closed_or_gone(closed):
        yield from _resolve(session, project, new_workspace)
        return Unavailable(f"{reason}; closed workspace {made.workspace_id}, which herdr created anyway"), False
    # Keep it recorded and mark it, so the next reconcile owns it and removes it (a record alone holds
    # a workspace only with a pane we recorded in it: owned.py ``prove_recorded``); unmarked, it stays
    # the pending create's, which the next listing claims.
    marked = yield from mark_workspace(session, made, new_workspace)
    yield from _remember(session, made, effects.workspace_kept_recorded(project))
    if succeeded(marked):
        yield from _resolve(session, project, new_workspace)
    return Unavailable(
        f"{reason}; herdr created workspace {made.workspace_id} anyway and closing it failed ({failure_text(closed)}); "
        "it stays recorded for the next reconcile",
        residue=(made.workspace_id,),
    ), not succeeded(marked)


def _left_pending(
    surface: Surface | None, project: str, known: frozenset[str], unavailable: Unavailable, kept: bool
) -> Unavailable:
    """A create whose pending record stays: the pass creates nothing more for the project and reports
    it as debt (reconcile.py ``WorkspaceCreatePending``); the next listing settles it."""
    if surface is not None and kept:
        surface.pending[project] = PendingVerdict(PendingCreate(project, tuple(sorted(known)), unavailable.residue),
                                                  candidates=unavailable.residue, reason=unavailable.reason)
    return unavailable


def _create_workspace(
    session: Target, project: str, surface: Surface | None, known: frozenset[str]
) -> Gen[Ready | Unavailable]:
    if surface is not None and project in surface.pending:
        return _still_pending(surface.pending[project])
    # Every step that makes the workspace, records it or rolls it back names it by its label
    # (pure/herdr/fleet/effects.py): the plan shows one line for it.
    new_workspace, rolled_back = effects.new_workspace(project), effects.workspace_rolled_back(project)
    # The durable intent: recorded before the create is sent, so a workspace it makes has a record
    # naming it even when the answer is lost and so is every listing after it (docs/herdr-fleet.md,
    # "Saved machines"). No record, no create.
    intended = yield from store_write("herdr.workspace.intend",
                                      {**session.keys(), "project": project, "listed_before": sorted(known)},
                                      new_workspace)
    if isinstance(intended, Failure):
        return Unavailable(intended.failure())
    proc = yield from create_workspace(session, project, new_workspace)
    if not succeeded(proc):
        reason = f"herdr workspace create failed: {failure_text(proc)}"
        if error_code(proc) is not None and not outcome_unknown(proc):
            yield from _resolve(session, project, new_workspace)
            return Unavailable(reason)  # a definite error: herdr made nothing
        # No answer, or a dropped connection: the workspace may exist; a fresh listing decides.
        recovered, kept = yield from _recover_created(session, project, known, reason)
        if surface is not None and outcome_unknown(proc) and recovered.residue:
            surface.lost = recovered.reason
        return _left_pending(surface, project, known, recovered, kept)
    parsed = parse_created_workspace(proc.stdout)
    if isinstance(parsed, Failure):
        recovered, kept = yield from _recover_created(session, project, known, parsed.failure())
        return _left_pending(surface, project, known, recovered, kept)
    answer = parsed.unwrap()
    made = created_workspace(answer.workspace_id, project)

    def discard(reason: str, is_marked: bool) -> Gen[Ready | Unavailable]:
        closed = yield from close_workspace(session, made, rolled_back)
        if not _closed_or_gone(closed):
            # Keep the record: the next reconcile owns the workspace through it (and its token) and
            # removes it; unmarked, the pending create stays too, and the next listing claims it.
            yield from _remember(session, made, effects.workspace_kept_recorded(project))
            if is_marked:
                yield from _resolve(session, project, new_workspace)
            return _left_pending(surface, project, known, Unavailable(
                f"{reason}; closing workspace {made.workspace_id} failed: {failure_text(closed)}",
                residue=(made.workspace_id,)), not is_marked)
        yield from _forget(session, made, rolled_back)
        yield from _resolve(session, project, rolled_back)
        return Unavailable(reason)

    marked = yield from mark_workspace(session, made, new_workspace)
    if not succeeded(marked):
        return (yield from discard(f"herdr workspace report-metadata failed: {failure_text(marked)}", False))
    if answer.root_pane_id is None:
        return (yield from discard("herdr workspace create reported no root pane", True))
    remembered = yield from store_write(
        "herdr.workspace.remember", {**session.keys(), "project": project, "workspace_id": made.workspace_id},
        new_workspace,
    )
    if isinstance(remembered, Failure):
        return (yield from discard(remembered.failure(), True))
    # The pending create becomes the record it names (a failed clear is harmless: the workspace carries
    # our token, so the next listing finds no candidate and clears it).
    yield from _resolve(session, project, new_workspace)
    root = created_pane(made, answer.root_pane_id)
    if surface is not None:
        surface.add_workspace(made, root)
        surface.fresh_roots[root.pane_id] = made.workspace_id
    return Ready(made, root, True)


def open_pane(
    session: Target, run: RunRecord, follower: Sequence[str], surface: Surface | None
) -> Gen[Tracked | Unavailable]:
    """``openWorkerPane``: split → rename → report-agent-session → run → report-agent working.

    Any failure closes the new pane (when its id is known) and a workspace this call created. A
    pre-existing workspace is never closed.
    """
    if run.pid is None:
        return Unavailable("no session-host pid was ever recorded for this run")
    label = pane_label(run.project, run.issue, run.attempt, run.run_id)
    argv = follower_argv(follower, run.run_id)
    bad = unsafe_word(argv)
    if bad is not None:
        return Unavailable(f"follower argv word {bad!r} would not survive herdr's unquoted pane run")
    ensured = yield from ensure_workspace(session, run.project, surface)
    if isinstance(ensured, Unavailable):
        return ensured
    workspace = ensured.workspace
    # The split, the pane's set-up and its rollback make one line, named by the pane's label
    # (pure/herdr/fleet/effects.py); the anchor is named when it stood before this call.
    fresh_anchor = ensured.created or ensured.new_anchor or (
        surface is not None and ensured.anchor.pane_id in surface.fresh_roots)
    opened = effects.follower_pane(label, run.run_id, None if fresh_anchor else ensured.anchor.pane_id)

    def abandon(
        reason: str, phase: Literal["split"] | None, pane: OwnedHerdrPane | None, unknown_pane: bool = False
    ) -> Gen[Unavailable]:
        residue: list[str] = []
        if pane is not None:
            closed = yield from close_pane_answer(session, pane, effects.follower_rolled_back(label))
            if not succeeded(closed) and error_code(closed) != "pane_not_found":
                residue.append(pane.pane_id)
        elif unknown_pane:
            residue.append(f"an unidentified pane in workspace {workspace.workspace_id}")
        if ensured.created:
            rolled_back = effects.workspace_rolled_back(workspace.project)
            closed = yield from close_workspace(session, workspace, rolled_back)
            if _closed_or_gone(closed):
                residue = []  # the workspace took every pane of this attempt with it
                yield from _forget(session, workspace, rolled_back)
                if surface is not None:
                    surface.drop_workspace(workspace.workspace_id)
            else:
                # Still recorded (ensure remembered it), so the next reconcile owns it and removes it.
                residue.append(workspace.workspace_id)
        return Unavailable(reason, phase, tuple(residue))

    split = yield from split_below(session, ensured.anchor, opened)
    if not succeeded(split) and outcome_unknown(split):
        # The pane may have been made (its answer was lost): like an unreadable answer, never "no pane",
        # and not herdr refusing the split (the budget is not spent as for one).
        reason = f"herdr pane split failed: {failure_text(split)}"
        if surface is not None:
            surface.lost = reason
            if not ensured.created:
                surface.unknown.add(workspace.workspace_id)
        return (yield from abandon(reason, None, None, unknown_pane=True))
    if not succeeded(split):
        return (yield from abandon(f"herdr pane split failed: {failure_text(split)}", "split", None))
    new = parse_split_pane(split.stdout)
    if isinstance(new, Failure):
        if surface is not None and not ensured.created:
            surface.unknown.add(workspace.workspace_id)
        return (yield from abandon(new.failure(), None, None, unknown_pane=True))
    pane = created_pane(workspace, new.unwrap())
    steps: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("rename", (label,)),
        ("report-agent-session", ("--source", WORKER_PANE_SOURCE, "--agent", label, "--agent-session-id", run.run_id)),
        ("run", argv),
        ("report-agent", ("--source", WORKER_PANE_SOURCE, "--agent", label, "--state", "working")),
    )
    for verb, rest in steps:
        proc = yield from set_up_pane(session, pane, verb, *rest, effect=opened)
        if not succeeded(proc):
            if outcome_unknown(proc) and surface is not None:
                surface.lost = f"herdr pane {verb} failed: {failure_text(proc)}"
            return (yield from abandon(f"herdr pane {verb} failed: {failure_text(proc)}", None, pane))
    if surface is not None:
        surface.pane_opened(pane)
    return Tracked(pane.pane_id, label, run.pid, workspace.workspace_id)
