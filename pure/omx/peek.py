"""``team.peek``: one worker's screen, read only after its pane is proven the worker's.

The worker's recorded pane is proven (``L``, owner tag, ``L`` with its pinned pid,
``pure/tmux/owned.py``) before its screen is read; a pane gone, another process under its id or
another owner tag refuses the peek with the proof's reason, and nothing is read. The screen (with the
lines above it, ``HISTORY_LINES``) is classified by the agent-screen model (``pure/agents/screen.py``):
the answer has the agent's state, the lines that decided it and the last ``lines`` lines.
"""

from __future__ import annotations

from attrs import field, frozen

from pure import model as m
from pure import ops
from pure import tmux as t
from pure.agents import screen as sc
from pure.omx import state as st
from pure.program import Program, expect, fail
from pure.team_ops import check_team_name, load_team

MAX_LINES = 10_000


@frozen(kw_only=True)
class PeekRequest:
    team: str
    worker: str
    cwd: str
    env: dict[str, str] = field(factory=dict)
    lines: int = 40


def peek(req: PeekRequest) -> Program:
    check_team_name(req.team)
    if not 1 <= req.lines <= MAX_LINES:
        raise fail(f"peek_lines_out_of_range:{req.lines} (1 to {MAX_LINES})", status="refused")
    paths = st.TeamPaths(st.resolve_state_root(req.cwd, req.env), req.team)
    team, _unlocked = yield from load_team(paths)
    workers = [w for w in team.config.get("workers") or [] if isinstance(w, dict)]
    record = next((w for w in workers if w.get("name") == req.worker), None)
    if record is None:
        raise fail(f"peek_worker_not_found:{req.worker}", status="refused")
    pane, pid = record.get("pane_id"), record.get("pid")
    if not isinstance(pane, str) or not t.is_pane_id(pane):
        raise fail(f"peek_no_pane:{req.worker}", status="refused")
    owner = team.config.get("tmux_pane_owner_id")
    proof = yield from t.prove_owned(pane, pid if isinstance(pid, int) else None, str(owner or ""), keep_dead=True)
    if proof.token is None:
        raise fail(f"peek_pane_unproven:{pane}:{proof.code}", status="refused")
    shot = yield from expect(t.capture_step(proof.token, history=True), m.Proc)
    if shot.exit_code != 0:
        raise fail(f"peek_capture_failed:{pane}:{shot.stderr.strip()}")
    cli = str(record.get("worker_cli") or "codex")
    seen = sc.classify(cli, shot.stdout, dead=proof.token.dead)
    lines = sc.screen_lines(shot.stdout)[-req.lines:]
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue({
        "ok": True, "team": req.team, "worker": req.worker, "paneId": pane, "pid": pid, "cli": cli,
        "state": seen.state, "evidence": list(seen.evidence), "lines": lines})))


ops.register("team.peek", PeekRequest, peek)
