"""``panefleet list`` (also ``panefleet team list``): every team panefleet can find, one row each.

Found are the teams under the folder given (``--cwd``, default ``.``) and each folder above it — every
``.omx/state/team/<team>/`` of them (with ``OMX_TEAM_STATE_ROOT``, ``OMX_ROOT`` or ``OMX_STATE_ROOT``
set, that state root's teams instead) — and every team of the registry (``shell/store/registry.py``).

Each team is read by the ``team.status`` program (``pure/team.py``): its members, the proof of
every pane, what each agent's screen shows and its cleanup debt. The teams on one tmux server share
one read of its pane table (:class:`OnePaneTable`), and a server that cannot be asked makes that row
say ``server down``, not the list fail. A row's tmux server is the one the team's record names, else
its registry entry's, else ``--tmux-socket`` / ``PANEFLEET_TMUX_SOCKET``, else the default server. A
team its record says was stopped is not read: its row says ``stopped``. A registered team on another
machine (docs/hosts.md, "A team on a host") is read there, after its host is checked; a host not reached,
or not the machine the team was made on, makes its row say ``host unreachable`` or ``host refused``, with
why, its workers unknown.

Nothing is changed, but for ``--prune``: registry entries whose team folder is gone are removed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from shell.cli.args import add_output, add_tmux, complete_path, examples

if TYPE_CHECKING:
    from pure import model as m
    from shell.store.registry import RegisteredTeam

STUCK_EXCLUDED = ("ready", "idle", "busy", "starting")  # a screen read as anything else is an agent that will not go on alone


def _add(parser: argparse.ArgumentParser) -> None:
    complete_path(parser.add_argument("--cwd", default=".",
                                      help="the folder whose project (and the folders above it) is searched for "
                                           "teams (default: .)"), directory=True)
    parser.add_argument("--prune", action="store_true",
                        help="first remove registered teams whose folder no longer exists (shown as gone)")
    add_output(parser)
    add_tmux(parser)
    parser.set_defaults(handler=cmd_list)


HELP = "every team panefleet can find: here and above, and every team it made"
DESCRIPTION = ("List every team panefleet can find: those under this folder's project (every .omx/state/team/* of "
               "this folder and of each folder above it) and every team panefleet made or applied (its registry, "
               "teams.json in panefleet's state folder). One row each: its project, its tmux server, its workers "
               "live (pane proven live and ours) out of those recorded, its agents ready, busy and stuck (from "
               "their screens), its cleanup debt, and whether it was stopped. A team whose server cannot be asked "
               "says `server down`, one whose folder is gone `gone`. Nothing is changed (but for --prune).")


def register(team_subparsers: Any) -> None:
    """``panefleet team list``."""
    p = team_subparsers.add_parser(
        "list", help=HELP, description=DESCRIPTION,
        epilog=examples("panefleet team list", ("panefleet team list -o json", "for programs")))
    _add(p)


def register_top(subparsers: Any) -> None:
    """``panefleet list``."""
    p = subparsers.add_parser(
        "list", help=HELP, description=DESCRIPTION,
        epilog=examples("panefleet list", ("panefleet list --prune", "forget teams whose folder is gone"),
                        ("panefleet list -o json", "for programs")))
    _add(p)


# ------------------------------------------------------------------------------------------ finding


@frozen
class Found:
    team: str
    state_root: str
    project: str                  # the folder the team's state is under (or was registered from)
    registered: bool
    registered_socket: str | None
    entry: RegisteredTeam | None = None  # the registry entry of a team on another machine (``entry.host``)

    @property
    def team_dir(self) -> str:
        return os.path.join(self.state_root, "team", self.team)


def _key(state_root: str, team: str) -> tuple[str, str]:
    return os.path.realpath(state_root), team


def local_teams(cwd: str, env: Mapping[str, str]) -> list[Found]:
    """The teams under ``cwd``'s project and every folder above it, nearest first (names in order)."""
    from pure.omx.state import TEAM_NAME_RE, resolve_state_root
    from shell.cli.team_home import folders_up, state_root_moved

    folders = [os.path.abspath(cwd)] if state_root_moved(env) else folders_up(cwd)
    found: list[Found] = []
    for folder in folders:
        root = resolve_state_root(folder, env)
        try:
            names = sorted(os.listdir(os.path.join(root, "team")))
        except OSError:
            continue
        found += [Found(team=name, state_root=root, project=folder, registered=False, registered_socket=None)
                  for name in names
                  if TEAM_NAME_RE.fullmatch(name) and os.path.isdir(os.path.join(root, "team", name))]
    return found


