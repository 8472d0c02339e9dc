"""The tmux control-mode protocol as ``shell/run/tmux_control.py``'s client speaks it: which steps may
go through a client, how their arguments are written on a control line, and how an answer block
becomes the ``m.Proc`` a spawned ``tmux`` gives.

Quoting. tmux's argv path (a spawned client) takes each argument as it is, except that an argument
ending in ``;`` ends the command there (``\\;`` keeps a literal ``;``; cmd-parse.y
``cmd_parse_from_arguments``): such steps are spawned, so they mean what they always meant. Every
other argument is written in single quotes, inside which tmux's parser takes every byte literally
(``#``, ``;``, ``$``, ``~``, braces, backslashes, ``%`` at the start of a token); a ``'``, a newline
(which would end the line) and other control characters go in a double-quoted octal escape
(``"\047"``, ``"\012"``) joined to the same token. Only exact bytes reach the command, so format
expansion (``#{pane_id}``) happens in tmux exactly as for a spawned call.
``tests/core/test_tmux_control.py`` compares the two paths for generated arguments.

Answers. A command's reply is the block ``%begin T N 1`` … ``%end T N 1`` (``%error`` when it failed);
``after-*`` hooks it set off answer in blocks flagged ``0``; notifications (``%session-changed``,
``%exit``, …) only ever come between blocks. Each command is followed on the same write by
``display-message -p '#{client_session}'`` (:data:`SENTINEL`): its block marks the point where
everything the command caused has answered — a spawned client likewise waits for the hooks and
prints their output — and an empty session name says tmux is detaching the client because the
command destroyed its session (tmux may still run commands queued for such a client, or not), so
nothing more is sent to it and the next step starts a new client. The observation: the ``%end``
bodies as stdout, the ``%error`` bodies as stderr, exit status 1 when any block failed, else 0;
each line ends in ``\n`` as a spawned client writes it. A command tmux cannot parse (an unknown
flag) is reported with the same message as to a spawned client, without control mode's
``parse error:`` prefix.
A block ends only at a line repeating its own ``%begin`` time, number and flags, so output that
merely looks like a marker (a captured screen showing ``%end …``) stays output. Within a ``%error``
block tmux does not separate what was printed from the error, so all of it is stderr.
"""

from __future__ import annotations

import os
import re
import select
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # only the standard library at import (cli.py reads mode_from_env for any command)
    from pure import model as m

Mode = Literal["control", "spawn"]
MODES: tuple[Mode, ...] = ("control", "spawn")

# Commands whose answer and effect do not depend on which client sends them or whether it is
# attached, given the targets panefleet passes (``-t %ID``, ``-a``). ``display-message`` also
# qualifies with ``-p`` first (its message is printed, not shown on a client's status line).
CONTROL_VERBS = frozenset({
    "list-panes", "list-windows", "list-sessions", "has-session", "show-option", "show-options",
    "set-option", "capture-pane", "send-keys", "kill-pane",
})
# Commands that change nothing: one whose client died after it was sent is simply spawned again.
READ_ONLY_VERBS = frozenset({
    "list-panes", "list-windows", "list-sessions", "has-session", "show-option", "show-options",
    "capture-pane", "display-message",
})
# A spawned client refuses a command whose packed arguments exceed tmux's message size (16 KiB,
# "command too long"); longer steps are spawned, so that they fail or pass exactly as before.
MAX_ARGV_BYTES = 8192
ATTACH: tuple[str, ...] = ("-N", "-C", "attach-session", "-E", "-f", "no-output,ignore-size")
# Sent after every command: its block marks the end of the command's answer, and it names the
# client's session, which is empty once tmux is detaching the client (its session was destroyed).
SENTINEL = b"display-message -p '#{client_session}'\n"
# tmux's control reader reports a command it cannot parse (an unknown flag, too many arguments) with
# this prefix (control.c ``control_error``); a spawned client reports the same message without it.
PARSE_ERROR = b"parse error: "

_SPECIAL = re.compile(rb"['\x00-\x1f\x7f]+")
_BEGIN = re.compile(rb"%begin ([0-9]+) ([0-9]+) ([0-9]+)")
_EXIT = re.compile(rb"^%exit( |$)", re.MULTILINE)


def quote(arg: bytes) -> bytes:
    """One token of tmux's command parser that stands for exactly ``arg`` (no NUL)."""
    if not arg:
        return b"''"
    parts: list[bytes] = []
    at = 0
    for special in _SPECIAL.finditer(arg):
        if special.start() > at:
            parts.append(b"'" + arg[at:special.start()] + b"'")
        parts.append(b'"' + b"".join(b"\\%03o" % byte for byte in special.group()) + b'"')
        at = special.end()
    if at < len(arg):
        parts.append(b"'" + arg[at:] + b"'")
    return b"".join(parts)


def control_line(args: Sequence[str]) -> bytes | None:
    """The control-mode line for the tmux command ``args``, or None when it must be spawned: a verb
    not in :data:`CONTROL_VERBS`, an argument ending in ``;`` (tmux's argv path splits the command
    there), a NUL or a lone surrogate (no spawned argument can hold one either), or arguments longer
    than :data:`MAX_ARGV_BYTES`."""
    if not args:
        return None
    verb = args[0]
    if verb not in CONTROL_VERBS and not (verb == "display-message" and args[1:2] == ("-p",)):
        return None
    try:
        encoded = [arg.encode("utf-8") for arg in args]
    except UnicodeEncodeError:
        return None
    if sum(len(arg) + 1 for arg in encoded) > MAX_ARGV_BYTES:
        return None
    if any(b"\0" in arg or arg.endswith(b";") for arg in encoded):
        return None
    return b" ".join([encoded[0], *(quote(arg) for arg in encoded[1:])]) + b"\n"


