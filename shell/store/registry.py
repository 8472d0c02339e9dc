"""The registry of the teams panefleet made or applied, so that ``panefleet list`` finds them from any
folder: ``teams.json`` in panefleet's state folder (``$PANEFLEET_STATE_DIR``, else
``$XDG_STATE_HOME/panefleet``, else ``~/.local/state/panefleet``; ``shell/run/loop.py`` ``state_dir``).

A JSON object ``{"version": 1, "teams": [entry, …]}``, one entry per team, keyed by (state root, team)::

    {"team": "alpha", "project": "/home/me/project", "state_root": "/home/me/project/.omx/state",
     "tmux_socket": "work" | null, "registered_at": "2026-05-01T09:30:00.000Z"}

A team that lives on another machine (docs/hosts.md, "A team on a host") also has ``"host"`` (its OpenSSH
destination; ``project`` and ``state_root`` are paths there) and what the host was when the team was made:
``"machine_id"`` and ``"host_keys"`` (the fingerprints ``known_hosts`` held for it), checked at each run.

Several processes may register at once: every change is made under a lock directory beside the file
(``teams.json.lock``, ``shell/run/fs.py`` ``acquire_lock``) and written atomically; reads take no lock.
Keys it does not know, in the file or in an entry, are kept. A file that cannot be read or is malformed
raises :class:`RegistryError` naming it; nothing is rewritten over it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import frozen
from returns.result import Failure

from pure.hosts import check_destination
from shell.run import fs
from shell.run.loop import state_dir
from shell.store import StoreFileError, read_json_file
from shell.store.team_record import SOCKET_RE, now_iso

REGISTRY_FILE = "teams.json"
LOCK_TIMEOUT_MS = 10_000
LOCK_RETRY_MS = 20
LOCK_STALE_MS = 30_000  # a change holds the lock for milliseconds: a holder this old has died


class RegistryError(StoreFileError):
    """The registry cannot be read, is malformed, or cannot be changed."""


@frozen
class RegisteredTeam:
    team: str
    project: str
    state_root: str
    tmux_socket: str | None
    registered_at: str
    host: str | None = None  # None: this machine
    machine_id: str = ""
    host_keys: tuple[str, ...] = ()

    @property
    def team_dir(self) -> str:
        return os.path.join(self.state_root, "team", self.team)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.host or "", self.state_root, self.team

    def gone(self) -> bool:
        """Whether the team's folder no longer exists (a team on another machine is not judged from here)."""
        return self.host is None and not os.path.isdir(self.team_dir)


def registry_path(env: Mapping[str, str] | None = None) -> Path:
    return state_dir(os.environ if env is None else env) / REGISTRY_FILE


def _entry(raw: object, where: str, path: Path) -> RegisteredTeam:
    if not isinstance(raw, dict):
        raise RegistryError(path, f"{where}: must be an object")
    for key in ("team", "project", "state_root", "registered_at"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise RegistryError(path, f"{where}.{key}: must be a non-empty string")
    socket = raw.get("tmux_socket")
    if socket is not None and (not isinstance(socket, str) or SOCKET_RE.fullmatch(socket) is None):
        raise RegistryError(path, f"{where}.tmux_socket: must be a tmux -L name or null")
    host, machine_id, keys = raw.get("host"), raw.get("machine_id", ""), raw.get("host_keys", [])
    if host is not None and (not isinstance(host, str) or isinstance(check_destination(host), Failure)):
        raise RegistryError(path, f"{where}.host: must be an OpenSSH destination or absent")
    if not isinstance(machine_id, str) or not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise RegistryError(path, f"{where}: machine_id must be a string and host_keys a list of strings")
    return RegisteredTeam(team=raw["team"], project=raw["project"], state_root=raw["state_root"],
                          tmux_socket=socket, registered_at=raw["registered_at"], host=host, machine_id=machine_id,
                          host_keys=tuple(keys))


def _load(path: Path) -> tuple[dict[str, Any], list[RegisteredTeam]]:
    """The file as parsed (an empty registry when there is none) and its entries, checked."""
    raw = read_json_file(path, RegistryError)
    if raw is None:
        return {"version": 1, "teams": []}, []
    if not isinstance(raw, dict) or not isinstance(raw.get("teams"), list):
        raise RegistryError(path, 'must be a JSON object {"version": 1, "teams": [...]}')
    return raw, [_entry(item, f"teams[{n}]", path) for n, item in enumerate(raw["teams"])]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    lock = path.with_name(path.name + ".lock")
    token = fs.owner_token()
    try:
        fs.acquire_lock(lock, timeout_ms=LOCK_TIMEOUT_MS, retry_ms=LOCK_RETRY_MS, stale_ms=LOCK_STALE_MS, token=token)
    except fs.LockTimeout as exc:
        raise RegistryError(path, f"another panefleet is changing it: {exc}") from None
    except OSError as exc:
        raise RegistryError(path, f"cannot be locked ({exc.strerror or exc})") from None
    try:
        yield
    finally:
        fs.release_lock(lock, token)


def _change(path: Path, edit: Callable[[list[Any], list[RegisteredTeam]], list[Any]]) -> None:
    """Under the lock: read, ``edit(raw entries, checked entries) -> new raw entries``, write."""
    with _locked(path):
        raw, entries = _load(path)
        raw["teams"] = edit(list(raw["teams"]), entries)
        try:
            fs.atomic_write(path, (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
        except OSError as exc:
            raise RegistryError(path, f"cannot be written ({exc.strerror or exc})") from None


def register_team(team: str, *, project: str, state_root: str, tmux_socket: str | None,
                  env: Mapping[str, str] | None = None, host: str | None = None, machine_id: str = "",
                  host_keys: tuple[str, ...] = ()) -> RegisteredTeam:
    """Add the team (or bring its entry up to date: project, tmux server, time); the entry."""
    path = registry_path(env)
    fresh: dict[str, Any] = {"team": team, "project": project, "state_root": state_root, "tmux_socket": tmux_socket,
                             "registered_at": now_iso()}
    if host is not None:
        fresh.update(host=host, machine_id=machine_id, host_keys=list(host_keys))
    made = _entry(fresh, "the new entry", path)

    def edit(raw: list[Any], entries: list[RegisteredTeam]) -> list[Any]:
        for n, entry in enumerate(entries):
            if entry.key == made.key:
                raw[n] = {**raw[n], **fresh}
                return raw
        return [*raw, fresh]

    _change(path, edit)
    return made


def registered_teams(env: Mapping[str, str] | None = None) -> list[RegisteredTeam]:
    """Every registered team, in the order registered."""
    path = registry_path(env)
    return _load(path)[1]


def prune_registry(env: Mapping[str, str] | None = None) -> list[RegisteredTeam]:
    """Remove the entries whose team folder no longer exists (judged under the lock); those removed."""
    path = registry_path(env)
    if not path.exists():
        return []
    removed: list[RegisteredTeam] = []

    def edit(raw: list[Any], entries: list[RegisteredTeam]) -> list[Any]:
        kept = []
        for item, entry in zip(raw, entries, strict=True):
            if entry.gone():
                removed.append(entry)
            else:
                kept.append(item)
        return kept

    _change(path, edit)
    return removed
