"""tmux pane proofs: the pane-table parser, verdicts, owner tags and the teardown primitive.

The rules follow oh-my-codex 0.20.3 exactly (see ``docs/tmux-proofs.md``):

* one proof = one global ``list-panes -a`` snapshot; any bad row poisons the whole snapshot;
* verdicts ``live`` (with pid) / ``gone`` (``dead``, ``absent``) / ``unavailable``
  (``malformed_snapshot``, ``query_failed``, ``invalid_pane_id``);
* a pane is only ever mutated after ``L, S, L``: a proof, the owner tag, a second proof, with the
  pid pinned when the pane was created.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

from attrs import frozen
from returns.result import Failure, Result, Success

from pure import model as m
from pure.program import Gen, expect

PANE_ID_RE = re.compile(r"%[0-9]+")
MAX_SAFE_INTEGER = 2**53 - 1
OWNER_OPTION = "@omx_team_pane_owner_id"
PANE_FORMAT = "#{pane_id}\t#{pane_dead}\t#{pane_pid}"
LIST_PANES: tuple[str, ...] = ("list-panes", "-a", "-F", PANE_FORMAT)


def is_pane_id(value: object) -> bool:
    return isinstance(value, str) and PANE_ID_RE.fullmatch(value) is not None


def is_positive_pid(value: object) -> bool:
    """A positive safe integer (JSON ``true`` is not a pid)."""
    return type(value) is int and 0 < value <= MAX_SAFE_INTEGER


# ------------------------------------------------------------------------------------------ parsing


class PaneRow(NamedTuple):
    pane_id: str
    dead: bool
    pid: int | None  # None only for tmux's empty panes


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def parse_pid(field: str) -> int | None:
    if not _digits(field):
        return None
    value = int(field)
    return value if 0 < value <= MAX_SAFE_INTEGER else None


def parse_pane_table(stdout: str) -> Result[dict[str, PaneRow], str]:
    """Parse ``list-panes -a -F PANE_FORMAT`` output strictly. Failure carries the first problem."""
    lines = stdout.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows: dict[str, PaneRow] = {}
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if len(fields) != 3:
            return Failure(f"row {number}: expected 3 tab-separated fields, got {len(fields)}")
        pane_id, dead, pid_field = fields
        if len(pane_id) < 2 or pane_id[0] != "%" or not _digits(pane_id[1:]):
            return Failure(f"row {number}: bad pane id {pane_id!r}")
        if pane_id in rows:
            return Failure(f"row {number}: duplicate pane id {pane_id}")
        if dead != "0" and dead != "1":
            return Failure(f"row {number}: pane_dead must be 0 or 1, got {dead!r}")
        pid: int | None = None
        if pid_field:
            pid = parse_pid(pid_field)
            if pid is None:
                return Failure(f"row {number}: bad pid {pid_field!r}")
        rows[pane_id] = PaneRow(pane_id, dead == "1", pid)
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
    if any(int(big) > MAX_SAFE_INTEGER for big in _LONG_PID_RE.findall(text)):
        return None
    ids = _ROW_ID_RE.findall(text)
    if len(ids) != len(set(ids)):
        return None
    return text


VerdictStatus = Literal["live", "gone", "unavailable"]


@frozen(kw_only=True)
class Verdict:
    """What one proof says about one pane."""

    status: VerdictStatus
    reason: str = ""  # dead|absent for gone; malformed_snapshot|query_failed|invalid_pane_id
    pid: int | None = None
    detail: str = ""

    @property
    def live(self) -> bool:
        return self.status == "live"

    @property
    def gone(self) -> bool:
        return self.status == "gone"

    @property
    def unavailable(self) -> bool:
        return self.status == "unavailable"

    def code(self) -> str:
        """The reason as oh-my-codex spells it inside error strings (``live`` has none)."""
        return self.reason or self.status


def invalid_target() -> Verdict:
    return Verdict(status="unavailable", reason="invalid_pane_id", detail="pane id must match %<digits>")


def verdict_from_answer(target: str, proc: m.Proc) -> Verdict:
    """The verdict for ``target`` given tmux's answer to ``LIST_PANES``."""
    if not is_pane_id(target):
        return invalid_target()
    if proc.exit_code != 0:
        detail = proc.stderr.strip() or (
            "tmux could not be started" if proc.exit_code is None else f"tmux exited {proc.exit_code}"
        )
        return Verdict(status="unavailable", reason="query_failed", detail=detail)
    text = _fast_rows(proc.stdout)
    row: PaneRow | None
    if text is not None:
        found = re.search(rf"^{target}\t([01])\t([0-9]*)$", text, re.MULTILINE)
        row = None if found is None else PaneRow(target, found.group(1) == "1", parse_pid(found.group(2)))
    else:
        parsed = parse_pane_table(proc.stdout)
        if isinstance(parsed, Failure):
            return Verdict(status="unavailable", reason="malformed_snapshot", detail=parsed.failure())
        row = parsed.unwrap().get(target)
    if row is None:
        return Verdict(status="gone", reason="absent")
    if row.pid is None:
        return Verdict(status="unavailable", reason="malformed_snapshot", detail=f"empty pid for {target}")
    if row.dead:
        return Verdict(status="gone", reason="dead", pid=row.pid)
    return Verdict(status="live", pid=row.pid)


