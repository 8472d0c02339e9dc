"""Where a team lives, found once for every team command (``cli.py`` calls :func:`prepare` before the
command's handler runs; ``team init`` excepted, it makes a team):

* **Its folder.** The team is looked for in ``.omx/state/team/<team>/`` of the folder given (``--cwd``,
  default ``.``) and of each folder above it; the nearest one that has it is the folder the command
  works on (its request's ``cwd``). ``OMX_TEAM_STATE_ROOT``, ``OMX_ROOT`` and ``OMX_STATE_ROOT`` name
  the state root themselves: with one of them set nothing is searched. A team found nowhere leaves
  the folder given, and the planner's "not found" names the folders searched (``shell/cli/explain.py``).
* **Its tmux server.** Without ``--tmux-socket`` and ``PANEFLEET_TMUX_SOCKET``, the server its record
  names (``shell/store/team_record.py``); either of those still wins, with a note naming both when they
  differ (:func:`tmux_socket`).
* **Who made it.** A team whose record says panefleet made it scales without
  ``OMX_TEAM_SCALING_ENABLED`` (:func:`request_env`); oh-my-codex's teams keep the gate.
* **Its machine.** ``--host DEST`` (``team init`` and the commands that take it): the team lives on that
  machine, in the folder ``--cwd`` names there (absolute; no folder above it is searched); without
  ``--cwd``, the folder the registry recorded for it there. A team found in no folder here, but registered
  on exactly one other machine (``shell/store/registry.py``), is that one. Its programs are placed there
  (``pure/on_host.py``, :func:`placed_on`); its record is its registry entry, here (docs/hosts.md).

After a successful ``team init`` (run, or applied from a saved plan; ``shell/cli/operation.py``
``run_and_print``), :func:`remember_new_team` writes the team's record and registers it
(``shell/store/registry.py``). Nothing here imports the rest of the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from attrs import frozen

from shell.store.team_record import TeamRecord, TeamRecordError, read_team_record

if TYPE_CHECKING:
    from shell.run.hosts import HostIdentity
    from shell.store.registry import RegisteredTeam

STATE_ROOT_VARIABLES = ("OMX_TEAM_STATE_ROOT", "OMX_ROOT", "OMX_STATE_ROOT")
SCALING_GATE = "OMX_TEAM_SCALING_ENABLED"
# Team commands that work on this machine only (a terminal brought to a pane, a hook run, tasks read from the
# team's folder here, a scrollback followed): refused for a team on another machine. ``logs --follow`` too.
HERE_ONLY = frozenset({"attach", "watch", "task"})


@frozen
class TeamHome:
    team: str
    cwd: str                      # the folder the team's commands work on: where it was found, else the one given
    team_dir: str
    found: bool
    searched: tuple[str, ...]     # the folders looked in for <team>/ (each a ``…/.omx/state/team``), nearest first
    record: TeamRecord | None
    host: str | None = None       # the machine it lives on (None: this one)
    entry: RegisteredTeam | None = None  # its registry entry, the record of a team on a host

    @property
    def made_by_panefleet(self) -> bool:
        if self.host is not None:
            return self.entry is not None  # only panefleet's `team init --host` registers a team on a host
        return self.record is not None and self.record.made_by_panefleet

    @property
    def recorded_socket(self) -> str | None:
        if self.entry is not None:
            return self.entry.tmux_socket
        return self.record.tmux_socket if self.record is not None else None


def state_root_moved(env: Mapping[str, str]) -> bool:
    """Whether the environment names the state root itself (``pure/omx/state.py`` ``resolve_state_root``)."""
    return any(env.get(name, "").strip() for name in STATE_ROOT_VARIABLES)


def folders_up(start: str) -> list[str]:
    """``start`` (made absolute) and every folder above it, nearest first, ``/`` last."""
    here = os.path.abspath(start)
    folders = [here]
    while (parent := os.path.dirname(here)) != here:
        folders.append(parent)
        here = parent
    return folders


class NotOnHost(ValueError):
    """``--host`` without a folder there to work on."""


def on_host(team: str, cwd: str | None, host: str, env: Mapping[str, str]) -> TeamHome:
    """``team`` on ``host``, in ``cwd`` there (absolute), else the folder its registry entry names. Raises
    :class:`NotOnHost`."""
    from pure.omx.state import TeamPaths, resolve_state_root

    entries = [e for e in _registered(env) if e.host == host and e.team == team
               and (cwd is None or e.project == os.path.normpath(cwd))]
    if cwd is None:
        if len(entries) != 1:
            raise NotOnHost(f"team {team} is not registered on {host} (`team init --host` registers it): pass "
                            "--cwd with its folder there" if not entries else
                            f"team {team} is registered in {len(entries)} folders on {host}: pass --cwd")
        cwd = entries[0].project
    if not cwd.startswith("/"):
        raise NotOnHost(f"--cwd must be an absolute folder on {host} with --host, not {cwd!r}")
    folder = os.path.normpath(cwd)
    team_dir = TeamPaths(resolve_state_root(folder, env), team).team_dir
    return TeamHome(team, folder, team_dir, True, (os.path.dirname(team_dir),), None, host,
                    entries[0] if entries else None)


def _registered(env: Mapping[str, str]) -> list[RegisteredTeam]:
    from shell.store.registry import RegistryError, registered_teams

    try:
        return registered_teams(env)
    except RegistryError:
        return []


def locate(team: str, cwd: str, env: Mapping[str, str]) -> TeamHome:
    """Where ``team`` lives, looked for from ``cwd`` upward (or where the environment puts it), else on the
    one other machine it is registered on. Raises :class:`TeamRecordError` when the team's record is
    malformed."""
    from pure.omx.state import TEAM_NAME_RE, TeamPaths, resolve_state_root

    given = os.path.abspath(cwd)
    candidates = [given] if state_root_moved(env) or TEAM_NAME_RE.fullmatch(team) is None else folders_up(given)
    searched: list[str] = []
    for folder in candidates:
        team_dir = TeamPaths(resolve_state_root(folder, env), team).team_dir
        searched.append(os.path.dirname(team_dir))
        if os.path.isdir(team_dir):
            return TeamHome(team, folder, team_dir, True, tuple(searched), read_team_record(team_dir))
    elsewhere = [e for e in _registered(env) if e.host is not None and e.team == team]
    if len(elsewhere) == 1 and elsewhere[0].host is not None:
        return on_host(team, elsewhere[0].project, elsewhere[0].host, env)
    team_dir = TeamPaths(resolve_state_root(given, env), team).team_dir
    return TeamHome(team, given, team_dir, False, tuple(searched), None)


def placed_on(args: argparse.Namespace) -> str | None:
    """The machine a command's program runs on: the team's (``--host``, or the one it was found on); None:
    this one."""
    home = getattr(args, "team_home", None)
    if isinstance(home, TeamHome):
        return home.host
    host = getattr(args, "host", None)
    return host if isinstance(host, str) else None


def _given_socket(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[str | None, str]:
    """The tmux server named on the command line or in the environment, and how it was named."""
    if getattr(args, "tmux_socket", None):
        return str(args.tmux_socket), f"--tmux-socket {args.tmux_socket}"
    if env.get("PANEFLEET_TMUX_SOCKET"):
        return env["PANEFLEET_TMUX_SOCKET"], f"PANEFLEET_TMUX_SOCKET={env['PANEFLEET_TMUX_SOCKET']}"
    return None, ""


def tmux_socket(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    """The ``tmux -L`` name a command runs against (None: plain ``tmux``): ``--tmux-socket``, else
    ``PANEFLEET_TMUX_SOCKET``, else the one the team's record names."""
    given, _how = _given_socket(args, env)
    if given is not None:
        return given
    home = getattr(args, "team_home", None)
    if isinstance(home, TeamHome):
        return home.recorded_socket
    return None


