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

from shell.cli.args import add_dry_run, add_output, add_tmux, complete_path, non_negative_int, positive_int
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
    p = team_sub.add_parser("scale-down", help="remove workers: commit membership, then prove and kill their panes")
    p.add_argument("team")
    select = p.add_mutually_exclusive_group()  # two different ways to choose the workers
    select.add_argument("--worker", action="append", default=[], metavar="NAME",
                        help="a worker to remove (repeatable)")
    select.add_argument("--count", type=positive_int, default=None, help="remove N idle workers (default 1)")
    p.add_argument("--force", action="store_true", help="also remove busy workers; skip the drain wait")
    p.add_argument("--drain-timeout-ms", type=non_negative_int, default=30_000, metavar="MS",
                   help="how long to wait for the workers to drain (default 30000)")
    _common(p, dry_run=True)
    p.set_defaults(handler=cmd_scale_down)

    debt = team_sub.add_parser("debt", help="scale-down cleanup debt: show it, or retry it")
    debt_sub = debt.add_subparsers(dest="debt_command", metavar="DEBT_COMMAND", required=True)
    p = debt_sub.add_parser("show", help="the debt record explained: panes, reasons, what a retry would do")
    p.add_argument("team")
    _common(p, dry_run=False, tmux=False)
    p.set_defaults(handler=cmd_debt_show)
    p = debt_sub.add_parser("reconcile", help="re-prove debt panes, kill only proven ones, clean resources")
    p.add_argument("team")
    _common(p, dry_run=True)
    p.set_defaults(handler=cmd_debt_reconcile)

    task = team_sub.add_parser("task", help="team tasks (oh-my-codex compatible, shares its locks)")
    task_sub = task.add_subparsers(dest="task_command", metavar="TASK_COMMAND", required=True)
    p = task_sub.add_parser("create", help="create a task (next id, version 1)")
    p.add_argument("team")
    p.add_argument("--subject", required=True)
    p.add_argument("--description", required=True)
    p.add_argument("--owner", default=None)
    p.add_argument("--status", default=None, choices=("pending", "blocked", "in_progress", "completed", "failed"))
    p.add_argument("--blocked-by", action="append", default=None, metavar="TASK_ID")
    _common(p, dry_run=True, tmux=False)
    p.set_defaults(handler=cmd_task_create)
    p = task_sub.add_parser("claim", help="claim a task for a worker (version-checked)")
    p.add_argument("team")
    p.add_argument("task_id")
    p.add_argument("--worker", required=True)
    p.add_argument("--expected-version", type=_version, default=None, metavar="V|null",
                   help="the version you read (null: no version check)")
    _common(p, dry_run=True, tmux=False)
    p.set_defaults(handler=cmd_task_claim)


def _cwd(args: argparse.Namespace) -> str:
    return os.path.abspath(str(args.cwd))


def cmd_scale_down(args: argparse.Namespace) -> int:
    from pure.omx.scale_down import ScaleDownRequest
    from shell.cli.common import run_cli_operation

    request = ScaleDownRequest(team=args.team, cwd=_cwd(args), env=_env(), worker_names=tuple(args.worker),
                               count=args.count, force=args.force, drain_timeout_ms=args.drain_timeout_ms)
    return run_cli_operation("team.scale_down", request, args,
                             render=lambda result: render_scale_down(result, str(args.team)))


def cmd_debt_show(args: argparse.Namespace) -> int:
    from pure.omx.scale_down import DebtRequest
    from shell.cli.common import run_cli_operation

    request = DebtRequest(team=args.team, cwd=_cwd(args), env=_env())
    return run_cli_operation("team.debt_show", request, args, render=render_debt)


def cmd_debt_reconcile(args: argparse.Namespace) -> int:
    from pure.omx.scale_down import DebtRequest
    from shell.cli.common import run_cli_operation

    request = DebtRequest(team=args.team, cwd=_cwd(args), env=_env())
    team = str(args.team)
    # the text needs the journal (what was killed, found gone, cleaned), not only {"ok": true}
    return run_cli_operation("team.debt_reconcile", request, args,
                             render_run=lambda result, done, journal: render_reconcile_run(result, done, journal, team))


