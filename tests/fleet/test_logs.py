"""Transcripts and ``panefleet team logs`` on a real tmux server with the placeholder agent (which echoes
every line it receives): a scale-down keeps the removed worker's transcript and ``team logs`` prints it;
a live worker's scrollback; ``--follow`` until the pane goes; destroy keeps every worker's transcript."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fleet.conftest import Fleet

pytestmark = [pytest.mark.tmux, pytest.mark.tmux_executors("control"), pytest.mark.timeout(180)]


def _transcripts(fleet: Fleet) -> dict[str, str]:
    folder = fleet.project / ".omx/state/team/alpha/transcripts"
    return {p.name: p.read_text() for p in sorted(folder.glob("*.log"))}


def _say(fleet: Fleet, worker: str, text: str) -> None:
    sent = fleet.run("team", "send", "alpha", worker, text)
    assert sent.returncode == 0, sent.stdout + sent.stderr


def test_a_scale_down_keeps_the_transcript_and_logs_prints_it(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    pane = fleet.workers()["worker-2"][0]
    _say(fleet, "worker-2", "remember transcript 4711")
    down = fleet.run("team", "scale-down", "alpha", "--worker", "worker-2")
    assert down.returncode == 0, down.stdout + down.stderr
    assert "removed worker-2" in down.stdout and "transcript kept: " in down.stdout, down.stdout
    assert pane not in fleet.server.panes() and "worker-2" not in fleet.workers()
    (name, text), = _transcripts(fleet).items()
    assert name.startswith("worker-2.") and name.endswith("Z.log")
    assert "panefleet placeholder agent alpha/worker-2 ready" in text and "received: remember transcript 4711" in text
    logs = fleet.run("team", "logs", "alpha", "worker-2")
    assert logs.returncode == 0, logs.stderr
    assert "received: remember transcript 4711" in logs.stdout
    assert f"transcripts/{name}" in logs.stderr and "no longer a member" in logs.stderr
    code, answer = fleet.json("team", "logs", "alpha", "worker-2", "-n", "2")
    assert code == 0 and answer["source"] == "transcript" and len(answer["lines"]) == 2, answer


def test_logs_of_a_live_worker_and_of_an_unknown_one(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    _say(fleet, "worker-1", "live line 31")
    logs = fleet.run("team", "logs", "alpha", "worker-1")
    assert logs.returncode == 0 and "received: live line 31" in logs.stdout, logs.stdout + logs.stderr
    assert "panefleet placeholder agent alpha/worker-1 ready" in logs.stdout and logs.stderr == ""
    code, answer = fleet.json("team", "logs", "alpha", "worker-1", "-n", "1")
    assert code == 0 and answer["source"] == "pane" and answer["paneId"] == fleet.workers()["worker-1"][0]
    assert len(answer["lines"]) == 1, answer
    unknown = fleet.run("team", "logs", "alpha", "worker-9")
    assert unknown.returncode == 4 and "worker-9" in unknown.stderr and "worker-1, worker-2" in unknown.stderr
    assert _transcripts(fleet) == {}  # reading changes nothing


def test_follow_prints_new_lines_until_the_pane_goes(fleet: Fleet, tmp_path: Path) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    out, err = tmp_path / "follow.out", tmp_path / "follow.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        follow = subprocess.Popen([sys.executable, "-m", "cli", "team", "logs", "alpha", "worker-1", "--follow"],
                                  cwd=fleet.project, env=fleet.env, stdout=stdout, stderr=stderr,
                                  stdin=subprocess.DEVNULL)
        try:
            _wait_for(out, "panefleet placeholder agent alpha/worker-1 ready")
            _say(fleet, "worker-1", "followed line 58")
            _wait_for(out, "received: followed line 58")
            assert fleet.run("team", "scale-down", "alpha", "--worker", "worker-1").returncode == 0
            assert follow.wait(timeout=30) == 0
        finally:
            if follow.poll() is None:
                follow.kill()
                follow.wait()
    assert out.read_text().count("received: followed line 58") == 1
    assert "stopped following" in err.read_text(), err.read_text()


def _wait_for(path: Path, text: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text():
        assert time.monotonic() < deadline, f"{text!r} never came: {path.read_text()!r}"
        time.sleep(0.2)


def test_destroy_keeps_every_workers_transcript(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    _say(fleet, "worker-1", "before destroy 9")
    destroyed = fleet.run("destroy", "--yes", "--no-wait")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert "transcripts of 2 worker(s) kept" in destroyed.stdout, destroyed.stdout
    assert sorted(n.split(".")[0] for n in _transcripts(fleet)) == ["worker-1", "worker-2"]
    # still a member, its pane gone: its transcript
    code, answer = fleet.json("team", "logs", "alpha", "worker-1")
    assert code == 0 and answer["source"] == "transcript", answer
    assert "received: before destroy 9" in answer["lines"] and answer["paneProblem"].startswith("logs_pane_unproven:")
