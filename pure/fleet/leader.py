"""A fleet team's leader pane: made with the team (``fleet.team_up``) and made again when it is gone
(``fleet.restore_leader``), on the team's tmux server.

The leader pane is a new session named as the fleet file says, or — when that session exists, as it
does after ``panefleet destroy`` or when the user made it — a new window of it: panefleet never adopts
a pane it did not make unless the file names it (``leader_pane``). A pane made here and not recorded
(the team's state could not be written, or the proof failed) is killed again after its proof
(``pure/tmux/owned.py``); one that cannot be proven is named in the error.
"""

from __future__ import annotations

import attrs
from attrs import field, frozen

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.omx import startup_script, strays
from pure.omx.codec import parse_object, render_json
from pure.omx.locks import with_scaling_lock
from pure.omx.records import ConfigPatch
from pure.omx.scale_up.config import locked_state, save_config
from pure.omx.state import TeamPaths, resolve_state_root
from pure.program import Gen, PlanError, Program, expect, fail, uninterrupted
from pure.team import TeamInitRequest, check_team_name, team_init


@frozen(kw_only=True)
class TeamUpRequest:
    team: str
    cwd: str
    session: str
    env: dict[str, str] = field(factory=dict)
    leader_pane: str | None = None  # join this existing pane instead of making one


@frozen(kw_only=True)
class RestoreLeaderRequest:
    team: str
    cwd: str
    env: dict[str, str] = field(factory=dict)


def make_leader_pane(team: str, session: str, cwd: str, pin_dir: str,
                     action: m.EffectAction = "add") -> Gen[tuple[str, t.Pin | None]]:
    """A new pane for ``team``'s leader — a window of ``session`` when it exists, else the session
    itself — and its pid and server pinned right after (None when it could not be: the pane is then never
    killed).
    The pane pins itself in ``pin_dir`` too (``leftover_leaders``)."""
    yield from expect(m.MakeDir(path=pin_dir, effect=m.effect(action, "team", team)), m.Ack)
    command = startup_script.self_pinned_shell_command(pin_dir)
    exists = yield from expect(t.tmux("has-session", "-t", f"={session}"), m.Proc)
    if exists.exit_code == 0:
        made = yield from expect(t.leader_window_step(session, cwd, command, m.effect(
            action, "team", team, f"new leader pane in a new window of tmux session {session}")), m.Proc)
    else:
        made = yield from expect(t.new_session_step(session, cwd, command, effect=m.effect(
            action, "team", team, f"new tmux session {session} for its leader pane")), m.Proc)
    pane = t.answered_pane(made)[0]
    if made.exit_code != 0 or not t.is_pane_id(pane):
        raise fail(f"cannot make a leader pane in tmux session {session}: {made.stderr.strip() or pane}")
    pinned = yield from t.prove(pane)
    return pane, t.Pin(pid=pinned.pid, server=pinned.server) if pinned.live and pinned.pid else None


def leader_intent(pin_dir: str) -> str:
    """Where a run that is about to make a leader pane says so, with the lowest number that pane can have
    (``strays.made_after_intent``); removed once the pane is recorded or proven gone."""
    return f"{pin_dir}/leader.intent"


def leftover_leaders(pin_dir: str) -> Gen[None]:
    """Kill the leader panes that a run killed between ``make_leader_pane`` and its record left: live
    panes started with this folder's leader command, made after that run's intent (``leader_intent``),
    whose process is the one that pinned itself there (any other is left alone); then announce this
    run's own, with the lowest number a pane made from now on can have (none when tmux could not tell:
    a pane this run makes is then never taken for a leftover)."""
    mark = startup_script.shell_quote(pin_dir)  # tmux shows the start command quoted again: look for the folder
    listing = yield from expect(strays.listing_step(), m.Proc)
    said = yield from expect(m.ReadFile(path=leader_intent(pin_dir)), m.FileData)
    intent = None if said.content is None else parse_object(said.content, leader_intent(pin_dir)).value_or(None)
    for row in strays.live_rows(listing.stdout if listing.exit_code == 0 else ""):
        pane, pid = row.pane, row.pid
        if not row.start_command.rstrip('"').endswith(" sh " + mark) or not strays.made_after_intent(intent, pane):
            continue
        own = yield from expect(m.ReadFile(path=startup_script.self_pin_path(pin_dir, pane)), m.FileData)
        if t.parse_pid((own.content or "").strip()) != pid:
            continue
        yield from t.teardown([t.TeardownTarget(pane_id=pane, pid=pid, server=row.server)], owner_id=None,
                              authorize=False,
                              effects={pane: m.effect("remove", "pane", pane, "a leader pane a killed run "
                                                      f"left, removed after proof (pid {pid})")})
    first_new = t.first_new_pane(listing)
    announced = {"kind": "leader"} | ({strays.NEW_PANES_FROM: f"%{first_new}"} if first_new is not None else {})
    yield from expect(m.WriteFile(path=leader_intent(pin_dir), content=render_json(announced)), m.Ack)


def forget_leader_intent(pin_dir: str) -> Gen[None]:
    """The pane the intent announced is recorded, or proven gone."""
    yield from expect(m.RemovePath(path=leader_intent(pin_dir)), m.Ack)


