"""What one reconcile pass did for each run, pane and workspace (docs/herdr-fleet.md).

One class per outcome kind, as omp-conductor's ``WorkerPaneReconciliation`` union has them. On the wire each
is an object led by its ``kind``, then its fields in camelCase in the order declared here, an
absent optional field left out; the two a pass leaves behind also say what debt they are
(:func:`debt_of`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Union

import attrs
from attrs import frozen

from pure import model as m

JunkCause = Literal["settled", "duplicate", "unidentified"]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


class _Wire:
    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for field in attrs.fields(type(self)):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if value is not None:
                out[_camel(field.name)] = value
        return out


@frozen(kw_only=True)
class Intact(_Wire):
    """The run's follower pane is alive: kept."""

    kind: ClassVar[str] = "intact"
    run_id: str
    pane_id: str


@frozen(kw_only=True)
class VisualUnreadable(_Wire):
    """The follower pane stands, but whether it is alive could not be read: kept, untouched."""

    kind: ClassVar[str] = "visual-unreadable"
    run_id: str
    pane_id: str
    reason: str


@frozen(kw_only=True)
class Untracked(_Wire):
    """The run has no pane and none was opened (``attempted``: an open was tried and failed)."""

    kind: ClassVar[str] = "untracked"
    run_id: str
    reason: str
    attempted: Literal[True] | None = None
    phase: Literal["split"] | None = None


@frozen(kw_only=True)
class Reassociated(_Wire):
    """A new pane was opened for the run."""

    kind: ClassVar[str] = "reassociated"
    run_id: str
    pane_id: str
    label: str


@frozen(kw_only=True)
class AttemptsExhausted(_Wire):
    """The run needs a pane, but its attempts are spent: nothing opened."""

    kind: ClassVar[str] = "attempts-exhausted"
    run_id: str
    attempts: int


@frozen(kw_only=True)
class StaleReleased(_Wire):
    """A pane no live run owns (``cause``) was released and closed."""

    kind: ClassVar[str] = "stale-released"
    pane_id: str
    run_id: str
    cause: JunkCause


@frozen(kw_only=True)
class StaleReleaseFailed(_Wire):
    """A pane no live run owns could not be released or closed: it stays, as debt."""

    kind: ClassVar[str] = "stale-release-failed"
    pane_id: str
    run_id: str
    reason: str
    cause: JunkCause


@frozen(kw_only=True)
class WorkspaceRemoved(_Wire):
    """An owned workspace with no run left was closed (``reason``: how, when not by this close)."""

    kind: ClassVar[str] = "workspace-removed"
    project: str
    workspace_id: str
    reason: str | None = None


@frozen(kw_only=True)
class WorkspaceRemoveFailed(_Wire):
    """An owned workspace with no run left could not be closed: it stays, as debt."""

    kind: ClassVar[str] = "workspace-remove-failed"
    project: str
    workspace_id: str
    reason: str


@frozen(kw_only=True)
class WorkspaceGroupCloseRequired(_Wire):
    """herdr 0.9 would close this owned workspace only with ``--group``, which also closes the linked
    worktree workspaces someone else made: panefleet never sends it, so the workspace stays, as debt."""

    kind: ClassVar[str] = "workspace-group-close-required"
    project: str
    workspace_id: str
    reason: str


@frozen(kw_only=True)
class WorkspaceClaimed(_Wire):
    """The workspace a ``workspace create`` of an earlier pass made (its answer lost) was found and
    marked ours (pure/herdr/fleet/owned.py ``weigh_pending``); the pass then uses or removes it."""

    kind: ClassVar[str] = "workspace-claimed"
    project: str
    workspace_id: str


@frozen(kw_only=True)
class WorkspaceCreatePending(_Wire):
    """A ``workspace create`` of an earlier pass whose outcome herdr's listing does not settle: what it
    may have made (``candidates``) is not provably ours, so nothing is touched and no new workspace is
    created for the project; the record stays, as debt, until a listing settles it."""

    kind: ClassVar[str] = "workspace-create-pending"
    project: str
    candidates: list[str]
    reason: str


ReconcileOutcome = Union[Intact, VisualUnreadable, Untracked, Reassociated, AttemptsExhausted, StaleReleased,
                         StaleReleaseFailed, WorkspaceRemoved, WorkspaceRemoveFailed, WorkspaceGroupCloseRequired,
                         WorkspaceClaimed, WorkspaceCreatePending]


def debt_of(outcome: ReconcileOutcome) -> m.Debt | None:
    """What the pass leaves behind that it owns and could not remove; the next pass retries it."""
    if isinstance(outcome, StaleReleaseFailed):
        return m.Debt(kind="herdr_pane", subject=outcome.pane_id, reason=outcome.reason,
                      detail=f"cause {outcome.cause}" + (f", run {outcome.run_id}" if outcome.run_id else ""))
    if isinstance(outcome, WorkspaceRemoveFailed):
        return m.Debt(kind="herdr_workspace", subject=outcome.workspace_id, reason=outcome.reason,
                      detail=f"project {outcome.project}")
    if isinstance(outcome, WorkspaceGroupCloseRequired):
        return m.Debt(kind="herdr_workspace", subject=outcome.workspace_id, reason=outcome.reason,
                      detail=f"project {outcome.project}; linked worktree workspaces keep it open (close them, "
                             "then the next pass removes it; panefleet never closes the group)")
    if isinstance(outcome, WorkspaceCreatePending):
        return m.Debt(kind="herdr_workspace", subject=", ".join(outcome.candidates), reason=outcome.reason,
                      detail=f"project {outcome.project}; pending workspace create (close what is not yours, "
                             "or leave it: the next pass that finds one candidate claims it)")
    return None
