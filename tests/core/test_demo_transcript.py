"""``panefleet demo``'s transcript is what it ran: each ``$`` line, pasted into a fresh shell (no
virtual environment, only PATH and HOME) in the folder the demo was run from, works."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from shell.demo.team import executable

ROOT = Path(__file__).resolve().parents[2]


def fresh_env(home: Path) -> dict[str, str]:
    """PATH without this Python's bin directory (where the venv's panefleet is), and HOME."""
    venv_bin = os.path.dirname(sys.executable)
    path = os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if p and p != venv_bin)
    env = {"PATH": path, "HOME": str(home)}
    if "TMUX_TMPDIR" in os.environ:  # where tmux keeps its sockets: the same server for every command
        env["TMUX_TMPDIR"] = os.environ["TMUX_TMPDIR"]
    return env


def transcript(text: str) -> list[tuple[str, int]]:
    """The ``$`` lines of a demo's output, each with the exit code the demo printed after it (0 for a
    command that has none: the tmux one)."""
    commands: list[tuple[str, int]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], 0))
        elif (found := re.match(r"\(exit (\d+), ", line)) and commands:
            commands[-1] = (commands[-1][0], int(found.group(1)))
    return commands


def paste(command: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "--noprofile", "--norc", "-c", command], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


class Demo:
    def __init__(self, socket: str) -> None:
        self.socket = socket
        self.workdir: Path | None = None

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        sock = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}" / self.socket
        if sock.exists():
            sock.unlink()


@pytest.fixture
def demo() -> Iterator[Demo]:
    kept = Demo(f"pf-demo-paste-{uuid.uuid4().hex[:8]}")
    try:
        yield kept
    finally:
        kept.stop()
        if kept.workdir is not None:
            shutil.rmtree(kept.workdir, ignore_errors=True)


@pytest.mark.tmux
def test_each_printed_command_works_pasted_into_a_fresh_shell(demo: Demo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = fresh_env(home)
    done = subprocess.run([sys.executable, str(ROOT / "cli.py"), "demo", "--keep", "--tmux-socket", demo.socket],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    found = re.search(r"team state in (\S+)", done.stdout)
    demo.workdir = Path(found.group(1)) if found else None
    assert done.returncode == 0, done.stdout + done.stderr
    commands = transcript(done.stdout)
    assert demo.workdir is not None and len(commands) >= 10, done.stdout
    assert all(f"--cwd {demo.workdir}" in c or c.startswith("tmux ") for c, _ in commands), commands
    assert any(c.startswith("OMX_TEAM_SCALING_ENABLED=1 ") and " team scale-up " in c for c, _ in commands)
    assert [code for _, code in commands].count(3) >= 2  # the recycled pane's debt, as the demo shows it

    # pasted into the team --keep left: the last command (team status) answers as it did in the demo
    last, code = commands[-1]
    status = paste(last, env)
    assert status.returncode == code == 3, status.stdout + status.stderr
    assert "worker-1" in status.stdout and "worker-2" in status.stdout and "unresolved %3" in status.stdout

    # the whole transcript from the demo's starting point (its folder, no server): each command, pasted
    # into a fresh shell in turn, ends as it did in the demo
    demo.stop()
    shutil.rmtree(demo.workdir / ".omx")
    for command, expected in commands:
        pasted = paste(command, env)
        assert pasted.returncode == expected, f"$ {command}\n{pasted.stdout}{pasted.stderr}"
    listed = subprocess.run(["tmux", "-L", demo.socket, "list-panes", "-a", "-F", "#{pane_id}"],
                            capture_output=True, text=True)
    assert sorted(listed.stdout.split()) == ["%0", "%1", "%2", "%3"]  # worker-4 removed, %3 kept as debt


def test_the_printed_executable_runs_from_a_fresh_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv_bin = tmp_path / "proj" / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    script = venv_bin / "panefleet"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "argv", [str(script), "demo"])
    # under the folder: relative to it; elsewhere: the absolute path
    assert executable(str(tmp_path / "proj"), {"PATH": "/usr/bin"}) == (".venv/bin/panefleet",)
    assert executable(str(tmp_path), {"PATH": "/usr/bin"}) == ("proj/.venv/bin/panefleet",)
    assert executable("/", {"PATH": "/usr/bin"})[0] == str(script).lstrip("/")
    assert executable(str(tmp_path / "other"), {"PATH": "/usr/bin"}) == (str(script),)
    # on PATH only because its virtual environment is active: a fresh shell would not find it
    active = {"PATH": f"{venv_bin}:/usr/bin", "VIRTUAL_ENV": str(venv_bin.parent)}
    assert executable(str(tmp_path / "other"), active) == (str(script),)
    # on PATH for good (a link to it, as pipx makes)
    linked = tmp_path / "bin"
    linked.mkdir()
    (linked / "panefleet").symlink_to(script)
    assert executable(str(tmp_path / "other"), {"PATH": f"{linked}:/usr/bin"}) == ("panefleet",)
    # no panefleet script at all: this Python with cli.py
    monkeypatch.setattr(sys, "argv", [str(ROOT / "cli.py"), "demo"])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python3"))
    assert executable(str(tmp_path), {"PATH": "/usr/bin"}) == (str(tmp_path / "python3"), str(ROOT / "cli.py"))
