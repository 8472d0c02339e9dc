"""tmux pane proofs: the pane-table parser, verdicts, owner tags and the teardown primitive.

The rules follow oh-my-codex 0.20.3 (see ``docs/ports.md`` for the normative statement):

* one proof = one global ``list-panes -a`` snapshot; any bad row poisons the whole snapshot;
* verdicts ``live`` (with pid) / ``gone`` (``dead``, ``absent``) / ``unavailable``
  (``malformed_snapshot``, ``query_failed``, ``invalid_pane_id``);
* a pane is only ever mutated after ``L, S, L``: a proof, the owner tag, a second proof, with the
  pid pinned when the pane was created.

Every answer is a stable code plus structured fields (the ``problem`` classes below). Prose is
derived from them by :func:`describe` and is informative only: no decision depends on it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, Union

import attrs
from attrs import frozen
from returns.result import Failure, Result, Success

from pure import model as m
from pure.program import Gen, expect

PANE_ID_RE = re.compile(r"%[0-9]+")
MAX_SAFE_INTEGER = 2**53 - 1
OWNER_OPTION = "@omx_team_pane_owner_id"
PANE_FORMAT = "#{pane_id}\t#{pane_dead}\t#{pane_pid}"
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


def is_pane_id(value: object) -> bool:
    """``%`` followed by one or more ASCII digits."""
    return isinstance(value, str) and len(value) >= 2 and value[0] == "%" and _digits(value[1:])


def is_positive_pid(value: object) -> bool:
    """A positive safe integer (JSON ``true`` is not a pid)."""
    return type(value) is int and 0 < value <= MAX_SAFE_INTEGER


# ------------------------------------------------------------------------------------------ problems


@frozen(kw_only=True)
class MalformedSnapshot:
    """The ``list-panes`` answer is not a pane table; ``row`` (1-based) is the first bad row.

    ``field``/``rule``: ``row``/``field_count`` (not exactly 3 tab-separated fields; ``fields`` says
    how many), ``pane_id``/``syntax`` (not ``%`` + ASCII digits), ``pane_id``/``duplicate`` (listed
    twice), ``pane_dead``/``syntax`` (not ``0`` or ``1``), ``pane_pid``/``syntax`` (not ASCII digits),
    ``pane_pid``/``range`` (0 or above 2^53-1), ``pane_pid``/``empty`` (the target's own row has no pid).
    """

    code: Literal["malformed_snapshot"] = "malformed_snapshot"
    row: int
    field: Literal["row", "pane_id", "pane_dead", "pane_pid"]
    rule: Literal["field_count", "syntax", "duplicate", "range", "empty"]
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


ProofProblem = Union[MalformedSnapshot, QueryFailed, InvalidPaneId]
OwnerProblem = Union[QueryFailed, InvalidPaneId]

# ---------------------------------------------------------------------------------------- verdicts


class PaneRow(NamedTuple):
    pane_id: str
    dead: bool
    pid: int | None  # None only for tmux's empty panes
    row: int = 0


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


def split_rows(stdout: str) -> list[str]:
    """``\\r\\n`` becomes ``\\n``; rows are split on ``\\n``; one final empty row (a trailing newline)
    is dropped. A lone ``\\r`` stays in its field."""
    lines = stdout.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def parse_pane_table(stdout: str) -> Result[dict[str, PaneRow], MalformedSnapshot]:
    """Parse ``list-panes -a -F PANE_FORMAT`` output strictly. Failure carries the first problem:
    rows in order, and within a row the checks in the order of :class:`MalformedSnapshot`."""
    rows: dict[str, PaneRow] = {}
    for number, line in enumerate(split_rows(stdout), start=1):
        fields = line.split("\t")
        if len(fields) != 3:
            return _bad(number, len(fields), "row", "field_count")
        pane_id, dead, pid_field = fields
        if not is_pane_id(pane_id):
            return _bad(number, 3, "pane_id", "syntax")
        if pane_id in rows:
            return _bad(number, 3, "pane_id", "duplicate")
        if dead != "0" and dead != "1":
            return _bad(number, 3, "pane_dead", "syntax")
        pid: int | None = None
        if pid_field:
            problem = pid_problem(pid_field)
            if problem is not None:
                return _bad(number, 3, "pane_pid", problem)
            pid = int(pid_field.lstrip("0"))
        rows[pane_id] = PaneRow(pane_id, dead == "1", pid, number)
    return Success(rows)


# Fast path: the whole snapshot validated by C-level regular expressions. Anything it rejects is
# re-parsed by parse_pane_table, which names the first bad row.
_TABLE_RE = re.compile(r"(?:%[0-9]+\t[01]\t(?:0*[1-9][0-9]*)?\n)*")
_LONG_PID_RE = re.compile(r"\t0*([1-9][0-9]{15,})\n")
_ROW_ID_RE = re.compile(r"^%[0-9]+(?=\t)", re.MULTILINE)


def _fast_rows(stdout: str) -> str | None:
    """The normalised snapshot text when every row is valid, else None (use the slow parser)."""
    text = stdout.replace("\r\n", "\n")
    if text and not text.endswith("\n"):
        text += "\n"
    if _TABLE_RE.fullmatch(text) is None:
        return None
    if any(len(big) > 16 or int(big) > MAX_SAFE_INTEGER for big in _LONG_PID_RE.findall(text)):
        return None
    ids = _ROW_ID_RE.findall(text)
    if len(ids) != len(set(ids)):
        return None
    return text


VerdictStatus = Literal["live", "gone", "unavailable"]
VerdictReason = Literal["", "dead", "absent", "malformed_snapshot", "query_failed", "invalid_pane_id"]


@frozen(kw_only=True)
class Verdict:
    """What one proof says about one pane: ``live`` (with ``pid``), ``gone`` (reason ``dead`` with
    ``pid``, or ``absent``) or ``unavailable`` (reason and ``problem`` say why)."""

    status: VerdictStatus
    reason: VerdictReason = ""
    pid: int | None = None
    problem: ProofProblem | None = None

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


def verdict_from_answer(target: str, proc: m.Proc) -> Verdict:
    """The verdict for ``target`` given tmux's answer to ``LIST_PANES``."""
    if not is_pane_id(target):
        return invalid_target()
    if proc.exit_code != 0:
        return Verdict(status="unavailable", reason="query_failed",
                       problem=QueryFailed(exit_code=proc.exit_code, stderr=trim(proc.stderr)))
    text = _fast_rows(proc.stdout)
    row: PaneRow | None
    if text is not None:
        found = re.search(rf"^{target}\t([01])\t([0-9]*)$", text, re.MULTILINE)
        row = None if found is None else PaneRow(target, found.group(1) == "1", parse_pid(found.group(2)) if
                                                 found.group(2) else None, text.count("\n", 0, found.start()) + 1)
    else:
        parsed = parse_pane_table(proc.stdout)
        if isinstance(parsed, Failure):
            return Verdict(status="unavailable", reason="malformed_snapshot", problem=parsed.failure())
        row = parsed.unwrap().get(target)
    if row is None:
        return Verdict(status="gone", reason="absent")
    if row.pid is None:
        return Verdict(status="unavailable", reason="malformed_snapshot",
                       problem=MalformedSnapshot(row=row.row, field="pane_pid", rule="empty", fields=3))
    if row.dead:
        return Verdict(status="gone", reason="dead", pid=row.pid)
    return Verdict(status="live", pid=row.pid)


# ---------------------------------------------------------------------------------------- owner tag

OwnerKind = Literal["value", "missing", "error"]


@frozen(kw_only=True)
class OwnerAnswer:
    """A pane's owner tag: ``value`` (trimmed, non-empty), ``missing`` or ``error`` (``problem``)."""

    kind: OwnerKind
    value: str = ""
    problem: OwnerProblem | None = None

    @property
    def detail(self) -> str:
        return describe(self.problem)


def owner_from_answer(proc: m.Proc) -> OwnerAnswer:
    """Classify ``show-option -qv -p -t PANE @omx_team_pane_owner_id`` (oh-my-codex §3.3)."""
    stderr = trim(proc.stderr)
    if proc.exit_code == 0:
        value = trim(proc.stdout)
        return OwnerAnswer(kind="value", value=value) if value else OwnerAnswer(kind="missing")
    if proc.exit_code == 1 and stderr == "":
        return OwnerAnswer(kind="missing")
    return OwnerAnswer(kind="error", problem=QueryFailed(exit_code=proc.exit_code, stderr=stderr))


# ------------------------------------------------------------------------------------------- prose

_MALFORMED_TEXT: dict[tuple[Any, Any], str] = {
    ("pane_id", "syntax"): "the pane id is not % followed by digits",
    ("pane_id", "duplicate"): "the pane id is listed twice",
    ("pane_dead", "syntax"): "pane_dead is not 0 or 1",
    ("pane_pid", "syntax"): "pane_pid is not digits",
    ("pane_pid", "range"): "pane_pid is not a positive safe integer",
    ("pane_pid", "empty"): "the pane has an empty pane_pid",
}


def describe(problem: object) -> str:
    """Informative prose for a problem, given as its object or its wire form ("" for none). It is
    derived from the fields alone and never used to decide anything."""
    if problem is None:
        return ""
    if attrs.has(type(problem)):
        from pure import wire

        problem = wire.unstructure(problem)
    if not isinstance(problem, dict):
        return ""
    p: dict[str, Any] = problem
    code = p.get("code")
    if code == "malformed_snapshot":
        if p.get("rule") == "field_count":
            return f"row {p.get('row')}: expected 3 tab-separated fields, got {p.get('fields')}"
        return f"row {p.get('row')}: {_MALFORMED_TEXT.get((p.get('field'), p.get('rule')), str(p.get('rule')))}"
    if code in ("query_failed", "kill_failed"):
        if p.get("stderr"):
            return str(p["stderr"])
        return "tmux could not be started" if p.get("exit_code") is None else f"tmux exited {p.get('exit_code')}"
    if code == "invalid_pane_id":
        return "pane id must match %<digits>"
    if code == "pid_unpinned":
        return f"no pid was pinned for the pane (it has pid {p.get('found_pid')})"
    if code == "pid_mismatch":
        return f"expected pid {p.get('pinned_pid')}, found {p.get('found_pid')}"
    if code == "owner_not_authorized":
        return "pane owner authorization changed"
    if code == "still_live":
        return "pane still live after kill-pane"
    return str(code or "")


# ------------------------------------------------------------------------------------- step builders


def tmux(*args: str, mutates: bool = False, note: str = "") -> m.Run:
    return m.Run(tool="tmux", args=tuple(args), mutates=mutates, note=note)


def list_panes_step() -> m.Run:
    return tmux(*LIST_PANES)


def show_owner_step(pane_id: str) -> m.Run:
    return tmux("show-option", "-qv", "-p", "-t", pane_id, OWNER_OPTION)


def set_owner_step(pane_id: str, owner: str) -> m.Run:
    return tmux("set-option", "-p", "-t", pane_id, OWNER_OPTION, owner, mutates=True)


def kill_pane_step(pane_id: str) -> m.Run:
    return tmux("kill-pane", "-t", pane_id, mutates=True)


# ------------------------------------------------------------------------------------------- proofs


def prove(pane_id: str) -> Gen[Verdict]:
    """One exact proof (``L``). An invalid id is refused without asking tmux."""
    if not is_pane_id(pane_id):
        return invalid_target()
    proc = yield from expect(list_panes_step(), m.Proc)
    return verdict_from_answer(pane_id, proc)


def read_owner(pane_id: str) -> Gen[OwnerAnswer]:
    """Read a pane's owner tag (``S``). A target not starting with ``%`` (after trimming) is an
    error without a call."""
    if not trim(pane_id).startswith("%"):
        return OwnerAnswer(kind="error", problem=InvalidPaneId())
    proc = yield from expect(show_owner_step(pane_id), m.Proc)
    return owner_from_answer(proc)


# ----------------------------------------------------------------------------------------- teardown

PaneFate = Literal["killed", "gone", "proof_unavailable", "pid_changed", "kill_failed", "not_attempted"]
PaneReason = Literal["", "absent", "dead", "malformed_snapshot", "query_failed", "invalid_pane_id",
                     "pane_pid_changed", "kill_failed"]
Stage = Literal["first_proof", "owner", "final_proof", "kill", "after_kill"]
ExclusionRule = Literal["leader", "hud", "not_a_pane_target", "duplicate"]


@frozen(kw_only=True)
class OwnerNotAuthorized:
    """The owner read did not give exactly the request's ``owner_id`` (or there is none)."""

    code: Literal["owner_not_authorized"] = "owner_not_authorized"
    expected_owner: str | None
    owner: OwnerAnswer


PaneProblem = Union[MalformedSnapshot, QueryFailed, InvalidPaneId, PidUnpinned, PidMismatch, OwnerNotAuthorized,
                    KillFailed, StillLive]


@frozen(kw_only=True)
class TeardownTarget:
    """A pane to tear down and the pid pinned when it was created; anything but a positive safe
    integer refuses the kill."""

    pane_id: str
    pid: int | None


@frozen(kw_only=True)
class PaneResult:
    """What became of one pane: ``fate``; ``reason``, oh-my-codex's code; ``stage``, the check that
    decided (null for ``not_attempted``); ``problem`` for a pane that was not resolved."""

    pane_id: str
    fate: PaneFate
    reason: PaneReason = ""
    stage: Stage | None = None
    problem: PaneProblem | None = None

    @property
    def resolved(self) -> bool:
        return self.fate in ("killed", "gone")

    @property
    def detail(self) -> str:
        return describe(self.problem)


@frozen(kw_only=True)
class Excluded:
    """A target left out before the loop: the leader or HUD pane, a target not starting with ``%``,
    or a repeat of an earlier target (the first matching rule in this order)."""

    pane_id: str
    rule: ExclusionRule


@frozen(kw_only=True)
class TeardownReport:
    results: tuple[PaneResult, ...]
    exclusions: tuple[Excluded, ...] = ()

    @property
    def excluded(self) -> tuple[str, ...]:
        return tuple(e.pane_id for e in self.exclusions)

    def resolved_ids(self) -> tuple[str, ...]:
        return tuple(r.pane_id for r in self.results if r.resolved)

    def failed_kills(self) -> tuple[str, ...]:
        return tuple(r.pane_id for r in self.results if r.fate == "kill_failed")

    def proof_failures(self) -> tuple[PaneResult, ...]:
        """oh-my-codex's ``proofUnavailable``: unavailable proofs *and* pid/owner refusals
        (reason ``pane_pid_changed``), which it files under the same list (spec §4.5, §16)."""
        return tuple(r for r in self.results if r.fate in ("proof_unavailable", "pid_changed"))


def kill_settle_ms(killable: int) -> int:
    """The pause after each ``kill-pane``: ``max(100, floor(2000 / n))`` ms, n the number of targets
    left after the exclusions (at least 1)."""
    return max(100, 2000 // max(1, killable))


def exclusion_rule(pane: str, seen: set[str], leader_pane_id: str | None,
                   hud_pane_id: str | None) -> ExclusionRule | None:
    if pane == leader_pane_id:
        return "leader"
    if pane == hud_pane_id:
        return "hud"
    if not pane.startswith("%"):
        return "not_a_pane_target"
    if pane in seen:
        return "duplicate"
    return None


def teardown(
    targets: Sequence[TeardownTarget],
    *,
    owner_id: str | None,
    authorize: bool,
    leader_pane_id: str | None = None,
    hud_pane_id: str | None = None,
) -> Gen[TeardownReport]:
    """The shared kill primitive (oh-my-codex §4.5), as a pure program.

    For each target in order: ``L`` (gone ⇒ resolved without a kill; unavailable ⇒ stop; live with
    a different pid ⇒ stop), then, when ``authorize``, ``S`` which must equal ``owner_id``, then a
    final ``L``, ``kill-pane``, a settle pause and an after-kill ``L`` that must prove it gone.
    The loop stops at the first pane that is not resolved; later panes are reported
    ``not_attempted``. Leader and HUD panes, targets not starting with ``%`` and repeats are
    excluded before the loop; any other target (``%abc``, ``%13\\n``) is kept, and its first proof
    refuses it as ``invalid_pane_id`` without asking tmux.
    """
    exclusions: list[Excluded] = []
    queue: list[TeardownTarget] = []
    seen: set[str] = set()
    for target in targets:
        rule = exclusion_rule(target.pane_id, seen, leader_pane_id, hud_pane_id)
        if rule is not None:
            exclusions.append(Excluded(pane_id=target.pane_id, rule=rule))
            continue
        seen.add(target.pane_id)
        queue.append(target)
    results: list[PaneResult] = []
    settle = kill_settle_ms(len(queue))
    stopped = False
    for target in queue:
        if stopped:
            results.append(PaneResult(pane_id=target.pane_id, fate="not_attempted"))
            continue
        result = yield from _teardown_one(target, owner_id=owner_id, authorize=authorize, settle_ms=settle)
        results.append(result)
        stopped = not result.resolved
    return TeardownReport(results=tuple(results), exclusions=tuple(exclusions))


def _proof_result(pane: str, verdict: Verdict, stage: Stage) -> PaneResult | None:
    """The result when a proof ends the pane's teardown (gone or unavailable), else None."""
    if verdict.gone:
        return PaneResult(pane_id=pane, fate="gone", reason=verdict.reason, stage=stage)
    if verdict.unavailable:
        return PaneResult(pane_id=pane, fate="proof_unavailable", reason=verdict.reason, stage=stage,
                          problem=verdict.problem)
    return None


def _refused(pane: str, stage: Stage, problem: PaneProblem) -> PaneResult:
    return PaneResult(pane_id=pane, fate="pid_changed", reason="pane_pid_changed", stage=stage, problem=problem)


def _teardown_one(target: TeardownTarget, *, owner_id: str | None, authorize: bool, settle_ms: int) -> Gen[PaneResult]:
    pane = target.pane_id
    first = yield from prove(pane)
    ended = _proof_result(pane, first, "first_proof")
    if ended is not None:
        return ended
    assert first.pid is not None
    if not is_positive_pid(target.pid):
        return _refused(pane, "first_proof", PidUnpinned(pinned_pid=target.pid, found_pid=first.pid))
    assert target.pid is not None
    if first.pid != target.pid:
        return _refused(pane, "first_proof", PidMismatch(pinned_pid=target.pid, found_pid=first.pid))
    if authorize:
        owner = yield from read_owner(pane)
        if not owner_id or owner.kind != "value" or owner.value != owner_id:
            return _refused(pane, "owner", OwnerNotAuthorized(expected_owner=owner_id, owner=owner))
    final = yield from prove(pane)
    ended = _proof_result(pane, final, "final_proof")
    if ended is not None:
        return ended
    assert final.pid is not None
    if final.pid != target.pid:
        return _refused(pane, "final_proof", PidMismatch(pinned_pid=target.pid, found_pid=final.pid))
    kill = yield from expect(kill_pane_step(pane), m.Proc)
    if kill.exit_code != 0:
        return PaneResult(pane_id=pane, fate="kill_failed", reason="kill_failed", stage="kill",
                          problem=KillFailed(exit_code=kill.exit_code, stderr=trim(kill.stderr)))
    yield from expect(m.Sleep(ms=settle_ms), m.Ack)
    after = yield from prove(pane)
    if after.gone:
        return PaneResult(pane_id=pane, fate="killed", stage="after_kill")
    if after.unavailable:
        return PaneResult(pane_id=pane, fate="proof_unavailable", reason=after.reason, stage="after_kill",
                          problem=after.problem)
    assert after.pid is not None
    return PaneResult(pane_id=pane, fate="kill_failed", reason="kill_failed", stage="after_kill",
                      problem=StillLive(pid=after.pid))


# ------------------------------------------------------------------- teardown as a standalone operation


@frozen(kw_only=True)
class TeardownRequest:
    """Tear down exactly these panes (the primitive on its own, for decision goldens and ports).
    ``owner_id`` null or empty refuses every pane that needs the owner check (``authorize``)."""

    targets: tuple[TeardownTarget, ...]
    owner_id: str | None = None
    authorize: bool = True
    leader_pane_id: str | None = None
    hud_pane_id: str | None = None


@frozen(kw_only=True)
class TeardownResult:
    """``tmux.teardown``'s result: ``ok`` when every pane that was not excluded was resolved."""

    ok: bool
    results: tuple[PaneResult, ...]
    excluded: tuple[Excluded, ...]


def teardown_program(req: TeardownRequest) -> Gen[m.Done]:
    from pure import wire

    report = yield from teardown(req.targets, owner_id=req.owner_id, authorize=req.authorize,
                                 leader_pane_id=req.leader_pane_id, hud_pane_id=req.hud_pane_id)
    resolved = all(r.resolved for r in report.results)
    result = TeardownResult(ok=resolved, results=report.results, excluded=report.exclusions)
    return m.Done(outcome=m.Outcome(status="ok" if resolved else "debt", result=m.JsonValue(wire.unstructure(result))),
                  debt=tuple(m.Debt(kind="pane", subject=r.pane_id, reason=r.reason or r.fate,
                                    detail=r.problem.code if r.problem is not None else "")
                             for r in report.results if not r.resolved))
