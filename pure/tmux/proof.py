"""Owner tags, the read-only tmux step builders, one proof (``L``) and one owner read (``S``); the steps that
need a proof are built in ``pure/tmux/owned.py``."""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from pure import model as m
from pure.program import Gen, expect
from pure.tmux.parse import (
    LIST_PANES,
    OWNER_OPTION,
    InvalidPaneId,
    OwnerProblem,
    QueryFailed,
    Verdict,
    first_new_pane,
    invalid_target,
    is_pane_id,
    trim,
    verdict_from_answer,
)
from pure.tmux.prose import describe

# ---------------------------------------------------------------------------------------- owner tag

OwnerKind = Literal["value", "missing", "error"]


@frozen(kw_only=True)
class OwnerAnswer:
    """A pane's owner tag: ``value`` (trimmed, non-empty), ``missing`` or ``error`` (``problem``)."""

    kind: OwnerKind
    value: str = ""
    problem: OwnerProblem | None = None

    @property
    def detail(self) -> str:
        return describe(self.problem)


def owner_from_answer(proc: m.Proc) -> OwnerAnswer:
    """Classify ``show-option -qv -p -t PANE @omx_team_pane_owner_id`` (docs/ports.md, "Owner tag")."""
    stderr = trim(proc.stderr)
    if proc.exit_code == 0:
        value = trim(proc.stdout)
        return OwnerAnswer(kind="value", value=value) if value else OwnerAnswer(kind="missing")
    if proc.exit_code == 1 and stderr == "":
        return OwnerAnswer(kind="missing")
    return OwnerAnswer(kind="error", problem=QueryFailed(exit_code=proc.exit_code, stderr=stderr))


# ------------------------------------------------------------------------------------- step builders


def tmux(*args: str, mutates: bool = False, note: str = "", effect: m.Effect | None = None) -> m.Run:
    return m.Run(tool="tmux", args=tuple(args), mutates=mutates, note=note, effect=effect)


def list_panes_step(note: str = "") -> m.Run:
    return tmux(*LIST_PANES, note=note)


def show_owner_step(pane_id: str, note: str = "") -> m.Run:
    return tmux("show-option", "-qv", "-p", "-t", pane_id, OWNER_OPTION, note=note)


# ------------------------------------------------------------------------------------------- proofs


def prove(pane_id: str, note: str = "") -> Gen[Verdict]:
    """One exact proof (``L``). An invalid id is refused without asking tmux. ``note`` marks the step
    (only what it is for: ``TRANSCRIPT_NOTE``, pure/tmux/owned.py)."""
    verdict, _first_new = yield from prove_listed(pane_id, note)
    return verdict


def prove_listed(pane_id: str, note: str = "") -> Gen[tuple[Verdict, int | None]]:
    """``prove``, and the lowest number a pane made after this listing can have (``first_new_pane``)."""
    if not is_pane_id(pane_id):
        return invalid_target(), None
    proc = yield from expect(list_panes_step(note), m.Proc)
    return verdict_from_answer(pane_id, proc), first_new_pane(proc)


def read_owner(pane_id: str, note: str = "") -> Gen[OwnerAnswer]:
    """Read a pane's owner tag (``S``). A target not starting with ``%`` (after trimming) is an
    error without a call."""
    if not trim(pane_id).startswith("%"):
        return OwnerAnswer(kind="error", problem=InvalidPaneId())
    proc = yield from expect(show_owner_step(pane_id, note), m.Proc)
    return owner_from_answer(proc)
