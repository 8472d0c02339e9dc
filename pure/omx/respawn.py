"""``team.respawn``: restart a dead worker in a new proven pane, keeping its name, identity and inbox.

Under the scaling lock, after the stray sweep a scale-up makes too (``pure/omx/strays.py``): the
worker's recorded pane must be proven gone first (absent, or dead and
still provably ours — then it is removed); a live pane with the pinned pid refuses (nothing to
respawn), and an unreadable proof refuses. The new pane is placed like a scale-up's
(``pure/omx/layout.py``, among the team's other live panes), proven, split, pinned, tagged and
watched until its agent is ready (``pure/agents/supervise.py``); then the worker's trigger is
delivered again and the membership commit swaps the pane id and pid in the worker's record. Any
failure after the split, and an interrupt before the commit (docs/design-notes.md, "Interrupts"),
removes the new pane through the proof teardown; the membership is then unchanged. A worker whose
old pane could not be proven gone is never given a second pane.

The worker's intent (``<runtime>/<worker>.intent``, ``pure/omx/strays.py``) is written before the
split and rewritten with the new pane and the pid its split answered, so that a run killed before the
commit leaves a pane the stray sweep removes only while it still runs that process.
"""

from __future__ import annotations

from attrs import define, evolve, field, frozen
from returns.result import Failure

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.agents import supervise
from pure.convert import OMIT_NONE
from pure.omx import dispatch as dsp
from pure.omx import effects, ids, layout, startup_script, strays, transcripts
from pure.omx.codec import render_json
from pure.omx.locks import with_scaling_lock
from pure.omx.names import sanitize_team_name
from pure.omx.records import ConfigPatch, Member, TeamConfig, to_json
from pure.omx.scale_up.config import locked_state, save_config
from pure.omx.scale_up.plan import CLI_NOT_READY, pinned_servers, plan_placements, split_target, team_panes
from pure.omx.scale_up.run import Abort
from pure.omx.scale_up.worker import SplitTarget, prove_split_target, tag_pane
from pure.omx.state import TeamPaths, TeamState, resolve_state_root
from pure.program import (
    INTERRUPTED,
    Gen,
    Interrupted,
    PlanError,
    Program,
    changing,
    expect,
    fail,
    uninterrupted,
)


@frozen(kw_only=True)
class RespawnRequest:
    """``cli_problems``: as a scale-up's (``pure/omx/scale_up/run.py``): the worker's CLI, when it cannot
    start here, refuses the respawn before anything is changed."""

    team: str
    worker: str
    cwd: str
    env: dict[str, str] = field(factory=dict)
    cli_problems: dict[str, list[str]] | None = field(default=None, metadata=OMIT_NONE)


def respawn(req: RespawnRequest) -> Program:
    named = sanitize_team_name(req.team)
    if isinstance(named, Failure) or named.unwrap() != req.team:
        raise fail(f"invalid_team_name:{req.team}", status="refused")
    version = yield from expect(t.tmux("-V"), m.Proc)
    if version.exit_code != 0:
        raise fail("tmux is not available", status="refused")
    paths = TeamPaths(resolve_state_root(req.cwd, req.env), req.team)
    return (yield from with_scaling_lock(paths, lambda: changing(effects.worker(req.worker, "change"),
                                                                 _respawn(req, paths))))


def _refuse(message: str) -> PlanError:
    return fail(message, status="refused")


def _respawn(req: RespawnRequest, paths: TeamPaths) -> Gen[m.Done]:
    state, record, owner = yield from _read_member(req, paths)
    old_transcript = yield from _retire_old_pane(paths, req.worker, record, owner)
    script = paths.startup_script(record.index)
    if (yield from expect(m.Stat(path=script), m.Value)).value != "file":
        raise _refuse(f"respawn_startup_script_missing:{script}")
    # not refused: what a crashed or interrupted run of this team left goes first, before anything is
    # proven for the split, as in a scale-up (pure/omx/strays.py)
    swept = yield from strays.sweep(paths, state.config, owner)
    blocked = swept.blocking([req.worker])
    if blocked is not None:
        raise _refuse(f"respawn_{blocked}")
    placement, proven_into = yield from _placement(state.config, req.worker, owner)
    working_dir = record.working_dir if record.working_dir is not None else req.cwd
    # a crash from here until the commit leaves a second pane of a member: let later reads find it
    intent = paths.intent(req.worker)
    wrote = yield from expect(strays.intent_step(paths, "respawn", req.worker, first_new_pane=proven_into.first_new_pane),
                              m.Ack)
    if not wrote.ok:
        raise fail(f"respawn_intent_not_written:{intent}:{wrote.error}")
    created = NewPane()
    split = layout.placement_step(
        placement, proven_into.pane, "-d", "-P", "-F", t.NEW_PANE_FORMAT, "-c", str(working_dir),
        startup_script.gated_startup_command(script, paths.worker_dir(req.worker)), effect=effects.worker(
            req.worker, "change", f"{layout.placement_words(placement, proven_into.pane.pane_id, '-v')}, replaces pane "
                                  f"{record.pane_id}"))
    try:
        started = yield from _split_and_start(req, paths, state.config, record, owner, created, split)
    except Interrupted:
        return (yield from _undo_interrupted(paths, req.worker, owner, created))
    if isinstance(started, m.Done):
        return started
    done = yield from _committed(req, paths, record, started)
    return swept.onto(transcripts.noted(done, _previous_transcript(old_transcript)))


