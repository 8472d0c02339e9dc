"""Another machine over OpenSSH (docs/hosts.md): which destination, the ``ssh`` arguments of one call, the
command line its login shell runs, and what ``ssh`` said when it did not get there.

* A destination is refused before it reaches ``ssh`` when ``ssh`` could read it as something else: a
  leading ``-`` (an option), white space or a control character, or a character no host name or
  ``~/.ssh/config`` alias has (:func:`check_destination`).
* Every call goes over the host's one master connection (``ControlMaster``/``ControlPersist`` on a
  socket of panefleet's), never prompts (``BatchMode``), gives up connecting after a deadline, and
  notices a connection that stopped answering (:func:`ssh_args`). The user's ``~/.ssh/config`` and
  ``known_hosts`` are honoured; a host key ``ssh`` cannot verify fails the call.
* ``ssh`` hands its command line to the remote user's login shell, which parses it again; so each
  argument is quoted for a POSIX shell (sh, dash, bash, zsh, ksh) and arrives literally, whatever it
  holds: ``$(…)``, backquotes, ``;``, quotes, newlines (:func:`remote_command`). A login shell that
  is not POSIX (fish, csh) parses quotes otherwise and is refused (:func:`check_login_shell`).
* ``ssh`` exits 255 for its own failures; its last words say which (:func:`fault_of`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Literal, get_args

from attrs import frozen
from returns.result import Failure, Result, Success

# user@host, host, or an ssh_config alias; a bracketed IPv6 literal. Nothing ssh reads as an option.
_DESTINATION = re.compile(r"(?:[A-Za-z0-9._][A-Za-z0-9._-]{0,63}@)?"
                          r"(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,252}|\[[0-9A-Fa-f:.]{2,45}\])")
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")  # a word every POSIX shell reads as itself
POSIX_SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ksh", "ksh93", "mksh", "ash", "busybox", "rbash"})
CONNECT_TIMEOUT_S = 10
KEEPALIVE_S = 5  # a connection that answers no keepalive for 2 of these is dropped, not waited on
MASTER_PERSIST_S = 60  # the master outlives its last call by this long, for the next run


FaultKind = Literal["bad_destination", "unreachable", "auth_refused", "host_key_unknown", "host_key_changed",
                    "connection_dropped", "login_shell_unsupported", "ssh_failed"]


@frozen
class HostFault:
    """Why a host could not be reached or used: a stable ``kind``, the host, and ``detail`` (ssh's own
    words, or the fingerprint of a host key that changed)."""

    kind: FaultKind
    host: str
    detail: str = ""

    @property
    def code(self) -> str:
        return f"host_{self.kind}:{self.host}"

    def __str__(self) -> str:
        return f"{self.code}: {_FAULT_WORDS[self.kind]}" + (f" ({self.detail})" if self.detail else "")


_FAULT_WORDS: dict[FaultKind, str] = {
    "bad_destination": "not an OpenSSH destination panefleet passes on ([user@]host or a ~/.ssh/config alias)",
    "unreachable": "the host could not be reached",
    "auth_refused": "the host refused the login (no key it accepts, and panefleet never prompts)",
    "host_key_unknown": "the host's key is not in known_hosts; connect once with ssh and check its fingerprint",
    "host_key_changed": "the host presents another key than known_hosts records: refused",
    "connection_dropped": "the connection to the host was lost",
    "login_shell_unsupported": "the remote login shell is not a POSIX shell, so arguments cannot be passed literally",
    "ssh_failed": "ssh failed",
}


def fault_named(text: str, host: str) -> FaultKind | None:
    """The fault an error names for ``host`` (a :class:`HostFault`'s code in it), or None: what a run there
    read is then unknown, not absent (``shell/cli/fleet.py`` ``plan``, ``shell/cli/listing.py``)."""
    return next((kind for kind in get_args(FaultKind) if f"host_{kind}:{host}" in text), None)


# What to do about each fault (``panefleet doctor --host``).
FAULT_FIX: dict[FaultKind, str] = {
    "bad_destination": "name the host as [user@]host or by a Host alias of ~/.ssh/config",
    "unreachable": "check the host's name and that sshd runs there: `ssh HOST true` must work without a prompt",
    "auth_refused": "give the host your public key (`ssh-copy-id HOST`) or name the key in ~/.ssh/config",
    "host_key_unknown": "connect once with `ssh HOST`, check the fingerprint it shows with the host's owner, accept it",
    "host_key_changed": "if the host was reinstalled, check the new fingerprint with its owner, then "
                        "`ssh-keygen -R HOST` and connect once with `ssh HOST`; otherwise do not connect",
    "connection_dropped": "run the command again; if it keeps happening, check the network to the host",
    "login_shell_unsupported": "make a POSIX shell the login shell on the host (`chsh -s /bin/bash`)",
    "ssh_failed": "run `ssh -v HOST true` to see why ssh fails",
}


def check_destination(text: str) -> Result[str, HostFault]:
    """``text`` when it is a destination ``ssh`` reads only as a host, else a ``bad_destination`` fault."""
    if _DESTINATION.fullmatch(text) is None:
        return Failure(HostFault("bad_destination", text.encode("unicode_escape").decode("ascii")[:80]))
    return Success(text)


def quote(word: str) -> str:
    """``word`` as one POSIX shell word that reads back as exactly ``word``."""
    if _PLAIN.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def remote_command(argv: Sequence[str]) -> Result[str, str]:
    """The command line that makes a POSIX login shell run ``argv`` with every argument literal; refused
    for no argument, or one holding NUL (no shell can pass it on)."""
    if not argv:
        return Failure("remote_command_empty")
    if any("\0" in word for word in argv):
        return Failure("remote_argument_holds_nul")
    return Success(" ".join(quote(word) for word in argv))


# A tmux control client on a host answers through a relay that reads its output to the end. tmux (3.3a)
# tells a control client to exit only once all its output is written; when the reader of that output is
# gone with some still unwritten (the run's ssh session ended, a SIGKILLed run's), the client stays
# attached for good, and a ``kill-server`` waits on it. The relay's first ``cat`` hands the output to
# ssh; once that fails, the second swallows the rest, so the client ends when its input does
# (tests/core/test_hosts.py). Here panefleet's own death ends its client (shell/run/process.py).
_CONTROL_RELAY = 'tmux "$@" | { cat; exec cat >/dev/null; }'


def control_client_argv(tmux_args: Sequence[str]) -> tuple[str, ...]:
    """The words that start a tmux control client with ``tmux_args`` on a host, through the relay."""
    return ("sh", "-c", _CONTROL_RELAY, "sh", *tmux_args)


def check_login_shell(host: str, shell: str) -> Result[str, HostFault]:
    """``shell`` (the remote ``$SHELL``) when it parses quotes as POSIX shells do."""
    name = posixpath.basename(shell.strip())
    if name not in POSIX_SHELLS:
        return Failure(HostFault("login_shell_unsupported", host, shell.strip() or "no $SHELL"))
    return Success(shell.strip())


def control_path(socket_dir: str) -> str:
    """The master connection's socket: ``%C`` is ssh's hash of local host, remote host, port and user,
    so one socket per destination and a short path (sockets are limited to about 100 bytes)."""
    return posixpath.join(socket_dir, "%C")


def config_args(config_file: str | None) -> tuple[str, ...]:
    """``-F FILE`` when a run names its own ssh configuration, else nothing: ``~/.ssh/config`` applies."""
    return () if config_file is None else ("-F", config_file)


def ssh_args(destination: str, socket_dir: str, command: str, *, config_file: str | None = None,
             connect_timeout_s: int = CONNECT_TIMEOUT_S) -> tuple[str, ...]:
    """The arguments of ``ssh`` for one call of ``command`` (from :func:`remote_command`) on
    ``destination`` over its master connection. ``--`` ends ssh's options: the destination was checked,
    and nothing after it is read as one."""
    return (*config_args(config_file), "-o", "BatchMode=yes", "-o", f"ConnectTimeout={connect_timeout_s}",
            "-o", "ControlMaster=auto", "-o", f"ControlPath={control_path(socket_dir)}",
            "-o", f"ControlPersist={MASTER_PERSIST_S}",
            "-o", f"ServerAliveInterval={KEEPALIVE_S}", "-o", "ServerAliveCountMax=2",
            "-T", destination, "--", command)


def master_args(command: Literal["check", "exit"], destination: str, socket_dir: str,
                config_file: str | None = None) -> tuple[str, ...]:
    """The arguments of ``ssh`` that ask the master connection to ``destination`` whether it is up
    (``check``) or end it (``exit``)."""
    return (*config_args(config_file), "-o", f"ControlPath={control_path(socket_dir)}", "-O", command, destination)


FINGERPRINT = re.compile(r"\bSHA256:[A-Za-z0-9+/]{43}\b")
_UNREACHABLE = ("connection refused", "connection timed out", "no route to host", "network is unreachable",
                "could not resolve hostname", "name or service not known", "operation timed out",
                "timed out during banner exchange", "temporary failure in name resolution")
_DROPPED = ("connection closed by", "closed by remote host", "connection reset", "broken pipe", "not responding", "client_loop:",
            "mux_client_request_session", "lost connection")


def fault_of(host: str, exit_code: int | None, stderr: str) -> HostFault | None:
    """What ``ssh`` exiting ``exit_code`` with ``stderr`` says went wrong in reaching ``host``; None when
    it says nothing went wrong. A call that ran out of time (``exit_code`` None) is ``unreachable``.
    An exit of 255 without a word is the command's own answer or a master connection that ended
    under the call (its client then says nothing): only asking the master tells them apart
    (``shell/run/hosts.py``)."""
    words = stderr.lower()
    if exit_code is None:
        return HostFault("unreachable", host, stderr.strip()[-200:] or "no answer within the deadline")
    if exit_code != 255:
        return None
    last = _last_line(stderr)
    if "remote host identification has changed" in words or "host key for" in words and "has changed" in words:
        found = FINGERPRINT.search(stderr)
        return HostFault("host_key_changed", host, found.group() if found else last)
    if "host key verification failed" in words:
        return HostFault("host_key_unknown", host, last)
    if "permission denied" in words or "too many authentication failures" in words:
        return HostFault("auth_refused", host, last)
    if any(marker in words for marker in _UNREACHABLE):
        return HostFault("unreachable", host, last)
    if any(marker in words for marker in _DROPPED):
        return HostFault("connection_dropped", host, last)
    if not words.strip():
        return None  # the command itself exited 255 and ssh said nothing
    return HostFault("ssh_failed", host, last)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
