"""The Herdr worker fleet as pure generator programs (omp-conductor 0.19.7 ``fleet.ts`` semantics).

Every herdr call is a ``Run(tool="herdr")`` step, every store access a ``Store`` step; the programs
only ever see their observations. Ownership is structural: a workspace is ours when it carries the
token ``conductor_workers=<project>`` or when the store recorded it for the project — never by label.

Deviations from the seed, decided for real herdr 0.8.2 (each pinned by a test in ``tests/herdr``):

* **A workspace herdr closed with its last pane.** Closing the last pane of a workspace closes the
  workspace in herdr 0.8.2. When a reconcile pass closed every pane it listed in a workspace (each
  close answered ok) and opened none there, the workspace is already gone: the pass reports
  ``workspace-removed`` with ``reason: "herdr closed it with its last pane"`` and forgets the record,
  *without* a ``workspace close`` call. Calling it anyway (as the seed does) answers
  ``workspace_not_found``, which the seed reports as ``workspace-remove-failed`` although the fleet
  converged; worse, after a herdr restart the id can be reissued to a stranger's workspace, and a
  blind close by id would destroy it. A workspace listed with no panes at all still gets an explicit
  ``workspace close``; ``workspace_not_found`` there also means "gone" and is reported as removed.
* **The record leg needs the label we gave.** A recorded workspace id that herdr lists without the
  token counts as ours only while it still carries the label panefleet created it with
  (``<project>-workers``; labels survive herdr restarts). Otherwise the record is forgotten: after a
  restart herdr reissues the ids of workspaces closed before it (one closed outside panefleet, say,
  by its last shell exiting), and a stale record would otherwise claim a stranger's workspace and
  close its panes as junk. The label never grants ownership; it can only withdraw a stale record.
* **Attribution by recorded pane id also checks the rename label** when herdr lists one (labels
  survive a herdr restart): a recorded ``wN:pM`` whose listed pane carries another label is not the
  run's pane (pane-id reuse after a restart). Release-orphaned proof does the same.
* **Cause of junk.** herdr 0.8.2 never stores ``agent_session`` for a custom source, so a settled
  run's leftover reports no run id. A pane whose id a *settled* run recorded is reported with cause
  ``settled`` and that run id instead of ``unidentified``.
* **Attempt budget** (stored per run): a failed re-establishment spends one attempt, a failed split
  spends the whole budget (``phase: "split"``); a representation re-established or seen intact resets
  it to zero, so the budget bounds consecutive failures. ``run start`` of the run resets it too.
* **Follower argv.** ``pane run`` joins argv with spaces and no quoting and herdr strips
  ``--session`` before ``--``; a follower argv with a word that would not survive that is refused
  before any mutation.
* **Root panes.** The root pane of a workspace (or tab) a reconcile pass created is a bare shell
  no run owns; it is closed as ``unidentified`` junk in the same pass once a representation stands
  beside it, so the first pass already converges (the seed leaves it for the next pass).
* **One listing per pass.** Inside reconcile, ensure-workspace picks its anchor from the pass's own
  listing (minus panes the pass closed, plus panes it opened) instead of listing again, so a
  converged pass costs exactly one ``workspace list``, one ``pane list`` per owned workspace and one
  ``process-info`` per held pane. The discovery's store writes (adopting token-owned ids, forgetting
  vanished ones) are made only after every listing was read, so a failed pass changes nothing.
* **Fleet lock.** With ``lock_path`` set (the CLI always sets it) an operation holds a lock
  directory for its whole run, so two panefleet processes never open a pane for the same run.
* **Sessions.** Each herdr session is a separate server with its own workspace ids, so the store
  scopes runs and recorded workspace ids per session: an operation on session S reads and writes only
  S's records, and a run of another session is refused by ``open``/``retire``.
* **Inside a marked workspace everything is ours** (seed rule): a foreign pane planted *inside* an
  owned workspace is junk and is closed as ``unidentified``. Panes of unmarked, unrecorded
  workspaces (the operator's own, a lookalike label) are never listed, let alone touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from attrs import evolve, frozen
from returns.result import Failure, Result, Success

from pure.herdr.liveness import Pulse, follower_pulse
from pure.herdr.parse import (
    PaneFact,
    error_code,
    failure_text,
    parse_created_workspace,
    parse_pane_list,
    parse_process_info,
    parse_root_pane,
    parse_split_pane,
    parse_workspace_list,
    succeeded,
)
from pure.herdr.records import RunRecord, parse_recorded, parse_run, parse_runs, store_step
from pure.model import Ack, AcquireLock, Done, JsonResult, JsonValue, Outcome, Proc, ReleaseLock, Run, Status
from pure.program import Gen, Program, expect

WORKER_PANE_SOURCE = "panefleet"
WORKER_WORKSPACE_TOKEN = "conductor_workers"
PANE_REATTEMPT_MAX = 3
DEFAULT_SESSION = "fleet"
DEFAULT_FOLLOWER: tuple[str, ...] = ("panefleet",)
IMPLICIT_CLOSE_REASON = "herdr closed it with its last pane"

_SAFE_WORD = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


def workspace_label(project: str) -> str:
    return f"{project}-workers"


def pane_label(project: str, issue: int, attempt: int, run_id: str) -> str:
    return f"worker-{project}-{issue}-a{attempt}-{run_id[:8]}"


def follower_argv(follower: Sequence[str], run_id: str) -> tuple[str, ...]:
    return (*follower, "herdr", "follow", run_id)


def unsafe_word(argv: Sequence[str]) -> str | None:
    """The first word herdr's unquoted ``pane run`` join (or its ``--session`` strip) would mangle."""
    for word in argv:
        if not _SAFE_WORD.match(word) or word == "--session" or word.startswith("--session=") or word == "--":
            return word
    return None


