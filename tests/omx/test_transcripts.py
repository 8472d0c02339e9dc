"""Worker transcripts (pure/omx/transcripts.py) and ``team.logs`` (pure/omx/logs.py), as pure programs
against scripted tmux: the transcript is kept after its own proof and before the teardown, whose calls
are unchanged; a transcript that cannot be kept never changes the kill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pure import model as m
from pure import tmux as t
from pure.omx import transcripts as tr
from pure.omx.logs import LogsRequest
from pure.omx.scale_down import DebtRequest, ScaleDownRequest
from pure.omx.state import TeamPaths
from pure.program import Program, decide
from tests.harness import ScenarioExecutor, err, ok
from tests.omx_down.fixtures import Team
from tests.omx_down.stub import Stub, run_op

L = "list-panes -a -F " + t.PANE_FORMAT
OWNER = "team:scale-down"
SCREEN = "codex> fix the login bug\nworking...\ndone: 3 files changed\n\n\n"


def S(p: str) -> str:  # noqa: N802
    return f"show-option -qv -p -t {p} @omx_team_pane_owner_id"


def C(p: str) -> str:  # noqa: N802
    return f"capture-pane -p -S -10000 -t {p}"


def K(p: str) -> str:  # noqa: N802
    return f"kill-pane -t {p}"


class Screens(Stub):
    """The scale-down stub, whose panes show ``SCREEN`` (``capture`` answers ``capture-pane``), and whose
    first ``owner_answers`` owner reads answer those instead of the owner."""

    def __init__(self, *args: object, capture: m.Proc | None = None, owner_answers: tuple[m.Proc, ...] = (),
                 **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.capture = capture or ok(SCREEN)
        self.owner_answers = list(owner_answers)

    def __call__(self, args: tuple[str, ...]) -> m.Proc:
        if args[0] == "capture-pane":
            self.log.append(" ".join(args))
            return self.capture
        if args[0] == "show-option" and self.owner_answers:
            self.log.append(" ".join(args))
            return self.owner_answers.pop(0)
        return super().__call__(args)


def _team(cwd: Path, stub: Stub) -> Team:
    team = Team(cwd, "scale-down", 3)
    team.set_panes(owner=OWNER, worker_2=("%13", 42413), worker_3=("%14", 42414))
    stub.panes.update({"%13": (0, 42413), "%14": (0, 42414)})
    return team


def _scale_down(tmp_path: Path, stub: Stub, *workers: str) -> tuple[m.Done, list[m.Entry]]:
    request = ScaleDownRequest(team="scale-down", cwd=str(tmp_path), env={"OMX_TEAM_SCALING_ENABLED": "1"},
                               worker_names=workers, force=True)
    return run_op("team.scale_down", request, ScenarioExecutor(tmp_path, stub))


def _transcripts(team: Team) -> dict[str, str]:
    folder = team.dir / "transcripts"
    return {p.name: p.read_text() for p in sorted(folder.iterdir())} if folder.exists() else {}


def test_a_scale_down_keeps_the_transcript_before_the_teardown(tmp_path: Path) -> None:
    stub = Screens()
    team = _team(tmp_path, stub)
    done, journal = _scale_down(tmp_path, stub, "worker-2")
    assert done.outcome.result == {"ok": True, "removedWorkers": ["worker-2"], "newWorkerCount": 2}  # oh-my-codex's
    # its own proof and capture first, then the teardown exactly as without a transcript, then the reconcile's L
    assert stub.log == [L, S("%13"), L, C("%13")] + [L, S("%13"), L, K("%13"), L] + [L]
    saved = _transcripts(team)
    assert list(saved) == ["worker-2.20260101T000000.003Z.log"]
    assert saved["worker-2.20260101T000000.003Z.log"] == "codex> fix the login bug\nworking...\ndone: 3 files changed\n"
    assert (team.dir / "transcripts" / "worker-2.20260101T000000.003Z.log").stat().st_mode & 0o777 == 0o600
    noted = [e.step for e in journal if getattr(e.step, "note", "") == t.TRANSCRIPT_NOTE]
    assert [s.op for s in noted] == ["run", "run", "run", "run", "write_file"]
    write = noted[-1]
    kill = next(i for i, e in enumerate(journal) if e.step.op == "run" and e.step.args[0] == "kill-pane")
    assert journal.index(next(e for e in journal if e.step is write)) < kill
    assert not (team.dir / "workers" / "worker-2").exists() and (team.dir / "transcripts").is_dir()


def test_a_refused_proof_skips_the_capture_and_the_teardown_goes_on_as_before(tmp_path: Path) -> None:
    stub = Screens(owner_answers=(err(1, "server exited unexpectedly"),))
    team = _team(tmp_path, stub)
    done, _journal = _scale_down(tmp_path, stub, "worker-2")
    assert stub.log == [L, S("%13")] + [L, S("%13"), L, K("%13"), L] + [L]
    assert _transcripts(team) == {}
    assert done.outcome.status == "ok"
    assert done.outcome.result == {
        "ok": True, "removedWorkers": ["worker-2"], "newWorkerCount": 2,
        "transcriptWarnings": ["no transcript of worker-2: its pane %13 is not proven its (it does not carry the "
                               "team's owner tag), so it was not read"]}


def test_a_failed_capture_keeps_nothing_and_the_kill_goes_on(tmp_path: Path) -> None:
    stub = Screens(capture=err(1, "can't find pane: %13"))
    team = _team(tmp_path, stub)
    done, _journal = _scale_down(tmp_path, stub, "worker-2")
    assert stub.log == [L, S("%13"), L, C("%13")] + [L, S("%13"), L, K("%13"), L] + [L]
    assert _transcripts(team) == {}
    assert done.outcome.result["transcriptWarnings"] == [  # type: ignore[index]
        "no transcript of worker-2: tmux could not read its pane %13 (can't find pane: %13)"]


def test_a_pane_not_killed_needs_no_warning(tmp_path: Path) -> None:
    """Another owner on both proofs: no transcript, no kill, the scale-down's debt as without transcripts."""
    stub = Screens(owner="team:someone-else")
    team = _team(tmp_path, stub)
    done, _journal = _scale_down(tmp_path, stub, "worker-2")
    assert stub.log == [L, S("%13")] + [L, S("%13")]
    assert done.outcome.result == {"ok": False, "error": "scale_down_pane_proof_unavailable:%13:pane_pid_changed"}
    assert _transcripts(team) == {}


