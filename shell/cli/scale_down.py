"""``panefleet team scale-down | debt show | debt reconcile | task create | task claim``.

Each command builds a request and runs the registered pure operation through the shared CLI
helper (``-o text|json``, ``--dry-run`` where it changes things, exit codes, audit log). With
``-o json`` the printed object is exactly oh-my-codex's result.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from shell.cli.args import (
    add_dry_run,
    add_host,
    add_output,
    add_tmux,
    complete_path,
    non_negative_int,
    positive_int,
)
from shell.cli.environment import recorded_env

if TYPE_CHECKING:
    from pure import model as m

def _env() -> dict[str, str]:
    return recorded_env(os.environ)


def _common(p: argparse.ArgumentParser, *, dry_run: bool, tmux: bool = True) -> None:
    complete_path(p.add_argument("--cwd", default=".", help="the leader's working directory (default: .)"),
                  directory=True)
    add_output(p)
    if tmux:
        add_tmux(p)
    if dry_run:
        add_dry_run(p)


def _version(text: str) -> int | None:
    if text == "null":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or null, got {text!r}") from None


def register(team_sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from shell.cli.args import examples

    p = team_sub.add_parser(
        "scale-down", help="remove workers: commit membership, then prove and kill their panes",
        description="Remove workers from TEAM: those named with --worker, or N idle ones with --count (default "
        "1); at least one worker stays. Their tasks are released and the new membership is committed first; "
        "then each pane is proven ours and killed, and a pane that cannot be proven is kept as cleanup debt "
        "(exit 3; see `panefleet team debt show`). A team panefleet made (`team init`) scales as it is; a "
        "team oh-my-codex made scales only with OMX_TEAM_SCALING_ENABLED=1, as in oh-my-codex "
        "(docs/scale-down.md).",
        epilog=examples(("panefleet team scale-down alpha --count 2 --dry-run", "what would change"),
                        ("panefleet team scale-down alpha --worker worker-3", "remove worker-3"),
                        ("panefleet team scale-down alpha --worker worker-2 --worker worker-4 --force",
                         "even if busy")))
    p.add_argument("team", help="the team's name")
    select = p.add_mutually_exclusive_group()  # two different ways to choose the workers
    select.add_argument("--worker", action="append", default=[], metavar="NAME",
                        help="a worker to remove (repeatable)")
    select.add_argument("--count", type=positive_int, default=None, metavar="N",
                        help="remove N idle workers (default 1)")
    p.add_argument("--force", action="store_true", help="also remove busy workers; skip the drain wait")
    p.add_argument("--drain-timeout-ms", type=non_negative_int, default=30_000, metavar="MS",
                   help="how long to wait for the workers to drain (default 30000)")
    _common(p, dry_run=True)
    add_host(p)
    p.set_defaults(handler=cmd_scale_down)

    debt = team_sub.add_parser(
        "debt", help="scale-down cleanup debt: show it, or retry it",
        description="What a scale-down could not prove safe to remove (the panes it kept, the resources it "
        "could not clean) is recorded as cleanup debt in the team's directory, in oh-my-codex's format.",
        epilog=examples("panefleet team debt show alpha", "panefleet team debt reconcile alpha --dry-run"))
    debt_sub = debt.add_subparsers(dest="debt_command", metavar="DEBT_COMMAND", required=True)
    p = debt_sub.add_parser(
        "show", help="the debt record explained: panes, reasons, what a retry would do",
        description="Explain the team's cleanup debt record: the panes kept and why, and what a retry would "
        "do; and what runs that did not finish left behind. Nothing is changed.",
        epilog=examples("panefleet team debt show alpha", "panefleet team debt show alpha -o json"))
    p.add_argument("team", help="the team's name")
    _common(p, dry_run=False)
    p.set_defaults(handler=cmd_debt_show)
    p = debt_sub.add_parser(
        "reconcile", help="re-prove debt panes, kill only proven ones, clean resources",
        description="Retry the team's cleanup debt: prove each debt pane again, kill only those proven ours "
        "(one gone counts as done), clean the resources left, and delete the record once everything "
        "converged. What still cannot be proven stays debt (exit 3).",
        epilog=examples(("panefleet team debt reconcile alpha --dry-run", "what a retry would do"),
                        "panefleet team debt reconcile alpha"))
    p.add_argument("team", help="the team's name")
    _common(p, dry_run=True)
    p.set_defaults(handler=cmd_debt_reconcile)

    task = team_sub.add_parser(
        "task", help="team tasks (oh-my-codex compatible, shares its locks)",
        description="The team's tasks, in oh-my-codex's files and under its locks, so both tools can work on "
        "one team at once.",
        epilog=examples('panefleet team task create alpha --subject "fix the login bug"',
                        "panefleet team task claim alpha 1 --worker worker-2"))
    task_sub = task.add_subparsers(dest="task_command", metavar="TASK_COMMAND", required=True)
    p = task_sub.add_parser(
        "create", help="create a task (next id, version 1)",
        description="Create a task of TEAM with the next free id, at version 1 (status pending unless "
        "--status says otherwise). Give it with --subject (and --description), or with --task.",
        epilog=examples('panefleet team task create alpha --subject "fix the login bug" '
                        '--description "the form rejects valid emails"',
                        'panefleet team task create alpha --subject "add a regression test" --owner worker-2 '
                        '--blocked-by 1',
                        'panefleet team task create alpha --subject "fix the login bug" --dry-run'))
    p.add_argument("team", help="the team's name")
    p.add_argument("--task", default=None, metavar="TEXT|JSON",
                   help='the task instead of --subject/--description: plain text (first line the subject, the '
                        'rest the description) or {"subject", "description", "owner"?, "role"?, "blocked_by"?}')
    p.add_argument("--subject", default=None, help="the task's subject, one line")
    p.add_argument("--description", default=None, help="what the task asks for (default: the subject)")
    p.add_argument("--owner", default=None, metavar="WORKER", help="the worker the task is for, e.g. worker-2")
    p.add_argument("--status", default=None, choices=("pending", "blocked", "in_progress", "completed", "failed"),
                   help="the task's status (default: pending)")
    p.add_argument("--blocked-by", action="append", default=None, metavar="TASK_ID",
                   help="a task that must be done first (repeatable)")
    _common(p, dry_run=True, tmux=False)
    p.set_defaults(handler=cmd_task_create)
    p = task_sub.add_parser(
        "claim", help="claim a task for a worker (version-checked)",
        description="Claim TASK_ID for a worker of TEAM: the task becomes the worker's, in progress, with a "
        "claim token and a lease. Refused when the version read no longer matches (--expected-version), "
        "when another worker holds or owns it, when a task it depends on is not completed, or when it is "
        "finished.",
        epilog=examples("panefleet team task claim alpha 3 --worker worker-2 --expected-version 1",
                        ("panefleet team task claim alpha 3 --worker worker-2", "no version check")))
    p.add_argument("team", help="the team's name")
    p.add_argument("task_id", help="the task's id, e.g. 3")
    p.add_argument("--worker", required=True, metavar="NAME", help="the worker that claims it, e.g. worker-2")
    p.add_argument("--expected-version", type=_version, default=None, metavar="V|null",
                   help="the version you read (null: no version check)")
    _common(p, dry_run=True, tmux=False)
    p.set_defaults(handler=cmd_task_claim)


def _cwd(args: argparse.Namespace) -> str:
    return os.path.abspath(str(args.cwd))


def cmd_scale_down(args: argparse.Namespace) -> int:
    from pure.omx.scale_down import ScaleDownRequest
    from shell.cli.operation import run_cli_operation
    from shell.cli.team_home import request_env

    request = ScaleDownRequest(team=args.team, cwd=_cwd(args), env=request_env(args, os.environ),
                               worker_names=tuple(args.worker),
                               count=args.count, force=args.force, drain_timeout_ms=args.drain_timeout_ms)
    return run_cli_operation("team.scale_down", request, args, render_run=render_scale_down_run)


def cmd_debt_show(args: argparse.Namespace) -> int:
    from pure.omx.scale_down import DebtRequest
    from shell.cli.operation import run_cli_operation

    request = DebtRequest(team=args.team, cwd=_cwd(args), env=_env())
    return run_cli_operation("team.debt_show", request, args, render=render_debt)


def cmd_debt_reconcile(args: argparse.Namespace) -> int:
    from pure.omx.scale_down import DebtRequest
    from shell.cli.operation import run_cli_operation

    request = DebtRequest(team=args.team, cwd=_cwd(args), env=_env())
    # the text needs the journal (what was killed, found gone, cleaned), not only {"ok": true}
    return run_cli_operation("team.debt_reconcile", request, args,
                             render_run=render_reconcile_run)


def render_reconcile_run(result: dict[str, Any], done: m.Done, journal: Sequence[m.Entry]) -> str:
    """The reconcile report (debt the run keeps follows on stderr, ``shell/cli/operation.py``)."""
    return render_reconcile(result, journal)


def cmd_task_create(args: argparse.Namespace) -> int:
    from pure.omx.tasks import TaskCreateRequest
    from shell.cli.operation import run_cli_operation, usage_error
    from shell.cli.task_input import check_against_team

    try:
        task = _task_given(args)
    except ValueError as exc:
        return usage_error(args, "team task create", str(exc))
    request = TaskCreateRequest(team=args.team, cwd=_cwd(args), env=_env(), subject=task.subject,
                                description=task.description, owner=task.owner, status=args.status,
                                blocked_by=task.blocked_by, role=task.role)
    blocker = "--blocked-by" if args.blocked_by else "blocked_by of --task"
    problem = check_against_team(args, request.team, request.cwd, request.env,
                                 roles=[("role of --task", task.role)] if task.role is not None else [],
                                 blocked=[(blocker, task.blocked_by)] if task.blocked_by else [])
    if problem is not None:
        return usage_error(args, "team task create", problem)
    return run_cli_operation("team.task_create", request, args, render=render_task)


def _task_given(args: argparse.Namespace) -> Any:
    """The task of ``task create``: ``--task`` (text or JSON, ``shell/cli/task_input.py``), or
    ``--subject`` with ``--description`` (the subject when not given); ``--owner`` and ``--blocked-by``
    add to it what ``--task`` does not say itself."""
    import attrs

    from pure.omx.scale_up.run import TaskSpec
    from shell.cli.task_input import EXAMPLES, parse_task

    if args.task is not None:
        if args.subject is not None or args.description is not None:
            raise ValueError("--task already gives the subject and the description: give --task alone, or "
                             "--subject (and --description) instead")
        task = parse_task(args.task)
    elif args.subject is not None:
        task = TaskSpec(subject=args.subject, description=args.subject if args.description is None
                        else args.description)
    else:
        raise ValueError(f"a task is needed: --subject (and --description), or --task; {EXAMPLES}")
    if args.owner is not None:
        if task.owner is not None:
            raise ValueError("the owner is given twice: by --task and by --owner")
        task = attrs.evolve(task, owner=args.owner)
    if args.blocked_by:
        if task.blocked_by is not None:
            raise ValueError("blocked_by is given twice: by --task and by --blocked-by")
        task = attrs.evolve(task, blocked_by=tuple(args.blocked_by))
    return task


def cmd_task_claim(args: argparse.Namespace) -> int:
    from pure.omx.tasks import TaskClaimRequest
    from shell.cli.operation import run_cli_operation

    request = TaskClaimRequest(team=args.team, cwd=_cwd(args), env=_env(), task_id=args.task_id,
                               worker=args.worker, expected_version=args.expected_version)
    return run_cli_operation("team.task_claim", request, args, render=render_task)


# ------------------------------------------------------------------------------------------ render


def render_scale_down_run(result: dict[str, Any], done: m.Done, journal: Sequence[m.Entry]) -> str:
    """The result's text, then the transcripts the run kept (``pure/omx/transcripts.py``; not in the
    result, which stays oh-my-codex's)."""
    from pure.omx.transcripts import written
    from shell.cli.operation import as_run_renderer

    text = as_run_renderer(render_scale_down, None)(result, done, list(journal))
    return text + "".join(f"\ntranscript kept: {path}" for path in written(journal))


