"""The shared kill primitive (docs/tmux-proofs.md, "Teardown"), and ``tmux.teardown`` as an operation
of its own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Union

from attrs import frozen

from pure import model as m
from pure.convert import unstructure
from pure.program import Gen, expect
from pure.tmux.owned import Proof, kill_pane_step, prove_owned
from pure.tmux.parse import (
    InvalidPaneId,
    KillFailed,
    MalformedSnapshot,
    PidMismatch,
    PidUnpinned,
    QueryFailed,
    ServerReplaced,
    StillLive,
    on_server,
    trim,
)
from pure.tmux.proof import OwnerAnswer, prove
from pure.tmux.prose import describe

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


PaneProblem = Union[MalformedSnapshot, QueryFailed, InvalidPaneId, ServerReplaced, PidUnpinned, PidMismatch,
                    OwnerNotAuthorized, KillFailed, StillLive]


@frozen(kw_only=True)
class TeardownTarget:
    """A pane to tear down and the pid pinned when it was created; anything but a positive safe
    integer refuses the kill. ``server``: the tmux server it was pinned on (``PID@START``), None for a pin
    recorded without one (pure/tmux/parse.py ``on_server``)."""

    pane_id: str
    pid: int | None
    server: str | None = None


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

    def resolved_ids(self) -> tuple[str, ...]:
        return tuple(r.pane_id for r in self.results if r.resolved)

    def failed_kills(self) -> tuple[str, ...]:
        return tuple(r.pane_id for r in self.results if r.fate == "kill_failed")

    def proof_failures(self) -> tuple[PaneResult, ...]:
        """oh-my-codex's ``proofUnavailable``: unavailable proofs *and* pid/owner refusals
        (reason ``pane_pid_changed``), which it files under the same list (docs/tmux-proofs.md)."""
        return tuple(r for r in self.results if r.fate in ("proof_unavailable", "pid_changed"))


def kill_settle_ms(killable: int) -> int:
    """How long a killed pane may take to leave the pane table: ``max(100, floor(2000 / n))`` ms, n
    the number of targets left after the exclusions (at least 1) — oh-my-codex's fixed pause after
    each kill, here only the bound of ``kill_backoff_ms``."""
    return max(100, 2000 // max(1, killable))


FIRST_BACKOFF_MS = 50


def kill_backoff_ms(bound_ms: int) -> tuple[int, ...]:
    """The pauses between after-kill proofs while the killed pane is still listed live with its
    pinned pid: 50, 100, 200 … ms, the last cut so that they add up to ``bound_ms`` exactly.
    tmux removes a killed pane before ``kill-pane`` returns, so the proof right after the kill
    normally decides and none of these is taken (docs/scale-down.md, "Deviations")."""
    pauses: list[int] = []
    left, pause = bound_ms, FIRST_BACKOFF_MS
    while left > 0:
        pauses.append(min(pause, left))
        left -= pauses[-1]
        pause *= 2
    return tuple(pauses)


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
    untagged_ok: bool = False,
    leader_pane_id: str | None = None,
    hud_pane_id: str | None = None,
    effects: Mapping[str, m.Effect] | None = None,
) -> Gen[TeardownReport]:
    """The shared kill primitive (docs/tmux-proofs.md, "Teardown"), as a pure program.

    For each target in order: ``L`` (gone ⇒ resolved without a kill; unavailable ⇒ stop; live with
    a different pid ⇒ stop), then, when ``authorize``, ``S`` which must equal ``owner_id`` (or be
    unset, when ``untagged_ok``: only for a pane that pinned itself, pure/omx/strays.py), then a
    final ``L``, ``kill-pane`` and an after-kill ``L`` that must prove it gone; while that ``L``
    still shows the pane live with its pinned pid, pause and ``L`` again (``kill_backoff_ms``).
    The loop stops at the first pane that is not resolved; later panes are reported
    ``not_attempted``. Leader and HUD panes, targets not starting with ``%`` and repeats are
    excluded before the loop; any other target (``%abc``, ``%13\\n``) is kept, and its first proof
    refuses it as ``invalid_pane_id`` without asking tmux. ``effects``: what a pane's kill removes, in
    the caller's words, by pane id (else the pane itself, ``kill_pane_step``).
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
    backoff = kill_backoff_ms(kill_settle_ms(len(queue)))
    stopped = False
    for target in queue:
        if stopped:
            results.append(PaneResult(pane_id=target.pane_id, fate="not_attempted"))
            continue
        result = yield from _teardown_one(target, owner_id=owner_id, authorize=authorize, untagged_ok=untagged_ok,
                                          backoff=backoff, effect=(effects or {}).get(target.pane_id))
        results.append(result)
        stopped = not result.resolved
    return TeardownReport(results=tuple(results), exclusions=tuple(exclusions))