def _take_back(team: str, pane: str, pin: t.Pin | None, why: str, pin_dir: str) -> Gen[str]:
    """Kill a leader pane this program made, while it still runs the process pinned when it was made
    (no owner check: it may not be tagged yet)."""
    if pin is None:
        return f"{why}; the pane {pane} it made could not be pinned and is left"
    report = yield from t.teardown([t.TeardownTarget(pane_id=pane, pid=pin.pid, server=pin.server)], owner_id=None,
                                   authorize=False,
                                   effects={pane: m.effect("change", "team", team, "its new leader pane killed again")})
    if report.results and report.results[0].resolved:
        yield from forget_leader_intent(pin_dir)
        return f"{why}; the pane {pane} it made was killed again"
    return f"{why}; the pane {pane} it made could not be proven safe to kill and is left"


def team_up(req: TeamUpRequest) -> Program:
    check_team_name(req.team)
    init = TeamInitRequest(team=req.team, cwd=req.cwd, env=req.env, leader_pane=req.leader_pane,
                           session_name=req.session)
    if req.leader_pane is not None:
        return (yield from team_init(init))
    paths = TeamPaths(resolve_state_root(req.cwd, req.env), req.team)
    if (yield from expect(m.Stat(path=paths.config), m.Value)).value != "absent":
        raise fail(f"Team {req.team} already exists", status="refused")
    if (yield from expect(m.Stat(path=req.cwd), m.Value)).value != "dir":  # before any pane is made
        raise fail(f"working directory does not exist: {req.cwd}", status="refused")
    yield from leftover_leaders(paths.team_dir)
    pane, pin = yield from uninterrupted(make_leader_pane(req.team, req.session, req.cwd, paths.team_dir))
    try:
        done: m.Done = yield from team_init(attrs.evolve(init, leader_pane=pane))
    except PlanError as failed:
        undone = yield from uninterrupted(_take_back(req.team, pane, pin, failed.outcome.message, paths.team_dir),
                                          answers=True)
        raise fail(undone, failed.outcome.status) from None
    yield from forget_leader_intent(paths.team_dir)
    return done


def restore_leader(req: RestoreLeaderRequest) -> Program:
    """Under the scaling lock: prove the recorded leader pane gone, make a new one, tag it through its
    proof, and record it (config and manifest, generation-checked)."""
    check_team_name(req.team)
    paths = TeamPaths(resolve_state_root(req.cwd, req.env), req.team)
    return (yield from with_scaling_lock(paths, lambda: _restore(req, paths)))


def _restore(req: RestoreLeaderRequest, paths: TeamPaths) -> Gen[m.Done]:
    state = yield from locked_state(paths)
    if state is None:
        raise fail(f"Team {req.team} not found", status="refused")
    config = state.config
    owner = config.tmux_pane_owner_id or f"team:{req.team}"
    recorded = config.leader_pane_id
    if t.is_pane_id(recorded):
        proof = yield from t.prove_owned(recorded, config.leader_pane_pid, owner, server=config.leader_tmux_server)
        if proof.token is not None:
            return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(
                {"ok": True, "team": req.team, "leaderPaneId": recorded, "restored": False})))
        verdict = t.on_server((yield from t.prove(recorded)), config.leader_tmux_server)
        if verdict.live or (verdict.unavailable and not t.server_not_running(verdict)):
            raise fail(f"leader_pane_unproven:{recorded}: {verdict.reason} (not gone, not proven ours: left alone)",
                       status="refused")
    session = config.tmux_session or f"omx-team-{req.team}"
    cwd = config.leader_cwd or req.cwd
    yield from leftover_leaders(paths.team_dir)
    pane, pin = yield from uninterrupted(make_leader_pane(req.team, session, cwd, paths.team_dir, "change"))
    try:
        claim = yield from t.prove_claimable(pane, owner)
        if claim.token is None or pin is None or (claim.token.pid, claim.token.server) != (pin.pid, pin.server):
            raise fail(f"leader_pane_unproven:{pane}: {claim.proof.code}")
        tagged = yield from expect(t.tag_step(claim.token, owner, m.effect(
            "change", "team", req.team, f"its new leader pane tagged {owner} (pid {claim.token.pid} pinned)")), m.Proc)
        if tagged.exit_code != 0:
            raise fail(f"failed to tag tmux pane {pane}: {tagged.stderr.strip()}")
        yield from save_config(paths, config.generation, ConfigPatch(
            leader_pane_id=pane, leader_pane_pid=claim.token.pid, leader_tmux_server=claim.token.server), None)
    except PlanError as failed:
        undone = yield from uninterrupted(_take_back(req.team, pane, pin, failed.outcome.message, paths.team_dir),
                                          answers=True)
        raise fail(undone, failed.outcome.status) from None
    yield from forget_leader_intent(paths.team_dir)
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(
        {"ok": True, "team": req.team, "leaderPaneId": pane, "leaderPanePid": claim.token.pid,
         "previousLeaderPaneId": recorded, "tmuxSession": session, "restored": True})))


operations.register("fleet.team_up", TeamUpRequest, team_up)
operations.register("fleet.restore_leader", RestoreLeaderRequest, restore_leader)
