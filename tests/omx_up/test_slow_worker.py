"""One slow worker costs only itself (docs/scale-up.md, "One slow worker"): on a real private tmux
server, four workers of which one never becomes ready."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TmuxServer
from tests.omx_up.test_real_tmux import pf_json, scale_up_with_agent

pytestmark = pytest.mark.tmux

# A stand-in agent: like shell/placeholder_agent.sh, but the worker named in $SLOW_WORKER never shows
# anything, as an agent stuck in its start-up; every start is logged.
AGENT = """#!/bin/sh
echo "$OMX_TEAM_WORKER" >> "{starts}"
if [ "$OMX_TEAM_WORKER" = "alpha/worker-3" ]; then exec sleep 100000; fi
printf 'panefleet placeholder agent %s ready\\n' "$OMX_TEAM_WORKER"
printf '> '
while IFS= read -r line; do printf 'received: %s\\n> ' "$line"; done
exec sleep 2147483647
"""


def _scale_up(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str],
              all_or_nothing: bool, agent_text: str = AGENT) -> tuple[Any, Path, Path, str]:
    starts = tmp_path / "starts"
    done, _env, work, leader = scale_up_with_agent(
        tmux_server, tmp_path, clean_env, agent_text.format(starts=starts), count=4,
        env={"OMX_TEAM_READY_TIMEOUT_MS": "5000"}, tasks=tuple(_task(n) for n in range(1, 5)),
        all_or_nothing=all_or_nothing or None)
    return done, work, starts, leader


def _task(n: int) -> Any:
    from pure.omx.scale_up import TaskSpec

    return TaskSpec(subject=f"task {n}", description=f"the work of worker-{n}", owner=f"worker-{n}")


def _session_panes(server: TmuxServer) -> set[str]:
    return set(server.cmd("list-panes", "-s", "-t", "lead", "-F", "#{pane_id}").stdout.split())


@pytest.mark.tmux_executors("control")
def test_a_worker_that_never_becomes_ready_is_retried_then_removed_alone(
        tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    from shell.cli.scale_up import explain

    done, work, starts, leader = _scale_up(tmux_server, tmp_path, clean_env, all_or_nothing=False)
    result = done.outcome.result
    assert done.outcome.status == "debt", done.outcome  # exit 3: needs attention
    assert [d.kind for d in done.debt] == ["worker_start"] and done.debt[0].subject == "worker-3"
    assert "worker_not_ready:worker-3" in done.debt[0].reason
    # tried once more in a fresh pane, then given up: two starts of worker-3, one of each other worker
    assert sorted(starts.read_text().split()) == ["alpha/worker-1", "alpha/worker-2", "alpha/worker-3",
                                                  "alpha/worker-3", "alpha/worker-4"]
    slow = next(d for d in result["deliveries"] if d["worker"] == "worker-3")
    assert slow["status"] == "removed" and slow["retried"] is True
    # the three others are members and got their tasks
    added = [w["name"] for w in result["addedWorkers"]]
    assert added == ["worker-1", "worker-2", "worker-4"] and result["newWorkerCount"] == 3
    assert [r["name"] for r in result["removedWorkers"]] == ["worker-3"]
    text = explain(result, "debt")
    assert "worker-3: NOT STARTED, removed alone (scale_up_worker_not_ready:worker-3:" in text
    team = work / ".omx" / "state" / "team" / "alpha"
    config = json.loads((team / "config.json").read_text())
    assert [w["name"] for w in config["workers"]] == added
    for worker in config["workers"]:
        deadline = time.monotonic() + 5
        while "received: " not in (screen := tmux_server.cmd("capture-pane", "-p", "-t", worker["pane_id"]).stdout) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert f"workers/{worker['name']}/inbox.md" in screen.replace("\n", ""), screen
    # nothing of worker-3 is left: no pane, folder, startup script, task or request
    assert _session_panes(tmux_server) == {leader} | {w["pane_id"] for w in config["workers"]}
    assert not (team / "workers" / "worker-3").exists()
    assert not list(team.rglob("worker-3-startup.sh"))
    tasks = [json.loads(p.read_text()) for p in (team / "tasks").glob("*.json")]
    assert sorted(t["owner"] for t in tasks) == ["worker-1", "worker-2", "worker-4"]
    requests = json.loads((team / "dispatch" / "requests.json").read_text())
    assert sorted(r["to_worker"] for r in requests) == ["worker-1", "worker-2", "worker-4"]


@pytest.mark.tmux_executors("control")
def test_all_or_nothing_rolls_the_whole_scale_up_back(tmux_server: TmuxServer, tmp_path: Path,
                                                      clean_env: dict[str, str]) -> None:
    done, work, starts, leader = _scale_up(tmux_server, tmp_path, clean_env, all_or_nothing=True)
    assert done.outcome.status == "error" and "worker_not_ready:worker-3" in done.outcome.message, done.outcome
    assert starts.read_text().split().count("alpha/worker-3") == 1  # no second try
    team = work / ".omx" / "state" / "team" / "alpha"
    assert json.loads((team / "config.json").read_text())["workers"] == []
    assert _session_panes(tmux_server) == {leader}
    assert not any((team / "workers" / f"worker-{n}").exists() for n in range(1, 5))


@pytest.mark.tmux_executors("control")
def test_a_retried_worker_that_starts_is_committed_with_its_fresh_pane(
        tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    """worker-3 stays silent only on its first start: its second, fresh pane starts and is committed."""
    first_only = AGENT.replace('if [ "$OMX_TEAM_WORKER" = "alpha/worker-3" ]; then',
                               'if [ "$OMX_TEAM_WORKER" = "alpha/worker-3" ] && [ "$(grep -c worker-3 "{starts}")" = 1 ]; then')
    done, work, starts, leader = _scale_up(tmux_server, tmp_path, clean_env, all_or_nothing=False,
                                           agent_text=first_only)
    assert done.outcome.status == "ok", done.outcome
    result = done.outcome.result
    assert [w["name"] for w in result["addedWorkers"]] == ["worker-1", "worker-2", "worker-3", "worker-4"]
    assert starts.read_text().split().count("alpha/worker-3") == 2
    slow = next(d for d in result["deliveries"] if d["worker"] == "worker-3")
    assert slow["retried"] is True and slow["status"] == "delivered"
    config = json.loads((work / ".omx" / "state" / "team" / "alpha" / "config.json").read_text())
    assert _session_panes(tmux_server) == {leader} | {w["pane_id"] for w in config["workers"]}
    pins = sorted(p.name for p in (work / ".omx/state/team/alpha/workers/worker-3").glob("pane-*.pid"))
    assert pins == [f"pane-{slow['paneId'].removeprefix('%')}.pid"]  # only the live pane's pin is left


# worker-2 locks its git worktree (so `git worktree remove --force` refuses it) and never starts
LOCKING_AGENT = """#!/bin/sh
if [ "$OMX_TEAM_WORKER" = "alpha/worker-2" ]; then git worktree lock "$PWD"; exec sleep 100000; fi
printf 'panefleet placeholder agent %s ready\\n' "$OMX_TEAM_WORKER"
printf '> '
while IFS= read -r line; do printf 'received: %s\\n> ' "$line"; done
exec sleep 2147483647
"""


@pytest.mark.tmux_executors("control")
def test_a_removed_worker_s_worktree_that_git_keeps_stays_named_by_its_intent(
        tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    """A worker that never starts is removed alone, but git refuses to remove its (locked) worktree:
    the run rolls back, keeps the worktree's intent, and `team status` and the next reconcile name it;
    once git lets go, `debt reconcile` removes it."""
    import subprocess

    def git_repo(work: Path) -> None:
        for args in (("init", "-q"), ("commit", "-q", "--allow-empty", "-m", "base")):
            subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work), *args], check=True)

    done, env, work, _leader = scale_up_with_agent(
        tmux_server, tmp_path, clean_env, LOCKING_AGENT, prepare=git_repo, count=2, worktree=True,
        env={"OMX_TEAM_READY_TIMEOUT_MS": "3000"})
    error = str(done.outcome.result["error"])  # type: ignore[index]
    assert done.outcome.status == "debt" and error.startswith(
        "scale_up_rollback_cleanup_debt:resource_cleanup_failed:git worktree remove") and "locked" in error, error
    tree = work / ".omx/team/alpha/worktrees/worker-2"
    assert tree.is_dir() and (work / ".omx/state/team/alpha/runtime/worker-2.intent").exists()
    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 3 and [t["path"] for t in status["leftoverWorktrees"]] == [str(tree)], status
    subprocess.run(["git", "-C", str(work), "worktree", "unlock", str(tree)], check=True)
    code, swept = pf_json("team", "debt", "reconcile", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and swept["strayPanes"]["removedWorktrees"] == [str(tree)], swept
    assert not tree.exists()
