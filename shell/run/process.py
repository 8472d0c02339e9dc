"""Bounded processes: every program panefleet runs is started here, through ``sh``, in a process group
of its own, and ended with that group when its deadline passes (``shell/run/deadlines.py``) or
panefleet is interrupted."""

from __future__ import annotations

import contextlib
import heapq
import os
import shlex
import signal
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from pure import model as m
from shell.run import deadlines


def which(tool: str, env: Mapping[str, str]) -> str | None:
    """Resolve ``tool`` on the PATH of ``env`` at call time (so tests can plant stubs)."""
    import shutil  # imported when first needed, like ``sh``, ``datetime`` and ``uuid``: start-up stays cheap

    return shutil.which(tool, path=env.get("PATH", os.defpath))


def utc_now() -> str:
    import datetime as _dt

    now = _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def run_process(
    tool: str,
    args: tuple[str, ...],
    *,
    env: Mapping[str, str],
    cwd: str | None = None,
    timeout: float | None = None,
    guards: set[Watchdog] | None = None,
    interruptible: bool = True,
    stdin: bytes | None = None,
) -> m.Proc:
    """Run ``tool`` (resolved on ``env``'s PATH) to completion, or until its deadline, with ``stdin`` on
    its standard input (None: nothing).

    The process gets a session (and so a process group) of its own. When ``timeout`` seconds
    (default: the tool's deadline from ``PANEFLEET_CALL_TIMEOUT``, ``shell/run/deadlines.py``) pass,
    or this process is interrupted, the whole group gets SIGTERM and, 0.5 s later, SIGKILL; a call
    that ran out of time is observed as not finished (``exit_code=None``), never as an answer.
    ``guards`` holds the call's watchdog while it runs, so that another thread can end it
    (``Watchdog.stop_now``: a call read ahead on a thread of its own is not interrupted by Ctrl-C).
    An ``interruptible`` call (a read) on the main thread is ended the same way when the run is
    interrupted (``interrupt_foreground``), and observed as interrupted; a change is left to finish
    within its deadline, since only its answer says what it made.
    """
    path = which(tool, env)
    if path is None:
        return m.Proc(exit_code=None, stderr=f"{tool}: command not found on PATH")
    seconds = deadlines.from_env(env).seconds(tool) if timeout is None else timeout
    import sh  # imported lazily: it costs tens of milliseconds of start-up

    # Until the watchdog guards the child, an interruption would leave it running: hold them back
    # and let one that came meanwhile be raised inside the ``try`` below.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        running = _start(path, args, env, mask, _tty_out=False, _cwd=cwd, _in=stdin, _truncate_exc=False)
        watchdog = Watchdog(running.process.pid, seconds)
        if guards is not None:
            guards.add(watchdog)
        if interruptible and threading.current_thread() is threading.main_thread():
            _FOREGROUND.add(watchdog)
    except OSError as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return m.Proc(exit_code=None, stderr=f"{tool}: {exc.strerror or exc}")
    except sh.ForkException as exc:  # e.g. the working directory does not exist
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return m.Proc(exit_code=None, stderr=f"{tool}: {_fork_failure(exc)}")
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        running.wait()
    except sh.SignalException as exc:
        if watchdog.interrupted:
            return interrupted(tool, args)
        if watchdog.fired:
            return timed_out(tool, args, seconds, exc.stderr)
        return m.Proc(
            exit_code=128 + abs(exc.exit_code),
            stdout=exc.stdout.decode("utf-8", "replace"),
            stderr=exc.stderr.decode("utf-8", "replace"),
        )
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): the call must not outlive panefleet
        watchdog.stop_now()
        raise
    finally:
        watchdog.finished()
        _FOREGROUND.discard(watchdog)
        if guards is not None:
            guards.discard(watchdog)
    if watchdog.interrupted:
        return interrupted(tool, args)
    if watchdog.fired:  # it exited on SIGTERM with a status of its own: still not an answer
        return timed_out(tool, args, seconds, running.stderr)
    return m.Proc(
        exit_code=running.exit_code,
        stdout=running.stdout.decode("utf-8", "replace"),
        stderr=running.stderr.decode("utf-8", "replace"),
    )


def timed_out(tool: str, args: tuple[str, ...], seconds: float, stderr: bytes) -> m.Proc:
    said = stderr.decode("utf-8", "replace").strip()
    message = f"{tool} timed out after {deadlines.describe(seconds)} s: {shlex.join(args)}"
    return m.Proc(exit_code=None, stderr=message + (f"\n{said}" if said else ""))


def interrupted(tool: str, args: tuple[str, ...]) -> m.Proc:
    return m.Proc(exit_code=None, stderr=f"{tool} interrupted: {shlex.join(args)}")


INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def interrupt_foreground() -> None:
    """The run is being interrupted (``shell/run/interrupts.py``): end the reads in flight on the
    main thread now, as their deadline would; each is observed as interrupted, never as an answer."""
    for watchdog in list(_FOREGROUND):
        watchdog.cut()