# ------------------------------------------------------------------------------------------ requests


@frozen(kw_only=True)
class EnsureRequest:
    session: str = DEFAULT_SESSION
    project: str


@frozen(kw_only=True)
class OpenRequest:
    session: str = DEFAULT_SESSION
    run_id: str
    follower: tuple[str, ...] = DEFAULT_FOLLOWER
    lock_path: str | None = None


@frozen(kw_only=True)
class RetireRequest:
    session: str = DEFAULT_SESSION
    run_id: str
    lock_path: str | None = None


@frozen(kw_only=True)
class ReleaseRequest:
    """``releaseOrphanedWorkerPane`` on explicit identity (the store-free form of retire)."""

    session: str = DEFAULT_SESSION
    pane_id: str | None = None
    pane_label: str | None = None
    run_id: str | None = None
    project: str | None = None


@frozen(kw_only=True)
class ReconcileRequest:
    session: str = DEFAULT_SESSION
    managed: tuple[str, ...] = ()
    max_attempts: int = PANE_REATTEMPT_MAX
    follower: tuple[str, ...] = DEFAULT_FOLLOWER
    lock_path: str | None = None


# ------------------------------------------------------------------------------------ small results


@frozen
class Owned:
    workspace_id: str
    project: str
    label: str | None


@frozen
class Discovery:
    owned: tuple[Owned, ...]
    adopt: tuple[tuple[str, str], ...]
    forget: tuple[tuple[str, str], ...]
    # Every workspace id herdr listed (owned or not): what existed before this operation created any.
    listed: tuple[str, ...] = ()
    session: str = DEFAULT_SESSION


@frozen
class Ready:
    workspace_id: str
    anchor: str
    created: bool


@frozen
class Tracked:
    pane_id: str
    label: str
    pid: int
    workspace_id: str


@frozen
class Unavailable:
    reason: str
    phase: Literal["split"] | None = None
    # What this attempt may have left in herdr (workspace or pane ids, or a description when herdr's
    # answer did not say which): empty only when the attempt proved it left nothing behind.
    residue: tuple[str, ...] = ()


def _json(value: object) -> JsonValue:
    return JsonValue(value)