def _refused(pane: str, stage: Stage, problem: PaneProblem) -> PaneResult:
    return PaneResult(pane_id=pane, fate="pid_changed", reason="pane_pid_changed", stage=stage, problem=problem)


def _unproven(proof: Proof, owner_id: str | None) -> PaneResult:
    """The result of a pane whose proof ended its teardown: gone (resolved), unavailable, refused."""
    pane, verdict, stage = proof.pane_id, proof.verdict, proof.stage
    assert verdict is not None and stage is not None
    if proof.kind == "gone":  # with the server that answered, when it is not the pane's
        return PaneResult(pane_id=pane, fate="gone", reason=verdict.reason, stage=stage, problem=verdict.problem)
    if proof.kind == "unavailable":
        return PaneResult(pane_id=pane, fate="proof_unavailable", reason=verdict.reason, stage=stage,
                          problem=verdict.problem)
    if proof.kind == "owner_changed":
        assert proof.owner is not None
        return _refused(pane, stage, OwnerNotAuthorized(expected_owner=owner_id, owner=proof.owner))
    assert proof.found_pid is not None
    if proof.kind == "pid_unpinned":
        return _refused(pane, stage, PidUnpinned(pinned_pid=proof.pinned_pid, found_pid=proof.found_pid))
    assert proof.pinned_pid is not None
    return _refused(pane, stage, PidMismatch(pinned_pid=proof.pinned_pid, found_pid=proof.found_pid))


def _teardown_one(target: TeardownTarget, *, owner_id: str | None, authorize: bool, untagged_ok: bool,
                  backoff: Sequence[int], effect: m.Effect | None) -> Gen[PaneResult]:
    pane = target.pane_id
    proof = yield from prove_owned(pane, target.pid, (owner_id or "") if authorize else None, server=target.server,
                                   untagged_ok=untagged_ok)
    if proof.token is None:
        return _unproven(proof, owner_id)
    tagged = f", tagged {owner_id}" if authorize and owner_id else ""
    kill = yield from expect(kill_pane_step(proof.token, effect or m.effect(
        "remove", "pane", pane, f"killed after proof (pid {proof.token.pid}{tagged})")), m.Proc)
    if kill.exit_code != 0:
        return PaneResult(pane_id=pane, fate="kill_failed", reason="kill_failed", stage="kill",
                          problem=KillFailed(exit_code=kill.exit_code, stderr=trim(kill.stderr)))
    server = proof.token.server
    after = on_server((yield from prove(pane)), server)
    for pause in backoff:
        if not (after.live and after.pid == target.pid):
            break
        yield from expect(m.Sleep(ms=pause), m.Ack)
        after = on_server((yield from prove(pane)), server)
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
    report = yield from teardown(req.targets, owner_id=req.owner_id, authorize=req.authorize,
                                 leader_pane_id=req.leader_pane_id, hud_pane_id=req.hud_pane_id)
    resolved = all(r.resolved for r in report.results)
    result = TeardownResult(ok=resolved, results=report.results, excluded=report.exclusions)
    return m.Done(outcome=m.Outcome(status="ok" if resolved else "debt", result=m.JsonValue(unstructure(result))),
                  debt=tuple(m.Debt(kind="pane", subject=r.pane_id, reason=r.reason or r.fate,
                                    detail=r.problem.code if r.problem is not None else "")
                             for r in report.results if not r.resolved))
