"""The one wire model: steps, observations, journals, decisions, outcomes and debt.

Every class here is a frozen attrs class whose JSON form is produced by ``pure.wire``. Tag fields
(``op`` on steps, ``kind`` on observations and decisions) are explicit data, so a port in another
language needs only the committed JSON Schema and the golden corpus.
"""

from __future__ import annotations

from typing import Literal, NewType, Union

from attrs import field, frozen

FORMAT_VERSION = "1.0"
# The largest integer every JSON reader keeps exact (2^53-1): pids, counters and sizes stay within it.
MAX_SAFE_INTEGER = 2**53 - 1

# A JSON value checked structurally by the converter (null, bool, int, float, str, list, object).
JsonValue = NewType("JsonValue", object)

Tool = Literal["tmux", "git", "herdr", "sh"]


# --------------------------------------------------------------------------------------------- steps


@frozen(kw_only=True)
class Run:
    """Run one external process. ``tool`` is resolved on PATH by the shell at call time.

    For tmux the shell adds the private-server selector (``-L NAME``) itself, so plans and goldens
    are independent of which server they run against.
    """

    op: Literal["run"] = "run"
    tool: Tool
    args: tuple[str, ...]
    cwd: str | None = None
    mutates: bool = False
    note: str = ""


@frozen(kw_only=True)
class ReadFile:
    op: Literal["read_file"] = "read_file"
    path: str


@frozen(kw_only=True)
class WriteFile:
    """Atomic write: temp file + fsync + rename + parent fsync; parents created when missing."""

    op: Literal["write_file"] = "write_file"
    path: str
    content: str
    mode: int | None = None
    note: str = ""


@frozen(kw_only=True)
class AppendFile:
    op: Literal["append_file"] = "append_file"
    path: str
    content: str


@frozen(kw_only=True)
class RemovePath:
    """Remove a file, or a directory tree when ``recursive``. Absent paths succeed."""

    op: Literal["remove"] = "remove"
    path: str
    recursive: bool = False
    note: str = ""


@frozen(kw_only=True)
class MakeDir:
    op: Literal["mkdir"] = "mkdir"
    path: str
    exist_ok: bool = True


@frozen(kw_only=True)
class ListDir:
    op: Literal["list_dir"] = "list_dir"
    path: str


@frozen(kw_only=True)
class Stat:
    """Answer with a Value: ``absent``, ``file``, ``dir``, ``symlink`` or ``other``."""

    op: Literal["stat"] = "stat"
    path: str


@frozen(kw_only=True)
class RealPath:
    op: Literal["realpath"] = "realpath"
    path: str


@frozen(kw_only=True)
class AcquireLock:
    """mkdir-lock compatible with oh-my-codex lock directories; the shell polls and owns the clock."""

    op: Literal["lock"] = "lock"
    path: str
    timeout_ms: int
    retry_ms: int
    stale_ms: int = 300_000


@frozen(kw_only=True)
class ReleaseLock:
    op: Literal["unlock"] = "unlock"
    path: str


@frozen(kw_only=True)
class Sleep:
    op: Literal["sleep"] = "sleep"
    ms: int


@frozen(kw_only=True)
class Clock:
    """Ask the shell for the current time (ISO 8601, UTC, millisecond precision, ``Z``)."""

    op: Literal["now"] = "now"


@frozen(kw_only=True)
class FreshId:
    """Ask the shell for a fresh unique id (uuid4 hex)."""

    op: Literal["fresh_id"] = "fresh_id"


@frozen(kw_only=True)
class Store:
    """One operation on panefleet's durable store (the Herdr fleet records)."""

    op: Literal["store"] = "store"
    action: str
    payload: JsonValue = JsonValue({})


Step = Union[
    Run,
    ReadFile,
    WriteFile,
    AppendFile,
    RemovePath,
    MakeDir,
    ListDir,
    Stat,
    RealPath,
    AcquireLock,
    ReleaseLock,
    Sleep,
    Clock,
    FreshId,
    Store,
]

