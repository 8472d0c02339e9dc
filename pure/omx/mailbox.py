"""A worker's mailbox as oh-my-codex 0.20.3 records a direct message (``sendDirectMessage``, runtime
bridge off or unavailable: its ``legacy-json`` path, the one every install without an ``omx-runtime``
binary takes).

What one message leaves on disk, in this order:

1. The mailbox ``<state_root>/team/<team>/mailbox/<worker>.json`` (:meth:`TeamPaths.mailbox_file`),
   rewritten whole under the mailbox lock (``mailbox/.lock-<worker>``) as ``JSON.stringify(x, null,
   2)`` with no trailing newline::

       {"worker": "<worker>",
        "messages": [{"message_id": "<uuid>", "from_worker": "leader-fixed", "to_worker": "<worker>",
                      "body": "<text>", "created_at": "<ISO>"}, ...]}

   ``notified_at`` / ``delivered_at`` are appended to a message's keys when first marked (normally
   notified, then delivered). A missing file is an empty mailbox.
2. One line in the team's events file ``<team dir>/events/events.ndjson`` (:func:`received_event`).
3. One line in each delivery log (:func:`delivery_log_paths`, :func:`created_log_line`).

A send whose sender, recipient and body equal those of a message not yet delivered, created since
the team was (``created_at`` of the team config), is not recorded again: that message stands for it,
and nothing is written (:class:`Recorded`).

Where oh-my-codex reads a mailbox it cannot use — not JSON, not an object, another worker's, or
``messages`` not an array — as empty and overwrites it, panefleet refuses with a :class:`StateError`
naming the file: a send never destroys messages. So does a message that is not an object or has a
field of the wrong JSON type. Top-level keys oh-my-codex does not write survive a rewrite, after
``worker`` and ``messages`` (oh-my-codex drops them).

Lines (events, delivery logs) are ``JSON.stringify(x)`` plus ``"\\n"`` (:func:`render_line`).
Timestamps are ``toISOString()`` text (UTC, milliseconds, ``Z``) as panefleet's Clock gives them.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from typing import Literal

from attrs import evolve, frozen
from returns.result import Failure, Result, Success

from pure.omx.codec import StateError, parse_object, render_json
from pure.omx.records import Mailbox, Message, from_json, to_json
from pure.omx.state import TeamPaths

MESSAGE_STRINGS = ("message_id", "from_worker", "to_worker", "body", "created_at")
MARKS = ("notified_at", "delivered_at")
TRANSPORT = "legacy-json"  # how oh-my-codex's log names a message written to the mailbox file itself
MAILBOX_SOURCE = "team.state.mailbox"
SEND_SOURCE = "panefleet.send"


def mailbox_path(paths: TeamPaths, worker: str) -> str:
    return paths.mailbox_file(worker)


def new_message(*, message_id: str, from_worker: str, to_worker: str, body: str, now: str) -> Message:
    """A mailbox message as oh-my-codex creates it: these five fields, in this order."""
    return Message(message_id=message_id, from_worker=from_worker, to_worker=to_worker, body=body, created_at=now)


# ------------------------------------------------------------------------------------- reading


def _check_message(message: object, where: str, file: str) -> StateError | None:
    if not isinstance(message, dict):
        return StateError(file, where, "must be an object")
    for key in MESSAGE_STRINGS:
        if message.get(key) is not None and not isinstance(message[key], str):
            return StateError(file, f"{where}.{key}", "must be a string")
    for key in MARKS:
        if message.get(key) is not None and not isinstance(message[key], str):
            return StateError(file, f"{where}.{key}", "must be a string or null")
    return None


def read_mailbox(text: str | None, file: str, worker: str | None) -> Result[Mailbox, StateError]:
    """The mailbox ``text`` holds (``None``: absent, an empty mailbox for ``worker``), checked: an object
    whose ``worker`` is ``worker`` (any string when ``worker`` is None) and whose ``messages`` is an
    array of message objects with string fields."""
    if text is None:
        if worker is None:
            return Failure(StateError(file, "", "missing"))
        return Success(Mailbox(worker=worker))
    parsed = parse_object(text, file)
    if isinstance(parsed, Failure):
        return parsed
    mailbox = parsed.unwrap()
    owner = mailbox.get("worker")
    if not isinstance(owner, str) or (worker is not None and owner != worker):
        expected = repr(worker) if worker is not None else "a worker name"
        return Failure(StateError(file, "worker", f"must be {expected}, got {json.dumps(owner)}"))
    messages = mailbox.get("messages")
    if not isinstance(messages, list):
        return Failure(StateError(file, "messages", "must be an array"))
    for position, message in enumerate(messages):
        problem = _check_message(message, f"messages[{position}]", file)
        if problem is not None:
            return Failure(problem)
    return Success(from_json(Mailbox, mailbox))


def render_mailbox(mailbox: Mailbox) -> str:
    """``worker`` and ``messages`` first, as oh-my-codex writes them, then any other top-level key."""
    rendered = to_json(mailbox)
    ordered = {"worker": rendered["worker"], "messages": rendered["messages"]}
    ordered.update((key, value) for key, value in rendered.items() if key not in ordered)
    return render_json(ordered)


# --------------------------------------------------------------------------------- recording


@frozen
class Recorded:
    """The outcome of recording a message: the mailbox's new text, or None when an undelivered
    duplicate already stands for it (write nothing, append no event and no log line), and the
    message that now stands for the send (the new one, or that duplicate)."""

    text: str | None
    message: Message

    @property
    def created(self) -> bool:
        return self.text is not None


def with_message(existing_text: str | None, file: str, worker: str, message: Message, *,
                 team_created_at: str | None = None) -> Result[Recorded, StateError]:
    """``message`` (from :func:`new_message`) appended to ``worker``'s mailbox.

    Deduplication, as oh-my-codex: the first message with the same ``from_worker``, ``to_worker`` and
    ``body`` that has no ``delivered_at`` and was created at or after ``team_created_at`` is returned
    instead and nothing is written. A ``team_created_at`` that is None or not a date lets every message
    count; a message whose ``created_at`` is not a date never counts (:func:`epoch_ms`)."""
    read = read_mailbox(existing_text, file, worker)
    if isinstance(read, Failure):
        return Failure(read.failure())
    mailbox = read.unwrap()
    since = epoch_ms(team_created_at) if isinstance(team_created_at, str) else None

    def current(candidate: Message) -> bool:
        if since is None:
            return True
        stamp = epoch_ms(candidate.created_at) if candidate.created_at is not None else None
        return stamp is not None and stamp >= since

    for candidate in mailbox.messages:
        if ((candidate.from_worker, candidate.to_worker, candidate.body) == (message.from_worker, message.to_worker,
                                                                              message.body)
                and not candidate.delivered_at and current(candidate)):
            return Success(Recorded(None, candidate))
    updated = evolve(mailbox, messages=(*mailbox.messages, message))
    return Success(Recorded(render_mailbox(updated), message))


Mark = Literal["notified_at", "delivered_at"]


def _marked(text: str | None, file: str, worker: str | None, message_id: str, key: Mark, now: str,
            again: bool) -> Result[str | None, StateError]:
    if text is None:
        return Success(None)
    read = read_mailbox(text, file, worker)
    if isinstance(read, Failure):
        return Failure(read.failure())
    mailbox = read.unwrap()
    message = next((m for m in mailbox.messages if m.message_id == message_id), None)
    if message is None or (not again and (message.delivered_at if key == "delivered_at" else message.notified_at)):
        return Success(None)
    # a key already present keeps its place, as in JavaScript
    marked = evolve(message, delivered_at=now) if key == "delivered_at" else evolve(message, notified_at=now)
    return Success(render_mailbox(evolve(mailbox, messages=tuple(marked if m is message else m
                                                                  for m in mailbox.messages))))


def mark_notified(text: str | None, file: str, message_id: str, now: str, *,
                  worker: str | None = None) -> Result[str | None, StateError]:
    """The mailbox with the message's ``notified_at`` set to ``now`` — every time, as oh-my-codex
    (a later notification overwrites it); None when the file or the message is absent (write
    nothing). oh-my-codex marks a message notified once its trigger reached the worker's pane."""
    return _marked(text, file, worker, message_id, "notified_at", now, again=True)


