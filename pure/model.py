"""The one wire model: steps, observations, journals, decisions, outcomes and debt.

Every class here is a frozen attrs class whose JSON form is produced by ``pure.wire``. Tag fields
(``op`` on steps, ``kind`` on observations and decisions) are explicit data, so a port in another
language needs only the committed JSON Schema and the golden corpus.
"""

from __future__ import annotations

from typing import Any, Literal, NewType, Union

from attrs import field, frozen

FORMAT_VERSION = "1.0"
# The largest integer every JSON reader keeps exact (2^53-1): pids, counters and sizes stay within it.
MAX_SAFE_INTEGER = 2**53 - 1

# A JSON value checked structurally by the converter (null, bool, int, float, str, list, object).
JsonValue = NewType("JsonValue", object)

# The JSON object a program answers with (``Outcome.result``) or a piece of one, built key by key for
# the person or tool that reads it. Never team state: that is typed in pure/omx/records.py.
Answer = dict[str, Any]

Tool = Literal["tmux", "git", "herdr", "sh"]

# A field declared with ``metadata=OMIT_NONE`` is left out of the JSON form while it is None (and read
# as None when absent): a field added later keeps every document written before it unchanged
# (pure/convert.py applies it).
OMIT_NONE = {"wire_omit_none": True}

EffectAction = Literal["add", "change", "remove", "debt"]
EffectKind = Literal["worker", "session", "pane", "workspace", "run", "team", "config", "task", "dispatch", "events",
                     "debt", "file", "step"]


@frozen(kw_only=True)
class Effect:
    """What a mutating step changes, in the domain's words, stated where the planner builds the step:
    ``add worker-3``, ``remove pane %9: killed after proof (pid 41)``, ``change config.json: generation
    4 → 5``. Steps that change the same ``(kind, subject)`` make one line of the plan view
    (shell/cli/plan_view.py), which only groups and prints them."""

    action: EffectAction
    kind: EffectKind
    subject: str
    detail: str = ""


def effect(action: EffectAction, kind: EffectKind, subject: str, detail: str = "") -> Effect:
    return Effect(action=action, kind=kind, subject=subject, detail=detail)


def _effect() -> Any:
    return field(default=None, metadata=OMIT_NONE)


def _host() -> Any:
    """Where a step runs: an OpenSSH destination (docs/hosts.md); None, absent from its JSON form, is the
    machine that runs panefleet."""
    return field(default=None, metadata=OMIT_NONE)


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
    effect: Effect | None = _effect()
    host: str | None = _host()


@frozen(kw_only=True)
class ReadFile:
    op: Literal["read_file"] = "read_file"
    path: str
    host: str | None = _host()


@frozen(kw_only=True)
class WriteFile:
    """Atomic write: temp file + fsync + rename + parent fsync; parents created when missing."""

    op: Literal["write_file"] = "write_file"
    path: str
    content: str
    mode: int | None = None
    note: str = ""
    effect: Effect | None = _effect()
    host: str | None = _host()


@frozen(kw_only=True)
class AppendFile:
    op: Literal["append_file"] = "append_file"
    path: str
    content: str
    effect: Effect | None = _effect()
    host: str | None = _host()


@frozen(kw_only=True)
class RemovePath:
    """Remove a file, or a directory tree when ``recursive``. Absent paths succeed."""

    op: Literal["remove"] = "remove"
    path: str
    recursive: bool = False
    note: str = ""
    effect: Effect | None = _effect()
    host: str | None = _host()


@frozen(kw_only=True)
class MakeDir:
    op: Literal["mkdir"] = "mkdir"
    path: str
    exist_ok: bool = True
    effect: Effect | None = _effect()
    host: str | None = _host()


@frozen(kw_only=True)
class ListDir:
    op: Literal["list_dir"] = "list_dir"
    path: str
    host: str | None = _host()


@frozen(kw_only=True)
class Stat:
    """Answer with a Value: ``absent``, ``file``, ``dir``, ``symlink`` or ``other``; on a host that did not
    answer, ``unavailable`` (shell/run/remote.py)."""

    op: Literal["stat"] = "stat"
    path: str
    host: str | None = _host()


@frozen(kw_only=True)
class RealPath:
    op: Literal["realpath"] = "realpath"
    path: str
    host: str | None = _host()


@frozen(kw_only=True)
class AcquireLock:
    """mkdir-lock compatible with oh-my-codex lock directories; the shell polls and owns the clock."""

    op: Literal["lock"] = "lock"
    path: str
    timeout_ms: int
    retry_ms: int
    stale_ms: int = 300_000
    host: str | None = _host()


@frozen(kw_only=True)
class ReleaseLock:
    op: Literal["unlock"] = "unlock"
    path: str
    host: str | None = _host()


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
    effect: Effect | None = _effect()


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
    "canonical_cleanup_failed", "resource_cleanup_failed", "cleanup_debt_event_failed"]