def all_teams(cwd: str, env: Mapping[str, str]) -> list[Found]:
    """The local teams, then the registered ones not among them (a registered local one is marked so).
    Raises ``RegistryError``."""
    from shell.store.registry import registered_teams

    teams = {_key(f.state_root, f.team): f for f in local_teams(cwd, env)}
    elsewhere: list[Found] = []
    for entry in registered_teams(env):
        if entry.host is not None:  # a team on another machine, read there (docs/hosts.md, "A team on a host")
            elsewhere.append(Found(team=entry.team, state_root=entry.state_root, project=entry.project,
                                   registered=True, registered_socket=entry.tmux_socket, entry=entry))
            continue
        key = _key(entry.state_root, entry.team)
        seen = teams.get(key)
        if seen is None:
            teams[key] = Found(team=entry.team, state_root=entry.state_root, project=entry.project, registered=True,
                               registered_socket=entry.tmux_socket)
        else:
            teams[key] = Found(team=seen.team, state_root=seen.state_root, project=seen.project, registered=True,
                               registered_socket=entry.tmux_socket)
    return [*teams.values(), *elsewhere]


# ------------------------------------------------------------------------------------------ reading


class OnePaneTable:
    """The executor of one tmux server for the whole list: each pane-table read (``list-panes -a …``) is
    asked once and its answer given to every team on that server; every other step runs as usual."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.tables: dict[tuple[str, ...], Any] = {}

    def execute(self, step: Any) -> Any:
        from pure import model as m

        if isinstance(step, m.Run) and step.tool == "tmux" and not step.mutates and step.args[:2] == ("list-panes", "-a"):
            if step.args not in self.tables:
                self.tables[step.args] = self.real.execute(step)
            return self.tables[step.args]
        return self.real.execute(step)

    def release_all(self) -> None:
        self.real.release_all()


def _debt_count(debt: object) -> int:
    """The panes the cleanup debt record keeps (1 for a record that names none, or is unreadable)."""
    if debt is None:
        return 0
    if not isinstance(debt, dict):
        return 1
    panes = debt.get("unresolved_panes") or debt.get("workers")
    count = len([p for p in panes if isinstance(p, dict)]) if isinstance(panes, list) else 0
    return count or 1


def _counts(result: dict[str, Any], row: dict[str, Any], server_read: bool) -> None:
    workers = [p for p in result.get("panes") or [] if isinstance(p, dict) and p.get("role") == "worker"]
    row["workersDeclared"] = len(workers)
    row["debt"] = _debt_count(result.get("debt"))
    if not server_read:
        return
    row["workersLive"] = sum(1 for w in workers
                             if w.get("verdict") == "live" and w.get("pidMatch") and w.get("ownerMatch"))
    screens = [w.get("screen") for w in workers]
    row["agents"] = {"ready": screens.count("ready") + screens.count("idle"), "busy": screens.count("busy"),
                     "stuck": sum(1 for s in screens if isinstance(s, str) and s not in STUCK_EXCLUDED)}


def read_row(found: Found, socket_given: str | None, environ: Mapping[str, str],
             executors: dict[str | None, OnePaneTable]) -> tuple[dict[str, Any], bool]:
    """One team's row, and whether the read was interrupted."""
    from pure.team import TeamStatusRequest, team_status
    from shell.cli.environment import recorded_env
    from shell.run.executor import Executor
    from shell.run.loop import run_program
    from shell.store.team_record import TeamRecordError, read_team_record

    row: dict[str, Any] = {"team": found.team, "project": found.project, "stateRoot": found.state_root,
                           "host": None, "tmuxSocket": None, "tmuxServer": "default", "createdBy": None,
                           "registered": found.registered, "stopped": False, "state": "", "workersLive": None,
                           "workersDeclared": None, "agents": None, "debt": None}
    if found.entry is not None:
        return _read_on_host(row, found.entry, environ)
    socket = found.registered_socket if found.registered else socket_given
    if not os.path.isdir(found.team_dir):
        row.update(state="gone", tmuxSocket=socket, tmuxServer=socket or "default")
        return row, False
    try:
        record = read_team_record(found.team_dir)
    except TeamRecordError as exc:
        row.update(state="error", error=str(exc), tmuxSocket=socket, tmuxServer=socket or "default")
        return row, False
    if record is not None:
        socket = record.tmux_socket
        row.update(createdBy=record.created_by, stopped=record.stopped, project=record.project or found.project)
    row.update(tmuxSocket=socket, tmuxServer=socket or "default")
    if record is not None and record.stopped:  # stopped on purpose: its server is not asked
        row["state"] = "stopped"
        return row, False
    # exactly this team's state root, whatever the environment's OMX_* variables say
    env = {k: v for k, v in recorded_env(environ).items() if k not in ("OMX_ROOT", "OMX_STATE_ROOT")}
    env["OMX_TEAM_STATE_ROOT"] = found.state_root
    request = TeamStatusRequest(team=found.team, cwd=found.project, env=env)
    if socket not in executors:
        executors[socket] = OnePaneTable(Executor(env=environ, tmux_socket=socket))
    done, _journal = run_program(lambda: team_status(request), executors[socket])
    return _with_status(row, done, socket)


