"""``herdr run start`` and ``herdr run settle`` as programs, so that they plan, dry-run, save and
apply like every other mutating command.

Each reads the run's record (``get.herdr.run``, the store protocol of ``pure/herdr/records.py``) and
then asks for one store change: ``herdr.run.start`` or ``herdr.run.settle``. Those two actions are
answered by ``shell/cli/herdr.py`` (``store_handler``) through ``HerdrStore.start_run`` / ``settle``,
which check again inside their transaction, so a concurrent change is still refused.

The programs are pure (steps in, observations out) and could live in ``pure/herdr/``; they are
registered with ``pure.operations`` when this module is imported (``shell/cli/operation.py``
``load_operations``).
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from pure import model as m
from pure import operations
from pure.convert import OMIT_NONE
from pure.herdr.fleet import effects
from pure.program import Program, expect, fail


@frozen(kw_only=True)
class RunStartRequest:
    session: str
    machine: str | None = field(default=None, metadata=OMIT_NONE)  # a saved herdr machine (session "")
    run_id: str
    project: str
    issue: int
    attempt: int
    pid: int | None = None
    session_file: str | None = None


@frozen(kw_only=True)
class RunSettleRequest:
    run_id: str


def _refuse(reason: str) -> Exception:
    return fail(reason, status="refused")


def _done(result: dict[str, Any]) -> m.Done:
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))


def _record(run_id: str) -> Any:
    got = yield from expect(m.Store(action="get.herdr.run", payload=m.JsonValue({"run_id": run_id})), m.JsonResult)
    if not got.ok:
        raise fail(got.error)
    return got.value


def conflict(run_id: str, record: dict[str, Any], req: RunStartRequest) -> str | None:
    """Why ``req`` may not restart the recorded run (``HerdrStore.start_run``'s rule), or None."""
    same = (record.get("session"), record.get("project"), record.get("issue"), record.get("attempt"),
            record.get("machine")) == (req.session, req.project, req.issue, req.attempt, req.machine)
    if same:
        return None
    machine = record.get("machine")
    was = f"herdr machine {machine!r}" if machine else f"herdr session {record.get('session')!r}"
    now = f"machine {req.machine!r}" if req.machine else repr(req.session)
    return (f"run {run_id!r} is already {record.get('project')} #{record.get('issue')} attempt "
            f"{record.get('attempt')} in {was}; refusing to rewrite it as "
            f"{req.project} #{req.issue} attempt {req.attempt} in {now} (use a new run id)")


def run_start(req: RunStartRequest) -> Program:
    record = yield from _record(req.run_id)
    if isinstance(record, dict):
        problem = conflict(req.run_id, record, req)
        if problem is not None:
            raise _refuse(problem)
    payload = {"run_id": req.run_id, "project": req.project, "issue": req.issue, "attempt": req.attempt,
               "pid": req.pid, "session_file": req.session_file, "session": req.session,
               **({"machine": req.machine} if req.machine is not None else {})}
    started = effects.run_started(req.run_id, req.project, req.issue, req.attempt)
    done = yield from expect(m.Store(action="herdr.run.start", payload=m.JsonValue(payload), effect=started),
                             m.JsonResult)
    if not done.ok:  # a run recorded otherwise since the read above: the store answers {"conflict": why}
        conflicted = isinstance(done.value, dict) and "conflict" in done.value
        raise _refuse(done.error) if conflicted else fail(done.error)
    return _done({"ok": True, "runId": req.run_id})


def run_settle(req: RunSettleRequest) -> Program:
    record = yield from _record(req.run_id)
    if record is None:
        raise _refuse(f"no run {req.run_id!r} in the store")
    done = yield from expect(m.Store(action="herdr.run.settle", payload=m.JsonValue({"run_id": req.run_id}),
                                     effect=effects.run_settled(req.run_id)), m.JsonResult)
    if not done.ok:
        raise fail(done.error)
    if done.value == m.JsonValue(False):
        raise _refuse(f"no run {req.run_id!r} in the store")
    return _done({"ok": True, "runId": req.run_id})


operations.register("herdr.run_start", RunStartRequest, run_start)
operations.register("herdr.run_settle", RunSettleRequest, run_settle)
