"""``team.logs``: a worker's scrollback — its live pane's, read after the pane proof, or the transcript
saved when its pane was killed (``pure/omx/transcripts.py``; docs/reaching-workers.md, "panefleet team logs").

A member whose recorded pane is proven its (``L``, owner tag, ``L`` with the pinned pid; a dead pane
kept by ``remain-on-exit`` counts): the last ``lines`` lines of the pane's history and screen. A member
whose pane is not proven, or a worker that is no longer a member: its newest saved transcript, saying
which file and when it was saved. Neither: refused, listing the team's workers and the workers with saved
transcripts. Nothing is changed.
"""

from __future__ import annotations

from attrs import field, frozen

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.omx import state as st
from pure.omx import transcripts as tr
from pure.omx.peek import find_worker, prove_recorded
from pure.program import Gen, Program, expect, fail


@frozen(kw_only=True)
class LogsRequest:
    team: str
    worker: str
    cwd: str
    env: dict[str, str] = field(factory=dict)
    lines: int = tr.LINES


def logs(req: LogsRequest) -> Program:
    if not 1 <= req.lines <= tr.LINES:
        raise fail(f"logs_lines_out_of_range:{req.lines} (1 to {tr.LINES})", status="refused")
    found = yield from find_worker(req.team, req.worker, req.cwd, req.env)
    paths, workers, record = found.paths, found.workers, found.record
    head: m.Answer = {"ok": True, "team": req.team, "worker": req.worker}
    problem = ""  # why a member's pane was not read
    if record is not None:
        proof = yield from prove_recorded(record, found.owner, keep_dead=True)
        if proof is None:
            problem = f"logs_no_pane:{req.worker}"
        elif proof.token is None:
            reason = proof.code if proof.kind in ("gone", "unavailable") else proof.kind
            problem = f"logs_pane_unproven:{proof.pane_id}:{reason}"
        else:
            shot = yield from expect(t.scrollback_step(proof.token, req.lines), m.Proc)
            if shot.exit_code == 0:
                return _done({**head, "source": "pane", "paneId": proof.token.pane_id, "pid": proof.token.pid,
                              "dead": proof.token.dead, "lines": _last(tr.text_of(shot.stdout), req.lines)})
            problem = f"logs_capture_failed:{proof.token.pane_id}:{shot.stderr.strip()}"
    saved = yield from tr.saved(paths)
    mine = [s for s in saved if s.worker == req.worker]
    if mine:
        return (yield from _transcript(paths, head, mine, problem, req.lines))
    if problem:
        raise fail(problem, status="refused")
    message = f"logs_worker_not_found:{req.worker}"
    raise fail(message, status="refused", result={
        "ok": False, "error": message, "workers": [w.name for w in workers],
        "transcripts": sorted({s.worker for s in saved})})


def _transcript(paths: st.TeamPaths, head: m.Answer, mine: list[tr.Saved], problem: str, lines: int) -> Gen[m.Done]:
    """The newest of a worker's saved transcripts (``problem``: why its member's pane was not read)."""
    newest = mine[-1]
    path = f"{paths.transcripts_dir}/{newest.name}"
    data = yield from expect(m.ReadFile(path=path), m.FileData)
    if data.content is None:
        raise fail(f"logs_transcript_unreadable:{path}:{data.error or 'gone'}")
    answer: m.Answer = {**head, "source": "transcript", "path": path, "savedAt": tr.saved_at(newest.stamp),
                    "transcripts": [s.name for s in mine], "lines": _last(data.content, lines)}
    if problem:
        answer["paneProblem"] = problem
    return _done(answer)


def _last(text: str, lines: int) -> list[str]:
    return text.splitlines()[-lines:]


def _done(result: m.Answer) -> m.Done:
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))


operations.register("team.logs", LogsRequest, logs)
