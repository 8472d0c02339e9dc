"""Durable file primitives: atomic writes and mkdir locks compatible with oh-my-codex."""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import functools
import os
import re
import shutil
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path


class SystemCalls:
    """The system calls a durable write makes, as one object so that a test can watch them or kill
    the process between two of them (tests/core/test_fs.py); ``SYSTEM`` is looked up at each call."""

    def open(self, path: Path, flags: int, mode: int = 0o777) -> int:
        return os.open(path, flags, mode)

    def write(self, fd: int, data: memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def close(self, fd: int) -> None:
        os.close(fd)

    def replace(self, source: Path, target: Path) -> None:
        os.replace(source, target)


SYSTEM = SystemCalls()


def fsync_dir(path: Path) -> None:
    """Make a rename or removal in ``path`` durable (best effort: some file systems refuse)."""
    calls = SYSTEM
    with contextlib.suppress(OSError):
        fd = calls.open(path, os.O_RDONLY)
        try:
            calls.fsync(fd)
        finally:
            calls.close(fd)


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new bytes: the bytes go
    to a temporary file beside it, which is fsynced, then renamed over ``path``, whose directory is
    fsynced in turn."""
    calls = SYSTEM
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    fd = calls.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is None else mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[calls.write(fd, view):]
            calls.fsync(fd)
        finally:
            calls.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        elif path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp, 0o644)
        calls.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def unwritable(folder: str | Path) -> int | None:
    """Why nothing can be made or removed in the existing ``folder``, as an errno: ``EROFS`` on a
    read-only mount (as root too, where ``os.access`` alone may say yes), ``EACCES`` without write
    and search permission; None when it can be written or it cannot be told."""
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return errno.EROFS
    except OSError:
        return None
    if not os.access(folder, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids):
        return errno.EACCES
    return None


def remove_path(path: Path, recursive: bool) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        if recursive:
            shutil.rmtree(path)
        else:
            path.rmdir()
    fsync_dir(path.parent)


# ------------------------------------------------------------------------------------------ locks
#
# oh-my-codex's lock directories (``.team-locks/<team>.scaling``, ``.team-locks/<team>.membership``,
# ``team/<team>/claims/task-<id>.lock``): created with ``mkdir``; ``owner`` holds the holder's token
# ``<pid>.<epoch-ms>.<random hex>``; ``lease`` (its mtime) says when the holder last proved it was
# alive (oh-my-codex writes the token into it too and touches it every 100 s). A lock whose lease is
# older than the stale time (5 min) is abandoned, whoever holds it.
#
# panefleet adds one file oh-my-codex ignores, ``host``: the machine and pid namespace the holder's
# pid belongs to. A holder whose pid is provably dead on this machine — no such process, a zombie,
# or a process that started after the holder was last known alive (the pid was reused) — has
# abandoned the lock now, not when its lease lapses. A lock marked with another host keeps its lease;
# a lock without ``host`` (oh-my-codex writes none) is assumed to be held on this machine: team state
# lives next to the tmux server its panes run in (docs/design-notes.md, "Locks").

UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})  # no retry makes these writable
LEASE_FILE = "lease"
OWNER_FILE = "owner"
HOST_FILE = "host"
TAKEOVER_SUFFIX = ".takeover"
# A process that started this long after its token's time is another process with the same pid.
# The slack absorbs the one-second resolution of the boot time and small clock adjustments.
PID_REUSE_SLACK_MS = 2_000
# A takeover guard (held for microseconds) this old was left by a process that died inside it.
TAKEOVER_GUARD_STALE_S = 10.0
# A lock directory that has carried no token this long was left by a process that died between its
# mkdir and its owner write (microseconds apart): it is abandoned without waiting out a lease.
UNOWNED_STALE_MS = 10_000


class LockTimeout(Exception):
    """The lock was still held at the deadline; the message says by whom and until when."""


def owner_token() -> str:
    """A fresh holder token in oh-my-codex's form: ``<pid>.<epoch-ms>.<random hex>``."""
    return f"{os.getpid()}.{int(time.time() * 1000)}.{uuid.uuid4().hex[:12]}"


def host_mark() -> str:
    """This machine and pid namespace: where a pid in a token can be checked."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return f"{socket.gethostname()} {namespace}".strip()


# How a lock left without its owner is described (``LockHolder.describe``), and read back by a caller
# that waits for the takeover (shell/cli/fleet_teams.py).
TAKEOVER_PHRASE = "taken over at {} unless an owner is written"
_TAKEOVER = re.compile(re.escape(TAKEOVER_PHRASE).replace(r"\{\}", r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)"))


def takeover_at(text: str) -> float | None:
    """When (epoch seconds) a lock that ``text`` describes as left without its owner is taken over."""
    found = _TAKEOVER.search(text)
    return None if found is None else _dt.datetime.fromisoformat(found.group(1).replace("Z", "+00:00")).timestamp()


def _iso(epoch_ms: float) -> str:
    moment = _dt.datetime.fromtimestamp(epoch_ms / 1000, _dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def parse_token(token: str) -> tuple[int, int] | None:
    """``(pid, epoch_ms)`` of an oh-my-codex token, None for any other form."""
    parts = token.split(".")
    if len(parts) < 3 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    pid, since = int(parts[0]), int(parts[1])
    return (pid, since) if pid > 0 else None


@functools.cache
def _boot_epoch_s() -> float | None:
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_start_ms(pid: int) -> tuple[str, float] | None:
    """``(state, start time in epoch ms)`` of ``pid`` from ``/proc/<pid>/stat``; None when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return start_from_stat(stat, _boot_epoch_s(), os.sysconf("SC_CLK_TCK"))


def start_from_stat(stat: str, boot_s: float | None, clock_ticks: int) -> tuple[str, float] | None:
    """``(state, start time in epoch ms)`` from a ``/proc/<pid>/stat`` line, the boot time and the clock's
    ticks per second of its machine; None when they do not say."""
    fields = stat[stat.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
    if len(fields) < 20 or boot_s is None or not fields[19].isdigit() or clock_ticks <= 0:
        return None
    return fields[0], (boot_s + int(fields[19]) / clock_ticks) * 1000


def pid_alive(pid: int, alive_at_ms: float) -> bool:
    """Whether the process that was ``pid`` at ``alive_at_ms`` (epoch ms) may still be running here.
    False only on proof: no such process, a zombie, or a process started after that moment."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by someone else
    return alive_from(True, process_start_ms(pid), alive_at_ms)


def alive_from(exists: bool, facts: tuple[str, float] | None, alive_at_ms: float) -> bool:
    """:func:`pid_alive` from what was seen of the process: whether it exists, and its state and start."""
    if not exists:
        return False
    if facts is None:
        return True  # no /proc: existence is all that can be said
    state, started = facts
    if state in ("Z", "X"):
        return False
    return started <= alive_at_ms + PID_REUSE_SLACK_MS


@dataclass(frozen=True)
class LockHolder:
    """What a lock directory says about who holds it, as seen now."""

    path: Path
    exists: bool
    token: str | None = None
    pid: int | None = None
    since_ms: int | None = None
    host: str | None = None  # None: no mark (oh-my-codex), assumed this machine
    alive: bool | None = None  # None: cannot be checked from here
    lease_ms: float | None = None  # mtime of lease (or of the directory)
    stale_ms: int = 300_000
    unowned_since_ms: float | None = None  # no token in it: the last change of the directory or owner file

    @property
    def local(self) -> bool:
        return self.host is None or self.host == host_mark()

    @property
    def lease_lapses_ms(self) -> float | None:
        return None if self.lease_ms is None else self.lease_ms + self.stale_ms

    def abandoned(self, now_ms: float) -> str | None:
        """Why the lock may be taken over now (None: it is held)."""
        if not self.exists:
            return None
        if self.alive is False:
            return "holder dead"
        if self.unowned_since_ms is not None and now_ms - self.unowned_since_ms > UNOWNED_STALE_MS:
            return "no owner written"
        lapses = self.lease_lapses_ms
        if lapses is not None and now_ms > lapses:
            return "lease lapsed"
        return None

    def describe(self) -> str:
        """``<dir> held by pid 123 since … (alive), lease lapses at …``."""
        if not self.exists:
            return f"{self.path} released just now"
        if self.token is None:
            who = "an unknown holder (no owner file)"
        elif self.pid is None:
            who = f"an unknown holder (owner token {self.token!r} carries no pid)"
        else:
            where = "" if self.local else f" on {self.host}"
            since = "" if self.since_ms is None else f" since {_iso(self.since_ms)}"
            state = {True: "alive", False: "dead", None: "liveness unknown: another host"}[self.alive]
            who = f"pid {self.pid}{where}{since} ({state})"
        lapses = self.lease_lapses_ms
        lease = "lease lapse unknown" if lapses is None else f"lease lapses at {_iso(lapses)}"
        if self.unowned_since_ms is not None:  # abandoned if nobody writes its owner by then
            lease = TAKEOVER_PHRASE.format(_iso(self.unowned_since_ms + UNOWNED_STALE_MS))
        return f"{self.path} held by {who}, {lease}"


def inspect_lock(path: Path, stale_ms: int = 300_000) -> LockHolder:
    try:
        dir_mtime = path.stat().st_mtime * 1000
    except FileNotFoundError:
        return LockHolder(path=path, exists=False, stale_ms=stale_ms)
    except OSError:
        dir_mtime = None
    try:
        lease_ms: float | None = (path / LEASE_FILE).stat().st_mtime * 1000
    except OSError:
        lease_ms = dir_mtime
    try:
        owner_ms: float | None = (path / OWNER_FILE).stat().st_mtime * 1000
    except OSError:
        owner_ms = None
    return judged_holder(LockSeen(path=path, dir_ms=dir_mtime, lease_ms=lease_ms, owner_ms=owner_ms,
                                  token=_read(path / OWNER_FILE), host=_read(path / HOST_FILE) or None),
                         stale_ms, host_mark(), pid_alive)


@dataclass(frozen=True)
class LockSeen:
    """What was read of an existing lock directory, here or on another machine (``shell/run/remote_locks.py``):
    the times (epoch ms) its directory, lease and owner file last changed, its owner token and host mark."""

    path: Path
    dir_ms: float | None
    lease_ms: float | None  # the directory's time when it has no lease file
    owner_ms: float | None
    token: str | None
    host: str | None


def judged_holder(seen: LockSeen, stale_ms: int, mark: str, alive: Callable[[int, float], bool]) -> LockHolder:
    """Who holds the lock ``seen``, on the machine whose mark is ``mark`` (its pids checked by ``alive``);
    a holder marked with another machine's mark is not checked."""
    holder = LockHolder(path=seen.path, exists=True, token=seen.token, lease_ms=seen.lease_ms, stale_ms=stale_ms)
    token = seen.token
    parsed = parse_token(token) if token else None
    if not token:
        changed = [ms for ms in (seen.dir_ms, seen.owner_ms) if ms is not None]
        return replace(holder, unowned_since_ms=max(changed)) if changed else holder
    if parsed is None:
        return holder
    pid, since = parsed
    # The holder was alive when it took the lock and whenever it touched its lease since.
    alive_at = max(since, seen.lease_ms or since)
    checked = alive(pid, alive_at) if seen.host is None or seen.host == mark else None
    return replace(holder, pid=pid, since_ms=since, host=seen.host, alive=checked)


def _take_over(path: Path, seen: LockHolder) -> bool:
    """Remove the abandoned lock ``seen`` — only if the directory still holds what was judged.

    Two waiters that both find a dead holder must not both remove: the second would delete the
    first's fresh lock. A guard directory beside the lock serializes panefleet's takeovers, and
    under it the lock is judged again. True when the caller should try ``mkdir`` again now."""
    guard = path.with_name(path.name + TAKEOVER_SUFFIX)
    try:
        guard.mkdir()
    except FileExistsError:
        with contextlib.suppress(OSError):
            if time.time() - guard.stat().st_mtime > TAKEOVER_GUARD_STALE_S:
                guard.rmdir()
        return False
    except OSError as exc:
        if exc.errno in UNWRITABLE:  # a folder that cannot be written: waiting out the timeout changes nothing
            raise
        return False
    try:
        now = inspect_lock(path, seen.stale_ms)
        if not now.exists:
            return True
        if now.token != seen.token or now.abandoned(time.time() * 1000) is None:
            return False
        shutil.rmtree(path)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            guard.rmdir()


def acquire_lock(path: Path, *, timeout_ms: int, retry_ms: int, stale_ms: int, token: str) -> None:
    """Acquire an oh-my-codex lock directory (``owner``, ``lease`` and panefleet's ``host`` inside).

    A lock whose holder is provably dead, or whose lease is older than ``stale_ms``, is taken over.
    Raises LockTimeout after ``timeout_ms`` naming the directory, the holder and its lease; an OSError
    at once when the directory (or an abandoned one's takeover guard) cannot be made."""
    deadline = time.monotonic() + timeout_ms / 1000
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            path.mkdir()
        except FileExistsError:
            holder = inspect_lock(path, stale_ms)
            if holder.abandoned(time.time() * 1000) is not None and _take_over(path, holder):
                continue
            if time.monotonic() >= deadline:
                raise LockTimeout(holder.describe()) from None
            time.sleep(retry_ms / 1000)
            continue
        try:
            # host before owner: whoever can read a token can also read where its pid lives; the
            # owner appears whole (renamed into place), so a lock never shows half a token
            (path / HOST_FILE).write_text(host_mark())
            (path / f".{OWNER_FILE}.tmp").write_text(token)
            os.replace(path / f".{OWNER_FILE}.tmp", path / OWNER_FILE)
            (path / LEASE_FILE).write_text(token)
        except BaseException:  # also SIGTERM/Ctrl-C here: no half-written lock is left behind
            with contextlib.suppress(OSError):
                shutil.rmtree(path)
            raise
        return


def lease_interval(stale_ms: int) -> float:
    """How often a held lock's lease is touched (seconds): every third of its stale time, as oh-my-codex's
    holders do."""
    return max(0.001, stale_ms / 3000)


def refresh_lease(path: Path, token: str) -> bool:
    """Touch the lease of a lock still held with ``token`` (never recreate a lost one)."""
    if _read(path / OWNER_FILE) != token:
        return False
    try:
        os.utime(path / LEASE_FILE)
    except OSError:
        return False
    return True


def release_lock(path: Path, token: str) -> bool:
    """Delete the lock directory only if ``owner`` still holds ``token``."""
    if _read(path / OWNER_FILE) != token:
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True
