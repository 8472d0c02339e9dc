"""Herdr's safety rule, in one place: panefleet changes only a workspace or a pane it owns.

Ownership is structural, never by label alone (docs/herdr-fleet.md):

* a workspace is ours when :func:`discover` finds it carrying the token ``conductor_workers=<project>``,
  or recorded by the store for the project, still listed with the label panefleet gave it and no
  other project's token, and showing a pane panefleet recorded (:func:`prove_recorded`); or
  when this call created it (:func:`created_workspace`, from ``workspace create``'s answer or the one
  new workspace with our label a listing shows after a create whose answer was lost); or when it is
  the one workspace a pending create (recorded in the store before the create was sent) can have made
  (:func:`weigh_pending`: our label, not listed before the create, no token, a bare root shell);
* a pane is ours when a listing of an owned workspace shows it (the seed's rule: inside a marked
  workspace everything is ours; :func:`listed_panes`), or when this call created it in an owned
  workspace (:func:`created_pane`, from the answer of ``pane split``, ``tab create`` or ``workspace
  create``).

Those are the only ways to get an :class:`Owned` workspace or an :class:`OwnedHerdrPane`, and every herdr
step that changes something is built here from one of them (``workspace create`` excepted: it
changes nothing that exists). ``tests/core/test_owned_herdr.py`` checks that no other module builds
a changing herdr step or makes a token.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen
from returns.result import Failure, Result, Success

from pure.herdr.fleet import effects
from pure.herdr.fleet.calls import answered, herdr, list_panes, pane_list_step, store, store_write
from pure.herdr.fleet.vocabulary import (
    WORKER_PANE_SOURCE,
    WORKER_WORKSPACE_TOKEN,
    Target,
    workspace_label,
)
from pure.herdr.parse import PaneFact, failure_text, parse_workspace_list, succeeded
from pure.herdr.records import parse_pending, parse_recorded
from pure.model import Effect, Proc, Run
from pure.program import Gen, announce

# ------------------------------------------------------------------------------------------ tokens


@frozen
class Owned:
    """A workspace of ours (see above): ``label`` as herdr listed it (None when it listed none)."""

    workspace_id: str
    project: str
    label: str | None
    # Held by the store's record alone (herdr lists it without our token, as after a restart): ours
    # only once a listing of it shows a pane panefleet recorded (:func:`prove_recorded`).
    recorded_only: bool = False


@frozen
class OwnedHerdrPane:
    """A pane of ours, in the owned workspace ``workspace_id``."""

    pane_id: str
    workspace_id: str


@frozen
class PendingCreate:
    """A ``workspace create`` of ``project`` recorded before it was sent and not settled since (its
    answer was lost, and so was the listing that looked for it): ``before``, the ids herdr listed just
    before it; ``candidates``, the listed workspaces it can have made — our label, an id not listed
    before, no token at all (a fresh workspace has none; a token is someone's, or ours)."""

    project: str
    before: tuple[str, ...]
    candidates: tuple[str, ...]


@frozen
class Discovery:
    owned: tuple[Owned, ...]
    adopt: tuple[tuple[str, str], ...]
    forget: tuple[tuple[str, str], ...]
    # Every workspace id herdr listed (owned or not): what existed before this operation created any.
    listed: tuple[str, ...] = ()
    session: Target = Target()
    pending: tuple[PendingCreate, ...] = ()


def created_workspace(workspace_id: str, project: str) -> Owned:
    """The workspace this call's ``workspace create`` made (its answer, or the one new workspace with
    the project's label a listing shows after it), or an earlier call's, proven by :func:`weigh_pending`."""
    return Owned(workspace_id, project, workspace_label(project))


def created_pane(workspace: Owned, pane_id: str) -> OwnedHerdrPane:
    """The pane this call made in ``workspace``: the answer of ``pane split``, or the root pane of a
    ``tab create`` or ``workspace create``."""
    return OwnedHerdrPane(pane_id, workspace.workspace_id)


def listed_panes(workspace: Owned, listed: Sequence[PaneFact]) -> dict[str, OwnedHerdrPane]:
    """Every pane a listing of ``workspace`` showed, by id: inside an owned workspace all are ours."""
    return {p.pane_id: OwnedHerdrPane(p.pane_id, workspace.workspace_id) for p in listed}


def discover(session: Target, projects: Sequence[str]) -> Gen[Result[Discovery, str]]:
    """``ownedWorkerWorkspaces``: token-marked workspaces of ``projects`` plus recorded ids still listed.

    The store writes it implies (adopting token-owned ids, forgetting recorded ids herdr no longer
    lists) are returned, not made, so a caller can fail a pass before any mutation.
    """
    proc = yield from herdr(session, "workspace", "list")
    if not succeeded(proc):
        return Failure(f"herdr workspace list failed: {failure_text(proc)}")
    parsed = parse_workspace_list(proc.stdout)
    if isinstance(parsed, Failure):
        return Failure(parsed.failure())
    listed = parsed.unwrap()
    answer = yield from store("read.herdr.workspaces", {**session.keys(), "projects": list(projects)})
    recorded_r = parse_recorded(answer, tuple(projects))
    if isinstance(recorded_r, Failure):
        return Failure(recorded_r.failure())
    recorded = recorded_r.unwrap()
    pending_r = parse_pending(answer, tuple(projects))
    if isinstance(pending_r, Failure):
        return Failure(pending_r.failure())
    pending = tuple(
        PendingCreate(project, before, tuple(
            ws.workspace_id for ws in listed
            if ws.label == workspace_label(project) and ws.workspace_id not in before and not ws.tokens))
        for project, before in pending_r.unwrap().items()
    )
    scope = set(projects)
    owned: dict[str, Owned] = {}
    adopt: list[tuple[str, str]] = []
    forget: list[tuple[str, str]] = []
    for ws in listed:
        token = ws.token(WORKER_WORKSPACE_TOKEN)
        project = token.strip() if token is not None else ""
        if project == "" or project not in scope:
            continue
        owned[ws.workspace_id] = Owned(ws.workspace_id, project, ws.label)
        if ws.workspace_id not in recorded.get(project, ()):
            adopt.append((project, ws.workspace_id))
    by_id = {ws.workspace_id: ws for ws in listed}
    for project in projects:
        for wid in recorded.get(project, ()):
            if wid in owned:
                continue
            hit = by_id.get(wid)
            if hit is None or hit.label != workspace_label(project) or hit.token(WORKER_WORKSPACE_TOKEN) is not None:
                # Gone, or an id herdr reissued after a restart to a workspace we did not make (ours
                # carry the label we gave them, and labels survive restarts). The label never grants
                # ownership; here it can only withdraw a record that no longer proves anything. A
                # marker of another project (out of this scope) withdraws it too.
                forget.append((project, wid))
                continue
            owned[wid] = Owned(wid, project, hit.label, recorded_only=True)
    ordered = tuple(sorted(owned.values(), key=lambda o: o.workspace_id))
    return Success(
        Discovery(ordered, tuple(adopt), tuple(forget), tuple(ws.workspace_id for ws in listed), session, pending)
    )


def apply_ownership(disc: Discovery) -> Gen[Result[None, str]]:
    for project, wid in disc.adopt:
        done = yield from store_write(
            "herdr.workspace.remember", {**disc.session.keys(), "project": project, "workspace_id": wid},
            effects.workspace_recorded(wid),
        )
        if isinstance(done, Failure):
            return done
    for project, wid in disc.forget:
        done = yield from store_write(
            "herdr.workspace.forget", {**disc.session.keys(), "project": project, "workspace_id": wid},
            effects.workspace_forgotten(wid),
        )
        if isinstance(done, Failure):
            return done
    return Success(None)


def list_all_panes(session: Target, owned: Sequence[Owned]) -> Gen[Result[list[tuple[Owned, tuple[PaneFact, ...]]], str]]:
    """``pane list`` of every owned workspace, in order; the first that fails ends the listing. The
    listings are announced (``pure/program.py`` ``Ahead``): they are independent reads, so the shell
    may make them together."""
    yield from announce(pane_list_step(session, o.workspace_id) for o in owned)
    entries: list[tuple[Owned, tuple[PaneFact, ...]]] = []
    for one in owned:
        listed = yield from list_panes(session, one.workspace_id)
        if isinstance(listed, Failure):
            return Failure(listed.failure())
        entries.append((one, listed.unwrap()))
    return Success(entries)



def prove_recorded(
    entries: Sequence[tuple[Owned, tuple[PaneFact, ...]]], recorded_panes: Sequence[tuple[str, str, str]]
) -> tuple[list[tuple[Owned, tuple[PaneFact, ...]]], list[tuple[str, str]]]:
    """Keep a workspace held by the record alone only when its listing shows a pane panefleet
    recorded for the project (``(project, pane id, rename label)`` of a run, live or settled): herdr
    restores our panes with their ids and labels, while a workspace made after a restart that came
    back empty, or that got a reissued id, has none of them — even when someone gave it our label.
    The rest (and what the record said) is returned to forget: never claimed, never closed."""
    known = set(recorded_panes)
    kept: list[tuple[Owned, tuple[PaneFact, ...]]] = []
    unproven: list[tuple[str, str]] = []
    for one, panes in entries:
        if one.recorded_only and not any(
            (one.project, p.pane_id, p.label) in known for p in panes if p.label is not None
        ):
            unproven.append((one.project, one.workspace_id))
            continue
        kept.append((one, panes))
    return kept, unproven



# -------------------------------------------------------------------------------- pending creates


@frozen
class PendingVerdict:
    """What a listing says of a pending create: ``claim`` — the one workspace it made (proven by
    :func:`weigh_pending`) and its panes; else ``candidates`` — what it may have made, none of it
    provably ours (kept as debt, never touched); neither: it made nothing (the record is cleared)."""

    create: PendingCreate
    claim: tuple[str, tuple[PaneFact, ...]] | None = None
    candidates: tuple[str, ...] = ()
    reason: str = ""


def _bare_root(panes: Sequence[PaneFact]) -> bool:
    """A workspace as ``workspace create`` leaves it: one pane, with no rename label, agent or session."""
    return len(panes) == 1 and panes[0].label is None and panes[0].agent is None and panes[0].run_id == ""


def weigh_pending(
    session: Target, disc: Discovery, entries: Sequence[tuple[Owned, tuple[PaneFact, ...]]]
) -> Gen[Result[tuple[PendingVerdict, ...], str]]:
    """Decide every pending create of ``disc`` from this operation's listing (reads only: ``pane list``
    of each candidate). A workspace already owned (``entries``: marked, or proven by a recorded pane)
    is no candidate: it is the create's, settled. The create's workspace is claimed only when it is
    the sole candidate and still a bare root shell (:func:`_bare_root`): ids listed before the create
    are excluded, so a workspace that existed then — a look-alike with our label — is never claimed,
    and a reissued id (herdr 0.9 after a restart) must also show nothing anyone made in it."""
    held = {o.workspace_id for o, _panes in entries}
    verdicts: list[PendingVerdict] = []
    for create in disc.pending:
        candidates = [w for w in create.candidates if w not in held]
        if not candidates:
            verdicts.append(PendingVerdict(create))
            continue
        if len(candidates) > 1:
            verdicts.append(PendingVerdict(create, candidates=tuple(candidates), reason=(
                f"herdr lists several new {workspace_label(create.project)} workspaces "
                f"({', '.join(candidates)}); none is provably the one the create made")))
            continue
        listed = yield from list_panes(session, candidates[0])
        if isinstance(listed, Failure):
            return Failure(listed.failure())
        panes = listed.unwrap()
        if not _bare_root(panes):
            verdicts.append(PendingVerdict(create, candidates=tuple(candidates), reason=(
                f"workspace {candidates[0]} has our label and is new, but shows more than a bare root shell; "
                "not provably the one the create made")))
            continue
        verdicts.append(PendingVerdict(create, claim=(candidates[0], panes)))
    return Success(tuple(verdicts))


def settle_pending(
    session: Target, verdicts: Sequence[PendingVerdict]
) -> Gen[Result[tuple[list[tuple[Owned, tuple[PaneFact, ...]]], list[PendingVerdict]], str]]:
    """Act on :func:`weigh_pending`'s verdicts: a claimed workspace is marked (our token), recorded,
    and its pending create cleared; a create that made nothing is cleared; the rest stay pending.
    Returns the claimed workspaces with their panes, and the verdicts still pending (debt)."""
    claimed: list[tuple[Owned, tuple[PaneFact, ...]]] = []
    kept: list[PendingVerdict] = []
    for verdict in verdicts:
        create = verdict.create
        keys = {**session.keys(), "project": create.project}
        if verdict.claim is None and verdict.candidates:
            kept.append(verdict)
            continue
        # The claimed workspace's mark, record and cleared create make one line; a create that made
        # nothing is the label's.
        said = effects.pending_cleared(create.project)
        if verdict.claim is not None:
            made = created_workspace(verdict.claim[0], create.project)
            said = effects.workspace_claimed(made.workspace_id)
            marked = yield from mark_workspace(session, made, said)
            if not succeeded(marked):
                # Not claimed this time; the next listing decides again (a mark that was applied all
                # the same makes it ours by its token, and the pending create is then cleared).
                kept.append(PendingVerdict(create, candidates=(made.workspace_id,), reason=(
                    f"claiming workspace {made.workspace_id} failed: herdr workspace report-metadata failed: "
                    f"{failure_text(marked)}")))
                continue
            done = yield from store_write("herdr.workspace.remember", {**keys, "workspace_id": made.workspace_id}, said)
            if isinstance(done, Failure):
                return done
            claimed.append((made, verdict.claim[1]))
        done = yield from store_write("herdr.workspace.resolve", keys, said)
        if isinstance(done, Failure):
            return done
    return Success((claimed, kept))


# ------------------------------------------------------------------------------ the changing steps


# Each step below states the effect its caller gives (``effect``: what the change is, in the words of
# ``pure/herdr/fleet/effects.py``, which names the thing as the caller knows it).


def _change(session: Target, effect: Effect | None, *args: str) -> Gen[Proc]:
    """One herdr call that changes something, led by its target (``Target.argv``) as every read is."""
    return (yield from answered(Run(tool="herdr", args=(*session.argv(), *args), mutates=True, effect=effect)))


def create_workspace(session: Target, project: str, effect: Effect | None = None) -> Gen[Proc]:
    return (yield from _change(session, effect, "workspace", "create", "--label", workspace_label(project),
                               "--no-focus"))


def mark_workspace(session: Target, workspace: Owned, effect: Effect | None = None) -> Gen[Proc]:
    """Give a workspace this call created the token that makes it ours for every later pass."""
    return (yield from _change(session, effect, "workspace", "report-metadata", workspace.workspace_id, "--source",
                               WORKER_PANE_SOURCE, "--token", f"{WORKER_WORKSPACE_TOKEN}={workspace.project}"))


def close_workspace(session: Target, workspace: Owned, effect: Effect | None = None) -> Gen[Proc]:
    return (yield from _change(session, effect, "workspace", "close", workspace.workspace_id))


def create_tab(session: Target, workspace: Owned, effect: Effect | None = None) -> Gen[Proc]:
    return (yield from _change(session, effect, "tab", "create", "--workspace", workspace.workspace_id,
                               "--no-focus"))


def split_below(session: Target, anchor: OwnedHerdrPane, effect: Effect | None = None) -> Gen[Proc]:
    return (yield from _change(session, effect, "pane", "split", "--pane", anchor.pane_id, "--direction", "down",
                               "--ratio", "0.3", "--no-focus"))


def set_up_pane(session: Target, pane: OwnedHerdrPane, verb: str, *rest: str,
                effect: Effect | None = None) -> Gen[Proc]:
    """``pane rename|report-agent-session|run|report-agent`` of a pane this call created."""
    return (yield from _change(session, effect, "pane", verb, pane.pane_id, *rest))


def close_pane_answer(session: Target, pane: OwnedHerdrPane, effect: Effect | None = None) -> Gen[Proc]:
    """``pane close``, answered as it is (for a caller that reads the error code itself)."""
    return (yield from _change(session, effect, "pane", "close", pane.pane_id))


def close_pane(session: Target, pane: OwnedHerdrPane, effect: Effect | None = None) -> Gen[Result[None, str]]:
    proc = yield from close_pane_answer(session, pane, effect)
    if not succeeded(proc):
        return Failure(f"herdr pane close failed: {failure_text(proc)}")
    return Success(None)


def release_agent(session: Target, pane: OwnedHerdrPane, agent: str,
                  effect: Effect | None = None) -> Gen[Result[None, str]]:
    proc = yield from _change(session, effect, "pane", "release-agent", pane.pane_id, "--source",
                              WORKER_PANE_SOURCE, "--agent", agent)
    if not succeeded(proc):
        return Failure(f"herdr pane release-agent failed: {failure_text(proc)}")
    return Success(None)


def retire_pane(session: Target, pane: OwnedHerdrPane, label: str,
                effect: Effect | None = None) -> Gen[Result[None, str]]:
    """``retireWorkerPane``: hand authority back, then close (both steps stating ``effect``)."""
    released = yield from release_agent(session, pane, label, effect)
    if isinstance(released, Failure):
        return released
    return (yield from close_pane(session, pane, effect))
