"""The command line of ``panefleet plan``, ``destroy`` and ``apply``'s fleet-file options, apart from
their work (``shell/cli/fleet.py``), so that building the parser imports no planner."""

from __future__ import annotations

import argparse
from typing import Any

from pure.fleet import FLEET_FILE


def register(subparsers: Any) -> None:
    from shell.cli.args import add_output, add_tmux, complete_path, examples

    p = subparsers.add_parser(
        "plan", help="what converging to a fleet file takes (reads only)",
        description="Read every team the fleet file declares — its records, the proof of each pane, its debt — "
        "and print what `panefleet apply` would do: + added, ~ changed (respawned, restored, swept), - removed. "
        "Nothing is changed. The file is ./panefleet.toml, looked for up through the parent folders, or -f FILE "
        "(docs/fleet.md).",
        epilog=examples("panefleet plan", "panefleet plan -f fleets/night.toml --team alpha", "panefleet plan -o json"))
    _fleet_options(p, complete_path)
    complete_path(p.add_argument("--plan-out", metavar="FILE",
                                 help="also save the plan; `panefleet apply FILE` carries out exactly it, or "
                                      "refuses when a fact it read has changed"))
    add_output(p)
    add_tmux(p)
    p.set_defaults(handler=cmd_plan)

    d = subparsers.add_parser(
        "destroy", help="stop a fleet file's teams: every worker pane killed after proof, records kept",
        description="Ask every worker to shut down as oh-my-codex does (a shutdown-request.json each, then up to "
        "--wait seconds for their shutdown-ack.json), then kill every worker pane after its proof. The leader pane "
        "is left, and the team's records stay, marked stopped (`panefleet apply` brings the same workers back), "
        "unless --purge removes the team's state as oh-my-codex's cleanup does.",
        epilog=examples("panefleet destroy --yes", "panefleet destroy --team alpha --no-wait --yes",
                        ("panefleet destroy --team alpha --purge --yes", "and remove its state")))
    _fleet_options(d, complete_path)
    d.add_argument("--yes", action="store_true", help="do not ask (required without a terminal)")
    d.add_argument("--wait", type=float, default=10.0, metavar="SECONDS",
                   help="how long to wait for the workers' shutdown acknowledgements (default: 10)")
    d.add_argument("--no-wait", action="store_true", help="do not ask the workers first; kill their panes at once")
    d.add_argument("--purge", action="store_true", help="also remove the team's state folder once no pane is left")
    add_output(d)
    add_tmux(d)
    d.set_defaults(handler=cmd_destroy)


def _fleet_options(p: argparse.ArgumentParser, complete_path: Any) -> None:
    complete_path(p.add_argument("-f", "--file", metavar="FILE",
                                 help=f"the fleet file (default: ./{FLEET_FILE} or the nearest parent folder's)"))
    p.add_argument("--team", action="append", default=[], metavar="TEAM",
                   help="only this team of the file (repeatable)")


def add_apply_options(p: argparse.ArgumentParser) -> None:
    """``apply``'s fleet-file options (cli.py keeps its saved-plan form)."""
    from shell.cli.args import complete_path

    _fleet_options(p, complete_path)
    p.add_argument("--yes", action="store_true", help="do not ask before changing (required without a terminal)")


def cmd_plan(args: argparse.Namespace) -> int:
    from shell.cli.fleet import plan_command

    return plan_command(args)


def cmd_destroy(args: argparse.Namespace) -> int:
    from shell.cli.fleet import destroy_command

    return destroy_command(args)