def _read_member(req: RespawnRequest, paths: TeamPaths) -> Gen[tuple[TeamState, Member, str]]:
    """The team's state, the worker's member record and the team's owner tag; refused when the worker
    is not a member, its CLI cannot start here, or the team has no owner tag."""
    state = yield from locked_state(paths)
    if state is None:
        raise _refuse(f"Team {paths.team} not found")
    record = next((w for w in state.config.workers if w.name == req.worker), None)
    if record is None:
        raise _refuse(f"respawn_worker_not_found:{req.worker}")
    cli = record.worker_cli or "codex"
    problems = (req.cli_problems or {}).get(cli)
    if problems:
        raise _refuse(f"{CLI_NOT_READY}:{cli}:{req.worker}:{problems[0]}")
    owner = (state.config.tmux_pane_owner_id or "").strip()
    if not owner:
        raise _refuse(f"respawn_owner_unavailable:{paths.team}")
    return state, record, owner


def _retire_old_pane(paths: TeamPaths, worker: str, record: Member, owner: str) -> Gen[transcripts.Kept | None]:
    """Refused while the worker's pane is live with its pinned pid (nothing to respawn) or cannot be
    proven; a dead pane kept by ``remain-on-exit`` is removed, its transcript kept first."""
    old_pane, old_pid = record.pane_id, record.pid
    if not t.is_pane_id(old_pane):
        return None
    verdict = t.on_server((yield from t.prove(old_pane)), record.tmux_server)
    if verdict.unavailable:
        raise _refuse(f"respawn_old_pane_proof_unavailable:{old_pane}:{verdict.code()}")
    if verdict.live and verdict.pid == old_pid:
        raise _refuse(f"respawn_worker_alive:{worker}:{old_pane}: its pane is live with the pinned pid "
                      f"{old_pid}; nothing to respawn")
    if verdict.gone and verdict.reason == "dead" and old_pid is not None and t.is_positive_pid(old_pid):
        return (yield from _remove_old_dead(paths, worker, old_pane, old_pid, owner, record.tmux_server))
    return None


def _placement(config: TeamConfig, worker: str, owner: str) -> Gen[tuple[layout.Placement, SplitTarget]]:
    """Where the new pane goes, as a scale-up of one would place it among the other members, and the
    proof of the pane it is split from (refused when that pane is not proven ours)."""
    others = evolve(config, workers=tuple(w for w in config.workers if w.name != worker))
    target, expected, _leader = split_target(others)
    placements = yield from plan_placements(others, target, expected, 1)
    placement = placements[0]
    into = placement.target if isinstance(placement, layout.Split) else str(config.leader_pane_id)
    into_pid = dict(team_panes(others)).get(into)
    if into_pid is None:
        raise _refuse(f"scale_up_split_target_pid_missing:{into}")
    try:
        proven_into = yield from prove_split_target(into, into_pid, owner, pinned_servers(others).get(into))
    except Abort as abort:
        raise _refuse(abort.message) from None
    return placement, proven_into


def _remove_old_dead(paths: TeamPaths, worker: str, pane: str, pid: int, owner: str,
                     server: str | None) -> Gen[transcripts.Kept]:
    """Remove the worker's old pane, dead and kept by ``remain-on-exit``, its transcript kept first: why
    its agent exited is often on it (pure/omx/transcripts.py)."""
    kept = yield from transcripts.keep(paths, worker, pane, pid, owner, server)
    problem = yield from supervise.remove_dead(pane, pid, owner, server)
    if problem is not None:
        raise _refuse(f"respawn_old_pane_not_removed:{problem}")
    return kept


def _previous_transcript(kept: transcripts.Kept | None) -> m.Answer:
    """What the answer says of the old (dead) pane's transcript: where it was saved, or why it was not."""
    if kept is None or not (kept.path or kept.missing):
        return {}
    return {"previousTranscript": kept.path} if kept.path else {"transcriptWarnings": [kept.missing]}


