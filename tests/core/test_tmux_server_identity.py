"""A pane's tmux server is part of its identity (docs/tmux-proofs.md, "The tmux server"), on a real tmux
server on a private socket, through the real CLI: the team's server restarted on the same socket, with a
pane there under a worker's old id, tag and (forged into the record) pid, is not that worker's pane."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import TmuxServer
from tests.core.test_team_tmux import pf, pf_json

pytestmark = pytest.mark.tmux
SCALING = {"OMX_TEAM_SCALING_ENABLED": "1"}


def _server(tmux: TmuxServer) -> str:
    return tmux.cmd("display-message", "-p", "#{pid}@#{start_time}").stdout.strip()


def _team_files(work: Path) -> list[Path]:
    team = work / ".omx" / "state" / "team" / "alpha"
    return [team / "config.json", team / "manifest.v2.json"]


def test_a_restarted_server_shows_the_team_absent_with_the_new_server_named_and_kills_nothing(
    tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    env = {**clean_env, **SCALING, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    work = tmp_path / "work"
    work.mkdir()
    code, init = pf_json("team", "init", "alpha", "--new-session", "--worker-cli", "placeholder", "--cwd", str(work),
                         env=env)
    assert code == 0, init
    code, up = pf_json("team", "scale-up", "alpha", "--count", "2", "--cwd", str(work), env=env)
    assert code == 0, up
    old = _server(tmux_server)
    config = json.loads(_team_files(work)[0].read_text())
    worker = config["workers"][0]
    assert config["leader_tmux_server"] == old  # every pin names its server
    assert [w["tmux_server"] for w in config["workers"]] == [old, old]

    # the server restarts on the same socket; its new panes get the old ids back, and the team's tag
    tmux_server.kill()
    for _ in range(50):  # the old server may still be exiting, its socket with it
        if tmux_server.cmd("new-session", "-d", "-s", "other", "sleep 100000", check=False).returncode == 0:
            break
        time.sleep(0.1)
    again = tmux_server.cmd("split-window", "-d", "-t", "%0", "-P", "-F", "#{pane_id}", "sleep 100000").stdout.strip()
    assert again == worker["pane_id"]  # %1, as the worker's was
    for pane in ("%0", again):
        tmux_server.cmd("set-option", "-p", "-t", pane, "@omx_team_pane_owner_id", "team:alpha")
    new = _server(tmux_server)
    assert new != old
    # the rarest case the server rule is for: the pid recorded for the worker is the new pane's too
    for path in _team_files(work):
        data = json.loads(path.read_text())
        data["workers"][0]["pid"] = tmux_server.pane_pid(again)
        path.write_text(json.dumps(data, indent=2))
    panes_before = tmux_server.panes()

    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 3 and status["tmuxServer"] == new, status
    by_name = {p["name"]: p for p in status["panes"]}
    for name in ("leader", "worker-1", "worker-2"):
        report = by_name[name]
        assert (report["verdict"], report["pidMatch"]) == ("absent", False), report
        assert f"tmux server pid {new.split('@')[0]} started" in report["detail"], report
    text = pf("team", "status", "alpha", "--cwd", str(work), env=env)
    assert "the tmux server was replaced" in text.stdout + text.stderr, text.stdout

    # nothing of the new server is taken for the team's: a scale-down kills nothing there
    done = pf("team", "scale-down", "alpha", "--worker", "worker-1", "--force", "--cwd", str(work), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert tmux_server.panes() == panes_before
    assert [w["name"] for w in json.loads(_team_files(work)[0].read_text())["workers"]] == ["worker-2"]
