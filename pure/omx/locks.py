"""oh-my-codex's lock kinds as pure sub-programs (docs/transaction.md, "Locks").

All three are ``mkdir`` lock directories shared with oh-my-codex itself, so both tools can run
against one team at once. The shell polls (``AcquireLock``) and owns the clock; these helpers only
say which directory, how long, and what error oh-my-codex reports.

API (every helper is a generator to be used with ``yield from``):

* ``with_scaling_lock(paths, body)`` – ``<stateRoot>/.team-locks/<team>.scaling``, retry 50 ms,
  10 s; timeout ends the program with ``Timed out acquiring scaling lock for team <team>``.
* ``with_barrier(paths, body, held=None)`` – the membership barrier
  ``<stateRoot>/.team-locks/<team>.membership``, retry 25 ms, 5 s; timeout ⇒
  ``Timed out acquiring team task lock for <team>``. ``body`` receives a :class:`Barrier` token:
  the proof that the barrier is held. Re-entrancy is structural: pass the token you hold as
  ``held`` and the body runs without a second acquisition (oh-my-codex uses AsyncLocalStorage
  for the same effect). Sub-programs that require the barrier take a ``Barrier`` argument.
* ``with_barrier_to_read(paths, body, unlocked)`` – the barrier for a command that changes nothing;
  a lock directory that cannot be made (read-only state) runs ``unlocked(ack)`` instead.
* ``with_claim_lock(paths, task_id, body)`` – ``team/<team>/claims/task-<id>.lock``, retry 25 ms,
  5 s; returns ``ClaimLockTimeout`` instead of raising (oh-my-codex answers ``{ok:false}``).
* ``with_mailbox_lock(paths, worker, body)`` – ``team/<team>/mailbox/.lock-<worker>``, retry 25 ms,
  5 s; timeout ⇒ ``Timed out acquiring mailbox lock for <team>/<worker>``.
* ``with_claim_locks(paths, task_ids, body)`` – every claim lock in ascending numeric id order;
  on a timeout it releases what it took and ends with
  ``Timed out acquiring task claim lock for <team>/<id>``.

Global lock order: scaling → barrier → claim locks (ascending id). Locks are released on every
exit path, including a ``PlanError`` raised by the body. A lock whose lease is older than 5 min, or
whose holder is provably dead, is taken over by the shell (``shell/run/fs.py``).

A timeout message is oh-my-codex's, followed — when the shell's ``Ack`` says who holds the lock
(``timeout: <dir> held by pid 123 since … (alive), lease lapses at …``) — by ``: <that detail>``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from attrs import frozen

from pure import model as m
from pure.omx.state import TeamPaths
from pure.program import Gen, expect, fail, uninterrupted

T = TypeVar("T")

LOCK_STALE_MS = 300_000
SCALING_TIMEOUT_MS = 10_000
SCALING_RETRY_MS = 50
BARRIER_TIMEOUT_MS = 5_000
BARRIER_RETRY_MS = 25
CLAIM_TIMEOUT_MS = 5_000
CLAIM_RETRY_MS = 25


@frozen
class Barrier:
    """Proof that the membership barrier of one team is held by the running program."""

    team_dir: str

    def covers(self, paths: TeamPaths) -> bool:
        return self.team_dir == paths.team_dir


@frozen
class ClaimLockTimeout:
    task_id: str
    detail: str = ""  # who holds the lock and until when, when the shell said so


def _acquire(path: str, timeout_ms: int, retry_ms: int) -> Gen[m.Ack]:
    return (yield from expect(
        m.AcquireLock(path=path, timeout_ms=timeout_ms, retry_ms=retry_ms, stale_ms=LOCK_STALE_MS), m.Ack))


def _release(path: str) -> Gen[None]:
    """Release ``path`` with interrupts held: an interrupt thrown at the release step would leave the
    lock held by this very run, and the undo that answers the interrupt would wait for it in vain
    (docs/design-notes.md, "Interrupts"). The interrupt comes at the next step instead."""
    yield from uninterrupted(expect(m.ReleaseLock(path=path), m.Ack))


def _held(path: str, body: Gen[T]) -> Gen[T]:
    """Run ``body`` and release ``path`` on every exit (normal return or exception)."""
    try:
        result = yield from body
    except GeneratorExit:  # the driver discarded a suspended program: nothing can be yielded now
        raise
    except BaseException:
        yield from _release(path)
        raise
    yield from _release(path)
    return result


TIMEOUT = "timeout"


def timeout_detail(ack: m.Ack) -> str | None:
    """None unless ``ack`` is a lock timeout; then what the shell said about the holder (``""`` if
    nothing): ``timeout: <dir> held by pid 123 since … (alive), lease lapses at …``."""
    if ack.ok:
        return None
    if ack.error == TIMEOUT:
        return ""
    head, sep, detail = ack.error.partition(": ")
    return detail.strip() if head == TIMEOUT and sep else None


def timeout_message(message: str, detail: str) -> str:
    """oh-my-codex's message, then (when the shell knows it) who holds the lock and until when."""
    return f"{message}: {detail}" if detail else message


