"""Team lifecycle operations that are not scaling: ``team.init`` and ``team.status``.

``team.init`` writes oh-my-codex-compatible team state (what ``initTeamState`` writes, with zero
workers) bound to a leader pane whose pid is pinned and whose owner tag is set through a proof:
``L`` (pin), ``S`` (must be untagged or already ours), ``L`` (same pid), ``set-option``.
Workers are then added by ``team.scale_up``.

``team.status`` is read-only: one global snapshot proves every pane of the team at once, then the
owner tag of each live pane is read.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from attrs import field, frozen

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.convert import OMIT_NONE
from pure.omx import codec, instructions, locks, strays, txn, undelivered
from pure.omx import dispatch as dsp
from pure.omx import state as st
from pure.omx.records import JsonObject, TeamConfig, to_json
from pure.omx.txn import read_text
from pure.program import Gen, PlanError, Program, changing, expect, fail
from pure.tmux import facts

SESSION_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
TEAM_NAME_RULE = "a team name is 1-30 characters of a-z, 0-9 and '-', starting with a letter or digit"


def check_team_name(team: str) -> None:
    if st.TEAM_NAME_RE.fullmatch(team) is None:
        raise fail(f"invalid_team_name:{team} ({TEAM_NAME_RULE})", status="refused")


@frozen(kw_only=True)
class TeamInitRequest:
    team: str
    cwd: str
    env: dict[str, str] = field(factory=dict)
    task: str = ""
    agent_type: str = "executor"
    leader_pane: str | None = None
    new_session: bool = False
    session_name: str | None = None
    leader_command: str | None = None
    worker_cli: str | None = None


@frozen(kw_only=True)
class TeamStatusRequest:
    team: str
    cwd: str
    env: dict[str, str] = field(factory=dict)
    # False: no worker's screen is read (a fleet plan needs only the pane proofs, pure/fleet/converge.py)
    screens: bool | None = field(default=None, metadata=OMIT_NONE)


def load_team(paths: st.TeamPaths) -> Gen[tuple[st.TeamState, str]]:
    """oh-my-codex's public read: under the membership barrier, recover an interrupted commit, then
    read config and manifest. A missing team or malformed state ends the program with a typed error.

    Team state that cannot be written (a read-only mount: the barrier's lock directory cannot be
    made) is read without the barrier, as ``team debt show`` reads it; the second value is then the
    lock's failure (``""`` when the barrier was held). An interrupted commit cannot be recovered that
    way: the program ends naming its journal and why."""

    def body(barrier: locks.Barrier) -> Gen[tuple[str | None, str | None, str]]:
        yield from txn.recover(paths, barrier)
        config_text = yield from read_text(paths.config)
        manifest_text = None if config_text is None else (yield from read_text(paths.manifest))
        return config_text, manifest_text, ""

    def unlocked(ack: m.Ack) -> Gen[tuple[str | None, str | None, str]]:
        if (yield from read_text(paths.journal)) is not None:
            raise fail(f"{paths.journal}: an interrupted membership change must be recovered first, and the "
                       f"membership lock cannot be taken: {ack.error}")
        config_text = yield from read_text(paths.config)
        manifest_text = None if config_text is None else (yield from read_text(paths.manifest))
        return config_text, manifest_text, ack.error

    present = yield from expect(m.Stat(path=paths.config), m.Value)
    if present.value == "absent":  # no lock directory is created for a team that does not exist
        raise fail(f"Team {paths.team} not found", status="refused")
    config_text, manifest_text, unlocked_by = yield from locks.with_barrier_to_read(paths, body, unlocked)
    if config_text is None:
        raise fail(f"Team {paths.team} not found", status="refused")
    loaded = st.read_team_state(paths, config_text, manifest_text)
    return loaded.alt(lambda e: _raise(f"team_state_malformed:{e}")).unwrap(), unlocked_by


def _raise(message: str) -> Any:
    raise fail(message)


def _ok(result: dict[str, Any], status: m.Status = "ok") -> m.Done:
    return m.Done(outcome=m.Outcome(status=status, result=m.JsonValue(result)))


def _unclaimable(proof: t.Proof) -> str:
    """Why ``team init`` may not adopt the leader pane, in oh-my-codex's words."""
    pane = proof.pane_id
    if proof.stage == "first_proof":
        return f"exact_pane_proof_unavailable:{pane}:{proof.code}"
    if proof.owner is not None and proof.owner.kind == "error":
        return f"team_owner_unavailable:{pane}:{proof.owner.detail}"
    if proof.owner is not None:
        return f"leader_pane_owned_by_other_team:{pane}:{proof.owner.value}"
    return f"tmux pane identity changed: {pane}"