def _done(status: Status, result: Mapping[str, Any], message: str = "") -> Done:
    return Done(outcome=Outcome(status=status, result=_json(dict(result)), message=message))


def _opened_json(opened: Tracked | Unavailable) -> dict[str, Any]:
    if isinstance(opened, Tracked):
        return {
            "kind": "tracked",
            "paneId": opened.pane_id,
            "label": opened.label,
            "pid": opened.pid,
            "workspaceId": opened.workspace_id,
        }
    out: dict[str, Any] = {"kind": "unavailable", "reason": opened.reason}
    if opened.phase is not None:
        out["phase"] = opened.phase
    if opened.residue:
        out["residue"] = list(opened.residue)
    return out


# ---------------------------------------------------------------------------------------- primitives


def herdr(session: str, *args: str, mutates: bool = False) -> Gen[Proc]:
    """One herdr call. ``--session`` goes first, where herdr strips it before parsing the verb."""
    proc = yield from expect(Run(tool="herdr", args=("--session", session, *args), mutates=mutates), Proc)
    return proc


def store(action: str, payload: Mapping[str, Any]) -> Gen[JsonResult]:
    result = yield from expect(store_step(action, payload), JsonResult)
    return result


def _write(action: str, payload: Mapping[str, Any]) -> Gen[Result[None, str]]:
    result = yield from store(action, payload)
    if not result.ok:
        return Failure(f"store: {action} failed: {result.error or 'unknown error'}")
    return Success(None)


def discover(session: str, projects: Sequence[str]) -> Gen[Result[Discovery, str]]:
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
    answer = yield from store("read.herdr.workspaces", {"session": session, "projects": list(projects)})
    recorded_r = parse_recorded(answer, tuple(projects))
    if isinstance(recorded_r, Failure):
        return Failure(recorded_r.failure())
    recorded = recorded_r.unwrap()
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
            if hit is None or hit.label != workspace_label(project):
                # Gone, or an id herdr reissued after a restart to a workspace we did not make (ours
                # carry the label we gave them, and labels survive restarts). The label never grants
                # ownership; here it can only withdraw a record that no longer proves anything.
                forget.append((project, wid))
                continue
            owned[wid] = Owned(wid, project, hit.label)
    ordered = tuple(sorted(owned.values(), key=lambda o: o.workspace_id))
    return Success(
        Discovery(ordered, tuple(adopt), tuple(forget), tuple(ws.workspace_id for ws in listed), session)
    )


def apply_ownership(disc: Discovery) -> Gen[Result[None, str]]:
    for project, wid in disc.adopt:
        done = yield from _write(
            "herdr.workspace.remember", {"session": disc.session, "project": project, "workspace_id": wid}
        )
        if isinstance(done, Failure):
            return done
    for project, wid in disc.forget:
        done = yield from _write(
            "herdr.workspace.forget", {"session": disc.session, "project": project, "workspace_id": wid}
        )
        if isinstance(done, Failure):
            return done
    return Success(None)


def list_panes(session: str, workspace_id: str) -> Gen[Result[tuple[PaneFact, ...], str]]:
    proc = yield from herdr(session, "pane", "list", "--workspace", workspace_id)
    if not succeeded(proc):
        return Failure(f"herdr pane list failed: {failure_text(proc)}")
    return parse_pane_list(proc.stdout, WORKER_PANE_SOURCE)


def probe(session: str, pane_id: str) -> Gen[Pulse]:
    """``paneFollowerAlive``: a failed or unreadable probe is ``unknown``, never dead."""
    proc = yield from herdr(session, "pane", "process-info", "--pane", pane_id)
    if not succeeded(proc):
        return Pulse("unknown", f"herdr pane process-info failed: {failure_text(proc)}")
    info = parse_process_info(proc.stdout, pane_id)
    if isinstance(info, Failure):
        return Pulse("unknown", info.failure())
    return follower_pulse(info.unwrap())


