"""SIGKILL a real scale-up (watched and with ``OMX_TEAM_SKIP_READY_WAIT=1``) after every file write and
every tmux mutation of a 2-worker run, and a respawn and a scale-down after every one of their own (real tmux, the
placeholder agent), then run `team status`, `team debt reconcile` and the same command again: no pane is
left that the team does not own as a member — one killed right after its split included (it pinned
itself, pure/omx/startup_script.py) — the membership reads back whole, and the next run starts at once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TmuxServer

pytestmark = [pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(900)]
ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "cli.py")]


def pf(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([*CLI, *args, "-o", "json"], capture_output=True, text=True, env=env, timeout=120)
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1])


def _team(server: TmuxServer, base: Path, env: dict[str, str], name: str) -> tuple[Path, str]:
    leader = server.cmd("new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-P", "-F", "#{pane_id}",
                        "sleep 100000").stdout.strip()
    work = base / name
    work.mkdir()
    code, init = pf(env, "team", "init", name, "--leader-pane", leader, "--worker-cli", "placeholder",
                    "--cwd", str(work))
    assert code == 0, init
    return work, leader


def _crash(env: dict[str, str], work: Path, team: str, n: int, socket: str, op: str = "scale-up",
           what: str = "2", crash_at: str | None = None) -> str:
    """Run ``op`` and SIGKILL it after its Nth change (or right after its first ``crash_at`` tmux
    command); what it printed: empty when it was killed."""
    done = subprocess.run([sys.executable, "-m", "tests.omx_up.crash_runner", op, str(work), team, what,
                           crash_at or str(n), socket], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=env)
    return done.stdout.strip()


def _session_panes(server: TmuxServer, session: str) -> set[str]:
    out = server.cmd("list-panes", "-s", "-t", session, "-F", "#{pane_id}").stdout
    return set(out.split())


def _strays_reported(env: dict[str, str], server: TmuxServer, work: Path, team: str, leader: str) -> int:
    """`team status` after a crash names as strays exactly the session's panes that are neither the
    leader nor a member's; how many."""
    code, status = pf(env, "team", "status", team, "--cwd", str(work))
    assert code in (0, 3), status
    members = {w["paneId"] for w in status["panes"] if w["role"] == "worker"}
    assert {s["paneId"] for s in status["strayPanes"]} == _session_panes(server, team) - members - {leader}
    return len(status["strayPanes"])


def _in_worktrees(work: Path, team: str) -> None:
    """The team's workers each get a git worktree of ``work`` on a branch of their own (``pf/<worker>``)."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "base"], check=True)
    for name in ("config.json", "manifest.v2.json"):  # as oh-my-codex records a team's worktree mode
        path = work / ".omx/state/team" / team / name
        record = json.loads(path.read_text())
        record.update(workspace_mode="worktree", worktree_mode={"enabled": True, "detached": False, "name": "pf"})
        path.write_text(json.dumps(record, indent=2))


def _worktrees(work: Path) -> tuple[set[str], set[str]]:
    """The repository's worktrees (but its main one) and its ``pf/`` branches."""
    listed = subprocess.run(["git", "-C", str(work), "worktree", "list", "--porcelain"], capture_output=True,
                            text=True, check=True).stdout
    trees = {line.split(" ", 1)[1] for line in listed.splitlines() if line.startswith("worktree ")} - {str(work)}
    branches = subprocess.run(["git", "-C", str(work), "branch", "--list", "pf/*", "--format=%(refname:short)"],
                              capture_output=True, text=True, check=True).stdout.split()
    return trees, set(branches)


def _members_trees(config: dict[str, Any]) -> tuple[set[str], set[str]]:
    return ({w["worktree_path"] for w in config["workers"] if w.get("worktree_path")},
            {w["worktree_branch"] for w in config["workers"] if w.get("worktree_branch")})


@pytest.mark.tmux_executors("control")  # the default executor only: one run of the matrix is over a minute
@pytest.mark.parametrize("mode, worktrees", [({}, False), ({"OMX_TEAM_SKIP_READY_WAIT": "1"}, False), ({}, True)],
                         ids=["watched", "skip-ready-wait", "watched-worktrees"])
def test_sigkill_at_every_change_leaves_no_pane_behind(tmux_server: TmuxServer, tmp_path: Path,
                                                          clean_env: dict[str, str], mode: dict[str, str],
                                                          worktrees: bool) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1", **mode}

    def new_team(name: str) -> tuple[Path, str]:
        work, leader = _team(tmux_server, tmp_path, env, name)
        if worktrees:
            _in_worktrees(work, name)
        return work, leader

    work, _leader = new_team("full")
    total = int(_crash(env, work, "full", 10_000, tmux_server.name).split()[0])  # the changes of a whole run
    assert total > 20
    if worktrees:
        assert len(_worktrees(work)[0]) == 2  # the run made its workers' worktrees
    leaked_before_reconcile = 0
    for n in range(1, total + 1):
        team = f"crash-{n}"
        work, leader = new_team(team)
        outcome = _crash(env, work, team, n, tmux_server.name)
        assert outcome == "", f"the run of crash point {n} was not killed: {outcome}"
        leaked_before_reconcile += _strays_reported(env, tmux_server, work, team, leader)
        started = time.monotonic()
        code, swept = pf(env, "team", "debt", "reconcile", team, "--cwd", str(work))
        assert code == 0 and time.monotonic() - started < 10, swept  # a dead run's locks do not block
        config = json.loads((work / ".omx/state/team" / team / "config.json").read_text())
        member_panes = {w["pane_id"] for w in config["workers"]}
        assert [w["name"] for w in config["workers"]] in ([], ["worker-1"], ["worker-1", "worker-2"]), n
        assert _session_panes(tmux_server, team) == member_panes | {leader}, f"crash point {n}: a pane leaked"
        if worktrees:
            assert _worktrees(work) == _members_trees(config), f"crash point {n}: a worktree or branch leaked"
        code, again = pf(env, "team", "scale-up", team, "--count", "1", "--cwd", str(work))
        assert code == 0, (n, again)
        config = json.loads((work / ".omx/state/team" / team / "config.json").read_text())
        assert _session_panes(tmux_server, team) == {w["pane_id"] for w in config["workers"]} | {leader}
        if worktrees:
            assert _worktrees(work) == _members_trees(config), n
        tmux_server.cmd("kill-session", "-t", team)
    assert leaked_before_reconcile > 0  # the crashes did leak panes: the sweep is what removed them


