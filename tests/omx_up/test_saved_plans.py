"""Plans a person can read, and saved plans that refuse when stale: a real private tmux server, the
real CLI, the placeholder agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import TmuxServer
from tests.omx_up.test_real_tmux import pf, pf_json, team, team_files

pytestmark = pytest.mark.tmux
Team = tuple[dict[str, str], Path, str]
__all__ = ["team"]  # the fixture


def test_scale_up_dry_run_reads_as_a_plan(tmux_server: TmuxServer, team: Team) -> None:
    env, work, leader = team
    done = pf("team", "scale-up", "alpha", "--count", "3", "--cwd", str(work), "--dry-run", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) <= 25, done.stdout
    assert lines[0].startswith("What will change")
    for name in ("worker-2", "worker-3", "worker-4"):
        assert any(line.startswith(f"  + {name} ") and "new pane split from %" in line and "placeholder (executor)"
                   in line for line in lines), (name, done.stdout)
    assert any(line.startswith("  ~ config.json") and "workers 1 → 4" in line for line in lines), done.stdout
    assert "Predicted result:" in lines and lines[-1] == "Plan: 3 to add, 4 to change, 0 to remove."
    assert "split-window" not in done.stdout  # the step trace only with --steps / -v
    traced = pf("team", "scale-up", "alpha", "--count", "3", "--cwd", str(work), "--dry-run", "--steps", env=env)
    assert "split-window" in traced.stdout and traced.stdout.splitlines()[-1] == lines[-1]
    assert "split-window" in pf("-v", "team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "--dry-run",
                                env=env).stdout


def test_json_dry_run_predicts_exactly_what_the_real_run_prints(tmux_server: TmuxServer, team: Team) -> None:
    env, work, _leader = team
    code, plan = pf_json("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "--dry-run", env=env)
    assert code == 0 and set(plan) == {"ok", "dryRun", "predicted", "changes", "steps"}
    assert plan["ok"] is True and plan["dryRun"] is True
    assert [(c["action"], c["kind"], c["subject"]) for c in plan["changes"]][0] == ("add", "worker", "worker-2")
    changed = {n for c in plan["changes"] for n in c["steps"]}
    assert changed == {n for n, s in enumerate(plan["steps"], start=1) if s["change"]}  # every change, once
    code, real = pf_json("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), env=env)
    assert code == 0
    assert set(real) == set(plan["predicted"])
    for key in ("ok", "newWorkerCount", "nextWorkerIndex"):
        assert real[key] == plan["predicted"][key]
    predicted, added = plan["predicted"]["addedWorkers"][0], real["addedWorkers"][0]
    assert {k: v for k, v in predicted.items() if k not in ("pid", "pane_id")} == \
        {k: v for k, v in added.items() if k not in ("pid", "pane_id")}


def test_scale_down_dry_run_names_each_pane_and_why_it_is_ours(tmux_server: TmuxServer, team: Team) -> None:
    env, work, _leader = team
    assert pf_json("team", "scale-up", "alpha", "--count", "2", "--cwd", str(work), env=env)[0] == 0
    config = json.loads((work / ".omx/state/team/alpha/config.json").read_text())
    done = pf("team", "scale-down", "alpha", "--count", "2", "--force", "--cwd", str(work), "--dry-run", env=env)
    assert done.returncode == 0, done.stderr
    killed = [w for w in config["workers"] if f"pane {w['pane_id']} killed after proof" in done.stdout]
    assert len(killed) == 2, done.stdout
    for worker in killed:
        line = next(line for line in done.stdout.splitlines() if f"pane {worker['pane_id']} killed" in line)
        assert line.startswith(f"  - {worker['name']} ")
        assert f"pid {worker['pid']} as pinned" in line and "tagged team:alpha" in line
        assert "transcript saved" in line  # before the kill (pure/omx/transcripts.py)
    # the changes: config.json and the event; the predicted result names each transcript's file
    assert "Plan: 0 to add, 2 to change, 2 to remove." in done.stdout
    assert sum(1 for line in done.stdout.splitlines() if "transcripts/worker-" in line) == 2


def test_saved_plan_applies_when_nothing_changed(tmux_server: TmuxServer, team: Team, tmp_path: Path) -> None:
    env, work, _leader = team
    plan_file = tmp_path / "up.plan"
    before_files, before_panes = team_files(work), tmux_server.panes()
    code, plan = pf_json("team", "scale-up", "alpha", "--count", "2", "--cwd", str(work), "--plan-out",
                         str(plan_file), env=env)
    assert code == 0 and plan["dryRun"] is True and plan["planFile"] == str(plan_file)
    assert team_files(work) == before_files and tmux_server.panes() == before_panes  # a dry run
    saved = json.loads(plan_file.read_text())
    assert saved["operation"] == "team.scale_up" and saved["stateRoot"] == str(work / ".omx/state")
    assert saved["fingerprint"].startswith("sha256:") and saved["journal"] and saved["request"]["count"] == 2
    shown = pf("show", str(plan_file), env=env)
    assert shown.returncode == 0 and "+ worker-2" in shown.stdout and "+ worker-3" in shown.stdout
    assert "Plan: 2 to add" in shown.stdout
    code, result = pf_json("apply", str(plan_file), env=env)
    assert code == 0, result
    assert result["ok"] is True and [w["name"] for w in result["addedWorkers"]] == ["worker-2", "worker-3"]
    assert "changesNotAsPlanned" not in result  # the run's stated effects are the plan's
    panes = tmux_server.panes()
    assert all(panes[w["pane_id"]] == (False, w["pid"]) for w in result["addedWorkers"])


def test_saved_plan_refuses_when_a_worker_pane_was_killed(tmux_server: TmuxServer, team: Team,
                                                         tmp_path: Path) -> None:
    env, work, _leader = team
    plan_file = tmp_path / "up.plan"
    assert pf_json("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "--plan-out", str(plan_file),
                   env=env)[0] == 0
    config = json.loads((work / ".omx/state/team/alpha/config.json").read_text())
    victim = config["workers"][0]["pane_id"]
    tmux_server.cmd("kill-pane", "-t", victim)
    before_files, before_panes = team_files(work), tmux_server.panes()
    done = pf("apply", str(plan_file), env=env)
    assert done.returncode == 4 and done.stdout == ""
    assert f"pane {victim} was live (pid {config['workers'][0]['pid']})" in done.stderr
    assert "now it is absent" in done.stderr and "nothing was changed" in done.stderr
    code, answer = pf_json("apply", str(plan_file), env=env)
    assert code == 4 and answer["ok"] is False and answer["error_code"] == "plan_stale"
    assert team_files(work) == before_files and tmux_server.panes() == before_panes


def test_saved_plan_of_another_state_root_or_format_is_refused(tmux_server: TmuxServer, team: Team,
                                                              tmp_path: Path) -> None:
    env, work, _leader = team
    plan_file = tmp_path / "up.plan"
    assert pf_json("team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "--plan-out", str(plan_file),
                   env=env)[0] == 0
    before_files, before_panes = team_files(work), tmux_server.panes()
    elsewhere = {**env, "OMX_TEAM_STATE_ROOT": str(tmp_path / "other-state")}
    done = pf("apply", str(plan_file), env=elsewhere)
    assert done.returncode == 4
    assert f"made for the state root {work / '.omx/state'}" in done.stderr and "other-state" in done.stderr
    data = json.loads(plan_file.read_text())
    old = tmp_path / "old.plan"
    old.write_text(json.dumps({**data, "format": 0}))
    done = pf("apply", str(old), env=env)
    assert done.returncode == 4 and "plan of format 0" in done.stderr and "make the plan again" in done.stderr
    tampered = tmp_path / "tampered.plan"
    tampered.write_text(json.dumps({**data, "request": {**data["request"], "count": 5}}))
    done = pf("apply", str(tampered), env=env)
    assert done.returncode == 4 and "fingerprint" in done.stderr
    done = pf("apply", str(tmp_path / "missing.plan"), env=env)
    assert done.returncode == 2 and "cannot read the plan" in done.stderr
    assert team_files(work) == before_files and tmux_server.panes() == before_panes