def render_scale_down(result: dict[str, Any]) -> str:
    # a killed pane whose transcript could not be kept (pure/omx/transcripts.py) says why
    warnings = "".join(f"\n{warning}" for warning in result.get("transcriptWarnings") or [])
    if result.get("ok"):
        removed = ", ".join(result.get("removedWorkers", []))
        return f"removed {removed}; {result.get('newWorkerCount')} worker(s) remain{warnings}"
    return f"error: {result.get('error')}{warnings}"


def render_reconcile(result: dict[str, Any], journal: Sequence[m.Entry]) -> str:
    from pure.omx.debt_report import reconcile_report
    from shell.cli.render import sweep_lines

    report = reconcile_report(result, journal)
    head = [] if result.get("ok") else [f"error: {result.get('error')}"]
    swept = result.get("strayPanes")
    tasks = result.get("redeliveredTasks") or {}
    retried = [f"  {worker}'s task: typed again, and its agent took it" for worker in tasks.get("delivered") or []]
    retried += [f"  {u['worker']}'s task: typed again, still not taken ({u['reason']}); kept as debt"
                for u in tasks.get("notDelivered") or []]
    kept = result.get("keptWorkers") or {}
    removed = [f"  {worker}: removed by a forced scale-down of it" for worker in kept.get("removed") or []]
    removed += [f"  {worker}: still a member, kept as debt" for worker in kept.get("workers") or []
                if worker not in (kept.get("removed") or [])]
    removed += [f"  the scale-down said: {kept['error']}"] if kept.get("error") else []
    return "\n".join(head + report + (sweep_lines(swept) if isinstance(swept, dict) else [])
                     + (["tasks no screen had confirmed reaching their worker:", *retried] if retried else [])
                     + (["workers a rolled-back scale-up had kept:", *removed] if removed else [])) or "ok"