def mark_delivered(text: str | None, file: str, message_id: str, now: str, *,
                   worker: str | None = None) -> Result[str | None, StateError]:
    """The mailbox with the message's ``delivered_at`` set to ``now``, and only the first time; None
    when the message is absent or already delivered (write nothing, log nothing). In oh-my-codex the
    worker marks delivery (``omx team api mailbox-mark-delivered``) once it has read the message;
    each change is logged with :func:`delivered_log_line`."""
    return _marked(text, file, worker, message_id, "delivered_at", now, again=False)


# ----------------------------------------------------------------------------- events and logs


def received_event(*, team: str, worker: str, message_id: str, event_id: str, now: str) -> dict[str, str]:
    """The line appended to ``TeamPaths.events`` when a message is created (not for a duplicate)."""
    return {"type": "message_received", "worker": worker, "message_id": message_id, "event_id": event_id,
            "team": team, "created_at": now}


def _log(now: str, **fields: str) -> dict[str, str]:
    return {"timestamp": now, "kind": "team_delivery", **fields}


def created_log_line(*, team: str, message_id: str, from_worker: str, to_worker: str, now: str) -> dict[str, str]:
    """The delivery-log line for a message created (not for a duplicate)."""
    return _log(now, event="mailbox_created", source=MAILBOX_SOURCE, team=team, message_id=message_id,
                from_worker=from_worker, to_worker=to_worker, transport=TRANSPORT, result="created")