def close_pane(session: str, pane_id: str) -> Gen[Result[None, str]]:
    proc = yield from herdr(session, "pane", "close", pane_id, mutates=True)
    if not succeeded(proc):
        return Failure(f"herdr pane close failed: {failure_text(proc)}")
    return Success(None)


def release_agent(session: str, pane_id: str, agent: str) -> Gen[Result[None, str]]:
    proc = yield from herdr(
        session, "pane", "release-agent", pane_id, "--source", WORKER_PANE_SOURCE, "--agent", agent, mutates=True
    )
    if not succeeded(proc):
        return Failure(f"herdr pane release-agent failed: {failure_text(proc)}")
    return Success(None)


def retire_pane(session: str, pane_id: str, label: str) -> Gen[Result[None, str]]:
    """``retireWorkerPane``: hand authority back, then close."""
    released = yield from release_agent(session, pane_id, label)
    if isinstance(released, Failure):
        return released
    closed = yield from close_pane(session, pane_id)
    return closed


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
    remembered = yield from _write(
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


# -------------------------------------------------------------------------------- release / retire


@frozen
class Released:
    kind: Literal["none", "released", "unowned", "failed"]
    pane_id: str | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.pane_id is not None:
            out["paneId"] = self.pane_id
        if self.reason:
            out["reason"] = self.reason
        return out


def release_orphaned(
    session: str, pane_id: str | None, label: str | None, run_id: str | None, project: str | None
) -> Gen[Released]:
    """``releaseOrphanedWorkerPane``: prove the pane is ours before anything is closed."""
    if pane_id is None or label is None or project is None:
        return Released("none")
    found = yield from discover(session, (project,))
    if isinstance(found, Failure):
        return Released("failed", pane_id, found.failure())
    disc = found.unwrap()
    wrote = yield from apply_ownership(disc)
    if isinstance(wrote, Failure):
        return Released("failed", pane_id, wrote.failure())
    home: str | None = None
    hit: PaneFact | None = None
    for owned in disc.owned:
        listed = yield from list_panes(session, owned.workspace_id)
        if isinstance(listed, Failure):
            return Released("failed", pane_id, listed.failure())
        hit = next((p for p in listed.unwrap() if p.pane_id == pane_id), None)
        if hit is not None:
            home = owned.workspace_id
            break
    if home is None or hit is None:
        return Released("none")
    session_id = hit.run_id or None
    if (
        (hit.agent is not None and hit.agent != label)
        or (hit.label is not None and hit.label != label)
        or (session_id is not None and run_id is not None and session_id != run_id)
    ):
        return Released(
            "unowned",
            pane_id,
            f"pane {pane_id} in marked workspace {home} reports another identity "
            f"(agent {hit.agent or 'none'}, label {hit.label or 'none'}, session {session_id or 'none'})",
        )
    retired = yield from retire_pane(session, pane_id, label)
    if isinstance(retired, Failure):
        return Released("failed", pane_id, retired.failure())
    return Released("released", pane_id)


# ------------------------------------------------------------------------------------- reconcile


@frozen
class _Junk:
    run_id: str
    cause: Literal["settled", "duplicate", "unidentified"]
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


def reconcile(request: ReconcileRequest) -> Gen[Result[list[dict[str, Any]], str]]:
    """``reconcileWorkerPanes`` against the store's live run set. Failure: the pass mutated nothing."""
    session = request.session
    answer = yield from store("list.herdr.runs", {"session": session})
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
    entries: list[tuple[Owned, tuple[PaneFact, ...]]] = []
    for owned in disc.owned:
        listed = yield from list_panes(session, owned.workspace_id)
        if isinstance(listed, Failure):
            return Failure(listed.failure())
        entries.append((owned, listed.unwrap()))
    wrote = yield from apply_ownership(disc)
    if isinstance(wrote, Failure):
        return Failure(wrote.failure())

    surface = Surface(
        disc.owned, {o.workspace_id: [p.pane_id for p in panes] for o, panes in entries}, disc.listed
    )
    held, junk = attribute(entries, runs)
    outcomes: list[dict[str, Any]] = []
    standing: dict[str, str] = {p.pane_id: o.workspace_id for o, panes in entries for p in panes}
    opened_ws: set[str] = set()

    for run in live:
        hold = held.get(run.run_id)
        if hold is None:
            if run.pid is None:
                outcomes.append(
                    {
                        "kind": "untracked",
                        "runId": run.run_id,
                        "reason": "no session-host pid was ever recorded for this run",
                    }
                )
                continue
            if run.attempts >= request.max_attempts:
                outcomes.append({"kind": "attempts-exhausted", "runId": run.run_id, "attempts": run.attempts})
                continue
            opened = yield from open_pane(session, run, request.follower, surface)
            yield from _record_attempt(run, opened, request.max_attempts)
            if isinstance(opened, Tracked):
                opened_ws.add(opened.workspace_id)
                outcomes.append(_reassociated(run, opened))
            else:
                outcomes.append(_untracked_attempted(run, opened))
            continue
        pane, _wid = hold
        pulse = yield from probe(session, pane.pane_id)
        if pulse.pulse != "dead":
            if pulse.pulse == "alive":
                outcomes.append({"kind": "intact", "runId": run.run_id, "paneId": pane.pane_id})
                if run.pane_id != pane.pane_id:
                    yield from store(
                        "herdr.run.set_pane",
                        {"run_id": run.run_id, "pane_id": pane.pane_id, "pane_label": _label_of(run)},
                    )
                if run.attempts:
                    yield from store("herdr.run.set_attempts", {"run_id": run.run_id, "attempts": 0})
            else:
                outcomes.append(
                    {"kind": "visual-unreadable", "runId": run.run_id, "paneId": pane.pane_id, "reason": pulse.reason}
                )
            continue
        if run.pid is None:
            outcomes.append(
                {
                    "kind": "untracked",
                    "runId": run.run_id,
                    "reason": "follower exited but no session-host pid was ever recorded; not replacing",
                }
            )
            if run.pane_id is not None:
                yield from store("herdr.run.clear_pane", {"run_id": run.run_id})
            continue
        if run.attempts >= request.max_attempts:
            outcomes.append({"kind": "attempts-exhausted", "runId": run.run_id, "attempts": run.attempts})
            continue
        replaced = yield from open_pane(session, run, request.follower, surface)
        yield from _record_attempt(run, replaced, request.max_attempts)
        if isinstance(replaced, Tracked):
            opened_ws.add(replaced.workspace_id)
            outcomes.append(_reassociated(run, replaced))
            junk[pane.pane_id] = _Junk(run.run_id, "duplicate", pane.agent)
        else:
            outcomes.append(_untracked_attempted(run, replaced))
            # The replacement failed: the dead pane has nothing left to show, so it goes now.
            closed = yield from close_pane(session, pane.pane_id)
            if isinstance(closed, Success):
                standing.pop(pane.pane_id, None)
                surface.pane_closed(pane.pane_id)

    # The root pane of a workspace (or tab) this pass made is a bare shell no run owns: once a
    # representation stands beside it, it goes in the same pass instead of lingering until the next.
    for root, wid in surface.fresh_roots.items():
        if wid in opened_ws and root in surface.panes.get(wid, []) and root not in junk:
            junk[root] = _Junk("", "unidentified", None)
            standing[root] = wid

    for pane_id, info in junk.items():
        if info.agent is not None:
            released = yield from release_agent(session, pane_id, info.agent)
            if isinstance(released, Failure):
                outcomes.append(_stale_failed(pane_id, info, released.failure()))
                continue
        closed = yield from close_pane(session, pane_id)
        if isinstance(closed, Failure):
            outcomes.append(_stale_failed(pane_id, info, closed.failure()))
            continue
        standing.pop(pane_id, None)
        surface.pane_closed(pane_id)
        outcomes.append({"kind": "stale-released", "paneId": pane_id, "runId": info.run_id, "cause": info.cause})

    occupied = set(standing.values()) | surface.unknown
    for owned, panes in entries:
        wid = owned.workspace_id
        if wid in opened_ws or wid in occupied:
            continue
        removed = {"kind": "workspace-removed", "project": owned.project, "workspaceId": wid}
        forget = {"session": session, "project": owned.project, "workspace_id": wid}
        if panes and wid in surface.gone and not surface.panes.get(wid):
            # Every listed pane was closed by this pass: herdr closed the workspace with the last.
            yield from store("herdr.workspace.forget", forget)
            outcomes.append({**removed, "reason": IMPLICIT_CLOSE_REASON})
            continue
        proc = yield from herdr(session, "workspace", "close", wid, mutates=True)
        if succeeded(proc) or error_code(proc) == "workspace_not_found":
            yield from store("herdr.workspace.forget", forget)
            surface.drop_workspace(wid)
            outcomes.append(removed if succeeded(proc) else {**removed, "reason": "herdr no longer had it"})
            continue
        outcomes.append(
            {
                "kind": "workspace-remove-failed",
                "project": owned.project,
                "workspaceId": wid,
                "reason": f"herdr workspace close failed: {failure_text(proc)}",
            }
        )
    return Success(outcomes)


def _label_of(run: RunRecord) -> str:
    return pane_label(run.project, run.issue, run.attempt, run.run_id)


def _record_attempt(run: RunRecord, opened: Tracked | Unavailable, max_attempts: int) -> Gen[None]:
    if isinstance(opened, Tracked):
        yield from store(
            "herdr.run.set_pane", {"run_id": run.run_id, "pane_id": opened.pane_id, "pane_label": opened.label}
        )
        if run.attempts:
            yield from store("herdr.run.set_attempts", {"run_id": run.run_id, "attempts": 0})
        return
    spent = max_attempts if opened.phase == "split" else run.attempts + 1
    yield from store("herdr.run.set_attempts", {"run_id": run.run_id, "attempts": max(spent, run.attempts + 1)})
    if run.pane_id is not None:
        yield from store("herdr.run.clear_pane", {"run_id": run.run_id})


def _reassociated(run: RunRecord, opened: Tracked) -> dict[str, Any]:
    return {"kind": "reassociated", "runId": run.run_id, "paneId": opened.pane_id, "label": opened.label}


def _untracked_attempted(run: RunRecord, opened: Unavailable) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "untracked", "runId": run.run_id, "reason": opened.reason, "attempted": True}
    if opened.phase is not None:
        out["phase"] = opened.phase
    return out


