"""``team.peek``: one worker's screen, read only after its pane is proven the worker's; and
``team.locate``: where that proven pane is, for ``team attach``.

The worker's recorded pane is proven (``L``, owner tag, ``L`` with its pinned pid,
``pure/tmux/owned.py``) before its screen is read; a pane gone, another process under its id or
another owner tag refuses the peek with the proof's reason, and nothing is read. The screen (with the
lines above it, ``HISTORY_LINES``) is classified by the agent-screen model (``pure/agents/screen.py``):
the answer has the agent's state, the lines that decided it and the last ``lines`` lines.
"""

from __future__ import annotations

from attrs import field, frozen

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.agents import screen as sc
from pure.omx import state as st
from pure.omx.records import Member
from pure.program import Gen, Program, expect, fail
from pure.team import check_team_name, load_team
from pure.tmux import facts

MAX_LINES = 10_000


@frozen(kw_only=True)
class PeekRequest:
    team: str
    worker: str
    cwd: str
    env: dict[str, str] = field(factory=dict)
    lines: int = 40


def peek(req: PeekRequest) -> Program:
    if not 1 <= req.lines <= MAX_LINES:
        raise fail(f"peek_lines_out_of_range:{req.lines} (1 to {MAX_LINES})", status="refused")
    record, token = yield from proven_worker(req.team, req.worker, req.cwd, req.env, keep_dead=True)
    pane, pid = token.pane_id, record.pid
    shot = yield from expect(t.capture_step(token, history=True), m.Proc)
    if shot.exit_code != 0:
        raise fail(f"peek_capture_failed:{pane}:{shot.stderr.strip()}")
    cli = record.worker_cli or "codex"
    seen = sc.classify(cli, shot.stdout, dead=token.dead)
    lines = sc.screen_lines(shot.stdout)[-req.lines:]
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue({
        "ok": True, "team": req.team, "worker": req.worker, "paneId": pane, "pid": pid, "cli": cli,
        "state": seen.state, "evidence": list(seen.evidence), "lines": lines})))


def proven_worker(team: str, worker: str, cwd: str, env: dict[str, str], *,
                  keep_dead: bool = False) -> Gen[tuple[Member, t.OwnedPane]]:
    """A worker's record and its recorded pane, proven (``L``, owner tag, ``L`` with its pinned pid);
    refused (``peek_…`` codes, shared by peek and attach) when either is missing or unproven."""
    found = yield from find_worker(team, worker, cwd, env)
    if found.record is None:
        raise fail(f"peek_worker_not_found:{worker}", status="refused")
    record = found.record
    proof = yield from prove_recorded(record, found.owner, keep_dead=keep_dead)
    if proof is None:
        raise fail(f"peek_no_pane:{worker}", status="refused")
    if proof.token is None:
        raise fail(f"peek_pane_unproven:{proof.pane_id}:{proof.code}", status="refused")
    return record, proof.token


@frozen(kw_only=True)
class FoundWorker:
    """A team's paths, its owner tag, its worker records, and the record of the worker asked for (None:
    not a member)."""

    paths: st.TeamPaths
    owner: str
    workers: tuple[Member, ...]
    record: Member | None


def find_worker(team: str, worker: str, cwd: str, env: dict[str, str]) -> Gen[FoundWorker]:
    """The team (its name checked, its state read) and ``worker``'s record in it: what peek, attach and
    logs start from."""
    check_team_name(team)
    paths = st.TeamPaths(st.resolve_state_root(cwd, env), team)
    loaded, _unlocked = yield from load_team(paths)
    workers = loaded.config.workers
    return FoundWorker(paths=paths, owner=loaded.config.tmux_pane_owner_id or "", workers=workers,
                       record=next((w for w in workers if w.name == worker), None))


def prove_recorded(record: Member, owner: str, *, keep_dead: bool = False) -> Gen[t.Proof | None]:
    """A worker record's pane proven its (``L``, owner tag, ``L`` with the pid it records); None when the
    record names no pane (peek, attach and send read a worker only through this)."""
    pane = record.pane_id
    if not t.is_pane_id(pane):
        return None
    return (yield from t.prove_owned(pane, record.pid, owner, server=record.tmux_server, keep_dead=keep_dead))


@frozen(kw_only=True)
class LocateRequest:
    team: str
    worker: str
    cwd: str
    env: dict[str, str] = field(factory=dict)


def locate(req: LocateRequest) -> Program:
    """The worker's proven pane and where it is: session id and name, window id."""
    _record, token = yield from proven_worker(req.team, req.worker, req.cwd, req.env)
    where = yield from expect(t.locate_step(token), m.Proc)
    fields = facts.LOCATE.cut(where.stdout.strip())
    if where.exit_code != 0 or len(fields) != 3:
        raise fail(f"peek_capture_failed:{token.pane_id}:{where.stderr.strip() or where.stdout.strip()}")
    session_id, window_id, session_name = fields
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue({
        "ok": True, "team": req.team, "worker": req.worker, "paneId": token.pane_id, "pid": token.pid,
        "sessionId": session_id, "windowId": window_id, "sessionName": session_name})))


operations.register("team.peek", PeekRequest, peek)
operations.register("team.locate", LocateRequest, locate)
