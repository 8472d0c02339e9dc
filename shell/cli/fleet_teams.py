"""A fleet team against reality: its facts read (``observe``), and one planned action carried out
(``carry_out``) through the team's registered operations, each with its own proofs.

What is read goes to the pure planner (``pure/fleet/converge.py``); every change is an operation
(``fleet.team_up``, ``fleet.restore_leader``, ``team.debt_reconcile``, ``team.respawn``,
``team.scale_up``, ``team.scale_down``) run with its audit log, so a fleet apply changes nothing that
one of those commands could not.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from pure import model as m
from pure import tmux as t
from pure.fleet.converge import Action, PaneState, TeamFacts, WorkerFacts
from pure.fleet.spec import TeamSpec, WorkerGroup
from pure.omx.state import TeamPaths, resolve_state_root
from shell.run.executor import Executor

if TYPE_CHECKING:
    from shell.run.hosts import HostIdentity

GONE_VERDICTS = ("absent", "dead", "none")


class FleetReadError(Exception):
    """A team's records or panes could not be read: nothing can be planned for it."""


@frozen(kw_only=True)
class Target:
    """Where a fleet team lives: its folder, its tmux server and the environment its operations get."""

    spec: TeamSpec
    socket: str | None
    env: dict[str, str]  # the recorded environment (shell/cli/environment.py), scaling enabled
    identity: HostIdentity | None = None  # of its host, read and checked at this run's start (fleet.py)
    unreached: str = ""  # why its host could not be read (``fleet plan`` goes on: fleet_targets.py); "" when read

    @property
    def host(self) -> str | None:
        """The machine the team lives on (docs/hosts.md, "A team on a host"); None: this one."""
        return self.spec.host

    @property
    def paths(self) -> TeamPaths:
        return TeamPaths(resolve_state_root(self.spec.cwd, self.env), self.spec.name)

    def executor(self) -> Executor:
        """Steps run with panefleet's whole environment (tmux decides UTF-8 output from its locale)."""
        return Executor(env={**os.environ, **self.env}, tmux_socket=self.socket)

    def read_text(self, path: str) -> str | None:
        """A file of the team, where the team lives; None when it does not exist. Raises
        :class:`FleetReadError` when it cannot be read (its host not reached included)."""
        executor = self.executor()
        try:
            seen = executor.execute(m.ReadFile(path=path, host=self.host))
        finally:
            executor.end_run()
        assert isinstance(seen, m.FileData)
        if seen.content is None and seen.error:
            raise FleetReadError(f"team {self.spec.name}: {path}: {seen.error}")
        return seen.content


@frozen(kw_only=True)
class Observed:
    facts: TeamFacts
    server_down: bool = False
    unknown: str = ""  # why nothing could be read of the team (its host not reached): its workers are unknown


def observe(target: Target) -> Observed:
    """Read one team: its config and the proof of each recorded pane (``team.status``, read only)."""
    paths = target.paths
    if target.read_text(paths.config) is None:
        return Observed(facts=TeamFacts(exists=False))
    status, error = _status(target)
    wait = takeover_wait(error)
    if wait is not None:
        time.sleep(wait)
        status, error = _status(target)
    down = error.startswith("pane_snapshot_unavailable") and t.SERVER_NOT_RUNNING.search(error) is not None
    if not status.get("ok") and not down:
        raise FleetReadError(f"team {target.spec.name}: {error or 'its status could not be read'}")
    try:
        config = json.loads(target.read_text(paths.config) or "")  # read after the status, which may recover it
    except ValueError as exc:
        raise FleetReadError(f"team {target.spec.name}: {paths.config}: {exc}") from None
    reports = {r["name"]: r for r in status.get("panes") or [] if isinstance(r, dict) and r.get("role") == "worker"}
    leader = next((r for r in status.get("panes") or [] if isinstance(r, dict) and r.get("role") == "leader"), {})
    # a worker a rollback kept (pure/omx/kept_workers.py) is debt the sweep removes, not one of a group's
    kept = {k.get("worker") for k in status.get("keptWorkers") or [] if isinstance(k, dict)}
    workers = []
    for record in config.get("workers") or []:
        if not isinstance(record, dict) or not isinstance(record.get("name"), str) or record["name"] in kept:
            continue
        report = reports.get(record["name"], {})
        pane, why = _pane_state(report, down)
        workers.append(WorkerFacts(
            name=record["name"], index=int(record.get("index") or 0), cli=str(record.get("worker_cli") or "codex"),
            role=str(record.get("role") or config.get("agent_type") or "executor"),
            pane_id=record.get("pane_id") if isinstance(record.get("pane_id"), str) else None, pane=pane, why=why))
    leader_state, leader_why = _pane_state(leader, down)
    facts = TeamFacts(
        exists=True, leader_pane=config.get("leader_pane_id") if isinstance(config.get("leader_pane_id"), str) else None,
        leader=leader_state, leader_why=leader_why, workers=tuple(workers),
        next_index=int(config.get("next_worker_index") or len(workers) + 1), debt=_debt_lines(status))
    return Observed(facts=facts, server_down=down)


