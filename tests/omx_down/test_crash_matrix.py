"""SIGKILL a real scale-down process after every file-write step of a two-task scale-down, then read
the state back through the public (recovering) read: always entirely old or entirely new."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pure.omx import locks, txn
from pure.omx.scale_down import DebtRequest, ScaleDownRequest
from shell.run.executor import Executor
from shell.run.loop import run_operation, run_program
from tests.omx_down.fixtures import Team, program_of

ROOT = Path(__file__).resolve().parents[2]
TEAM = "crash-down"


def build(cwd: Path) -> Team:
    team = Team(cwd, TEAM, 3)
    # panes that no longer exist on the (real) server: the teardown proves them gone without a kill
    team.set_panes(owner=f"team:{TEAM}", worker_2=("%9002", 990002), worker_3=("%9003", 990003))
    claim = {"owner": "worker-2", "token": "t", "leased_until": "2999-01-01T00:00:00.000Z"}
    team.write_task("1", "first", owner="worker-2", status="in_progress", claim=claim)
    team.write_task("2", "second", owner="worker-3")
    team.write_task("3", "unrelated", owner="worker-1")
    return team


def run_runner(cwd: Path, n: int, socket: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tests.omx_down.crash_runner", str(cwd), TEAM, str(n), socket,
                           "worker-2", "worker-3"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PANEFLEET_STATE_DIR": str(cwd / "pf")})


def age_locks(team: Team) -> list[str]:
    """Make locks abandoned by the killed process stale (as 5+ minutes passing would)."""
    aged = []
    locks_dir = Path(team.paths.locks_dir)
    stale = time.time() - 600
    for lock in [*locks_dir.glob("*"), *(team.dir / "claims").glob("*.lock")] if locks_dir.exists() else []:
        for path in [lock, *lock.iterdir()]:
            os.utime(path, (stale, stale))
        aged.append(lock.name)
    return aged


def public_read(team: Team) -> None:
    executor = Executor(env=dict(os.environ))

    def body(b: locks.Barrier) -> Any:
        return (yield from txn.load_team(team.paths, b))
    done, _ = run_program(lambda: program_of(locks.with_barrier(team.paths, body)), executor)
    assert done.outcome.status == "ok", done.outcome


def membership(team: Team) -> str:
    config = team.config()
    manifest = team.manifest()
    assert manifest is not None
    names = [w["name"] for w in config["workers"]]
    assert names == [w["name"] for w in manifest["workers"]], "config and manifest disagree"
    assert config["worker_count"] == manifest["worker_count"] == len(names)
    assert config["config_generation"] == manifest.get("config_generation", 0) or config["config_generation"] == 0
    owners = [(team.task(t).get("owner"), (team.task(t).get("claim") or {}).get("owner"), team.task(t)["status"])
              for t in ("1", "2")]
    old = (names == ["worker-1", "worker-2", "worker-3"]
           and owners == [("worker-2", "worker-2", "in_progress"), ("worker-3", None, "pending")])
    new = (names == ["worker-1"] and owners == [(None, None, "pending"), (None, None, "pending")])
    assert old or new, f"mixed state: {names} {owners}"
    assert team.task("3")["owner"] == "worker-1"
    return "old" if old else "new"


def converge(team: Team, cwd: Path, socket: str, state: str) -> None:
    """After the crash: a retry ends in the fully scaled-down state with no debt, no journal."""
    executor = Executor(env=dict(os.environ), tmux_socket=socket)
    env = dict(os.environ)
    if state == "old":
        request = ScaleDownRequest(team=TEAM, cwd=str(cwd), env={"OMX_TEAM_SCALING_ENABLED": "1"},
                                   worker_names=("worker-2", "worker-3"), force=True)
        done, _, _ = run_operation("team.scale_down", request, executor, env=env, audit=False)
        assert done.outcome.result == {"ok": True, "removedWorkers": ["worker-2", "worker-3"], "newWorkerCount": 1}
    else:
        done, _, _ = run_operation("team.debt_reconcile", DebtRequest(team=TEAM, cwd=str(cwd)), executor, env=env,
                                   audit=False)
        assert done.outcome.result == {"ok": True}
    assert membership(team) == "new"
    assert not team.debt_path().exists() and not team.journal_path().exists()
    assert not (team.dir / "workers" / "worker-2").exists() and not (team.dir / "workers" / "worker-3").exists()


@pytest.mark.tmux
def test_sigkill_at_every_write_boundary(tmux_server, tmp_path: Path, clean_env) -> None:  # type: ignore[no-untyped-def]
    tmux_server.new_session("crash")
    # how many write steps does an uninterrupted run take?
    probe = tmp_path / "probe"
    probe.mkdir()
    build(probe)
    finished = run_runner(probe, 10_000, tmux_server.name)
    assert finished.returncode == 0, finished.stderr
    total = int(finished.stdout.split()[0])
    assert total >= 14
    matrix: list[dict[str, Any]] = []
    for n in range(1, total + 1):
        cwd = tmp_path / f"n{n}"
        cwd.mkdir()
        team = build(cwd)
        proc = run_runner(cwd, n, tmux_server.name)
        assert proc.returncode == -9, (n, proc.returncode, proc.stdout, proc.stderr)
        journal = json.loads(team.journal_path().read_text())["phase"] if team.journal_path().exists() else None
        debt = json.loads(team.debt_path().read_text())["status"] if team.debt_path().exists() else None
        aged = age_locks(team)
        public_read(team)
        state = membership(team)
        matrix.append({"after_write": n, "journal": journal, "debt": debt, "stale_locks": aged, "state": state})
        converge(team, cwd, tmux_server.name, state)
    report = Path(os.environ.get("PANEFLEET_CRASH_MATRIX", tmp_path / "matrix.json"))
    report.write_text(json.dumps({"total_writes": total, "points": matrix}, indent=1))
    states = [p["state"] for p in matrix]
    # old until the commit's first file write, new from then on (roll-forward journal)
    first_new = states.index("new")
    assert all(s == "old" for s in states[:first_new]) and all(s == "new" for s in states[first_new:])
