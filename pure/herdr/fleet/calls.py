"""The herdr reads and store accesses the programs are made of (what changes herdr: pure/herdr/fleet/owned.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from returns.result import Failure, Result, Success

from pure.herdr.fleet.vocabulary import WORKER_PANE_SOURCE, Target
from pure.herdr.liveness import Pulse, follower_pulse
from pure.herdr.parse import (
    PaneFact,
    failure_text,
    parse_pane_list,
    parse_process_info,
    succeeded,
    version_skew,
)
from pure.herdr.records import store_step
from pure.model import Effect, JsonResult, Proc, Run
from pure.program import Gen, expect, fail

# ---------------------------------------------------------------------------------------- primitives


def herdr_step(session: Target, *args: str) -> Run:
    """One herdr call that only reads. Its target (``Target.argv``: ``--session S`` or ``--machine
    M``, never both, which herdr 0.9.1 refuses) goes first, where herdr strips it before parsing the
    verb. A call that changes something is built in ``pure/herdr/fleet/owned.py``, from the same
    ``Target.argv``."""
    return Run(tool="herdr", args=(*session.argv(), *args))


def answered(step: Run) -> Gen[Proc]:
    """Every herdr answer passes here: a version skew (``pure/herdr/parse.py`` ``version_skew``)
    ends the program at once, status ``error``, with no debt (docs/herdr-fleet.md, "Herdr 0.9")."""
    proc = yield from expect(step, Proc)
    skew = version_skew(proc)
    if skew is not None:
        raise fail(skew.message(), "error", {"ok": False, "error": skew.message(), "versionSkew": skew.to_json()})
    return proc


def herdr(session: Target, *args: str) -> Gen[Proc]:
    proc = yield from answered(herdr_step(session, *args))
    return proc


def pane_list_step(session: Target, workspace_id: str) -> Run:
    return herdr_step(session, "pane", "list", "--workspace", workspace_id)


def probe_step(session: Target, pane_id: str) -> Run:
    return herdr_step(session, "pane", "process-info", "--pane", pane_id)


def store(action: str, payload: Mapping[str, Any], effect: Effect | None = None) -> Gen[JsonResult]:
    """A store access; a write states its ``effect`` (``pure/herdr/fleet/effects.py``)."""
    result = yield from expect(store_step(action, payload, effect), JsonResult)
    return result


def store_write(action: str, payload: Mapping[str, Any], effect: Effect) -> Gen[Result[None, str]]:
    result = yield from store(action, payload, effect)
    if not result.ok:
        return Failure(f"store: {action} failed: {result.error or 'unknown error'}")
    return Success(None)


def list_panes(session: Target, workspace_id: str) -> Gen[Result[tuple[PaneFact, ...], str]]:
    proc = yield from answered(pane_list_step(session, workspace_id))
    if not succeeded(proc):
        return Failure(f"herdr pane list failed: {failure_text(proc)}")
    return parse_pane_list(proc.stdout, WORKER_PANE_SOURCE)


def probe(session: Target, pane_id: str) -> Gen[Pulse]:
    """``paneFollowerAlive``: a failed or unreadable probe is ``unknown``, never dead."""
    proc = yield from answered(probe_step(session, pane_id))
    if not succeeded(proc):
        return Pulse("unknown", f"herdr pane process-info failed: {failure_text(proc)}")
    info = parse_process_info(proc.stdout, pane_id)
    if isinstance(info, Failure):
        return Pulse("unknown", info.failure())
    return follower_pulse(info.unwrap())
