"""Resumable planning: operations are written as generators and driven by ``decide``.

An operation is a pure generator that yields one :class:`~pure.model.Step` at a time, receives the
:class:`~pure.model.Observation` the shell made of it, and finally returns a
:class:`~pure.model.Done`. It may also yield an :class:`Ahead`, which names reads it will ask for
later (so that the shell can answer them together): that is no step, and no decision shows it.
``decide(program, journal)`` replays the journal into a fresh generator and answers ``Next(step)``
for the first step the journal does not cover, or the ``Done`` the program returned. Because the
generator is pure, replaying a journal always reaches the same point, so a run can be resumed,
re-planned after a surprise, replayed from its audit log, or frozen as a golden. ``Driver`` does the
same incrementally (O(1) per step) for the live loop.

``decide`` is total: a program that raises, a journal that diverges from what the program asks for,
or an observation of the wrong kind all end in a typed ``Done`` with status ``error``, whose result
is ``{"ok": false, "error": CODE, "problem": {...}}`` with one of the problem classes below (and
``changesMade`` when the program had already changed things). The first entry that does not fit
decides; entries after a program that had finished make ``journal_after_done``.

An interrupt (SIGINT, SIGTERM, SIGHUP while the shell runs a program) is no step either:
``Driver.interrupt`` throws :class:`Interrupted` into the program at its pending step instead of
executing that step. A program that created something catches it and undoes what it created, as on
any failure (``pure/omx/scale_up/program.py``, ``pure/omx/respawn.py``); one that does not ends
``interrupted`` (status ``error``, with ``changesMade``). The audit log records where it came, so a
replay does the same (``shell/run/loop.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Literal, TypeVar, Union, cast

import attrs
from attrs import frozen

from pure.convert import unstructure
from pure.model import (
    Ack,
    AppendFile,
    Debt,
    Done,
    Effect,
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


@frozen(kw_only=True)
class Ahead:
    """Not a step: read-only steps a program will ask for later, in this order, one at a time as
    always, whatever their answers are — unless it ends, or gives the rest up after a failure, first;
    other steps may come between them.

    The shell may answer them ahead of time, several at once (``shell/run/read_ahead.py``),
    and hands each answer over when the program asks for that step. An ``Ahead`` is never journaled
    and never part of a decision: ``decide``, replay, dry runs and goldens see exactly the steps
    they would see without it. Yield one with :func:`announce`."""

    steps: tuple[Step, ...]


@frozen(kw_only=True)
class Hold:
    """Not a step: from ``Hold(on=True)`` until ``Hold(on=False)`` an interrupt waits, and is thrown
    at the first step the program yields after it — unless the end of the hold says that what it did
    ``answered`` the interrupt. Yielded by :func:`uninterrupted`."""

    on: bool
    answered: bool = False


Gen = Generator[Union[Step, Ahead, Hold], Observation, T]
Program = Generator[Union[Step, Ahead, Hold], Observation, Done]
ProgramFactory = Callable[[], Program]
# What the program gets back for an Ahead (it is no question, so there is no answer to give).
_NO_ANSWER = Ack(ok=True)


class PlanError(Exception):
    """Raised inside a program to end it with a typed outcome and the debt it leaves (caught by the
    driver). Build one with :func:`fail`, or from a returned :class:`Failed`."""

    def __init__(self, outcome: Outcome, debt: Sequence[Debt] = ()) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome
        self.debt = tuple(debt)


FailedStatus = Literal["refused", "debt", "error"]


@frozen
class Failed:
    """A failure as a value, typed where it happens: the status it ends the operation with and its
    message, ``{"ok": false, "error": message}`` on the wire. For a step whose caller decides what
    the failure means (e.g. a debt reconcile run before or after a scale-down); :meth:`error` turns
    it into the :class:`PlanError` that ends the program."""

    status: FailedStatus
    message: str

    def error(self, debt: Sequence[Debt] = ()) -> PlanError:
        return fail(self.message, self.status, debt=debt)


class ObservationMismatch(Exception):
    """The observation fed back does not fit the step (wrong kind); names are wire tags."""

    def __init__(self, op: str, expected_kind: str, got_kind: str) -> None:
        super().__init__(f"step {op} expects a {expected_kind} observation, got {got_kind}")
        self.op = op
        self.expected_kind = expected_kind
        self.got_kind = got_kind


@frozen(kw_only=True)
class JournalDivergence:
    """Journal entry ``at`` (0-based) holds a step other than the one the program asks for:
    ``field`` is ``op`` when the ops differ, else the first field (in code-point order of the
    names) whose value differs."""

    code: Literal["journal_divergence"] = "journal_divergence"
    at: int
    expected_op: str
    got_op: str
    field: str


@frozen(kw_only=True)
class JournalAfterDone:
    """The program had already finished before journal entry ``at``."""

    code: Literal["journal_after_done"] = "journal_after_done"
    at: int
    got_op: str


@frozen(kw_only=True)
class JournalMismatch:
    """Journal entry ``at`` answers step ``op`` with an observation of kind ``got_kind``; the
    program needs ``expected_kind``."""

    code: Literal["journal_mismatch"] = "journal_mismatch"
    at: int
    op: str
    expected_kind: str
    got_kind: str


@frozen(kw_only=True)
class InternalError:
    """A bug in the planner (the message names it; never expected from any input)."""

    code: Literal["internal_error"] = "internal_error"


@frozen(kw_only=True)
class NoDecision:
    """The program ended without returning a decision (a bug)."""

    code: Literal["program_returned_no_decision"] = "program_returned_no_decision"


DecideProblem = Union[JournalDivergence, JournalAfterDone, JournalMismatch, InternalError, NoDecision]


def _tag(cls: type[object], name: str) -> str:
    return str(attrs.fields_dict(cls)[name].default)  # type: ignore[arg-type]


class Interrupted(Exception):
    """The person running panefleet asked it to stop: thrown into a program at its pending step."""


INTERRUPTED = "interrupted"  # the message of a run that ended because it was interrupted


def fail(message: str, status: str = "error", result: object | None = None, debt: Sequence[Debt] = ()) -> PlanError:
    """Build the exception that ends a program with ``{"ok": false, "error": message}``."""
    payload: object = result if result is not None else {"ok": False, "error": message}
    return PlanError(Outcome(status=status, result=JsonValue(payload), message=message), debt)  # type: ignore[arg-type]


def refused(message: str) -> PlanError:
    """The failure of an argument or a state that is refused before anything was changed."""
    return fail(message, status="refused")


def expect(step: Step, kind: type[Obs]) -> Gen[Obs]:
    """Yield ``step`` and return its observation, which must be of ``kind``."""
    observation = yield step
    if not isinstance(observation, kind):
        got = getattr(observation, "kind", None)
        raise ObservationMismatch(step.op, _tag(kind, "kind"), got if isinstance(got, str) else "none")
    return observation


def announce(steps: Iterable[Step]) -> Gen[None]:
    """Say which reads come next (:class:`Ahead`); nothing is yielded for none. Only reads may be
    announced: a mutation in ``steps`` ends the program as an internal error."""
    ahead = tuple(steps)
    if ahead:
        yield Ahead(steps=ahead)


def uninterrupted(action: Gen[T], *, answers: bool = False) -> Gen[T]:
    """Run ``action`` with interrupts held (:class:`Hold`): for steps that must not be parted, such as
    a new pane's split and the record that pins it (``pure/omx/scale_up/worker.py``). ``answers``: what
    ``action`` does is the answer to an interrupt that came before its end — an undo, or a change
    that is finished rather than parted — so none is thrown after it."""
    yield Hold(on=True)
    try:
        result = yield from action
    except GeneratorExit:  # the driver discarded the program: nothing can be yielded now
        raise
    except BaseException:
        yield Hold(on=False, answered=answers)
        raise
    yield Hold(on=False, answered=answers)
    return result


def changing(what: Effect, action: Gen[T]) -> Gen[T]:
    """Run ``action``, every change step of it that states no effect of its own stating ``what``: a
    part of a program that changes one thing (a worker's folder, script and intent) says so once. An
    interrupt or a driver's close reaches ``action`` as it would without this."""
    try:
        item = next(action)
    except StopIteration as stop:
        return cast(T, stop.value)
    while True:
        if isinstance(item, (Run, WriteFile, AppendFile, RemovePath, MakeDir, Store)) and is_mutation(item) \
                and item.effect is None:
            item = attrs.evolve(item, effect=what)
        try:
            answer = yield item
        except GeneratorExit:
            action.close()
            raise
        except BaseException as error:  # noqa: BLE001 - an interrupt, passed on to ``action``
            try:
                item = action.throw(error)
            except StopIteration as stop:
                return cast(T, stop.value)
        else:
            try:
                item = action.send(answer)
            except StopIteration as stop:
                return cast(T, stop.value)


def is_mutation(step: Step) -> bool:
    """Whether a step changes the world (what a dry run predicts instead of doing)."""
    if isinstance(step, Run):
        return step.mutates
    if isinstance(step, Store):
        return not step.action.startswith(("get", "list", "read", "load"))
    return isinstance(step, (WriteFile, AppendFile, RemovePath, MakeDir))


def _error_done(problem: DecideProblem, changes: Sequence[Step] = (), message: str = "") -> Done:
    """A program that could not finish. When it had already changed things, say exactly what, so
    nobody is told (or assumes) that nothing happened. ``message`` is the problem's code, except for
    an internal error, whose message names the exception."""
    message = message or problem.code
    result: dict[str, object] = {"ok": False, "error": message, "problem": unstructure(problem)}
    if changes:
        result["changesMade"] = [unstructure(step) for step in changes]
    return Done(outcome=Outcome(status="error", result=JsonValue(result), message=message))


def _differing_field(expected: Step, got: Step) -> str:
    if expected.op != got.op:
        return "op"
    want, have = unstructure(expected), unstructure(got)
    return next((key for key in sorted(want) if want[key] != have.get(key)), "op")


class Driver:
    """Advance one program step by step. Deterministic: same observations, same steps."""

    def __init__(self, factory: ProgramFactory) -> None:
        self._gen: Program | None = None
        self._factory = factory
        self._pending: Step | None = None
        self._ahead: list[Step] = []  # announced reads not yet handed to the shell (take_ahead)
        self._done: Done | None = None
        self._changes: list[Step] = []
        self._at = 0  # index of the journal entry being fed
        self._settled = False  # the decision can no longer change (a journal problem was found)
        self._holds = 0  # open Hold(on=True) of the program
        self._deferred = False  # an interrupt that waits for the holds to end
        self._start()

    def _finish(self, done: Done, *, settled: bool = False) -> None:
        self._done = done
        self._settled = settled
        self._pending = None
        if self._gen is not None:
            self._gen.close()
            self._gen = None

    def _guard(self, advance: Callable[[Program], Step | Ahead | Hold]) -> None:
        gen = self._gen
        if gen is None:
            return
        try:
            item = advance(gen)
            while True:
                if isinstance(item, Ahead):
                    changes = [step.op for step in item.steps if is_mutation(step)]
                    if changes:
                        raise ValueError(f"announced a change ({changes[0]}): only reads can be announced")
                    self._ahead.extend(item.steps)
                    item = gen.send(_NO_ANSWER)
                elif isinstance(item, Hold):
                    self._holds += 1 if item.on else -1
                    self._deferred = self._deferred and not item.answered
                    item = gen.send(_NO_ANSWER)
                elif self._deferred and self._holds == 0:
                    self._deferred = False
                    item = gen.throw(Interrupted())
                else:
                    break
            self._pending = item
        except StopIteration as stop:
            value = stop.value
            self._finish(value if isinstance(value, Done) else _error_done(NoDecision()))
        except PlanError as err:
            self._finish(Done(outcome=err.outcome, debt=err.debt))
        except Interrupted:
            result: dict[str, object] = {"ok": False, "error": INTERRUPTED}
            if self._changes:
                result["changesMade"] = [unstructure(step) for step in self._changes]
            self._finish(Done(outcome=Outcome(status="error", result=JsonValue(result), message=INTERRUPTED)))
        except ObservationMismatch as err:
            problem = JournalMismatch(at=self._at - 1, op=err.op, expected_kind=err.expected_kind, got_kind=err.got_kind)
            self._finish(_error_done(problem, self._changes), settled=True)
        except Exception as err:  # noqa: BLE001 - totality: a bug becomes a typed outcome
            self._finish(_error_done(InternalError(), self._changes, f"internal_error:{type(err).__name__}:{err}"))

    def _start(self) -> None:
        try:
            self._gen = self._factory()
        except PlanError as err:
            self._finish(Done(outcome=err.outcome, debt=err.debt))
            return
        except Exception as err:  # noqa: BLE001
            self._finish(_error_done(InternalError(), message=f"internal_error:{type(err).__name__}:{err}"))
            return
        self._guard(next)

    def interrupt(self) -> None:
        """Throw :class:`Interrupted` into the program instead of executing its pending step; what
        it does about it is the next decision. While the program holds interrupts (:class:`Hold`) the
        pending step stays, and the interrupt is thrown at the first step after the hold."""
        if self._done is not None:
            return
        if self._holds > 0:
            self._deferred = True
            return
        self._pending = None
        self._guard(lambda gen: gen.throw(Interrupted()))

    def take_ahead(self) -> tuple[Step, ...]:
        """The reads announced since the last call (:class:`Ahead`), for the shell to answer ahead."""
        ahead, self._ahead = tuple(self._ahead), []
        return ahead

    def decision(self) -> Next | Done:
        if self._done is not None:
            return self._done
        assert self._pending is not None
        return Next(steps=(self._pending,))

    def feed(self, step: Step, observation: Observation) -> None:
        """Feed the observation of ``step``; ``step`` must be the pending one."""
        at = self._at
        self._at += 1
        if self._done is not None:
            if not self._settled:
                self._finish(_error_done(JournalAfterDone(at=at, got_op=step.op)), settled=True)
            return
        assert self._pending is not None
        if step != self._pending:
            problem = JournalDivergence(at=at, expected_op=self._pending.op, got_op=step.op,
                                        field=_differing_field(self._pending, step))
            self._finish(_error_done(problem), settled=True)
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
