"""Keep the audit logs bounded: the newest ``COUNT`` logs, none older than ``DAYS`` days.

Every run writes one log under ``<state dir>/audit/`` (``shell/run/loop.py``); after a run,
``shell/cli/operation.py`` calls :func:`prune`. ``PANEFLEET_AUDIT_KEEP`` sets the policy as a
comma-separated list of ``COUNT`` and ``DAYSd`` items (default ``500,30d``: the 500 newest logs,
and of those only the ones written in the last 30 days); ``off`` keeps every log. A malformed value
is a usage error (exit 2), checked by ``cli.py`` before any command runs.

Only files named like an audit log (``*.jsonl``) directly in that directory are ever removed, oldest
first by modification time; the log of the run that just finished is always kept, and so is any log
written in the last minute (a concurrent run may still be writing it). Pruning is best effort: a file
that cannot be removed stays, and the run's outcome is unaffected.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

from attrs import frozen

ENV = "PANEFLEET_AUDIT_KEEP"
DEFAULT_COUNT = 500
DEFAULT_DAYS = 30
GRACE_SECONDS = 60.0
_ITEM = re.compile(r"(\d+)(d?)")


@frozen
class Policy:
    count: int | None  # None: no bound
    days: int | None


def policy_from_env(env: Mapping[str, str]) -> Policy:
    """The policy ``PANEFLEET_AUDIT_KEEP`` asks for; ValueError names a malformed value."""
    raw = env.get(ENV, "").strip()
    if not raw:
        return Policy(DEFAULT_COUNT, DEFAULT_DAYS)
    if raw == "off":
        return Policy(None, None)
    count: int | None = None
    days: int | None = None
    for item in (part.strip() for part in raw.split(",")):
        match = _ITEM.fullmatch(item)
        if match is None or int(match.group(1)) < 1:
            raise ValueError(f"{ENV}={raw!r}: expected COUNT and/or DAYSd items such as '500,30d' "
                             "(positive numbers), or 'off'")
        if match.group(2):
            days = int(match.group(1))
        else:
            count = int(match.group(1))
    return Policy(count, days)


def prune(directory: Path, policy: Policy, *, keep: Path | None = None, now: float | None = None) -> list[Path]:
    """Remove the logs ``policy`` does not keep; answer what was removed."""
    if policy.count is None and policy.days is None:
        return []
    current = time.time() if now is None else now
    try:
        entries = [(entry.stat().st_mtime, Path(entry.path)) for entry in os.scandir(directory)
                   if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False)]
    except OSError:
        return []
    entries.sort(reverse=True)  # newest first
    removed: list[Path] = []
    for rank, (mtime, path) in enumerate(entries):
        if path == keep or current - mtime < GRACE_SECONDS:
            continue
        too_many = policy.count is not None and rank >= policy.count
        too_old = policy.days is not None and current - mtime > policy.days * 86_400
        if too_many or too_old:
            try:
                path.unlink()
            except OSError:
                continue
            removed.append(path)
    return removed


def prune_after_run(env: Mapping[str, str], log: Path | None) -> None:
    """Called after a run that wrote ``log``: prune its directory by the environment's policy."""
    if log is None:
        return
    try:
        policy = policy_from_env(env)
    except ValueError:
        return  # cli.py refuses a malformed policy before any run; other callers keep every log
    prune(log.parent, policy, keep=log)
