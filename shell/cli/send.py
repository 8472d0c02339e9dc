"""``panefleet team send TEAM WORKER… MESSAGE`` (or ``--all``/``--role R``): a follow-up typed into
workers' agents after their pane proofs and confirmed from their screens (``pure/omx/send.py``)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from shell.cli.args import add_output, add_tmux, complete_path, examples
from shell.cli.environment import recorded_env

RESULT_WORDS = {"delivered": "delivered", "queued": "queued (the agent was busy; its CLI runs it next)",
                "not_submitted": "not submitted", "blocked": "blocked: nothing typed"}


def register(team_subparsers: Any) -> None:
    p = team_subparsers.add_parser(
        "send", help="type a message into workers' agents and confirm it from their screens",
        description="Check the message and prove every chosen worker's pane first (nothing is typed anywhere when "
        "one is refused); then type MESSAGE literally into each agent, submit it and confirm it from the screen. "
        "Each worker's result: delivered; queued (the agent was busy and its CLI queued the message); not "
        "submitted; or blocked (the agent is at a trust, approval or login prompt, or exited: nothing is typed). "
        "The message is also put in the worker's mailbox as oh-my-codex records a leader's message. "
        "Exit 0 when every worker got it (delivered or queued), else 3.",
        epilog=examples('panefleet team send alpha worker-2 "also run the linter"',
                        ('panefleet team send alpha --role reviewer "look at PR 12"', "or --all: every worker"),
                        ("panefleet team send alpha worker-2 -", "the message from stdin")))
    p.add_argument("team", help="the team's name")
    p.add_argument("words", nargs="+", metavar="WORKER… MESSAGE",
                   help="the workers' names, then the message (- reads it from stdin); with --all or --role, "
                   "the message only")
    chosen = p.add_mutually_exclusive_group()
    chosen.add_argument("--all", dest="all_workers", action="store_true", help="every worker of the team")
    chosen.add_argument("--role", help="every worker of this role")
    complete_path(p.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    add_output(p)
    add_tmux(p)
    p.set_defaults(handler=cmd_send)


def render_send(result: dict[str, Any]) -> str:
    if "workers" not in result:
        return f"send failed: {result.get('error')}"
    lines = []
    for entry in result["workers"]:
        words = RESULT_WORDS.get(entry["result"], entry["result"])
        why = "" if entry["result"] in ("delivered", "queued") else f" ({entry['reason']})"
        lines.append(f"{entry['worker']}  {entry['paneId']}  {words}{why}")
    return "\n".join(lines)


def cmd_send(args: argparse.Namespace) -> int:
    from pure.omx.send import SendRequest
    from shell.cli.operation import run_cli_operation, usage_error

    *workers, message = args.words
    if (args.all_workers or args.role is not None) and workers:
        return usage_error(args, "team send", "with --all or --role, give only the message (workers: "
                           + " ".join(workers) + ")")
    if not (args.all_workers or args.role is not None or workers):
        return usage_error(args, "team send", "name a worker (or --all, or --role R) before the message")
    if message == "-":
        message = sys.stdin.read()
    environ = dict(os.environ)
    request = SendRequest(team=args.team, cwd=os.path.abspath(args.cwd), env=recorded_env(environ), message=message,
                          workers=tuple(workers), all_workers=args.all_workers, role=args.role)
    return run_cli_operation("team.send", request, args, env=environ, render=render_send)
