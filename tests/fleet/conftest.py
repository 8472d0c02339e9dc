"""A fleet file's project on a real tmux server for the fleet tests: the ``fleet`` fixture."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, TmuxServer

OWNER = "team:alpha"


def fleet_text(socket: str, count: int, *, task: str | None = "say hello", extra: str = "") -> str:
    task_line = f"task = {json.dumps(task)}\n" if task is not None else ""
    return (f'[team.alpha]\ntmux_socket = "{socket}"\n\n[[team.alpha.workers]]\ncli = "placeholder"\n'
            f'role = "executor"\ncount = {count}\n{task_line}{extra}')


class Fleet:
    def __init__(self, project: Path, server: TmuxServer, env: dict[str, str]) -> None:
        self.project, self.server, self.env = project, server, env
        self.file = project / "panefleet.toml"

    def write(self, count: int, **kwargs: Any) -> None:
        self.file.write_text(fleet_text(self.server.name, count, **kwargs), encoding="utf-8")

    def run(self, *args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cli", *args], cwd=self.project, env=self.env, text=True,
                              capture_output=True, input=stdin if stdin is not None else "", timeout=timeout)

    def json(self, *args: str) -> tuple[int, dict[str, Any]]:
        proc = self.run(*args, "-o", "json")
        return proc.returncode, json.loads(proc.stdout)

    def config(self) -> dict[str, Any]:
        return json.loads((self.project / ".omx/state/team/alpha/config.json").read_text())

    def workers(self) -> dict[str, tuple[str, int]]:
        return {w["name"]: (w["pane_id"], w["pid"]) for w in self.config()["workers"]}

    def ours(self) -> set[str]:
        """Every pane on the server that carries the team's owner tag."""
        return {pane for pane in self.server.panes() if self.server.owner(pane) == OWNER}

    def assert_proven(self) -> None:
        """team status: every recorded pane live with its pinned pid and owner tag, nothing else tagged."""
        code, status = self.json("team", "status", "alpha")
        assert code == 0 and status["healthy"] is True, status
        recorded = {p["paneId"] for p in status["panes"]}
        assert self.ours() == recorded, (self.ours(), recorded)

    def audit_logs(self) -> list[Path]:
        return sorted((Path(self.env["PANEFLEET_STATE_DIR"]) / "audit").glob("*.jsonl"))


@pytest.fixture
def fleet(tmp_path: Path, tmux_server: TmuxServer, clean_env: dict[str, str]) -> Fleet:
    project = tmp_path / "project"
    project.mkdir()
    env = {**clean_env, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(tmp_path / "xdg")}
    return Fleet(project, tmux_server, env)