@define
class NewPane:
    """The respawn's new pane, as far as it got: split (``pane``), pinned (``pid``, on tmux ``server``)."""

    pane: str | None = None
    pid: int | None = None
    server: str | None = None


@frozen(kw_only=True)
class Started:
    """A new pane committed as the worker's, and how its trigger's delivery went."""

    fresh: Member
    delivery: supervise.Delivery
    trigger: str


def _split_and_start(req: RespawnRequest, paths: TeamPaths, config: TeamConfig, record: Member, owner: str,
                     created: NewPane, split_step: m.Run) -> Gen[m.Done | Started]:
    """Split, pin and tag the new pane with interrupts held (docs/design-notes.md, "Interrupts"), then
    start it, deliver the trigger and commit; ``created`` follows how far it got, for the undo of an
    interrupt."""
    failed = yield from uninterrupted(_split_pin_tag(req, paths, record, owner, created, split_step))
    if failed is not None:
        return failed
    assert created.pane is not None and created.pid is not None
    return (yield from _start(req, paths, config, record, owner, created))


def _split_pin_tag(req: RespawnRequest, paths: TeamPaths, record: Member, owner: str, created: NewPane,
                   split_step: m.Run) -> Gen[m.Done | None]:
    intent = paths.intent(req.worker)
    split = yield from expect(split_step, m.Proc)
    pane = t.answered_pane(split)[0]
    if split.exit_code != 0 or not t.is_pane_id(pane):
        yield from expect(m.RemovePath(path=intent), m.Ack)
        raise fail(f"Failed to create tmux pane for {req.worker}: {split.stderr.strip() or pane}")
    created.pane = pane
    pinned_new = yield from t.pin_new_pane(split)  # the pid the split answered (pure/tmux/owned.py)
    if pinned_new.pid is None:
        return _failed(f"respawn_pane_not_proven:{pane}:{pinned_new.problem}", pane)
    pid = created.pid = pinned_new.pid
    created.server = pinned_new.server
    # the pinned process, recorded before anything else: a later stray sweep removes this pane only
    # while it still runs it (pure/omx/strays.py)
    rewrote = yield from expect(strays.intent_step(paths, "respawn", req.worker, pane_id=pane, pid=pid), m.Ack)
    if not rewrote.ok:
        return _failed(f"respawn_intent_not_written:{intent}:{rewrote.error}", pane)
    problem = yield from tag_pane(pane, pid, owner, created.server)
    if problem is not None:
        return _failed(f"respawn_tag_failed:{pane}:{problem}", pane)
    return None


def _undo_interrupted(paths: TeamPaths, worker: str, owner: str, created: NewPane) -> Gen[m.Done]:
    """An interrupt before the commit: the new pane goes as on a failure; one the split made but
    that was never pinned is kept as debt (never killed blindly)."""
    if created.pane is None:
        yield from expect(m.RemovePath(path=paths.intent(worker)), m.Ack)
        return _failed(INTERRUPTED, None)
    if created.pid is None:
        return _failed(INTERRUPTED, created.pane)
    yield from _remove(paths, worker, created, owner)
    return _failed(INTERRUPTED, None)


def _start(req: RespawnRequest, paths: TeamPaths, config: TeamConfig, record: Member, owner: str,
           created: NewPane) -> Gen[m.Done | Started]:
    pane, pid, server = created.pane, created.pid, created.server
    assert pane is not None and pid is not None
    cli = record.worker_cli or "codex"
    problem = yield from supervise.keep_on_exit(pane, pid, owner, True, server)
    if problem is None:
        problem = yield from supervise.release(pane, pid, owner, server)
    if problem is None:
        started = yield from supervise.wait_until_ready(
            [supervise.Starting(worker=req.worker, cli=cli, pane=pane, pid=pid, server=server)], owner,
            supervise.policy_from_env(req.env))
        problem = None if started[0].ok else started[0].reason
    if problem is None:
        problem = yield from supervise.keep_on_exit(pane, pid, owner, False, server)
    if problem is not None:
        yield from _remove(paths, req.worker, created, owner)
        return _failed(f"respawn_{problem}", None)
    trigger = dsp.trigger_message(paths, req.worker, req.cwd, record.worktree_path is not None)
    delivery = yield from supervise.deliver(cli, pane, pid, owner, trigger, dsp.trigger_token(req.worker), server)
    if delivery.lost:
        yield from _remove(paths, req.worker, created, owner)
        return _failed(f"respawn_delivery_failed:{delivery.reason}", None)
    fresh = evolve(record, pane_id=pane, pid=pid, tmux_server=server)
    workers = tuple(to_json(fresh if w.name == req.worker else w) for w in config.workers)
    try:
        yield from save_config(paths, config.generation, ConfigPatch(workers=workers), None)
    except PlanError as error:
        yield from _remove(paths, req.worker, created, owner)
        return _failed(f"respawn_membership_persistence_failed:{error.outcome.message}", None)
    return Started(fresh=fresh, delivery=delivery, trigger=trigger)


