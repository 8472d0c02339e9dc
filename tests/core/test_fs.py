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


class RecordedCalls(fs.SystemCalls):
    """``fs.SYSTEM`` that logs every call, and writes at most ``chunk`` bytes per ``write``."""

    def __init__(self, chunk: int = 1 << 30) -> None:
        self.log: list[tuple[str, object, ...]] = []
        self.chunk = chunk
        self.paths: dict[int, Path] = {}

    def open(self, path: Path, flags: int, mode: int = 0o777) -> int:
        fd = super().open(path, flags, mode)
        self.paths[fd] = Path(path)
        self.log.append(("open", Path(path), flags))
        return fd

    def write(self, fd: int, data: memoryview) -> int:
        written = super().write(fd, data[:self.chunk])
        self.log.append(("write", self.paths[fd], written))
        return written

    def fsync(self, fd: int) -> None:
        super().fsync(fd)
        self.log.append(("fsync", self.paths[fd]))

    def close(self, fd: int) -> None:
        super().close(fd)
        self.log.append(("close", self.paths.pop(fd)))

    def replace(self, source: Path, target: Path) -> None:
        super().replace(source, target)
        self.log.append(("replace", Path(source), Path(target)))


def test_a_write_fsyncs_a_temporary_file_renames_it_then_fsyncs_the_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Observed through the shell's system-call seam: the new bytes go whole into a new file beside the
    target, that file is fsynced before the rename, and the directory after it."""
    target = tmp_path / "config.json"
    target.write_bytes(b"old")
    calls = RecordedCalls(chunk=1000)
    monkeypatch.setattr(fs, "SYSTEM", calls)
    fs.atomic_write(target, b"n" * 2500)
    assert target.read_bytes() == b"n" * 2500
    (opened, tmp, flags), *rest = calls.log
    assert opened == "open" and tmp.parent == tmp_path and tmp != target
    assert flags & os.O_CREAT and flags & os.O_EXCL and not flags & os.O_TRUNC
    assert rest == [("write", tmp, 1000), ("write", tmp, 1000), ("write", tmp, 500), ("fsync", tmp), ("close", tmp),
                    ("replace", tmp, target), ("open", tmp_path, os.O_RDONLY), ("fsync", tmp_path),
                    ("close", tmp_path)]


def test_a_reader_of_the_old_file_keeps_the_old_bytes(tmp_path: Path) -> None:
    """The target is replaced, never written in place: whoever opened it before reads the old bytes
    whole, and the new ones are another file."""
    target = tmp_path / "manifest.v2.json"
    target.write_bytes(b"o" * 5000)
    before = target.stat().st_ino
    with target.open("rb") as old:
        fs.atomic_write(target, b"n" * 3000)
        assert old.read() == b"o" * 5000
    assert target.stat().st_ino != before and target.read_bytes() == b"n" * 3000


KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {root!r})
from shell.run import fs

class Killed(fs.SystemCalls):
    def __init__(self, at):
        self.calls, self.at = 0, at
    def _next(self):
        if self.calls == self.at:
            os.kill(os.getpid(), signal.SIGKILL)
        self.calls += 1
    def open(self, path, flags, mode=0o777):
        self._next(); return super().open(path, flags, mode)
    def write(self, fd, data):
        self._next(); return super().write(fd, data[:4096])
    def fsync(self, fd):
        self._next(); super().fsync(fd)
    def close(self, fd):
        self._next(); super().close(fd)
    def replace(self, source, target):
        self._next(); super().replace(source, target)

fs.SYSTEM = Killed(int(sys.argv[2]))
fs.atomic_write(Path(sys.argv[1]), b"n" * 40_000)
print(fs.SYSTEM.calls)
"""


def test_a_write_killed_between_any_two_system_calls_leaves_the_old_or_the_new_bytes(tmp_path: Path) -> None:
    """A process SIGKILLed before each system call of a write in 4 KiB pieces (after the temporary file
    is made, between its writes, before its fsync, before the rename, before the directory's fsync):
    the target holds the old bytes or the new ones, never a mix, never nothing."""
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER.format(root=str(ROOT)))
    target = tmp_path / "state" / "config.json"
    target.parent.mkdir()
    old, new = b"o" * 30_000, b"n" * 40_000
    outcomes = []
    point = 0
    while True:
        target.write_bytes(old)
        run = subprocess.run([sys.executable, str(script), str(target), str(point)], capture_output=True,
                             text=True, timeout=60)
        assert target.read_bytes() in (old, new), (point, len(target.read_bytes()))
        outcomes.append("old" if target.read_bytes() == old else "new")
        if run.returncode == 0:  # no call left to be killed before: the write finished
            total = int(run.stdout)
            break
        assert run.returncode == -9, run.stderr
        point += 1
    assert total == point and total >= 10 + 4, total  # 10 writes of 4 KiB, fsync, close, rename, directory
    assert outcomes[-1] == "new" and "old" in outcomes


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