@pytest.mark.tmux_executors("control")
def test_sigkill_of_a_respawn_at_every_change_leaves_no_pane_behind(tmux_server: TmuxServer, tmp_path: Path,
                                                                      clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}

    def with_dead_worker(team: str) -> tuple[Path, str, str]:
        """A team of two workers whose worker-2 pane was killed from outside: what a respawn is for."""
        work, leader = _team(tmux_server, tmp_path, env, team)
        code, up = pf(env, "team", "scale-up", team, "--count", "2", "--cwd", str(work))
        assert code == 0, up
        config = json.loads((work / ".omx/state/team" / team / "config.json").read_text())
        dead = config["workers"][1]["pane_id"]
        tmux_server.cmd("kill-pane", "-t", dead)
        return work, leader, dead

    work, _leader, _dead = with_dead_worker("full")
    total = int(_crash(env, work, "full", 10_000, tmux_server.name, "respawn", "worker-2").split()[0])
    assert total > 5
    leaked_before_reconcile = 0
    for n in range(1, total + 1):
        team = f"respawn-{n}"
        work, leader, dead = with_dead_worker(team)
        outcome = _crash(env, work, team, n, tmux_server.name, "respawn", "worker-2")
        assert outcome == "", f"the respawn of crash point {n} was not killed: {outcome}"
        leaked_before_reconcile += _strays_reported(env, tmux_server, work, team, leader)
        code, swept = pf(env, "team", "debt", "reconcile", team, "--cwd", str(work))
        assert code == 0, (n, swept)
        config = json.loads((work / ".omx/state/team" / team / "config.json").read_text())
        assert [w["name"] for w in config["workers"]] == ["worker-1", "worker-2"], n
        assert _session_panes(tmux_server, team) - {leader} <= {w["pane_id"] for w in config["workers"]}, \
            f"crash point {n}: a pane leaked"
        code, again = pf(env, "team", "respawn", team, "worker-2", "--cwd", str(work))
        assert code == 0 or str(again.get("error_detail")).startswith("respawn_worker_alive:"), (n, again)
        config = json.loads((work / ".omx/state/team" / team / "config.json").read_text())
        members_now = {w["pane_id"] for w in config["workers"]}
        assert dead not in members_now and _session_panes(tmux_server, team) == members_now | {leader}, n
        tmux_server.cmd("kill-session", "-t", team)
    assert leaked_before_reconcile > 0  # the crashes did leak panes: the sweep is what removed them


@pytest.mark.tmux_executors("control")
def test_sigkill_of_a_scale_down_at_every_change_leaves_no_pane_behind(tmux_server: TmuxServer, tmp_path: Path,
                                                                         clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}

    def with_two_workers(team: str) -> tuple[Path, str]:
        work, leader = _team(tmux_server, tmp_path, env, team)
        code, up = pf(env, "team", "scale-up", team, "--count", "2", "--cwd", str(work))
        assert code == 0, up
        return work, leader

    work, _leader = with_two_workers("full")
    total = int(_crash(env, work, "full", 10_000, tmux_server.name, "scale-down", "worker-2").split()[0])
    assert total > 5
    committed_with_pane_alive = 0
    for n in range(1, total + 1):
        team = f"down-{n}"
        work, leader = with_two_workers(team)
        removed = json.loads((work / ".omx/state/team" / team / "config.json").read_text())["workers"][1]["pane_id"]
        outcome = _crash(env, work, team, n, tmux_server.name, "scale-down", "worker-2")
        assert outcome == "", f"the scale-down of crash point {n} was not killed: {outcome}"
        code, status = pf(env, "team", "status", team, "--cwd", str(work))
        assert code in (0, 3), status
        code, shown = pf(env, "team", "debt", "show", team, "--cwd", str(work))
        assert code in (0, 3) and shown.get("debt") == status.get("debt"), (n, shown, status)  # one source
        config = json.loads((work / ".omx/state/team" / team / "config.json").read_text())
        names = [w["name"] for w in config["workers"]]
        assert names in (["worker-1"], ["worker-1", "worker-2"]), (n, names)  # whole: old or new
        if names == ["worker-1"]:  # committed: the rest is the debt's to finish
            committed_with_pane_alive += removed in _session_panes(tmux_server, team)
            code, done = pf(env, "team", "debt", "reconcile", team, "--cwd", str(work))
        else:
            code, done = pf(env, "team", "scale-down", team, "--worker", "worker-2", "--force", "--cwd", str(work))
        assert code == 0, (n, done)
        config = json.loads((work / ".omx/state/team" / team / "config.json").read_text())
        assert [w["name"] for w in config["workers"]] == ["worker-1"], n
        assert _session_panes(tmux_server, team) == {config["workers"][0]["pane_id"], leader}, \
            f"crash point {n}: a pane left"
        assert not (work / ".omx/state/team" / team / "workers" / "worker-2").exists(), n
        tmux_server.cmd("kill-session", "-t", team)
    assert committed_with_pane_alive > 0  # some crashes left a removed member's pane: the next command killed it
