"""``panefleet team peek TEAM WORKER [-n LINES]``: a worker's screen, after its pane proof
(``pure/omx/peek.py``), with the agent's state on top; ``panefleet team attach TEAM WORKER``: a
terminal brought to that proven pane."""

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
    register_attach(team_subparsers)


def render_peek(result: dict[str, Any]) -> str:
    if not result.get("ok"):
        return f"peek failed: {result.get('error')}"
    state = str(result["state"]).replace("_", " ")
    head = f"{result['worker']}  pane {result['paneId']}  {result['cli']}  agent {state}"
    return "\n".join([head, "-" * len(head), *result["lines"]])


def cmd_peek(args: argparse.Namespace) -> int:
    from pure.omx.peek import PeekRequest
    from shell.cli.operation import run_cli_operation

    environ = dict(os.environ)
    request = PeekRequest(team=args.team, worker=args.worker, cwd=os.path.abspath(args.cwd),
                          env=recorded_env(environ), lines=args.lines)
    return run_cli_operation("team.peek", request, args, env=environ, render=render_peek)


def register_attach(team_subparsers: Any) -> None:
    p = team_subparsers.add_parser(
        "attach", help="bring your terminal to a worker's pane, after its pane proof",
        description="Prove WORKER's recorded pane (live with its pinned pid and the team's owner tag), then: inside "
        "tmux on the team's server, switch this client to the pane's session, window and pane; otherwise attach "
        "to the team's tmux server at that pane. A pane that is gone or not proven the worker's is refused with the "
        "reason. With -o json, print where the pane is instead of attaching.",
        epilog=examples("panefleet team attach alpha worker-2",
                        ("panefleet team attach alpha worker-2 --read-only", "watch without being able to type")))
    p.add_argument("team", help="the team's name")
    p.add_argument("worker", help="the worker's name, e.g. worker-2 (`panefleet team status TEAM` lists them)")
    p.add_argument("--read-only", action="store_true",
                   help="attach a read-only client (inside tmux: this client is made read-only; "
                   "`tmux switch-client -r` makes it writable again)")
    complete_path(p.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    add_output(p)
    add_tmux(p)
    p.set_defaults(handler=cmd_attach)


TMUX_TIMEOUT_S = 10.0  # each tmux call attach makes before it hands the terminal over


def cmd_attach(args: argparse.Namespace) -> int:
    from pure.omx.peek import LocateRequest
    from pure.tmux import facts
    from shell.cli.operation import exit_code, make_executor, print_outcome, run_cli_operation, tmux_socket
    from shell.run.loop import run_operation

    environ = dict(os.environ)
    request = LocateRequest(team=args.team, worker=args.worker, cwd=os.path.abspath(args.cwd),
                            env=recorded_env(environ))
    if args.output == "json":
        return run_cli_operation("team.locate", request, args, env=environ)
    done, journal, _audit = run_operation("team.locate", request, make_executor(args, environ), env=environ)
    result = done.outcome.result
    if not isinstance(result, dict) or result.get("ok") is not True:
        print_outcome(done, journal, args, lambda answer, _done, _journal: f"attach refused: {answer.get('error')}")
        return exit_code(done)
    socket = tmux_socket(args, environ)
    tmux = ["tmux", *(["-L", socket] if socket else [])]
    pane = str(result["paneId"])
    # a pane as the target: tmux makes its window current and the pane active, in the one call
    if os.path.realpath(environ.get("TMUX", "").split(",")[0] or "/nonexistent") == os.path.realpath(
            _tmux(tmux, "display-message", "-p", facts.SOCKET_PATH.format) or "/"):
        # inside a client of the team's own server: bring this client there
        _tmux(tmux, "switch-client", "-t", pane)
        if args.read_only and _tmux(tmux, "display-message", "-p", facts.CLIENT_READONLY.format) != "1":
            _tmux(tmux, "switch-client", "-r")
        return 0
    command = [*tmux, "attach-session", *(["-r"] if args.read_only else []), "-t", pane]
    os.execvpe(command[0], command, {k: v for k, v in environ.items() if k != "TMUX"})


def _tmux(tmux: list[str], *args: str) -> str:
    """One bounded tmux call; its trimmed stdout ("" when it failed or did not answer in time)."""
    import subprocess

    try:
        done = subprocess.run([*tmux, *args], capture_output=True, text=True, timeout=TMUX_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
