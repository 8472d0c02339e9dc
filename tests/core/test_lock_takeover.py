"""Locks whose holder is provably dead are taken over at once; live holders block, and every timeout
says who holds the lock and until when. Real processes, real lock directories (``shell/run/fs.py``)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pure import model as m
from pure.omx import locks
from pure.omx.state import TeamPaths
from pure.program import Gen
from shell.run import fs
from shell.run.executor import Executor
from shell.run.loop import run_program

ROOT = Path(__file__).resolve().parents[2]
STALE = 300_000
HOLD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from shell.run import fs
fs.acquire_lock(Path(sys.argv[1]), timeout_ms=10_000, retry_ms=5, stale_ms=300_000, token=fs.owner_token())
print("held", flush=True)
time.sleep(600)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A child python that holds ``tmp_path/locks/alpha.scaling`` through shell/run/fs.py until killed."""
    lock = tmp_path / "locks" / "alpha.scaling"
    script = tmp_path / "hold.py"
    script.write_text(HOLD.format(root=str(ROOT)))
    child = subprocess.Popen([sys.executable, str(script), str(lock)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    try:
        yield child, lock
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)


def _forge(lock: Path, token: str, *, host: str | None = None, lease_age_s: float = 0.0) -> None:
    """A lock directory as another process would have left it (``host=None``: as oh-my-codex does)."""
    lock.mkdir(parents=True)
    (lock / "owner").write_text(token)
    (lock / "lease").write_text(token)
    if host is not None:
        (lock / "host").write_text(host)
    if lease_age_s:
        old = time.time() - lease_age_s
        os.utime(lock / "lease", (old, old))


def _dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def _timed_acquire(lock: Path, timeout_ms: int = 5_000) -> float:
    started = time.monotonic()
    fs.acquire_lock(lock, timeout_ms=timeout_ms, retry_ms=25, stale_ms=STALE, token=fs.owner_token())
    return time.monotonic() - started


def test_tokens_and_files_keep_oh_my_codex_format(tmp_path: Path) -> None:
    lock = tmp_path / "alpha.scaling"
    token = fs.owner_token()
    assert re.fullmatch(r"[0-9]+\.[0-9]{13}\.[0-9a-f]+", token) and token.startswith(f"{os.getpid()}.")
    fs.acquire_lock(lock, timeout_ms=100, retry_ms=10, stale_ms=STALE, token=token)
    # oh-my-codex writes its token into owner and lease; panefleet adds host, which oh-my-codex ignores
    assert sorted(p.name for p in lock.iterdir()) == ["host", "lease", "owner"]
    assert (lock / "owner").read_text() == token and (lock / "lease").read_text() == token
    assert (lock / "host").read_text() == fs.host_mark()
    assert fs.release_lock(lock, token + "\n") is False  # only the exact token releases
    assert fs.release_lock(lock, token) is True and not lock.exists()


def test_sigkilled_holder_is_taken_over_at_once(holder: tuple[subprocess.Popen[str], Path]) -> None:
    child, lock = holder
    assert fs.inspect_lock(lock).alive is True
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert _timed_acquire(lock) < 1.0
    assert fs.parse_token((lock / "owner").read_text()) is not None
    assert (lock / "owner").read_text().startswith(f"{os.getpid()}.")


def test_unreaped_holder_counts_as_dead(holder: tuple[subprocess.Popen[str], Path]) -> None:
    child, lock = holder
    os.kill(child.pid, signal.SIGKILL)  # not waited for: a zombie still answers kill(pid, 0)
    deadline = time.monotonic() + 5
    while (fs.process_start_ms(child.pid) or ("?", 0.0))[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert _timed_acquire(lock) < 1.0


def test_live_holder_blocks_and_the_timeout_names_it(holder: tuple[subprocess.Popen[str], Path]) -> None:
    child, lock = holder
    with pytest.raises(fs.LockTimeout) as caught:
        fs.acquire_lock(lock, timeout_ms=300, retry_ms=20, stale_ms=STALE, token=fs.owner_token())
    message = str(caught.value)
    assert re.fullmatch(
        rf"{re.escape(str(lock))} held by pid {child.pid} since \S+Z \(alive\), lease lapses at \S+Z", message)
    assert (lock / "owner").read_text().startswith(f"{child.pid}.")  # untouched


def test_the_pure_message_carries_the_holder(holder: tuple[subprocess.Popen[str], Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    child, lock = holder
    monkeypatch.setattr(locks, "SCALING_TIMEOUT_MS", 200)
    paths = TeamPaths(str(tmp_path / "state"), "alpha")
    own = Path(paths.scaling_lock)
    own.parent.mkdir(parents=True)
    os.rename(lock, own)  # the child's lock, now where the team's scaling lock lives

    def body() -> Gen[int]:
        return 1
        yield  # pragma: no cover

    def program() -> Gen[m.Done]:
        yield from locks.with_scaling_lock(paths, body)
        return m.Done(outcome=m.Outcome(status="ok"))

    done, journal = run_program(program, Executor(env=dict(os.environ)))
    ack = journal[0].observation
    assert isinstance(ack, m.Ack) and ack.error.startswith(f"timeout: {own} held by pid {child.pid} since ")
    assert done.outcome.message.startswith(
        f"Timed out acquiring scaling lock for team alpha: {own} held by pid {child.pid} since ")
    assert "(alive), lease lapses at " in done.outcome.message


def test_reused_pid_is_taken_over(tmp_path: Path) -> None:
    lock = tmp_path / "alpha.membership"
    # a live process whose pid is in a token (and a lease) written a minute before it started: the
    # holder died and its pid was given to this process
    reused = subprocess.Popen(["sleep", "30"])
    try:
        _forge(lock, f"{reused.pid}.{int(time.time() * 1000) - 60_000}.0123456789abc", lease_age_s=60)
        holder = fs.inspect_lock(lock)
        assert holder.alive is False and holder.abandoned(time.time() * 1000) == "holder dead"
        assert _timed_acquire(lock) < 1.0
        # the same pid with a lease touched after that process started: a holder that is alive
        fs.release_lock(lock, (lock / "owner").read_text())
        _forge(lock, f"{reused.pid}.{int(time.time() * 1000) - 60_000}.0123456789abc")
        assert fs.inspect_lock(lock).alive is True
    finally:
        reused.kill()
        reused.wait()


def test_a_live_pid_with_a_matching_start_still_blocks(tmp_path: Path) -> None:
    lock = tmp_path / "alpha.membership"
    live = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.05)
        _forge(lock, f"{live.pid}.{int(time.time() * 1000)}.0123456789abc")
        with pytest.raises(fs.LockTimeout, match=rf"held by pid {live.pid} since .* \(alive\)"):
            fs.acquire_lock(lock, timeout_ms=150, retry_ms=20, stale_ms=STALE, token=fs.owner_token())
    finally:
        live.kill()
        live.wait()


def test_oh_my_codex_lock_of_a_dead_pid_is_taken_over(tmp_path: Path) -> None:
    lock = tmp_path / "team" / "alpha" / "claims" / "task-1.lock"
    lock.parent.mkdir(parents=True)
    lock.mkdir()
    (lock / "owner").write_text(f"{_dead_pid()}.{int(time.time() * 1000)}.9f3a")  # claim lock: owner only
    assert _timed_acquire(lock) < 1.0
    assert sorted(p.name for p in lock.parent.iterdir()) == ["task-1.lock"]  # no takeover guard left


def test_another_hosts_lock_waits_out_its_lease(tmp_path: Path) -> None:
    lock = tmp_path / "alpha.scaling"
    token = f"{_dead_pid()}.{int(time.time() * 1000)}.abc"
    _forge(lock, token, host="elsewhere pid:[4026531836]")
    with pytest.raises(fs.LockTimeout) as caught:
        fs.acquire_lock(lock, timeout_ms=150, retry_ms=20, stale_ms=STALE, token=fs.owner_token())
    assert "on elsewhere pid:[4026531836] since " in str(caught.value)
    assert "(liveness unknown: another host), lease lapses at " in str(caught.value)
    assert (lock / "owner").read_text() == token
    os.utime(lock / "lease", (time.time() - 600, time.time() - 600))  # its lease lapsed: abandoned
    assert _timed_acquire(lock) < 1.0


def test_unknown_holders_wait_out_the_lease(tmp_path: Path) -> None:
    no_owner = tmp_path / "a.lock"
    no_owner.mkdir()
    with pytest.raises(fs.LockTimeout, match=r"held by an unknown holder \(no owner file\), taken over at .* unless an owner is written"):
        fs.acquire_lock(no_owner, timeout_ms=100, retry_ms=20, stale_ms=STALE, token=fs.owner_token())
    foreign = tmp_path / "b.lock"
    _forge(foreign, "someone-else")
    with pytest.raises(fs.LockTimeout, match=r"owner token 'someone-else' carries no pid"):
        fs.acquire_lock(foreign, timeout_ms=100, retry_ms=20, stale_ms=STALE, token=fs.owner_token())


@pytest.mark.parametrize("owner", [None, ""])
def test_a_lock_left_without_a_token_is_taken_over_after_seconds_not_minutes(tmp_path: Path,
                                                                            owner: str | None) -> None:
    """Its maker died between mkdir and the owner write (or inside an in-place owner write): a lock
    with no owner file, or an empty one, unchanged for 10 s is abandoned; a younger one still blocks
    (oh-my-codex writes its owner right after its mkdir)."""
    lock = tmp_path / "c.lock"
    lock.mkdir()
    if owner is not None:
        (lock / "owner").write_text(owner)
    with pytest.raises(fs.LockTimeout):
        fs.acquire_lock(lock, timeout_ms=100, retry_ms=20, stale_ms=STALE, token=fs.owner_token())
    old = time.time() - fs.UNOWNED_STALE_MS / 1000 - 1
    for path in (lock, lock / "owner"):
        if path.exists():
            os.utime(path, (old, old))
    token = fs.owner_token()
    fs.acquire_lock(lock, timeout_ms=100, retry_ms=20, stale_ms=STALE, token=token)
    assert (lock / "owner").read_text() == token


CONTENDER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from shell.run import fs
lock, log, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
token = fs.owner_token()
fs.acquire_lock(lock, timeout_ms=20_000, retry_ms=2, stale_ms=300_000, token=token)
with log.open("a") as f:
    f.write("enter " + me + "\\n"); f.flush()
time.sleep(0.03)
with log.open("a") as f:
    f.write("leave " + me + "\\n"); f.flush()
assert fs.release_lock(lock, token), "lost the lock while holding it"
"""


def test_contenders_for_a_dead_lock_still_serialize(tmp_path: Path) -> None:
    script = tmp_path / "contender.py"
    script.write_text(CONTENDER.format(root=str(ROOT)))
    lock, log = tmp_path / "lock", tmp_path / "log"
    _forge(lock, f"{_dead_pid()}.{int(time.time() * 1000)}.dead")
    procs = [subprocess.Popen([sys.executable, str(script), str(lock), str(log), f"p{i}"]) for i in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    lines = log.read_text().splitlines()
    assert len(lines) == 8
    for i in range(0, 8, 2):  # one holder at a time, even though all four found the dead lock
        assert lines[i].startswith("enter") and lines[i + 1] == "leave " + lines[i].split()[1]
    assert not lock.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["contender.py", "log"]


def test_executor_keeps_the_lease_of_a_held_lock_fresh(tmp_path: Path) -> None:
    lock = tmp_path / "alpha.scaling"
    executor = Executor(env=dict(os.environ))
    assert executor.execute(m.AcquireLock(path=str(lock), timeout_ms=100, retry_ms=10, stale_ms=300)) == m.Ack(ok=True)
    first = (lock / "lease").stat().st_mtime_ns
    time.sleep(0.25)  # past a third of the 300 ms stale time
    executor.execute(m.Clock())
    assert (lock / "lease").stat().st_mtime_ns > first
    executor.release_all()
    assert not lock.exists()
