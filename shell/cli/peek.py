"""``panefleet team peek TEAM WORKER [-n LINES]``: a worker's screen, after its pane proof
(``pure/omx/peek.py``), with the agent's state on top."""

from __future__ import annotations

import argparse
import os
from typing import Any

from shell.cli.args import add_output, add_tmux, complete_path, examples
from shell.cli.environment import recorded_env


def register(team_subparsers: Any) -> None:
    p = team_subparsers.add_parser(
        "peek", help="a worker's screen and what its agent is doing, after its pane proof",
        description="Prove WORKER's recorded pane (live with its pinned pid and the team's owner tag), then print "
        "its last LINES lines with the agent's state on top, as the agent-screen model reads it (ready, busy, a "
        "trust or login prompt, exited …). A pane that is gone or not proven the worker's is refused with the "
        "reason, and nothing is read.",
        epilog=examples("panefleet team peek alpha worker-2", ("panefleet team peek alpha worker-2 -n 100", "more"),
                        ("panefleet team peek alpha worker-2 -o json", "the lines and the state")))
    p.add_argument("team", help="the team's name")
    p.add_argument("worker", help="the worker's name, e.g. worker-2 (`panefleet team status TEAM` lists them)")
    p.add_argument("-n", "--lines", type=int, default=40, metavar="LINES", help="how many lines (default: 40)")
    complete_path(p.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    add_output(p)
    add_tmux(p)
    p.set_defaults(handler=cmd_peek)


def render_peek(result: dict[str, Any]) -> str:
    if not result.get("ok"):
        return f"peek failed: {result.get('error')}"
    state = str(result["state"]).replace("_", " ")
    head = f"{result['worker']}  pane {result['paneId']}  {result['cli']}  agent {state}"
    return "\n".join([head, "-" * len(head), *result["lines"]])


def cmd_peek(args: argparse.Namespace) -> int:
    from pure.omx.peek import PeekRequest
    from shell.cli.common import run_cli_operation

    environ = dict(os.environ)
    request = PeekRequest(team=args.team, worker=args.worker, cwd=os.path.abspath(args.cwd),
                          env=recorded_env(environ), lines=args.lines)
    return run_cli_operation("team.peek", request, args, env=environ, render=render_peek)
