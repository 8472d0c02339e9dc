"""Scale-up against a real private tmux server, through the real CLI, with the placeholder agent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TmuxServer, alive

pytestmark = pytest.mark.tmux
CLI = [sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py")]


def pf(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def pf_json(*args: str, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    done = pf(*args, "-o", "json", env=env)
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected one JSON line, got {done.stdout!r} (stderr {done.stderr!r})"
    return done.returncode, json.loads(lines[0])


def init_team(tmux_server: TmuxServer, work: Path, clean_env: dict[str, str]) -> tuple[dict[str, str], Path, str]:
    """``team init alpha`` in a new folder ``work`` with a new leader session: the environment that
    reaches the server, the folder and the leader pane."""
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}
    leader = tmux_server.new_session("lead")
    work.mkdir()
    code, init = pf_json("team", "init", "alpha", "--leader-pane", leader, "--worker-cli", "placeholder",
                         "--cwd", str(work), env=env)
    assert code == 0, init
    return env, work, leader


def scale_up_with_agent(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str], script: str,
                        prepare: Callable[[Path], None] | None = None,
                        before_step: Callable[[Any], None] | None = None,
                        **request: Any) -> tuple[Any, dict[str, str], Path, str]:
    """A team whose workers run ``script`` (a stand-in agent) instead of the placeholder agent, and one
    scale-up of it run in-process (``request``: the ScaleUpRequest's other fields; ``count`` given;
    ``prepare``: what is done to the team's folder first; ``before_step``: called with each step before
    it is executed): the run's ``Done``, the environment, the team's folder and its leader pane."""
    from pure.omx.scale_up import ScaleUpRequest
    from shell.run.executor import Executor
    from shell.run.loop import run_operation

    class Watched(Executor):
        def execute(self, step: Any) -> Any:
            if before_step is not None:
                before_step(step)
            return super().execute(step)

    agent = tmp_path / "agent.sh"
    agent.write_text(script)
    agent.chmod(0o755)
    env, work, leader = init_team(tmux_server, tmp_path / "work", clean_env)
    if prepare is not None:
        prepare(work)
    run_env = {"OMX_TEAM_SCALING_ENABLED": "1", "HOME": str(tmp_path), **request.pop("env", {})}
    scale_up = ScaleUpRequest(team="alpha", cwd=str(work), env=run_env, cli_paths={"placeholder": str(agent)},
                              existing_shells=("/bin/bash",), **request)
    done, _journal, _audit = run_operation("team.scale_up", scale_up, Watched(env=env, tmux_socket=tmux_server.name),
                                           env=env, audit=False)
    return done, env, work, leader


def team_files(work: Path) -> dict[str, bytes]:
    return {str(p.relative_to(work)): p.read_bytes() for p in sorted((work / ".omx").rglob("*")) if p.is_file()}


@pytest.fixture
def team(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> tuple[dict[str, str], Path, str]:
    """A team with a proven leader and one placeholder worker (init, then scale-up 1)."""
    env, work, leader = init_team(tmux_server, tmp_path / "work dir", clean_env)  # a space in the path on purpose
    code, first = pf_json("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), env=env)
    assert code == 0, first
    assert first["newWorkerCount"] == 1 and first["addedWorkers"][0]["worker_cli"] == "placeholder"
    return env, work, leader


def test_scale_up_three_on_real_tmux(tmux_server: TmuxServer, team: tuple[dict[str, str], Path, str]) -> None:
    env, work, leader = team
    tasks = ['{"subject": "it\'s $HOME `id`", "description": "line one\\nline two", "owner": "worker-3"}']
    code, result = pf_json("team", "scale-up", "alpha", "--count", "3", "--cwd", str(work), "--task", tasks[0], env=env)
    assert code == 0, result
    assert result["newWorkerCount"] == 4 and result["nextWorkerIndex"] == 5
    panes = tmux_server.panes()
    for worker in result["addedWorkers"]:
        pane = worker["pane_id"]
        assert pane in panes and panes[pane] == (False, worker["pid"])  # exists, pid pinned
        assert tmux_server.owner(pane) == "team:alpha"
        assert worker["working_dir"] == str(work)
    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and status["healthy"] is True, status
    by_name = {p["name"]: p for p in status["panes"]}
    for name in ("worker-1", "worker-2", "worker-3", "worker-4"):
        assert (by_name[name]["verdict"], by_name[name]["pidMatch"], by_name[name]["ownerMatch"]) == ("live", True, True)
    # the dispatched trigger reached the placeholder agent of the last worker
    pane = result["addedWorkers"][-1]["pane_id"]
    deadline = time.monotonic() + 10
    while "received: Read .omx/state/team/alpha/workers/worker-4/inbox.md" not in (
            screen := tmux_server.cmd("capture-pane", "-p", "-J", "-t", pane).stdout):
        assert time.monotonic() < deadline, screen
        time.sleep(0.1)
    # task text with quotes, $ and backticks is data, never code
    task = json.loads((work / ".omx/state/team/alpha/tasks/task-1.json").read_text())
    assert task["subject"] == "it's $HOME `id`" and task["owner"] == "worker-3"


def test_killed_worker_fails_closed_and_creates_nothing(
        tmux_server: TmuxServer, team: tuple[dict[str, str], Path, str]) -> None:
    """oh-my-codex's mode (no watched start-up): a gone split target refuses, nothing is changed."""
    env, work, _leader = team
    env = {**env, "OMX_TEAM_SKIP_READY_WAIT": "1"}
    config = json.loads((work / ".omx/state/team/alpha/config.json").read_text())
    victim = config["workers"][-1]["pane_id"]
    tmux_server.cmd("kill-pane", "-t", victim)
    before_files = team_files(work)
    before_panes = tmux_server.panes()
    code, result = pf_json("team", "scale-up", "alpha", "--count", "2", "--cwd", str(work), env=env)
    assert (result["ok"], result["error_detail"]) == (False, f"scale_up_split_target_proof_unavailable:{victim}:absent")
    assert f"The team pane {victim} that scale-up would split is not proven the team's: no such pane exists" \
        in result["error"]
    assert code == 4  # refused: nothing was changed
    assert team_files(work) == before_files
    assert tmux_server.panes() == before_panes
    done = pf("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), env=env)
    assert done.stdout == "" and "no such pane exists" in done.stderr and "Nothing was changed" in done.stderr


def test_gone_last_worker_no_longer_blocks_the_team(
        tmux_server: TmuxServer, team: tuple[dict[str, str], Path, str]) -> None:
    """Watched start-up: the new worker is placed in another live, proven team pane (the leader's)."""
    env, work, leader = team
    config = json.loads((work / ".omx/state/team/alpha/config.json").read_text())
    victim = config["workers"][-1]["pane_id"]
    tmux_server.cmd("kill-pane", "-t", victim)
    code, result = pf_json("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), env=env)
    assert code == 0, result
    added = result["addedWorkers"][0]
    assert added["name"] == "worker-2" and tmux_server.panes()[added["pane_id"]] == (False, added["pid"])
    assert result["deliveries"][0]["status"] == "delivered"
    audits = sorted((Path(env["PANEFLEET_STATE_DIR"]) / "audit").glob("*scale_up*.jsonl"))
    splits = [json.loads(line)["step"]["args"] for line in audits[-1].read_text().splitlines()
              if '"split-window"' in line]
    assert splits and all(victim not in args for args in splits) and leader in splits[0]


def test_foreign_pane_next_to_the_team_is_never_targeted(
        tmux_server: TmuxServer, team: tuple[dict[str, str], Path, str], tmp_path: Path) -> None:
    env, work, leader = team
    foreign = tmux_server.cmd("split-window", "-d", "-t", leader, "-P", "-F", "#{pane_id}",
                              "sleep 100000").stdout.strip()
    tmux_server.cmd("set-option", "-p", "-t", foreign, "@omx_team_pane_owner_id", "team:beta")
    foreign_pid = tmux_server.pane_pid(foreign)
    code, result = pf_json("team", "scale-up", "alpha", "--count", "2", "--cwd", str(work), env=env)
    assert code == 0, result
    audit = sorted((tmp_path / "pf-state" / "audit").glob("*scale_up*.jsonl"))[-1]
    targets = []
    for line in audit.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "entry" and record["step"]["op"] == "run" and "-t" in record["step"]["args"]:
            args = record["step"]["args"]
            targets.append(args[args.index("-t") + 1])
    assert targets and foreign not in targets
    assert tmux_server.panes()[foreign] == (False, foreign_pid)
    assert tmux_server.owner(foreign) == "team:beta"


def test_dry_run_changes_nothing(tmux_server: TmuxServer, team: tuple[dict[str, str], Path, str]) -> None:
    env, work, _leader = team
    before_files = team_files(work)
    before_panes = tmux_server.panes()
    code, plan = pf_json("team", "scale-up", "alpha", "--count", "2", "--cwd", str(work), "--dry-run", env=env)
    assert code == 0, plan
    assert plan["dryRun"] is True and plan["predicted"]["newWorkerCount"] == 3
    changes = [p["step"]["args"] for p in plan["steps"] if p["step"]["op"] == "run" and p["change"]]
    verbs = [args[0] for args in changes]
    tags = [args for args in changes if args[0] == "set-option" and "@omx_team_pane_owner_id" in args]
    assert verbs.count("split-window") == 2 and len(tags) == 2
    assert team_files(work) == before_files
    assert tmux_server.panes() == before_panes


def test_concurrent_scale_ups_serialize_and_replay(tmux_server: TmuxServer, team: tuple[dict[str, str], Path, str],
                                                   tmp_path: Path) -> None:
    """Two scale-ups at once: the scaling lock serializes them; both audit logs replay exactly."""
    env, work, _leader = team
    procs = [subprocess.Popen([*CLI, "team", "scale-up", "alpha", "--count", "2", "--cwd", str(work), "-o", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(r["ok"] for r in results), results
    names = sorted(w["name"] for r in results for w in r["addedWorkers"])
    assert names == ["worker-2", "worker-3", "worker-4", "worker-5"]
    config = json.loads((work / ".omx/state/team/alpha/config.json").read_text())
    assert [w["name"] for w in config["workers"]] == ["worker-1", "worker-2", "worker-3", "worker-4", "worker-5"]
    panes = tmux_server.panes()
    assert all(panes[w["pane_id"]] == (False, w["pid"]) for w in config["workers"])
    for audit in sorted((tmp_path / "pf-state" / "audit").glob("*scale_up*.jsonl")):
        done = pf("replay", str(audit), "-o", "json", env=env)
        assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True, done.stdout


def test_worktree_dry_run_predicts_the_worktree_and_changes_nothing(
        tmux_server: TmuxServer, team: tuple[dict[str, str], Path, str]) -> None:
    env, work, _leader = team
    git_env = {**env, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@e"}
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(["git", *args], cwd=work, check=True, env=git_env, capture_output=True)
    for name in ("config.json", "manifest.v2.json"):
        path = work / ".omx/state/team/alpha" / name
        data = json.loads(path.read_text())
        data["workspace_mode"] = "worktree"
        path.write_text(json.dumps(data, indent=2))
    before_files, before_panes = team_files(work), tmux_server.panes()
    code, plan = pf_json("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "--dry-run", env=env)
    assert code == 0, plan
    worker = plan["predicted"]["addedWorkers"][0]
    assert worker["worktree_path"] == str(work / ".omx/team/alpha/worktrees/worker-2")
    assert worker["worktree_created"] is True and worker["working_dir"] == worker["worktree_path"]
    assert team_files(work) == before_files and tmux_server.panes() == before_panes
    listed = subprocess.run(["git", "worktree", "list"], cwd=work, capture_output=True, text=True).stdout
    assert len(listed.strip().splitlines()) == 1


def test_a_team_scaled_down_is_healthy_with_nothing_left_over(tmux_server: TmuxServer,
                                                                team: tuple[dict[str, str], Path, str]) -> None:
    """A scale-down removes a worker's folder and, as oh-my-codex does, leaves its startup script: that
    is no leftover of an unfinished run (pure/omx/strays.py), and the team stays healthy."""
    env, work, _leader = team
    code, _ = pf_json("team", "scale-up", "alpha", "--count", "2", "--cwd", str(work), env=env)
    assert code == 0
    code, down = pf_json("team", "scale-down", "alpha", "--worker", "worker-3", "--force", "--cwd", str(work), env=env)
    assert code == 0, down
    team_dir = work / ".omx/state/team/alpha"
    assert not (team_dir / "workers/worker-3").exists() and (team_dir / "runtime/worker-3-startup.sh").exists()
    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and status["healthy"] is True and "leftoverWorkers" not in status, status
    code, shown = pf_json("team", "debt", "show", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and "leftovers" not in shown, shown
    code, up = pf_json("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), env=env)
    assert code == 0 and "strayPanes" not in up and (team_dir / "runtime/worker-3-startup.sh").exists(), up


HUP_IGNORING_AGENT = """#!/bin/sh
# a stand-in agent that ignores SIGHUP (as the Gemini CLI does) and records its pid and its child's
trap '' HUP
sleep 100000 &
echo "$OMX_TEAM_WORKER $$ $!" >> "{pids}"
printf 'panefleet placeholder agent %s ready\\n' "${{OMX_TEAM_WORKER:-unknown-worker}}"
printf '> '
while IFS= read -r line; do printf 'received: %s\\n> ' "$line"; done
exec sleep 2147483647
"""


@pytest.mark.tmux_executors("control")
def test_an_agent_that_ignores_sighup_goes_with_its_pane(tmux_server: TmuxServer, tmp_path: Path,
                                                        clean_env: dict[str, str]) -> None:
    """A killed worker pane takes its agent, and what the agent started, with it: the pane's shell
    stays the agent's parent and ends its process group (pure/omx/startup_script.py ``_GATE``)."""
    pids = tmp_path / "pids"
    done, env, work, _leader = scale_up_with_agent(tmux_server, tmp_path, clean_env,
                                                   HUP_IGNORING_AGENT.format(pids=pids), count=2)
    assert done.outcome.status == "ok", done.outcome
    started = {line.split()[0]: [int(pid) for pid in line.split()[1:]] for line in pids.read_text().splitlines()}
    assert sorted(started) == ["alpha/worker-1", "alpha/worker-2"]
    assert all(alive(pid) for pids_of in started.values() for pid in pids_of)
    code, down = pf_json("team", "scale-down", "alpha", "--worker", "worker-2", "--force", "--cwd", str(work),
                         env=env)
    assert code == 0, down
    kept, removed = started["alpha/worker-1"], started["alpha/worker-2"]  # each: the agent and its child
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in removed) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in removed if alive(pid)] == [] and all(alive(pid) for pid in kept)


def _typing_a_task(step: Any) -> bool:
    """A trigger typed into a new worker's pane: its agent started, it is no member yet (worker.py)."""
    args = getattr(step, "args", ())
    return getattr(step, "op", "") == "run" and args[:1] == ("send-keys",) and "-l" in args


def _interrupt_at_typing(step: Any) -> None:
    if _typing_a_task(step):  # a first Ctrl-C: the run undoes itself at its next step boundary
        os.kill(os.getpid(), signal.SIGINT)


def _abandon_at_typing(step: Any) -> None:
    if _typing_a_task(step):  # a run that stops at once (a second Ctrl-C): its panes are left to the next command
        raise KeyboardInterrupt


@pytest.mark.tmux_executors("control")
@pytest.mark.parametrize("path", ["rollback", "interrupt", "abandoned, then debt reconcile"])
def test_an_agent_that_ignores_sighup_goes_with_its_pane_however_it_is_removed(
        tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str], path: str) -> None:
    """The same stand-in, removed by a scale-up's rollback, by the undo of an interrupted scale-up, and by
    ``team debt reconcile`` after a scale-up that stopped at once: none of its processes is left. panefleet
    signals no pid itself (the pane's own shell ends its process group), so a reused pid is never hit."""
    pids = tmp_path / "pids"
    agent = HUP_IGNORING_AGENT.format(pids=pids)
    request: dict[str, Any] = {"count": 2}
    if path == "rollback":
        request["env"] = {"OMX_TEAM_SCALE_UP_INJECT_FAILURE": "post-dispatch-rollback"}
    hook = {"interrupt": _interrupt_at_typing, "abandoned, then debt reconcile": _abandon_at_typing}.get(path)
    try:
        done, env, work, _leader = scale_up_with_agent(tmux_server, tmp_path, clean_env, agent, before_step=hook,
                                                       **request)
    except KeyboardInterrupt:
        env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}
        work = tmp_path / "work"
        code, reconciled = pf_json("team", "debt", "reconcile", "alpha", "--cwd", str(work), env=env)
        assert code == 0 and len(reconciled["strayPanes"]["removed"]) == 2, reconciled
    else:
        assert done.outcome.status == "error", done.outcome
        assert done.outcome.message == ("interrupted" if path == "interrupt" else
                                        "scale_up_worker_materialization_failed:worker-1:"
                                        "injected_scale_up_failure:post-dispatch-rollback"), done.outcome
    started = [int(pid) for line in pids.read_text().splitlines() for pid in line.split()[1:]]
    assert len(started) == 4  # two agents, each with its child
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in started if alive(pid)] == []
    assert json.loads((work / ".omx" / "state" / "team" / "alpha" / "config.json").read_text())["workers"] == []
