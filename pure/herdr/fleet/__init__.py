"""The Herdr worker fleet as pure generator programs (omp-conductor 0.19.7 ``fleet.ts`` semantics).

Every herdr call is a ``Run(tool="herdr")`` step, every store access a ``Store`` step; ownership is
structural (the workspace token or a store record, never a label alone). The rules and every
deliberate deviation from the seed are in ``docs/herdr-fleet.md``.
"""

from __future__ import annotations

from pure.herdr.fleet.calls import (
    apply_ownership,
    close_pane,
    discover,
    herdr,
    list_panes,
    probe,
    release_agent,
    retire_pane,
    store,
)
from pure.herdr.fleet.common import (
    DEFAULT_FOLLOWER,
    DEFAULT_SESSION,
    IMPLICIT_CLOSE_REASON,
    PANE_REATTEMPT_MAX,
    WORKER_PANE_SOURCE,
    WORKER_WORKSPACE_TOKEN,
    Discovery,
    EnsureRequest,
    OpenRequest,
    Owned,
    Ready,
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
from pure.herdr.fleet.opening import Surface, ensure_workspace, open_pane
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

__all__ = ["DEFAULT_FOLLOWER", "DEFAULT_SESSION", "Discovery", "EnsureRequest", "IMPLICIT_CLOSE_REASON", "LOCK_RETRY_MS", "LOCK_TIMEOUT_MS", "OpenRequest", "Owned", "PANE_REATTEMPT_MAX", "Ready", "ReconcileRequest", "ReleaseRequest", "Released", "RetireRequest", "StatusRequest", "Surface", "Tracked", "Unavailable", "WORKER_PANE_SOURCE", "WORKER_WORKSPACE_TOKEN", "apply_ownership", "attribute", "close_pane", "discover", "ensure_program", "ensure_workspace", "follower_argv", "herdr", "list_panes", "open_pane", "open_program", "pane_label", "probe", "reconcile", "reconcile_program", "release_agent", "release_orphaned", "release_program", "retire_pane", "retire_program", "status_program", "store", "unsafe_word", "workspace_label"]
