"""Team fixtures shaped exactly like oh-my-codex 0.20.3 ``initTeamState`` output (probed with node)."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

from pure import model as m
from pure.omx.codec import render_json
from pure.omx.state import TeamPaths
from pure.program import Program
from shell.run.loop import run_program
from tests.fixtures.omx_team import init_team_config
from tests.harness import ScenarioExecutor

CREATED = "2026-07-14T00:00:00.000Z"


def config_for(team: str, workers: int) -> dict[str, Any]:
    return init_team_config(team, workers, created=CREATED)


def manifest_for(config: dict[str, Any]) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "schema_version": 2,
        "name": config["name"],
        "task": config["task"],
        "leader": {"session_id": "", "worker_id": "leader-fixed", "role": "coordinator"},
        "policy": {"worker_launch_mode": "interactive", "display_mode": "auto",
                   "dispatch_mode": "hook_preferred_with_fallback", "dispatch_ack_timeout_ms": 2000},
        "governance": {"delegation_only": False, "plan_approval_required": False, "nested_teams_allowed": False,
                       "one_team_per_leader_session": True, "cleanup_requires_all_workers_inactive": True},
        "lifecycle_profile": "default",
        "permissions_snapshot": {"approval_mode": "unknown", "sandbox_mode": "unknown", "network_access": True},
        "tmux_session": config["tmux_session"],
        "worker_count": config["worker_count"],
        "workers": config["workers"],
        "next_task_id": config["next_task_id"],
        "created_at": config["created_at"],
    }
    for key in ("leader_cwd", "team_state_root", "workspace_mode", "worktree_mode"):
        if key in config:
            manifest[key] = config[key]
    for key in ("leader_pane_id", "leader_pane_pid", "hud_pane_pid", "hud_pane_id", "tmux_pane_owner_id",
                "resize_hook_name", "resize_hook_target", "next_worker_index", "config_generation"):
        manifest[key] = config.get(key)
    return manifest


class Team:
    """A team directory on disk plus helpers to shape it the way the seed's fixtures do."""

    def __init__(self, cwd: Path, name: str, workers: int, state_root: Path | None = None) -> None:
        self.cwd = cwd
        self.name = name
        self.root = state_root or cwd / ".omx" / "state"
        self.paths = TeamPaths(str(self.root), name)
        self.dir = Path(self.paths.team_dir)
        for sub in ("workers", "tasks", "claims", "mailbox", "dispatch", "events", "approvals"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "dispatch" / "requests.json").write_text("[]")
        for i in range(1, workers + 1):
            (self.dir / "workers" / f"worker-{i}").mkdir(parents=True, exist_ok=True)
        self.save(config_for(name, workers))

    # config --------------------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads((self.dir / "config.json").read_text())
        return value

    def manifest(self) -> dict[str, Any] | None:
        path = self.dir / "manifest.v2.json"
        return json.loads(path.read_text()) if path.exists() else None

    def save(self, config: dict[str, Any]) -> None:
        (self.dir / "config.json").write_text(render_json(config))
        (self.dir / "manifest.v2.json").write_text(render_json(manifest_for(config)))

    def update(self, change: Callable[[dict[str, Any]], None]) -> None:
        config = self.config()
        change(config)
        self.save(config)

    def set_panes(self, owner: str | None = None, leader: str | None = None, hud: str | None = None,
                  **panes: tuple[str, int | None]) -> None:
        def change(config: dict[str, Any]) -> None:
            if owner is not None:
                config["tmux_pane_owner_id"] = owner
            if leader is not None:
                config["leader_pane_id"] = leader
            if hud is not None:
                config["hud_pane_id"] = hud
            for worker in config["workers"]:
                key = worker["name"].replace("-", "_")
                if key in panes:
                    pane, pid = panes[key]
                    worker["pane_id"] = pane
                    if pid is None:
                        worker.pop("pid", None)
                    else:
                        worker["pid"] = pid
        self.update(change)

    def worker_names(self) -> list[str]:
        return [w["name"] for w in self.config()["workers"]]

    # tasks ---------------------------------------------------------------------------------
    def write_task(self, task_id: str, subject: str, *, owner: str | None = None, status: str = "pending",
                   claim: dict[str, Any] | None = None, version: int = 1) -> None:
        task: dict[str, Any] = {"subject": subject, "description": f"{subject} description"}
        if owner is not None:
            task["owner"] = owner
        task.update({"id": task_id, "created_at": CREATED, "depends_on": [], "version": version, "status": status})
        if claim is not None:
            task["claim"] = claim
        (self.dir / "tasks" / f"task-{task_id}.json").write_text(render_json(task))

    def task(self, task_id: str) -> dict[str, Any]:
        value: dict[str, Any] = json.loads((self.dir / "tasks" / f"task-{task_id}.json").read_text())
        return value

    def worker_file(self, worker: str, name: str) -> Path:
        return self.dir / "workers" / worker / name

    def debt_path(self) -> Path:
        return self.dir / ".scale-down-cleanup-debt.json"

    def journal_path(self) -> Path:
        return self.dir / ".membership-task-transaction.json"


def drive(factory: Callable[[], Program], executor: ScenarioExecutor) -> tuple[m.Done, list[m.Entry]]:
    return run_program(factory, executor)


def program_of(gen: Generator[m.Step, m.Observation, Any]) -> Program:
    """Wrap a sub-program into a Program returning Done(ok, result=<value repr>)."""
    value = yield from gen
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue({"ok": True, "value": repr(value)})))