def _stale_failed(pane_id: str, info: _Junk, reason: str) -> dict[str, Any]:
    return {
        "kind": "stale-release-failed",
        "paneId": pane_id,
        "runId": info.run_id,
        "reason": reason,
        "cause": info.cause,
    }


# ------------------------------------------------------------------------------ operation programs

LOCK_TIMEOUT_MS = 60_000
LOCK_RETRY_MS = 100


def _locked(lock_path: str | None, body: Program, busy: Mapping[str, Any]) -> Program:
    """Run ``body`` holding the fleet lock, so two panefleet processes never plan against each
    other (two reconciles would each open a pane for the same run). No lock path: no lock."""
    if lock_path is None:
        return (yield from body)
    held = yield from expect(AcquireLock(path=lock_path, timeout_ms=LOCK_TIMEOUT_MS, retry_ms=LOCK_RETRY_MS), Ack)
    if not held.ok:
        reason = f"another panefleet herdr operation holds {lock_path} ({held.error})"
        return _done("refused", {**busy, "reason": reason}, reason)
    done = yield from body
    yield from expect(ReleaseLock(path=lock_path), Ack)
    return done


def reconcile_program(request: ReconcileRequest) -> Program:
    if request.max_attempts < 0:
        return _done("refused", {"ok": False, "reason": "max_attempts must be >= 0"}, "max_attempts must be >= 0")
    return (yield from _locked(request.lock_path, _reconcile_body(request), {"ok": False}))