def render_task(result: dict[str, Any]) -> str:
    if not result.get("ok"):
        extra = f" (waiting on {', '.join(map(str, result['dependencies']))})" if result.get("dependencies") else ""
        return f"error: {result.get('error')}{extra}"
    task = result.get("task", {})
    line = f"task {task.get('id')} [{task.get('status')}] v{task.get('version')}: {task.get('subject')}"
    if task.get("owner"):
        line += f" (owner {task['owner']})"
    if result.get("claimToken"):
        line += f"\nclaim token {result['claimToken']} until {task.get('claim', {}).get('leased_until')}"
    return line


def render_debt(result: dict[str, Any]) -> str:
    if result.get("ok") is False:
        return f"error: {result.get('error')}"
    from shell.cli.render import undelivered_lines

    left = result.get("leftovers")
    tasks = undelivered_lines(result)
    tail = ("" if left is None else _leftovers(left)) + "".join(f"\n{line}" for line in (
        ["", "tasks no screen confirmed reaching their worker:", *tasks] if tasks else []))
    if result.get("debt") is None:
        return f"team {result.get('team')}: {result.get('summary')}" + tail
    return _recorded_debt(result) + tail


def _leftovers(left: dict[str, Any]) -> str:
    """The survey of what runs that did not finish left (the same lines as `team status`)."""
    from shell.cli.render import leftover_lines

    lines = ["", "left by a run that did not finish:"]
    lines += leftover_lines(left)
    if left.get("strayListing") != "read":
        lines.append("  (tmux could not be asked whether a pane still runs a leftover startup script)")
    return "\n".join(lines)


def _recorded_debt(result: dict[str, Any]) -> str:
    out = [f"team {result.get('team')}: cleanup debt, status {result.get('status')}",
           f"  removed workers: {', '.join(result.get('removed_workers') or [])}",
           f"  recorded {result.get('created_at')}" + (f", updated {result['updated_at']}"
                                                        if result.get("updated_at") else "")]
    for row in result.get("panes", []):
        out.append(f"  pane {row['pane_id']} (worker {row['worker']}, pid {json.dumps(row['pid'])})")
        for code, text in zip(row["reasons"], row["explained"], strict=False):
            out.append(f"    - {code}: {text}")
        if not row["reasons"]:
            out.append("    - not yet proven gone")
    for other in result.get("other_reasons", []):
        out.append(f"  - {other}")
    out.append(f"  a retry (`panefleet team debt reconcile {result.get('team')}`): {result.get('retry')}")
    return "\n".join(out)