def team_init(req: TeamInitRequest) -> Program:
    check_team_name(req.team)
    if req.leader_pane is not None and req.new_session:
        raise fail("choose one of --leader-pane and --new-session", status="refused")
    cwd_kind = yield from expect(m.Stat(path=req.cwd), m.Value)
    if cwd_kind.value != "dir":
        raise fail(f"working directory does not exist: {req.cwd}" if cwd_kind.value == "absent"
                   else f"working directory is not a directory: {req.cwd}", status="refused")
    root = st.resolve_state_root(req.cwd, req.env)
    paths = st.TeamPaths(root, req.team)
    existing = yield from read_text(paths.config)
    if existing is not None:
        raise fail(f"Team {req.team} already exists", status="refused")
    version = yield from expect(t.tmux("-V"), m.Proc)
    if version.exit_code != 0:
        raise fail("tmux is not available", status="refused")
    session = req.session_name or f"omx-team-{req.team}"
    if SESSION_NAME_RE.fullmatch(session) is None:
        raise fail(f"invalid tmux session name: {session!r}", status="refused")
    leader = req.leader_pane
    if req.new_session:
        command = (req.leader_command,) if req.leader_command else ()
        created = yield from expect(t.new_session_step(session, req.cwd, *command, effect=m.effect(
            "add", "session", session, "new tmux session; its first pane is the leader")), m.Proc)
        first = t.answered_pane(created)[0]
        if created.exit_code != 0 or not t.is_pane_id(first):
            raise fail(f"Failed to create tmux session {session}: {created.stderr.strip() or first}")
        leader = first
    if leader is None:
        raise fail("no leader pane: run inside tmux ($TMUX_PANE), or pass --leader-pane %ID or --new-session",
                   status="refused")
    if not t.is_pane_id(leader):
        raise fail(f"leader pane id must look like %N, got {leader!r}", status="refused")
    owner_id = f"team:{req.team}"
    claim = yield from t.prove_claimable(leader, owner_id)
    if claim.token is None:
        raise fail(_unclaimable(claim.proof), status="refused")
    tagged = yield from expect(t.tag_step(claim.token, owner_id, m.effect(
        "change", "pane", leader, f"leader pane: owner tag set to {owner_id} (pid {claim.token.pid} pinned)")), m.Proc)
    if tagged.exit_code != 0:
        raise fail(f"failed to tag tmux pane {leader}: {tagged.stderr.strip()}")
    where = yield from expect(t.tmux("display-message", "-p", "-t", leader, facts.SESSION_NAME.format), m.Proc)
    leader_session = where.stdout.strip() if where.exit_code == 0 and where.stdout.strip() else None
    now = yield from expect(m.Clock(), m.Value)
    config = st.initial_config(
        team=req.team, task=req.task, agent_type=req.agent_type, created_at=now.value, tmux_session=session,
        leader_pane_id=leader, leader_pane_pid=claim.token.pid, leader_tmux_server=claim.token.server,
        leader_cwd=req.cwd, worker_cli=req.worker_cli,
    )
    manifest = st.manifest_from_config(config)
    sources: list[str | None] = []
    for source in instructions.source_paths(req.env, req.cwd):
        sources.append((yield from read_text(source)))
    agents = instructions.compose(req.team, sources)
    try:
        yield from changing(m.effect("add", "team", req.team, f"team state in {paths.team_dir}"), locks.with_barrier(
            paths, lambda _barrier: _write_initial_state(paths, config, manifest, now.value, agents)))
    except PlanError as failed:  # nothing of the team may outlive it: its session or its tag on the leader
        tagged_before = claim.proof.owner is not None and claim.proof.owner.kind == "value"
        undone = yield from _undo_init(leader, claim.token, owner_id, created=req.new_session,
                                       tagged_before=tagged_before)
        raise fail(f"{failed.outcome.message}; {undone}", failed.outcome.status) from None
    return _ok({"ok": True, "team": req.team, "stateRoot": root, "tmuxSession": session, "leaderPaneId": leader,
                "leaderPanePid": claim.token.pid, "leaderSession": leader_session, "ownerId": owner_id})


