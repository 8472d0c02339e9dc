"""`team status --watch` on a terminal (a real tmux pane): redraws in place, and a worker killed
meanwhile shows as gone within one refresh."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import TmuxServer

pytestmark = pytest.mark.tmux
CLI = [sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py")]


def test_watch_redraws_in_place_and_shows_a_killed_worker_gone(tmux_server: TmuxServer, tmp_path: Path,
                                                               clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}
    leader = tmux_server.new_session("lead")
    work = tmp_path / "w"
    work.mkdir()
    for args in (("team", "init", "alpha", "--leader-pane", leader, "--worker-cli", "placeholder"),
                 ("team", "scale-up", "alpha", "--count", "3")):
        done = subprocess.run([*CLI, *args, "--cwd", str(work), "-o", "json"], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout
    workers = json.loads((work / ".omx/state/team/alpha/config.json").read_text())["workers"]
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k.startswith(("PANEFLEET_", "OMX_")))
    command = f"env {exports} {shlex.join(CLI)} team status alpha --cwd {shlex.quote(str(work))} --watch --interval 1"
    viewer = tmux_server.cmd("new-session", "-d", "-s", "view", "-x", "200", "-y", "50", "-P", "-F", "#{pane_id}",
                             command).stdout.strip()

    def screen() -> str:
        return tmux_server.cmd("capture-pane", "-p", "-t", viewer).stdout

    deadline = time.monotonic() + 20
    while "refreshed" not in screen() and time.monotonic() < deadline:
        time.sleep(0.2)
    first = screen()
    assert first.count("team alpha") == 1 and "worker-3" in first, first
    victim = workers[1]
    tmux_server.cmd("kill-pane", "-t", victim["pane_id"])
    time.sleep(2.5)  # at most one refresh (1 s) plus a status run
    after = screen()
    line = next(line for line in after.splitlines() if "worker-2" in line)
    assert "absent" in line, after
    assert after.count("team alpha") == 1  # redrawn in place, not appended
    assert "screen unchanged" in after
    tmux_server.cmd("send-keys", "-t", viewer, "C-c")
