"""What a change to a team is, in the team's words: the effects (``m.Effect``) the planners of
``pure/omx/`` state on the steps they build, each worded here once. The plan view
(``shell/cli/plan_view.py``) only groups and prints them.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sized
from typing import Any

from pure import model as m

CONFIG = "config.json"
_TASK_FILE = re.compile(r"^task-(\d+)\.json$")


def worker(name: str, action: m.EffectAction = "change", detail: str = "") -> m.Effect:
    return m.effect(action, "worker", name, detail)


def killed(name: str, pane: str, pid: object, owner: str) -> m.Effect:
    """A worker's pane killed after its proof: listed with its pinned pid, tagged with the team's owner."""
    return worker(name, "remove", f"pane {pane} killed after proof (pid {pid} as pinned, tagged {owner})")


def rolled_back(name: str) -> m.Effect:
    """A part of a worker that a scale-up's rollback removes again (pure/omx/scale_up/rollback.py)."""
    return worker(name, "remove", "removed again (rolled back)")


def leftover(name: str, detail: str = "") -> m.Effect:
    """What a killed run left of a worker, removed by the sweep (pure/omx/strays.py)."""
    return worker(name, "remove", detail)


def kept_as_debt(name: str) -> m.Effect:
    """A worker a rollback had to keep as a member (pure/omx/kept_workers.py)."""
    return worker(name, "debt", "kept: its pane could not be proven gone (see `panefleet team debt show`)")


def _json(text: str | None) -> Any:
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None


def config(before_text: str | None, after_text: str | None) -> m.Effect:
    """``config.json`` rewritten: its generation and member count, before → after (else the first
    three plain values that changed)."""
    before, after = _json(before_text), _json(after_text)
    if not isinstance(after, dict):
        return m.effect("change", "config", CONFIG, "removed" if after_text is None else "rewritten")
    if not isinstance(before, dict):
        return m.effect("change", "config", CONFIG, "written")
    bits = []
    if before.get("config_generation") != after.get("config_generation"):
        bits.append(f"generation {before.get('config_generation')} → {after.get('config_generation')}")
    old, new = len(before.get("workers") or []), len(after.get("workers") or [])
    if old != new:
        bits.append(f"workers {old} → {new}")
    if not bits:
        plain = (str, int, float, bool, type(None))
        bits = [f"{key} {before.get(key)} → {after.get(key)}" for key in after
                if isinstance(after.get(key), plain) and before.get(key) != after.get(key) and not key.endswith("_at")][:3]
    return m.effect("change", "config", CONFIG, ", ".join(bits) or "rewritten")


# The membership journal and the manifest only carry the config's change (pure/omx/txn.py).
CONFIG_COMPANION = m.effect("change", "config", CONFIG)


_ABSENT = object()


def task(task_id: str, before: object, after: object) -> m.Effect:
    """A task written or removed (``before``/``after``: its parsed record, or ``_ABSENT``): created
    (its subject and owner), removed, claimed, released, or its owner or status changed."""
    subject = f"task {task_id}"
    if before is _ABSENT:
        if not isinstance(after, dict):
            return m.effect("add", "task", subject, "created")
        title, owner = after.get("subject"), after.get("owner")
        return m.effect("add", "task", subject, (f"created: {title}" if title else "created")
                        + (f" (owner {owner})" if owner else ""))
    if after is _ABSENT:
        return m.effect("remove", "task", subject, "removed")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return m.effect("change", "task", subject, "rewritten")
    bits = []
    old_owner, new_owner = before.get("owner"), after.get("owner")
    if before.get("claim") and not after.get("claim"):
        bits.append(f"released (owner {old_owner or 'none'} → {new_owner or 'none'})")
    elif after.get("claim") and not before.get("claim"):
        bits.append(f"claimed by {new_owner or (after.get('claim') or {}).get('owner') or '?'}")
    elif old_owner != new_owner:
        bits.append(f"owner {old_owner or 'none'} → {new_owner or 'none'}")
    if before.get("status") != after.get("status"):
        bits.append(f"status {before.get('status')} → {after.get('status')}")
    return m.effect("change", "task", subject, ", ".join(bits) or "rewritten")


def task_file(path: str, before_text: str | None, after_text: str | None) -> m.Effect | None:
    """:func:`task` for a ``tasks/task-<id>.json`` path; None for any other path."""
    match = _TASK_FILE.match(posixpath.basename(path))
    if match is None:
        return None
    return task(match.group(1), _ABSENT if before_text is None else _json(before_text),
                _ABSENT if after_text is None else _json(after_text))


def created_task(task_id: str, record: object) -> m.Effect:
    return task(task_id, _ABSENT, record)


def changed_task(task_id: str, before: object, after: object) -> m.Effect:
    return task(task_id, before, after)


def dispatch(before: Sized, after: Sized) -> m.Effect:
    """The dispatch requests: how many, before → after (a plan of several reads ``requests 0 → 3``)."""
    detail = f"requests {len(before)} → {len(after)}" if len(after) != len(before) else "a request updated"
    return m.effect("change", "dispatch", "dispatch/requests.json", detail)


# oh-my-codex's delivery log (pure/omx/dispatch.py), outside the team's folder
DELIVERY_LOG = m.effect("change", "events", "team-delivery log", "appended to")
EVENT = m.effect("change", "events", "events.ndjson", "appended to")

CLEANUP_DEBT = "cleanup debt"


def cleanup_debt(existed: bool, removed: bool) -> m.Effect:
    """The scale-down's cleanup-debt record (``.scale-down-cleanup-debt.json``) as debt: one an earlier
    run left (``existed``) updated or removed, or a new one this run leaves. While a scale-down only
    guards its own kills with it, it is part of the membership change (:data:`CONFIG_COMPANION`)."""
    if existed and removed:
        return m.effect("change", "debt", CLEANUP_DEBT, "record removed: every debt pane is settled")
    if existed:
        return m.effect("change", "debt", CLEANUP_DEBT, "record updated (.scale-down-cleanup-debt.json)")
    return m.effect("debt", "debt", CLEANUP_DEBT, "recorded in .scale-down-cleanup-debt.json (see `panefleet team debt show`)")
