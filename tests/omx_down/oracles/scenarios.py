"""Differential scenarios: the same setup and calls, run by oh-my-codex (oracle) and by panefleet."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.omx_down.fixtures import Team

CLAIM = {"owner": "worker-2", "token": "t", "leased_until": "2999-01-01T00:00:00.000Z"}
ENV = {"OMX_TEAM_SCALING_ENABLED": "1"}


def _later_kill_fails(cwd: Path) -> None:
    team = Team(cwd, "later-kill-fails", 3)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413), worker_3=("%14", 42414))
    team.write_task("1", "A", owner="worker-2", status="in_progress", claim=CLAIM)
    team.write_task("2", "B", owner="worker-3")
    team.write_task("3", "done", owner="worker-2", status="completed")
    team.worker_file("worker-3", "status.json").write_text('{\n "state" : "idle", "reason":"three"}\n')


def _proof_lost(cwd: Path) -> None:
    team = Team(cwd, "proof-lost", 3)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413), worker_3=("%14", 42414))
    for i, pane in ((2, "%13"), (3, "%14")):
        team.worker_file(f"worker-{i}", "identity.json").write_text(
            f'{{"name":"worker-{i}","index":{i},"pane_id":"{pane}","pid":{42400 + int(pane[1:])}}}')
    team.write_task("1", "A", owner="worker-2", status="in_progress", claim=CLAIM)
    team.write_task("2", "B", owner="worker-3", status="blocked")


def _dead_and_absent(cwd: Path) -> None:
    team = Team(cwd, "dead-and-absent", 4)
    team.set_panes(owner="team:scale-down", worker_2=("%21", 4221), worker_3=("%22", None), worker_4=("%23", 4223))
    team.write_task("1", "A", owner="worker-4")


def _interrupted(cwd: Path) -> None:
    team = Team(cwd, "interrupted", 2)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413))
    team.write_task("1", "first", owner="worker-2")
    team.write_task("2", "second", owner="worker-2", status="in_progress", claim=CLAIM)


def _tasks(cwd: Path) -> None:
    Team(cwd, "tasks", 2)


Scenario = dict[str, Any]

SCENARIOS: dict[str, Scenario] = {
    "later_kill_fails": {
        "setup": _later_kill_fails, "team": "later-kill-fails",
        "stub": {"panes": {"%13": [0, 42413], "%14": [0, 42414]}, "owner": "team:scale-down",
                 "on_kill": {"%14": "fail"}},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-2", "worker-3"], "force": True}}],
    },
    "proof_lost_then_reconcile": {
        "setup": _proof_lost, "team": "proof-lost",
        "stub": {"panes": {"%13": [0, 42413], "%14": [0, 42414]}, "owner": "team:scale-down",
                 "on_kill": {"%13": "lose"}},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-2", "worker-3"], "force": True}},
                  {"stub": {"panes": {"%13": [0, 42413], "%14": [0, 42414]}, "owner": "team:scale-down"}},
                  {"fn": "reconcile"}],
    },
    "dead_and_absent": {
        "setup": _dead_and_absent, "team": "dead-and-absent",
        "stub": {"panes": {"%21": [1, 4221], "%30": [0, 4230]}, "owner": "team:scale-down"},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-2", "worker-3", "worker-4"],
                                                  "force": True}}],
    },
    "interrupted_then_read": {
        "setup": _interrupted, "team": "interrupted",
        "stub": {"panes": {}, "owner": "team:scale-down"},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-2"], "force": True},
                   "env": {"OMX_TEAM_SCALE_DOWN_INJECT_FAILURE": "after-first-task-write"}},
                  {"fn": "reconcile"}],
    },
    "rollback_persistence_then_read": {
        "setup": _interrupted, "team": "interrupted",
        "stub": {"panes": {}, "owner": "team:scale-down"},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-2"], "force": True},
                   "env": {"OMX_TEAM_SCALE_DOWN_INJECT_FAILURE": "rollback-persistence-failure"}},
                  {"fn": "reconcile"}],
    },
    "tasks_create_and_claim": {
        "setup": _tasks, "team": "tasks", "stub": {"panes": {}},
        "calls": [{"fn": "createTask", "task": {"subject": "s", "description": "d", "owner": "worker-2"}},
                  {"fn": "createTask", "task": {"subject": "t", "description": "e", "status": "blocked",
                                                "blocked_by": ["1"]}},
                  {"fn": "claimTask", "taskId": "2", "worker": "worker-1", "expectedVersion": None},
                  {"fn": "claimTask", "taskId": "1", "worker": "worker-1", "expectedVersion": 1},
                  {"fn": "claimTask", "taskId": "1", "worker": "worker-2", "expectedVersion": 2},
                  {"fn": "claimTask", "taskId": "1", "worker": "worker-2", "expectedVersion": 1},
                  {"fn": "claimTask", "taskId": "9", "worker": "worker-2", "expectedVersion": None},
                  {"fn": "claimTask", "taskId": "1", "worker": "worker-9", "expectedVersion": None}],
    },
}

Setup = Callable[[Path], None]
