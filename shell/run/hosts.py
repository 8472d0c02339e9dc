"""Calls on another machine over OpenSSH, each bounded (``shell/run/process.py``), over one master
connection per host (docs/hosts.md). What to send and how ``ssh`` failed are decided in ``pure/hosts.py``;
this module only runs ``ssh`` and ``ssh-keygen`` and reads their answers.

A host is identified at the start of a run by what it cannot fake to a run that reached it: the host key
``ssh`` verified the connection with (its fingerprint, from the ``known_hosts`` the user's configuration
names), the machine's ``/etc/machine-id`` and its name; and the login shell is checked to be one that
passes quoted arguments on literally.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from collections.abc import Mapping, Sequence

from attrs import frozen
from returns.result import Failure, Result, Success

from pure import hosts, remote_files
from pure import model as m
from shell.run import deadlines, tmux_control
from shell.run.host_shell import HostShell, ShellLost, ShellTimedOut, shell_command
from shell.run.process import run_process, spawn_control_client, which

# One line per fact, so that no value can be taken for another: machine id, host name, login shell.
_IDENTIFY = ("sh", "-c", 'cat /etc/machine-id 2>/dev/null || echo; uname -n; printf "%s\\n" "${SHELL:-}"')


@frozen
class Host:
    """A destination checked by ``pure/hosts.py``, the private folder of its master connection's socket,
    and the ssh configuration file that describes it (None: the user's ``~/.ssh/config``)."""

    destination: str
    socket_dir: str
    config_file: str | None = None
    owns_socket_dir: bool = False  # made for this host by ``open``: ``close`` removes it

    @classmethod
    def open(cls, destination: str, socket_dir: str | None = None,
             config_file: str | None = None) -> Result[Host, hosts.HostFault]:
        """The host ``destination`` names (refused when ``ssh`` could read it as anything but a host),
        its socket in ``socket_dir`` (a new folder only this user can enter when none is given)."""
        checked = hosts.check_destination(destination)
        if isinstance(checked, Failure):
            return Failure(checked.failure())
        if socket_dir is not None:
            return Success(cls(destination, socket_dir, config_file))
        return Success(cls(destination, tempfile.mkdtemp(prefix="pf-ssh-"), config_file, owns_socket_dir=True))


@frozen
class HostIdentity:
    """What a run checks a host by: the fingerprints of its host keys ``known_hosts`` holds (one of which
    ``ssh`` verified), its machine id and name, and its login shell."""

    host: str
    host_keys: tuple[str, ...]
    machine_id: str
    name: str
    login_shell: str


def call(host: Host, argv: Sequence[str], env: Mapping[str, str], timeout: float | None = None,
         stdin: bytes | None = None, shell: HostShell | None = None) -> Result[m.Proc, hosts.HostFault]:
    """``argv`` run on ``host`` with every argument literal and ``stdin`` on its standard input; its
    answer, or why the host was not reached (the call keeps its deadline: ``PANEFLEET_CALL_TIMEOUT``,
    ``ssh``). Through ``shell`` when one is given (:func:`start_shell`), else in a session of its own."""
    command = hosts.remote_command(argv)
    if isinstance(command, Failure):
        return Failure(hosts.HostFault("ssh_failed", host.destination, command.failure()))
    if shell is not None:
        return _through(host, shell, argv, env, timeout, stdin)
    proc = run_process("ssh", hosts.ssh_args(host.destination, host.socket_dir, command.unwrap(),
                                             config_file=host.config_file),
                       env=env, timeout=timeout, stdin=stdin)
    fault = hosts.fault_of(host.destination, proc.exit_code, proc.stderr)
    if fault is None and proc.exit_code == 255 and not _master_up(host, env):
        fault = hosts.HostFault("connection_dropped", host.destination, "its connection ended during the call")
    return Failure(fault) if fault is not None else Success(proc)


def start_shell(host: Host, env: Mapping[str, str], timeout: float | None = None) -> Result[HostShell,
                                                                                        hosts.HostFault]:
    """The shell a run keeps on ``host`` (``shell/run/host_shell.py``), over its master connection."""
    seconds = deadlines.from_env(env).seconds("ssh") if timeout is None else timeout
    launched = launch_shell(host, env)
    return launched if isinstance(launched, Failure) else launched.unwrap().ready(time.monotonic() + seconds)


def launch_shell(host: Host, env: Mapping[str, str]) -> Result[HostShell, hosts.HostFault]:
    """:func:`start_shell` without waiting for it to be ready (``HostShell.ready`` waits)."""
    ssh = which("ssh", env)
    if ssh is None:
        return Failure(hosts.HostFault("ssh_failed", host.destination, "ssh: command not found on PATH"))
    args = hosts.ssh_args(host.destination, host.socket_dir, shell_command(), config_file=host.config_file)
    return HostShell.launch(host.destination, ssh, args, env)


def _through(host: Host, shell: HostShell, argv: Sequence[str], env: Mapping[str, str], timeout: float | None,
             stdin: bytes | None) -> Result[m.Proc, hosts.HostFault]:
    seconds = deadlines.from_env(env).seconds("ssh") if timeout is None else timeout
    try:
        return Success(shell.call(argv, stdin, time.monotonic() + seconds))
    except ShellTimedOut:
        return Failure(hosts.HostFault("unreachable", host.destination,
                                       f"no answer within the deadline ({deadlines.describe(seconds)} s)"))
    except ShellLost as lost:
        if not _master_up(host, env):
            return Failure(hosts.HostFault("connection_dropped", host.destination, "its connection ended during the call"))
        return Failure(hosts.HostFault("ssh_failed", host.destination, f"the shell on the host ended ({lost})"))


def file_step(host: Host, step: remote_files.FileStep, env: Mapping[str, str], timeout: float | None = None,
              shell: HostShell | None = None) -> Result[m.Observation, hosts.HostFault | str]:
    """A file step done on ``host`` (``pure/remote_files.py``): what the local executor would observe for
    it there, or why the host was not reached or did not answer."""
    planned = remote_files.call_for(step)
    answer = call(host, planned.argv, env, timeout, stdin=planned.stdin, shell=shell)
    if isinstance(answer, Failure):
        return Failure(answer.failure())
    return remote_files.observe(step, answer.unwrap())


def _master_up(host: Host, env: Mapping[str, str]) -> bool:
    check = hosts.master_args("check", host.destination, host.socket_dir, host.config_file)
    return run_process("ssh", check, env=env, timeout=10.0).exit_code == 0


def identify(host: Host, env: Mapping[str, str], timeout: float | None = None) -> Result[HostIdentity,
                                                                                        hosts.HostFault]:
    """The host's identity, read over its master connection (which this first call opens)."""
    answer = call(host, _IDENTIFY, env, timeout)
    if isinstance(answer, Failure):
        return Failure(answer.failure())
    return identity_from(host, answer.unwrap().stdout, env)


IDENTIFY_PROGRAM = _IDENTIFY[2]  # for a call that reads more at once: its answer first (``identity_from``)


def identity_from(host: Host, answer: str, env: Mapping[str, str]) -> Result[HostIdentity, hosts.HostFault]:
    """The identity :data:`IDENTIFY_PROGRAM` answered, with the host keys ``known_hosts`` holds for it."""
    lines = answer.split("\n")
    machine_id, name, shell = (lines + ["", "", ""])[:3]
    checked = hosts.check_login_shell(host.destination, shell)
    if isinstance(checked, Failure):
        return Failure(checked.failure())
    return Success(HostIdentity(host=host.destination, host_keys=known_keys(host, env),
                                machine_id=machine_id.strip(), name=name.strip(), login_shell=checked.unwrap()))


def known_keys(host: Host, env: Mapping[str, str]) -> tuple[str, ...]:
    """The fingerprints ``known_hosts`` records for the host, as its ssh configuration resolves it
    (``ssh -G``: host name, port, known-hosts files); a connection ``ssh`` made was verified against
    one of them."""
    destination = host.destination
    config = run_process("ssh", (*hosts.config_args(host.config_file), "-G", destination), env=env)
    if config.exit_code != 0:
        return ()
    settings: dict[str, str] = {}
    for line in config.stdout.splitlines():
        key, _, value = line.partition(" ")
        settings.setdefault(key, value)
    name, port = settings.get("hostname", destination), settings.get("port", "22")
    lookup = name if port == "22" else f"[{name}]:{port}"
    found: set[str] = set()
    files = [*settings.get("userknownhostsfile", "").split(), *settings.get("globalknownhostsfile", "").split()]
    for file in files:
        if os.path.isfile(file):
            listed = run_process("ssh-keygen", ("-l", "-F", lookup, "-f", file), env=env)
            found.update(hosts.FINGERPRINT.findall(listed.stdout))
    return tuple(sorted(found))


def tmux_client(host: Host, selector: tuple[str, ...], env: Mapping[str, str],
                deadline: float) -> tmux_control.ControlClient | tmux_control.StartFailure:
    """A tmux control-mode client (``shell/run/tmux_control.py``) of the host's tmux server named by
    ``selector`` (``-L NAME``), through the master connection: one session on the host for a whole stream
    of tmux commands, each then answered as fast as the link allows."""
    ssh = which("ssh", env)
    if ssh is None:
        return tmux_control.StartFailure("unavailable", "ssh: command not found on PATH")

    def over_ssh(path: str, args: tuple[str, ...], env: Mapping[str, str], stdin: int, stdout: int,
                 stderr: int) -> object:
        command = hosts.remote_command(hosts.control_client_argv(args)).unwrap()  # never empty, no NUL
        return spawn_control_client(path, hosts.ssh_args(host.destination, host.socket_dir, command,
                                                         config_file=host.config_file), env, stdin, stdout, stderr)

    return tmux_control.ControlClient.start(ssh, selector, env, deadline, over_ssh)


def shared_socket_dir(env: Mapping[str, str]) -> str | None:
    """The folder where the master connections of every run live, so that the next run finds the last one's
    master still up (``ControlPersist``) and skips connecting: ``$XDG_RUNTIME_DIR/pf-ssh``, else
    ``/tmp/pf-ssh-UID`` (short: a socket path holds about 100 bytes); made private (0700) when missing. None when it is not this user's own, private
    folder (a link, another owner, open to others): a run then makes a folder of its own."""
    runtime = env.get("XDG_RUNTIME_DIR", "")
    folder = os.path.join(runtime, "pf-ssh") if runtime.startswith("/") else f"/tmp/pf-ssh-{os.getuid()}"
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        seen = os.lstat(folder)
    except OSError:
        return None
    private = stat.S_ISDIR(seen.st_mode) and seen.st_uid == os.getuid() and not seen.st_mode & 0o077
    return folder if private else None


def close(host: Host, env: Mapping[str, str]) -> None:
    """End the master connection (a run that is done with the host; one that is gone already is fine), and
    remove the socket's folder when ``open`` made it."""
    run_process("ssh", hosts.master_args("exit", host.destination, host.socket_dir, host.config_file), env=env,
                timeout=10.0)
    if host.owns_socket_dir:
        shutil.rmtree(host.socket_dir, ignore_errors=True)