def _status(target: Target) -> tuple[dict[str, Any], str]:
    from pure.team import TeamStatusRequest, team_status
    from shell.run.loop import placed, run_program

    request = TeamStatusRequest(team=target.spec.name, cwd=target.spec.cwd, env=target.env, screens=False)
    done, _journal = run_program(lambda: placed(team_status(request), target.host), target.executor())
    status = done.outcome.result if isinstance(done.outcome.result, dict) else {}
    return status, str(status.get("error") or done.outcome.message or "")


TAKEOVER_WAIT_MAX_S = 15.0


def takeover_wait(error: str) -> float | None:
    """Seconds to wait before trying again a run that timed out on a lock a killed run left without its
    owner (``shell/run/fs.py`` ``takeover_at``); None: do not wait (no such lock, or too long)."""
    from shell.run.fs import takeover_at

    at = takeover_at(error)
    if at is None:
        return None
    wait = at - time.time() + 0.25
    return max(wait, 0.0) if wait <= TAKEOVER_WAIT_MAX_S else None


def _pane_state(report: Mapping[str, Any], server_down: bool) -> tuple[PaneState, str]:
    """A recorded pane as the fleet sees it: ``live`` (live, pinned pid, our owner tag), ``gone`` (no
    such pane, dead, another process under its id, or no tmux server at all) or ``unproven``."""
    if server_down:
        return "gone", "the tmux server is not running"
    verdict = str(report.get("verdict") or "none")
    if verdict in GONE_VERDICTS:
        return "gone", str(report.get("reason") or verdict)
    pinned = report.get("pinnedPid")
    if verdict == "live" and not report.get("pidMatch") and isinstance(pinned, int) and pinned > 0:
        return "gone", f"its id now runs pid {report.get('pid')}, not the pinned {report.get('pinnedPid')}"
    if verdict == "live" and report.get("ownerMatch"):
        return "live", ""
    if verdict == "live":
        return "unproven", f"owner tag {report.get('owner')!r}"
    return "unproven", str(report.get("reason") or verdict)


def _debt_lines(status: Mapping[str, Any]) -> tuple[str, ...]:
    lines: list[str] = []
    if status.get("debt"):
        lines.append("cleanup debt is recorded")
    for stray in status.get("strayPanes") or []:
        lines.append(f"stray pane {stray.get('paneId') if isinstance(stray, dict) else stray}")
    for left in status.get("leftoverWorkers") or []:
        lines.append(f"leftover worker {left.get('worker') if isinstance(left, dict) else left}")
    for tree in status.get("leftoverWorktrees") or []:
        lines.append(f"leftover worktree {tree.get('path') if isinstance(tree, dict) else tree}")
    for kept in status.get("keptWorkers") or []:
        lines.append(f"kept worker {kept.get('worker') if isinstance(kept, dict) else kept}")
    for task in status.get("undeliveredTasks") or []:
        lines.append(f"undelivered task of {task.get('worker') if isinstance(task, dict) else task}")
    return tuple(lines)


# ------------------------------------------------------------------------------------------ actions


@frozen(kw_only=True)
class Carried:
    action: Action
    done: m.Done
    journal: list[m.Entry]

    @property
    def ok(self) -> bool:
        return self.done.outcome.status == "ok"


def quote_launch_arg(arg: str) -> str:
    """``arg`` quoted for oh-my-codex's launch-argument tokeniser (pure/omx/launch/args.py): single
    quotes keep everything literally; a single quote is closed, given double-quoted, and reopened."""
    return "'" + arg.replace("'", "'\"'\"'") + "'"


