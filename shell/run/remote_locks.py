"""oh-my-codex lock directories on a host (``AcquireLock``/``ReleaseLock`` steps that name one,
``shell/run/remote.py``), taken and judged by the same rules as here (``shell/run/fs.py``).

The holder a lock names on the host must be a process there, or the agents on that host that take the same
locks would judge it dead: a lock is held in the name of the run's shell on the host
(``shell/run/host_shell.py``), whose process lives exactly as long as the run's session. Its token is
``<that pid>.<the host's epoch ms>.<random hex>`` and its ``host`` file the host's mark (its name and pid
namespace), so a holder is judged alive or dead there, with the host's clock, by the same
``fs.judged_holder`` as a local lock. Every fact is read by one ``sh`` program per look, through the run's
shell; the waiting and the judging happen here.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from returns.result import Failure, Result, Success

from pure import model as m
from pure.hosts import HostFault
from shell.run import fs

Caller = Callable[[Sequence[str]], Result[m.Proc, HostFault]]

_MARK = ('ns=$(readlink "/proc/$$/ns/pid" 2>/dev/null); '
         'if [ -n "$ns" ]; then printf "%s %s" "$(uname -n)" "$ns"; else printf "%s" "$(uname -n)"; fi')
HELD = 3  # the exit status of a take that found the lock held
# $1 the lock, $2 the holder's pid, $3 random hex: prints the token it wrote
_TAKE = (f'd=${{1%/*}}; mkdir -p -- "${{d:-/}}" || exit 1; '
         f'if ! mkdir -- "$1" 2>/dev/null; then if [ -e "$1" ] || [ -L "$1" ]; then exit {HELD}; fi; mkdir -- "$1"; exit 1; fi; '
         f't="$2.$(date +%s)000.$3"; '
         f'{{ {{ {_MARK}; }} >"$1/{fs.HOST_FILE}" && printf "%s" "$t" >"$1/.{fs.OWNER_FILE}.tmp" && '
         f'mv -f -- "$1/.{fs.OWNER_FILE}.tmp" "$1/{fs.OWNER_FILE}" && printf "%s" "$t" >"$1/{fs.LEASE_FILE}"; }} '
         f'|| {{ rm -rf -- "$1"; exit 1; }}; printf "%s" "$t"')
# $1 the lock: NUL after each of exists, now (s), mark, and, when it exists, the times (s) of the directory,
# lease and owner file, the host file, the owner token, then whether the token's pid exists, its
# /proc/PID/stat, the boot time (s) and the clock's ticks per second
_LOOK = ('mt() { stat -c %Y -- "$1" 2>/dev/null || stat -f %m -- "$1" 2>/dev/null || true; }; '
         'f() { printf "%s\\0" "$1"; }; '
         'if [ ! -e "$1" ] && [ ! -L "$1" ]; then f 0; f "$(date +%s)"; f "$(' + _MARK + ')"; exit 0; fi; '
         'f 1; f "$(date +%s)"; f "$(' + _MARK + ')"; '
         f'f "$(mt "$1")"; f "$(mt "$1/{fs.LEASE_FILE}")"; f "$(mt "$1/{fs.OWNER_FILE}")"; '
         f'f "$(cat -- "$1/{fs.HOST_FILE}" 2>/dev/null)"; t=$(cat -- "$1/{fs.OWNER_FILE}" 2>/dev/null); f "$t"; '
         'p=${t%%.*}; case $p in ""|*[!0-9]*) p=;; esac; '
         'if [ -n "$p" ] && { kill -0 "$p" 2>/dev/null || [ -d "/proc/$p" ]; }; then f 1; else f 0; fi; '
         'f "$(cat "/proc/$p/stat" 2>/dev/null)"; '
         'f "$(sed -n "s/^btime //p" /proc/stat 2>/dev/null)"; f "$(getconf CLK_TCK 2>/dev/null)"')
# $1 the lock, $2 the token it must still hold ("" for none): removed only then
_REMOVE_IF_HELD_BY = f'[ "$(cat -- "$1/{fs.OWNER_FILE}" 2>/dev/null)" = "$2" ] && rm -rf -- "$1"'
_TOUCH_IF_HELD_BY = f'[ "$(cat -- "$1/{fs.OWNER_FILE}" 2>/dev/null)" = "$2" ] && touch -- "$1/{fs.LEASE_FILE}"'
# $1 the guard beside the lock: made (exit 0), or found (exit HELD; removed when older than its staleness)
_GUARD = (f'mkdir -- "$1" 2>/dev/null && exit 0; '
          f'm=$(stat -c %Y -- "$1" 2>/dev/null || stat -f %m -- "$1" 2>/dev/null) && '
          f'[ $(( $(date +%s) - m )) -gt {int(fs.TAKEOVER_GUARD_STALE_S)} ] && rmdir -- "$1"; exit {HELD}')


def _sh(program: str, *args: str) -> tuple[str, ...]:
    return ("sh", "-c", program, "sh", *args)


def acquire(call: Caller, holder_pid: int, path: str, *, timeout_ms: int, retry_ms: int,
            stale_ms: int) -> Result[str, str]:
    """Take the lock ``path`` on the host for the process ``holder_pid`` there, taking over one abandoned
    (``fs.LockHolder.abandoned``); its token, or why not (``timeout: <who holds it>``, or what the host
    said)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        taken = call(_sh(_TAKE, path, str(holder_pid), uuid.uuid4().hex[:12]))
        if isinstance(taken, Failure):
            return Failure(str(taken.failure()))
        proc = taken.unwrap()
        if proc.exit_code == 0 and proc.stdout:
            return Success(proc.stdout)
        if proc.exit_code != HELD:
            return Failure(proc.stderr.strip() or f"cannot take the lock {path}")
        looked = _look(call, path, stale_ms)
        if isinstance(looked, Failure):
            return Failure(looked.failure())
        holder, now_ms = looked.unwrap()
        if holder.abandoned(now_ms) is not None and _take_over(call, path, holder):
            continue
        if time.monotonic() >= deadline:
            return Failure(f"timeout: {holder.describe()}")
        time.sleep(retry_ms / 1000)


