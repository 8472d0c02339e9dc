"""The steps of a run that name a host (``host`` of a step, pure/model.py): done on that machine, over one
OpenSSH master connection per host and run (``shell/run/hosts.py``), and observed as the same step done
here would be (``shell/run/executor.py`` hands them over; docs/hosts.md).

* tmux steps go through one control-mode client of the host's tmux server per run
  (``hosts.tmux_client``), or, when a command cannot go there, run as ``tmux`` over ssh;
* file steps run as the POSIX ``sh`` programs of ``pure/remote_files.py``, and any other tool with its
  arguments literal, through one shell kept on the host per run (``shell/run/host_shell.py``).

A host that cannot be reached answers every step with the fault that names it, as a step that found
nothing can: a tmux or tool step as a call that did not finish (``exit_code`` None), a file step as an
error (``Stat``: ``unavailable``). So a proof that needs the host fails closed, and no step meant for a
host is ever done on this machine.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from returns.result import Failure

from pure import model as m
from pure import remote_files
from pure.hosts import HostFault
from shell.run import deadlines, fs, hosts, remote_locks, tmux_control, tmux_protocol
from shell.run.host_shell import HostShell

SSH_CONFIG_ENV = "PANEFLEET_SSH_CONFIG"  # an ssh configuration file to use instead of ~/.ssh/config


class RemoteSteps:
    """The hosts one executor reached in this run: each one's master connection and tmux control client."""

    def __init__(self, env: Mapping[str, str], tmux_socket: str | None) -> None:
        self.env = env
        # ``-u``: a login session over ssh often has no UTF-8 locale, and tmux would then write a tab of
        # its answers (``#{pane_id}\t#{pane_pid}``) as ``_``
        self.selector: tuple[str, ...] = ("-u", "-L", tmux_socket) if tmux_socket else ("-u",)
        self.deadlines = deadlines.from_env(env)
        self._hosts: dict[str, hosts.Host | HostFault] = {}
        self._clients: dict[str, tmux_control.ControlClient] = {}
        self._shells: dict[str, HostShell] = {}
        self._locks: dict[tuple[str, str], tuple[str, int]] = {}  # (host, lock) -> (token, stale ms)
        self._lease_due = 0.0

    def execute(self, destination: str, step: m.Step) -> m.Observation:
        host = self._host(destination)
        if self._locks and time.monotonic() >= self._lease_due:
            self._refresh_leases()
        if isinstance(step, m.Run):
            if isinstance(host, HostFault):
                return m.Proc(exit_code=None, stderr=str(host))
            return self._tmux(host, step) if step.tool == "tmux" else self._tool(host, step)
        if isinstance(step, (m.AcquireLock, m.ReleaseLock)):
            return self._lock(destination, host, step)
        if not isinstance(step, remote_files.FILE_STEPS):
            raise TypeError(f"a {step.op} step cannot name a host")  # pragma: no cover - the model allows none
        if isinstance(host, HostFault):
            return _unanswered(step, str(host))
        shell = self._shell(host)
        if isinstance(shell, HostFault):
            return _unanswered(step, str(shell))
        seen = hosts.file_step(host, step, self.env, shell=shell)
        return seen.unwrap() if not isinstance(seen, Failure) else _unanswered(step, str(seen.failure()))

    def _lock(self, destination: str, host: hosts.Host | HostFault, step: m.AcquireLock | m.ReleaseLock) -> m.Ack:
        """A lock directory on the host, held in the name of the run's shell there (``shell/run/remote_locks.py``)."""
        shell = host if isinstance(host, HostFault) else self._shell(host)
        if isinstance(shell, HostFault) or isinstance(host, HostFault):
            return m.Ack(ok=False, error=str(shell))
        call = self._caller(host, shell)
        if isinstance(step, m.ReleaseLock):
            held = self._locks.pop((destination, step.path), None)
            released = held is not None and remote_locks.release(call, step.path, held[0])
            return m.Ack(ok=released, error="" if released else "not_held")
        taken = remote_locks.acquire(call, shell.pid_on_host, step.path, timeout_ms=step.timeout_ms,
                                     retry_ms=step.retry_ms, stale_ms=step.stale_ms)
        if isinstance(taken, Failure):
            return m.Ack(ok=False, error=taken.failure())
        if not self._locks:
            self._lease_due = time.monotonic() + fs.lease_interval(step.stale_ms)
        self._locks[(destination, step.path)] = (taken.unwrap(), step.stale_ms)
        return m.Ack(ok=True)

    def _caller(self, host: hosts.Host, shell: HostShell) -> remote_locks.Caller:
        seconds = self.deadlines.seconds("ssh")
        return lambda argv: hosts.call(host, argv, self.env, timeout=seconds, shell=shell)

    def _refresh_leases(self) -> None:
        """Touch the lease of every lock held on a host, as the executor does for the ones here."""
        for (destination, path), (token, _stale) in self._locks.items():
            host = self._hosts.get(destination)
            shell = self._shells.get(destination)
            if isinstance(host, hosts.Host) and shell is not None and shell.usable():
                remote_locks.refresh(self._caller(host, shell), path, token)
        self._lease_due = time.monotonic() + min(fs.lease_interval(stale) for _, stale in self._locks.values())

    def release_all(self) -> None:
        """Release every lock still held on a host (a run that ends, however it ends)."""
        for (destination, path), (token, _stale) in list(self._locks.items()):
            host = self._hosts.get(destination)
            shell = self._shells.get(destination)
            if isinstance(host, hosts.Host) and shell is not None and shell.usable():
                remote_locks.release(self._caller(host, shell), path, token)
        self._locks.clear()  # a shell that ended took its locks' holder with it: they are abandoned there

    def _host(self, destination: str) -> hosts.Host | HostFault:
        if destination not in self._hosts:
            opened = hosts.Host.open(destination, hosts.shared_socket_dir(self.env),
                                     config_file=self.env.get(SSH_CONFIG_ENV) or None)
            self._hosts[destination] = opened.unwrap() if not isinstance(opened, Failure) else opened.failure()
            if not isinstance(opened, Failure):  # it connects while the first step (most often tmux's) is done
                launched = hosts.launch_shell(opened.unwrap(), self.env)
                if not isinstance(launched, Failure):
                    self._shells[destination] = launched.unwrap()
        return self._hosts[destination]

    def _tool(self, host: hosts.Host, step: m.Run, argv: tuple[str, ...] | None = None) -> m.Proc:
        words = argv if argv is not None else (step.tool, *step.args)
        if step.cwd is not None:
            words = ("sh", "-c", 'cd -- "$1" && shift && exec "$@"', "sh", step.cwd, *words)
        shell = self._shell(host)
        if isinstance(shell, HostFault):
            return m.Proc(exit_code=None, stderr=str(shell))
        answer = hosts.call(host, words, self.env, timeout=self.deadlines.seconds(step.tool), shell=shell)
        return answer.unwrap() if not isinstance(answer, Failure) else m.Proc(exit_code=None,
                                                                                stderr=str(answer.failure()))

    def _shell(self, host: hosts.Host) -> HostShell | HostFault:
        """The host's shell for this run, started on first use and again after one that ended."""
        shell = self._shells.get(host.destination)
        if shell is not None and not shell.pid_on_host:  # launched when the host was first named
            ready = shell.ready(time.monotonic() + self.deadlines.seconds("ssh"))
            if isinstance(ready, Failure):
                self._shells.pop(host.destination, None)
                fault: HostFault = ready.failure()
                return fault
        if shell is not None and shell.usable():
            return shell
        if shell is not None:
            shell.close()
        self._shells.pop(host.destination, None)
        started = hosts.start_shell(host, self.env)
        if isinstance(started, Failure):
            refused: HostFault = started.failure()
            return refused
        self._shells[host.destination] = started.unwrap()
        return started.unwrap()

    def _tmux(self, host: hosts.Host, step: m.Run) -> m.Proc:
        line = tmux_protocol.control_line(step.args) if step.cwd is None else None
        if line is not None:
            answered = self._through_client(host, line, step)
            if answered is not None:
                return answered
        return self._tool(host, step, ("tmux", *self.selector, *step.args))

    def _through_client(self, host: hosts.Host, line: bytes, step: m.Run) -> m.Proc | None:
        """The answer through the host's control client (started on first use), or None: run it over ssh."""
        seconds = self.deadlines.seconds("tmux")
        deadline = time.monotonic() + seconds
        client = self._clients.pop(host.destination, None)  # while it is asked: an interruption leaves none
        if client is not None and not client.usable():
            client.close()
            client = None
        if client is None:
            started = hosts.tmux_client(host, self.selector, self.env, deadline)
            if isinstance(started, tmux_control.StartFailure):
                return None  # no tmux server there yet (or none reachable): the command says which
            client = started
        answered, dropped = tmux_control.ask(client, line, step.args, step.args, deadline, seconds,
                                             f" on {host.destination}")
        if not dropped:
            self._clients[host.destination] = client
        return answered

    def end_run(self) -> None:
        """Release the locks held on hosts, close each host's control client and shell; a master connection
        in the shared folder (``hosts.shared_socket_dir``) stays up for ``ControlPersist``, so that the next
        run skips connecting."""
        self.release_all()
        for child in (*self._clients.values(), *self._shells.values()):
            child.close()
        self._clients.clear()
        self._shells.clear()
        for host in self._hosts.values():
            if isinstance(host, hosts.Host) and host.owns_socket_dir:
                hosts.close(host, self.env)  # a shared master outlives the run by ControlPersist, for the next
        self._hosts.clear()


def _unanswered(step: remote_files.FileStep, why: str) -> m.Observation:
    """A file step the host did not answer, as an observation that claims nothing."""
    if isinstance(step, m.ReadFile):
        return m.FileData(content=None, error=why)
    if isinstance(step, m.ListDir):
        return m.Listing(names=None, error=why)
    if isinstance(step, m.Stat):
        return m.Value(value="unavailable")
    if isinstance(step, m.RealPath):
        return m.Value(value="")  # no path: it matches none a program compares it with
    return m.Ack(ok=False, error=why)
