"""The fleet's vocabulary, which every program of it speaks: the herdr server its calls go to
(``Target``), the labels and argv rules, the requests, the small results."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from attrs import field, frozen

from pure.convert import OMIT_NONE
from pure.model import Debt, Done, JsonValue, Outcome, Status

WORKER_PANE_SOURCE = "panefleet"
WORKER_WORKSPACE_TOKEN = "conductor_workers"
PANE_REATTEMPT_MAX = 3
DEFAULT_SESSION = "fleet"
DEFAULT_FOLLOWER: tuple[str, ...] = ("panefleet",)
IMPLICIT_CLOSE_REASON = "herdr closed it with its last pane"

_SAFE_WORD = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


def workspace_label(project: str) -> str:
    return f"{project}-workers"


def pane_label(project: str, issue: int, attempt: int, run_id: str) -> str:
    return f"worker-{project}-{issue}-a{attempt}-{run_id[:8]}"


def follower_argv(follower: Sequence[str], run_id: str) -> tuple[str, ...]:
    return (*follower, "herdr", "follow", run_id)


def unsafe_word(argv: Sequence[str]) -> str | None:
    """The first word herdr's unquoted ``pane run`` join (or its ``--session`` strip) would mangle."""
    for word in argv:
        if not _SAFE_WORD.match(word) or word == "--" or any(
            word == flag or word.startswith(f"{flag}=") for flag in ("--session", "--machine")
        ):
            return word
    return None


@frozen
class Target:
    """The herdr server a program's calls go to: a session of the herdr here (``--session S``), or a
    saved machine (herdr 0.9.1 ``--machine M``: herdr's own SSH transport to that machine's server,
    which takes no ``--session``; ``session`` is then ``""``). The store keys records by both."""

    session: str = DEFAULT_SESSION
    machine: str | None = None

    def argv(self) -> tuple[str, ...]:
        """What leads every herdr call's argv (built once, ``pure/herdr/fleet/calls.py`` ``herdr_step``)."""
        return ("--session", self.session) if self.machine is None else ("--machine", self.machine)

    def keys(self) -> dict[str, str]:
        """The store payload keys that name this target (``machine`` only when there is one)."""
        return {"session": self.session} if self.machine is None else {"session": "", "machine": self.machine}

    def describe(self) -> str:
        return f"herdr session {self.session!r}" if self.machine is None else f"herdr machine {self.machine!r}"


def target_of(session: str, machine: str | None) -> Target:
    return Target(session) if machine is None else Target("", machine)


# ------------------------------------------------------------------------------------------ requests


@frozen(kw_only=True)
class EnsureRequest:
    session: str = DEFAULT_SESSION
    machine: str | None = field(default=None, metadata=OMIT_NONE)
    project: str


@frozen(kw_only=True)
class OpenRequest:
    session: str = DEFAULT_SESSION
    machine: str | None = field(default=None, metadata=OMIT_NONE)
    run_id: str
    follower: tuple[str, ...] = DEFAULT_FOLLOWER
    lock_path: str | None = None


@frozen(kw_only=True)
class RetireRequest:
    session: str = DEFAULT_SESSION
    machine: str | None = field(default=None, metadata=OMIT_NONE)
    run_id: str
    lock_path: str | None = None


@frozen(kw_only=True)
class ReleaseRequest:
    """``releaseOrphanedWorkerPane`` on explicit identity (the store-free form of retire)."""

    session: str = DEFAULT_SESSION
    machine: str | None = field(default=None, metadata=OMIT_NONE)
    pane_id: str | None = None
    pane_label: str | None = None
    run_id: str | None = None
    project: str | None = None


@frozen(kw_only=True)
class ReconcileRequest:
    session: str = DEFAULT_SESSION
    machine: str | None = field(default=None, metadata=OMIT_NONE)
    managed: tuple[str, ...] = ()
    max_attempts: int = PANE_REATTEMPT_MAX
    follower: tuple[str, ...] = DEFAULT_FOLLOWER
    lock_path: str | None = None


# ------------------------------------------------------------------------------------ small results


@frozen
class Tracked:
    pane_id: str
    label: str
    pid: int
    workspace_id: str


@frozen
class Unavailable:
    reason: str
    phase: Literal["split"] | None = None
    # What this attempt may have left in herdr (workspace or pane ids, or a description when herdr's
    # answer did not say which): empty only when the attempt proved it left nothing behind.
    residue: tuple[str, ...] = ()


def json_value(value: object) -> JsonValue:
    return JsonValue(value)


def done_with(status: Status, result: Mapping[str, Any], message: str = "", debt: tuple[Debt, ...] = ()) -> Done:
    return Done(outcome=Outcome(status=status, result=json_value(dict(result)), message=message), debt=debt)


def opened_json(opened: Tracked | Unavailable) -> dict[str, Any]:
    if isinstance(opened, Tracked):
        return {
            "kind": "tracked",
            "paneId": opened.pane_id,
            "label": opened.label,
            "pid": opened.pid,
            "workspaceId": opened.workspace_id,
        }
    out: dict[str, Any] = {"kind": "unavailable", "reason": opened.reason}
    if opened.phase is not None:
        out["phase"] = opened.phase
    if opened.residue:
        out["residue"] = list(opened.residue)
    return out
