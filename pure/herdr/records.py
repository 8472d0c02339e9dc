"""The Herdr fleet's durable records and the ``Store`` step protocol that carries them.

Programs never touch the store directly: they yield ``Store(action, payload)`` steps and receive a
``JsonResult``. Actions (payload → ``value`` on success), all payload keys snake_case:

Reads (never mutate; their names start with get/list/read, so a dry run executes them for real)

* ``read.herdr.workspaces`` ``{"session": S, "projects": [P…]}`` → ``{P: [workspace_id…]}`` oldest
  first, recorded in herdr session S only; when a project has a pending ``workspace create``, also
  ``"@pending": {P: [workspace_id…]}``, the ids herdr listed just before it (``@`` is never in a
  project name).
* ``list.herdr.runs`` ``{"session": S}`` → ``[RunRecord…]`` every run of herdr session S, live and
  settled, in start order.
* ``get.herdr.run`` ``{"run_id": R}`` → ``RunRecord`` or ``null`` (run ids are unique across sessions;
  the record names its session).
* ``list.herdr.debts`` ``{"session": S}`` → ``[{"kind", "subject", "reason", "detail"}…]``: what the
  last reconcile pass of session S owned and could not close (``pure/herdr/fleet/outcomes.py``).

Writes (mutations; a dry run predicts an ok answer and writes nothing)

* ``herdr.workspace.remember`` ``{"session": S, "project": P, "workspace_id": W}`` → ``null`` (idempotent).
* ``herdr.workspace.forget`` ``{"session": S, "project": P, "workspace_id": W}`` → ``null`` (idempotent).
* ``herdr.workspace.intend`` ``{"session": S, "project": P, "listed_before": [W…]}`` → ``null``: a
  ``workspace create`` for P is about to be sent (one pending create per session and project).
* ``herdr.workspace.resolve`` ``{"session": S, "project": P}`` → ``null`` (idempotent): P's pending
  create is settled (its workspace recorded, closed, or proven never made).
* ``herdr.debt.replace`` ``{"session": S, "debts": [{"kind", "subject", "reason", "detail"}…]}`` →
  ``null``: a finished reconcile pass's debt, in place of the previous pass's (``[]``: none left).

Workspace ids are herdr's per-server ids, so every workspace record is keyed by session too. A run on a
saved machine (herdr 0.9.1 ``--machine M``) adds ``"machine": M`` (and ``"session": ""``) to every payload
that names a session, and to its ``RunRecord``; without the key a payload means this machine's herdr.
* ``herdr.run.set_pane`` ``{"run_id": R, "pane_id": X, "pane_label": L}`` → ``null``.
* ``herdr.run.clear_pane`` ``{"run_id": R}`` → ``null``.
* ``herdr.run.set_attempts`` ``{"run_id": R, "attempts": N}`` → ``null``.

A ``RunRecord`` in JSON is the unstructured attrs class below (snake_case keys, strict).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import field, frozen
from returns.result import Failure, Result, Success

from pure import wire
from pure.convert import OMIT_NONE
from pure.model import Effect, JsonResult, JsonValue, Store


@frozen(kw_only=True)
class RunRecord:
    """One run of the live run set (settled ones are kept for attribution of leftovers)."""

    run_id: str
    project: str
    issue: int
    attempt: int
    pid: int | None = None
    pane_id: str | None = None
    pane_label: str | None = None
    session_file: str | None = None
    settled: bool = False
    attempts: int = 0
    session: str = "fleet"
    # The saved herdr machine the run lives on (``herdr --machine``; session is then ""), None: this one.
    machine: str | None = field(default=None, metadata=OMIT_NONE)


def store_step(action: str, payload: Mapping[str, Any], effect: Effect | None = None) -> Store:
    """``effect``: what a write changes, stated by its caller (``pure/herdr/fleet/effects.py``)."""
    return Store(action=action, payload=JsonValue(dict(payload)), effect=effect)


def parse_runs(result: JsonResult) -> Result[tuple[RunRecord, ...], str]:
    if not result.ok:
        return Failure(f"store: {result.error or 'unknown error'}")
    value = result.value
    if not isinstance(value, list):
        return Failure("store: list.herdr.runs did not answer a list")
    out: list[RunRecord] = []
    for item in value:
        parsed = wire.structure(item, RunRecord)
        if isinstance(parsed, Failure):
            return Failure(f"store: malformed run record: {parsed.failure()}")
        out.append(parsed.unwrap())
    return Success(tuple(out))


def parse_run(result: JsonResult) -> Result[RunRecord | None, str]:
    if not result.ok:
        return Failure(f"store: {result.error or 'unknown error'}")
    value: object = result.value
    if value is None:
        return Success(None)
    parsed = wire.structure(value, RunRecord)
    if isinstance(parsed, Failure):
        return Failure(f"store: malformed run record: {parsed.failure()}")
    return Success(parsed.unwrap())


PENDING_KEY = "@pending"


def parse_pending(result: JsonResult, projects: tuple[str, ...]) -> Result[dict[str, tuple[str, ...]], str]:
    """The pending creates of ``projects`` a ``read.herdr.workspaces`` answer carries (an answer
    without ``@pending``: none), each the ids listed before it."""
    value = result.value
    pending = value.get(PENDING_KEY, {}) if isinstance(value, dict) else {}
    if not isinstance(pending, dict):
        return Failure("store: pending creates are not an object")
    out: dict[str, tuple[str, ...]] = {}
    for project in projects:
        ids = pending.get(project)
        if ids is None:
            continue
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return Failure(f"store: the pending create of {project!r} does not list workspace ids")
        out[project] = tuple(ids)
    return Success(out)


def parse_recorded(result: JsonResult, projects: tuple[str, ...]) -> Result[dict[str, tuple[str, ...]], str]:
    if not result.ok:
        return Failure(f"store: {result.error or 'unknown error'}")
    value = result.value
    if not isinstance(value, dict):
        return Failure("store: read.herdr.workspaces did not answer an object")
    out: dict[str, tuple[str, ...]] = {}
    for project in projects:
        ids = value.get(project, [])
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return Failure(f"store: recorded workspaces of {project!r} are not a list of ids")
        out[project] = tuple(ids)
    return Success(out)