def group_env(target: Target, group: WorkerGroup) -> dict[str, str]:
    """The environment a group's scale-up is planned with: its CLI, and its arguments and model as
    oh-my-codex's ``OMX_TEAM_WORKER_LAUNCH_ARGS`` (each quoted, so a value is never re-split)."""
    env = {k: v for k, v in target.env.items() if k not in ("OMX_TEAM_WORKER_CLI_MAP", "OMX_TEAM_WORKER_LAUNCH_ARGS")}
    env["OMX_TEAM_WORKER_CLI"] = group.cli
    args = [*group.args, *(("--model", group.model) if group.model is not None else ())]
    if args:
        env["OMX_TEAM_WORKER_LAUNCH_ARGS"] = " ".join(quote_launch_arg(a) for a in args)
    return env


def request_for(target: Target, action: Action, environ: Mapping[str, str]) -> tuple[str, object]:
    """The operation and request that carry out ``action``."""
    spec, env = target.spec, target.env
    if action.kind == "create_team":
        from pure.fleet.leader import TeamUpRequest

        return "fleet.team_up", TeamUpRequest(team=spec.name, cwd=spec.cwd, env=env, leader_pane=spec.leader_pane,
                                              session=spec.tmux_session or spec.name)
    if action.kind == "restore_leader":
        from pure.fleet.leader import RestoreLeaderRequest

        return "fleet.restore_leader", RestoreLeaderRequest(team=spec.name, cwd=spec.cwd, env=env)
    if action.kind == "sweep_debt":
        from pure.omx.scale_down import DebtRequest

        return "team.debt_reconcile", DebtRequest(team=spec.name, cwd=spec.cwd, env=env)
    if action.kind == "respawn":
        from pure.omx.respawn import RespawnRequest
        from shell.cli.scale_up import agent_clis

        problems = agent_clis(environ, spec.cwd)[1] if target.host is None else None  # on a host: `doctor --host`
        return "team.respawn", RespawnRequest(team=spec.name, worker=action.workers[0], cwd=spec.cwd, env=env,
                                              cli_problems=problems)
    if action.kind == "remove":
        from pure.omx.scale_down import ScaleDownRequest

        return "team.scale_down", ScaleDownRequest(team=spec.name, cwd=spec.cwd, env=env,
                                                   worker_names=action.workers, force=True)
    assert action.kind == "add" and action.group is not None, action
    return "team.scale_up", _scale_up(target, action.group, len(action.workers), environ)


def _scale_up(target: Target, group: WorkerGroup, count: int, environ: Mapping[str, str]) -> object:
    from pure.omx.scale_up import ScaleUpRequest
    from shell.cli.scale_up import agent_clis, existing_shells
    from shell.cli.task_input import parse_task
    from shell.cli.team_host import agent_facts

    if target.host is not None:
        try:
            cli_paths, node_path, shells = agent_facts(target.host, environ)
        except ValueError as exc:
            raise FleetReadError(f"team {target.spec.name}: {exc}") from None
        cli_problems = None  # `panefleet doctor --host` checks the CLIs there
    else:
        cli_paths, cli_problems = agent_clis(environ, target.spec.cwd)
        node_path = shutil.which("node", path=environ.get("PATH", os.defpath)) or "node"
        shells = existing_shells(dict(environ))
    tasks = (parse_task(group.task, "task"),) * count if group.task is not None else ()
    return ScaleUpRequest(
        team=target.spec.name, count=count, cwd=target.spec.cwd, agent_type=group.role, tasks=tasks,
        env=group_env(target, group), process_argv=tuple(sys.argv), cli_paths=cli_paths,
        node_path=node_path, existing_shells=shells,
        worker_env=dict(group.env) or None, worktree=True if group.worktree else None, cli_problems=cli_problems)


def carry_out(target: Target, action: Action, environ: Mapping[str, str]) -> Carried:
    from shell.run.audit_prune import prune_after_run
    from shell.run.loop import run_operation

    try:
        name, request = request_for(target, action, environ)
    except FleetReadError as exc:  # what the request needs to know of the team's host could not be read
        failed = m.Done(outcome=m.Outcome(status="error", message=str(exc),
                                          result=m.JsonValue({"ok": False, "error": str(exc)})))
        return Carried(action=action, done=failed, journal=[])
    done, journal, audit = run_operation(name, request, target.executor(), env=environ, host=target.host)
    prune_after_run(environ, audit)
    return Carried(action=action, done=done, journal=journal)
