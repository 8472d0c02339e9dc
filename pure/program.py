"""Resumable planning: operations are written as generators and driven by ``decide``.

An operation is a pure generator that yields one :class:`~pure.model.Step` at a time, receives the
:class:`~pure.model.Observation` the shell made of it, and finally returns a
:class:`~pure.model.Done`. ``decide(program, journal)`` replays the journal into a fresh generator
and answers ``Next(step)`` for the first step the journal does not cover, or the ``Done`` the
program returned. Because the generator is pure, replaying a journal always reaches the same point,
so a run can be resumed, re-planned after a surprise, replayed from its audit log, or frozen as a
golden. ``Driver`` does the same incrementally (O(1) per step) for the live loop.

``decide`` is total: a program that raises, a journal that diverges from what the program asks for,
or an observation of the wrong kind all end in a typed ``Done`` with status ``error``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TypeVar

from pure.model import (
    Ack,
    AppendFile,
    Done,
    Entry,
    FileData,
    JsonResult,
    JsonValue,
    Listing,
    MakeDir,
    Next,
    Observation,
    Outcome,
    Proc,
    RemovePath,
    Run,
    Step,
    Store,
    Value,
    WriteFile,
)

T = TypeVar("T")
Obs = TypeVar("Obs", Proc, FileData, Ack, Listing, Value, JsonResult)

Gen = Generator[Step, Observation, T]
Program = Generator[Step, Observation, Done]
ProgramFactory = Callable[[], Program]


class PlanError(Exception):
    """Raised inside a program to end it with a typed outcome (caught by the driver)."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


class ObservationMismatch(Exception):
    """The observation fed back does not fit the step (wrong kind)."""


def fail(message: str, status: str = "error", result: object | None = None) -> PlanError:
    """Build the exception that ends a program with ``{"ok": false, "error": message}``."""
    payload: object = result if result is not None else {"ok": False, "error": message}
    return PlanError(Outcome(status=status, result=JsonValue(payload), message=message))  # type: ignore[arg-type]


def expect(step: Step, kind: type[Obs]) -> Gen[Obs]:
    """Yield ``step`` and return its observation, which must be of ``kind``."""
    observation = yield step
    if not isinstance(observation, kind):
        raise ObservationMismatch(
            f"step {step.op} expects a {kind.__name__} observation, got {type(observation).__name__}"
        )
    return observation


def is_mutation(step: Step) -> bool:
    """Whether a step changes the world (what a dry run predicts instead of doing)."""
    if isinstance(step, Run):
        return step.mutates
    if isinstance(step, Store):
        return not step.action.startswith(("get", "list", "read", "load"))
    return isinstance(step, (WriteFile, AppendFile, RemovePath, MakeDir))


def _error_done(message: str, changes: Sequence[Step] = ()) -> Done:
    """A program that could not finish. When it had already changed things, say exactly what, so
    nobody is told (or assumes) that nothing happened."""
    result: dict[str, object] = {"ok": False, "error": message}
    if changes:
        from pure.wire import unstructure

        result["changesMade"] = [unstructure(step) for step in changes]
    return Done(outcome=Outcome(status="error", result=JsonValue(result), message=message))


class Driver:
    """Advance one program step by step. Deterministic: same observations, same steps."""

    def __init__(self, factory: ProgramFactory) -> None:
        self._gen: Program | None = None
        self._factory = factory
        self._pending: Step | None = None
        self._done: Done | None = None
        self._changes: list[Step] = []
        self._start()

    def _finish(self, done: Done) -> None:
        self._done = done
        self._pending = None
        if self._gen is not None:
            self._gen.close()
            self._gen = None

    def _guard(self, advance: Callable[[Program], Step]) -> None:
        gen = self._gen
        if gen is None:
            return
        try:
            self._pending = advance(gen)
        except StopIteration as stop:
            value = stop.value
            self._finish(value if isinstance(value, Done) else _error_done("program_returned_no_decision"))
        except PlanError as err:
            self._finish(Done(outcome=err.outcome))
        except ObservationMismatch as err:
            self._finish(_error_done(f"journal_mismatch:{err}", self._changes))
        except Exception as err:  # noqa: BLE001 - totality: a bug becomes a typed outcome
            self._finish(_error_done(f"internal_error:{type(err).__name__}:{err}", self._changes))

    def _start(self) -> None:
        try:
            self._gen = self._factory()
        except PlanError as err:
            self._finish(Done(outcome=err.outcome))
            return
        except Exception as err:  # noqa: BLE001
            self._finish(_error_done(f"internal_error:{type(err).__name__}:{err}"))
            return
        self._guard(next)

    def decision(self) -> Next | Done:
        if self._done is not None:
            return self._done
        assert self._pending is not None
        return Next(steps=(self._pending,))

    def feed(self, step: Step, observation: Observation) -> None:
        """Feed the observation of ``step``; ``step`` must be the pending one."""
        if self._done is not None:
            self._finish(_error_done("journal_divergence:entry_after_done"))
            return
        if step != self._pending:
            self._finish(_error_done(f"journal_divergence:expected {self._pending!r}, journal has {step!r}"))
            return
        if is_mutation(step):
            self._changes.append(step)
        self._guard(lambda gen: gen.send(observation))


def decide(factory: ProgramFactory, journal: Sequence[Entry]) -> Next | Done:
    """The pure planner: what to do next, given everything observed so far."""
    driver = Driver(factory)
    for entry in journal:
        driver.feed(entry.step, entry.observation)
    return driver.decision()
