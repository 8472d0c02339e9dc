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


# How panefleet runs tmux steps (``PANEFLEET_TMUX_EXECUTOR``, shell/run/tmux_control.py): every test with
# a real tmux server (the ``tmux_server`` fixture) runs once per executor, as ``test_x[control]`` and
# ``test_x[spawn]``, unless it (or its module) is marked ``@pytest.mark.tmux_executors("control")``.
TMUX_EXECUTORS = ("control", "spawn")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite golden files from the current behaviour (review the diff!)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "tmux_executors(*modes): run a real-tmux test with only these tmux "
                                       "executors (default: control and spawn)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "tmux_executor" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("tmux_executors")
        metafunc.parametrize("tmux_executor", marker.args if marker else TMUX_EXECUTORS, indirect=True)


@pytest.fixture
def tmux_executor(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The tmux executor of this run of the test, set in the process environment (which the test's
    executors and CLI processes inherit, ``clean_env`` included)."""
    mode = str(request.param)
    monkeypatch.setenv("PANEFLEET_TMUX_EXECUTOR", mode)
    return mode


@pytest.fixture
def goldens(request: pytest.FixtureRequest) -> Goldens:
    return Goldens(bool(request.config.getoption("--update-goldens")))


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and has not exited (a zombie or dead one is not alive)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


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
def tmux_server(request: pytest.FixtureRequest, tmp_path: Path, tmux_executor: str) -> Iterator[TmuxServer]:
    # `-m "not tmux"` must leave out every test with a real tmux server (the marker, pyproject.toml): one
    # that is not marked fails here (tests/core/test_tmux_marker.py).
    if request.node.get_closest_marker("tmux") is None:
        pytest.fail(f"{request.node.nodeid} starts a real tmux server: mark it @pytest.mark.tmux")
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
def clean_env(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A process environment isolated from the developer's: private state dir, no TMUX; with a real
    tmux server, the test's tmux executor (set up first, so that this copy has it)."""
    if "tmux_executor" in request.fixturenames:
        request.getfixturevalue("tmux_executor")
    state = tmp_path / "pf-state"
    monkeypatch.setenv("PANEFLEET_STATE_DIR", str(state))
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)
    monkeypatch.delenv("PANEFLEET_TMUX_SOCKET", raising=False)
    for key in list(os.environ):
        if key.startswith("OMX_"):
            monkeypatch.delenv(key, raising=False)
    return dict(os.environ)
