"""The shell a run keeps on a host: one ssh session, through the host's master connection, that runs the
run's file steps and tool calls there one after another (the wire: ``pure/host_shell.py``). A call through
it costs what the commands cost on the host plus a round trip, not a session and a login shell each.

Each call keeps its deadline. A call that misses it, or whose answer the session ends before, ends the
shell (the answer may have been half read); the next call starts another. Why a shell could not start is
typed as a call's fault is (``pure/hosts.py`` ``fault_of``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from returns.result import Failure, Result, Success

from pure import hosts
from pure import model as m
from pure.host_shell import answer_head, ready_pid, request, server_argv
from shell.run.piped import PipedChild
from shell.run.process import spawn_control_client
from shell.run.tmux_protocol import _Lost, _TimedOut


class ShellLost(Exception):
    """The shell ended, or broke the wire, before it answered; the command may have run."""


class ShellTimedOut(Exception):
    """No answer before the deadline; the shell has been ended."""


class HostShell(PipedChild):
    """A running shell on a host. Use :meth:`start`; then :meth:`call` per command; :meth:`close`."""

    destination = ""
    pid_on_host = 0  # the shell's own process on the host: it lives exactly as long as the shell

    @classmethod
    def start(cls, destination: str, path: str, args: tuple[str, ...], env: Mapping[str, str],
              deadline: float) -> Result[HostShell, hosts.HostFault]:
        """Start the shell with ``path args`` (``ssh`` and ``pure/hosts.py`` ``ssh_args`` of
        :func:`shell_command`) and wait until ``deadline`` for it to say it is ready."""
        launched = cls.launch(destination, path, args, env)
        return launched if isinstance(launched, Failure) else launched.unwrap().ready(deadline)

    @classmethod
    def launch(cls, destination: str, path: str, args: tuple[str, ...],
               env: Mapping[str, str]) -> Result[HostShell, hosts.HostFault]:
        """Start the shell without waiting for it (:meth:`ready` waits): it connects while the run does
        something else."""
        try:
            shell = cls.spawned(spawn_control_client, path, args, env)
        except OSError as exc:
            return Failure(hosts.HostFault("ssh_failed", destination, exc.strerror or str(exc)))
        shell.destination = destination
        return Success(shell)

    def ready(self, deadline: float) -> Result[HostShell, hosts.HostFault]:
        """This shell once it has said it is ready (until ``deadline``), or why it will not be; it is ended
        then."""
        if self.pid_on_host:
            return Success(self)
        try:
            while (pid := ready_pid(self.stdout.line(deadline))) is None:
                pass  # what a login shell's start-up files print before the shell starts
        except _TimedOut:
            self.kill()
            return Failure(hosts.HostFault("unreachable", self.destination, "no answer within the deadline"))
        except _Lost:
            said = self.last_words(deadline)
            return Failure(hosts.fault_of(self.destination, 255, said)
                           or hosts.HostFault("ssh_failed", self.destination, said or "the shell on the host ended"))
        except BaseException:
            self.kill()
            raise
        self.pid_on_host = pid
        return Success(self)

    def call(self, argv: Sequence[str], stdin: bytes | None, deadline: float) -> m.Proc:
        """Run ``argv`` on the host with ``stdin``; its answer. Raises :class:`ShellTimedOut` or
        :class:`ShellLost`, having ended the shell; an interruption ends it too."""
        try:
            self._write(request(argv, stdin), deadline)
            head = answer_head([self.stdout.line(deadline) for _ in range(3)])
            if head is None:
                raise _Lost("the host's shell broke the wire")
            code, out, err = head
            stdout, stderr = self.stdout.take(out, deadline), self.stdout.take(err, deadline)
        except _TimedOut:
            self.kill()
            raise ShellTimedOut from None
        except _Lost as lost:
            self.kill()
            raise ShellLost(str(lost)) from None
        except BaseException:
            self.kill()
            raise
        return m.Proc(exit_code=code, stdout=stdout.decode("utf-8", "replace"),
                      stderr=stderr.decode("utf-8", "replace"))

    def last_words(self, deadline: float) -> str:
        """What ssh said on its standard error before it exited (waited for until ``deadline``); it is
        then closed."""
        while self._alive() and time.monotonic() < deadline:
            time.sleep(0.002)
        said = self.stderr_text()
        self.close()
        return said

    def usable(self) -> bool:
        """Not ended, and nothing has arrived unasked (the shell's output ends only when it does)."""
        if self.closed:
            return False
        self.stdout.look()
        return not self.stdout.eof and self.stdout.pos == len(self.stdout.buf)


def shell_command(posix_only: bool = False) -> str:
    """The command line ssh sends to start the shell (``pure/host_shell.py`` ``server_argv``), quoted for the
    login shell."""
    return hosts.remote_command(server_argv(posix_only)).unwrap()  # literal words: never empty, no NUL


