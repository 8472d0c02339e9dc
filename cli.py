"""panefleet command line. Kept thin and light: heavy modules are imported inside handlers."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO, cast

from shell.cli.args import command_words
from shell.cli.environment import recorded_env

# Modules that add commands: (module, group). Each exposes register(subparsers).
# Where each team command is defined: None for those defined here. With one of them asked for (and
# no help), only its own module is imported to parse the command line.
TEAM_COMMAND_MODULES: dict[str, str | None] = {
    "init": None, "status": None,
    "scale-up": "shell.cli.scale_up", "respawn": "shell.cli.scale_up",
    "scale-down": "shell.cli.scale_down", "debt": "shell.cli.scale_down", "task": "shell.cli.scale_down",
    "list": "shell.cli.listing", "peek": "shell.cli.peek", "attach": "shell.cli.peek",
    "send": "shell.cli.send", "watch": "shell.cli.watch", "logs": "shell.cli.logs",
}
HERDR_SUMMARY = "Herdr worker fleets: runs, owned workspaces and worker panes"  # as shell/cli/herdr.py has it
DOCTOR_SUMMARY = "whether tmux and the agent CLIs a team would launch can start here, with the fix for each"  # as shell/cli/doctor.py has it
TOP_COMMAND_MODULES = (("herdr", "shell.cli.herdr", HERDR_SUMMARY), ("doctor", "shell.cli.doctor", DOCTOR_SUMMARY))
# defined by shell/cli/fleet_args.py (imported only when one of them is asked for)
FLEET_COMMANDS = (("plan", "what converging to a fleet file takes (reads only)"),
                  ("destroy", "stop a fleet file's teams: every worker pane killed after proof, records kept"))

# How `panefleet --help` lists the commands (the order they are added in is the same).
COMMAND_GROUPS = (
    ("fleets", ("plan", "apply", "destroy", "list", "team", "herdr")),
    ("saved plans", ("show",)),
    ("trying it and setting up", ("demo", "doctor", "help", "completion")),
    ("tools for ports and replay", ("schema", "replay", "decide")),
)

START_HERE = (("panefleet demo", "a team on a private tmux server: built, proven, cleaned up"),
              ("panefleet help team", "the team commands, with examples"),
              ("panefleet help team scale-up", "one command in full"),
              ("panefleet help options", "the global options"))

EXIT_CODES = """exit codes:
  0    ok
  1    runtime error (the outcome says what failed)
  2    usage error
  3    finished, but something needs attention: cleanup debt was recorded
       (see `panefleet team debt show`), or for `team status` a pane not proven ours
  4    refused: nothing was changed
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP): the run undid what it created; a second
       Ctrl-C stops at once, and the next scale-up or `team debt reconcile` sweeps the rest
"""


# Team commands whose oh-my-codex operation acts on sanitizeTeamName(TEAM): when that differs from the
# name given, they are refused here (exit 2), so that `scale-down ../ALPHA` never touches team alpha.
# init, respawn and the task commands refuse such names themselves (exit 4, pure/team.py,
# pure/omx/respawn.py, pure/omx/tasks.py).

class UsageError(Exception):
    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser


class Parser(argparse.ArgumentParser):
    """argparse, but usage errors are raised so that `-o json` can still answer with JSON, and they
    name the command or option a typo was probably meant to be. A parser with ``command_groups``
    lists its commands under those titles."""

    given: Sequence[str] = ()
    command_groups: Sequence[tuple[str, Sequence[str]]] = ()

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> Any:
        from shell.cli.args import unknown_option_hint

        raise UsageError(self, message + unknown_option_hint(self, self.given, message))

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices:
            from shell.cli.args import closest

            shown = [str(choice) for choice in action.choices if not str(choice).startswith("_")]  # not _names
            suggestion = closest(str(value), shown)
            hint = f"did you mean {suggestion!r}?" if suggestion is not None else (
                f"choose from {', '.join(map(repr, shown))}")
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} ({hint})")

    def format_help(self) -> str:
        if not self.command_groups:
            return super().format_help()
        from shell.cli.args import grouped_help

        return grouped_help(self, self.command_groups)


def _rewritten_team_name(args: argparse.Namespace) -> str | None:
    """Why the TEAM of a team command is refused as a usage error (exit 2), or None: a name that
    oh-my-codex's sanitisation would change is never mapped onto another team (the task commands say
    it in oh-my-codex's words, as its state layer does)."""
    if getattr(args, "command", None) != "team" or not isinstance(getattr(args, "team", None), str):
        return None
    from pure.omx.names import rewritten_team_name, validate_team_name

    problem = rewritten_team_name(args.team)
    if problem is not None and getattr(args, "team_command", None) == "task":
        return validate_team_name(args.team).swap().value_or(problem)
    return problem


