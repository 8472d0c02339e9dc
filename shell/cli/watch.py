"""``panefleet team watch TEAM [--on-needs-input CMD] [--on-idle CMD] [--on-exit CMD]``: one ``team status``
snapshot per refresh (every pane proven, every live worker's screen classified, ``pure/team.py``); a
line for each change of a worker's state, and on each change into ``needs_input`` (mid-task, its agent
asks to approve something), ``idle`` (a finished turn waiting for the next message) or ``exited`` (its
agent exited, or its pane is gone) a hook, once per transition: the command given, else a tmux message
on the team's clients and the terminal bell. Until interrupted (exit 0), or for ``--refreshes N``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import Any

from shell.cli.args import add_output, add_tmux, complete_path, examples
from shell.cli.environment import recorded_env

HOOK_TIMEOUT_S = 30.0  # a hook that takes longer is stopped: the watch goes on
EVENTS = ("needs_input", "idle", "exited")  # the states whose start runs a hook
NOTICE = {"needs_input": "needs you (its agent asks to approve something)", "idle": "is idle",
          "exited": "is gone (its agent exited)"}
SCREEN_LINES = 5  # of the worker's screen, given to a hook


def register(team_subparsers: Any) -> None:
    p = team_subparsers.add_parser(
        "watch", help="run a hook when a worker's agent needs you, finishes its turn or exits",
        description="Take one team status snapshot every INTERVAL seconds (every pane proven, every agent's screen "
        "read) and, when a worker's agent asks to approve something mid-task (needs_input), turns idle (its turn "
        "finished, waiting for the next message) or exits (or its pane is gone), run the hook for it once: the "
        "command given (environment: PANEFLEET_TEAM, PANEFLEET_WORKER, PANEFLEET_STATE, PANEFLEET_PANE, "
        "PANEFLEET_SCREEN — its last lines), else show a tmux message on the team's clients and ring the terminal "
        "bell. One line per change of a worker's state on stdout (-o json: one JSON object per line). Runs until "
        "interrupted, or for --refreshes N snapshots.",
        epilog=examples("panefleet team watch alpha",
                        ('panefleet team watch alpha --on-needs-input \'notify-send "$PANEFLEET_WORKER needs you"\'',
                         "a desktop notification when an agent asks for an approval")))
    p.add_argument("team", help="the team's name")
    p.add_argument("--on-needs-input", metavar="CMD",
                   help="run by sh -c when a worker's agent asks to approve something mid-task")
    p.add_argument("--on-idle", metavar="CMD", help="run by sh -c when a worker's agent finishes its turn")
    p.add_argument("--on-exit", metavar="CMD", help="run by sh -c when a worker's agent exits or its pane goes")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS", help="between snapshots (default: 2)")
    p.add_argument("--refreshes", type=int, default=0, metavar="N", help="stop after N snapshots (default: never)")
    complete_path(p.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    add_output(p)
    add_tmux(p)
    p.set_defaults(handler=cmd_watch)


def worker_states(result: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each worker's state in a status answer: its screen's, or ``exited`` when its pane is gone or dead."""
    states = {}
    for pane in result.get("panes") or []:
        if pane.get("role") != "worker":
            continue
        if pane.get("verdict") in ("absent", "dead"):
            states[pane["name"]] = ("exited", pane)
        elif pane.get("screen"):
            states[pane["name"]] = (str(pane["screen"]), pane)
    return states


def transitions(before: dict[str, str], now: dict[str, str]) -> list[tuple[str, str, str]]:
    """(worker, from, to) for each worker seen before whose state changed."""
    return [(worker, before[worker], state) for worker, state in now.items()
            if worker in before and before[worker] != state]


