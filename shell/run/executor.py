"""Execute one step of a plan and report what was observed. The only place effects happen."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pure import model as m
from shell.run import deadlines, fs, startup, tmux_control, tmux_protocol
from shell.run.process import (
    Watchdog,
    run_process,
    spawn_control_client,
    timed_out,
    utc_now,
    which,
)
from shell.run.read_ahead import READ_AHEAD_MOST, ReadAhead, changes_world

if TYPE_CHECKING:  # returns.io is imported when a file is first written: a read-only run never needs it
    from returns.io import IOResult

    from shell.run.remote import RemoteSteps  # imported by the first step that names a host

T = TypeVar("T")

StoreHandler = Callable[[m.Store], m.JsonResult]


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
        self._ahead: ReadAhead | None = None
        self.answered_ahead = False  # the last step was read before the program asked for it
        self._remote: RemoteSteps | None = None  # the hosts this run's steps named

    def tool_args(self, tool: str, args: tuple[str, ...]) -> tuple[str, ...]:
        if tool == "tmux" and self.tmux_socket:
            return ("-L", self.tmux_socket, *args)
        return args

    def read_ahead(self, steps: tuple[m.Step, ...]) -> None:
        """Reads the program will ask for later (``pure/program.py`` ``Ahead``; ``shell/run/loop.py``
        hands them over): answered ahead, several at once, by :class:`ReadAhead`."""
        if self.read_ahead_most < 2:
            return
        if self._ahead is None:
            self._ahead = ReadAhead(self.run_tool, self.read_ahead_most)
        self._ahead.announce(steps)

    @property
    def read_ahead_dropped(self) -> int:
        """Reads made ahead whose answers were not used (a change came first, or never asked for)."""
        return self._ahead.dropped if self._ahead is not None else 0

    def run_tool(self, step: m.Run, guards: set[Watchdog] | None = None) -> m.Proc:
        """A step of a tool other than tmux, run now (also on a thread of its own, when read ahead:
        ``guards`` then holds its watchdog). What a subclass overrides to answer such steps otherwise."""
        return run_process(step.tool, self.tool_args(step.tool, step.args), env=self.env, cwd=step.cwd,
                           timeout=self.deadlines.seconds(deadlines.deadline_key(step.tool, step.args)), guards=guards,
                           interruptible=not step.mutates)

    def execute(self, step: m.Step) -> m.Observation:  # noqa: PLR0911,PLR0912
        startup.release()  # the first step of a run ends start-up (shell/run/startup.py)
        if self._locks and time.monotonic() >= self._lease_due:
            self._refresh_leases()
        self.answered_ahead = False
        if self._ahead is not None and changes_world(step):
            self._ahead.settle()
        destination = getattr(step, "host", None)
        if destination is not None:  # done on that machine, never on this one (shell/run/remote.py)
            if self._remote is None:
                from shell.run.remote import RemoteSteps

                self._remote = RemoteSteps(self.env, self.tmux_socket)
            return self._remote.execute(destination, step)
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
            return _ack(lambda: fs.atomic_write(Path(step.path), step.content.encode("utf-8"), step.mode), step.path)
        if isinstance(step, m.AppendFile):
            return _ack(lambda: _append(Path(step.path), step.content), step.path)
        if isinstance(step, m.RemovePath):
            return _ack(lambda: fs.remove_path(Path(step.path), step.recursive), step.path)
        if isinstance(step, m.MakeDir):
            return _ack(lambda: Path(step.path).mkdir(parents=True, exist_ok=step.exist_ok), step.path)
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
            except OSError as exc:  # the lock directory cannot be made: "OSError: Read-only file system: <dir>"
                return m.Ack(ok=False, error=os_error(named(exc, step.path)))
            if not self._locks:
                self._lease_due = time.monotonic() + fs.lease_interval(step.stale_ms)
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
        return run_process("tmux", args, env=self.env, cwd=step.cwd, timeout=seconds, interruptible=not step.mutates)

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
            started = tmux_control.ControlClient.start(path, selector, self.env, deadline, spawn_control_client)
            if isinstance(started, tmux_control.StartFailure):
                self._control_off = f"control client did not start: {started}"
                if started.problem == "timed_out":  # a tmux that does not answer: as a spawned call would
                    return timed_out("tmux", args, seconds, b"")
                return None
            client = self._client = started
        self._client = None  # while it is asked: an interruption leaves no client behind
        answered, dropped = tmux_control.ask(client, line, command, args, deadline, seconds)
        if dropped == "timed_out":
            self._control_off = f"control client timed out after {deadlines.describe(seconds)} s"
        if not dropped:
            self._client = client
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
        if self._remote is not None:
            self._remote.end_run()

    def release_all(self) -> None:
        """Release every lock still held (``shell/run/loop.py`` calls it when a run ends, however it ends)."""
        for path, token in list(self._locks.items()):
            fs.release_lock(Path(path), token)
        self._locks.clear()
        self._stale.clear()
        if self._remote is not None:
            self._remote.release_all()

    def _refresh_leases(self) -> None:
        """Touch the lease of every held lock, as oh-my-codex's holders do (every third of the stale
        time), so that a long run keeps its locks; checked before each step."""
        for path, token in self._locks.items():
            fs.refresh_lease(Path(path), token)
        self._lease_due = time.monotonic() + min((fs.lease_interval(ms) for ms in self._stale.values()), default=100.0)


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


def named(exc: OSError, path: str) -> OSError:
    """``exc`` as it names ``path`` or a folder above it (a parent that could not be made); any other
    file it names — the temporary file an atomic write renames into place, an entry of a tree being
    removed (``shutil.rmtree`` names it relative to its folder) — becomes ``path``, the step's own path.
    So a failed write names what the step was to change, as a dry run predicts (``shell/run/dryrun.py``)."""
    name = exc.filename
    if exc.errno is None or (isinstance(name, str) and (name == path or path.startswith(name.rstrip("/") + "/"))):
        return exc
    return OSError(exc.errno, exc.strerror, path)  # the same subclass (PermissionError for EACCES …)


def _ack(action: Callable[[], object], path: str) -> m.Ack:
    return observe(attempt(action).map(lambda _: m.Ack(ok=True)),
                   lambda exc: m.Ack(ok=False, error=os_error(named(exc, path))))