# What a debt is about: ``DEBT_WORDS``. The scale-up rollback's kinds are its cleanup-debt codes, as
# oh-my-codex names them in ``scale_up_rollback_cleanup_debt:…`` (docs/scale-up.md, "Rollback").
DebtKind = Literal["pane", "tmux_pane", "stray_pane", "stray_worktree", "task_delivery", "worker_start", "cleanup",
                   "kept_worker", "herdr_pane", "herdr_workspace", RollbackDebtKind]

_KEPT_MEMBER = ("kept as a member with its record (pure/omx/kept_workers.py): `team debt reconcile` retries its "
                "removal")
_RECONCILE = "`team debt reconcile` retries it"
# The one wording of every kind of debt: what it is, and what retries it (every text output uses it).
DEBT_WORDS: dict[DebtKind, tuple[str, str]] = {
    "pane": ("a pane the teardown did not prove gone", _RECONCILE),
    "tmux_pane": ("a removed worker's pane, kept in the scale-down's debt record", _RECONCILE),
    "stray_pane": ("a pane a run that did not finish left, not proven ours (pure/omx/strays.py)", _RECONCILE),
    "stray_worktree": ("a git worktree or branch such a run was making, not proven removable", _RECONCILE),
    "task_delivery": ("a task no screen confirmed reaching its worker (pure/omx/undelivered.py)", _RECONCILE),
    "worker_start": ("a new worker whose agent did not start, removed alone: the team is smaller than asked",
                     "a scale-up adds it again"),
    "cleanup": ("the scale-down's cleanup after its commit", _RECONCILE),
    "kept_worker": ("a new worker a rolled-back scale-up kept as a member, its pane not proven gone or ours",
                    "`team debt reconcile` retries its removal as a forced scale-down of it"),
    "herdr_pane": ("an owned Herdr pane a reconcile could not close", "`herdr reconcile` retries it"),
    "herdr_workspace": ("an owned Herdr workspace a reconcile could not close", "`herdr reconcile` retries it"),
    "pane_pid_unpinned": ("a rolled-back worker's pane with no pinned pid", _KEPT_MEMBER),
    "pane_owner_unverified": ("a rolled-back worker's pane this run did not tag", _KEPT_MEMBER),
    "pane_teardown_failed": ("a rolled-back worker's pane whose kill failed", _KEPT_MEMBER),
    "pane_proof_unavailable": ("a rolled-back worker's pane whose proof failed", _KEPT_MEMBER),
    "pane_teardown_unresolved": ("a rolled-back worker's pane not proven gone", _KEPT_MEMBER),
    "pane_cleanup_exception": ("the rollback's teardown failed as a whole", _KEPT_MEMBER),
    "authoritative_dispatch_cleanup_failed": ("dispatch requests to rolled-back workers were not removed",
                                              "they name no member; nothing retries them"),
    "canonical_cleanup_failed": ("tasks or folders of rolled-back workers were not removed",
                                 "`team debt reconcile` removes the folders no member names"),
    "resource_cleanup_failed": ("worktrees, folders or scripts of rolled-back workers were not removed",
                                "`team debt reconcile` removes what no member names"),
    "cleanup_debt_event_failed": ("the leader's event naming this debt could not be appended",
                                  "the answer and the kept workers' records name it instead"),
}


def debt_words(kind: str) -> tuple[str, str]:
    """``DEBT_WORDS`` of a kind read back from text (a record, an error code); an unknown kind as it is."""
    return next((words for known, words in DEBT_WORDS.items() if known == kind), (kind, ""))


@frozen(kw_only=True)
class Debt:
    """Something panefleet could not prove safe to undo, kept instead of leaked or blindly killed."""

    kind: DebtKind
    subject: str
    reason: str
    detail: str = ""

    def sentence(self) -> str:
        """``<kind> <subject>: <reason>`` and, in ``DEBT_WORDS``'s words, what it is and what retries it."""
        what, retry = DEBT_WORDS[self.kind]
        return f"{self.kind} {self.subject}: {self.reason} ({what}; {retry})"


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

    def adding(self, key: str, report: object, debts: tuple[Debt, ...]) -> Done:
        """This answer with ``report`` under ``key`` and ``debts`` kept (status ``debt`` when there are
        any): what a sweep or a retry a command ran besides its own work found (pure/omx/strays.py)."""
        if not isinstance(self.outcome.result, dict):
            return self
        status: Status = "debt" if debts or self.outcome.status == "debt" else self.outcome.status
        return Done(outcome=Outcome(status=status, result=JsonValue({**self.outcome.result, key: report}),
                                    message=self.outcome.message), debt=self.debt + debts)


Decision = Union[Next, Done]
