"""Release a pane whose run settled, once it is proven to be that run's."""

from __future__ import annotations

from typing import Any, Literal

from attrs import frozen
from returns.result import Failure

from pure.herdr.fleet import effects
from pure.herdr.fleet.calls import list_panes
from pure.herdr.fleet.owned import Owned, apply_ownership, discover, listed_panes, retire_pane
from pure.herdr.fleet.vocabulary import Target
from pure.herdr.parse import (
    PaneFact,
)
from pure.program import Gen

# -------------------------------------------------------------------------------- release / retire


@frozen
class Released:
    kind: Literal["none", "released", "unowned", "failed"]
    pane_id: str | None = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.pane_id is not None:
            out["paneId"] = self.pane_id
        if self.reason:
            out["reason"] = self.reason
        return out


def release_orphaned(
    session: Target, pane_id: str | None, label: str | None, run_id: str | None, project: str | None
) -> Gen[Released]:
    """``releaseOrphanedWorkerPane``: prove the pane is ours before anything is closed."""
    if pane_id is None or label is None or project is None:
        return Released("none")
    found = yield from discover(session, (project,))
    if isinstance(found, Failure):
        return Released("failed", pane_id, found.failure())
    disc = found.unwrap()
    wrote = yield from apply_ownership(disc)
    if isinstance(wrote, Failure):
        return Released("failed", pane_id, wrote.failure())
    home: Owned | None = None
    hit: PaneFact | None = None
    for owned in disc.owned:
        listed = yield from list_panes(session, owned.workspace_id)
        if isinstance(listed, Failure):
            return Released("failed", pane_id, listed.failure())
        hit = next((p for p in listed.unwrap() if p.pane_id == pane_id), None)
        if hit is not None:
            home = owned
            break
    if home is None or hit is None or (home.recorded_only and hit.label != label):
        # A workspace held by the record alone proves nothing unless it shows this very pane with
        # the label we gave it (a reissued id after a restart: owned.py ``prove_recorded``).
        return Released("none")
    session_id = hit.run_id or None
    if (
        (hit.agent is not None and hit.agent != label)
        or (hit.label is not None and hit.label != label)
        or (session_id is not None and run_id is not None and session_id != run_id)
    ):
        return Released(
            "unowned",
            pane_id,
            f"pane {pane_id} in marked workspace {home.workspace_id} reports another identity "
            f"(agent {hit.agent or 'none'}, label {hit.label or 'none'}, session {session_id or 'none'})",
        )
    retired = yield from retire_pane(session, listed_panes(home, [hit])[pane_id], label,
                                     effects.pane_retired(pane_id, run_id))
    if isinstance(retired, Failure):
        return Released("failed", pane_id, retired.failure())
    return Released("released", pane_id)
