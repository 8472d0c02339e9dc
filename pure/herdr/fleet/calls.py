"""The herdr reads and store accesses the programs are made of (what changes herdr: pure/herdr/fleet/owned.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from returns.result import Failure, Result, Success

from pure.herdr.fleet.common import WORKER_PANE_SOURCE
from pure.herdr.liveness import Pulse, follower_pulse
from pure.herdr.parse import (
    PaneFact,
    failure_text,
    parse_pane_list,
    parse_process_info,
    succeeded,
)
from pure.herdr.records import store_step
from pure.model import JsonResult, Proc, Run
from pure.program import Gen, expect

# ---------------------------------------------------------------------------------------- primitives


def herdr_step(session: str, *args: str) -> Run:
    """One herdr call that only reads. ``--session`` goes first, where herdr strips it before
    parsing the verb. A call that changes something is built in ``pure/herdr/fleet/owned.py``."""
    return Run(tool="herdr", args=("--session", session, *args))


def herdr(session: str, *args: str) -> Gen[Proc]:
    proc = yield from expect(herdr_step(session, *args), Proc)
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
