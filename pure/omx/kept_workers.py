"""Workers a scale-up's rollback had to keep (docs/scale-up.md, "Kept workers").

A rollback that cannot prove a new worker's pane gone or its own keeps the worker a member with its pane
id (and pid when pinned), as oh-my-codex does: a live pane that no record names would be a leak. Kept that
way alone, nothing would tell it from a worker the team asked for. So the rollback rewrites the worker's
intent (``TeamPaths.intent``) as its record, ``{"kind": "kept", "worker", "script", "pane_id", "pid",
"debt": [codes], "reason"}``: the rollback's debt codes for its pane and why the run rolled back.

Every team command reads it with the intents (``pure/omx/strays.py`` ``leftover_workers``): ``team
status`` and ``team debt show`` list the worker (exit 3) and ``team debt reconcile`` retries its removal
as a forced scale-down of it (``pure/omx/scale_down.py``): the pane is killed only after its proof, or
named in the scale-down's own debt record. A record whose worker is no member any more (a scale-down
removed it) is forgotten as any intent is.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from pure import model as m
from pure import tmux as t
from pure.omx import effects
from pure.omx.codec import Parsed, render_json
from pure.omx.records import Member
from pure.omx.state import TeamPaths

KIND = "kept"


@frozen(kw_only=True)
class Kept:
    """A member a rollback could not undo: its pane and pid as recorded, the debt codes, and why."""

    worker: str
    pane_id: str | None
    pid: int | None
    debt: tuple[str, ...]
    reason: str

    def to_json(self) -> m.Answer:
        return {"worker": self.worker, "paneId": self.pane_id, "pid": self.pid, "debt": list(self.debt),
                "reason": self.reason}


def record_step(paths: TeamPaths, worker: Member, debt: Sequence[str], reason: str) -> m.WriteFile:
    """The rollback's record of a kept ``worker`` (its membership record), in place of its intent."""
    record: dict[str, object] = {"kind": KIND, "worker": worker.name, "script": paths.startup_script(worker.index),
                    "pane_id": worker.pane_id, "pid": worker.pid, "debt": list(debt), "reason": reason}
    return m.WriteFile(path=paths.intent(worker.name), content=render_json(record),
                       effect=effects.kept_as_debt(worker.name))


def from_record(record: Parsed | None, worker: str) -> Kept | None:
    """The kept worker an intent file records; None for any other intent (or one not of ``worker``)."""
    if record is None or record.get("kind") != KIND or record.get("worker") != worker:
        return None
    pane, pid, debt = record.get("pane_id"), record.get("pid"), record.get("debt")
    return Kept(worker=worker, pane_id=pane if t.is_pane_id(pane) else None,
                pid=pid if t.is_positive_pid(pid) else None,
                debt=tuple(d for d in debt if isinstance(d, str)) if isinstance(debt, list) else (),
                reason=str(record.get("reason") or ""))


def debt_codes(pane: object, debts: Sequence[tuple[str, str]]) -> list[str]:
    """The codes of the rollback's ``debts`` (code, subject) that name ``pane``: a subject is a pane, a
    list of panes, or ``<pane>:<reason>`` items (``pure/omx/scale_up/rollback.py``)."""
    return [code for code, subject in debts
            if isinstance(pane, str) and pane in subject.replace(":", ",").split(",")]
