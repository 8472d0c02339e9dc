"""Room for the whole team on a real private tmux server: placement by geometry (pure/omx/layout.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TmuxServer

pytestmark = pytest.mark.tmux
CLI = [sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py")]


def pf_json(*args: str, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([*CLI, *args, "-o", "json"], capture_output=True, text=True, env=env, timeout=300)
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected one JSON line, got {done.stdout!r} (stderr {done.stderr!r})"
    return done.returncode, json.loads(lines[0])


def _team(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str], size: tuple[int, int]) -> tuple[
        dict[str, str], Path, str]:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}
    leader = tmux_server.cmd("new-session", "-d", "-s", "lead", "-x", str(size[0]), "-y", str(size[1]), "-P", "-F",
                             "#{pane_id}", "sleep 100000").stdout.strip()
    work = tmp_path / "work"
    work.mkdir()
    code, init = pf_json("team", "init", "room", "--leader-pane", leader, "--worker-cli", "placeholder",
                         "--cwd", str(work), env=env)
    assert code == 0, init
    return env, work, leader


def test_twenty_workers_fit_a_200x50_terminal_and_scale_down_kills_exactly_them(
        tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    env, work, leader = _team(tmux_server, tmp_path, clean_env, (200, 50))
    added: list[dict[str, Any]] = []
    for step in (5, 5, 5, 5):
        code, result = pf_json("team", "scale-up", "room", "--count", str(step), "--cwd", str(work), env=env)
        assert code == 0, result
        assert all(d["status"] == "delivered" for d in result["deliveries"])
        added += result["addedWorkers"]
    assert len(added) == 20
    panes = tmux_server.panes()
    assert all(panes[w["pane_id"]] == (False, w["pid"]) for w in added)
    assert all(tmux_server.owner(w["pane_id"]) == "team:room" for w in added)
    sizes = tmux_server.cmd("list-panes", "-a", "-F", "#{pane_id} #{pane_width} #{pane_height}").stdout.split("\n")
    for line in filter(None, sizes):
        _pane, width, height = line.split()
        assert int(width) >= 40 and int(height) >= 10, line  # every pane keeps a usable size
    code, status = pf_json("team", "status", "room", "--cwd", str(work), env=env)
    assert code == 0 and status["healthy"], status

    code, down = pf_json("team", "scale-down", "room", "--count", "19", "--cwd", str(work), env=env)
    assert code == 0, down
    kept = json.loads((work / ".omx/state/team/room/config.json").read_text())["workers"]
    assert len(kept) == 1
    assert set(tmux_server.panes()) == {leader, kept[0]["pane_id"]}  # exactly the 19 removed panes were killed


def test_a_window_too_small_for_any_worker_is_refused_up_front_and_the_dry_run_says_so(
        tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    env, work, _leader = _team(tmux_server, tmp_path, clean_env, (30, 8))
    before = tmux_server.panes()
    code, plan = pf_json("team", "scale-up", "room", "--count", "1", "--cwd", str(work), "--dry-run", env=env)
    assert code == 4 and plan["predicted"]["error_detail"].startswith("scale_up_no_room:"), plan
    code, result = pf_json("team", "scale-up", "room", "--count", "1", "--cwd", str(work), env=env)
    assert code == 4 and result == plan["predicted"]
    assert tmux_server.panes() == before
    assert not (work / ".omx/state/team/room/workers/worker-1").exists()


def test_a_dead_worker_is_named_by_status_and_respawned_in_a_new_proven_pane(
        tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    env, work, _leader = _team(tmux_server, tmp_path, clean_env, (200, 50))
    code, result = pf_json("team", "scale-up", "room", "--count", "2", "--cwd", str(work), env=env)
    assert code == 0, result
    victim = result["addedWorkers"][0]
    tmux_server.cmd("kill-pane", "-t", victim["pane_id"])
    code, status = pf_json("team", "status", "room", "--cwd", str(work), env=env)
    dead = next(p for p in status["panes"] if p["name"] == "worker-1")
    assert code == 3 and dead["verdict"] == "absent" and "respawn" in dead["cause"]
    code, again = pf_json("team", "respawn", "room", "worker-1", "--cwd", str(work), env=env)
    assert code == 0 and again["delivery"]["status"] == "delivered", again
    assert again["previousPaneId"] == victim["pane_id"] and again["paneId"] != victim["pane_id"]
    assert tmux_server.panes()[again["paneId"]] == (False, again["pid"])
    assert tmux_server.owner(again["paneId"]) == "team:room"
    screen = tmux_server.cmd("capture-pane", "-p", "-J", "-t", again["paneId"]).stdout
    assert "received: " in screen and "workers/worker-1/inbox.md" in screen  # the trigger reached it again
    record = json.loads((work / ".omx/state/team/room/workers/worker-1/identity.json").read_text())
    assert (record["pane_id"], record["pid"]) == (again["paneId"], again["pid"])
    code, status = pf_json("team", "status", "room", "--cwd", str(work), env=env)
    assert code == 0 and status["healthy"], status
    code, refused = pf_json("team", "respawn", "room", "worker-1", "--cwd", str(work), env=env)
    assert code == 4 and refused["error_detail"].startswith("respawn_worker_alive:worker-1:"), refused
