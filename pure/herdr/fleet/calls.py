"""The herdr calls and store accesses the programs are made of, and the discovery of owned workspaces."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from returns.result import Failure, Result, Success

from pure.herdr.fleet.common import (
    WORKER_PANE_SOURCE,
    WORKER_WORKSPACE_TOKEN,
    Discovery,
    Owned,
    workspace_label,
)
from pure.herdr.liveness import Pulse, follower_pulse
from pure.herdr.parse import (
    PaneFact,
    failure_text,
    parse_pane_list,
    parse_process_info,
    parse_workspace_list,
    succeeded,
)
from pure.herdr.records import parse_recorded, store_step
from pure.model import JsonResult, Proc, Run
from pure.program import Gen, announce, expect

# ---------------------------------------------------------------------------------------- primitives


def herdr_step(session: str, *args: str, mutates: bool = False) -> Run:
    """One herdr call. ``--session`` goes first, where herdr strips it before parsing the verb."""
    return Run(tool="herdr", args=("--session", session, *args), mutates=mutates)


def herdr(session: str, *args: str, mutates: bool = False) -> Gen[Proc]:
    proc = yield from expect(herdr_step(session, *args, mutates=mutates), Proc)
    return proc


def pane_list_step(session: str, workspace_id: str) -> Run:
    return herdr_step(session, "pane", "list", "--workspace", workspace_id)


def probe_step(session: str, pane_id: str) -> Run:
    return herdr_step(session, "pane", "process-info", "--pane", pane_id)


def store(action: str, payload: Mapping[str, Any]) -> Gen[JsonResult]:
    result = yield from expect(store_step(action, payload), JsonResult)
    return result


def store_write(action: str, payload: Mapping[str, Any]) -> Gen[Result[None, str]]:
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
        done = yield from store_write(
            "herdr.workspace.remember", {"session": disc.session, "project": project, "workspace_id": wid}
        )
        if isinstance(done, Failure):
            return done
    for project, wid in disc.forget:
        done = yield from store_write(
            "herdr.workspace.forget", {"session": disc.session, "project": project, "workspace_id": wid}
        )
        if isinstance(done, Failure):
            return done
    return Success(None)


def list_all_panes(session: str, owned: Sequence[Owned]) -> Gen[Result[list[tuple[Owned, tuple[PaneFact, ...]]], str]]:
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


def list_panes(session: str, workspace_id: str) -> Gen[Result[tuple[PaneFact, ...], str]]:
    proc = yield from expect(pane_list_step(session, workspace_id), Proc)
    if not succeeded(proc):
        return Failure(f"herdr pane list failed: {failure_text(proc)}")
    return parse_pane_list(proc.stdout, WORKER_PANE_SOURCE)


def probe(session: str, pane_id: str) -> Gen[Pulse]:
    """``paneFollowerAlive``: a failed or unreadable probe is ``unknown``, never dead."""
    proc = yield from expect(probe_step(session, pane_id), Proc)
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