def server_words(socket: str | None) -> str:
    return f"tmux -L {socket}" if socket else "the default tmux server"


def socket_note(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    """One line when the server given differs from the one the team's record names."""
    given, how = _given_socket(args, env)
    home = getattr(args, "team_home", None)
    if given is None or not isinstance(home, TeamHome) or home.record is None or home.record.tmux_socket == given:
        return None  # a team on a host: its registry entry names the server there
    return (f"note: team {home.team} was recorded on {server_words(home.record.tmux_socket)} "
            f"({home.record.path}); using {how} as given")


def request_env(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a scaling request records (``shell/cli/environment.py``), with
    ``OMX_TEAM_SCALING_ENABLED=1`` added for a team panefleet made when the variable is not set at all:
    oh-my-codex gates its own dynamic scaling, panefleet's teams are made to be scaled. A value set (even
    ``0``) is kept, and an oh-my-codex team (no record) keeps the gate."""
    from shell.cli.environment import recorded_env

    env = recorded_env(environ)
    home = getattr(args, "team_home", None)
    if isinstance(home, TeamHome) and home.made_by_panefleet and not env.get(SCALING_GATE, "").strip():
        env = dict(sorted({**env, SCALING_GATE: "1"}.items()))
    return env


def _takes_home(args: argparse.Namespace) -> bool:
    return (getattr(args, "command", None) == "team" and getattr(args, "team_command", None) != "init"
            and isinstance(getattr(args, "team", None), str) and isinstance(getattr(args, "cwd", None), str))


def prepare(args: argparse.Namespace, env: Mapping[str, str]) -> int | None:
    """For a team command (not ``init``): find the team, point ``args.cwd`` at its folder and keep what
    was found as ``args.team_home``; say when the tmux server given differs from the recorded one (text
    mode). An exit status when the command cannot go on (a malformed record), else None."""
    if not _takes_home(args):
        return None
    try:
        host = getattr(args, "host", None)
        home = locate(args.team, args.cwd, env) if host is None else on_host(
            args.team, None if args.cwd == "." else args.cwd, host, env)
    except NotOnHost as exc:
        return _refused(args, str(exc), "team_not_on_host", 2)
    except TeamRecordError as exc:
        return _refused(args, f"{exc}. Repair the file or remove it; without it panefleet treats team {args.team} as "
                              "oh-my-codex's (pass its tmux server with --tmux-socket, scale with "
                              "OMX_TEAM_SCALING_ENABLED=1)", "team_record_malformed", 1)
    if home.host is not None and (args.team_command in HERE_ONLY or getattr(args, "follow", False)):
        return _refused(args, f"team {args.team} lives on {home.host}: `panefleet team {args.team_command}` does not "
                              "reach another machine yet (docs/hosts.md, \"A team on a host\")",
                        "team_on_another_machine", 2)
    args.cwd = home.cwd
    args.team_home = home
    note = socket_note(args, env)
    if note is not None and getattr(args, "output", "text") != "json":
        sys.stderr.write(note + "\n")
    return None


def _refused(args: argparse.Namespace, message: str, code: str, status: int) -> int:
    """Say why the command cannot go on (on stderr; also as JSON with ``-o json``); its exit status."""
    sys.stderr.write(f"panefleet: {message}\n")
    if getattr(args, "output", "text") == "json":
        sys.stdout.write(json.dumps({"ok": False, "error": message, "error_code": code}, ensure_ascii=False) + "\n")
    return status


def _server_of_tmux_env(env: Mapping[str, str]) -> str | None:
    """The ``-L`` name of the server ``$TMUX`` names, when it is one (a socket in tmux's own folder)."""
    path = env.get("TMUX", "").split(",", 1)[0]
    folder = os.path.join(env.get("TMUX_TMPDIR") or "/tmp", f"tmux-{os.getuid()}")
    if not path or os.path.dirname(path) != folder:
        return None
    name = os.path.basename(path)
    return None if name == "default" else name


def remember_new_team(request: object, socket: str | None, env: Mapping[str, str], host: str | None = None,
                      identity: HostIdentity | None = None) -> None:
    """After a successful ``team init`` (``request``, run against ``socket``): the team's record (made by
    panefleet, on that tmux server — or the one ``$TMUX`` names when it ran inside tmux — from its folder)
    and its registry entry. A team made on ``host`` has its registry entry only, here, with the host's
    ``identity`` as it was. A failure is a note on stderr: the team was made all the same."""
    from pure.omx.state import TeamPaths, resolve_state_root
    from shell.store.registry import RegistryError, register_team
    from shell.store.team_record import CREATED_BY_PANEFLEET, write_team_record

    team, cwd, request_env = getattr(request, "team", ""), getattr(request, "cwd", ""), getattr(request, "env", {})
    if not isinstance(team, str) or not isinstance(cwd, str) or not isinstance(request_env, dict):
        return
    socket = socket or (_server_of_tmux_env(env) if host is None else None)
    root = resolve_state_root(cwd, request_env)
    try:
        if host is not None:
            register_team(team, project=cwd, state_root=root, tmux_socket=socket, env=env, host=host,
                          machine_id=identity.machine_id if identity is not None else "",
                          host_keys=identity.host_keys if identity is not None else ())
            return
        write_team_record(TeamPaths(root, team).team_dir, created_by=CREATED_BY_PANEFLEET, tmux_socket=socket,
                          project=cwd, stopped=False)
        register_team(team, project=cwd, state_root=root, tmux_socket=socket, env=env)
    except (TeamRecordError, RegistryError) as exc:
        sys.stderr.write(f"note: team {team} was made, but panefleet could not remember it: {exc} (pass "
                         "--tmux-socket to its commands; `panefleet list` may not show it from elsewhere)\n")
