"""Execute one step of a plan and report what was observed. The only place effects happen."""

from __future__ import annotations

import contextlib
import heapq
import os
import shlex
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard, TypeVar

from pure import model as m
from shell.run import deadlines, fs, startup, tmux_control, tmux_protocol

if TYPE_CHECKING:  # returns.io is imported when a file is first written: a read-only run never needs it
    from returns.io import IOResult

T = TypeVar("T")

StoreHandler = Callable[[m.Store], m.JsonResult]


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
    guards: set[_Watchdog] | None = None,
) -> m.Proc:
    """Run ``tool`` (resolved on ``env``'s PATH) to completion, or until its deadline.

    The process gets a session (and so a process group) of its own. When ``timeout`` seconds
    (default: the tool's deadline from ``PANEFLEET_CALL_TIMEOUT``, ``shell/run/deadlines.py``) pass,
    or this process is interrupted, the whole group gets SIGTERM and, 0.5 s later, SIGKILL; a call
    that ran out of time is observed as not finished (``exit_code=None``), never as an answer.
    ``guards`` holds the call's watchdog while it runs, so that another thread can end it
    (``_Watchdog.stop_now``: a call read ahead on a thread of its own is not interrupted by Ctrl-C).
    """
    path = which(tool, env)
    if path is None:
        return m.Proc(exit_code=None, stderr=f"{tool}: command not found on PATH")
    seconds = deadlines.from_env(env).seconds(tool) if timeout is None else timeout
    import sh  # imported lazily: it costs tens of milliseconds of start-up

    # Until the watchdog guards the child, an interruption would leave it running: hold them back
    # and let one that came meanwhile be raised inside the ``try`` below.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)
    try:
        running = sh.Command(path)(
            *args,
            _ok_code=list(range(256)),
            _tty_out=False,
            _env=dict(env),
            _cwd=cwd,
            _in=None,
            _truncate_exc=False,
            _bg=True,
            _bg_exc=False,
            _new_session=True,
            _preexec_fn=_child_signals(mask),
        )
        watchdog = _Watchdog(running.process.pid, seconds)
        if guards is not None:
            guards.add(watchdog)
    except OSError as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return m.Proc(exit_code=None, stderr=f"{tool}: {exc.strerror or exc}")
    except sh.ForkException as exc:  # e.g. the working directory does not exist
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else "could not start"
        return m.Proc(exit_code=None, stderr=f"{tool}: {reason}")
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        running.wait()
    except sh.SignalException as exc:
        if watchdog.fired:
            return _timed_out(tool, args, seconds, exc.stderr)
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
        if guards is not None:
            guards.discard(watchdog)
    if watchdog.fired:  # it exited on SIGTERM with a status of its own: still not an answer
        return _timed_out(tool, args, seconds, running.stderr)
    return m.Proc(
        exit_code=running.exit_code,
        stdout=running.stdout.decode("utf-8", "replace"),
        stderr=running.stderr.decode("utf-8", "replace"),
    )


def _timed_out(tool: str, args: tuple[str, ...], seconds: float, stderr: bytes) -> m.Proc:
    said = stderr.decode("utf-8", "replace").strip()
    message = f"{tool} timed out after {deadlines.describe(seconds)} s: {shlex.join(args)}"
    return m.Proc(exit_code=None, stderr=message + (f"\n{said}" if said else ""))


_INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _child_signals(mask: set[int | signal.Signals]) -> Callable[[], None]:
    """What the child does before ``exec``: panefleet's interruption handlers (``cli.py``) and
    ``sh``'s background mode (SIGHUP ignored) are undone — default actions again, except for a
    signal panefleet itself was started with ignored (``nohup``) — then the signal mask is restored."""
    ignored = {sig for sig in _INTERRUPTS if signal.getsignal(sig) == signal.SIG_IGN}

    def setup() -> None:
        for sig in _INTERRUPTS:
            signal.signal(sig, signal.SIG_IGN if sig in ignored else signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    return setup


class _Watchdog:
    """Kills the process group ``pgid`` (SIGTERM, then SIGKILL after the grace) when ``seconds``
    pass before :meth:`finished` is called. Timed by the process-wide :data:`_TIMERS` thread: arming
    one costs microseconds, where a thread per call would cost a sizeable part of a tmux call."""

    def __init__(self, pgid: int, seconds: float) -> None:
        self.pgid = pgid
        self.fired = False
        self._lock = threading.Lock()
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

    def finished(self) -> None:
        """The leader was reaped. After an expiry, also kill what is left of its group."""
        with self._lock:
            self._done = True
            self._pending.cancel()
            if self.fired:
                self._signal(signal.SIGKILL)


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


def _spawn_control_client(path: str, args: tuple[str, ...], env: Mapping[str, str], stdin: int, stdout: int,
                          stderr: int) -> object:
    """Start a long-lived tmux control-mode client (``shell/run/tmux_control.py``) on the given pipe ends,
    through ``sh`` as every process panefleet starts, in a session of its own, with panefleet's
    interruption handlers undone as for every call."""
    import sh

    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)
    try:
        return sh.Command(path)(
            *args,
            _ok_code=list(range(256)),
            _env=dict(env),
            _in=open(stdin, "rb", buffering=0, closefd=False),  # sh dups each descriptor for the child
            _out=stdout,
            _err=stderr,
            _bg=True,
            _bg_exc=False,
            _new_session=True,
            _preexec_fn=_child_signals(mask),
        )
    except sh.ForkException as exc:
        raise OSError(str(exc).strip().splitlines()[-1] if str(exc).strip() else "could not start") from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


# At most this many announced reads are answered at once (``read_ahead``).
READ_AHEAD_MOST = 8
# How a read is made (``Executor.run_tool``): the step, and a set to hold its watchdog while it runs.
Reader = Callable[[m.Run, set["_Watchdog"]], m.Proc]


class _AnsweredAhead:
    """One announced read being answered on a thread of its own."""

    def __init__(self, step: m.Run, run: Reader) -> None:
        self.step = step
        self.guards: set[_Watchdog] = set()
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


class _ReadAhead:
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
    """A read that runs as a process of its own (tmux steps share the run's one control client)."""
    return isinstance(step, m.Run) and not step.mutates and step.tool != "tmux"


def _changes_world(step: m.Step) -> bool:
    """What an answer read ahead must not be used across: a mutating call, or a wait (panefleet's own
    files and store are not what a read of another program answers)."""
    return (isinstance(step, m.Run) and step.mutates) or isinstance(step, m.Sleep)