def render_reconcile_run(result: dict[str, Any], done: m.Done, journal: Sequence[m.Entry], team: str) -> str:
    """The reconcile report (debt the run keeps follows on stderr, ``shell/cli/common.py``)."""
    return render_reconcile(result, journal, team)


def cmd_task_create(args: argparse.Namespace) -> int:
    from pure.omx.tasks import TaskCreateRequest
    from shell.cli.common import run_cli_operation

    request = TaskCreateRequest(team=args.team, cwd=_cwd(args), env=_env(), subject=args.subject,
                                description=args.description, owner=args.owner, status=args.status,
                                blocked_by=tuple(args.blocked_by) if args.blocked_by else None)
    return run_cli_operation("team.task_create", request, args, render=render_task)


def cmd_task_claim(args: argparse.Namespace) -> int:
    from pure.omx.tasks import TaskClaimRequest
    from shell.cli.common import run_cli_operation

    request = TaskClaimRequest(team=args.team, cwd=_cwd(args), env=_env(), task_id=args.task_id,
                               worker=args.worker, expected_version=args.expected_version)
    return run_cli_operation("team.task_claim", request, args, render=render_task)


# ------------------------------------------------------------------------------------------ render


def render_scale_down(result: dict[str, Any], team: str = "TEAM") -> str:
    if result.get("ok"):
        removed = ", ".join(result.get("removedWorkers", []))
        return f"removed {removed}; {result.get('newWorkerCount')} worker(s) remain"
    error = str(result.get("error"))
    return f"error: {error}" + "".join(f"\n{line}" for line in scale_down_hint(error, team))


def scale_down_hint(error: str, team: str) -> list[str]:
    """What a scale-down error means for the team, matched on the exact error codes (all of them
    begin with ``scale_down_cleanup_debt``, so a prefix match would confuse them)."""
    show = f"`panefleet team debt show {team}`"
    retry = f"`panefleet team debt reconcile {team}`"
    untouched = ("nothing was done: scale-down settles earlier cleanup debt first and stopped there "
                 "(no membership change, no status change, no tmux call)")
    if error.startswith(("scale_down_cleanup_debt:", "scale_down_pane_proof_unavailable:")):
        return ["membership is committed; the panes listed below are kept as cleanup debt, not killed",
                f"inspect with {show}; retry with {retry}"]
    if error.startswith("scale_down_cleanup_debt_unreadable"):
        return [f"the team's cleanup debt record (.scale-down-cleanup-debt.json) is not valid JSON; {untouched}",
                f"inspect it with {show}, then repair or remove the file by hand"]
    if error == "scale_down_cleanup_debt_malformed":
        return [f"the team's cleanup debt record (.scale-down-cleanup-debt.json) fails validation; {untouched}",
                f"inspect it with {show}, then repair or remove the file by hand"]
    if error == "scale_down_cleanup_debt_membership_inconsistent":
        return ["the cleanup debt record names removed workers of which only some are still members; "
                + untouched, f"inspect it with {show}"]
    if error.startswith(("scale_down_cleanup_debt_unresolved:", "scale_down_cleanup_debt_resource_cleanup_failed:")):
        return ["cleanup debt could not be settled and is kept (scale-down does nothing more until it is)",
                f"inspect with {show}; retry with {retry}"]
    return []


def render_reconcile(result: dict[str, Any], journal: Sequence[m.Entry], team: str = "TEAM") -> str:
    from pure.omx.debt_report import reconcile_report

    report = reconcile_report(result, journal)
    head = [] if result.get("ok") else [f"error: {result.get('error')}"]
    if not result.get("ok") and not report:
        head += scale_down_hint(str(result.get("error")), team)
    return "\n".join(head + report) or "ok"


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
    left = result.get("leftovers")
    if result.get("debt") is None:
        return f"team {result.get('team')}: {result.get('summary')}" + ("" if left is None else _leftovers(left))
    return _recorded_debt(result) + ("" if left is None else _leftovers(left))


def _leftovers(left: dict[str, Any]) -> str:
    """The survey of what runs that did not finish left (the same lines as `team status`)."""
    from shell.cli.render import leftover_lines

    lines = ["", "left by a run that did not finish (no member and no record names it):"]
    lines += leftover_lines(left.get("strayPanes") or [], left.get("leftoverWorkers") or [])
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
