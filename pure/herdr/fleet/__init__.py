"""The Herdr worker fleet as pure generator programs (omp-conductor 0.19.7 ``fleet.ts`` semantics).

Every herdr call is a ``Run(tool="herdr")`` step, every store access a ``Store`` step; ownership is
structural (the workspace token or a store record, never a label alone) and proved in one module,
``pure/herdr/fleet/owned.py``, which alone builds the steps that change herdr. The rules and every
deliberate deviation from the seed are in ``docs/herdr-fleet.md``.
"""

from __future__ import annotations

from pure.herdr.fleet.opening import Ready, Surface, ensure_workspace, open_pane
from pure.herdr.fleet.owned import Discovery, Owned, OwnedHerdrPane, discover
from pure.herdr.fleet.programs import (
    LOCK_RETRY_MS,
    LOCK_TIMEOUT_MS,
    StatusRequest,
    ensure_program,
    open_program,
    reconcile_program,
    release_program,
    retire_program,
    status_program,
)
from pure.herdr.fleet.reconcile import attribute, reconcile
from pure.herdr.fleet.release import Released, release_orphaned
from pure.herdr.fleet.vocabulary import (
    DEFAULT_FOLLOWER,
    DEFAULT_SESSION,
    IMPLICIT_CLOSE_REASON,
    PANE_REATTEMPT_MAX,
    WORKER_PANE_SOURCE,
    WORKER_WORKSPACE_TOKEN,
    EnsureRequest,
    OpenRequest,
    ReconcileRequest,
    ReleaseRequest,
    RetireRequest,
    Tracked,
    Unavailable,
    follower_argv,
    pane_label,
    unsafe_word,
    workspace_label,
)

__all__ = ["DEFAULT_FOLLOWER", "DEFAULT_SESSION", "Discovery", "EnsureRequest", "IMPLICIT_CLOSE_REASON",
           "LOCK_RETRY_MS", "LOCK_TIMEOUT_MS", "OpenRequest", "Owned", "OwnedHerdrPane", "PANE_REATTEMPT_MAX", "Ready",
           "ReconcileRequest", "ReleaseRequest", "Released", "RetireRequest", "StatusRequest", "Surface", "Tracked",
           "Unavailable", "WORKER_PANE_SOURCE", "WORKER_WORKSPACE_TOKEN", "attribute", "discover", "ensure_program",
           "ensure_workspace", "follower_argv", "open_pane", "open_program", "pane_label", "reconcile",
           "reconcile_program", "release_orphaned", "release_program", "retire_program", "status_program",
           "unsafe_word", "workspace_label"]