def _reconcile_body(request: ReconcileRequest) -> Program:
    result = yield from reconcile(request)
    if isinstance(result, Failure):
        reason = result.failure()
        return _done("error", {"ok": False, "reason": reason}, reason)
    return _done("ok", {"ok": True, "outcomes": result.unwrap()})


def ensure_program(request: EnsureRequest) -> Program:
    ready = yield from ensure_workspace(request.session, request.project, None)
    if isinstance(ready, Unavailable):
        return _done("error", {"kind": "unavailable", "reason": ready.reason}, ready.reason)
    result: dict[str, Any] = {"kind": "ready", "workspaceId": ready.workspace_id, "anchorPaneId": ready.anchor}
    if ready.created:
        result["created"] = True
    return _done("ok", result)


def _load_run(run_id: str, session: str) -> Gen[Result[RunRecord, str]]:
    answer = yield from store("get.herdr.run", {"run_id": run_id})
    loaded = parse_run(answer)
    if isinstance(loaded, Failure):
        return Failure(loaded.failure())
    record = loaded.unwrap()
    if record is None:
        return Failure(f"no run {run_id!r} in the store (panefleet herdr run start first)")
    if record.session != session:
        return Failure(f"run {run_id!r} belongs to herdr session {record.session!r}, not {session!r}")
    return Success(record)