def closes_client(args: Sequence[str]) -> bool:
    """A step before which the client must be closed: ``kill-server`` (a control client still
    attached when its server is killed can be left behind)."""
    return args[:1] == ("kill-server",)


# ------------------------------------------------------------------------------------------ answers


class _TimedOut(Exception):
    pass


class _Lost(Exception):
    """The client's output ended (it exited) or broke the protocol."""


Block = tuple[bool, bytes]  # (failed, body: every line with its "\n")


def answer(reply: Block, hooks: Sequence[Block] = ()) -> m.Proc:
    """The observation a spawned client gives for a command's reply block and its hooks' blocks."""
    from pure import model as m

    out = bytearray()
    err = bytearray()
    code = 0
    for failed, body in (reply, *hooks):
        if failed:
            err += body
            code = 1
        else:
            out += body
    return m.Proc(exit_code=code, stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"))


class _Stream:
    """The client's stdout as lines and blocks, read under a deadline (``time.monotonic()``)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.pos = 0
        self.eof = False
        self.exiting = False  # tmux said %exit
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def _fill(self, deadline: float, *, compact: bool = True) -> None:
        if self.eof:
            raise _Lost("the client exited")
        chunk = self._read(deadline)
        if not chunk:
            self.eof = True
            raise _Lost("the client exited")
        if compact and self.pos and self.pos >= len(self.buf) // 2:
            del self.buf[:self.pos]
            self.pos = 0
        self.buf += chunk

    def _read(self, deadline: float) -> bytes:
        """The next chunk of output (empty at the end), waiting until ``deadline``."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _TimedOut
            if self._poll.poll(max(1, int(remaining * 1000 + 0.999))):
                try:
                    return os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    continue
                except OSError as exc:
                    raise _Lost(f"reading from the client failed: {exc.strerror or exc}") from None

    def look(self) -> None:
        """Between commands: take in what has already arrived, without waiting, and note an end of
        output or an ``%exit`` (tmux detached the client since the last answer)."""
        while not self.eof and self._poll.poll(0):
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
                break
            self.buf += chunk
        if not self.exiting and _EXIT.search(self.buf, self.pos):
            self.exiting = True

    def line(self, deadline: float) -> bytes:
        while True:
            end = self.buf.find(b"\n", self.pos)
            if end >= 0:
                line = bytes(self.buf[self.pos:end])
                self.pos = end + 1
                return line
            self._fill(deadline)

    def take(self, count: int, deadline: float) -> bytes:
        """The next ``count`` bytes, whatever they are."""
        while len(self.buf) - self.pos < count:
            self._fill(deadline)
        taken = bytes(self.buf[self.pos:self.pos + count])
        self.pos += count
        return taken

    def block(self, begin: bytes, deadline: float) -> tuple[bytes, bool, bytes]:
        """After a ``%begin`` line: (flags, failed, body). The block ends at the first line that is
        ``%end`` or ``%error`` followed by the same time, number and flags."""
        found = _BEGIN.fullmatch(begin)
        if found is None:
            raise _Lost(f"not a control-mode block: {begin[:80]!r}")
        triple = begin[len(b"%begin "):]
        ends = (b"\n%end " + triple + b"\n", b"\n%error " + triple + b"\n")
        start = self.pos - 1  # the newline that ended the %begin line
        search = start
        while True:
            hits = [(at, failed) for failed, marker in enumerate(ends) if (at := self.buf.find(marker, search)) >= 0]
            if hits:
                at, failed = min(hits)
                body = bytes(self.buf[self.pos:at + 1])
                self.pos = at + len(ends[failed])
                return found.group(3), bool(failed), body
            search = max(start, len(self.buf) - len(ends[1]) + 1)
            self._fill(deadline, compact=False)  # the offsets above stay valid

    def next_block(self, deadline: float) -> tuple[bytes, bool, bytes]:
        """The next block, skipping notifications (``%exit`` is noted)."""
        while True:
            line = self.line(deadline)
            if line.startswith(b"%begin "):
                return self.block(line, deadline)
            if line == b"%exit" or line.startswith(b"%exit "):
                self.exiting = True
            elif not line.startswith(b"%"):
                raise _Lost(f"unexpected output outside a block: {line[:80]!r}")


def collect(stream: _Stream, deadline: float) -> tuple[m.Proc, bool]:
    """One command's answer from ``stream`` and whether the client can take another command.

    The answer: the command's reply (the first block flagged 1; a parse error loses tmux's control
    prefix) and the blocks of the after-hooks it set off (flagged 0), up to the :data:`SENTINEL`'s
    block (flagged 1), which must name a session for the client to stay usable. A client that ends
    after the reply (the command destroyed its session) has still answered. Raises ``_Lost`` when
    there is no reply, ``_TimedOut`` at ``deadline``."""
    reply: Block | None = None
    hooks: list[Block] = []
    try:
        while True:
            flags, failed, body = stream.next_block(deadline)
            if flags != b"1":
                if reply is not None:
                    hooks.append((failed, body))
            elif reply is None:
                if failed and body.startswith(PARSE_ERROR):
                    body = body[len(PARSE_ERROR):]
                reply = (failed, body)
            else:
                return answer(reply, hooks), not failed and body not in (b"", b"\n")
    except _Lost:
        if reply is not None and stream.eof:
            return answer(reply, hooks), False
        raise