def cmd_watch(args: argparse.Namespace) -> int:
    from pure import operations
    from pure.team import TeamStatusRequest
    from shell.cli.operation import (
        emit_json,
        exit_code,
        make_executor,
        print_outcome,
        tmux_socket,
        usage_error,
    )
    from shell.run.loop import run_program

    if not 0.2 <= args.interval <= 3600 or args.refreshes < 0:
        return usage_error(args, "team watch", "--interval must be between 0.2 and 3600 s and --refreshes at least 0")
    environ = dict(os.environ)
    request = TeamStatusRequest(team=args.team, cwd=os.path.abspath(args.cwd), env=recorded_env(environ))
    op = operations.get("team.status")
    assert op is not None
    executor = make_executor(args, environ)
    socket = tmux_socket(args, environ)
    seen: dict[str, str] = {}
    refreshes = 0
    try:
        while True:
            done, journal = run_program(lambda: op.program(request), executor)
            result = done.outcome.result if isinstance(done.outcome.result, dict) else {}
            if result.get("interrupted") is True:  # Ctrl-C during a read ends the watch as it does between reads
                return 0
            if "panes" not in result:
                print_outcome(done, journal, args, lambda answer, _done, _journal: f"watch: {answer.get('error')}")
                return exit_code(done)
            states = worker_states(result)
            for worker, old, new in transitions(seen, {w: s for w, (s, _) in states.items()}):
                pane = states[worker][1]
                line = {"time": time.strftime("%H:%M:%S"), "team": args.team, "worker": worker, "from": old,
                        "state": new, "paneId": pane.get("paneId")}
                if args.output == "json":
                    emit_json(line)
                else:
                    sys.stdout.write(f"{line['time']}  {worker}  {old} -> {new}\n")
                sys.stdout.flush()
                if new not in EVENTS:
                    continue
                command = {"needs_input": args.on_needs_input, "idle": args.on_idle, "exited": args.on_exit}[new]
                screen = _screen(executor, request, worker) if command and new != "exited" else ""
                _hook(command, args.team, worker, new, pane, screen, socket, environ)
            seen = {w: s for w, (s, _) in states.items()}
            refreshes += 1
            if args.refreshes and refreshes >= args.refreshes:
                return 0
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def _hook(command: str | None, team: str, worker: str, state: str, pane: dict[str, Any], screen: str,
          socket: str | None, environ: dict[str, str]) -> None:
    """The hook for one transition: ``command`` by ``sh -c`` (bounded), else a tmux message and the bell."""
    from pure.tmux import facts

    if command:
        env = {**environ, "PANEFLEET_TEAM": team, "PANEFLEET_WORKER": worker, "PANEFLEET_STATE": state,
               "PANEFLEET_PANE": str(pane.get("paneId") or ""), "PANEFLEET_SCREEN": screen}
        try:
            subprocess.run(["/bin/sh", "-c", command], env=env, timeout=HOOK_TIMEOUT_S, check=False,
                           stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            sys.stderr.write(f"panefleet team watch: the hook for {worker} failed: {exc}\n")
        return
    tmux = ["tmux", *(["-L", socket] if socket else [])]
    message = f"panefleet: {team}/{worker} {NOTICE[state]}"
    try:
        clients = subprocess.run([*tmux, "list-clients", "-F", facts.CLIENT_NAME.format], capture_output=True, text=True,
                                 timeout=10, check=False).stdout.split()
        for client in clients:
            subprocess.run([*tmux, "display-message", "-c", client, message], timeout=10, check=False,
                           capture_output=True)
    except (OSError, subprocess.TimeoutExpired):
        pass
    sys.stderr.write("\a")
    sys.stderr.flush()


def _screen(executor: Any, status: Any, worker: str) -> str:
    """The worker's last screen lines, read after its pane proof (``team.peek``); "" when refused."""
    from pure import operations
    from pure.omx.peek import PeekRequest
    from shell.run.loop import run_program

    peek = operations.get("team.peek")
    assert peek is not None
    request = PeekRequest(team=status.team, worker=worker, cwd=status.cwd, env=status.env, lines=SCREEN_LINES)
    done, _journal = run_program(lambda: peek.program(request), executor)
    result = done.outcome.result
    return "\n".join(result["lines"]) if isinstance(result, dict) and result.get("ok") is True else ""