def _undo_init(leader: str, claimed: t.ClaimedPane, owner_id: str, *, created: bool, tagged_before: bool) -> Gen[str]:
    """Undo what ``team init`` did in tmux before its state could not be written: kill the pane of the
    session it created (the session goes with it), or take its owner tag off the leader pane it adopted
    (kept when the pane had that tag already). Each after its proof; what cannot be proven is said."""
    if created:
        report = yield from t.teardown([t.TeardownTarget(pane_id=leader, pid=claimed.pid, server=claimed.server)],
                                       owner_id=owner_id,
                                       authorize=True, effects={leader: m.effect(
                                           "remove", "pane", leader, "the leader pane of the session it started, "
                                                                     "killed again (its state could not be written)")})
        if report.results and report.results[0].resolved:
            return f"undone: killed pane {leader}, and with it the tmux session it had started"
        return f"the tmux session it started (pane {leader}) could not be proven safe to kill and is left"
    if tagged_before:
        return f"the leader pane {leader} keeps the owner tag it already had"
    proof = yield from t.prove_owned(leader, claimed.pid, owner_id, server=claimed.server)
    if proof.token is not None:
        untagged = yield from expect(t.untag_step(proof.token, m.effect(
            "change", "pane", leader, "owner tag removed again (the team's state could not be written)")), m.Proc)
        if untagged.exit_code == 0:
            return f"undone: removed the owner tag it had set on the leader pane {leader}"
    return f"the owner tag it set on the leader pane {leader} could not be removed (the pane is not proven)"


def _write_initial_state(paths: st.TeamPaths, config: TeamConfig, manifest: JsonObject, now: str,
                         agents: str) -> Gen[None]:
    if (yield from read_text(paths.config)) is not None:
        raise fail(f"Team {paths.team} already exists", status="refused")
    for sub in ("workers", "tasks", "claims", "mailbox", "dispatch", "events", "approvals"):
        made = yield from expect(m.MakeDir(path=posixpath.join(paths.team_dir, sub)), m.Ack)
        if not made.ok:
            raise fail(f"cannot create {paths.team_dir}/{sub}: {made.error}")
    phase = {"current_phase": "team-exec", "max_fix_attempts": 3, "current_fix_attempt": 0, "transitions": [],
             "updated_at": now}
    writes = (
        (paths.dispatch_requests, "[]"),
        (posixpath.join(paths.team_dir, instructions.FILE_NAME), agents),  # what Codex workers load
        (paths.phase, codec.render_json(phase)),
        (paths.manifest, codec.render_json(manifest)),
        (paths.config, codec.render_json(to_json(config))),
    )
    for path, text in writes:
        done = yield from expect(m.WriteFile(path=path, content=text), m.Ack)
        if not done.ok:
            raise fail(f"cannot write {path}: {done.error}")