def refresh(call: Caller, path: str, token: str) -> None:
    """Touch the lease of a lock still held with ``token`` (never recreate a lost one)."""
    call(_sh(_TOUCH_IF_HELD_BY, path, token))


def release(call: Caller, path: str, token: str) -> bool:
    """Remove the lock only while it still holds ``token``."""
    done = call(_sh(_REMOVE_IF_HELD_BY, path, token))
    return not isinstance(done, Failure) and done.unwrap().exit_code == 0


def _look(call: Caller, path: str, stale_ms: int) -> Result[tuple[fs.LockHolder, float], str]:
    """Who holds the lock, judged as ``fs.inspect_lock`` judges a local one, and the host's time (ms)."""
    answer = call(_sh(_LOOK, path))
    if isinstance(answer, Failure):
        return Failure(str(answer.failure()))
    fields = answer.unwrap().stdout.split("\0")
    if len(fields) < 4 or fields[0] not in ("0", "1") or not fields[1].isdigit():
        return Failure(f"the lock {path} could not be read: {answer.unwrap().stderr.strip()}")
    now_ms = int(fields[1]) * 1000.0
    if fields[0] == "0":
        return Success((fs.LockHolder(path=Path(path), exists=False, stale_ms=stale_ms), now_ms))
    mark, fields = fields[2], (fields[3:] + [""] * 10)[:10]
    dir_s, lease_s, owner_s, host, token, exists, stat, boot, ticks = fields[:9]

    def ms(seconds: str) -> float | None:
        return int(seconds) * 1000.0 if seconds.isdigit() else None

    seen = fs.LockSeen(path=Path(path), dir_ms=ms(dir_s), lease_ms=ms(lease_s) or ms(dir_s), owner_ms=ms(owner_s),
                       token=token.strip() or None, host=host.strip() or None)
    started = fs.start_from_stat(stat, float(boot) if boot.isdigit() else None, int(ticks) if ticks.isdigit() else 0)
    holder = fs.judged_holder(seen, stale_ms, mark, lambda _pid, at: fs.alive_from(exists == "1", started, at))
    return Success((holder, now_ms))


def _take_over(call: Caller, path: str, seen: fs.LockHolder) -> bool:
    """Remove the abandoned lock ``seen`` only if it still holds what was judged, under the guard beside it
    that serializes takeovers (as ``fs._take_over`` does here). True: try to take it again now."""
    guard = path + fs.TAKEOVER_SUFFIX
    made = call(_sh(_GUARD, guard))
    if isinstance(made, Failure) or made.unwrap().exit_code != 0:
        return False
    try:
        looked = _look(call, path, seen.stale_ms)
        if isinstance(looked, Failure):
            return False
        now, now_ms = looked.unwrap()
        if not now.exists:
            return True
        if now.token != seen.token or now.abandoned(now_ms) is None:
            return False
        return release(call, path, now.token or "")
    finally:
        call(("rmdir", "--", guard))
