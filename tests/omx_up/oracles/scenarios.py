"""Scale-up scenarios run through both oh-my-codex 0.20.3 (oracle generation) and panefleet (test).

Every scenario starts from the seed's F-UP team written by :class:`tests.omx_up.fixtures.UpTeam`
and answers tmux with the data-driven stub of ``stub_tmux.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.omx_up.fixtures import UpTeam, init_git_repo

STUB_OK: dict[str, Any] = {"owner": "team:scale-up", "splits": ["%31"],
                           "panes": [["%11", 0, 42411], ["%21", 0, 42421], ["%31", 0, 42424]]}
BASE_ENV = {"OMX_TEAM_SCALING_ENABLED": "1", "OMX_TEAM_SKIP_READY_WAIT": "1", "SHELL": "/bin/bash"}
TASK = {"subject": "oracle task", "description": "oracle task description", "owner": "worker-2"}


def _no_pid(config: dict[str, Any]) -> None:
    config["workers"][0].pop("pid", None)


def _leader_only(config: dict[str, Any]) -> None:
    config["workers"][0].pop("pane_id", None)
    config["workers"][0].pop("pid", None)


def _leader_only_no_pid(config: dict[str, Any]) -> None:
    _leader_only(config)
    config["leader_pane_pid"] = None


def _no_owner(config: dict[str, Any]) -> None:
    config["tmux_pane_owner_id"] = " "


def _worktree(mode: dict[str, Any] | None) -> Callable[[dict[str, Any]], None]:
    def change(config: dict[str, Any]) -> None:
        config["workspace_mode"] = "worktree"
        if mode is not None:
            config["worktree_mode"] = mode
    return change


Scenario = dict[str, Any]

SCENARIOS: dict[str, Scenario] = {
    "success_one_task": {"stub": STUB_OK, "tasks": [TASK]},
    "success_three_workers": {
        "count": 3,
        "stub": {"owner": "team:scale-up", "splits": ["%31", "%32", "%33"],
                 "panes": [["%11", 0, 42411], ["%21", 0, 42421], ["%31", 0, 42431], ["%32", 0, 42432],
                           ["%33", 0, 42433]]},
        "tasks": [{**TASK, "owner": f"worker-{i}", "subject": f"task {i}"} for i in (2, 3, 4)],
    },
    "role_and_blocked_by": {"stub": STUB_OK,
                            "tasks": [TASK, {**TASK, "subject": "second", "role": "writer", "blocked_by": ["1"]}]},
    "legacy_pid_migration": {"stub": STUB_OK, "change": _no_pid},
    "first_proof_dead": {"stub": {**STUB_OK, "panes": [["%21", 1, 42421]]}, "tasks": [TASK]},
    "first_proof_pid_changed": {"stub": {**STUB_OK, "panes": [["%21", 0, 52421]]}, "tasks": [TASK]},
    "proof_lost_before_split": {"stub": {**STUB_OK, "list_rules": [[2, 99, 1, ""]]}, "tasks": [TASK]},
    "owner_tag_failure": {"stub": {**STUB_OK, "tag_fails": True,
                                   "list_rules": [[6, 99, 0, "malformed pane snapshot\n"]]}, "tasks": [TASK]},
    "unpinned_pane": {"stub": {**STUB_OK, "panes": [["%11", 0, 42411], ["%21", 0, 42421]],
                               "list_rules": [[4, 99, 0, "malformed pane snapshot\n"]]}},
    "identity_failure": {"stub": STUB_OK, "tasks": [TASK], "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "identity"}},
    "config_failure": {"stub": STUB_OK, "tasks": [TASK], "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "config"}},
    "rollback_manifest_persistence_after_config": {
        "stub": STUB_OK, "tasks": [TASK], "read_after": True,
        "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "config,rollback-membership-manifest-persistence"}},
    "inbox_failure_pane_kept": {"stub": {**STUB_OK, "kill_keeps": True}, "tasks": [TASK],
                                "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "inbox"}},
    "rollback_config_persistence": {
        "stub": STUB_OK, "tasks": [TASK], "read_after": True,
        "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "finalization,rollback-membership-config-persistence"}},
    "launch_args_conflict": {
        "stub": STUB_OK, "tasks": [TASK],
        "env": {"OMX_TEAM_WORKER_LAUNCH_ARGS": "--dangerously-bypass-approvals-and-sandbox --sandbox workspace-write"}},
    "capacity": {"stub": STUB_OK, "count": 20},
    "detached_worktree": {"stub": STUB_OK, "tasks": [TASK], "git": True,
                          "change": _worktree({"enabled": True, "detached": True, "name": None})},
    "named_worktree": {"stub": STUB_OK, "tasks": [TASK], "git": True,
                       "change": _worktree({"enabled": True, "detached": False, "name": "feature/oracle"})},
    "derived_worktree_mode": {"stub": STUB_OK, "git": True, "change": _worktree(None)},
    "split_from_leader": {"stub": STUB_OK, "tasks": [TASK], "change": _leader_only},
    "leader_pid_migration": {"stub": STUB_OK, "change": _leader_only_no_pid},
    "leader_pid_migration_then_rollback": {"stub": STUB_OK, "change": _leader_only_no_pid, "read_after": True,
                                           "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "identity"}},
    "worker_pid_migration_then_rollback": {"stub": STUB_OK, "change": _no_pid, "read_after": True,
                                           "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "identity"}},
    "split_failure": {"stub": {**STUB_OK, "split_answer": [1, "", "no space for new pane\n"]}, "tasks": [TASK]},
    "split_without_pane_id": {"stub": {**STUB_OK, "split_answer": [0, "oops\n", ""]}},
    "owner_unavailable": {"stub": STUB_OK, "change": _no_owner},
    "kill_fails_after_identity_failure": {"stub": {**STUB_OK, "kill_keeps": True}, "tasks": [TASK],
                                          "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "identity"}},
    "dispatch_failure": {"stub": {**STUB_OK, "send_fails": True}, "tasks": [TASK]},
    "dispatch_failure_tmux_says_why": {"stub": {**STUB_OK, "send_fails": "send failed\n"}, "tasks": [TASK]},
    # the one designed difference: no receipt can be observed, so no wait and an honest last_reason; the
    # delivery log's result line says what panefleet did (keys sent), not oh-my-codex's queue for a hook
    "hook_preferred_policy": {"stub": STUB_OK, "tasks": [TASK], "dispatch_mode": "hook_preferred_with_fallback",
                              "ours": {"hook_receipt_unobservable:": "fallback_confirmed:"},
                              "log_result_differs": True},
    "cli_map_codex_claude": {
        "count": 2, "tasks": [],
        "stub": {"owner": "team:scale-up", "splits": ["%31", "%32"],
                 "panes": [["%11", 0, 42411], ["%21", 0, 42421], ["%31", 0, 42431], ["%32", 0, 42432]]},
        "env": {"OMX_TEAM_WORKER_CLI_MAP": "codex,claude"}},
    "worktree_identity_failure": {"stub": STUB_OK, "tasks": [TASK], "git": True,
                                  "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "identity"},
                                  "change": _worktree({"enabled": True, "detached": True, "name": None})},
    "worktree_finalization_failure": {"stub": STUB_OK, "tasks": [TASK], "git": True,
                                      "env": {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "finalization"},
                                      "change": _worktree({"enabled": True, "detached": True, "name": None})},
}


def setup(name: str, cwd: Path) -> UpTeam:
    scenario = SCENARIOS[name]
    change: Callable[[dict[str, Any]], None] | None = scenario.get("change")
    if scenario.get("git"):
        init_git_repo(cwd)
    return UpTeam(cwd, change=change, dispatch_mode=scenario.get("dispatch_mode", "transport_direct"))


def call(name: str, cwd: Path) -> dict[str, Any]:
    scenario = SCENARIOS[name]
    return {"fn": "scaleUp", "team": "scale-up", "count": scenario.get("count", 1), "agentType": "executor",
            "tasks": scenario.get("tasks", []), "cwd": str(cwd), "env": {**BASE_ENV, **scenario.get("env", {})}}
