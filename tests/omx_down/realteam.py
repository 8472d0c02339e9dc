"""Build an oh-my-codex team whose workers are real panes on a private tmux server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.omx_down.fixtures import Team


def real_team(server: Any, cwd: Path, name: str, workers: int, session: str = "lead") -> tuple[Team, str, list[str]]:
    """Leader pane + ``workers`` worker panes (``sleep``), each tagged with the team owner id."""
    leader = server.new_session(session)
    panes: list[str] = []
    for _ in range(workers):
        out = server.cmd("split-window", "-d", "-t", leader, "-P", "-F", "#{pane_id}", "sleep 100000").stdout.strip()
        server.cmd("select-layout", "-t", leader, "tiled")
        panes.append(out)
    owner = f"team:{name}"
    for pane in panes:
        server.cmd("set-option", "-p", "-t", pane, "@omx_team_pane_owner_id", owner)
    team = Team(cwd, name, workers)

    def change(config: dict[str, Any]) -> None:
        config["tmux_session"] = session
        config["leader_pane_id"] = leader
        config["leader_pane_pid"] = server.pane_pid(leader)
        for worker, pane in zip(config["workers"], panes, strict=True):
            worker["pane_id"] = pane
            worker["pid"] = server.pane_pid(pane)
    team.update(change)
    return team, leader, panes
