"""team status names a held or stale scaling lock: who holds it, alive or not, and what happens next."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import TmuxServer

pytestmark = pytest.mark.tmux
CLI = [sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py")]


def test_status_reports_a_dead_holder_s_lock_as_stale_and_a_live_one_as_held(
        tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    leader = tmux_server.new_session("lead")
    work = tmp_path / "w"
    work.mkdir()
    subprocess.run([*CLI, "team", "init", "alpha", "--leader-pane", leader, "--cwd", str(work)], env=env, check=True,
                   capture_output=True)
    lock = work / ".omx/state/.team-locks/alpha.scaling"
    lock.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for pid, alive in ((int(dead.stdout), False), (os.getpid(), True)):
        (lock / "owner").write_text(f"{pid}.{int(time.time() * 1000) - 5000}.ab12\n")
        done = subprocess.run([*CLI, "team", "status", "alpha", "--cwd", str(work), "-o", "json"], env=env,
                              capture_output=True, text=True)
        [held] = json.loads(done.stdout)["locks"]
        assert held["lock"] == "scaling" and held["pid"] == pid and held["alive"] is alive
        assert held["stale"] == (None if alive else "holder dead")
        assert f"held by pid {pid}" in held["holder"] and str(lock) in held["holder"]
        text = subprocess.run([*CLI, "team", "status", "alpha", "--cwd", str(work)], env=env, capture_output=True,
                              text=True).stdout
        assert ("takes it over at once" in text) is not alive and "lock: scaling lock" in text