def _read_on_host(row: dict[str, Any], entry: RegisteredTeam,
                  environ: Mapping[str, str]) -> tuple[dict[str, Any], bool]:
    """The row of a team on another machine: the host checked first (``shell/cli/team_host.py``), then the
    team's status read there. A host not reached, or not the machine the team was made on, reads nothing:
    the row says so, its workers unknown."""
    from returns.result import Failure

    from pure.hosts import fault_named
    from pure.team import TeamStatusRequest, team_status
    from shell.cli import team_host
    from shell.cli.environment import recorded_env
    from shell.run.executor import Executor
    from shell.run.loop import placed, run_program

    assert entry.host is not None
    socket = entry.tmux_socket
    row.update(host=entry.host, project=f"{entry.host}:{entry.project}", tmuxSocket=socket,
               tmuxServer=socket or "default")
    checked = team_host.check(entry.host, entry, environ)
    if isinstance(checked, Failure):
        why = checked.failure()
        down = fault_named(why, entry.host) in ("unreachable", "connection_dropped")
        return {**row, "state": "host unreachable" if down else "host refused", "error": why}, False
    env = {k: v for k, v in team_host.placed_env(recorded_env(environ), entry.host, environ).items()
           if k not in ("OMX_ROOT", "OMX_STATE_ROOT")}
    env["OMX_TEAM_STATE_ROOT"] = entry.state_root
    request = TeamStatusRequest(team=entry.team, cwd=entry.project, env=env)
    done, _journal = run_program(lambda: placed(team_status(request), entry.host),
                                 Executor(env={**environ, **env}, tmux_socket=socket))
    return _with_status(row, done, socket)


