"""Where each team of a fleet file lives, found once per command (``shell/cli/fleet.py``): its tmux server,
the environment its operations get, and, for a team on another machine, that machine checked to be the one
the team was made on (docs/hosts.md, "A team on a host").
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from returns.result import Failure, Result

from pure.fleet.spec import TeamSpec
from shell.cli.environment import recorded_env
from shell.cli.fleet_teams import FleetReadError, Target

if TYPE_CHECKING:
    from shell.run.hosts import HostIdentity
    from shell.store.registry import RegisteredTeam

# oh-my-codex asks for OMX_TEAM_SCALING_ENABLED=1 before any scaling; a team declared in a fleet file is
# panefleet's own, and converging it is the point (docs/fleet.md, "Deviations").
FLEET_ENV = {"OMX_TEAM_SCALING_ENABLED": "1"}


def targets(args: argparse.Namespace, teams: list[TeamSpec], *, unreached_ok: bool = False) -> list[Target]:
    """Each team's tmux server: --tmux-socket or $PANEFLEET_TMUX_SOCKET, else the file's ``tmux_socket``,
    else the server the team was made on (its record), else tmux's default server. A host that fails its
    check stops the command (:class:`FleetReadError`), or, with ``unreached_ok`` (``fleet plan``, which shows
    what it can), marks its team ``unreached`` with why: nothing more is read or changed there."""
    from shell.cli.operation import tmux_socket
    from shell.cli.team_host import placed_env

    environ = dict(os.environ)
    asked = tmux_socket(args, environ)
    env = {**recorded_env(environ), **FLEET_ENV}
    found = []
    for team in teams:
        if team.host is None:
            found.append(Target(spec=team, socket=asked or team.tmux_socket or _recorded_socket(team, env), env=env))
            continue
        entry = _registered_on_host(team, env)
        socket = asked or team.tmux_socket or (entry.tmux_socket if entry else None)
        checked = _checked_host(team, entry)
        if isinstance(checked, Failure):
            if not unreached_ok:
                raise FleetReadError(f"team {team.name}: {checked.failure()}")
            found.append(Target(spec=team, socket=socket, env=env, unreached=checked.failure()))
            continue
        found.append(Target(spec=team, socket=socket, env=placed_env(env, team.host, environ),
                            identity=checked.unwrap()))
    return found


def _registered_on_host(team: TeamSpec, env: dict[str, str]) -> RegisteredTeam | None:
    """The registry entry of a team on a host (its record, here: docs/hosts.md, "A team on a host")."""
    from pure.omx.state import resolve_state_root
    from shell.store.registry import RegistryError, registered_teams

    root = resolve_state_root(team.cwd, env)
    try:
        found = [e for e in registered_teams() if e.host == team.host and e.team == team.name and e.state_root == root]
    except RegistryError as exc:
        raise FleetReadError(f"team {team.name}: {exc}") from None
    return found[0] if found else None


def _checked_host(team: TeamSpec, entry: RegisteredTeam | None) -> Result[HostIdentity, str]:
    """The identity of a team's host, when it is the machine the team was made on (``shell/cli/team_host.py``);
    else why not, and nothing is read or changed there."""
    from shell.cli import team_host

    assert team.host is not None
    return team_host.check(team.host, entry, os.environ)


def _recorded_socket(team: TeamSpec, env: dict[str, str]) -> str | None:
    """The server a team on this machine was made on, as its record says."""
    from pure.omx.state import TeamPaths, resolve_state_root
    from shell.store.team_record import TeamRecordError, read_team_record

    try:
        record = read_team_record(TeamPaths(resolve_state_root(team.cwd, env), team.name).team_dir)
    except TeamRecordError as exc:
        raise FleetReadError(f"team {team.name}: {exc}") from None
    return record.tmux_socket if record is not None else None