def _pane_report(role: str, name: str, pane: object, pinned: object, verdict: t.Verdict | None,
                 owners: dict[str, t.OwnerAnswer], expected_owner: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": role, "name": name, "paneId": pane, "pinnedPid": pinned}
    if not isinstance(pane, str) or not pane or verdict is None:
        entry.update(verdict="none", reason="no pane recorded")
        return entry
    entry.update(verdict=verdict.status if verdict.status != "gone" else verdict.reason,
                 reason=verdict.reason, pid=verdict.pid, detail=verdict.detail)
    entry["pidMatch"] = verdict.live and t.is_positive_pid(pinned) and verdict.pid == pinned
    answer = owners.get(pane)
    if answer is not None:
        entry["owner"] = answer.value if answer.kind == "value" else None
        entry["ownerRead"] = answer.kind
        entry["ownerMatch"] = answer.kind == "value" and answer.value == expected_owner
    return entry


def _screen_report(report: dict[str, Any], cli: str, ours: t.SeenPane | None, team: str) -> Gen[None]:
    """What a worker's agent shows (``pure/agents/screen.py``), read only from a pane found live and
    ours by this status' snapshot and owner read; a gone pane's cause is its verdict."""
    from pure.agents import screen as sc

    if ours is None:
        report["screen"] = None
        if report.get("verdict") in ("absent", "dead"):
            why = report.get("detail") or "the agent exited or the pane was killed"
            report["cause"] = f"pane {report.get('paneId')} is {report.get('verdict')}: {why} " \
                              f"(`panefleet team respawn {team} {report.get('name')}` starts it again)"
        return
    shot = yield from expect(t.capture_step(ours), m.Proc)
    if shot.exit_code != 0:
        report["screen"] = None
        return
    seen = sc.classify(cli, shot.stdout)
    report["screen"] = seen.state
    report["screenDigest"] = sc.digest(shot.stdout)  # what `team status --watch` compares between refreshes
    if seen.state == "needs_input":
        report["cause"] = (f"{cli} asks: " + " | ".join(seen.evidence[:4])
                           + f" (answer it: `panefleet team attach {team} {report.get('name')}`)")
    elif seen.state not in sc.WAITING_STATES and seen.state != "busy":
        report["cause"] = f"{cli} shows {seen.state.replace('_', ' ')}: " + " | ".join(sc.last_lines(shot.stdout, 3))


def team_status(req: TeamStatusRequest) -> Program:
    check_team_name(req.team)
    root = st.resolve_state_root(req.cwd, req.env)
    paths = st.TeamPaths(root, req.team)
    team, unlocked_by = yield from load_team(paths)
    config = team.config
    snapshot = yield from expect(t.list_panes_step(), m.Proc)
    panes: list[tuple[str, str, object, object, str | None]] = []
    panes.append(("leader", "leader", config.leader_pane_id, config.leader_pane_pid, config.leader_tmux_server))
    if config.hud_pane_id:
        panes.append(("hud", "hud", config.hud_pane_id, config.hud_pane_pid, None))
    for worker in config.workers:
        panes.append(("worker", worker.name, worker.pane_id, worker.pid, worker.tmux_server))
    # each pane judged on the server it was pinned on (pure/tmux/parse.py ``on_server``)
    verdicts = {pane: t.on_server(t.verdict_from_answer(pane, snapshot), server) for _, _, pane, _, server in panes
                if isinstance(pane, str) and pane}
    owners: dict[str, t.OwnerAnswer] = {}
    for pane, verdict in verdicts.items():
        if verdict.live:
            owners[pane] = yield from t.read_owner(pane)
    expected_owner = config.tmux_pane_owner_id
    reports = [_pane_report(role, name, pane, pinned, verdicts.get(pane) if isinstance(pane, str) else None, owners,
                            expected_owner)
               for role, name, pane, pinned, _server in panes]
    debt_text = yield from read_text(paths.debt)
    debt: Any = None
    if debt_text is not None:
        debt = codec.parse_object(debt_text, paths.debt).map(lambda d: d).value_or({"malformed": True})
    statuses: dict[str, Any] = {}
    for worker in config.workers:
        text = yield from read_text(paths.worker_file(worker.name, "status.json"))
        statuses[worker.name] = st.worker_state(text)
    requests_text = yield from read_text(paths.dispatch_requests)
    # as far as a read-only report can tell: an unreadable requests file shows no task state
    requests = dsp.check_requests(requests_text, paths.dispatch_requests).value_or(())
    last_request = undelivered.latest_requests(requests)
    # `team debt show` reports the same (pure/omx/undelivered.py)
    undelivered_tasks = [u.to_json() for u in undelivered.find(config, requests)]
    clis = {w.name: w.worker_cli or "codex" for w in config.workers}
    for report in reports:
        if report["role"] == "worker":
            report["state"] = statuses.get(report["name"])
            request = last_request.get(report["name"])
            if request is not None:  # its latest dispatch request: was its task seen to reach it?
                report["task"] = {"status": request.status, "reason": request.last_reason}
            pane = report["paneId"]
            seen = t.seen_owned(pane, report["pinnedPid"], verdicts[pane], owners.get(pane), expected_owner) \
                if isinstance(pane, str) and pane in verdicts else None
            if req.screens is not False:
                yield from _screen_report(report, clis.get(report["name"], "codex"), seen, paths.team)
    surveyed = yield from strays.survey(paths, config)
    listed = [debt.get(key) for key in ("unresolved_panes", "workers")] if isinstance(debt, dict) else []
    in_debt = {p.get("pane_id") for panes in listed if isinstance(panes, list) for p in panes
               if isinstance(p, dict) and isinstance(p.get("pane_id"), str)}
    # a pane the cleanup debt record names is reported there, not again as a stray; `team debt show`
    # reports the same survey (pure/omx/strays.py)
    left = surveyed.to_json(excluded=in_debt)
    stray, leftover, trees = left["strayPanes"], left["leftoverWorkers"], left.get("leftoverWorktrees")
    kept = left.get("keptWorkers")  # members a rollback kept (pure/omx/kept_workers.py)
    proven = all(r.get("verdict") == "live" and r.get("pidMatch") and r.get("ownerMatch") for r in reports
                 if r["role"] != "hud")
    result = {
        "ok": True, "team": req.team, "stateRoot": root, "ownerId": expected_owner,
        "tmuxSession": config.tmux_session, "workerCount": config.worker_count,
        "configGeneration": config.config_generation, "panes": reports, "debt": debt,
        "panesProven": proven, "strayPanes": stray,
        "healthy": proven and debt is None and not stray and not leftover and not trees and not kept
        and not undelivered_tasks,
    }
    if undelivered_tasks:
        result["undeliveredTasks"] = undelivered_tasks
    if leftover:
        result["leftoverWorkers"] = leftover
    if trees:
        result["leftoverWorktrees"] = trees
    if kept:
        result["keptWorkers"] = kept
    if unlocked_by:  # read without the membership lock (read-only team state): why it could not be taken
        result["readUnlocked"] = unlocked_by
    snapshot_verdict = t.verdict_from_answer("%0", snapshot)
    if snapshot_verdict.server is not None:  # the server that answered: each pane was judged against its own
        result["tmuxServer"] = snapshot_verdict.server
    if snapshot_verdict.unavailable:
        message = f"pane_snapshot_unavailable:{snapshot_verdict.reason}:{snapshot_verdict.detail}"
        return m.Done(outcome=m.Outcome(status="error", message=message,
                                        result=m.JsonValue({**result, "ok": False, "error": message})))
    # exit status: 0 healthy; 3 needs attention (debt recorded, a pane not proven ours and live, what a
    # run that did not finish left, or a task no screen confirmed reaching its worker)
    return _ok(result, status="ok" if result["healthy"] else "debt")


operations.register("team.init", TeamInitRequest, team_init)
operations.register("team.status", TeamStatusRequest, team_status)
operations.register("tmux.teardown", t.TeardownRequest, t.teardown_program)