def test_the_debt_reconcile_keeps_the_transcript_of_a_debt_pane_it_kills(tmp_path: Path) -> None:
    stub = Screens()
    stub.list_fail = True  # the scale-down cannot prove the pane: it stays as debt, no transcript
    team = _team(tmp_path, stub)
    team.worker_file("worker-2", "identity.json").write_text(json.dumps(
        {"name": "worker-2", "index": 2, "pane_id": "%13", "pid": 42413}))
    done, _ = _scale_down(tmp_path, stub, "worker-2")
    assert done.outcome.status == "debt" and _transcripts(team) == {}
    stub.list_fail = False
    before = len(stub.log)
    done, _ = run_op("team.debt_reconcile", DebtRequest(team="scale-down", cwd=str(tmp_path)),
                     ScenarioExecutor(tmp_path, stub))
    assert done.outcome.result == {"ok": True}
    assert stub.log[before:] == [L, S("%13"), L, S("%13"), L, C("%13"), L, S("%13"), L, K("%13"), L]
    assert list(_transcripts(team).values()) == ["codex> fix the login bug\nworking...\ndone: 3 files changed\n"]


# ----------------------------------------------------------------------------- keep, as a program


def _keep(worker: str = "worker-2") -> Program:
    kept = yield from tr.keep(TeamPaths("/w/.omx/state", "alpha"), worker, "%5", 55, "team:alpha")
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue({"path": kept.path, "missing": kept.missing})))


def _answer(step: m.Step) -> m.Observation:
    if isinstance(step, m.Run) and step.args[0] == "list-panes":
        return ok("%5\t0\t55\n")
    if isinstance(step, m.Run) and step.args[0] == "show-option":
        return ok("team:alpha\n")
    if isinstance(step, m.Run):
        return ok("line one\nline two\n\n")
    if isinstance(step, m.Clock):
        return m.Value(value="2026-03-04T05:06:07.089Z")
    return m.Ack(ok=True)


def _run_keep(worker: str = "worker-2") -> tuple[list[m.Step], m.Done]:
    journal: list[m.Entry] = []
    while True:
        decision = decide(lambda: _keep(worker), journal)
        if isinstance(decision, m.Done):
            return [e.step for e in journal], decision
        step = decision.steps[0]
        journal.append(m.Entry(step=step, observation=_answer(step)))


def test_keep_proves_reads_then_writes_one_file_named_by_worker_and_time() -> None:
    steps, done = _run_keep()
    assert [s.op if not isinstance(s, m.Run) else s.args[0] for s in steps] == [
        "list-panes", "show-option", "list-panes", "capture-pane", "now", "write_file"]
    assert all(s.note == tr.NOTE for s in steps if isinstance(s, (m.Run, m.WriteFile)))
    write = steps[-1]
    assert isinstance(write, m.WriteFile) and write.mode == 0o600
    assert write.path == "/w/.omx/state/team/alpha/transcripts/worker-2.20260304T050607.089Z.log"
    assert write.content == "line one\nline two\n"
    assert done.outcome.result == {"path": write.path, "missing": ""}


