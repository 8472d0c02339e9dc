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


def _exclusions(cwd: Path) -> None:
    team = Team(cwd, "exclusions", 4)
    team.set_panes(owner="team:scale-down", leader="%11", hud="%12", worker_1=("%11", 42411),
                   worker_2=("%12", 42412), worker_3=("%13", 42413), worker_4=("%14", 42414))


def _unpinned(cwd: Path) -> None:
    team = Team(cwd, "unpinned", 2)
    team.set_panes(owner="team:scale-down", worker_2=("%405", None))


def _count_mode(cwd: Path) -> None:
    team = Team(cwd, "count-mode", 4)
    team.set_panes(owner="team:scale-down", worker_1=("%1", 4001), worker_2=("%2", 4002), worker_3=("%3", 4003),
                   worker_4=("%4", 4004))
    team.worker_file("worker-1", "status.json").write_text(
        '{"state":"working","updated_at":"2026-07-14T00:00:00.000Z"}')
    team.worker_file("worker-3", "status.json").write_text(
        '{"state":"done","updated_at":"2026-07-14T00:00:00.000Z"}')


def _authority(cwd: Path) -> None:
    team = Team(cwd, "authority", 3)
    team.set_panes(owner="team:scale-down")

    def drop(config: dict[str, Any]) -> None:
        config["workers"] = config["workers"][:1]
        config["worker_count"] = 1
    team.update(drop)
    for i, pane in ((2, "%13"), (3, "%14")):
        team.worker_file(f"worker-{i}", "identity.json").write_text(
            f'{{"name":"worker-{i}","index":{i},"pane_id":"{pane}","pid":{42400 + int(pane[1:])}}}')
    team.debt_path().write_text(
        '{"schema_version":1,"operation":"scale_down","status":"pending_teardown",'
        '"created_at":"2026-07-14T00:00:00.000Z","removed_worker_names":["worker-2","worker-3"],'
        '"workers":[{"name":"worker-2","index":2,"pane_id":"%13","pid":42413},'
        '{"name":"worker-3","index":3,"pane_id":"%14","pid":42414}],'
        '"resource_workers":[{"name":"worker-2"},{"name":"worker-3"}]}')


def _worktree(cwd: Path) -> None:
    import os
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    git("init", "-q", "-b", "main")
    (cwd / ".gitignore").write_text(".omx/\n")
    (cwd / "AGENTS.md").write_text("# Root instructions\n")
    git("add", ".gitignore", "AGENTS.md")
    git("commit", "-qm", "init")
    team = Team(cwd, "worktree", 2)
    worktree = cwd / ".omx" / "team" / "worktree" / "worktrees" / "worker-2"
    git("worktree", "add", "-q", "--detach", str(worktree))
    (worktree / "AGENTS.md").write_text("# generated worker overlay\n")
    team.worker_file("worker-2", "root-agents-backup.json").write_text(
        '{"existed":true,"tracked":true,"previousContent":"# Root instructions\\n"}')
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413))
    team.update(lambda c: c["workers"][1].update({
        "worktree_path": str(worktree), "worktree_repo_root": str(cwd), "worktree_detached": True,
        "worktree_created": True}))


def _not_a_worktree(cwd: Path) -> None:
    _worktree(cwd)
    import shutil
    import subprocess

    worktree = cwd / ".omx" / "team" / "worktree" / "worktrees" / "worker-2"
    subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=cwd, check=True, capture_output=True)
    worktree.mkdir(parents=True)
    (worktree / "plain.txt").write_text("not a worktree")
    del shutil


def _empty(cwd: Path) -> None:
    Team(cwd, "empty", 0)


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
    "exclusions_then_reconcile": {
        "setup": _exclusions, "team": "exclusions",
        "stub": {"panes": {"%11": [0, 42411], "%12": [0, 42412], "%13": [0, 42413], "%14": [0, 42414]},
                 "owner": "team:scale-down"},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-1", "worker-2", "worker-3"],
                                                  "force": True}},
                  {"fn": "reconcile"}],
    },
    "unpinned_live_then_gone": {
        "setup": _unpinned, "team": "unpinned",
        "stub": {"panes": {"%405": [0, 999405]}, "show_exit": 99, "on_kill": {"%405": "fail"}},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-2"], "force": True}},
                  {"fn": "reconcile"},
                  {"stub": {"panes": {"%405": [1, 999405]}, "show_exit": 99}},
                  {"fn": "reconcile"}],
    },
    "count_mode_unforced": {
        "setup": _count_mode, "team": "count-mode",
        "stub": {"panes": {"%1": [0, 4001], "%2": [0, 4002], "%3": [0, 4003], "%4": [0, 4004]},
                 "owner": "team:scale-down"},
        "calls": [{"fn": "scaleDown", "options": {"count": 2}},
                  {"fn": "scaleDown", "options": {"count": 2}},
                  {"fn": "scaleDown", "options": {"count": 1, "force": True}}],
    },
    "debt_authority_mixed": {
        "setup": _authority, "team": "authority",
        "stub": {"panes": {"%13": [0, 42413], "%14": [0, 52414]}, "owner": "team:scale-down"},
        "calls": [{"fn": "reconcile"},
                  {"stub": {"panes": {"%14": [0, 52414]}, "owner": "team:scale-down"}},
                  {"fn": "reconcile"},
                  {"stub": {"panes": {}, "owner": "team:scale-down"}},
                  {"fn": "reconcile"}],
    },
    "worktree_cleanup_real_git": {
        "setup": _worktree, "team": "worktree",
        "stub": {"panes": {"%13": [0, 42413]}, "owner": "team:scale-down"},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-2"], "force": True}}],
    },
    "resource_cleanup_failure": {
        "setup": _not_a_worktree, "team": "worktree",
        "stub": {"panes": {"%13": [0, 42413]}, "owner": "team:scale-down"},
        "calls": [{"fn": "scaleDown", "options": {"workerNames": ["worker-2"], "force": True}},
                  {"fn": "reconcile"}],
    },
    "no_workers_selected": {
        "setup": _empty, "team": "empty", "stub": {"panes": {}},
        "calls": [{"fn": "scaleDown", "options": {"count": 1, "force": True}},
                  {"fn": "scaleDown", "options": {"count": 1}}],
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
