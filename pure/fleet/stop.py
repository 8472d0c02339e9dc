"""``fleet.stop``: stop every worker of a team the way oh-my-codex 0.20.3's team shutdown asks them to,
then kill their panes after proof; the leader pane and the team's records stay.

Under the scaling lock: a ``shutdown-request.json`` in each worker's folder (``{"requested_at",
"requested_by"}``, as oh-my-codex's ``writeShutdownRequest``), a bounded wait for each worker's
``shutdown-ack.json`` (``status`` ``accept`` or ``reject``, ``updated_at`` not before the request:
oh-my-codex's ``readShutdownAck``), then the proof teardown of every recorded worker pane
(``pure/tmux/teardown.py``), the leader pane excluded, each worker's transcript kept first
(``pure/omx/transcripts.py``; not before a purge, which removes the team's folder). A pane that
cannot be proven ours or gone is left and answered as debt. The membership is not changed: ``panefleet apply`` brings the same
workers back (``pure/fleet/converge.py``, respawn). Before the team's state is removed
(``panefleet destroy --purge``), the leader pane's owner tag is taken off after its proof, so that
no pane is left carrying the tag of a team that no record names.
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.omx import effects, transcripts
from pure.omx.codec import parse_object, render_json
from pure.omx.locks import with_scaling_lock
from pure.omx.scale_up.config import locked_state
from pure.omx.state import TeamPaths, resolve_state_root
from pure.omx.tasks import parse_iso_ms
from pure.omx.txn import read_text
from pure.program import Gen, Program, expect, fail
from pure.team import check_team_name

REQUESTED_BY = "leader-fixed"  # who oh-my-codex's shutdown names as the requester
ACK_POLL_MS = 250


@frozen(kw_only=True)
class StopRequest:
    team: str
    cwd: str
    env: dict[str, str] = field(factory=dict)
    wait_ms: int = 10_000  # 0: do not wait for acknowledgements
    release_leader: bool = False  # also take the team's owner tag off the leader pane (before a purge)


def stop_team(req: StopRequest) -> Program:
    check_team_name(req.team)
    paths = TeamPaths(resolve_state_root(req.cwd, req.env), req.team)
    return (yield from with_scaling_lock(paths, lambda: _stop(req, paths)))


def _stop(req: StopRequest, paths: TeamPaths) -> Gen[m.Done]:
    state = yield from locked_state(paths)
    if state is None:
        raise fail(f"Team {req.team} not found", status="refused")
    config = state.config
    workers = config.workers
    acks: dict[str, str] = {}
    if req.wait_ms > 0 and workers:
        acks = yield from _ask_and_wait(paths, [w.name for w in workers], req.wait_ms)
    owner = config.tmux_pane_owner_id or f"team:{req.team}"
    with_panes = [w for w in workers if w.pane_id]
    targets = [t.TeardownTarget(pane_id=str(w.pane_id), pid=w.pid, server=w.tmux_server) for w in with_panes]
    named = [w.name for w in with_panes]
    leader = config.leader_pane_id
    # each worker's transcript first (pure/omx/transcripts.py), unless the team's folder goes (--purge)
    saved = [] if req.release_leader else (yield from transcripts.keep_records(
        paths, workers, owner, leader_pane_id=leader))
    report = yield from t.teardown(targets, owner_id=owner, authorize=True,
                                   leader_pane_id=leader,
                                   effects={target.pane_id: effects.killed(name, target.pane_id, target.pid, owner)
                                            for name, target in zip(named, targets, strict=True)})
    kept_panes = [r for r in report.results if not r.resolved]
    if req.release_leader and not kept_panes and t.is_pane_id(leader):
        proof = yield from t.prove_owned(leader, config.leader_pane_pid, owner, server=config.leader_tmux_server)
        if proof.token is not None:
            yield from expect(t.untag_step(proof.token, m.effect(
                "change", "pane", leader, "leader pane: owner tag removed (the team is purged)")), m.Proc)
    result: dict[str, Any] = {
        "ok": not kept_panes, "team": req.team, "leaderPaneId": leader,
        "workers": [{"name": w.name, "paneId": w.pane_id, "ack": acks.get(w.name, "none")} for w in workers],
        "killed": [r.pane_id for r in report.results if r.fate == "killed"],
        "gone": [r.pane_id for r in report.results if r.fate == "gone"],
        "kept": [{"paneId": r.pane_id, "reason": r.reason, "detail": r.detail} for r in kept_panes],
        "transcripts": {k.worker: k.path for k in saved if k.path},
    }
    result = transcripts.with_warnings(result, transcripts.lost(saved, report))
    if kept_panes:
        result["error"] = "stop_panes_kept:" + ",".join(r.pane_id for r in kept_panes)
        return m.Done(outcome=m.Outcome(status="debt", result=m.JsonValue(result), message=result["error"]),
                      debt=tuple(m.Debt(kind="tmux_pane", subject=r.pane_id, reason=r.detail or r.reason)
                                 for r in kept_panes))
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))


def _ask_and_wait(paths: TeamPaths, names: list[str], wait_ms: int) -> Gen[dict[str, str]]:
    """Write each worker's shutdown request, then read acknowledgements until all answered or
    ``wait_ms`` passed. Answers ``accept``/``reject`` per worker that answered."""
    now = yield from expect(m.Clock(), m.Value)
    requested_at = str(now.value)
    for name in names:
        yield from expect(m.WriteFile(path=paths.worker_file(name, "shutdown-request.json"), content=render_json(
            {"requested_at": requested_at, "requested_by": REQUESTED_BY}),
            effect=effects.worker(name, "remove", "asked to shut down")), m.Ack)
    since = parse_iso_ms(requested_at) or 0
    acks: dict[str, str] = {}
    waited = 0
    while True:
        for name in names:
            if name not in acks:
                answer = _ack(name, (yield from read_text(paths.worker_file(name, "shutdown-ack.json"))), since)
                if answer is not None:
                    acks[name] = answer
        if len(acks) == len(names) or waited >= wait_ms:
            return acks
        yield from expect(m.Sleep(ms=ACK_POLL_MS), m.Ack)
        waited += ACK_POLL_MS


def _ack(name: str, text: str | None, since_ms: int) -> str | None:
    if text is None:
        return None
    parsed = parse_object(text, name).value_or(None)
    if not isinstance(parsed, dict) or parsed.get("status") not in ("accept", "reject"):
        return None
    updated = parse_iso_ms(str(parsed.get("updated_at") or ""))
    if updated is None or updated < since_ms:
        return None
    return str(parsed["status"])


operations.register("fleet.stop", StopRequest, stop_team)