class Executor:
    """Runs steps against the real world.

    ``tmux_socket`` selects a private tmux server (``tmux -L NAME``) for every tmux step. tmux steps
    go through one control-mode client per run where they can (``shell/run/tmux_control.py``; off with
    ``PANEFLEET_TMUX_EXECUTOR=spawn``), else each spawns ``tmux``; the observations are the same.
    :meth:`end_run` closes the client (``shell/run/loop.py`` calls it when a run ends, however it ends).
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        tmux_socket: str | None = None,
        store: StoreHandler | None = None,
    ) -> None:
        self.env: dict[str, str] = dict(os.environ if env is None else env)
        self.tmux_socket = tmux_socket
        self.store = store
        self.deadlines = deadlines.from_env(self.env)  # ValueError names a bad PANEFLEET_CALL_TIMEOUT
        self._locks: dict[str, str] = {}
        self._stale: dict[str, int] = {}  # stale_ms of each held lock
        self._lease_due = 0.0
        self.calls: dict[str, int] = {}
        self.tmux_mode = tmux_control.mode_from_env(self.env)  # ValueError names a bad PANEFLEET_TMUX_EXECUTOR
        self._client: tmux_control.ControlClient | None = None
        self._clients = 0  # control clients started in this run
        self._control_off = ""  # why this run spawns every tmux step from now on ("" while it need not)
        self.tmux_via: str | None = None  # how the last tmux step was answered: "control" or "spawn"
        self._via_counts: dict[str, int] = {"control": 0, "spawn": 0}
        self._run_over = False  # end_run was called: the next tmux step starts the counts afresh
        # Announced reads answered ahead (read_ahead); at most this many at once, below 2 never.
        self.read_ahead_most = READ_AHEAD_MOST
        self._ahead: _ReadAhead | None = None
        self.answered_ahead = False  # the last step was read before the program asked for it

    def tool_args(self, tool: str, args: tuple[str, ...]) -> tuple[str, ...]:
        if tool == "tmux" and self.tmux_socket:
            return ("-L", self.tmux_socket, *args)
        return args

    def read_ahead(self, steps: tuple[m.Step, ...]) -> None:
        """Reads the program will ask for later (``pure/program.py`` ``Ahead``; ``shell/run/loop.py``
        hands them over): answered ahead, several at once, by :class:`_ReadAhead`."""
        if self.read_ahead_most < 2:
            return
        if self._ahead is None:
            self._ahead = _ReadAhead(self.run_tool, self.read_ahead_most)
        self._ahead.announce(steps)

    @property
    def read_ahead_dropped(self) -> int:
        """Reads made ahead whose answers were not used (a change came first, or never asked for)."""
        return self._ahead.dropped if self._ahead is not None else 0

    def run_tool(self, step: m.Run, guards: set[_Watchdog] | None = None) -> m.Proc:
        """A step of a tool other than tmux, run now (also on a thread of its own, when read ahead:
        ``guards`` then holds its watchdog). What a subclass overrides to answer such steps otherwise."""
        return run_process(step.tool, self.tool_args(step.tool, step.args), env=self.env, cwd=step.cwd,
                           timeout=self.deadlines.seconds(step.tool), guards=guards)

    def execute(self, step: m.Step) -> m.Observation:  # noqa: PLR0911,PLR0912
        startup.release()  # the first step of a run ends start-up (shell/run/startup.py)
        if self._locks and time.monotonic() >= self._lease_due:
            self._refresh_leases()
        self.answered_ahead = False
        if self._ahead is not None and _changes_world(step):
            self._ahead.settle()
        if isinstance(step, m.Run):
            self.calls[step.tool] = self.calls.get(step.tool, 0) + 1
            if step.tool == "tmux":
                return self._tmux(step)
            if self._ahead is not None:
                taken = self._ahead.take(step)
                if taken is not None:
                    answer, self.answered_ahead = taken
                    return answer
            return self.run_tool(step)
        if isinstance(step, m.ReadFile):
            try:
                data = Path(step.path).read_bytes()
            except FileNotFoundError:
                return m.FileData(content=None)
            except OSError as exc:
                return m.FileData(content=None, error=os_error(exc))
            try:
                return m.FileData(content=data.decode("utf-8"))
            except UnicodeDecodeError:
                return m.FileData(content=None, error="not_utf8")
        if isinstance(step, m.WriteFile):
            return _ack(lambda: fs.atomic_write(Path(step.path), step.content.encode("utf-8"), step.mode))
        if isinstance(step, m.AppendFile):
            return _ack(lambda: _append(Path(step.path), step.content))
        if isinstance(step, m.RemovePath):
            return _ack(lambda: fs.remove_path(Path(step.path), step.recursive))
        if isinstance(step, m.MakeDir):
            return _ack(lambda: Path(step.path).mkdir(parents=True, exist_ok=step.exist_ok))
        if isinstance(step, m.ListDir):
            try:
                return m.Listing(names=tuple(sorted(os.listdir(step.path))))
            except FileNotFoundError:
                return m.Listing(names=None)
            except OSError as exc:
                return m.Listing(names=None, error=os_error(exc))
        if isinstance(step, m.Stat):
            return m.Value(value=_stat(Path(step.path)))
        if isinstance(step, m.RealPath):
            return m.Value(value=os.path.realpath(step.path))
        if isinstance(step, m.AcquireLock):
            token = fs.owner_token()
            try:
                fs.acquire_lock(
                    Path(step.path),
                    timeout_ms=step.timeout_ms,
                    retry_ms=step.retry_ms,
                    stale_ms=step.stale_ms,
                    token=token,
                )
            except fs.LockTimeout as exc:
                # "timeout: <dir> held by pid … since … (alive), lease lapses at …" (pure/omx/locks.py)
                return m.Ack(ok=False, error=f"timeout: {exc}")
            except OSError as exc:
                return m.Ack(ok=False, error=f"{type(exc).__name__}: {exc.strerror or exc}")
            if not self._locks:
                self._lease_due = time.monotonic() + _lease_interval(step.stale_ms)
            self._locks[step.path] = token
            self._stale[step.path] = step.stale_ms
            return m.Ack(ok=True)
        if isinstance(step, m.ReleaseLock):
            token = self._locks.pop(step.path, "")
            self._stale.pop(step.path, None)
            released = fs.release_lock(Path(step.path), token) if token else False
            return m.Ack(ok=released, error="" if released else "not_held")
        if isinstance(step, m.Sleep):
            time.sleep(max(0, step.ms) / 1000)
            return m.Ack(ok=True)
        if isinstance(step, m.Clock):
            return m.Value(value=utc_now())
        if isinstance(step, m.FreshId):
            import uuid

            return m.Value(value=uuid.uuid4().hex)
        if isinstance(step, m.Store):
            if self.store is None:
                return m.JsonResult(ok=False, error="no store configured")
            return self.store(step)
        raise TypeError(f"unknown step {step!r}")  # pragma: no cover - the union is closed

    # ---------------------------------------------------------------------------------------- tmux

    def _tmux(self, step: m.Run) -> m.Proc:
        """One tmux step: through the run's control client when the command can go there
        (``tmux_protocol.control_line``), else spawned; the same observation either way."""
        if self._run_over:
            self._run_over = False
            self._clients = 0
            self._control_off = ""
            self._via_counts = {"control": 0, "spawn": 0}
        args = self.tool_args("tmux", step.args)
        seconds = self.deadlines.seconds("tmux")
        if tmux_protocol.closes_client(step.args):
            self._close_client()
        line = None
        if self.tmux_mode == "control" and not self._control_off and step.cwd is None:
            line = tmux_protocol.control_line(step.args)
        if line is not None:
            answered = self._through_client(line, step.args, args, seconds)
            if answered is not None:
                self.tmux_via = "control"
                self._via_counts["control"] += 1
                return answered
        self.tmux_via = "spawn"
        self._via_counts["spawn"] += 1
        return run_process("tmux", args, env=self.env, cwd=step.cwd, timeout=seconds)

    def _through_client(self, line: bytes, command: tuple[str, ...], args: tuple[str, ...],
                        seconds: float) -> m.Proc | None:
        """The answer through the control client (started on first use), or None: spawn it."""
        deadline = time.monotonic() + seconds
        client = self._client
        if client is not None and not client.usable():  # tmux detached it (its session was destroyed)
            self._close_client()
            client = None
        if client is None:
            if self._clients >= tmux_control.MAX_CLIENTS:
                self._control_off = f"{self._clients} control clients ended in this run"
                return None
            path = which("tmux", self.env)
            if path is None:
                return None  # spawning says "tmux: command not found on PATH"
            selector = ("-L", self.tmux_socket) if self.tmux_socket else ()
            self._clients += 1
            started = tmux_control.ControlClient.start(path, selector, self.env, deadline, _spawn_control_client)
            if isinstance(started, tmux_control.StartFailure):
                self._control_off = f"control client did not start: {started}"
                if started.problem == "timed_out":  # a tmux that does not answer: as a spawned call would
                    return _timed_out("tmux", args, seconds, b"")
                return None
            client = self._client = started
        try:
            answered = client.call(line, deadline)
        except tmux_control.CallTimedOut:
            self._client = None
            self._control_off = f"control client timed out after {deadlines.describe(seconds)} s"
            return _timed_out("tmux", args, seconds, b"")
        except tmux_control.CallLost as lost:
            self._client = None
            if command[0] in tmux_protocol.READ_ONLY_VERBS:
                return None  # it changed nothing: ask again by spawning
            return m.Proc(exit_code=None, stderr=f"tmux control client ended before answering ({lost}): "
                                                 f"{shlex.join(args)}")
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): the client must not outlive panefleet
            self._client = None
            client.kill()
            raise
        if answered is None:  # it had gone before the command was sent
            self._client = None
        return answered

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def tmux_summary(self) -> dict[str, object] | None:
        """How this (or the last) run's tmux steps were answered (the audit log's ``done`` record),
        or None when it made none."""
        if not any(self._via_counts.values()):
            return None
        return {"requested": self.tmux_mode, "control_calls": self._via_counts["control"],
                "spawned_calls": self._via_counts["spawn"], "control_clients": self._clients,
                "fallback": self._control_off}

    def end_run(self) -> None:
        """The run is over: close its tmux control client and end the reads still running ahead; the
        next run starts afresh (a new client, new counts; :meth:`tmux_summary` still tells about this
        one until then)."""
        self._run_over = True
        self.tmux_via = None
        self.answered_ahead = False
        if self._ahead is not None:
            self._ahead.stop()
        self._close_client()

    def release_all(self) -> None:
        """Release every lock still held (``shell/run/loop.py`` calls it when a run ends, however it ends)."""
        for path, token in list(self._locks.items()):
            fs.release_lock(Path(path), token)
        self._locks.clear()
        self._stale.clear()

    def _refresh_leases(self) -> None:
        """Touch the lease of every held lock, as oh-my-codex's holders do (every third of the stale
        time), so that a long run keeps its locks; checked before each step."""
        for path, token in self._locks.items():
            fs.refresh_lease(Path(path), token)
        self._lease_due = time.monotonic() + min((_lease_interval(ms) for ms in self._stale.values()), default=100.0)


def _lease_interval(stale_ms: int) -> float:
    return max(0.001, stale_ms / 3000)


def _append(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())


def _stat(path: Path) -> str:
    if path.is_symlink():
        return "symlink"
    if not path.exists():
        return "absent"
    if path.is_dir():
        return "dir"
    if path.is_file():
        return "file"
    return "other"


def os_error(exc: OSError) -> str:
    """``ErrorName: reason: path`` — stable, and names what was wrong."""
    where = f": {exc.filename}" if exc.filename else ""
    return f"{type(exc).__name__}: {exc.strerror or exc}{where}"


def attempt(action: Callable[[], T]) -> IOResult[T, OSError]:
    """Run one filesystem effect; an OSError becomes the failure side instead of an exception."""
    from returns.io import impure_safe

    return impure_safe(exceptions=(OSError,))(action)()


def observe(io: IOResult[T, OSError], on_error: Callable[[OSError], T]) -> T:
    """Turn an effect's result into the observation the planner sees.

    The only place where panefleet opens an IO container (``unsafe_perform_io``): the observation
    leaves the shell as plain data and goes into the journal.
    """
    from returns.io import IOSuccess
    from returns.unsafe import unsafe_perform_io

    return unsafe_perform_io(io.lash(lambda exc: IOSuccess(on_error(exc))).unwrap())


def _ack(action: Callable[[], object]) -> m.Ack:
    return observe(attempt(action).map(lambda _: m.Ack(ok=True)), lambda exc: m.Ack(ok=False, error=os_error(exc)))