# ---------------------------------------------------------------------------------------- observations


@frozen(kw_only=True)
class Proc:
    """A finished process. ``exit_code`` is None when it could not be started or did not finish before
    its deadline (``stderr`` says why); such a call is no answer."""

    kind: Literal["proc"] = "proc"
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""


@frozen(kw_only=True)
class FileData:
    """``content`` None with ``error`` empty means the file does not exist."""

    kind: Literal["file"] = "file"
    content: str | None
    error: str = ""


@frozen(kw_only=True)
class Ack:
    kind: Literal["ack"] = "ack"
    ok: bool
    error: str = ""


@frozen(kw_only=True)
class Listing:
    kind: Literal["listing"] = "listing"
    names: tuple[str, ...] | None
    error: str = ""


@frozen(kw_only=True)
class Value:
    kind: Literal["value"] = "value"
    value: str


@frozen(kw_only=True)
class JsonResult:
    kind: Literal["json"] = "json"
    ok: bool
    value: JsonValue = JsonValue(None)
    error: str = ""


Observation = Union[Proc, FileData, Ack, Listing, Value, JsonResult]


@frozen(kw_only=True)
class Entry:
    step: Step
    observation: Observation


# ---------------------------------------------------------------------------------------- decisions

Status = Literal["ok", "debt", "refused", "error"]


RollbackDebtKind = Literal[
    "pane_pid_unpinned", "pane_owner_unverified", "pane_teardown_failed", "pane_proof_unavailable",
    "pane_teardown_unresolved", "pane_cleanup_exception", "authoritative_dispatch_cleanup_failed",
    "canonical_cleanup_failed", "resource_cleanup_failed"]
# What a debt is about. ``pane``: a pane ``tmux.teardown`` did not prove gone; ``tmux_pane``: a
# removed worker's pane kept in scale-down's debt record; ``stray_pane``: a pane a crashed run left
# that cannot be proven ours; ``stray_worktree``: a git worktree (or its new branch) such a run was
# making that cannot be removed (pure/omx/worktree.py ``remove_left``); ``task_delivery``: a trigger the agent's screen did not confirm;
# ``worker_start``: a new worker whose agent did not start, removed alone (the team is smaller than asked);
# ``cleanup``: scale-down's cleanup after the commit; ``herdr_pane`` / ``herdr_workspace``: an owned
# Herdr pane or workspace a reconcile could not close (pure/herdr/fleet/outcomes.py); the rest are
# scale-up rollback's cleanup-debt codes, as oh-my-codex names them in
# ``scale_up_rollback_cleanup_debt:…`` (docs/scale-up.md, "Rollback").
DebtKind = Literal["pane", "tmux_pane", "stray_pane", "stray_worktree", "task_delivery", "worker_start", "cleanup", "herdr_pane",
                   "herdr_workspace",
                   RollbackDebtKind]


@frozen(kw_only=True)
class Debt:
    """Something panefleet could not prove safe to undo, kept instead of leaked or blindly killed."""

    kind: DebtKind
    subject: str
    reason: str
    detail: str = ""


@frozen(kw_only=True)
class Outcome:
    """What an operation ended with.

    ``status``: ``ok``; ``debt`` (finished, but something is kept as debt); ``refused`` (nothing was
    changed); ``error`` (failed). ``result`` is the operation's JSON answer (for oh-my-codex
    operations exactly the object oh-my-codex returns); ``message`` is the error string, if any.
    """

    status: Status
    result: JsonValue = JsonValue({})
    message: str = ""


@frozen(kw_only=True)
class Next:
    kind: Literal["next"] = "next"
    steps: tuple[Step, ...]


@frozen(kw_only=True)
class Done:
    kind: Literal["done"] = "done"
    outcome: Outcome
    debt: tuple[Debt, ...] = field(default=())


Decision = Union[Next, Done]
