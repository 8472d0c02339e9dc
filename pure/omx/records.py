"""Team state as typed records (docs/team-state.md, "Typed records"): the fields panefleet reads, and
every other key kept.

A record is an attrs class whose fields are the keys panefleet reads, typed, plus ``source``: the JSON
object it was read from, every key in the file's order. Other tools' keys live only in ``source`` and
survive a rewrite untouched. :func:`to_json` renders a record the way oh-my-codex rewrites an object
(``{...source, ...fields}``): each key keeps its place, a field new to the object is appended in the
order the class declares it, and a field that is ``None`` stays absent when the object lacked it (an
explicit ``null`` stays ``null``). :func:`from_json` types an object that the checks in
``pure/omx/state.py`` have already found well formed; it does not check again, but a value of another
type than the field's (a check that let it through) raises instead of being converted.

Both go through one cattrs converter, so a record nested in a record (a config's workers) or in a
tuple renders and reads the same way at any depth.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs
import cattrs
from attrs import evolve, field, frozen

from pure.omx.codec import render_json

JsonObject = Mapping[str, object]  # a JSON object as parsed: keys in the file's order, values as read

R = TypeVar("R")

_converter = cattrs.Converter()


def _is_record(cls: type) -> bool:
    return attrs.has(cls) and any(a.name == "source" for a in attrs.fields(cls))


def _keyed(cls: type) -> tuple[attrs.Attribute[Any], ...]:
    return tuple(a for a in attrs.fields(cls) if a.name != "source")


# A field whose key is left out when it is None, even where the object had it (a task's released
# ``owner`` and ``claim``, as oh-my-codex writes a task).
GONE_WHEN_NONE = {"gone_when_none": True}


def _unstructure_record(record: Any) -> dict[str, object]:
    out = dict(record.source)
    for attribute in _keyed(type(record)):
        value = getattr(record, attribute.name)
        if value is None and (attribute.name not in out or attribute.metadata.get("gone_when_none")):
            out.pop(attribute.name, None)
            continue
        out[attribute.name] = _converter.unstructure(value)
    return out


def _structure_record(value: Any, cls: type) -> Any:
    if not isinstance(value, Mapping):
        raise TypeError(f"{cls.__name__} is read from a JSON object, not {type(value).__name__}")
    known = {a.name: _converter.structure(value[a.name], a.type) for a in _keyed(cls)  # type: ignore[arg-type]
             if value.get(a.name) is not None}
    return cls(**known, source=dict(value))


def _structure_object(value: Any, _: object) -> object:
    return value


def _exactly(kind: type) -> Any:
    """A hook that takes a value of exactly ``kind`` and refuses any other (cattrs would convert it)."""
    def structure(value: Any, _: object) -> Any:
        if type(value) is not kind:
            raise TypeError(f"{type(value).__name__} where the check let only {kind.__name__} through")
        return value
    return structure


_converter.register_unstructure_hook_func(_is_record, _unstructure_record)
_converter.register_structure_hook_func(_is_record, _structure_record)
_converter.register_structure_hook_func(lambda cls: cls is object, _structure_object)
for _kind in (str, int, bool):
    _converter.register_structure_hook(_kind, _exactly(_kind))


def to_json(record: object) -> dict[str, object]:
    """``record`` as the JSON object it is written as (key order as described above)."""
    rendered = _converter.unstructure(record)
    assert isinstance(rendered, dict)
    return rendered


def from_json(cls: type[R], value: JsonObject) -> R:
    """The record of type ``cls`` that the well-formed JSON object ``value`` holds."""
    return _converter.structure(value, cls)


def _source() -> JsonObject:
    return {}


# ------------------------------------------------------------------------------------------ records


@frozen(kw_only=True)
class Member:
    """One entry of a config's ``workers``: a worker of the team and where it runs. Field order is the
    order scale-up writes a new member in."""

    name: str
    index: int
    role: str | None = None
    worker_cli: str | None = None
    assigned_tasks: object = None  # written [] for a new worker, as oh-my-codex does; never read
    pid: int | None = None
    pane_id: str | None = None
    working_dir: str | None = None
    worktree_repo_root: str | None = None
    worktree_path: str | None = None
    worktree_branch: str | None = None
    worktree_detached: bool | None = None
    worktree_created: bool | None = None
    team_state_root: str | None = None
    tmux_server: str | None = None  # panefleet's: the server ``pid`` was pinned on (pure/tmux/parse.py ``on_server``)
    source: JsonObject = field(factory=_source, eq=False, repr=False)


@frozen(kw_only=True)
class Identity:
    """``workers/<worker>/identity.json``: the pane a worker was started in, as the worker reads it."""

    name: str
    index: int
    pane_id: str | None = None
    pid: int | None = None
    source: JsonObject = field(factory=_source, eq=False, repr=False)


@frozen(kw_only=True)
class Claim:
    """A task's ``claim``: who holds it, with which token, until when."""

    owner: str | None = None
    token: str | None = None
    leased_until: str | None = None
    source: JsonObject = field(factory=_source, eq=False, repr=False)

    @property
    def held(self) -> bool:
        """Whether the claim says anything: an empty object holds nothing."""
        return bool(self.source) or any(value is not None for value in (self.owner, self.token, self.leased_until))


