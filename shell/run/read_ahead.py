"""Announced reads answered ahead of time (``pure/program.py`` ``Ahead``; docs/design-notes.md,
"Independent reads, answered together")."""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import TypeGuard

from pure import model as m
from shell.run.process import Watchdog

# At most this many announced reads are answered at once (``read_ahead``).
READ_AHEAD_MOST = 8
# How a read is made (``Executor.run_tool``): the step, and a set to hold its watchdog while it runs.
Reader = Callable[[m.Run, set["Watchdog"]], m.Proc]


class _AnsweredAhead:
    """One announced read being answered on a thread of its own."""

    def __init__(self, step: m.Run, run: Reader) -> None:
        self.step = step
        self.guards: set[Watchdog] = set()
        self._proc: m.Proc | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._answer, args=(run,), name="panefleet-read-ahead", daemon=True)
        self._thread.start()

    def _answer(self, run: Reader) -> None:
        try:
            self._proc = run(self.step, self.guards)
        except BaseException as exc:  # noqa: BLE001 - raised again where the step is asked for
            self._error = exc

    def result(self) -> m.Proc:
        """The answer (waiting for it); what the call raised is raised here, as if it ran now."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._proc is not None
        return self._proc

    def stop(self) -> None:
        """End the call now (SIGTERM to its group, SIGKILL after the grace) and wait for its thread."""
        if self._thread.is_alive():
            for watchdog in list(self.guards):
                watchdog.stop_now()
        self._thread.join()


class ReadAhead:
    """The reads a program announced (``pure/program.py`` ``Ahead``), answered ahead of time.

    Nothing is read before the program asks for the first announced step; then that step and the
    next ones, up to a window of :data:`READ_AHEAD_MOST`, run at once, each on a thread of its own,
    and each answer is handed over when the program asks for its step, in the announced order. The
    journal holds the same steps with the same kind of answers as when they run one by one; only
    their timing differs, and the audit log says which were read ahead.

    An answer read ahead is never used across a change: before a step that changes the world (a
    mutating call, or a wait) the reads still running are let finish, their answers dropped and their
    steps put back to be read again when asked — so every answer the program gets was read after
    every change the journal shows before it. The window then starts again at one and doubles with
    every answer handed over without a change in between: a pass that changes something after every
    read (each follower dead and replaced) wastes a few reads at most, then reads one by one."""

    def __init__(self, run: Reader, most: int) -> None:
        self._run = run
        self._most = most
        self._window = most
        self._clean = True  # no change since the last answer handed over
        self._queue: deque[m.Run] = deque()  # announced, not started, in order
        self._running: deque[_AnsweredAhead] = deque()  # started, in announced order
        self.dropped = 0  # reads made but not used (a change came first, or they were never asked for)

    def announce(self, steps: tuple[m.Step, ...]) -> None:
        self._queue.extend(step for step in steps if _may_read_ahead(step))

    def take(self, step: m.Run) -> tuple[m.Proc, bool] | None:
        """The answer to ``step`` when it is the next announced read, and whether it was started
        before it was asked for; else None (run it as usual)."""
        started = bool(self._running)
        head = self._running[0].step if started else (self._queue[0] if self._queue else None)
        if head != step:
            return None
        if self._clean:
            self._window = min(self._most, self._window * 2)
        self._clean = True
        while self._queue and len(self._running) < self._window:
            self._running.append(_AnsweredAhead(self._queue.popleft(), self._run))
        return self._running.popleft().result(), started

    def settle(self) -> None:
        """A change is about to be made: no read may run across it, and none read before it is used."""
        self._window, self._clean = 1, False
        if not self._running:
            return
        for answer in self._running:
            with contextlib.suppress(BaseException):
                answer.result()
        self._queue.extendleft(reversed([answer.step for answer in self._running]))
        self.dropped += len(self._running)
        self._running.clear()

    def stop(self) -> None:
        """The run is over: end the reads still running; forget what was announced."""
        for answer in self._running:
            answer.stop()
        self.dropped += len(self._running)
        self._running.clear()
        self._queue.clear()


def _may_read_ahead(step: m.Step) -> TypeGuard[m.Run]:
    """A read that runs as a process of its own here (tmux steps share the run's one control client; a
    step that names a host is done there, shell/run/remote.py)."""
    return isinstance(step, m.Run) and not step.mutates and step.tool != "tmux" and step.host is None


def changes_world(step: m.Step) -> bool:
    """What an answer read ahead must not be used across: a mutating call, or a wait (panefleet's own
    files and store are not what a read of another program answers)."""
    return (isinstance(step, m.Run) and step.mutates) or isinstance(step, m.Sleep)
