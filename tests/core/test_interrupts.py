"""Interrupts (docs/design-notes.md, "Interrupts"): ``Driver.interrupt`` throws ``Interrupted`` at the
pending step, held interrupts wait for the end of the hold, the shell delivers the first signal at the
next step boundary and records it, and replay interrupts where the log says."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from attrs import frozen

from pure import model as m
from pure import operations
from pure.program import INTERRUPTED, Driver, Gen, Interrupted, Program, expect, uninterrupted
from shell.run.interrupts import Interrupts
from shell.run.loop import AuditLog, replay, run_program

WRITE = [m.WriteFile(path=f"/x/{n}", content="") for n in range(6)]
OK = m.Ack(ok=True)


def writes(undo: bool) -> Program:
    """Writes 0..5; interrupted, it removes what it wrote (``undo``) or lets the interrupt end it."""
    written: list[str] = []
    try:
        for step in WRITE:
            yield from expect(step, m.Ack)
            written.append(step.path)
    except Interrupted:
        if not undo:
            raise
        for path in reversed(written):
            yield from expect(m.RemovePath(path=path), m.Ack)
        return m.Done(outcome=m.Outcome(status="error", message=INTERRUPTED))
    return m.Done(outcome=m.Outcome(status="ok"))


def drive(program: Program, *, interrupt_before: int) -> tuple[list[m.Step], m.Done]:
    driver = Driver(lambda: program)
    steps: list[m.Step] = []
    interrupted = False
    while isinstance(decision := driver.decision(), m.Next):
        if len(steps) == interrupt_before and not interrupted:
            interrupted = True
            driver.interrupt()
            continue
        (step,) = decision.steps
        steps.append(step)
        driver.feed(step, OK)
    return steps, decision


def test_an_interrupt_is_thrown_at_the_pending_step_which_is_never_executed() -> None:
    steps, done = drive(writes(undo=True), interrupt_before=2)
    assert steps == [*WRITE[:2], m.RemovePath(path="/x/1"), m.RemovePath(path="/x/0")]
    assert done.outcome.message == INTERRUPTED


def test_a_program_that_does_not_catch_it_ends_interrupted_with_its_changes() -> None:
    steps, done = drive(writes(undo=False), interrupt_before=3)
    assert steps == WRITE[:3]
    assert done.outcome.status == "error" and done.outcome.message == INTERRUPTED
    result = done.outcome.result
    assert isinstance(result, dict) and result["error"] == INTERRUPTED and len(result["changesMade"]) == 3


def held(fail_inside: bool) -> Program:
    written: list[int] = []

    def pair() -> Gen[None]:
        yield from expect(WRITE[1], m.Ack)
        yield from expect(WRITE[2], m.Ack)
        if fail_inside:
            raise ValueError("failed inside the hold")

    try:
        yield from expect(WRITE[0], m.Ack)
        try:
            yield from uninterrupted(pair())
        except ValueError:
            written.append(-1)
        yield from expect(WRITE[3], m.Ack)
    except Interrupted:
        yield from expect(m.RemovePath(path="/undo"), m.Ack)
        return m.Done(outcome=m.Outcome(status="error", message=INTERRUPTED))
    return m.Done(outcome=m.Outcome(status="ok"))


@pytest.mark.parametrize("fail_inside", [False, True])
def test_a_held_interrupt_waits_for_the_end_of_the_hold(fail_inside: bool) -> None:
    """Asked for between the two steps of the hold: both run, and the interrupt is thrown at the first
    step after it, also when the held part failed."""
    steps, done = drive(held(fail_inside), interrupt_before=2)
    assert steps == [WRITE[0], WRITE[1], WRITE[2], m.RemovePath(path="/undo")]
    assert done.outcome.message == INTERRUPTED


@frozen
class WritesRequest:
    undo: bool


operations.register("test.writes", WritesRequest, lambda request: writes(request.undo))


def undo_then_release() -> Program:
    """A failure's undo, held and answering interrupts, then the release of a lock."""
    def undo() -> Gen[None]:
        yield from expect(m.RemovePath(path="/x/0"), m.Ack)
        yield from expect(m.RemovePath(path="/x/1"), m.Ack)

    yield from expect(WRITE[0], m.Ack)
    yield from uninterrupted(undo(), answers=True)
    yield from expect(m.ReleaseLock(path="/lock"), m.Ack)
    return m.Done(outcome=m.Outcome(status="error", message="failed and undone"))


def test_an_interrupt_during_an_undo_is_answered_by_it() -> None:
    steps, done = drive(undo_then_release(), interrupt_before=2)
    assert steps == [WRITE[0], m.RemovePath(path="/x/0"), m.RemovePath(path="/x/1"), m.ReleaseLock(path="/lock")]
    assert done.outcome.message == "failed and undone"


class SignalOnStep:
    """An executor that sends this process ``sig`` while it executes step number ``at``."""

    def __init__(self, at: int, sig: signal.Signals, times: int = 1) -> None:
        self.at, self.sig, self.times, self.count = at, sig, times, 0

    def execute(self, step: m.Step) -> m.Observation:
        self.count += 1
        if self.count == self.at:
            for _ in range(self.times):
                os.kill(os.getpid(), self.sig)
        return OK


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_the_shell_delivers_the_first_signal_at_the_next_step_boundary_and_replay_follows(
        sig: signal.Signals, tmp_path: Path) -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    audit = AuditLog(tmp_path / "run.jsonl")
    audit.write({"type": "start", "format_version": m.FORMAT_VERSION, "operation": "test.writes",
                 "request": {"undo": True}})
    done, journal = run_program(lambda: writes(undo=True), SignalOnStep(at=3, sig=sig), audit=audit)
    audit.close()
    # step 3 (WRITE[2]) finished; WRITE[3] was never executed: the program undid 2, 1, 0
    assert [e.step for e in journal] == [*WRITE[:3], *(m.RemovePath(path=f"/x/{n}") for n in (2, 1, 0))]
    result = done.outcome.result
    assert done.outcome.message == INTERRUPTED and isinstance(result, dict) and result["interrupted"] is True
    assert {s: signal.getsignal(s) for s in before} == before  # the run's handlers are gone again
    assert '"type": "interrupt"' in (tmp_path / "run.jsonl").read_text().replace('"type":"interrupt"',
                                                                                  '"type": "interrupt"')
    report = replay(tmp_path / "run.jsonl")
    assert report.ok and report.steps == 6, report


def test_a_second_sigint_stops_at_once() -> None:
    with pytest.raises(KeyboardInterrupt):
        run_program(lambda: writes(undo=True), SignalOnStep(at=2, sig=signal.SIGINT, times=2))


def test_an_ignored_signal_stays_ignored() -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with Interrupts() as interrupts:
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGHUP)
            assert interrupts.requested is None
    finally:
        signal.signal(signal.SIGHUP, previous)
