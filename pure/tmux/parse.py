"""The pane table: strict parsing of ``list-panes -a``, the problem classes, and the verdict on one pane."""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple, TypeGuard, Union

from attrs import frozen
from returns.result import Failure, Result, Success

from pure import model as m
from pure.model import MAX_SAFE_INTEGER
from pure.tmux import facts
from pure.tmux.prose import describe

PANE_ID_RE = re.compile(r"%[0-9]+")
OWNER_OPTION = "@omx_team_pane_owner_id"
PANE_FORMAT = facts.PANES.format
LIST_PANES: tuple[str, ...] = ("list-panes", "-a", "-F", PANE_FORMAT)

# What "trimmed" means for tmux's stdout and stderr: exactly these code points are removed from both
# ends. It is the set ECMAScript's String.prototype.trim removes (oh-my-codex trims tmux answers with
# it), written out so that no language's built-in decides.
WHITESPACE = frozenset(
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
DIGITS = frozenset("0123456789")


def trim(text: str) -> str:
    """``text`` without the :data:`WHITESPACE` code points at either end."""
    start, end = 0, len(text)
    while start < end and text[start] in WHITESPACE:
        start += 1
    while end > start and text[end - 1] in WHITESPACE:
        end -= 1
    return text[start:end]


def _digits(text: str) -> bool:
    """One or more of the ASCII digits 0-9 (nothing else: no sign, no other script's digits)."""
    return text != "" and all(ch in DIGITS for ch in text)


def is_pane_id(value: object) -> TypeGuard[str]:
    """``%`` followed by one or more ASCII digits."""
    return isinstance(value, str) and len(value) >= 2 and value[0] == "%" and _digits(value[1:])


def is_positive_pid(value: object) -> bool:
    """A positive safe integer (JSON ``true`` is not a pid)."""
    return type(value) is int and 0 < value <= MAX_SAFE_INTEGER


# ------------------------------------------------------------------------------------------ problems


@frozen(kw_only=True)
class MalformedSnapshot:
    """The ``list-panes`` answer is not a pane table; ``row`` (1-based) is the first bad row.

    ``field``/``rule``: ``row``/``field_count`` (not 3 or 5 tab-separated fields, or not as many as the
    first row; ``fields`` says how many), ``pane_id``/``syntax`` (not ``%`` + ASCII digits),
    ``pane_id``/``duplicate`` (listed twice), ``pane_dead``/``syntax`` (not ``0`` or ``1``),
    ``pane_pid``/``syntax`` (not ASCII digits), ``pane_pid``/``range`` (0 or above 2^53-1),
    ``tmux_server``/``syntax`` (the server's pid or start time not a positive safe integer),
    ``tmux_server``/``differs`` (another server than the first row's), ``pane_pid``/``empty`` (the target's
    own row has no pid).
    """

    code: Literal["malformed_snapshot"] = "malformed_snapshot"
    row: int
    field: Literal["row", "pane_id", "pane_dead", "pane_pid", "tmux_server"]
    rule: Literal["field_count", "syntax", "duplicate", "range", "empty", "differs"]
    fields: int


@frozen(kw_only=True)
class QueryFailed:
    """tmux did not answer: a non-zero exit, or ``exit_code`` null (not started or timed out).
    ``stderr`` is tmux's stderr, trimmed."""

    code: Literal["query_failed"] = "query_failed"
    exit_code: int | None
    stderr: str


@frozen(kw_only=True)
class InvalidPaneId:
    """The target is not ``%`` + ASCII digits; tmux is not asked."""

    code: Literal["invalid_pane_id"] = "invalid_pane_id"


@frozen(kw_only=True)
class PidUnpinned:
    """The request pinned no positive safe integer pid for the pane, so it may not be killed."""

    code: Literal["pid_unpinned"] = "pid_unpinned"
    pinned_pid: int | None
    found_pid: int


@frozen(kw_only=True)
class PidMismatch:
    """The live pane's pid is not the pinned one (the id was reused)."""

    code: Literal["pid_mismatch"] = "pid_mismatch"
    pinned_pid: int
    found_pid: int


@frozen(kw_only=True)
class KillFailed:
    """``kill-pane`` did not succeed; ``stderr`` trimmed."""

    code: Literal["kill_failed"] = "kill_failed"
    exit_code: int | None
    stderr: str


@frozen(kw_only=True)
class StillLive:
    """The proof after ``kill-pane`` still lists the pane live (with ``pid``)."""

    code: Literal["still_live"] = "still_live"
    pid: int


@frozen(kw_only=True)
class ServerReplaced:
    """A pane was pinned on tmux server ``pinned``, and the listing comes from server ``found`` (None: the
    listing names no server, so it cannot prove a pane pinned on one). Servers are written ``PID@START``
    (``server_of``)."""

    code: Literal["server_replaced"] = "server_replaced"
    pinned: str
    found: str | None


ProofProblem = Union[MalformedSnapshot, QueryFailed, InvalidPaneId, ServerReplaced]
OwnerProblem = Union[QueryFailed, InvalidPaneId]

# ---------------------------------------------------------------------------------------- verdicts


class PaneRow(NamedTuple):
    pane_id: str
    dead: bool
    pid: int | None  # None only for tmux's empty panes
    row: int = 0
    server: str | None = None  # the server that listed it (``server_of``); None: the listing names none


def server_of(pid_field: str, start_field: str) -> str | None:
    """A tmux server as a pane is pinned on it: ``PID@START``, its pid and start time (seconds since the
    epoch; a restarted server has another pid or start, a reused pid another start); None when either is
    not a positive safe integer."""
    pid, start = parse_pid(pid_field), parse_pid(start_field)
    return None if pid is None or start is None else f"{pid}@{start}"


def pid_problem(field: str) -> Literal["syntax", "range"] | None:
    """Why a non-empty ``pane_pid`` field is not a pid, or None when it is one. Leading zeros are
    accepted; the value is compared without converting arbitrarily long digit strings."""
    if not _digits(field):
        return "syntax"
    significant = field.lstrip("0")
    if significant == "" or len(significant) > 16 or int(significant) > MAX_SAFE_INTEGER:
        return "range"
    return None


def parse_pid(field: str) -> int | None:
    return int(field.lstrip("0")) if pid_problem(field) is None else None


def _bad(row: int, fields: int, field: Any, rule: Any) -> Failure[MalformedSnapshot]:
    return Failure(MalformedSnapshot(row=row, field=field, rule=rule, fields=fields))



def parse_pane_table(stdout: str) -> Result[dict[str, PaneRow], MalformedSnapshot]:
    """Parse ``list-panes -a -F PANE_FORMAT`` output strictly. Failure carries the first problem:
    rows in order, and within a row the checks in the order of :class:`MalformedSnapshot`."""
    rows: dict[str, PaneRow] = {}
    width: int | None = None  # 5 fields when the rows name their server, 3 when not (the seed's stub tmux)
    first_server: str | None = None
    for number, fields in enumerate(facts.PANES.rows(stdout), start=1):
        width = width or len(fields)
        if len(fields) != width or width not in (3, 5):
            return _bad(number, len(fields), "row", "field_count")
        pane_id, dead, pid_field = fields[:3]
        if not is_pane_id(pane_id):
            return _bad(number, width, "pane_id", "syntax")
        if pane_id in rows:
            return _bad(number, width, "pane_id", "duplicate")
        if dead != "0" and dead != "1":
            return _bad(number, width, "pane_dead", "syntax")
        pid: int | None = None
        if pid_field:
            problem = pid_problem(pid_field)
            if problem is not None:
                return _bad(number, width, "pane_pid", problem)
            pid = int(pid_field.lstrip("0"))
        server = server_of(*fields[3:]) if width == 5 else None
        if width == 5 and server is None:
            return _bad(number, width, "tmux_server", "syntax")
        first_server = first_server or server
        if server != first_server:
            return _bad(number, width, "tmux_server", "differs")
        rows[pane_id] = PaneRow(pane_id, dead == "1", pid, number, server)
    return Success(rows)


# Fast path: the whole snapshot validated by C-level regular expressions. Anything it rejects is
# re-parsed by parse_pane_table, which names the first bad row.
_TABLE_RE = re.compile(r"(?:%[0-9]+\t[01]\t(?:0*[1-9][0-9]*)?\n)*")
_SERVER_TABLE_RE = re.compile(r"(?:%[0-9]+\t[01]\t(?:0*[1-9][0-9]*)?\t0*[1-9][0-9]{0,15}\t0*[1-9][0-9]{0,15}\n)*")
_LONG_PID_RE = re.compile(r"\t0*([1-9][0-9]{15,})(?=[\t\n])")
_ROW_ID_RE = re.compile(r"^%[0-9]+(?=\t)", re.MULTILINE)
_ROW_SERVER_RE = re.compile(r"\t([0-9]+)\t([0-9]+)$", re.MULTILINE)


def _fast_rows(stdout: str) -> tuple[str, str | None] | None:
    """The normalised snapshot text and the server it names when every row is valid, else None (use the
    slow parser)."""
    text = stdout.replace("\r\n", "\n")
    if text and not text.endswith("\n"):
        text += "\n"
    server: str | None = None
    if _TABLE_RE.fullmatch(text) is None:
        if _SERVER_TABLE_RE.fullmatch(text) is None:
            return None
        servers = {server_of(pid, start) for pid, start in _ROW_SERVER_RE.findall(text)}
        if len(servers) != 1 or None in servers:
            return None
        server = servers.pop()
    if any(len(big) > 16 or int(big) > MAX_SAFE_INTEGER for big in _LONG_PID_RE.findall(text)):
        return None
    ids = _ROW_ID_RE.findall(text)
    if len(ids) != len(set(ids)):
        return None
    return text, server


VerdictStatus = Literal["live", "gone", "unavailable"]
VerdictReason = Literal["", "dead", "absent", "malformed_snapshot", "query_failed", "invalid_pane_id"]


@frozen(kw_only=True)
class Verdict:
    """What one proof says about one pane: ``live`` (with ``pid``), ``gone`` (reason ``dead`` with
    ``pid``, or ``absent``) or ``unavailable`` (reason and ``problem`` say why). ``server``: the tmux server
    that answered (``server_of``), when the listing names it."""

    status: VerdictStatus
    reason: VerdictReason = ""
    pid: int | None = None
    problem: ProofProblem | None = None
    server: str | None = None

    @property
    def live(self) -> bool:
        return self.status == "live"

    @property
    def gone(self) -> bool:
        return self.status == "gone"

    @property
    def unavailable(self) -> bool:
        return self.status == "unavailable"

    @property
    def detail(self) -> str:
        """Informative prose for the problem ("" when there is none)."""
        return describe(self.problem)

    def code(self) -> str:
        """The reason as oh-my-codex spells it inside error strings (``live`` has none)."""
        return self.reason or self.status


def invalid_target() -> Verdict:
    return Verdict(status="unavailable", reason="invalid_pane_id", problem=InvalidPaneId())


# tmux's words when no server listens on the socket: then no pane of that server exists any more, and
# a pane id recorded on it names nothing (a new server numbers its panes from %0 again).
SERVER_NOT_RUNNING = re.compile(r"no server running|error connecting to .*\((No such file or directory|Connection refused)\)")


def server_not_running(verdict: Verdict) -> bool:
    """Whether a verdict failed only because the tmux server is not running."""
    return isinstance(verdict.problem, QueryFailed) and SERVER_NOT_RUNNING.search(verdict.problem.stderr) is not None


def verdict_from_answer(target: str, proc: m.Proc) -> Verdict:
    """The verdict for ``target`` given tmux's answer to ``LIST_PANES``."""
    if not is_pane_id(target):
        return invalid_target()
    if proc.exit_code != 0:
        return Verdict(status="unavailable", reason="query_failed",
                       problem=QueryFailed(exit_code=proc.exit_code, stderr=trim(proc.stderr)))
    fast = _fast_rows(proc.stdout)
    row: PaneRow | None
    if fast is not None:
        text, server = fast
        found = re.search(rf"^{target}\t([01])\t([0-9]*)(?:\t|$)", text, re.MULTILINE)
        row = None if found is None else PaneRow(target, found.group(1) == "1", parse_pid(found.group(2)) if
                                                 found.group(2) else None, text.count("\n", 0, found.start()) + 1)
    else:
        parsed = parse_pane_table(proc.stdout)
        if isinstance(parsed, Failure):
            return Verdict(status="unavailable", reason="malformed_snapshot", problem=parsed.failure())
        rows = parsed.unwrap()
        row = rows.get(target)
        server = next(iter(rows.values())).server if rows else None
    if row is None:
        return Verdict(status="gone", reason="absent", server=server)
    if row.pid is None:
        return Verdict(status="unavailable", reason="malformed_snapshot", server=server, problem=MalformedSnapshot(
            row=row.row, field="pane_pid", rule="empty", fields=3 if server is None else 5))
    if row.dead:
        return Verdict(status="gone", reason="dead", pid=row.pid, server=server)
    return Verdict(status="live", pid=row.pid, server=server)


def on_server(verdict: Verdict, pinned: str | None) -> Verdict:
    """The verdict on a pane pinned on tmux server ``pinned``: the second rule of a proof, in one place
    (docs/tmux-proofs.md, "The tmux server"). A listing from another server does not list that pane, whatever
    it lists under its id: it is ``absent`` there, the server that answered named (``ServerReplaced``). A
    listing that names no server cannot prove it (``unavailable``). ``pinned`` None (a pin recorded before
    servers were) checks nothing."""
    if pinned is None or verdict.unavailable or verdict.server == pinned:
        return verdict
    if verdict.server is None:
        if verdict.gone and verdict.reason == "absent":
            return verdict  # an empty listing names no server, and lists no pane
        return Verdict(status="unavailable", reason="malformed_snapshot",
                       problem=ServerReplaced(pinned=pinned, found=None))
    return Verdict(status="gone", reason="absent", server=verdict.server,
                   problem=ServerReplaced(pinned=pinned, found=verdict.server))


def first_new_pane(proc: m.Proc) -> int | None:
    """The lowest number a pane made after this ``LIST_PANES`` answer can have: one above the highest it
    lists (tmux numbers new panes upward and never reuses a number while its server lives), 0 when no
    server runs; None when the answer does not tell (pure/omx/strays.py, ``made_after_intent``)."""
    if proc.exit_code != 0:
        return 0 if proc.exit_code == 1 and SERVER_NOT_RUNNING.search(proc.stderr) else None
    return max((int(found[1:]) + 1 for found in _ROW_ID_RE.findall(proc.stdout)), default=0)