# ---------------------------------------------------------------------------------------- owner tag

OwnerKind = Literal["value", "missing", "error"]


@frozen(kw_only=True)
class OwnerAnswer:
    kind: OwnerKind
    value: str = ""
    detail: str = ""


def owner_from_answer(proc: m.Proc) -> OwnerAnswer:
    """Classify ``show-option -qv -p -t PANE @omx_team_pane_owner_id`` (oh-my-codex §3.3)."""
    if proc.exit_code is None:
        return OwnerAnswer(kind="error", detail=proc.stderr.strip() or "tmux could not be started")
    if proc.exit_code == 0:
        value = proc.stdout.strip()
        return OwnerAnswer(kind="value", value=value) if value else OwnerAnswer(kind="missing")
    if proc.exit_code == 1 and proc.stderr.strip() == "":
        return OwnerAnswer(kind="missing")
    return OwnerAnswer(kind="error", detail=proc.stderr.strip() or f"tmux exited {proc.exit_code}")


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
    """Read a pane's owner tag (``S``). A target not starting with ``%`` is an error, no call."""
    if not pane_id.strip().startswith("%"):
        return OwnerAnswer(kind="error", detail="pane target must start with %")
    proc = yield from expect(show_owner_step(pane_id), m.Proc)
    return owner_from_answer(proc)


# ----------------------------------------------------------------------------------------- teardown

PaneFate = Literal["killed", "gone", "proof_unavailable", "pid_changed", "kill_failed", "not_attempted"]


@frozen(kw_only=True)
class TeardownTarget:
    pane_id: str
    pid: int | None  # the pinned pid; anything but a positive safe integer refuses the kill


@frozen(kw_only=True)
class PaneResult:
    pane_id: str
    fate: PaneFate
    reason: str = ""  # the oh-my-codex reason (query_failed, pane_pid_changed, …)
    detail: str = ""

    @property
    def resolved(self) -> bool:
        return self.fate in ("killed", "gone")


@frozen(kw_only=True)
class TeardownReport:
    results: tuple[PaneResult, ...]
    excluded: tuple[str, ...]

    def resolved_ids(self) -> tuple[str, ...]:
        return tuple(r.pane_id for r in self.results if r.resolved)

    def failed_kills(self) -> tuple[str, ...]:
        return tuple(r.pane_id for r in self.results if r.fate == "kill_failed")

    def proof_failures(self) -> tuple[PaneResult, ...]:
        """oh-my-codex's ``proofUnavailable``: unavailable proofs *and* pid/owner refusals
        (reason ``pane_pid_changed``), which it files under the same list (spec §4.5, §16)."""
        return tuple(r for r in self.results if r.fate in ("proof_unavailable", "pid_changed"))