def test_a_name_that_cannot_name_a_file_is_not_read() -> None:
    steps, done = _run_keep("../worker-2")
    assert steps == [] and "not a worker name" in str(done.outcome.result)


@pytest.mark.parametrize(("now", "stamp"), [("2026-03-04T05:06:07.089Z", "20260304T050607.089Z"),
                                            ("1999-12-31T23:59:59.999Z", "19991231T235959.999Z")])
def test_stamps_sort_as_times_and_read_back(now: str, stamp: str) -> None:
    assert tr.stamp(now) == stamp and tr.saved_at(stamp) == now
    assert tr.FILE_RE.fullmatch(f"worker-12.{stamp}.log") is not None


# ----------------------------------------------------------------------------------- team.logs


def _logs(tmp_path: Path, stub: Stub, worker: str, lines: int = tr.LINES) -> m.Done:
    request = LogsRequest(team="scale-down", worker=worker, cwd=str(tmp_path), lines=lines)
    return run_op("team.logs", request, ScenarioExecutor(tmp_path, stub))[0]


def test_logs_of_a_live_worker_reads_its_proven_pane(tmp_path: Path) -> None:
    stub = Screens()
    _team(tmp_path, stub)
    done = _logs(tmp_path, stub, "worker-2", lines=2)
    assert stub.log == [L, S("%13"), L, "capture-pane -p -S -2 -t %13"]
    assert done.outcome.result == {"ok": True, "team": "scale-down", "worker": "worker-2", "source": "pane",
                                   "paneId": "%13", "pid": 42413, "dead": False,
                                   "lines": ["working...", "done: 3 files changed"]}


def test_logs_of_a_removed_worker_is_its_newest_transcript(tmp_path: Path) -> None:
    stub = Screens()
    team = _team(tmp_path, stub)
    folder = team.dir / "transcripts"
    folder.mkdir()
    (folder / "worker-3.20260101T000000.001Z.log").write_text("an older worker-3\n")
    (folder / "worker-3.20260102T000000.001Z.log").write_text("the newest worker-3\n")
    (folder / "worker-30.20260103T000000.001Z.log").write_text("another worker\n")
    team.update(lambda c: c.update(workers=[w for w in c["workers"] if w["name"] != "worker-3"]))
    done = _logs(tmp_path, stub, "worker-3")
    assert stub.log == []
    assert done.outcome.result == {
        "ok": True, "team": "scale-down", "worker": "worker-3", "source": "transcript",
        "path": f"{folder}/worker-3.20260102T000000.001Z.log", "savedAt": "2026-01-02T00:00:00.001Z",
        "transcripts": ["worker-3.20260101T000000.001Z.log", "worker-3.20260102T000000.001Z.log"],
        "lines": ["the newest worker-3"]}


def test_logs_of_a_member_whose_pane_is_gone_falls_back_to_its_transcript(tmp_path: Path) -> None:
    stub = Screens()
    team = _team(tmp_path, stub)
    del stub.panes["%13"]
    (team.dir / "transcripts").mkdir()
    (team.dir / "transcripts" / "worker-2.20260101T000000.001Z.log").write_text("kept at destroy\n")
    result = _logs(tmp_path, stub, "worker-2").outcome.result
    assert isinstance(result, dict)
    assert result["source"] == "transcript" and result["lines"] == ["kept at destroy"]
    assert result["paneProblem"] == "logs_pane_unproven:%13:absent"
    # without a transcript, the proof's reason refuses it
    (team.dir / "transcripts" / "worker-2.20260101T000000.001Z.log").unlink()
    done = _logs(tmp_path, stub, "worker-2")
    assert done.outcome.status == "refused" and done.outcome.message == "logs_pane_unproven:%13:absent"


def test_logs_of_an_unknown_worker_lists_the_workers_and_the_transcripts(tmp_path: Path) -> None:
    stub = Screens()
    team = _team(tmp_path, stub)
    (team.dir / "transcripts").mkdir()
    (team.dir / "transcripts" / "worker-7.20260101T000000.001Z.log").write_text("x\n")
    done = _logs(tmp_path, stub, "worker-9")
    assert done.outcome.status == "refused"
    assert done.outcome.result == {"ok": False, "error": "logs_worker_not_found:worker-9",
                                   "workers": ["worker-1", "worker-2", "worker-3"], "transcripts": ["worker-7"]}
    assert _logs(tmp_path, stub, "worker-2", lines=0).outcome.message == "logs_lines_out_of_range:0 (1 to 10000)"
