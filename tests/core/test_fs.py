"""Atomic writes and oh-my-codex-compatible mkdir locks, with real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pure import model as m
from shell.run import fs
from shell.run.executor import Executor

ROOT = Path(__file__).resolve().parents[2]


def test_atomic_write_replaces_whole_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "a" / "config.json"
    fs.atomic_write(target, b"old")
    os.chmod(target, 0o640)
    fs.atomic_write(target, b"new bytes")
    assert target.read_bytes() == b"new bytes"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in target.parent.iterdir()] == ["config.json"]  # no temp file left


def test_failed_atomic_write_leaves_old_bytes(tmp_path: Path) -> None:
    target = tmp_path / "dir-in-the-way"
    target.mkdir()
    (target / "child").write_text("x")
    with pytest.raises(OSError):
        fs.atomic_write(target, b"new")
    assert (target / "child").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir-in-the-way"]


def test_executor_reports_write_failures_as_observations(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    obs = Executor(env=dict(os.environ)).execute(m.WriteFile(path=str(blocker / "under-a-file"), content="y"))
    assert isinstance(obs, m.Ack) and not obs.ok
    assert obs.error.startswith("FileExistsError") and str(blocker) in obs.error


def test_lock_is_exclusive_and_only_the_owner_releases(tmp_path: Path) -> None:
    lock = tmp_path / ".team-locks" / "alpha.scaling"
    fs.acquire_lock(lock, timeout_ms=100, retry_ms=10, stale_ms=300_000, token="me")
    assert (lock / "owner").read_text() == "me" and (lock / "lease").exists()
    with pytest.raises(fs.LockTimeout):
        fs.acquire_lock(lock, timeout_ms=120, retry_ms=20, stale_ms=300_000, token="other")
    assert fs.release_lock(lock, "other") is False and lock.exists()
    assert fs.release_lock(lock, "me") is True and not lock.exists()


def test_stale_lock_is_taken_over(tmp_path: Path) -> None:
    lock = tmp_path / "l"
    lock.mkdir()
    (lock / "owner").write_text("dead-holder")
    (lock / "lease").write_text("0")
    old = time.time() - 600
    os.utime(lock / "lease", (old, old))
    fs.acquire_lock(lock, timeout_ms=100, retry_ms=10, stale_ms=300_000, token="new")
    assert (lock / "owner").read_text() == "new"


HOLDER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from shell.run import fs
lock, log = Path(sys.argv[1]), Path(sys.argv[2])
fs.acquire_lock(lock, timeout_ms=10_000, retry_ms=5, stale_ms=300_000, token=sys.argv[3])
with log.open("a") as f:
    f.write("enter " + sys.argv[3] + "\\n"); f.flush()
time.sleep(0.05)
with log.open("a") as f:
    f.write("leave " + sys.argv[3] + "\\n"); f.flush()
fs.release_lock(lock, sys.argv[3])
"""


def test_concurrent_processes_serialize(tmp_path: Path) -> None:
    script = tmp_path / "holder.py"
    script.write_text(HOLDER.format(root=str(ROOT)))
    lock, log = tmp_path / "lock", tmp_path / "log"
    procs = [subprocess.Popen([sys.executable, str(script), str(lock), str(log), f"p{i}"]) for i in range(4)]
    assert [p.wait(timeout=30) for p in procs] == [0, 0, 0, 0]
    lines = log.read_text().splitlines()
    assert len(lines) == 8
    for i in range(0, 8, 2):  # enter/leave pairs never interleave
        assert lines[i].split()[1] == lines[i + 1].split()[1]
        assert lines[i].startswith("enter") and lines[i + 1].startswith("leave")
    assert not lock.exists()