def _with_ok(done: Done) -> Done:
    """Every CLI result carries ``ok`` (true exactly when the operation succeeded) beside the seed's
    ``kind`` and field names."""
    result = done.outcome.result
    if not isinstance(result, dict) or "ok" in result:
        return done
    outcome = evolve(done.outcome, result=_json({"ok": done.outcome.status == "ok", **result}))
    return evolve(done, outcome=outcome)


def open_program(request: OpenRequest) -> Program:
    done = yield from _locked(request.lock_path, _open_body(request), {"kind": "unavailable"})
    return _with_ok(done)


def _open_body(request: OpenRequest) -> Program:
    loaded = yield from _load_run(request.run_id, request.session)
    if isinstance(loaded, Failure):
        return _done("refused", {"kind": "unavailable", "reason": loaded.failure()}, loaded.failure())
    run = loaded.unwrap()
    if run.settled:
        reason = f"run {run.run_id} is settled; a settled run keeps no representation"
        return _done("refused", {"kind": "unavailable", "reason": reason}, reason)
    if run.pid is None:
        reason = f"run {run.run_id} has no session-host pid (panefleet herdr run start --pid PID); nothing opened"
        return _done("refused", {"kind": "unavailable", "reason": reason}, reason)
    surface: Surface | None = None
    if run.pane_id is not None:
        # The run already has a recorded pane: if it still stands in an owned workspace with a living
        # (or undecidable) follower, opening another would only make a duplicate. One listing serves
        # both the check and the anchor choice.
        found = yield from discover(request.session, (run.project,))
        if isinstance(found, Failure):
            return _done("error", {"kind": "unavailable", "reason": found.failure()}, found.failure())
        disc = found.unwrap()
        entries: list[tuple[Owned, tuple[PaneFact, ...]]] = []
        for owned in disc.owned:
            listed = yield from list_panes(request.session, owned.workspace_id)
            if isinstance(listed, Failure):
                return _done("error", {"kind": "unavailable", "reason": listed.failure()}, listed.failure())
            entries.append((owned, listed.unwrap()))
        wrote = yield from apply_ownership(disc)
        if isinstance(wrote, Failure):
            return _done("error", {"kind": "unavailable", "reason": wrote.failure()}, wrote.failure())
        held, _junk = attribute(entries, [run])
        if run.run_id in held and run.pid is not None:
            pane, wid = held[run.run_id]
            pulse = yield from probe(request.session, pane.pane_id)
            if pulse.pulse != "dead":
                existing = _opened_json(Tracked(pane.pane_id, _label_of(run), run.pid, wid))
                return _done("ok", {**existing, "reused": True, "pulse": pulse.pulse})
        surface = Surface(
            disc.owned, {o.workspace_id: [p.pane_id for p in panes] for o, panes in entries}, disc.listed
        )
    opened = yield from open_pane(request.session, run, request.follower, surface)
    if isinstance(opened, Unavailable):
        return _done("error", _opened_json(opened), opened.reason)
    yield from store(
        "herdr.run.set_pane", {"run_id": run.run_id, "pane_id": opened.pane_id, "pane_label": opened.label}
    )
    return _done("ok", _opened_json(opened))


