"""A git worktree a scale-up was making when it was killed: its intent names it before ``git worktree
add`` (pure/omx/worktree.py ``ensure``), ``team status`` and ``team debt show`` report it, and the next
command removes it only when git proves it the one that run made (``remove_left``) — never a path the
intent could not have meant. Real tmux, real git, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pure.omx import strays
from pure.omx import worktree as wt
from pure.omx.state import TeamPaths
from tests.conftest import ROOT, TmuxServer

pytestmark = [pytest.mark.tmux, pytest.mark.tmux_executors("control")]
TEAM = "trees"


def _pf(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([sys.executable, str(ROOT / "cli.py"), *args, "--cwd", env["WORK"], "-o", "json"],
                          capture_output=True, text=True, env=env, timeout=120)
    return done.returncode, json.loads(done.stdout)


def _git(work: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work), *args],
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture
def team(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """A team of no workers in a git repository, in named worktree mode (branches ``pf/<worker>``)."""
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q")
    _git(work, "commit", "-q", "--allow-empty", "-m", "base")
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1", "WORK": str(work)}
    leader = tmux_server.cmd("new-session", "-d", "-s", TEAM, "-P", "-F", "#{pane_id}", "sleep 100000").stdout.strip()
    code, init = _pf(env, "team", "init", TEAM, "--leader-pane", leader, "--worker-cli", "placeholder")
    assert code == 0, init
    for name in ("config.json", "manifest.v2.json"):
        path = work / ".omx/state/team" / TEAM / name
        record = json.loads(path.read_text())
        record.update(workspace_mode="worktree", worktree_mode={"enabled": True, "detached": False, "name": "pf"})
        path.write_text(json.dumps(record, indent=2))
    return work, env


def _intent_of(work: Path, tree: wt.Worktree, worker: str = "worker-1") -> Path:
    """The intent a scale-up writes right before ``git worktree add`` (written by the product's own step)."""
    step = strays.intent_step(TeamPaths(str(work / ".omx/state"), TEAM), "scale_up", worker, worktree=tree)
    Path(step.path).parent.mkdir(parents=True, exist_ok=True)
    Path(step.path).write_text(step.content)
    return Path(step.path)


def _planned(work: Path, worker: str = "worker-1", branch_created: bool = True) -> wt.Worktree:
    return wt.Worktree(repo_root=str(work), path=wt.worktree_path(str(work), TEAM, worker), branch=f"pf/{worker}",
                       detached=False, created=True, branch_created=branch_created)


def test_a_worktree_left_by_a_killed_run_is_reported_then_removed(team: tuple[Path, dict[str, str]]) -> None:
    work, env = team
    tree = _planned(work)
    intent = _intent_of(work, tree)
    _git(work, "worktree", "add", "-q", "-b", "pf/worker-1", tree.path, "HEAD")  # git made it; then the kill
    code, status = _pf(env, "team", "status", TEAM)
    assert code == 3 and status["leftoverWorktrees"] == [{"worker": "worker-1", "path": tree.path,
                                                          "branch": "pf/worker-1"}], status
    code, shown = _pf(env, "team", "debt", "show", TEAM)
    assert code == 0 and shown["leftovers"]["leftoverWorktrees"] == status["leftoverWorktrees"], shown
    code, swept = _pf(env, "team", "debt", "reconcile", TEAM)
    assert code == 0 and swept["strayPanes"]["removedWorktrees"] == [tree.path], swept
    assert not Path(tree.path).exists() and _git(work, "branch", "--list", "pf/*").strip() == ""
    assert not intent.exists()
    code, status = _pf(env, "team", "status", TEAM)
    assert code == 0 and "leftoverWorktrees" not in status, status


def test_a_branch_made_before_the_kill_goes_too(team: tuple[Path, dict[str, str]]) -> None:
    work, env = team
    intent = _intent_of(work, _planned(work))
    _git(work, "branch", "pf/worker-1")  # `worktree add -b` made the branch, not yet the worktree
    code, swept = _pf(env, "team", "debt", "reconcile", TEAM)
    assert code == 0 and swept["strayPanes"]["removedWorktrees"] == [_planned(work).path], swept
    assert _git(work, "branch", "--list", "pf/*").strip() == "" and not intent.exists()


def test_a_branch_that_existed_before_the_run_stays(team: tuple[Path, dict[str, str]]) -> None:
    work, env = team
    _intent_of(work, _planned(work, branch_created=False))
    _git(work, "branch", "pf/worker-1")
    code, swept = _pf(env, "team", "debt", "reconcile", TEAM)
    assert code == 0 and "removedWorktrees" not in swept.get("strayPanes", {}), swept
    assert _git(work, "branch", "--list", "--format=%(refname:short)", "pf/*").strip() == "pf/worker-1"


def test_a_path_git_does_not_prove_is_kept_as_debt(team: tuple[Path, dict[str, str]]) -> None:
    work, env = team
    tree = _planned(work)
    intent = _intent_of(work, tree)
    Path(tree.path).mkdir(parents=True)
    (Path(tree.path) / "notes.txt").write_text("someone's work\n")
    code, swept = _pf(env, "team", "debt", "reconcile", TEAM)
    assert code == 3 and swept["strayPanes"]["keptWorktrees"] == [
        {"path": tree.path, "reason": f"worktree_unproven:{tree.path}"}], swept
    assert (Path(tree.path) / "notes.txt").read_text() == "someone's work\n" and intent.exists()


def test_an_intent_naming_another_path_touches_nothing(team: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    work, env = team
    elsewhere = tmp_path / "elsewhere"
    _git(work, "worktree", "add", "-q", "-b", "pf/worker-1", str(elsewhere), "HEAD")
    hostile = wt.Worktree(repo_root=str(work), path=str(elsewhere), branch="pf/worker-1", detached=False,
                          created=True, branch_created=True)
    _intent_of(work, hostile)
    code, swept = _pf(env, "team", "debt", "reconcile", TEAM)
    assert code == 0 and "removedWorktrees" not in swept.get("strayPanes", {}), swept
    assert elsewhere.is_dir() and _git(work, "branch", "--list", "--format=%(refname:short)", "pf/*").strip() == "pf/worker-1"


@pytest.mark.parametrize("change", [
    {"path": "/tmp/x"}, {"repo_root": "relative"}, {"branch": "pf/worker-2"}, {"branch": "main"},
    {"branch_created": "yes"},
])
def test_from_intent_names_only_this_worker_s_worktree(change: dict[str, object]) -> None:
    record = wt.intent_record(_planned(Path("/r")))
    assert wt.from_intent(record, TEAM, "worker-1") == _planned(Path("/r"))
    assert wt.from_intent({**record, **change}, TEAM, "worker-1") is None
