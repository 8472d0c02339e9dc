"""tmux pane proofs: the pane-table parser, verdicts, owner tags and the teardown primitive.

The rules follow oh-my-codex 0.20.3 (``docs/tmux-proofs.md`` says where each proof is taken,
``docs/ports.md`` is the normative statement):

* one proof = one global ``list-panes -a`` snapshot; any bad row poisons the whole snapshot;
* verdicts ``live`` (with pid) / ``gone`` (``dead``, ``absent``) / ``unavailable``
  (``malformed_snapshot``, ``query_failed``, ``invalid_pane_id``);
* a pane is only ever mutated after ``L, S, L``: a proof, the owner tag, a second proof, with the
  pid pinned when the pane was created — ``pure/tmux/owned.py``, where every step that changes a
  pane or reads its screen is built from the token such a proof returns.

Every answer is a stable code plus structured fields (the ``problem`` classes below). Prose is
derived from them by :func:`describe` and is informative only: no decision depends on it.
"""

from __future__ import annotations

from pure.model import MAX_SAFE_INTEGER
from pure.tmux.facts import split_rows
from pure.tmux.owned import (
    HISTORY_LINES,
    NEW_PANE_FORMAT,
    SUBMIT_KEY,
    TRANSCRIPT_NOTE,
    Claim,
    ClaimedPane,
    CreatedPane,
    OwnedPane,
    Pin,
    Proof,
    ProofKind,
    ProofStage,
    SeenPane,
    answered_pane,
    capture_step,
    kill_pane_step,
    leader_window_step,
    locate_step,
    new_session_step,
    new_window_step,
    pin_new_pane,
    pin_owned,
    prove_claimable,
    prove_created,
    prove_owned,
    remain_on_exit_step,
    scrollback_step,
    seen_owned,
    send_keys_step,
    split_step,
    tag_step,
    untag_step,
)
from pure.tmux.parse import (
    DIGITS,
    LIST_PANES,
    OWNER_OPTION,
    PANE_FORMAT,
    PANE_ID_RE,
    SERVER_NOT_RUNNING,
    WHITESPACE,
    InvalidPaneId,
    KillFailed,
    MalformedSnapshot,
    OwnerProblem,
    PaneRow,
    PidMismatch,
    PidUnpinned,
    ProofProblem,
    QueryFailed,
    ServerReplaced,
    StillLive,
    Verdict,
    VerdictReason,
    VerdictStatus,
    first_new_pane,
    invalid_target,
    is_pane_id,
    is_positive_pid,
    on_server,
    parse_pane_table,
    parse_pid,
    pid_problem,
    server_not_running,
    server_of,
    trim,
    verdict_from_answer,
)
from pure.tmux.proof import (
    OwnerAnswer,
    OwnerKind,
    list_panes_step,
    owner_from_answer,
    prove,
    read_owner,
    show_owner_step,
    tmux,
)
from pure.tmux.prose import describe
from pure.tmux.teardown import (
    Excluded,
    ExclusionRule,
    OwnerNotAuthorized,
    PaneFate,
    PaneProblem,
    PaneReason,
    PaneResult,
    Stage,
    TeardownReport,
    TeardownRequest,
    TeardownResult,
    TeardownTarget,
    exclusion_rule,
    kill_backoff_ms,
    kill_settle_ms,
    teardown,
    teardown_program,
)

__all__ = ["Claim", "ClaimedPane", "CreatedPane", "DIGITS", "Excluded", "ExclusionRule", "HISTORY_LINES", "InvalidPaneId", "KillFailed", "LIST_PANES", "MAX_SAFE_INTEGER", "MalformedSnapshot", "NEW_PANE_FORMAT", "OWNER_OPTION", "OwnedPane", "OwnerAnswer", "OwnerKind", "OwnerNotAuthorized", "OwnerProblem", "PANE_FORMAT", "PANE_ID_RE", "PaneFate", "PaneProblem", "PaneReason", "PaneResult", "PaneRow", "PidMismatch", "PidUnpinned", "Pin", "Proof", "ProofKind", "ProofProblem", "ProofStage", "SERVER_NOT_RUNNING", "SUBMIT_KEY", "SeenPane", "ServerReplaced", "TRANSCRIPT_NOTE", "QueryFailed", "Stage", "StillLive", "TeardownReport", "TeardownRequest", "TeardownResult", "TeardownTarget", "Verdict", "VerdictReason", "VerdictStatus", "WHITESPACE", "answered_pane", "capture_step", "describe", "exclusion_rule", "first_new_pane", "invalid_target", "is_pane_id", "is_positive_pid", "kill_backoff_ms", "kill_pane_step", "kill_settle_ms", "leader_window_step", "locate_step", "list_panes_step", "new_session_step", "new_window_step", "on_server", "owner_from_answer", "parse_pane_table", "parse_pid", "pid_problem", "pin_new_pane", "pin_owned", "prove", "prove_claimable", "prove_created", "prove_owned", "read_owner", "remain_on_exit_step", "scrollback_step", "seen_owned", "send_keys_step", "server_not_running", "server_of", "show_owner_step", "split_rows", "split_step", "tag_step", "teardown", "teardown_program", "tmux", "trim", "untag_step", "verdict_from_answer"]
