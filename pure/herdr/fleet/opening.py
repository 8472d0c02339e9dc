"""Ensure a run's worker workspace and open its pane (docs/herdr-fleet.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from returns.result import Failure

from pure.herdr.fleet.calls import apply_ownership, discover, herdr, list_panes, store, store_write
from pure.herdr.fleet.common import (
    WORKER_PANE_SOURCE,
    WORKER_WORKSPACE_TOKEN,
    Owned,
    Ready,
    Tracked,
    Unavailable,
    follower_argv,
    pane_label,
    unsafe_word,
    workspace_label,
)
from pure.herdr.parse import (
    error_code,
    failure_text,
    parse_created_workspace,
    parse_root_pane,
    parse_split_pane,
    parse_workspace_list,
    succeeded,
)
from pure.herdr.records import RunRecord
from pure.model import Proc
from pure.program import Gen

# ------------------------------------------------------------------------------ the pass's surface


class Surface:
    """What one reconcile pass knows of its owned workspaces: listed panes, minus the ones it closed,
    plus the ones it opened. Lets ``ensure`` pick an anchor without listing again (one ``pane list``
    per owned workspace per pass) and without targeting a pane this pass already closed."""

    def __init__(
        self, owned: Sequence[Owned], panes: Mapping[str, Sequence[str]], listed: Iterable[str] = ()
    ) -> None:
        self.owned: dict[str, Owned] = {o.workspace_id: o for o in owned}
        # Every workspace id the pass's listing showed, plus the ones it created since.
        self.listed: set[str] = set(listed) | set(self.owned)
        self.panes: dict[str, list[str]] = {wid: list(panes.get(wid, ())) for wid in self.owned}
        self.closed: dict[str, list[str]] = {wid: [] for wid in self.owned}
        self.gone: set[str] = set()
        # Root panes this pass made (workspace create, tab create): bare shells no run owns.
        self.fresh_roots: dict[str, str] = {}
        # Workspaces holding a pane this pass made but could not identify (a split whose answer was
        # unreadable): never judged empty this pass; the next pass lists the pane and closes it.
        self.unknown: set[str] = set()

    def candidates(self, project: str) -> list[str]:
        return sorted(w for w, o in self.owned.items() if o.project == project and w not in self.gone)

    def add_workspace(self, owned: Owned, panes: Iterable[str]) -> None:
        self.owned[owned.workspace_id] = owned
        self.listed.add(owned.workspace_id)
        self.panes[owned.workspace_id] = list(panes)
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

    def pane_opened(self, workspace_id: str, pane_id: str) -> None:
        self.panes.setdefault(workspace_id, []).append(pane_id)
        self.gone.discard(workspace_id)


# --------------------------------------------------------------------------------- ensure and open


def ensure_workspace(session: str, project: str, surface: Surface | None) -> Gen[Ready | Unavailable]:
    """``ensureWorkerWorkspace``: lowest-id owned workspace (first listed pane anchors), else create."""
    if surface is None:
        found = yield from discover(session, (project,))
        if isinstance(found, Failure):
            return Unavailable(found.failure())
        disc = found.unwrap()
        wrote = yield from apply_ownership(disc)
        if isinstance(wrote, Failure):
            return Unavailable(wrote.failure())
        for owned in disc.owned:
            listed = yield from list_panes(session, owned.workspace_id)
            if isinstance(listed, Failure):
                return Unavailable(listed.failure())
            panes = listed.unwrap()
            if panes:
                return Ready(owned.workspace_id, panes[0].pane_id, False)
            return (yield from _fresh_tab(session, owned.workspace_id, None))
        before = frozenset(disc.listed)
    else:
        for wid in surface.candidates(project):
            known = surface.panes.get(wid, [])
            if known:
                return Ready(wid, known[0], False)
            return (yield from _fresh_tab(session, wid, surface))
        before = frozenset(surface.listed)
    return (yield from _create_workspace(session, project, surface, before))


def _fresh_tab(session: str, workspace_id: str, surface: Surface | None) -> Gen[Ready | Unavailable]:
    proc = yield from herdr(session, "tab", "create", "--workspace", workspace_id, "--no-focus", mutates=True)
    if not succeeded(proc):
        return Unavailable(f"herdr tab create failed: {failure_text(proc)}")
    root = parse_root_pane(proc.stdout)
    if isinstance(root, Failure):
        return Unavailable(root.failure())
    if surface is not None:
        surface.pane_opened(workspace_id, root.unwrap())
        surface.fresh_roots[root.unwrap()] = workspace_id
    return Ready(workspace_id, root.unwrap(), False)


def _closed_or_gone(proc: Proc) -> bool:
    return succeeded(proc) or error_code(proc) == "workspace_not_found"


def _recover_created(session: str, project: str, known: frozenset[str], reason: str) -> Gen[Unavailable]:
    """herdr's answer to ``workspace create`` said neither "created X" nor a definite "no": find what
    it made — a workspace with this attempt's label that the listing before the create did not show —
    and close it. Zero residue is claimed only when a fresh listing proves it."""
    label = workspace_label(project)
    unknown = f"a {label} workspace herdr may have created"
    proc = yield from herdr(session, "workspace", "list")
    if not succeeded(proc):
        return Unavailable(f"{reason}; could not check for it: herdr workspace list failed: {failure_text(proc)}",
                           residue=(unknown,))
    listed = parse_workspace_list(proc.stdout)
    if isinstance(listed, Failure):
        return Unavailable(f"{reason}; could not check for it: {listed.failure()}", residue=(unknown,))
    new = [ws.workspace_id for ws in listed.unwrap() if ws.workspace_id not in known and ws.label == label]
    if not new:
        return Unavailable(f"{reason}; herdr lists no workspace it created")
    if len(new) > 1:
        # More than one new workspace with our label: another party is creating them too. Which one
        # is ours is unknowable, so none is touched.
        return Unavailable(f"{reason}; herdr lists several new {label} workspaces, none provably ours",
                           residue=tuple(new))
    made = new[0]
    closed = yield from herdr(session, "workspace", "close", made, mutates=True)
    if _closed_or_gone(closed):
        return Unavailable(f"{reason}; closed workspace {made}, which herdr created anyway")
    # Keep it recorded (it carries our label), so the next reconcile owns it and removes it.
    yield from store("herdr.workspace.remember", {"session": session, "project": project, "workspace_id": made})
    return Unavailable(
        f"{reason}; herdr created workspace {made} anyway and closing it failed ({failure_text(closed)}); "
        "it stays recorded for the next reconcile",
        residue=(made,),
    )


def _create_workspace(
    session: str, project: str, surface: Surface | None, known: frozenset[str]
) -> Gen[Ready | Unavailable]:
    proc = yield from herdr(
        session, "workspace", "create", "--label", workspace_label(project), "--no-focus", mutates=True
    )
    if not succeeded(proc):
        reason = f"herdr workspace create failed: {failure_text(proc)}"
        if proc.exit_code is None or error_code(proc) is not None:
            return Unavailable(reason)  # herdr never ran, or answered a definite error
        return (yield from _recover_created(session, project, known, reason))
    parsed = parse_created_workspace(proc.stdout)
    if isinstance(parsed, Failure):
        return (yield from _recover_created(session, project, known, parsed.failure()))
    made = parsed.unwrap()

    def discard(reason: str) -> Gen[Ready | Unavailable]:
        closed = yield from herdr(session, "workspace", "close", made.workspace_id, mutates=True)
        if not _closed_or_gone(closed):
            # Keep the record: the next reconcile owns the workspace through it and removes it.
            yield from store("herdr.workspace.remember", {"session": session, "project": project, "workspace_id": made.workspace_id})
            return Unavailable(f"{reason}; closing workspace {made.workspace_id} failed: {failure_text(closed)}",
                               residue=(made.workspace_id,))
        yield from store("herdr.workspace.forget", {"session": session, "project": project, "workspace_id": made.workspace_id})
        return Unavailable(reason)

    marked = yield from herdr(
        session,
        "workspace",
        "report-metadata",
        made.workspace_id,
        "--source",
        WORKER_PANE_SOURCE,
        "--token",
        f"{WORKER_WORKSPACE_TOKEN}={project}",
        mutates=True,
    )
    if not succeeded(marked):
        return (yield from discard(f"herdr workspace report-metadata failed: {failure_text(marked)}"))
    if made.root_pane_id is None:
        return (yield from discard("herdr workspace create reported no root pane"))
    remembered = yield from store_write(
        "herdr.workspace.remember", {"session": session, "project": project, "workspace_id": made.workspace_id}
    )
    if isinstance(remembered, Failure):
        return (yield from discard(remembered.failure()))
    if surface is not None:
        surface.add_workspace(Owned(made.workspace_id, project, workspace_label(project)), [made.root_pane_id])
        surface.fresh_roots[made.root_pane_id] = made.workspace_id
    return Ready(made.workspace_id, made.root_pane_id, True)


def open_pane(
    session: str, run: RunRecord, follower: Sequence[str], surface: Surface | None
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

    def abandon(
        reason: str, phase: Literal["split"] | None, pane_id: str | None, unknown_pane: bool = False
    ) -> Gen[Unavailable]:
        residue: list[str] = []
        if pane_id is not None:
            closed = yield from herdr(session, "pane", "close", pane_id, mutates=True)
            if not succeeded(closed) and error_code(closed) != "pane_not_found":
                residue.append(pane_id)
        elif unknown_pane:
            residue.append(f"an unidentified pane in workspace {ensured.workspace_id}")
        if ensured.created:
            closed = yield from herdr(session, "workspace", "close", ensured.workspace_id, mutates=True)
            if _closed_or_gone(closed):
                residue = []  # the workspace took every pane of this attempt with it
                yield from store(
                    "herdr.workspace.forget",
                    {"session": session, "project": run.project, "workspace_id": ensured.workspace_id},
                )
                if surface is not None:
                    surface.drop_workspace(ensured.workspace_id)
            else:
                # Still recorded (ensure remembered it), so the next reconcile owns it and removes it.
                residue.append(ensured.workspace_id)
        return Unavailable(reason, phase, tuple(residue))

    split = yield from herdr(
        session,
        "pane",
        "split",
        "--pane",
        ensured.anchor,
        "--direction",
        "down",
        "--ratio",
        "0.3",
        "--no-focus",
        mutates=True,
    )
    if not succeeded(split):
        return (yield from abandon(f"herdr pane split failed: {failure_text(split)}", "split", None))
    new = parse_split_pane(split.stdout)
    if isinstance(new, Failure):
        if surface is not None and not ensured.created:
            surface.unknown.add(ensured.workspace_id)
        return (yield from abandon(new.failure(), None, None, unknown_pane=True))
    pane_id = new.unwrap()
    steps: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("rename", ("pane", "rename", pane_id, label)),
        (
            "report-agent-session",
            (
                "pane",
                "report-agent-session",
                pane_id,
                "--source",
                WORKER_PANE_SOURCE,
                "--agent",
                label,
                "--agent-session-id",
                run.run_id,
            ),
        ),
        ("run", ("pane", "run", pane_id, *argv)),
        (
            "report-agent",
            ("pane", "report-agent", pane_id, "--source", WORKER_PANE_SOURCE, "--agent", label, "--state", "working"),
        ),
    )
    for verb, args in steps:
        proc = yield from herdr(session, *args, mutates=True)
        if not succeeded(proc):
            return (yield from abandon(f"herdr pane {verb} failed: {failure_text(proc)}", None, pane_id))
    if surface is not None:
        surface.pane_opened(ensured.workspace_id, pane_id)
    return Tracked(pane_id, label, run.pid, ensured.workspace_id)