def _common(parser: argparse.ArgumentParser, *, tmux: bool = True, dry_run: bool = False,
            verbose: str | None = None) -> None:
    """The options of a command, and the global ones that apply to it (its help names them; they are
    added to every parser by ``shell.cli.args.finish_tree`` anyway); ``verbose``: what -v does here."""
    from shell.cli.args import add_dry_run, add_output, add_tmux, add_verbose

    add_output(parser)
    if tmux:
        add_tmux(parser)
    if verbose is not None:
        add_verbose(parser, verbose)
    if dry_run:
        add_dry_run(parser)


# --------------------------------------------------------------------------------------- handlers


def cmd_schema(args: argparse.Namespace) -> int:
    """The schema document itself; with ``-o json``, the answer ``{"ok": true, "schema": …}``."""
    from pure.schema import schema_text

    if getattr(args, "output", "text") == "json":
        sys.stdout.write(json.dumps({"ok": True, "schema": json.loads(schema_text())}, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(schema_text())
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from pathlib import Path

    from shell.cli.operation import emit_json, load_operations
    from shell.run.loop import AuditError, panefleet_version, replay

    load_operations()
    try:
        report = replay(Path(args.audit_file))
    except (AuditError, OSError) as exc:
        message = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        sys.stderr.write(f"panefleet replay: {message}\n")
        if args.output == "json":
            emit_json({"ok": False, "error": message, "error_code": "audit_unreadable"})
        return 1
    hint = ""
    if report.divergence and report.recorded_version != panefleet_version():
        hint = (f" (recorded by panefleet {report.recorded_version}, replayed by {panefleet_version()}: "
                "a changed planner explains a divergence)")
    if args.output == "json":
        emit_json({"ok": report.ok, "operation": report.operation, "steps": report.steps,
                   "divergence": report.divergence, "incomplete": report.incomplete,
                   "recordedVersion": report.recorded_version})
    elif report.divergence:
        sys.stdout.write(f"replay of {report.operation} DIVERGES after {report.steps} steps: {report.divergence}{hint}\n")
    elif report.incomplete:
        sys.stdout.write(f"replay of {report.operation}: {report.steps} steps re-derived identically, but the log ends "
                         "before the run finished (the run was interrupted)\n")
    else:
        sys.stdout.write(f"replayed {report.operation}: {report.steps} steps, every decision re-derived identically\n")
    return 0 if report.ok else 1


def cmd_decide(args: argparse.Namespace) -> int:
    """Read {"operation", "request", "journal"} JSON on stdin, print the decision (for ports and tools)."""
    from returns.result import Failure

    from pure import model as m
    from pure import operations, wire
    from pure.program import decide

    data = wire.loads(sys.stdin.read())
    if not isinstance(data.value_or(None), dict):
        sys.stderr.write("panefleet decide: stdin must be a JSON object {operation, request, journal}\n")
        return 2
    body: dict[str, Any] = data.unwrap()
    op = operations.get(str(body.get("operation")))
    if op is None:
        known = ", ".join(sorted(operations.load_all()))
        sys.stderr.write(f"panefleet decide: unknown operation {body.get('operation')!r} (known: {known})\n")
        return 2
    request = wire.structure(body.get("request"), op.request_type)
    entries: list[m.Entry] = []
    journal = body.get("journal", [])
    if not isinstance(journal, list):
        sys.stderr.write("panefleet decide: journal must be a JSON array of entries\n")
        return 2
    for index, raw in enumerate(journal):
        parsed = wire.structure(raw, m.Entry)
        if isinstance(parsed, Failure):
            sys.stderr.write(f"panefleet decide: journal[{index}] is invalid: {parsed.failure().what}\n")
            return 2
        entries.append(parsed.unwrap())
    if isinstance(request, Failure):
        sys.stderr.write(f"panefleet decide: request does not fit {op.request_type.__name__}: "
                         f"{request.failure().what}\n")
        return 2
    req = request.unwrap()
    decision = decide(lambda: op.program(req), entries)
    if getattr(args, "output", "text") == "json":  # the answer; without -o json, the decision itself (ports)
        sys.stdout.write(json.dumps({"ok": True, "decision": wire.unstructure(decision)}, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(wire.to_json(decision))
    return 0


def _leader_pane(args: argparse.Namespace) -> str | None:
    if args.leader_pane:
        return str(args.leader_pane)
    if args.new_session:
        return None
    return os.environ.get("TMUX_PANE") or None


def cmd_team_init(args: argparse.Namespace) -> int:
    from pure.team import TeamInitRequest
    from shell.cli.operation import run_cli_operation, usage_error
    from shell.cli.render import render_init
    from shell.cli.task_input import check_against_team

    if args.host is not None and (not args.cwd.startswith("/") or args.leader_pane is None and not args.new_session):
        return usage_error(args, "team init", f"a team on {args.host} needs --cwd with its folder there (absolute) "
                                              "and --new-session, or --leader-pane with a pane of its tmux server")
    cwd = os.path.abspath(args.cwd) if args.host is None else os.path.normpath(args.cwd)
    leader = _leader_pane(args) if args.host is None else args.leader_pane
    if leader is None and not args.new_session:
        return usage_error(args, "team init", "no leader pane: run inside tmux (panefleet reads $TMUX_PANE), or pass "
                                              "--leader-pane %ID, or --new-session to start one")
    if leader is not None and re.fullmatch(r"%\d+", leader) is None:
        where = "--leader-pane" if args.leader_pane else "$TMUX_PANE"
        return usage_error(args, "team init", f"{where} must be a tmux pane id like %3, not {leader!r} "
                                              "(`tmux display -p '#{pane_id}'` prints the current one)")
    unknown_role = None if args.host is not None else check_against_team(  # a team on a host: its roles are there
        args, args.team, cwd, recorded_env(os.environ), roles=[("--agent-type", args.agent_type)])
    if unknown_role is not None:
        return usage_error(args, "team init", unknown_role)
    request = TeamInitRequest(
        team=args.team, cwd=cwd, env=recorded_env(os.environ), task=args.task, agent_type=args.agent_type,
        leader_pane=leader, new_session=args.new_session, session_name=args.session,
        leader_command=args.leader_command, worker_cli=args.worker_cli,
    )
    return run_cli_operation("team.init", request, args, render=render_init)


def cmd_team_status(args: argparse.Namespace) -> int:
    from pure.team import TeamStatusRequest
    from shell.cli.operation import placed_on, run_cli_operation, usage_error
    from shell.cli.status_view import render_status_explained

    request = TeamStatusRequest(team=args.team, cwd=os.path.abspath(args.cwd), env=recorded_env(os.environ))
    if not 0.2 <= args.interval <= 3600:  # refused alike with or without a terminal
        return usage_error(args, "team status", f"--interval must be between 0.2 and 3600 s, not {args.interval:g}")
    if getattr(args, "watch", False) and sys.stdout.isatty() and getattr(args, "output", "text") == "text":
        from shell.cli.status_view import watch

        return watch(request, args, args.interval)
    on_host = placed_on(args) is not None  # its locks are on that machine: not read from here
    return run_cli_operation("team.status", request, args, render=render_status_explained,
                             annotate=lambda result: {"locks": _team_locks(request.team, request.cwd)}
                             if "panes" in result and not on_host else {})


def _team_locks(team: str, cwd: str) -> list[dict[str, Any]]:
    """The team's scaling and membership locks as held now (``shell/run/fs.py``): who holds them, whether
    that holder is alive, when the lease lapses, and whether the next run may take it over at once."""
    import time
    from pathlib import Path

    from pure.omx.state import TeamPaths, resolve_state_root
    from shell.run import fs

    paths = TeamPaths(resolve_state_root(cwd, recorded_env(os.environ)), team)
    held = []
    for kind, path in (("scaling", paths.scaling_lock), ("membership", paths.membership_lock)):
        holder = fs.inspect_lock(Path(path))
        if holder.exists:
            held.append({"lock": kind, "path": path, "pid": holder.pid, "alive": holder.alive,
                         "stale": holder.abandoned(time.time() * 1000), "holder": holder.describe()})
    return held


def cmd_demo(args: argparse.Namespace) -> int:
    from shell.demo.team import run_demo

    return run_demo(keep=args.keep, socket=args.tmux_socket, as_json=args.output == "json")


def cmd_completion(args: argparse.Namespace) -> int:
    """A completion script generated from the whole parser by shtab (the tree is what `panefleet -h`
    shows, so completion never disagrees with the parser)."""
    import shtab

    script = shtab.complete(build_parser(), shell=args.shell)
    if args.output == "json":
        sys.stdout.write(json.dumps({"ok": True, "shell": args.shell, "script": script}) + "\n")
    else:
        sys.stdout.write(script)
    return 0


def cmd_help(args: argparse.Namespace) -> int:
    """The help of the command named (``options``: the global options); an unknown one is a usage error."""
    from shell.cli.args import closest, global_options_help, subcommands

    words = list(args.topic)
    if words == ["options"]:
        text = global_options_help()
    else:
        node = build_parser([*words, "--help"])  # builds what the words name in full
        for depth, word in enumerate(words):
            children = subcommands(node)
            if word not in children:
                where = " ".join(["panefleet", *words[:depth]])
                known = [*(name for name in children if not name.startswith("_")), *(["options"] if depth == 0 else [])]
                suggestion = closest(word, known)
                hint = (f"did you mean {suggestion!r}?" if suggestion is not None
                        else f"choose from {', '.join(known)}" if known else "it has no subcommands")
                return _usage("panefleet help", f"{where} has no command {word!r} ({hint})", args.output == "json")
            node = children[word]
        text = node.format_help()
    if args.output == "json":
        sys.stdout.write(json.dumps({"ok": True, "help": text}, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(text)
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    """A saved plan (``apply FILE``), or the fleet file (``apply [-f FILE.toml]``, shell/cli/fleet.py)."""
    from shell.cli.fleet import apply_saved, cmd_apply_fleet, is_fleet_plan

    if args.plan_file is not None and is_fleet_plan(args.plan_file):
        return apply_saved(args)
    if args.plan_file is not None and not args.plan_file.endswith(".toml"):
        from shell.cli.saved_plan import apply_plan

        return apply_plan(args)

    args.file = args.file or args.plan_file
    return cmd_apply_fleet(args)


def cmd_show(args: argparse.Namespace) -> int:
    from shell.cli.saved_plan import show_plan

    return show_plan(args)


# ----------------------------------------------------------------------------------------- parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("panefleet")
    except PackageNotFoundError:
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``: the package metadata is read only when asked (it costs ~25 ms of every start)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        if getattr(parser, "answers_json", False):  # -o json anywhere on the line (set by _main)
            sys.stdout.write(json.dumps({"ok": True, "version": _version()}) + "\n")
        else:
            sys.stdout.write(f"panefleet {_version()}\n")
        parser.exit()


COMPLETION_HELP = """Print a completion script for bash or zsh, made from panefleet's own command tree. Save it
where the shell looks for completions (see the examples): for bash, bash-completion's directory; for zsh, a
directory on $fpath, e.g. ~/.zfunc with `fpath+=(~/.zfunc)` before `compinit` in ~/.zshrc.
"""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command tree; with ``argv``, only the command group it selects is built in full
    (the others get a one-line placeholder), and of the team commands only those of the module that
    defines the selected one, which keeps start-up fast."""
    from shell.cli.args import AUDIT_VERBOSE, add_host, complete_path, examples, finish_tree

    words = command_words(list(argv)) if argv is not None else []
    first = words[0] if words else None
    asks_help = argv is not None and any(word in ("-h", "--help") for word in argv)
    team_command = words[1] if first == "team" and len(words) > 1 and not asks_help else None
    team_modules = _team_modules(team_command) if argv is None or first == "team" else ()
    parser = Parser(
        prog="panefleet",
        description="Plan and apply changes to fleets of AI coding-agent worker panes in tmux and Herdr, "
        "touching only panes it can prove it owns. Every change to a fleet can be planned first with "
        "--dry-run: it reads the real state, prints what would change, and changes nothing.",
        epilog=f"{examples(*START_HERE, title='start here')}\n\n{EXIT_CODES}",
    )
    parser.command_groups = COMMAND_GROUPS
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print panefleet's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    team = sub.add_parser(
        "team", help="oh-my-codex teams of tmux worker panes: scale, prove, respawn",
        description="oh-my-codex teams: a leader pane and worker panes running agent CLIs (Codex, Claude, "
        "Gemini) in tmux, with the team's state in .omx/state/team/TEAM, shared with oh-my-codex 0.20.3. "
        "A team is found from any folder inside its project, on the tmux server it was made on. scale-up and "
        "scale-down of a team oh-my-codex made run only with OMX_TEAM_SCALING_ENABLED=1, as in oh-my-codex "
        "(a team panefleet made scales as it is). Every command that changes something takes --dry-run.",
        epilog=examples(('panefleet team init alpha --leader-pane "$TMUX_PANE" --worker-cli codex',
                         "a team led by this pane"),
                        ("panefleet team scale-up alpha --count 2 --dry-run", "what adding two workers would do"),
                        ("panefleet team status alpha", "every pane proven live and ours, or not")))
    team_sub = team.add_subparsers(dest="team_command", metavar="TEAM_COMMAND")
    team_sub.required = True

    p = team_sub.add_parser(
        "init", help="write team state bound to a proven, owner-tagged leader pane",
        description="Write the state of the new team TEAM, bound to its leader pane: the pane given (default: "
        "$TMUX_PANE, the pane it runs in) or the first pane of a new tmux session (--new-session). The pane is "
        "proven live and tagged as the team's first; a pane another team owns is refused.",
        epilog=examples(('panefleet team init alpha --leader-pane "$TMUX_PANE" --worker-cli codex',
                         "led by this pane, workers run Codex"),
                        ("panefleet team init alpha --new-session --session alpha-lead --dry-run",
                         "what a new leader session would be"),
                        ("panefleet team init demo --new-session --worker-cli placeholder",
                         "no agent CLI needed")))
    p.add_argument("team", help="the new team's name: 1-30 characters of a-z and 0-9 joined by single '-'")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--leader-pane", metavar="%ID", help="bind to this tmux pane (default: $TMUX_PANE)")
    where.add_argument("--new-session", action="store_true", help="start a new tmux session for the leader")
    p.add_argument("--session", metavar="NAME",
                   help="the team's tmux session: the name --new-session gives it (default: omx-team-TEAM)")
    p.add_argument("--leader-command", metavar="CMD", help="command for a --new-session leader pane "
                   "(default: a shell)")
    p.add_argument("--task", default="", help="the team's task description")
    p.add_argument("--agent-type", default="executor", metavar="ROLE",
                   help="the team's agent type, recorded in its config (default: executor)")
    p.add_argument("--worker-cli", choices=("codex", "claude", "gemini", "placeholder"), default=None,
                   help="the agent CLI the workers run unless OMX_TEAM_WORKER_CLI or OMX_TEAM_WORKER_CLI_MAP "
                        "chooses; placeholder is panefleet's stand-in agent (default: chosen at each scale-up, "
                        "as oh-my-codex does)")
    complete_path(p.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    _common(p, dry_run=True)
    add_host(p)
    p.set_defaults(handler=cmd_team_init)

    p = team_sub.add_parser(
        "status", help="membership with a live proof of every pane, and recorded debt",
        description="The team's members, each pane proven live and ours (or not) with what its agent's screen "
        "shows, the cleanup debt recorded and the locks held. Exit 3 when a pane is not proven live and ours.",
        epilog=examples("panefleet team status alpha",
                        ("panefleet team status alpha --watch --interval 5", "redraw every 5 s"),
                        ("panefleet team status alpha -o json", "for programs")))
    p.add_argument("team", help="the team's name")
    complete_path(p.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    p.add_argument("--watch", action="store_true",
                   help="on a terminal, redraw until interrupted: one snapshot per refresh (without a terminal: once)")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                   help="refresh interval of --watch (default: 2)")
    _common(p, verbose=AUDIT_VERBOSE)
    add_host(p)
    p.set_defaults(handler=cmd_team_status)

    for module_name in team_modules:
        _register(module_name, team_sub)
    for group, module_name, summary in TOP_COMMAND_MODULES:
        if argv is None or first == group:
            _register(module_name, sub)
        else:
            sub.add_parser(group, help=summary)
    if argv is None or first in dict(FLEET_COMMANDS):
        _register("shell.cli.fleet_args", sub)
    else:
        for command, summary in FLEET_COMMANDS:
            sub.add_parser(command, help=summary)

    p = sub.add_parser(
        "apply", help="converge to the fleet file, or carry out a saved plan",
        description="Without FILE (or with -f FILE.toml): read the teams the fleet file declares, show the plan "
        "`panefleet plan` shows and carry it out once confirmed (docs/fleet.md). With a saved plan FILE: run its "
        "request for real. Before the first change, every read must observe what the plan saw (the clock, fresh "
        "ids, locks and waits excepted): otherwise nothing is changed and the first fact that differs is named "
        "(exit 4).",
        epilog=examples(("panefleet apply", "converge to ./panefleet.toml, after asking"),
                        ("panefleet apply --yes -f fleet.toml", "without asking"),
                        ("panefleet apply up.json", "carry out a plan saved with --plan-out, or refuse if the "
                                                    "team changed")))
    complete_path(p.add_argument("plan_file", metavar="FILE", nargs="?",
                                 help="a plan file written by --plan-out (default: the fleet file)"))
    from shell.cli.fleet_args import add_apply_options

    add_apply_options(p)
    _common(p, verbose=AUDIT_VERBOSE)
    p.set_defaults(handler=cmd_apply)

    p = sub.add_parser(
        "show", help="show a plan saved with --plan-out",
        description="Print a saved plan: the command it was made for, when and by which panefleet, and what "
        "it would change. Nothing is read from tmux or herdr.",
        epilog=examples("panefleet show up.json", ("panefleet show up.json --steps", "with every step"),
                        "panefleet show up.json -o json"))
    complete_path(p.add_argument("plan_file", metavar="FILE", help="a plan file written by --plan-out"))
    p.add_argument("--steps", action="store_true", help="also list every step of the plan")
    _common(p, tmux=False, verbose="also list every step of the plan (as --steps)")
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser(
        "demo", help="run a self-contained demo on a private tmux server",
        description="Build a team on a private tmux server, prove its panes and clean up. No agent CLI is "
        "needed; tmux is.",
        epilog=examples("panefleet demo", ("panefleet demo --keep", "leave the server running to attach to")))
    p.add_argument("--keep", action="store_true", help="leave the demo server running to attach to")
    _common(p)
    p.set_defaults(handler=cmd_demo)

    p = sub.add_parser(
        "help", help="help on a command, or on the global options",
        description="Print the help of COMMAND (`panefleet help team scale-up` is `panefleet team scale-up "
        "--help`), of the global options (`panefleet help options`), or without COMMAND panefleet's own.",
        epilog=examples("panefleet help", "panefleet help team scale-up", "panefleet help options"))
    p.add_argument("topic", nargs="*", default=[], metavar="COMMAND",
                   help="a command with its group (`team scale-up`), or `options`")
    _common(p, tmux=False)
    p.set_defaults(handler=cmd_help)

    p = sub.add_parser("completion", help="print a bash or zsh completion script", description=COMPLETION_HELP,
                       epilog=examples("panefleet completion bash > ~/.local/share/bash-completion/completions/panefleet",
                                       "panefleet completion zsh > ~/.zfunc/_panefleet"))
    p.add_argument("shell", choices=("bash", "zsh"), help="the shell the script is for")
    _common(p, tmux=False)
    p.set_defaults(handler=cmd_completion)

    p = sub.add_parser(
        "schema", help="print the JSON Schema of the wire format",
        description="Print the JSON Schema of the wire format (docs/schema.json): steps, observations, journal "
        "entries and decisions, of which goldens and audit logs are made, for ports and tools (docs/ports.md).",
        epilog=examples("panefleet schema > schema.json", ("panefleet schema -o json", '{"ok": true, "schema": …}')))
    _common(p, tmux=False)
    p.set_defaults(handler=cmd_schema)

    p = sub.add_parser(
        "replay", help="re-derive every decision of a recorded run from its audit log",
        description="Feed a run's audit log back to the planner and check that every decision comes out the "
        "same; a divergence is named (exit 1). Nothing is run. `-v` on a run prints its audit log's path.",
        epilog=examples("panefleet replay ~/.local/state/panefleet/audit/20260501T093000.000Z-team-scale_up-1f2e3d4c.jsonl"))
    complete_path(p.add_argument("audit_file", help="an audit log: a .jsonl file in the audit directory of panefleet's "
                                                    "state ($PANEFLEET_STATE_DIR, else $XDG_STATE_HOME/panefleet, "
                                                    "else ~/.local/state/panefleet)"))
    _common(p, tmux=False)
    p.set_defaults(handler=cmd_replay)

    p = sub.add_parser(
        "decide", help="answer one planning question given as JSON on stdin",
        description="Read one planning question, a JSON object {operation, request, journal}, on stdin and print "
        "the decision: the next steps, or the outcome (docs/ports.md). Nothing is run.",
        epilog=examples("panefleet decide < question.json", ("panefleet decide -o json < question.json",
                                                             '{"ok": true, "decision": …}')))
    _common(p, tmux=False)
    p.set_defaults(handler=cmd_decide)
    from shell.cli import complete_names, listing

    listing.register_top(sub)
    complete_names.register(sub)  # hidden: the names the completion scripts offer
    finish_tree(parser)
    if argv is None:
        from shell.cli.args import complete_names as names_complete

        names_complete(parser)
    return parser


def _team_modules(command: str | None) -> tuple[str, ...]:
    """The modules whose team commands the command line needs: the selected command's own (none for
    one defined here), or every one (no command, help, or a command that is not known)."""
    if command in TEAM_COMMAND_MODULES:
        selected = TEAM_COMMAND_MODULES[command]
        return () if selected is None else (selected,)
    return tuple(dict.fromkeys(m for m in TEAM_COMMAND_MODULES.values() if m is not None))


def _register(module_name: str, subparsers: Any) -> None:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return
    module.register(subparsers)


def _unwind_on_termination() -> Callable[[], None]:
    """SIGTERM and SIGHUP end panefleet like Ctrl-C does: as an exception, so that every ``finally``
    runs (locks released by ``shell/run/loop.py``, a running call's process group killed by
    ``shell/run/process.py``). A signal panefleet was started with ignored (``nohup``) stays ignored.
    Returns what puts the previous handlers back."""
    import signal
    import threading

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) == signal.SIG_DFL:
                previous[sig] = signal.signal(sig, stop)

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


class _Watched:
    """A text stream that remembers whether anything was written to it, and its last line."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.written = False
        self.last_line = ""

    def write(self, text: str) -> int:
        if text:
            self.written = True
            lines = [line for line in text.splitlines() if line.strip()]
            if lines:
                self.last_line = lines[-1].strip()
        return self.inner.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _usage(parser_prog: str, message: str, as_json: bool, usage: str = "") -> int:
    from shell.cli.explain import Scene, explain

    explained = explain(message, Scene())  # e.g. a team name oh-my-codex would rewrite, in words
    message = explained.text if explained.known else message
    if usage:
        sys.stderr.write(usage)
    sys.stderr.write(f"{parser_prog}: error: {message}\n")
    if as_json:
        sys.stdout.write(json.dumps({"ok": False, "error": f"usage: {message}", "error_code": "usage_error"}) + "\n")
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    from shell.run import startup

    if argv is None:  # a whole process: start up without the cyclic collector (shell/run/startup.py)
        startup.hold()
    try:
        code = _main(argv)
    finally:
        startup.release()
    if argv is None:  # and end without the interpreter's teardown
        startup.leave(code)
    return code


def _main(argv: Sequence[str] | None) -> int:
    from shell.cli.args import apply_global_defaults, wants_json

    args_list = list(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(args_list)
    parser = build_parser(args_list)
    parser.answers_json = as_json  # type: ignore[attr-defined]  # for --version
    try:
        args = parser.parse_args(args_list)
    except UsageError as exc:
        return _usage(exc.parser.prog, str(exc), as_json, exc.parser.format_usage())
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    from shell.run import audit_prune, deadlines
    from shell.run.tmux_control import mode_from_env as tmux_mode_from_env

    try:
        problem = apply_global_defaults(args)
        if problem is not None:
            raise ValueError(problem)
        deadlines.from_env(os.environ)
        tmux_mode_from_env(os.environ)
        audit_prune.policy_from_env(os.environ)
        problem = _rewritten_team_name(args)
        if problem is not None:
            raise ValueError(problem)
    except ValueError as exc:
        return _usage("panefleet", str(exc), as_json)
    from shell.cli.team_home import prepare

    refused = prepare(args, os.environ)  # the team's folder and tmux server (every team command but init)
    if refused is not None:
        return refused
    restore_signals = _unwind_on_termination()
    out, err = sys.stdout, sys.stderr
    watched_out, watched_err = _Watched(out), _Watched(err)
    sys.stdout, sys.stderr = cast(TextIO, watched_out), cast(TextIO, watched_err)
    code, failure_code = 1, "failed"
    try:
        code = int(args.handler(args))
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        code = 130
    except BrokenPipeError:
        code = 1
    except Exception as exc:  # noqa: BLE001 - a last line of defence: no tracebacks for users
        if os.environ.get("PANEFLEET_DEBUG"):
            raise
        message = f"internal error: {type(exc).__name__}: {exc} (set PANEFLEET_DEBUG=1 for a traceback)"
        sys.stderr.write(f"panefleet: {message}\n")
        code, failure_code = 1, "internal_error"
    finally:
        sys.stdout, sys.stderr = out, err
        restore_signals()
    if args.output == "json" and not watched_out.written:
        # A command that answered nothing on stdout (it failed early): JSON mode still answers one object.
        answer: dict[str, Any] = {"ok": code == 0}
        if code != 0:
            answer["error"] = watched_err.last_line or f"exit status {code}"
            answer["error_code"] = "interrupted" if code == 130 else failure_code
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