def _committed(req: RespawnRequest, paths: TeamPaths, record: Member, started: Started) -> Gen[m.Done]:
    """After the commit: the worker's identity, the intent gone, the delivery log, the answer."""
    fresh, delivery = started.fresh, started.delivery
    pane, pid = fresh.pane_id, fresh.pid
    yield from expect(m.WriteFile(path=paths.worker_file(req.worker, "identity.json"),
                                  content=render_json(to_json(fresh))), m.Ack)
    yield from expect(m.RemovePath(path=paths.intent(req.worker)), m.Ack)
    unrecorded = yield from _record_delivery(req, paths, started)
    result: m.Answer = {"ok": True, "worker": req.worker, "paneId": pane, "pid": pid, "previousPaneId": record.pane_id,
                    "delivery": {"status": "delivered" if delivery.ok else "not_delivered", "reason": delivery.reason}}
    if unrecorded is not None:
        result["delivery"]["notRecorded"] = unrecorded
    if delivery.ok:
        return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))
    return m.Done(outcome=m.Outcome(status="debt", result=m.JsonValue(result)),
                  debt=(m.Debt(kind="task_delivery", subject=req.worker, reason=delivery.reason),))


def _record_delivery(req: RespawnRequest, paths: TeamPaths, started: Started) -> Gen[str | None]:
    """The trigger's delivery as a dispatch request of its own (``respawn:<worker>``) in its final
    state, and the delivery log's lines: a task no screen confirmed is then debt until a retry
    delivers it (pure/omx/undelivered.py). After the commit nothing is undone: why the request could
    not be recorded is answered instead (None when it was)."""
    fresh, delivery = started.fresh, started.delivery
    request_id = yield from ids.fresh_uuid()
    now = (yield from expect(m.Clock(), m.Value)).value
    queued = dsp.new_request(request_id=request_id, team=paths.team, worker=req.worker, index=fresh.index,
                             pane_id=str(fresh.pane_id), trigger=started.trigger, mode=dsp.TRANSPORT_DIRECT, now=now,
                             made_by="respawn")
    request = dsp.watched_outcome(queued, delivery.ok, delivery.reason, now, attempts=1)
    problem = None
    try:
        yield from dsp.append_request(paths, request)
    except PlanError as error:
        problem = error.outcome.message
    yield from expect(dsp.attempted_log_step(req.cwd, queued, now), m.Ack)
    yield from expect(dsp.result_log_step(req.cwd, request, now, "panefleet.respawn"), m.Ack)
    return problem


def _remove(paths: TeamPaths, worker: str, created: NewPane, owner: str) -> Gen[None]:
    """Take the new pane away again, with interrupts held: a dead one directly, a live one through
    the proof teardown; the intent goes with it once the pane is proven gone (else it stays
    for later sweeps)."""
    yield from uninterrupted(_remove_now(paths, worker, created, owner), answers=True)


def _remove_now(paths: TeamPaths, worker: str, created: NewPane, owner: str) -> Gen[None]:
    pane, pid, server = created.pane, created.pid, created.server
    assert pane is not None and pid is not None
    yield from transcripts.keep(paths, worker, pane, pid, owner, server)  # why it did not start is often on it
    yield from supervise.remove_dead(pane, pid, owner, server)
    report = yield from t.teardown([t.TeardownTarget(pane_id=pane, pid=pid, server=server)], owner_id=owner,
                                   authorize=True,
                                   effects={pane: effects.worker(worker, "change", f"its new pane {pane} removed again")})
    if all(r.resolved for r in report.results):
        yield from expect(m.RemovePath(path=paths.intent(worker)), m.Ack)


def _failed(message: str, kept_pane: str | None) -> m.Done:
    result: m.Answer = {"ok": False, "error": message}
    if kept_pane is None:
        return m.Done(outcome=m.Outcome(status="error", result=m.JsonValue(result), message=message))
    result["keptPaneId"] = kept_pane  # created but not provably ours: never killed blindly
    return m.Done(outcome=m.Outcome(status="debt", result=m.JsonValue(result), message=message),
                  debt=(m.Debt(kind="tmux_pane", subject=kept_pane, reason=message),))


operations.register("team.respawn", RespawnRequest, respawn)
