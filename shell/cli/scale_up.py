"""``panefleet team scale-up TEAM --count N [--agent-type ROLE] [--task TEXT|JSON]... [--cwd DIR] [--dry-run]``."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shell.cli.args import add_dry_run, add_host, add_output, add_tmux, complete_path, positive_int
from shell.cli.environment import recorded_env
from shell.placeholder import PLACEHOLDER_AGENT


def register(team_subparsers: Any) -> None:
    from shell.cli.args import examples

    p = team_subparsers.add_parser(
        "scale-up", help="add workers to a team: proven splits, owner tags, exact rollback (oh-my-codex scaleUp)",
        description="Add COUNT worker panes to TEAM, each split from the largest team pane (a new window when "
        "the window is full) behind an L,S,L proof, pinned and owner-tagged; all agents start together, their "
        "trust and bypass prompts are answered by policy, and each task is typed and confirmed from the screen "
        "(docs/scale-up.md). Any failure rolls back exactly what this run created; what cannot be proven safe to "
        "undo is kept and reported as cleanup debt. With OMX_TEAM_SKIP_READY_WAIT=1 it behaves exactly as "
        "oh-my-codex (split from the newest worker, nothing watched). A team panefleet made (`team init`) "
        "scales as it is; a team oh-my-codex made scales only with OMX_TEAM_SCALING_ENABLED=1, as in "
        "oh-my-codex.",
        epilog=examples(("panefleet team scale-up alpha --count 2 --dry-run", "what would change"),
                        ("panefleet team scale-up alpha --count 1 --task '{\"subject\": \"fix the login bug\", "
                         "\"description\": \"the form rejects valid emails\"}'", "one worker with its task"),
                        ("panefleet team scale-up alpha --count 3 --agent-type test-engineer --plan-out up.json",
                         "save the plan for `panefleet apply up.json`")))
    p.add_argument("team", help="the team's name")
    p.add_argument("--count", type=positive_int, required=True, help="number of workers to add (at least 1)")
    p.add_argument("--agent-type", default="executor", metavar="ROLE", help="default worker role (executor)")
    p.add_argument("--task", action="append", default=[], metavar="TEXT|JSON",
                   help='one task (repeatable, at most one per new worker): plain text (first line the subject, '
                        'the rest the description) or {"subject", "description", "owner"?, "role"?, "blocked_by"?}')
    p.add_argument("--all-or-nothing", action="store_true",
                   help="roll the whole scale-up back when one agent does not start (oh-my-codex's rule); by "
                   "default it is tried once more in a fresh pane, then removed alone and the others kept")
    complete_path(p.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    add_output(p)
    add_tmux(p)
    add_host(p)
    add_dry_run(p)
    p.set_defaults(handler=cmd_scale_up)
    r = team_subparsers.add_parser(
        "respawn", help="restart a dead worker in a new proven pane (same name, identity and inbox)",
        description="Prove WORKER's recorded pane gone (a dead pane still ours is removed), start its agent in "
        "a new pane placed like a scale-up's, wait until it is ready, deliver its trigger again and record the "
        "new pane. A worker whose pane is live with its pinned pid is refused: nothing to respawn.",
        epilog=examples("panefleet team respawn alpha worker-2", "panefleet team respawn alpha worker-2 --dry-run"))
    r.add_argument("team", help="the team's name")
    r.add_argument("worker", help="the worker's name, e.g. worker-2 (`panefleet team status TEAM` lists them)")
    complete_path(r.add_argument("--cwd", default=".", help="the team's working directory (default: .)"),
                  directory=True)
    add_output(r)
    add_tmux(r)
    add_dry_run(r)
    r.set_defaults(handler=cmd_respawn)


def build_request(args: argparse.Namespace, environ: dict[str, str]) -> Any:
    from pure.omx.scale_up import ScaleUpRequest
    from shell.cli.operation import placed_on
    from shell.cli.task_input import count_problem, parse_task
    from shell.cli.team_home import request_env

    tasks = tuple(parse_task(text) for text in args.task)
    too_many = count_problem(len(tasks), args.count)
    if too_many is not None:
        raise ValueError(too_many)
    host = placed_on(args)
    if host is not None:
        from shell.cli.team_host import agent_facts

        cli_paths, node_path, shells = agent_facts(host, environ)
        cli_problems = None  # `panefleet doctor --host` checks the CLIs there
    else:
        cli_paths, cli_problems = agent_clis(environ, os.path.abspath(args.cwd))
        node_path = shutil.which("node", path=environ.get("PATH", os.defpath)) or "node"
        shells = existing_shells(environ)
    return ScaleUpRequest(
        team=args.team, count=args.count, cwd=os.path.abspath(args.cwd), agent_type=args.agent_type, tasks=tasks,
        env=request_env(args, environ), process_argv=tuple(sys.argv), cli_paths=cli_paths,
        node_path=node_path, existing_shells=shells,
        cli_problems=cli_problems, all_or_nothing=True if args.all_or_nothing else None,
    )


def agent_clis(environ: Mapping[str, str], cwd: str) -> tuple[dict[str, str], dict[str, list[str]] | None]:
    """Where each agent CLI is on PATH ("": looked for and not found, so a worker that would launch it
    is refused) and the placeholder agent; and, by CLI found, what keeps it from starting for a team
    in ``cwd`` (``panefleet doctor``'s failed checks, without running the CLIs: ``pure/agents/doctor.py``;
    Codex's home as the launch resolves it, a project-scoped one included)."""
    from pure.agents import doctor
    from pure.omx.launch.agents import posix_join, resolve_codex_home_override
    from shell.cli.doctor import setup_facts

    path = environ.get("PATH", os.defpath)
    cli_paths = {cli: shutil.which(cli, path=path) or "" for cli in doctor.AGENT_CLIS}
    env = dict(environ)
    try:
        scope: str | None = Path(cwd, ".omx", "setup-scope.json").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        scope = None
    override = resolve_codex_home_override(env, cwd, scope)
    if override:
        env["CODEX_HOME"] = posix_join(cwd, override) if not override.startswith("/") else override
    problems: dict[str, list[str]] = {}
    for cli, found in cli_paths.items():
        if found:
            facts, home = setup_facts(cli, found, None, env)
            failed = [f"{c.text}; fix: {c.fix}" for c in doctor.check_cli(facts, home) if c.level == "fail"]
            if failed:
                problems[cli] = failed
    cli_paths["placeholder"] = str(PLACEHOLDER_AGENT)
    return cli_paths, problems or None


def existing_shells(environ: dict[str, str]) -> tuple[str, ...]:
    """Which worker-shell candidates exist (the startup script's shell is chosen from these)."""
    from pure.omx.startup_script import BASH_CANDIDATES, ZSH_CANDIDATES

    candidates = [environ.get("SHELL", ""), *ZSH_CANDIDATES, *BASH_CANDIDATES]
    return tuple(dict.fromkeys(c for c in candidates if c and os.path.isfile(c)))


class GitPrediction:
    """Dry-run answers for git: reads run for real, except inside the worktrees the plan would
    create (they do not exist, so their ``rev-parse`` answers are predicted); changes succeed."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.created: dict[str, str] = {}  # predicted worktree path -> repository root

    def _inside(self, cwd: str | None) -> tuple[str, str] | None:
        for path, root in self.created.items():
            if cwd is not None and (cwd == path or cwd.startswith(path + "/")):
                return path, root
        return None

    def __call__(self, step: Any) -> Any:
        from pure import model as m
        from shell.run.dryrun import READ_ONLY

        args = tuple(step.args)
        if args[:2] == ("worktree", "add"):
            path = args[args.index("-b") + 2] if "-b" in args else next(a for a in args[2:] if not a.startswith("-"))
            self.created[path] = step.cwd or ""
            return m.Proc(exit_code=0)
        inside = self._inside(step.cwd)
        if inside is not None:
            path, root = inside
            if "--git-path" in args:
                return m.Proc(exit_code=0, stdout=f"{root}/.git/worktrees/{os.path.basename(path)}/{args[-1]}\n")
            if "--git-common-dir" in args:
                return m.Proc(exit_code=0, stdout=f"{root}/.git\n")
            return m.Proc(exit_code=0)
        if step.mutates or not args or args[0] not in READ_ONLY["git"]:
            return m.Proc(exit_code=0)
        return self.real.execute(step)


def changed_anything(journal: list[Any]) -> bool:
    """Whether a run changed anything (taking and releasing its own locks are no changes)."""
    from pure.program import is_mutation

    return any(is_mutation(entry.step) for entry in journal)


def explain(result: dict[str, Any], status: str, changed: bool = True, search_path: str | None = None) -> str:
    """The outcome for a person: what was added, or what was rolled back and what was kept and why.
    ``changed`` says whether the run changed anything (besides its locks): a failure of a run that
    changed nothing claims no rollback."""
    if result.get("ok"):
        lines = [f"added {len(result['addedWorkers'])} worker(s); the team now has {result['newWorkerCount']} "
                 f"(next worker index {result['nextWorkerIndex']})"]
        deliveries = {d["worker"]: d for d in result.get("deliveries") or []}
        for worker in result["addedWorkers"]:
            lines.append(f"  {worker['name']}: pane {worker.get('pane_id')} pid {worker.get('pid')} "
                         f"role {worker.get('role', '-')} cwd {worker.get('working_dir')}")
            seen = deliveries.get(worker["name"])
            if seen is not None:
                answered = f", answered {' and '.join(seen['answered'])}" if seen.get("answered") else ""
                task = "task delivered" if seen.get("status") == "delivered" else \
                    f"TASK NOT CONFIRMED ({seen.get('reason')}): check the pane, then `panefleet team respawn`"
                lines.append(f"    {seen.get('cli')} {seen.get('started')}{answered}; {task}")
        for removed in result.get("removedWorkers") or []:
            lines.append(f"  {removed['name']}: NOT STARTED, removed alone ({removed['reason']})")
            lines += [f"    | {line}" for line in removed.get("lastLines") or [] if line]
            if removed.get("transcript") or removed.get("transcriptWarning"):
                lines.append(f"    its transcript: {removed['transcript']}" if removed.get("transcript")
                             else f"    {removed['transcriptWarning']}")
        return "\n".join(lines)
    error = str(result.get("error", ""))
    lines = [f"scale-up failed: {error}"]
    changes = result.get("changesMade")
    if isinstance(changes, list) and changes:
        from pure import model as m
        from pure import wire
        from shell.run.step_text import describe_step

        lines.append("panefleet stopped before it could roll back, after making these changes (check them; run "
                     "`panefleet team status`):")
        for raw in changes:
            step = wire.structure_as(raw, m.Step).value_or(None)
            lines.append(f"  - {describe_step(step) if step is not None else raw}")
    elif error.startswith("scale_up_rollback_cleanup_debt:"):
        from pure import model as m

        lines.append("Everything this run could prove safe to undo was rolled back. Kept as cleanup debt:")
        for item in error.split(":", 1)[1].split(";"):
            kind, _, subject = item.partition(":")
            what, retry = m.debt_words(kind)
            lines.append(f"  - {subject or kind}: {what}" + (f" ({retry})" if retry else "") + f" [{item}]")
        lines.append("Kept workers remain team members with their pane ids until `panefleet team debt reconcile` "
                     "can prove their panes gone or ours and removes them.")
    elif error.startswith("scale_up_rollback_membership_persistence_failed:"):
        lines.append("The rollback could not persist the original membership; the transaction journal was kept "
                     "and the next read of the team converges it. Worker directories and startup scripts of "
                     "this run may remain.")
    elif status == "refused" or not changed:
        if error.startswith("worker_cli_unavailable:") and search_path is not None:
            lines.append(f"PATH searched: {search_path}")
        lines.append("Nothing was changed.")
    else:
        lines.append("Everything this run created (tasks, worker directories, worktrees, startup scripts, panes "
                     "it pinned and tagged) was rolled back; the team membership is as before.")
    lines += [str(w) for w in result.get("transcriptWarnings") or []]  # pure/omx/transcripts.py
    return "\n".join(lines)


# What a new worker pane is predicted to show in a dry run: the plan assumes its agent is ready at the
# first readiness poll and accepts its trigger at once, instead of planning the whole backoff.
PREDICTED_READY_OUTPUT = "panefleet dry run: the agent is predicted ready and to accept what is typed\n"


def render_scale_up(result: dict[str, Any], done: Any, journal: list[Any], search_path: str | None = None) -> str:
    return explain(result, done.outcome.status, changed_anything(journal), search_path)


def cmd_scale_up(args: argparse.Namespace) -> int:
    from shell.cli.operation import run_cli_operation, usage_error
    from shell.cli.task_input import check_against_team, task_checks

    environ = dict(os.environ)
    try:
        request = build_request(args, environ)
    except ValueError as exc:
        return usage_error(args, "team scale-up", str(exc))
    roles, blocked = task_checks(request.tasks)
    problem = check_against_team(args, request.team, request.cwd, request.env,
                                 roles=[("--agent-type", request.agent_type), *roles], blocked=blocked)
    if problem is not None:
        return usage_error(args, "team scale-up", problem)
    search_path = environ.get("PATH", os.defpath)
    return run_cli_operation(
        "team.scale_up", request, args, env=environ,
        render_run=lambda result, done, journal: render_scale_up(result, done, journal, search_path),
        predictors=lambda executor: {"git": GitPrediction(executor)},
        predicted_capture=PREDICTED_READY_OUTPUT,
    )


def render_respawn(result: dict[str, Any]) -> str:
    if not result.get("ok"):
        return f"respawn failed: {result.get('error')}"
    delivery = result["delivery"]
    # the old pane's transcript, kept before it was removed (pure/omx/transcripts.py)
    kept = [f"its old pane's transcript: {result['previousTranscript']}"] if result.get("previousTranscript") else []
    return "\n".join([f"{result['worker']} respawned in pane {result['paneId']} (pid {result['pid']}; was "
                      f"{result['previousPaneId']}); task {delivery['status'].replace('_', ' ')} "
                      f"({delivery['reason']})", *kept, *(result.get("transcriptWarnings") or [])])


def cmd_respawn(args: argparse.Namespace) -> int:
    from pure.omx.respawn import RespawnRequest
    from shell.cli.operation import run_cli_operation

    environ = dict(os.environ)
    cwd = os.path.abspath(args.cwd)
    request = RespawnRequest(team=args.team, worker=args.worker, cwd=cwd, env=recorded_env(environ),
                             cli_problems=agent_clis(environ, cwd)[1])
    return run_cli_operation("team.respawn", request, args, env=environ, render=render_respawn,
                             predicted_capture=PREDICTED_READY_OUTPUT)