def _start(path: str, args: tuple[str, ...], env: Mapping[str, str], mask: set[int | signal.Signals],
           die_with_parent: bool = False, **io: Any) -> Any:
    """Start ``path`` through ``sh`` as every process panefleet starts: in the background, in a
    session (and process group) of its own, every exit status an answer, with panefleet's
    interruption handlers undone in the child (``_child_signals``). ``io``: its streams and cwd."""
    import sh

    return sh.Command(path)(*args, _ok_code=list(range(256)), _env=dict(env), _bg=True, _bg_exc=False,
                            _new_session=True, _preexec_fn=_child_signals(mask, die_with_parent), **io)


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl``, looked up before the fork (the child only calls it), or None off Linux."""
    if not os.path.exists("/proc/self"):
        return None
    import ctypes

    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


def _fork_failure(exc: Exception) -> str:
    """What ``sh`` said when the child could not be started (its last line)."""
    said = str(exc).strip()
    return said.splitlines()[-1] if said else "could not start"


def _child_signals(mask: set[int | signal.Signals], die_with_parent: bool = False) -> Callable[[], None]:
    """What the child does before ``exec``: panefleet's interruption handlers (``cli.py``) and
    ``sh``'s background mode (SIGHUP ignored) are undone — default actions again, except for a
    signal panefleet itself was started with ignored (``nohup``) — then the signal mask is restored.
    ``die_with_parent``: the child gets SIGTERM when panefleet ends, however it ends (Linux's
    parent-death signal; where there is none, the child still sees its pipes close)."""
    ignored = {sig for sig in INTERRUPTS if signal.getsignal(sig) == signal.SIG_IGN}
    prctl = _prctl() if die_with_parent else None
    parent = os.getpid()

    def setup() -> None:
        for sig in INTERRUPTS:
            signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
            if os.getppid() != parent:  # panefleet ended before the signal was asked for
                os.kill(os.getpid(), signal.SIGTERM)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    return setup


class Watchdog:
    """Kills the process group ``pgid`` (SIGTERM, then SIGKILL after the grace) when ``seconds``
    pass before :meth:`finished` is called. Timed by the process-wide :data:`_TIMERS` thread: arming
    one costs microseconds, where a thread per call would cost a sizeable part of a tmux call."""

    def __init__(self, pgid: int, seconds: float) -> None:
        self.pgid = pgid
        self.fired = False
        self.interrupted = False
        # re-entrant: ``cut`` runs in a signal handler, on the thread that may hold it in ``finished``
        self._lock = threading.RLock()
        self._done = False
        self._pending = _TIMERS.arm(time.monotonic() + seconds, self._expire)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            self._signal(signal.SIGTERM)
            self._pending = _TIMERS.arm(time.monotonic() + deadlines.KILL_GRACE_SECONDS, self._kill)

    def _kill(self) -> None:
        with self._lock:
            if not self._done:
                self._signal(signal.SIGKILL)

    def stop_now(self) -> None:
        """The caller is being interrupted: end the group now, without waiting for the deadline."""
        with self._lock:
            self._pending.cancel()
            self._signal(signal.SIGTERM)
        end = time.monotonic() + deadlines.KILL_GRACE_SECONDS
        while time.monotonic() < end and _group_exists(self.pgid):
            time.sleep(0.01)
        self._signal(signal.SIGKILL)

    def cut(self) -> None:
        """End the group as an expiry would, now; the call is observed as interrupted."""
        with self._lock:
            if self._done or self.fired:
                return
            self.interrupted = True
            self._pending.cancel()
            self._expire()

    def finished(self) -> None:
        """The leader was reaped. After an expiry, also kill what is left of its group."""
        with self._lock:
            self._done = True
            self._pending.cancel()
            if self.fired:
                self._signal(signal.SIGKILL)


_FOREGROUND: set[Watchdog] = set()  # the main thread's call in flight (an interrupt ends it)


class _Pending:
    __slots__ = ("action", "cancelled")

    def __init__(self, action: Callable[[], None]) -> None:
        self.action = action
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _Timers:
    """One daemon thread that runs short actions at monotonic times (the call deadlines)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _Pending]] = []
        self._count = 0
        self._thread: threading.Thread | None = None

    def arm(self, when: float, action: Callable[[], None]) -> _Pending:
        pending = _Pending(action)
        with self._cond:
            self._count += 1
            heapq.heappush(self._heap, (when, self._count, pending))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="panefleet-deadlines", daemon=True)
                self._thread.start()
            elif self._heap[0][2] is pending:
                self._cond.notify()
        return pending

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._heap and self._heap[0][2].cancelled:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                when, _, pending = self._heap[0]
                delay = when - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                heapq.heappop(self._heap)
            if not pending.cancelled:
                pending.action()

    def after_fork(self) -> None:
        """A forked child has no timer thread: start afresh (the parent's deadlines are not its own)."""
        self._cond = threading.Condition()
        self._heap = []
        self._thread = None


_TIMERS = _Timers()
os.register_at_fork(after_in_child=_TIMERS.after_fork)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def spawn_control_client(path: str, args: tuple[str, ...], env: Mapping[str, str], stdin: int, stdout: int,
                          stderr: int) -> object:
    """Start a long-lived tmux control-mode client (``shell/run/tmux_control.py``) on the given pipe ends,
    as every process panefleet starts (``_start``)."""
    import sh

    mask = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        # The client ends with panefleet however it ends (a SIGKILL included): one left attached keeps
        # the server waiting for it, and `tmux kill-server` with it. Started on the main thread, so the
        # parent-death signal follows the process, not a thread that ends before it.
        return _start(path, args, env, mask, die_with_parent=threading.current_thread() is threading.main_thread(),
                      _in=open(stdin, "rb", buffering=0, closefd=False),  # sh dups each descriptor for the child
                      _out=stdout, _err=stderr)
    except sh.ForkException as exc:
        raise OSError(_fork_failure(exc)) from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