def _with_status(row: dict[str, Any], done: m.Done, socket: str | None) -> tuple[dict[str, Any], bool]:
    """``row`` completed from a ``team.status`` run, and whether that run was interrupted."""
    result = done.outcome.result if isinstance(done.outcome.result, dict) else {}
    if result.get("interrupted") is True:
        return row, True
    error = result.get("error") if result.get("ok") is False else None
    if error is None and done.outcome.status not in ("ok", "debt"):
        error = done.outcome.message or done.outcome.status
    down = isinstance(error, str) and error.startswith("pane_snapshot_unavailable:")
    if "panes" in result:
        _counts(result, row, server_read=not down)
    if down:
        row.update(state="server down", error=_server_down(socket, str(error)))
    elif error is not None:
        row.update(state="error", error=str(error))
    else:
        row["state"] = "ok" if done.outcome.status == "ok" else "attention"
    return row, False


def _server_down(socket: str | None, error: str) -> str:
    from shell.cli.team_home import server_words

    _code, reason, detail = (error.split(":", 2) + ["", ""])[:3]
    return f"{server_words(socket)} could not be asked for its panes ({reason}{': ' + detail.strip() if detail.strip() else ''})"


# ------------------------------------------------------------------------------------------ command


def _refused(args: argparse.Namespace, message: str, code: str) -> int:
    sys.stderr.write(f"panefleet list: {message}\n")
    if getattr(args, "output", "text") == "json":
        sys.stdout.write(json.dumps({"ok": False, "error": message, "error_code": code}, ensure_ascii=False) + "\n")
    return 1


def cmd_list(args: argparse.Namespace) -> int:
    from shell.cli.team_home import folders_up, state_root_moved
    from shell.store.registry import RegistryError, prune_registry, registry_path

    environ = dict(os.environ)
    cwd = os.path.abspath(args.cwd)
    socket_given = getattr(args, "tmux_socket", None) or environ.get("PANEFLEET_TMUX_SOCKET") or None
    try:
        pruned = prune_registry(environ) if args.prune else []
        teams = all_teams(cwd, environ)
    except RegistryError as exc:
        return _refused(args, f"{exc}. Repair the file or remove it (then only the teams under this folder are "
                              "listed until panefleet makes or applies one again)", "registry_malformed")
    executors: dict[str | None, OnePaneTable] = {}
    rows: list[dict[str, Any]] = []
    for found in teams:
        row, interrupted = read_row(found, socket_given, environ, executors)
        if interrupted:
            sys.stderr.write("interrupted\n")
            return 130
        rows.append(row)
    if args.output == "json":
        answer: dict[str, Any] = {"ok": True, "teams": rows}
        if args.prune:
            answer["pruned"] = [{"team": p.team, "stateRoot": p.state_root} for p in pruned]
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        return 0
    where = cwd if state_root_moved(environ) else f"{cwd} or a folder above it (up to {folders_up(cwd)[-1]})"
    text = render(rows) if rows else (f"No teams found: none under {where}, and none registered in "
                                      f"{registry_path(environ)}.\n")
    if pruned:
        text += "pruned from the registry (folder gone): " + ", ".join(f"{p.team} ({p.team_dir})" for p in pruned) + "\n"
    sys.stdout.write(text)
    return 0


def _dash(value: object) -> str:
    return "-" if value is None else str(value)


def render(rows: list[dict[str, Any]]) -> str:
    """The rows as a table, then what each row that failed says."""
    table = [("TEAM", "PROJECT", "TMUX", "WORKERS", "READY/BUSY/STUCK", "DEBT", "STATE")]
    for row in rows:
        workers = "-" if row["workersDeclared"] is None else f"{_dash(row['workersLive'])}/{row['workersDeclared']}"
        agents = row["agents"]
        seen = "-" if agents is None else f"{agents['ready']}/{agents['busy']}/{agents['stuck']}"
        table.append((row["team"], row["project"], row["tmuxServer"], workers, seen, _dash(row["debt"]),
                      row["state"]))
    widths = [max(len(line[column]) for line in table) for column in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in table]
    lines += [f"  {row['team']} ({row['project']}): {row['error']}" for row in rows if row.get("error")]
    lines.append("WORKERS: live (pane proven live and ours) / recorded; READY/BUSY/STUCK: what the agents' screens show")
    return "\n".join(lines) + "\n"
