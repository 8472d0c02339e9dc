"""``panefleet herdr …``: the Herdr worker fleet command group.

``run start|settle|list`` maintain the live run set in the store; ``open``, ``retire`` and
``reconcile`` run the pure programs of ``pure.herdr.fleet`` (docs/herdr-fleet.md) through the shell loop (``--dry-run``:
real reads, predicted changes); ``status`` shows the store and what herdr lists; ``follow`` is the
follower a worker pane displays. ``--session NAME`` or ``HERDR_SESSION`` picks the herdr session
(default ``fleet``), ``--machine LABEL`` instead a saved herdr machine (``where_of``; docs/herdr-fleet.md,
"Saved machines"); ``PANEFLEET_STATE_DIR`` (else ``$XDG_STATE_HOME/panefleet``) holds the store;
``herdr`` is resolved on PATH at call time; without it, the commands that drive herdr refuse at once and
the others say what they did not check (``need_herdr``). Heavy modules are imported inside the handlers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from shell.cli.herdr_text import (
    render_open,
    render_reconcile,
    render_retire,
    render_run_settle,
    render_run_start,
    render_status,
)

_RUN_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_PROJECT = re.compile(r"^[A-Za-z0-9._-]{1,80}$")
# A saved herdr machine's label or id, as `herdr machine list` shows it (never an option-like word).
_MACHINE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}$")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from shell.cli.args import AUDIT_VERBOSE, examples

    start = "panefleet herdr run start --project api --issue 42 --attempt 1 --run-id api-42-1 --pid 51234"
    group = subparsers.add_parser(
        "herdr", help="Herdr worker fleets: runs, owned workspaces and worker panes",
        description="Herdr worker fleets: panefleet keeps the live runs in its store (`run start`, `run "
        "settle`) and makes the workspaces it owns in herdr show a worker pane for each of them (`open`, "
        "`retire`, `reconcile`), touching only workspaces and panes it can prove are its own. It drives the "
        "`herdr` found on PATH (docs/herdr-fleet.md).",
        epilog=examples((start, "a live run of project api"),
                        ("panefleet herdr reconcile --dry-run", "what a pass would open and close"),
                        ("panefleet herdr status", "the store beside what herdr lists")))
    sub = group.add_subparsers(dest="herdr_command", metavar="HERDR_COMMAND")
    sub.required = True

    run = sub.add_parser(
        "run", help="the live run set kept in the store",
        description="The runs panefleet's store keeps for each herdr session ($PANEFLEET_STATE_DIR, else "
        "$XDG_STATE_HOME/panefleet): live ones get a worker pane, settled ones are kept to tell what a "
        "leftover pane belonged to.",
        epilog=examples(start, "panefleet herdr run settle api-42-1", "panefleet herdr run list"))
    run_sub = run.add_subparsers(dest="run_command", metavar="RUN_COMMAND")
    run_sub.required = True
    p = run_sub.add_parser(
        "start", help="add a run to the live set",
        description="Add a run to the live set of the herdr session (starting a run again resets its attempt "
        "budget). Only the store changes: `open` or `reconcile` gives the run its pane.",
        epilog=examples((start, "needs --pid to get a pane"),
                        ("panefleet herdr run start --project api --issue 42 --attempt 2 --run-id api-42-2 "
                         "--pid 51300 --dry-run", "what it would record")))
    p.add_argument("--project", required=True,
                   help="the project the run works for; its workers' workspace is labelled PROJECT-workers "
                        "(letters, digits, '.', '_', '-'; at most 80)")
    p.add_argument("--issue", required=True, type=int, help="the number of the issue the run works on")
    p.add_argument("--attempt", required=True, type=int, help="which attempt at the issue the run is")
    p.add_argument("--run-id", required=True,
                   help="the run's id (letters, digits, '.', '_', ':', '-'; at most 128)")
    p.add_argument("--pid", type=int, default=None,
                   help="the pid of the session host the run's pane represents (no pane is opened without it)")
    p.add_argument("--session-file", default=None, metavar="FILE",
                   help="the run's agent session file, recorded with the run")
    _common(p, dry_run=True)
    p.set_defaults(handler=cmd_run_start)
    p = run_sub.add_parser(
        "settle", help="mark a run settled (its pane is retired by the next reconcile)",
        description="Mark a run settled: the next `reconcile` closes its pane. The run stays in the store, so "
        "that a pane it leaves is still known as its own.",
        epilog=examples("panefleet herdr run settle api-42-1", "panefleet herdr run settle api-42-1 --dry-run"))
    p.add_argument("run_id", help="the run's id (its --run-id)")
    _common(p, herdr=False, dry_run=True)
    p.set_defaults(handler=cmd_run_settle)
    p = run_sub.add_parser(
        "list", help="every run of the herdr session in the store",
        description="Every run of the herdr session in the store, live or settled, with its pid, pane and "
        "spent attempts. Nothing is asked of herdr.",
        epilog=examples("panefleet herdr run list", "panefleet herdr run list --session review -o json"))
    _common(p)
    p.set_defaults(handler=cmd_run_list)

    p = sub.add_parser(
        "open", help="open a worker pane for a live run (zero residue on failure)",
        description="Open the worker pane of a live run in its project's owned workspace (made when "
        "missing); a pane of the run that still stands is reused. An open that fails closes what it "
        "created.",
        epilog=examples("panefleet herdr open api-42-1 --dry-run", "panefleet herdr open api-42-1"))
    p.add_argument("run_id", help="the live run's id (its --run-id)")
    _common(p, dry_run=True)
    p.set_defaults(handler=cmd_open)

    p = sub.add_parser(
        "retire", help="prove a run's pane is ours, release it and close it",
        description="Prove the run's pane is ours (listed in a workspace panefleet owns), release it and "
        "close it; a pane that cannot be proven ours is refused and left alone.",
        epilog=examples("panefleet herdr retire api-42-1", "panefleet herdr retire api-42-1 --session review"))
    p.add_argument("run_id", help="the run's id (its --run-id)")
    _common(p, dry_run=True)
    p.set_defaults(handler=cmd_retire)

    p = sub.add_parser(
        "reconcile", help="make the owned worker workspaces agree with the live run set",
        description="One pass over the workspaces panefleet owns: open a pane for each live run that has "
        "none, close the panes of settled runs and stray ones, remove a workspace left empty. What it owns "
        "but could not close is recorded as debt (exit 3) and retried by the next pass.",
        epilog=examples(("panefleet herdr reconcile --dry-run", "what the pass would do"),
                        "panefleet herdr reconcile",
                        ("panefleet herdr reconcile --managed api --managed web",
                         "also clean api's and web's workspaces")))
    p.add_argument("--managed", action="append", default=[], metavar="PROJECT",
                   help="also clean this project's workspaces when it has no live run (repeatable)")
    p.add_argument("--max-attempts", type=int, default=3, metavar="N",
                   help="how many failed re-establishments in a row a run may have (default 3)")
    _common(p, dry_run=True)
    p.set_defaults(handler=cmd_reconcile)

    p = sub.add_parser(
        "status", help="the store's runs and workspaces, and what herdr lists for them",
        description="The store's runs and workspaces of the herdr session beside what herdr lists for them. "
        "Nothing is changed.",
        epilog=examples("panefleet herdr status", ("panefleet herdr status --watch", "redraw every 2 s"),
                        "panefleet herdr status --session review -o json"))
    p.add_argument("--watch", action="store_true",
                   help="on a terminal, redraw until interrupted (without a terminal: once)")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                   help="refresh interval of --watch (default: 2)")
    _common(p, verbose=AUDIT_VERBOSE)
    p.set_defaults(handler=cmd_status)

    p = sub.add_parser(
        "follow", help="show a run's state (what a worker pane displays)",
        description="Show a run's state as its worker pane does, redrawn until the run settles or leaves the "
        "store. Only the store is read.",
        epilog=examples("panefleet herdr follow api-42-1", ("panefleet herdr follow api-42-1 --once", "print it once")))
    p.add_argument("run_id", help="the run's id (its --run-id)")
    p.add_argument("--once", action="store_true", help="print the state once and exit")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                   help="seconds between refreshes (default: 2)")
    _common(p, herdr=False)
    p.set_defaults(handler=cmd_follow)


def _common(parser: argparse.ArgumentParser, *, herdr: bool = True, dry_run: bool = False,
            verbose: str | None = None) -> None:
    from shell.cli.args import add_dry_run, add_output, add_session, add_verbose

    add_output(parser)
    if herdr:
        add_session(parser, "herdr session (default: $HERDR_SESSION, else fleet)")
        parser.add_argument("--machine", metavar="LABEL", default=None,
                            help="a saved herdr machine (`herdr machine list`): every herdr call goes through "
                                 "`herdr --machine LABEL` (herdr's own SSH transport), instead of --session")
    if verbose is not None:
        add_verbose(parser, verbose)
    if dry_run:
        add_dry_run(parser)


# ------------------------------------------------------------------------------------------ helpers


def session_of(args: argparse.Namespace, env: Mapping[str, str]) -> str:
    return str(getattr(args, "session", None) or env.get("HERDR_SESSION") or "fleet")


def where_of(args: argparse.Namespace, env: Mapping[str, str]) -> tuple[str, str | None] | str:
    """The (session, machine) a command works in, or why that is a usage error. A saved machine
    (``--machine``) takes no session: herdr refuses ``--machine`` with ``--session``, so panefleet does
    too, and ``$HERDR_SESSION`` does not apply to it (its runs are recorded with session "")."""
    machine = getattr(args, "machine", None)
    if machine is None:
        return session_of(args, env), None
    if getattr(args, "session", None):
        return "--machine cannot be combined with --session (herdr runs a saved machine's commands on its own server)"
    if not _MACHINE.match(machine):
        return f"machine {machine!r} must match {_MACHINE.pattern} (a label or id `herdr machine list` shows)"
    return "", str(machine)


def lock_path(env: Mapping[str, str]) -> str:
    from shell.store.herdr import state_dir

    return str(state_dir(env) / "herdr.lock")


def follower_prefix(env: Mapping[str, str]) -> tuple[str, ...]:
    """How a pane's shell starts the follower: ``$PANEFLEET_FOLLOWER`` (words), else this panefleet.

    The pane's shell does not inherit our environment, so an explicit state dir is passed as a shell
    assignment prefix. Words that would not survive herdr's unquoted ``pane run`` are refused by the
    program before any mutation.
    """
    override = env.get("PANEFLEET_FOLLOWER")
    if override:
        return tuple(override.split())
    argv0 = sys.argv[0] if sys.argv else ""
    exe = argv0 if os.path.isabs(argv0) and os.path.basename(argv0) == "panefleet" else "panefleet"
    prefix: tuple[str, ...] = ()
    if env.get("PANEFLEET_STATE_DIR"):
        prefix = (f"PANEFLEET_STATE_DIR={env['PANEFLEET_STATE_DIR']}",)
    return (*prefix, exe)


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if args.output == "json":
        sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(text.rstrip("\n") + "\n")


def _fail(args: argparse.Namespace, reason: str, code: int = 1, *, error_code: str | None = None) -> int:
    if args.output == "json":
        if error_code is None:  # a usage error, or a failure in words (shell/cli/explain.py)
            from shell.cli.explain import Scene, explain

            error_code = "usage_error" if code == 2 else explain(reason, Scene()).code
        answer = {"ok": False, "error": reason, "error_code": error_code}
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"panefleet herdr: {reason}\n")
    return code


HERDR_NOT_FOUND = "herdr_not_found"
ABOUT_HERDR = (
    "Herdr is a terminal workspace manager for coding agents, and panefleet drives its command line "
    "(faithful to herdr 0.8.2; docs/herdr-fleet.md). Install it (https://herdr.dev: its installer, Homebrew, or a "
    "release binary from https://github.com/herdrdev/herdr/releases) and put the directory that holds `herdr` on "
    "PATH, where panefleet looks it up at every call."
)


def need_herdr(args: argparse.Namespace, env: Mapping[str, str], *, without: str | None = None) -> int | None:
    """The one check every ``panefleet herdr`` command makes for the herdr binary, found as every herdr
    step finds it (an executable ``herdr`` on ``env``'s PATH, ``shell/run/process.py`` ``which``).

    A command that drives herdr (``without`` None) calls it right after its usage checks and, when herdr
    is missing, answers exit 1 with ``error_code`` ``herdr_not_found``: nothing was read or written. A
    command that touches only panefleet's run store goes on; ``without`` says, in a note on stderr,
    what it therefore did not check. None: go on. docs/herdr-fleet.md, "Without herdr"."""
    from shell.run.process import which

    if which("herdr", env) is not None:
        return None
    if without is None:
        return _fail(args, f"herdr was not found on PATH. {ABOUT_HERDR}", 1, error_code=HERDR_NOT_FOUND)
    sys.stderr.write(f"panefleet herdr: note: herdr was not found on PATH, so {without}. {ABOUT_HERDR}\n")
    return None


def _open_store(env: Mapping[str, str]) -> Any:
    from shell.store.herdr import HerdrStore

    return HerdrStore.open(env)


def _with_store(args: argparse.Namespace, env: Mapping[str, str]) -> Any:
    from shell.store.herdr import StoreError

    try:
        return _open_store(env)
    except StoreError as exc:
        _fail(args, str(exc))
        return None


def herdr_predictor(real: Any) -> Any:
    """Dry-run answers for herdr: reads run for real, mutations get placeholder answers."""
    from pure import model as m

    counter = {"ws": 0, "pane": 0}

    def predict(step: m.Run) -> m.Proc:
        if not step.mutates:
            answer = real.execute(step)
            assert isinstance(answer, m.Proc)
            return answer
        words = list(step.args)
        if words[:1] in (["--session"], ["--machine"]):
            words = words[2:]
        verb = " ".join(words[:2])
        if verb == "workspace create":
            counter["ws"] += 1
            wid = f"$ws{counter['ws']}"
            result = {"root_pane": {"pane_id": f"{wid}:p1", "workspace_id": wid}, "type": "workspace_created",
                      "workspace": {"workspace_id": wid}}
            return m.Proc(exit_code=0, stdout=json.dumps({"id": "cli:workspace:create", "result": result}) + "\n")
        if verb in ("pane split", "tab create"):
            counter["pane"] += 1
            pid = f"$pane{counter['pane']}"
            key = "pane" if verb == "pane split" else "root_pane"
            return m.Proc(exit_code=0, stdout=json.dumps({"id": "cli:predicted", "result": {key: {"pane_id": pid}}}))
        if verb in ("pane close", "workspace close", "pane rename"):
            return m.Proc(exit_code=0, stdout=json.dumps({"id": "cli:predicted", "result": {"type": "ok"}}) + "\n")
        return m.Proc(exit_code=0)

    return predict


def store_handler(store: Any) -> Any:
    """The store's step handler, plus the two run-set changes of ``shell/store/herdr_runs.py``."""
    import sqlite3

    from pure import model as m
    from shell.store.herdr import RunConflict, StoreError

    def handle(step: m.Store) -> m.JsonResult:
        payload = step.payload if isinstance(step.payload, dict) else {}
        try:
            if step.action == "herdr.run.start":
                store.start_run(run_id=str(payload["run_id"]), project=str(payload["project"]),
                                issue=int(payload["issue"]), attempt=int(payload["attempt"]), pid=payload.get("pid"),
                                session_file=payload.get("session_file"), session=str(payload["session"]),
                                machine=payload.get("machine"))
                return m.JsonResult(ok=True)
            if step.action == "herdr.run.settle":
                return m.JsonResult(ok=True, value=m.JsonValue(bool(store.settle(str(payload["run_id"])))))
        except RunConflict as exc:
            # the refusal is said by the answer's shape, not its text (shell/store/herdr_runs.py run_start)
            return m.JsonResult(ok=False, value=m.JsonValue({"conflict": str(exc)}), error=str(exc))
        except (KeyError, TypeError, ValueError) as exc:
            return m.JsonResult(ok=False, error=f"bad payload for {step.action}: {exc}")
        except (sqlite3.Error, StoreError) as exc:
            return m.JsonResult(ok=False, error=f"store {store.path}: {exc}")
        result: m.JsonResult = store.handle(step)
        return result

    return handle


def _run_operation(
    name: str, request: object, args: argparse.Namespace, env: Mapping[str, str], render: Any
) -> int:
    from shell.cli.operation import run_cli_operation
    from shell.run.executor import Executor

    store = _with_store(args, env)
    if store is None:
        return 1
    try:
        handler = store_handler(store)
        real = Executor(env=env, store=handler)
        return run_cli_operation(
            name, request, args, env=env, render=render, store=handler,
            predictors={"herdr": herdr_predictor(real)},
        )
    finally:
        store.close()


# ----------------------------------------------------------------------------------------- handlers


def cmd_run_start(args: argparse.Namespace) -> int:
    from shell.store.herdr_runs import RunStartRequest

    env = dict(os.environ)
    if not _RUN_ID.match(args.run_id):
        return _fail(args, f"run id {args.run_id!r} must match {_RUN_ID.pattern}", 2)
    if not _PROJECT.match(args.project):
        return _fail(args, f"project {args.project!r} must match {_PROJECT.pattern} (herdr truncates tokens at 80)", 2)
    if args.issue < 0:
        return _fail(args, f"--issue must be >= 0, not {args.issue}", 2)
    if args.attempt < 0:
        return _fail(args, f"--attempt must be >= 0, not {args.attempt}", 2)
    if args.pid is not None and args.pid < 1:
        return _fail(args, f"--pid must be a positive process id, not {args.pid}", 2)
    where = where_of(args, env)
    if isinstance(where, str):
        return _fail(args, where, 2)
    need_herdr(args, env, without="no herdr pane shows this run until `panefleet herdr reconcile` runs with herdr "
                                  "(only panefleet's run store is touched)")
    request = RunStartRequest(session=where[0], machine=where[1], run_id=args.run_id, project=args.project,
                              issue=args.issue, attempt=args.attempt, pid=args.pid, session_file=args.session_file)
    return _run_operation("herdr.run_start", request, args, env, render_run_start(request))


def cmd_run_settle(args: argparse.Namespace) -> int:
    from shell.store.herdr_runs import RunSettleRequest

    need_herdr(args, os.environ, without="the run's herdr pane stays until `panefleet herdr reconcile` runs with "
                                         "herdr (only panefleet's run store is touched)")
    return _run_operation("herdr.run_settle", RunSettleRequest(run_id=args.run_id), args, dict(os.environ),
                          render_run_settle)


def cmd_run_list(args: argparse.Namespace) -> int:
    from pure import wire

    where = where_of(args, os.environ)
    if isinstance(where, str):
        return _fail(args, where, 2)
    need_herdr(args, os.environ, without="what herdr shows of these runs was not checked (this lists panefleet's "
                                         "run store only)")
    store = _with_store(args, os.environ)
    if store is None:
        return 1
    try:
        runs = store.runs(*where)
    finally:
        store.close()
    lines = [
        f"{r.run_id}  {r.project} #{r.issue} a{r.attempt}  {'settled' if r.settled else 'live'}  "
        f"pid {r.pid if r.pid is not None else '-'}  pane {r.pane_id or '-'}  attempts {r.attempts}"
        + (f"  machine {r.machine}" if r.machine else "")
        for r in runs
    ]
    _emit(args, {"ok": True, "runs": [wire.unstructure(r) for r in runs]}, "\n".join(lines) or "no runs")
    return 0


def cmd_open(args: argparse.Namespace) -> int:
    from pure.herdr.fleet import OpenRequest

    env = dict(os.environ)
    where = where_of(args, env)
    if isinstance(where, str):
        return _fail(args, where, 2)
    if (refused := need_herdr(args, env)) is not None:
        return refused
    request = OpenRequest(session=where[0], machine=where[1], run_id=args.run_id, follower=follower_prefix(env),
                          lock_path=lock_path(env))
    return _run_operation("herdr.open", request, args, env, render_open)


def cmd_retire(args: argparse.Namespace) -> int:
    from pure.herdr.fleet import RetireRequest

    env = dict(os.environ)
    where = where_of(args, env)
    if isinstance(where, str):
        return _fail(args, where, 2)
    if (refused := need_herdr(args, env)) is not None:
        return refused
    request = RetireRequest(session=where[0], machine=where[1], run_id=args.run_id, lock_path=lock_path(env))
    return _run_operation("herdr.retire", request, args, env, render_retire)


def cmd_reconcile(args: argparse.Namespace) -> int:
    from pure.herdr.fleet import ReconcileRequest

    env = dict(os.environ)
    if args.max_attempts < 0:  # a usage error is named first, herdr or not
        return _fail(args, "--max-attempts must be >= 0", 2)
    where = where_of(args, env)
    if isinstance(where, str):
        return _fail(args, where, 2)
    if (refused := need_herdr(args, env)) is not None:
        return refused
    request = ReconcileRequest(
        session=where[0],
        machine=where[1],
        managed=tuple(sorted(set(args.managed))),
        max_attempts=args.max_attempts,
        follower=follower_prefix(env),
        lock_path=lock_path(env),
    )
    return _run_operation("herdr.reconcile", request, args, env, render_reconcile)


def cmd_status(args: argparse.Namespace) -> int:
    from pure.herdr.fleet import StatusRequest

    env = dict(os.environ)
    where = where_of(args, env)
    if isinstance(where, str):
        return _fail(args, where, 2)
    if (refused := need_herdr(args, env)) is not None:  # its point is what herdr lists; `run list` reads the store
        return refused
    request = StatusRequest(session=where[0], machine=where[1])
    if getattr(args, "watch", False) and sys.stdout.isatty() and getattr(args, "output", "text") == "text":
        from shell.cli.status_view import watch

        store = _with_store(args, env)
        if store is None:
            return 1
        try:
            return watch(request, args, max(0.2, min(args.interval, 3600.0)), operation="herdr.status",
                         render=render_status, store=store_handler(store))
        finally:
            store.close()
    return _run_operation("herdr.status", request, args, env, render_status)


FOLLOW_INTERVAL_MIN = 0.1
FOLLOW_INTERVAL_MAX = 3600.0


def cmd_follow(args: argparse.Namespace) -> int:
    """Show a run's state until it settles or leaves the store (exit 0), or until nobody reads stdout."""
    import math
    import time

    from shell.store.herdr import StoreError

    interval = args.interval
    if not math.isfinite(interval) or not FOLLOW_INTERVAL_MIN <= interval <= FOLLOW_INTERVAL_MAX:
        return _fail(args, f"--interval must be a number of seconds from {FOLLOW_INTERVAL_MIN} to "
                           f"{FOLLOW_INTERVAL_MAX:g}, not {args.interval}", 2)
    from shell.run import startup

    startup.release()  # a loop that may run for hours, with no step to end start-up (shell/run/startup.py)
    env = dict(os.environ)
    need_herdr(args, env, without="what herdr shows of this run was not checked (this follows panefleet's run "
                                  "store only)")
    last = ""
    seen = False
    try:
        while True:
            try:
                store = _open_store(env)
                try:
                    record = store.run(args.run_id)
                finally:
                    store.close()
            except StoreError as exc:
                return _fail(args, str(exc))
            if record is None:
                if not seen:
                    return _fail(args, f"no run {args.run_id!r} in the store", 4)  # as open/retire refuse it
                _emit(args, {"ok": True, "runId": args.run_id, "state": "gone"},
                      f"run {args.run_id}: no longer in the store; follower stops")
                sys.stdout.flush()
                return 0
            seen = True
            state = "settled" if record.settled else "live"
            line = (f"run {record.run_id}  {record.project} #{record.issue} attempt {record.attempt}  {state}"
                    f"  pid {record.pid if record.pid is not None else '-'}")
            if line != last:
                _emit(args, {"ok": True, "runId": args.run_id, "state": state}, line)
                sys.stdout.flush()
                last = line
            if args.once or record.settled:
                return 0
            time.sleep(interval)
    except BrokenPipeError:
        # Nobody reads any more (the pane closed, ``| head``): stop quietly, and keep the interpreter's
        # final flush from failing on the dead pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
