"""``panefleet team logs TEAM WORKER [--follow] [-n LINES]``: a worker's scrollback — its live pane's, after
its pane proof, or the transcript saved when its pane was killed (``pure/omx/logs.py``). ``--follow``
reads the pane again every second and prints what is new, until Ctrl-C or the pane goes."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from shell.cli.args import add_output, add_tmux, complete_path, examples
from shell.cli.environment import recorded_env

FOLLOW_INTERVAL_S = 1.0
LINES = 10_000  # as pure/omx/transcripts.py LINES (not imported: the CLI stays light until a command runs)


def register(team_subparsers: Any) -> None:
    p = team_subparsers.add_parser(
        "logs", help="a worker's scrollback: its live pane's, or the transcript kept when its pane was killed",
        description="Print WORKER's scrollback (the last LINES lines of its pane's history and screen): a member's "
        "pane after its pane proof (live with its pinned pid and the team's owner tag); for a worker removed since, "
        "or one whose pane is gone, the newest transcript saved in the team's transcripts/ folder before its "
        "pane was killed (which file and when on stderr). An unknown worker is refused, with the team's workers "
        "and saved transcripts listed. --follow then reads the pane every second and prints the lines that are "
        "new, until Ctrl-C or the pane goes (exit 0 either way).",
        epilog=examples(("panefleet team logs alpha worker-2 -n 50", "the last 50 lines"),
                        ("panefleet team logs alpha worker-2 --follow", "and what it prints next, until Ctrl-C"),
                        ("panefleet team logs alpha worker-3 -o json", "a removed worker's transcript, its file "
                         "and when it was saved")))
    p.add_argument("team", help="the team's name")
    p.add_argument("worker", help="the worker's name, e.g. worker-2 (`panefleet team status TEAM` lists them)")
    p.add_argument("-n", "--lines", type=int, default=LINES, metavar="LINES",
                   help=f"how many lines, 1 to {LINES} (default: {LINES})")
    p.add_argument("-f", "--follow", action="store_true",
                   help="keep reading a live pane every second and print its new lines, until Ctrl-C or the pane goes")
    complete_path(p.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    add_output(p)
    add_tmux(p)
    p.set_defaults(handler=cmd_logs)


def render_logs(result: dict[str, Any]) -> str:
    if not result.get("ok"):
        return f"logs failed: {result.get('error')}"
    if result.get("source") == "transcript":
        sys.stderr.write(f"{_saved_note(result)}\n")
    return "\n".join(result["lines"])


def _saved_note(result: dict[str, Any]) -> str:
    problem = result.get("paneProblem")
    why = f"its pane was not read ({problem})" if problem else "it is no longer a member"
    count = len(result.get("transcripts") or [])
    return (f"{result['worker']}: {why}; the transcript saved {result['savedAt']}"
            f"{f' (the newest of {count})' if count > 1 else ''}: {result['path']}")


def cmd_logs(args: argparse.Namespace) -> int:
    from pure.omx.logs import LogsRequest
    from shell.cli.operation import run_cli_operation

    environ = dict(os.environ)
    request = LogsRequest(team=args.team, worker=args.worker, cwd=os.path.abspath(args.cwd),
                          env=recorded_env(environ), lines=args.lines)
    if not args.follow:
        return run_cli_operation("team.logs", request, args, env=environ, render=render_logs)
    return _follow(args, request, environ)


def _follow(args: argparse.Namespace, request: Any, environ: dict[str, str]) -> int:
    """The scrollback, then each second the lines that are new (``added``), while the pane is the one
    first read and proven its; Ctrl-C or the pane going end it with exit 0."""
    from pure import operations
    from shell.cli.operation import emit_json, exit_code, make_executor, print_outcome
    from shell.run.loop import run_program

    op = operations.get("team.logs")
    assert op is not None
    executor = make_executor(args, environ)
    as_json = args.output == "json"
    done, journal = run_program(lambda: op.program(request), executor)
    result = done.outcome.result if isinstance(done.outcome.result, dict) else {}
    if result.get("ok") is not True:
        print_outcome(done, journal, args, lambda answer, _done, _journal: render_logs(answer))
        return exit_code(done)
    _print(result, result["lines"], as_json, emit_json)
    pane, seen = result.get("paneId"), list(result["lines"])
    if result.get("source") != "pane":
        sys.stderr.write(f"{args.worker} has no live pane to follow\n")
        return 0
    try:
        while True:
            time.sleep(FOLLOW_INTERVAL_S)
            done, _journal = run_program(lambda: op.program(request), executor)
            now = done.outcome.result if isinstance(done.outcome.result, dict) else {}
            if now.get("source") != "pane" or now.get("paneId") != pane:
                sys.stderr.write(f"{args.worker}'s pane {pane} is gone (or no longer proven its): stopped following\n")
                return 0
            _print(now, added(seen, now["lines"]), as_json, emit_json)
            seen = list(now["lines"])
    except KeyboardInterrupt:
        return 0


def _print(result: dict[str, Any], lines: list[str], as_json: bool, emit_json: Any) -> None:
    if as_json:
        emit_json({**result, "lines": lines})
    elif lines:
        if result.get("source") == "transcript":
            sys.stderr.write(f"{_saved_note(result)}\n")
        sys.stdout.write("".join(f"{line}\n" for line in lines))
    sys.stdout.flush()


def added(before: list[str], now: list[str]) -> list[str]:
    """The lines of ``now`` that ``before`` did not show: ``now`` continues ``before`` from the place the
    read window slid to (``before[d:]`` is where ``now`` starts); when no place fits (the agent redrew
    lines, or more came than one read holds), from the first line that differs from ``before`` at the
    best place found."""
    best, best_run = len(before), 0
    for d in (i for i, line in enumerate(before) if now and line == now[0]):
        run = 0
        while d + run < len(before) and run < len(now) and before[d + run] == now[run]:
            run += 1
        if d + run == len(before):
            return now[run:]
        if run > best_run:
            best, best_run = d, run
    return now[best_run:] if best < len(before) else now
