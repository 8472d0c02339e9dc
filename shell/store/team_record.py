"""panefleet's own facts about a team, kept beside oh-my-codex's files so that their formats stay
untouched: ``<stateRoot>/team/<team>/panefleet.json``.

A JSON object::

    {"created_by": "panefleet",           who made the team (absent or another value: not panefleet)
     "tmux_socket": "work",               the ``tmux -L`` name of its server; null: the default server
     "project": "/home/me/project",       the folder it was made from (absolute)
     "stopped": false,                    true once the team was stopped on purpose
     "stopped_at": null,                  when (ISO 8601, UTC), null while not stopped
     "updated_at": "2026-05-01T09:30:00.000Z"}

A rewrite keeps every key it does not know, in place. oh-my-codex neither reads nor writes the file;
a team without one is treated as oh-my-codex's (docs/from-oh-my-codex.md, "Teams panefleet made").

``read_team_record`` answers None for a team without a record and raises :class:`TeamRecordError`
(naming the file) for one that cannot be read or is malformed; ``write_team_record`` changes the
fields it is given, stamps ``updated_at`` and writes the file atomically (``shell/run/fs.py``).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from enum import Enum
from pathlib import Path
from typing import Any, Final

from attrs import frozen

from shell.run import fs
from shell.store import StoreFileError, read_json_file

RECORD_FILE = "panefleet.json"
CREATED_BY_PANEFLEET = "panefleet"
KEYS = ("created_by", "tmux_socket", "project", "stopped", "stopped_at", "updated_at")  # in a new record's order
SOCKET_RE = re.compile(r"[A-Za-z0-9_.-]{1,100}")  # a tmux -L name (shell/cli/args.py socket_name)


class TeamRecordError(StoreFileError):
    """The record cannot be read, is malformed, or cannot be written."""


@frozen
class TeamRecord:
    path: str                      # the record's file
    created_by: str | None
    tmux_socket: str | None        # None: the default tmux server
    project: str | None
    stopped: bool
    stopped_at: str | None
    updated_at: str | None

    @property
    def made_by_panefleet(self) -> bool:
        return self.created_by == CREATED_BY_PANEFLEET


class _Keep(Enum):
    KEEP = "keep"


KEEP: Final = _Keep.KEEP  # a field ``write_team_record`` is not asked to change


def record_path(team_dir: str | Path) -> Path:
    return Path(team_dir) / RECORD_FILE


def now_iso() -> str:
    moment = _dt.datetime.now(_dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _check(raw: object, path: Path) -> TeamRecord:
    if not isinstance(raw, dict):
        raise TeamRecordError(path, "must be a JSON object")
    for key in ("created_by", "project", "stopped_at", "updated_at"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise TeamRecordError(path, f"field {key}: must be a string or null")
    socket = raw.get("tmux_socket")
    if socket is not None and (not isinstance(socket, str) or SOCKET_RE.fullmatch(socket) is None):
        raise TeamRecordError(path, "field tmux_socket: must be a tmux -L name (letters, digits, '_', '.', '-') "
                                    "or null")
    if raw.get("stopped") is not None and not isinstance(raw["stopped"], bool):
        raise TeamRecordError(path, "field stopped: must be true or false")
    return TeamRecord(path=str(path), created_by=raw.get("created_by"), tmux_socket=socket,
                      project=raw.get("project"), stopped=raw.get("stopped") is True,
                      stopped_at=raw.get("stopped_at"), updated_at=raw.get("updated_at"))


def _load(path: Path) -> dict[str, Any] | None:
    raw = read_json_file(path, TeamRecordError)
    if raw is None:
        return None
    _check(raw, path)
    assert isinstance(raw, dict)  # _check refuses anything else
    return dict(raw)


def read_team_record(team_dir: str | Path) -> TeamRecord | None:
    """The record of the team whose folder is ``team_dir``; None when it has none."""
    path = record_path(team_dir)
    raw = _load(path)
    return None if raw is None else _check(raw, path)


def write_team_record(
    team_dir: str | Path,
    *,
    created_by: str | None | _Keep = KEEP,
    tmux_socket: str | None | _Keep = KEEP,
    project: str | None | _Keep = KEEP,
    stopped: bool | _Keep = KEEP,
) -> TeamRecord:
    """Change the fields given (the others, and keys panefleet does not know, stay as they are), stamp
    ``updated_at`` and write the record atomically; the record as written. ``stopped=True`` stamps
    ``stopped_at`` (kept when the team was stopped already), ``stopped=False`` clears it. The team's
    folder must exist: a record never makes one."""
    folder = Path(team_dir)
    path = record_path(folder)
    if not folder.is_dir():
        raise TeamRecordError(path, "the team's folder does not exist")
    raw = _load(path) or {}
    now = now_iso()
    fresh = not raw
    changes: dict[str, Any] = {key: value for key, value in (("created_by", created_by), ("tmux_socket", tmux_socket),
                                                              ("project", project), ("stopped", stopped))
                               if value is not KEEP}
    if "stopped" in changes:
        if changes["stopped"] is True:
            changes["stopped_at"] = raw.get("stopped_at") if raw.get("stopped") is True and raw.get("stopped_at") else now
        else:
            changes["stopped_at"] = None
    changes["updated_at"] = now
    if fresh:
        raw = {**dict.fromkeys(KEYS), "stopped": False}
    raw.update(changes)
    record = _check(raw, path)  # what is written is what a read accepts
    try:
        fs.atomic_write(path, (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as exc:
        raise TeamRecordError(path, f"cannot be written ({exc.strerror or exc})") from None
    return record
