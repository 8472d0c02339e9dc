"""A team as oh-my-codex 0.20.3 lays it out, with panes in a simulated tmux server, and the panefleet
operations that read it (``tests/adversary/sim.py`` runs them).

The team ``alpha`` has a leader pane and two workers, all pinned and tagged; worker-3 was removed
earlier and its pane is still live, so a cleanup debt record names it (its identity.json still
matches). Three tasks: task-1 in progress and claimed by worker-2, task-2 pending and depending on
task-3, task-3 completed. One dispatch request, one event line, each worker's status and identity.
``with_journal`` adds a prepared membership journal (its old bytes are the files as they are).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pure import model as m
from pure import operations
from pure.omx.codec import render_json
from pure.omx.scale_down import DebtRequest, ScaleDownRequest
from pure.omx.scale_up import ScaleUpRequest, TaskSpec
from pure.omx.tasks import TaskClaimRequest
from pure.program import Program
from pure.team import TeamStatusRequest
from tests.adversary.sim import OWNER, TmuxServer
from tests.fixtures.omx_team import init_team_config
from tests.omx_down.fixtures import manifest_for

TEAM = "alpha"
CREATED = "2026-07-14T00:00:00.000Z"
ENV = {"OMX_TEAM_SCALING_ENABLED": "1", "OMX_TEAM_SKIP_READY_WAIT": "1", "HOME": "/nonexistent-home",
       "OMX_BYPASS_DEFAULT_SYSTEM_PROMPT": "0"}


def team_dir(cwd: Path, team: str = TEAM) -> Path:
    return cwd / ".omx" / "state" / "team" / team


def _task(task_id: str, subject: str, status: str, **extra: Any) -> dict[str, Any]:
    task: dict[str, Any] = {"subject": subject, "description": f"{subject} description"}
    if "owner" in extra:
        task["owner"] = extra.pop("owner")
    task.update({"id": task_id, "created_at": CREATED, "depends_on": extra.pop("depends_on", []), "version": 2,
                 "status": status})
    task.update(extra)
    return task


def build(cwd: Path, server: TmuxServer, *, with_journal: bool = False) -> Path:
    """Write the team under ``cwd`` and open its panes in ``server``; returns the team directory."""
    owner = f"team:{TEAM}"
    leader = server.new_pane(command="bash", tag=owner)
    panes = [server.new_pane(command=f"worker-{i}", session=leader.session, window=leader.window, tag=owner)
             for i in (1, 2, 3)]
    root = team_dir(cwd)
    for sub in ("workers/worker-1", "workers/worker-2", "workers/worker-3", "tasks", "claims", "mailbox",
                "dispatch", "events"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    config = init_team_config(TEAM, 2, created=CREATED)
    config.update({"leader_pane_id": leader.id, "leader_pane_pid": leader.pid, "leader_cwd": str(cwd),
                   "next_worker_index": 4, "next_task_id": 4, "config_generation": 3})
    for worker, pane in zip(config["workers"], panes[:len(config["workers"])], strict=True):  # worker-3 is removed (debt)
        worker.update({"pane_id": pane.id, "pid": pane.pid, "worker_cli": "codex", "working_dir": str(cwd)})
    files: dict[str, str] = {
        "config.json": render_json(config),
        "manifest.v2.json": render_json(manifest_for(config)),
        "tasks/task-1.json": render_json(_task("1", "one", "in_progress", owner="worker-2", claim={
            "owner": "worker-2", "token": "tok-1", "leased_until": "2026-07-14T00:15:00.000Z"})),
        "tasks/task-2.json": render_json(_task("2", "two", "pending", depends_on=["3"])),
        "tasks/task-3.json": render_json(_task("3", "three", "completed", owner="worker-1")),
        "dispatch/requests.json": render_json([{
            "request_id": "00000000-0000-4000-8000-000000000001", "kind": "inbox", "team_name": TEAM,
            "to_worker": "worker-1", "worker_index": 1, "pane_id": panes[0].id, "trigger_message": "Read inbox",
            "status": "notified", "attempt_count": 1, "created_at": CREATED, "updated_at": CREATED}]),
        "events/events.ndjson": json.dumps({"type": "team_leader_nudge", "team": TEAM, "created_at": CREATED}) + "\n",
    }
    for i, pane in enumerate(panes, start=1):
        files[f"workers/worker-{i}/identity.json"] = render_json(
            {"name": f"worker-{i}", "index": i, "role": "executor", "worker_cli": "codex", "assigned_tasks": [],
             "pid": pane.pid, "pane_id": pane.id, "working_dir": str(cwd)})
    for i in (1, 2):
        files[f"workers/worker-{i}/status.json"] = render_json({"state": "idle", "updated_at": CREATED})
    gone = panes[2]
    files[".scale-down-cleanup-debt.json"] = render_json({
        "schema_version": 1, "operation": "scale_down", "status": "unresolved", "created_at": CREATED,
        "removed_worker_names": ["worker-3"],
        "workers": [{"name": "worker-3", "index": 3, "pane_id": gone.id, "pid": gone.pid}],
        "resource_workers": [{"name": "worker-3"}], "updated_at": CREATED,
        "unresolved_panes": [{"name": "worker-3", "index": 3, "pane_id": gone.id, "pid": gone.pid}],
        "reasons": [f"{gone.id}:kill_failed"]})
    if with_journal:
        entries = []
        for name in ("tasks/task-1.json", "config.json", "manifest.v2.json"):
            changed = json.loads(files[name])
            changed["version" if name.startswith("tasks") else "worker_count"] = 1
            entries.append({"path": str(root / name), "oldBytes": files[name], "newBytes": render_json(changed)})
        files[".membership-task-transaction.json"] = render_json(
            {"schemaVersion": 1, "phase": "prepared", "files": entries})
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    assert panes[0].options[OWNER] == owner
    return root


FILES = ("config.json", "manifest.v2.json", "tasks/task-1.json", "tasks/task-2.json", "tasks/task-3.json",
         "workers/worker-1/status.json", "workers/worker-2/status.json", "workers/worker-1/identity.json",
         "workers/worker-3/identity.json", ".scale-down-cleanup-debt.json", "dispatch/requests.json",
         "events/events.ndjson", ".membership-task-transaction.json")
JOURNAL = ".membership-task-transaction.json"


# ------------------------------------------------------------------------------------ operations


Request = Callable[[Path], tuple[str, object]]


def _scale_down_named(cwd: Path) -> tuple[str, object]:
    return "team.scale_down", ScaleDownRequest(team=TEAM, cwd=str(cwd), env=dict(ENV), worker_names=("worker-2",),
                                               force=True)


def _scale_down_count(cwd: Path) -> tuple[str, object]:
    return "team.scale_down", ScaleDownRequest(team=TEAM, cwd=str(cwd), env=dict(ENV), count=1)


def _scale_up(cwd: Path) -> tuple[str, object]:
    return "team.scale_up", ScaleUpRequest(
        team=TEAM, count=1, cwd=str(cwd), env=dict(ENV), node_path="/usr/bin/node",
        tasks=(TaskSpec(subject="new", description="new work", owner="worker-4"),))


def _status(cwd: Path) -> tuple[str, object]:
    return "team.status", TeamStatusRequest(team=TEAM, cwd=str(cwd), env=dict(ENV))


def _claim(cwd: Path) -> tuple[str, object]:
    return "team.task_claim", TaskClaimRequest(team=TEAM, cwd=str(cwd), task_id="2", worker="worker-1", env=dict(ENV))


def _reconcile(cwd: Path) -> tuple[str, object]:
    return "team.debt_reconcile", DebtRequest(team=TEAM, cwd=str(cwd), env=dict(ENV))


def _debt_show(cwd: Path) -> tuple[str, object]:
    return "team.debt_show", DebtRequest(team=TEAM, cwd=str(cwd), env=dict(ENV))


OPERATIONS: dict[str, Request] = {
    "scale-down": _scale_down_named, "scale-down-count": _scale_down_count, "scale-up": _scale_up,
    "status": _status, "task-claim": _claim, "debt-reconcile": _reconcile, "debt-show": _debt_show,
}


def program(name: str, request: object) -> Callable[[], Program]:
    op = operations.get(name)
    assert op is not None, name
    return lambda: op.program(request)


def outcome_of(done: m.Done) -> tuple[str, str]:
    return done.outcome.status, done.outcome.message
