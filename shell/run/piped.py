"""A long-lived child process on pipes, started in a session and process group of its own and ended with
panefleet however panefleet ends: the tmux control-mode client of a run (``shell/run/tmux_control.py``)
and the shell a run keeps on a host (``shell/run/host_shell.py``).

It is closed at the end of every run and at interpreter exit; a forked child never touches its
parent's; if panefleet is killed outright it reads the end of its input and exits, and, started on the
main thread on Linux, also gets the parent-death signal (``shell/run/process.py``
``spawn_control_client``).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from shell.run.tmux_protocol import _Lost, _Stream, _TimedOut

# How long a closed child may take to exit before its group is killed.
CLOSE_SECONDS = 1.0

Spawner = Callable[[str, tuple[str, ...], Mapping[str, str], int, int, int], Any]
Child = TypeVar("Child", bound="PipedChild")

_LIVE: set[PipedChild] = set()


def _close_all() -> None:
    for child in list(_LIVE):
        child.close()


def _forget_after_fork() -> None:
    """A forked child owns none of its parent's children: drop them without a word to them."""
    for child in list(_LIVE):
        child.abandon()


atexit.register(_close_all)
os.register_at_fork(after_in_child=_forget_after_fork)


class PipedChild:
    """A running child: its standard input to write to, its output read as a :class:`_Stream` under
    deadlines, its standard error kept for the words of a failure."""

    def __init__(self, running: Any, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.running = running
        self.pid = pid
        self.owner = os.getpid()
        self.stdin = stdin
        self.stdout = _Stream(stdout)
        self.stderr = stderr
        self.closed = False
        self._signalled = False
        _LIVE.add(self)

    @classmethod
    def spawned(cls: type[Child], spawn: Spawner, path: str, args: tuple[str, ...], env: Mapping[str, str]) -> Child:
        """``spawn(path, args, env, stdin, stdout, stderr)`` on three new pipes (it starts the process in a
        session of its own and returns the ``sh`` handle); raises ``OSError`` when it cannot start."""
        fds = [*os.pipe(), *os.pipe(), *os.pipe()]  # (r, w) for stdin, stdout, stderr
        child = (fds[0], fds[3], fds[5])
        try:
            running = spawn(path, args, env, *child)
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        for fd in child:
            os.close(fd)
        for fd in (fds[1], fds[2], fds[4]):
            os.set_blocking(fd, False)
        return cls(running, running.process.pid, fds[1], fds[2], fds[4])

    def _write(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        poller: select.poll | None = None
        while view:
            try:
                written = os.write(self.stdin, view)
            except BlockingIOError:
                written = 0
            except OSError as exc:  # EPIPE: the client has gone
                raise _Lost(exc.strerror or str(exc)) from None
            view = view[written:]
            if view:
                if poller is None:
                    poller = select.poll()
                    poller.register(self.stdin, select.POLLOUT)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _TimedOut
                poller.poll(max(1, int(remaining * 1000)))

    def stderr_text(self) -> str:
        chunks: list[bytes] = []
        with contextlib.suppress(OSError):
            while chunk := os.read(self.stderr, 1 << 16):
                chunks.append(chunk)
        return b"".join(chunks).decode("utf-8", "replace").strip()

    # -------------------------------------------------------------------------------------- ending

    def close(self) -> None:
        """Close its standard input (a tmux client detaches, a shell reads its end, and it exits); SIGTERM its
        group if it has not exited within :data:`CLOSE_SECONDS`, SIGKILL after the grace."""
        if self._foreign():
            return
        with contextlib.suppress(OSError):
            os.close(self.stdin)
        self._end(time.monotonic() + CLOSE_SECONDS, terminate=True)

    def kill(self) -> None:
        """End the client now: SIGTERM to its group, SIGKILL after the grace."""
        if self._foreign():
            return
        with contextlib.suppress(OSError):
            os.close(self.stdin)
        self._signal(signal.SIGTERM)
        self._end(time.monotonic() + _kill_grace(), terminate=False)

    def _foreign(self) -> bool:
        """Already ended, or not this process's client (a forked child's copy: forgotten)."""
        if not self.closed and os.getpid() != self.owner:
            self.abandon()
        return self.closed

    def _end(self, wait_until: float, *, terminate: bool) -> None:
        self.closed = True
        _LIVE.discard(self)
        try:
            while self._alive() and time.monotonic() < wait_until:
                self._drain()
                time.sleep(0.0005)
            if terminate and self._alive():
                self._signal(signal.SIGTERM)
                grace = time.monotonic() + _kill_grace()
                while self._alive() and time.monotonic() < grace:
                    self._drain()
                    time.sleep(0.002)
        finally:
            if self._signalled:
                self._signal(signal.SIGKILL)  # whatever is left of its group (a stub's children)
            self._reap()
            for fd in (self.stdout.fd, self.stderr):
                with contextlib.suppress(OSError):
                    os.close(fd)

    def abandon(self) -> None:
        """Forget the client without signalling it (a forked child's copy)."""
        self.closed = True
        _LIVE.discard(self)
        for fd in (self.stdin, self.stdout.fd, self.stderr):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _drain(self) -> None:
        """Read and drop what the client writes while it detaches, so it never blocks on a pipe."""
        for fd in (self.stdout.fd, self.stderr):
            with contextlib.suppress(OSError):
                os.read(fd, 1 << 16)

    def _alive(self) -> bool:
        try:
            alive, _ = self.running.process.is_alive()
        except Exception:  # sh raises for a process already reaped
            return False
        return bool(alive)

    def _reap(self) -> None:
        # sh reports a client ended by a signal as an exception of its own: it is reaped all the same
        with contextlib.suppress(Exception):
            self.running.wait()

    def _signal(self, sig: signal.Signals) -> None:
        self._signalled = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)


def _kill_grace() -> float:
    from shell.run.deadlines import KILL_GRACE_SECONDS

    return KILL_GRACE_SECONDS