def delivered_log_line(*, team: str, worker: str, message_id: str, now: str) -> dict[str, str]:
    """The delivery-log line for a message :func:`mark_delivered` changed."""
    return _log(now, event="delivered", source=MAILBOX_SOURCE, team=team, message_id=message_id, to_worker=worker,
                transport=TRANSPORT, result="updated")


def dispatch_result_line(*, team: str, worker: str, message_id: str, now: str, result: str, reason: str,
                         source: str = SEND_SOURCE, transport: str = "send-keys") -> dict[str, str]:
    """The delivery-log line for the message typed into the worker's pane: the shape of oh-my-codex's
    runtime ``dispatch_result`` line (``result`` ``confirmed`` or ``failed``), without the
    ``request_id`` and ``intent`` of a dispatch request panefleet does not queue."""
    return _log(now, event="dispatch_result", source=source, team=team, message_id=message_id, to_worker=worker,
                transport=transport, result=result, reason=reason)


_SURROGATE = re.compile("[\ud800-\udfff]")


def render_line(value: Mapping[str, object]) -> str:
    """``JSON.stringify(value)`` and a newline: compact, non-ASCII kept, a lone surrogate escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text) + "\n"


def _omx_root(cwd: str, env: Mapping[str, str]) -> str:
    for key in ("OMX_ROOT", "OMX_STATE_ROOT"):
        value = env.get(key, "").strip()
        if value:
            return posixpath.join(posixpath.normpath(posixpath.join(cwd, value)), ".omx")
    return posixpath.join(posixpath.normpath(cwd), ".omx")


def delivery_log_paths(cwd: str, env: Mapping[str, str], now: str, *, local_team_state: bool) -> tuple[str, ...]:
    """The delivery logs a line dated ``now`` goes to: ``<omx root>/logs/team-delivery-<UTC date>.jsonl``,
    the omx root being ``<OMX_ROOT or OMX_STATE_ROOT>/.omx`` (relative to ``cwd``, which oh-my-codex
    takes from its process) or ``<cwd>/.omx``; and ``<cwd>/.omx/logs/…`` too when that is another file
    and ``<cwd>/.omx/state/team`` exists (``local_team_state``). oh-my-codex appends best effort."""
    name = f"team-delivery-{now[:10]}.jsonl"
    primary = posixpath.join(_omx_root(cwd, env), "logs", name)
    local = posixpath.join(posixpath.normpath(cwd), ".omx", "logs", name)
    return (primary, local) if local_team_state and local != primary else (primary,)


# -------------------------------------------------------------------------------------- dates

_DATE = re.compile(r"([+-]\d{6}|\d{4})(?:-(\d\d)(?:-(\d\d))?)?"
                   r"(?:[Tt ](\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?([Zz]|[+-]\d\d:?\d\d)?)?", re.ASCII)


def _days(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date; a day past the month's end rolls over."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def epoch_ms(text: str) -> int | None:
    """``Date.parse(text)`` for the ISO forms V8 reads (``YYYY[-MM[-DD]][THH:mm[:ss[.f]]][Z|±HH:mm]``,
    ``±YYYYYY`` years, ``t``/space separator, lower-case ``z``, hour 24 at midnight); None for what is
    not such a date. V8 also reads other text (``Mon, 01 Jan 2024 …``); that is None here. A time
    without an offset is local in V8; panefleet has no zone and reads it as UTC."""
    found = _DATE.fullmatch(text)
    if found is None or found.group(1) == "-000000":
        return None
    year_text, month_text, day_text, hour_text, minute_text, second_text, fraction, offset = found.groups()
    month, day = int(month_text or 1), int(day_text or 1)
    hour, minute, second = int(hour_text or 0), int(minute_text or 0), int(second_text or 0)
    millis = int((fraction or "0")[:3].ljust(3, "0"))
    if hour_text is not None and day_text is None:
        return None  # a time needs a full date
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return None
    shift = 0
    if offset is not None and offset not in ("Z", "z"):
        digits = offset[1:].replace(":", "")
        shift = (int(digits[:2]) * 60 + int(digits[2:])) * 60000 * (1 if offset[0] == "+" else -1)
    moment = ((_days(int(year_text), month, day) * 24 + hour) * 60 + minute) * 60000 + second * 1000 + millis
    return moment - shift