@frozen(kw_only=True)
class Task:
    """``tasks/task-<id>.json``: the fields ``pure/omx/state.py`` ``check_task`` checks, typed. Field
    order is the order a claim appends them to a task that lacks them (``pure/omx/tasks.py``)."""

    id: str
    subject: str
    description: str
    status: str
    created_at: str
    role: str | None = None
    blocked_by: tuple[str, ...] | None = None
    depends_on: tuple[str, ...] | None = None
    version: int | None = None
    owner: str | None = field(default=None, metadata=GONE_WHEN_NONE)
    claim: Claim | None = field(default=None, metadata=GONE_WHEN_NONE)
    source: JsonObject = field(factory=_source, eq=False, repr=False)

    def normalized(self) -> Task:
        """As oh-my-codex reads a task: ``depends_on`` defaulted from ``blocked_by`` (else none),
        ``version`` at least 1."""
        depends = self.depends_on if self.depends_on is not None else self.blocked_by
        return evolve(self, depends_on=depends if depends is not None else (), version=max(1, self.version or 1))


@frozen(kw_only=True)
class DispatchRequest:
    """One entry of ``dispatch/requests.json``: a worker's trigger, queued and then how its delivery went.
    oh-my-codex checks only ``request_id`` and ``to_worker`` (``pure/omx/dispatch.py`` ``check_requests``),
    so the other fields are typed ``object``: read with a type test, written back as they were. Field
    order is the order panefleet writes a new request in (``new_request``, then its outcome)."""

    request_id: str | None = None
    kind: object = None
    team_name: object = None
    to_worker: str | None = None
    worker_index: object = None
    pane_id: object = None
    trigger_message: object = None
    intent: object = None
    inbox_correlation_key: object = None
    transport_preference: object = None
    fallback_allowed: object = None
    status: object = None
    attempt_count: object = None
    created_at: object = None
    updated_at: object = None
    notified_at: object = None
    delivered_at: object = None
    failed_at: object = None
    last_reason: object = None
    source: JsonObject = field(factory=_source, eq=False, repr=False)


@frozen(kw_only=True)
class Message:
    """One message of a worker's mailbox (``pure/omx/mailbox.py``), in the order oh-my-codex writes it;
    ``notified_at`` and ``delivered_at`` are appended when first marked."""

    message_id: str | None = None
    from_worker: str | None = None
    to_worker: str | None = None
    body: str | None = None
    created_at: str | None = None
    notified_at: str | None = None
    delivered_at: str | None = None
    source: JsonObject = field(factory=_source, eq=False, repr=False)


@frozen(kw_only=True)
class Mailbox:
    """``mailbox/<worker>.json``: whose it is and its messages."""

    worker: str
    messages: tuple[Message, ...] = ()
    source: JsonObject = field(factory=_source, eq=False, repr=False)


@frozen(kw_only=True)
class TeamConfig:
    """``config.json`` (or the config oh-my-codex derives from ``manifest.v2.json``): the fields
    ``pure/omx/state.py`` ``validate_config`` checks, typed. Keys it does not check are left in
    ``source`` (``task``, ``created_at``, ``policy`` …) or typed ``object`` where a program passes them on."""

    name: str
    workers: tuple[Member, ...] = ()
    worker_count: int | None = None
    max_workers: int | None = None
    tmux_session: str | None = None
    next_task_id: int | None = None
    leader_cwd: str | None = None
    team_state_root: str | None = None
    workspace_mode: str | None = None
    worktree_mode: object = None  # oh-my-codex's {enabled, detached, name}, read by pure/omx/worktree.py
    leader_pane_id: str | None = None
    leader_pane_pid: int | None = None
    leader_tmux_server: str | None = None  # panefleet's: the server the leader's pid was pinned on
    hud_pane_pid: int | None = None
    hud_pane_id: str | None = None
    tmux_pane_owner_id: str | None = None
    next_worker_index: int | None = None
    config_generation: int | None = None
    worker_cli: str | None = None
    source: JsonObject = field(factory=_source, eq=False, repr=False)

    @property
    def generation(self) -> int:
        """``config_generation``, 0 when unset (``pure/omx/state.py`` ``validate_config`` refuses a bad one)."""
        return self.config_generation or 0

    @property
    def created_at(self) -> str | None:
        """``created_at`` when it is text: it is not checked on read, and any other value reads as unknown."""
        value = self.source.get("created_at")
        return value if isinstance(value, str) else None


@frozen(kw_only=True)
class ConfigPatch:
    """What a save writes over ``config.json`` and ``manifest.v2.json`` in place
    (``pure/omx/scale_up/config.py`` ``save_config``): each field that is not None replaces its key, a
    key new to the file appended in the order declared here. ``workers`` are the members as written."""

    workers: tuple[JsonObject, ...] | None = None
    worker_count: int | None = None
    next_worker_index: int | None = None
    next_task_id: int | None = None
    worktree_mode: object = None
    leader_pane_id: str | None = None
    leader_pane_pid: int | None = None
    leader_tmux_server: str | None = None

    def items(self) -> list[tuple[str, object]]:
        """The keys it writes and their JSON values, in order."""
        pairs = ((a.name, getattr(self, a.name)) for a in attrs.fields(ConfigPatch))
        return [(key, list(value) if isinstance(value, tuple) else value) for key, value in pairs if value is not None]


def patch_json(text: str, patch: ConfigPatch) -> str:
    """``patch`` written over the JSON object ``text`` in place (key order kept, new keys appended), as
    oh-my-codex rewrites ``manifest.v2.json``; the keys the patch names are all it touches."""
    value = json.loads(text)
    value.update(patch.items())
    return render_json(value)


def membership(members: tuple[Member, ...], next_index: int) -> ConfigPatch:
    """The patch of a membership change: the members, their count and the next worker index."""
    return ConfigPatch(workers=tuple(to_json(member) for member in members), worker_count=len(members),
                       next_worker_index=next_index)


for _record in (Member, Identity, Claim, Task, DispatchRequest, Message, Mailbox, TeamConfig, ConfigPatch):
    attrs.resolve_types(_record)  # field types from their annotations' text, for the converter
