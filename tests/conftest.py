from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import Goldens

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite golden files from the current behaviour (review the diff!)")


@pytest.fixture
def goldens(request: pytest.FixtureRequest) -> Goldens:
    return Goldens(bool(request.config.getoption("--update-goldens")))


class TmuxServer:
    """A real tmux server on a private socket (``tmux -L NAME``), never the user's default."""

    def __init__(self, name: str) -> None:
        self.name = name

    def cmd(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, check=check)

    def new_session(self, session: str = "main", command: str = "sleep 100000") -> str:
        out = self.cmd("new-session", "-d", "-s", session, "-x", "200", "-y", "60", "-P", "-F", "#{pane_id}",
                       command).stdout
        return out.strip()

    def pane_pid(self, pane: str) -> int:
        return int(self.cmd("display-message", "-p", "-t", pane, "#{pane_pid}").stdout.strip())

    def panes(self) -> dict[str, tuple[bool, int]]:
        out = self.cmd("list-panes", "-a", "-F", "#{pane_id}\t#{pane_dead}\t#{pane_pid}").stdout
        rows = {}
        for line in out.splitlines():
            pane, dead, pid = line.split("\t")
            rows[pane] = (dead == "1", int(pid))
        return rows

    def owner(self, pane: str) -> str:
        return self.cmd("show-option", "-qv", "-p", "-t", pane, "@omx_team_pane_owner_id", check=False).stdout.strip()

    def kill(self) -> None:
        self.cmd("kill-server", check=False)


@pytest.fixture
def tmux_server(tmp_path: Path) -> Iterator[TmuxServer]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed (.ci/run installs it)")
    name = f"pf-test-{uuid.uuid4().hex[:10]}"
    server = TmuxServer(name)
    try:
        yield server
    finally:
        server.kill()
        sock = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / name
        if sock.exists():
            sock.unlink()


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A process environment isolated from the developer's: private state dir, no TMUX."""
    state = tmp_path / "pf-state"
    monkeypatch.setenv("PANEFLEET_STATE_DIR", str(state))
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)
    monkeypatch.delenv("PANEFLEET_TMUX_SOCKET", raising=False)
    for key in list(os.environ):
        if key.startswith("OMX_"):
            monkeypatch.delenv(key, raising=False)
    return dict(os.environ)
