"""A dry run predicts what the real run will answer whenever it could have read why (real tmux).

Each case sets up a reason for the scale-up to fail that a dry run can observe — a scaling lock held by
a live process, split targets that are gone, tagged by another team, or running another process — and
asserts that the dry run's predicted answer is exactly the answer of the real run that follows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TmuxServer

pytestmark = pytest.mark.tmux
CLI = [sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py")]


def pf_json(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([*CLI, *args, "-o", "json"], capture_output=True, text=True, env=env, timeout=120)
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1])


def _hold_lock(server: TmuxServer, work: Path, panes: list[str]) -> None:
    lock = work / ".omx/state/.team-locks/alpha.scaling"
    lock.mkdir(parents=True)
    (lock / "owner").write_text(f"{os.getpid()}.{int(time.time() * 1000)}.ab12\n")  # this live process


def _gone(server: TmuxServer, work: Path, panes: list[str]) -> None:
    for pane in panes:
        server.cmd("kill-pane", "-t", pane)


def _foreign(server: TmuxServer, work: Path, panes: list[str]) -> None:
    for pane in panes:
        server.cmd("set-option", "-p", "-t", pane, "@omx_team_pane_owner_id", "team:other")


def _respawned(server: TmuxServer, work: Path, panes: list[str]) -> None:
    for pane in panes:
        server.cmd("respawn-pane", "-k", "-t", pane, "sleep 100000")


CASES: dict[str, Callable[[TmuxServer, Path, list[str]], None]] = {
    "held_scaling_lock": _hold_lock, "split_targets_gone": _gone, "foreign_tagged_targets": _foreign,
    "pids_changed": _respawned,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_dry_run_predicts_the_real_failure(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str],
                                               case: str) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}
    tmux_server.new_session("keep")  # the server outlives the team's panes
    leader = tmux_server.new_session("lead")
    work = tmp_path / "w"
    work.mkdir()
    assert pf_json(env, "team", "init", "alpha", "--leader-pane", leader, "--worker-cli", "placeholder",
                   "--cwd", str(work))[0] == 0
    code, first = pf_json(env, "team", "scale-up", "alpha", "--count", "1", "--cwd", str(work))
    assert code == 0, first
    CASES[case](tmux_server, work, [leader, first["addedWorkers"][0]["pane_id"]])
    code, plan = pf_json(env, "team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "--dry-run")
    assert plan["predicted"]["ok"] is False, plan["predicted"]
    real_code, real = pf_json(env, "team", "scale-up", "alpha", "--count", "1", "--cwd", str(work))
    assert (code, plan["predicted"]) == (real_code, real)