def kill_settle_ms(killable: int) -> int:
    return max(100, 2000 // max(1, killable))


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
    The loop stops at the first failure; later panes are reported ``not_attempted``. Leader and
    HUD panes, invalid ids and duplicates are excluded before the loop.
    """
    excluded: list[str] = []
    queue: list[TeardownTarget] = []
    seen: set[str] = set()
    for target in targets:
        pid = target.pane_id
        if pid in (leader_pane_id, hud_pane_id) or not pid.startswith("%") or pid in seen:
            excluded.append(pid)
            continue
        seen.add(pid)
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
    return TeardownReport(results=tuple(results), excluded=tuple(excluded))


def _teardown_one(target: TeardownTarget, *, owner_id: str | None, authorize: bool, settle_ms: int) -> Gen[PaneResult]:
    pane = target.pane_id
    first = yield from prove(pane)
    if first.gone:
        return PaneResult(pane_id=pane, fate="gone", reason=first.reason)
    if first.unavailable:
        return PaneResult(pane_id=pane, fate="proof_unavailable", reason=first.reason, detail=first.detail)
    if not is_positive_pid(target.pid) or first.pid != target.pid:
        return PaneResult(pane_id=pane, fate="pid_changed", reason="pane_pid_changed",
                          detail=f"expected pid {target.pid}, found {first.pid}")
    if authorize:
        owner = yield from read_owner(pane)
        if not owner_id or owner.kind != "value" or owner.value != owner_id:
            return PaneResult(pane_id=pane, fate="pid_changed", reason="pane_pid_changed",
                              detail="pane owner authorization changed")
    final = yield from prove(pane)
    if final.gone:
        return PaneResult(pane_id=pane, fate="gone", reason=final.reason)
    if final.unavailable:
        return PaneResult(pane_id=pane, fate="proof_unavailable", reason=final.reason, detail=final.detail)
    if final.pid != target.pid:
        return PaneResult(pane_id=pane, fate="pid_changed", reason="pane_pid_changed",
                          detail=f"expected pid {target.pid}, found {final.pid}")
    kill = yield from expect(kill_pane_step(pane), m.Proc)
    if kill.exit_code != 0:
        return PaneResult(pane_id=pane, fate="kill_failed", reason="kill_failed",
                          detail=kill.stderr.strip() or f"tmux exited {kill.exit_code}")
    yield from expect(m.Sleep(ms=settle_ms), m.Ack)
    after = yield from prove(pane)
    if after.gone:
        return PaneResult(pane_id=pane, fate="killed")
    if after.unavailable:
        return PaneResult(pane_id=pane, fate="proof_unavailable", reason=after.reason, detail=after.detail)
    return PaneResult(pane_id=pane, fate="kill_failed", reason="kill_failed", detail="pane still live after kill-pane")


# ------------------------------------------------------------------- teardown as a standalone operation


@frozen(kw_only=True)
class TeardownRequest:
    """Tear down exactly these panes (the primitive on its own, for decision goldens and ports)."""

    targets: tuple[TeardownTarget, ...]
    owner_id: str | None = None
    authorize: bool = True
    leader_pane_id: str | None = None
    hud_pane_id: str | None = None


def teardown_program(req: TeardownRequest) -> Gen[m.Done]:
    report = yield from teardown(req.targets, owner_id=req.owner_id, authorize=req.authorize,
                                 leader_pane_id=req.leader_pane_id, hud_pane_id=req.hud_pane_id)
    results = [{"paneId": r.pane_id, "fate": r.fate, "reason": r.reason, "detail": r.detail} for r in report.results]
    resolved = all(r.resolved for r in report.results)
    return m.Done(outcome=m.Outcome(
        status="ok" if resolved else "debt",
        result=m.JsonValue({"ok": resolved, "results": results, "excluded": list(report.excluded)}),
    ), debt=tuple(m.Debt(kind="pane", subject=r.pane_id, reason=r.reason or r.fate, detail=r.detail)
                  for r in report.results if not r.resolved))