def _timeout_or_error(ack: m.Ack, message: str) -> str:
    detail = timeout_detail(ack)
    return ack.error if detail is None else timeout_message(message, detail)


def with_scaling_lock(paths: TeamPaths, body: Callable[[], Gen[T]]) -> Gen[T]:
    ack = yield from _acquire(paths.scaling_lock, SCALING_TIMEOUT_MS, SCALING_RETRY_MS)
    if not ack.ok:
        raise fail(_timeout_or_error(ack, f"Timed out acquiring scaling lock for team {paths.team}"))
    return (yield from _held(paths.scaling_lock, body()))


def with_barrier(paths: TeamPaths, body: Callable[[Barrier], Gen[T]], held: Barrier | None = None) -> Gen[T]:
    if held is not None and held.covers(paths):
        return (yield from body(held))
    ack = yield from _acquire(paths.membership_lock, BARRIER_TIMEOUT_MS, BARRIER_RETRY_MS)
    if not ack.ok:
        raise fail(_timeout_or_error(ack, f"Timed out acquiring team task lock for {paths.team}"))
    return (yield from _held(paths.membership_lock, body(Barrier(paths.team_dir))))


def with_barrier_to_read(paths: TeamPaths, body: Callable[[Barrier], Gen[T]],
                         unlocked: Callable[[m.Ack], Gen[T]]) -> Gen[T]:
    """For a command that changes nothing: ``body`` under the barrier, as :func:`with_barrier`; but when
    the lock directory cannot be made at all (read-only team state, no write permission, a full disk —
    the shell's ``Ack`` error names the directory and why), ``unlocked(ack)`` reads without it. A live
    holder's timeout still ends the program: someone is changing the team right now."""
    ack = yield from _acquire(paths.membership_lock, BARRIER_TIMEOUT_MS, BARRIER_RETRY_MS)
    if not ack.ok and timeout_detail(ack) is None:
        return (yield from unlocked(ack))
    if not ack.ok:
        raise fail(_timeout_or_error(ack, f"Timed out acquiring team task lock for {paths.team}"))
    return (yield from _held(paths.membership_lock, body(Barrier(paths.team_dir))))


def with_claim_lock(paths: TeamPaths, task_id: str, body: Callable[[], Gen[T]]) -> Gen[T | ClaimLockTimeout]:
    path = paths.claim_lock(task_id)
    ack = yield from _acquire(path, CLAIM_TIMEOUT_MS, CLAIM_RETRY_MS)
    if not ack.ok:
        detail = timeout_detail(ack)
        if detail is None:
            raise fail(ack.error)
        return ClaimLockTimeout(task_id, detail)
    return (yield from _held(path, body()))


def with_mailbox_lock(paths: TeamPaths, worker: str, body: Callable[[], Gen[T]]) -> Gen[T]:
    path = f"{paths.team_dir}/mailbox/.lock-{worker}"
    ack = yield from _acquire(path, CLAIM_TIMEOUT_MS, CLAIM_RETRY_MS)
    if not ack.ok:
        raise fail(_timeout_or_error(ack, f"Timed out acquiring mailbox lock for {paths.team}/{worker}"))
    return (yield from _held(path, body()))


def claim_order(task_ids: Iterable[str]) -> list[str]:
    """Ascending numeric order, duplicates removed."""
    return sorted(set(task_ids), key=lambda tid: (int(tid) if tid.isdigit() else 0, tid))


def with_claim_locks(paths: TeamPaths, task_ids: Iterable[str], body: Callable[[], Gen[T]]) -> Gen[T]:
    ordered = claim_order(task_ids)

    def nest(position: int) -> Gen[T]:
        if position == len(ordered):
            return (yield from body())
        task_id = ordered[position]
        result = yield from with_claim_lock(paths, task_id, lambda: nest(position + 1))
        if isinstance(result, ClaimLockTimeout):
            raise fail(timeout_message(f"Timed out acquiring task claim lock for {paths.team}/{task_id}",
                                       result.detail))
        return result

    return (yield from nest(0))