def retire_program(request: RetireRequest) -> Program:
    done = yield from _locked(request.lock_path, _retire_body(request), {"kind": "failed"})
    return _with_ok(done)


def _retire_body(request: RetireRequest) -> Program:
    loaded = yield from _load_run(request.run_id, request.session)
    if isinstance(loaded, Failure):
        return _done("refused", {"kind": "none", "reason": loaded.failure()}, loaded.failure())
    run = loaded.unwrap()
    released = yield from release_orphaned(request.session, run.pane_id, run.pane_label, run.run_id, run.project)
    if released.kind in ("released", "none") and run.pane_id is not None:
        yield from store("herdr.run.clear_pane", {"run_id": run.run_id})
    status: Status = "ok" if released.kind in ("released", "none") else (
        "refused" if released.kind == "unowned" else "error"
    )
    return _done(status, released.to_json(), released.reason)


def release_program(request: ReleaseRequest) -> Program:
    released = yield from release_orphaned(
        request.session, request.pane_id, request.pane_label, request.run_id, request.project
    )
    status: Status = "ok" if released.kind in ("released", "none") else (
        "refused" if released.kind == "unowned" else "error"
    )
    return _done(status, released.to_json(), released.reason)


__all__ = [
    "DEFAULT_SESSION",
    "PANE_REATTEMPT_MAX",
    "WORKER_PANE_SOURCE",
    "WORKER_WORKSPACE_TOKEN",
    "EnsureRequest",
    "OpenRequest",
    "ReconcileRequest",
    "ReleaseRequest",
    "RetireRequest",
    "ensure_program",
    "open_program",
    "reconcile_program",
    "release_program",
    "retire_program",
]


# ------------------------------------------------------------------------------------------ status


@frozen(kw_only=True)
class StatusRequest:
    session: str = DEFAULT_SESSION
    managed: tuple[str, ...] = ()


def status_program(request: StatusRequest) -> Program:
    """Read-only: the store's runs, the owned workspaces herdr lists, what each pane is, and the
    follower pulse of every held pane — exactly what a reconcile pass would read, and no write."""
    answer = yield from store("list.herdr.runs", {"session": request.session})
    runs_r = parse_runs(answer)
    if isinstance(runs_r, Failure):
        return _done("error", {"ok": False, "reason": runs_r.failure()}, runs_r.failure())
    runs = runs_r.unwrap()
    scope = sorted(set(request.managed) | {r.project for r in runs})
    entries: list[tuple[Owned, tuple[PaneFact, ...]]] = []
    disc = Discovery((), (), ())
    if scope:
        found = yield from discover(request.session, scope)
        if isinstance(found, Failure):
            return _done("error", {"ok": False, "reason": found.failure()}, found.failure())
        disc = found.unwrap()
        for owned in disc.owned:
            listed = yield from list_panes(request.session, owned.workspace_id)
            if isinstance(listed, Failure):
                return _done("error", {"ok": False, "reason": listed.failure()}, listed.failure())
            entries.append((owned, listed.unwrap()))
    held, junk = attribute(entries, runs)
    holder = {pane.pane_id: run_id for run_id, (pane, _w) in held.items()}
    pulses: dict[str, Pulse] = {}
    for run_id, (pane, _w) in held.items():
        pulses[run_id] = yield from probe(request.session, pane.pane_id)
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
    return _done("ok", {"ok": True, "session": request.session, "runs": out_runs, "workspaces": workspaces,
                        "staleRecords": forgotten})
