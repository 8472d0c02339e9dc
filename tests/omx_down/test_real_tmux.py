"""Scale-down against a real private tmux server (``tmux -L <unique>``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pure.omx.scale_down import DebtRequest, ScaleDownRequest
from shell.run.executor import Executor
from shell.run.loop import run_operation
from tests.omx_down.realteam import real_team

pytestmark = pytest.mark.tmux
ENV = {"OMX_TEAM_SCALING_ENABLED": "1"}


def scale_down(server: object, cwd: Path, team: str, *workers: str) -> tuple[dict[str, object], Executor]:
    executor = Executor(env=dict(os.environ), tmux_socket=server.name)  # type: ignore[attr-defined]
    request = ScaleDownRequest(team=team, cwd=str(cwd), env=ENV, worker_names=workers, force=True)
    done, _, _ = run_operation("team.scale_down", request, executor, env=dict(os.environ), audit=False)
    return done.outcome.result, executor  # type: ignore[return-value]


def test_kills_exactly_the_two_removed_panes(tmux_server, tmp_path: Path, clean_env) -> None:  # type: ignore[no-untyped-def]
    team, leader, panes = real_team(tmux_server, tmp_path, "real-four", 4)
    before = tmux_server.panes()
    result, executor = scale_down(tmux_server, tmp_path, "real-four", "worker-2", "worker-3")
    assert result == {"ok": True, "removedWorkers": ["worker-2", "worker-3"], "newWorkerCount": 2}
    after = tmux_server.panes()
    assert set(before) - set(after) == {panes[1], panes[2]}
    assert {leader, panes[0], panes[3]} <= set(after)
    assert team.worker_names() == ["worker-1", "worker-4"]
    assert not team.debt_path().exists()
    # per removed pane: its transcript L S L capture (pure/omx/transcripts.py), then L S L kill L
    # (+ the reconcile's fresh proof of each)
    assert executor.calls["tmux"] == 2 * (4 + 5) + 2
    kept = sorted((team.dir / "transcripts").iterdir())
    assert [p.name.split(".")[0] for p in kept] == ["worker-2", "worker-3"]


def test_replaced_pane_process_is_kept_as_debt(tmux_server, tmp_path: Path, clean_env) -> None:  # type: ignore[no-untyped-def]
    team, leader, panes = real_team(tmux_server, tmp_path, "real-respawn", 3)
    old_pid = tmux_server.pane_pid(panes[1])
    tmux_server.cmd("respawn-pane", "-k", "-t", panes[1], "sleep 200000")
    new_pid = tmux_server.pane_pid(panes[1])
    assert new_pid != old_pid
    result, _ = scale_down(tmux_server, tmp_path, "real-respawn", "worker-2")
    assert result == {"ok": False, "error": f"scale_down_pane_proof_unavailable:{panes[1]}:pane_pid_changed"}
    assert panes[1] in tmux_server.panes()  # not killed
    debt = json.loads(team.debt_path().read_text())
    assert debt["status"] == "unresolved"
    assert debt["reasons"] == [f"{panes[1]}:pane_pid_changed"]
    assert debt["unresolved_panes"] == [{"name": "worker-2", "index": 2, "pane_id": panes[1], "pid": old_pid}]
    assert team.worker_names() == ["worker-1", "worker-3"]  # membership committed forward
    # a retry still refuses: the pane is not the one that was recorded
    executor = Executor(env=dict(os.environ), tmux_socket=tmux_server.name)
    done, _, _ = run_operation("team.debt_reconcile", DebtRequest(team="real-respawn", cwd=str(tmp_path)),
                               executor, env=dict(os.environ), audit=False)
    assert done.outcome.result == {"ok": False, "error": f"scale_down_cleanup_debt_unresolved:{panes[1]}"}
    assert panes[1] in tmux_server.panes()
    # once the replacement process is gone (pane closed), the debt converges
    tmux_server.cmd("kill-pane", "-t", panes[1])
    done, _, _ = run_operation("team.debt_reconcile", DebtRequest(team="real-respawn", cwd=str(tmp_path)),
                               executor, env=dict(os.environ), audit=False)
    assert done.outcome.result == {"ok": True}
    assert not team.debt_path().exists()


def test_leader_pane_listed_as_worker_is_never_killed(tmux_server, tmp_path: Path, clean_env) -> None:  # type: ignore[no-untyped-def]
    team, leader, panes = real_team(tmux_server, tmp_path, "real-leader", 2)
    leader_pid = tmux_server.pane_pid(leader)
    tmux_server.cmd("set-option", "-p", "-t", leader, "@omx_team_pane_owner_id", "team:real-leader")
    team.update(lambda c: c["workers"][0].update({"pane_id": leader, "pid": leader_pid}))
    result, executor = scale_down(tmux_server, tmp_path, "real-leader", "worker-1")
    assert result == {"ok": False, "error": f"scale_down_cleanup_debt:pane_teardown_unresolved:{leader}"}
    assert tmux_server.panes()[leader] == (False, leader_pid)
    assert executor.calls.get("tmux", 0) == 0


def test_demo_steps_scale_down_then_debt_report(tmux_server, tmp_path: Path, clean_env) -> None:  # type: ignore[no-untyped-def]
    import sys

    from shell.demo.scale_down import scale_down_demo
    from shell.demo.team import Transcript
    from shell.run.loop import state_dir

    team, leader, panes = real_team(tmux_server, tmp_path, "demo", 3)
    cli = (sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py"))
    run = Transcript(words=cli, socket=tmux_server.name, workdir=str(tmp_path), cwd=str(tmp_path), env=clean_env,
                     audit_dir=state_dir(clean_env) / "audit", as_json=True)
    scale_down_demo(run, "demo")
    assert run.steps[1]["command"].startswith(f"tmux -L {tmux_server.name} respawn-pane -k -t {panes[1]} ")
    seen = [(s["operation"], s["status"], s["result"]) for s in run.steps if s["operation"]]
    assert [(op, status) for op, status, _ in seen] == [
        ("team.scale_down", "ok"), ("team.scale_down", "debt"), ("team.debt_show", "ok"),
        ("team.debt_reconcile", "debt")]
    assert [s["exitCode"] for s in run.steps] == [0, 0, 3, 0, 3]
    assert seen[0][2] == {"ok": True, "removedWorkers": ["worker-3"], "newWorkerCount": 2}
    assert seen[1][2] == {"ok": False, "error": f"scale_down_pane_proof_unavailable:{panes[1]}:pane_pid_changed"}
    report = seen[2][2]
    assert report["panes"][0]["reasons"] == ["pane_pid_changed"]  # type: ignore[index]
    live = tmux_server.panes()
    assert panes[2] not in live and panes[1] in live and panes[0] in live and leader in live


def test_cli_exit_codes_and_debt_report(tmux_server, tmp_path: Path, clean_env) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    team, leader, panes = real_team(tmux_server, tmp_path, "cli-debt", 2)
    tmux_server.cmd("respawn-pane", "-k", "-t", panes[1], "sleep 300000")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "OMX_TEAM_SCALING_ENABLED": "1", "PANEFLEET_TMUX_SOCKET": tmux_server.name}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(root / "cli.py"), "team", *args, "--cwd", str(tmp_path)],
                              capture_output=True, text=True, env=env, timeout=60)

    down = cli("scale-down", "cli-debt", "--worker", "worker-2", "--force", "-o", "json")
    assert down.returncode == 3, down.stderr
    assert json.loads(down.stdout)["error_detail"] == f"scale_down_pane_proof_unavailable:{panes[1]}:pane_pid_changed"
    show = cli("debt", "show", "cli-debt")
    assert show.returncode == 0
    assert f"pane {panes[1]} (worker worker-2" in show.stdout and "pane_pid_changed" in show.stdout
    shown = json.loads(cli("debt", "show", "cli-debt", "-o", "json").stdout)
    assert shown["status"] == "unresolved" and shown["panes"][0]["reasons"] == ["pane_pid_changed"]
    plan = cli("debt", "reconcile", "cli-debt", "--dry-run")
    assert plan.returncode == 3 and "kill-pane" not in plan.stdout
    again = cli("debt", "reconcile", "cli-debt", "-o", "json")
    assert again.returncode == 3
    assert json.loads(again.stdout)["error_detail"] == f"scale_down_cleanup_debt_unresolved:{panes[1]}"
    assert panes[1] in tmux_server.panes()
    # unresolved prior debt blocks every later scale-down of the team (it is reconciled first)
    blocked = cli("scale-down", "cli-debt", "--worker", "worker-9", "--force", "-o", "json")
    assert blocked.returncode == 3
    assert json.loads(blocked.stdout)["error_detail"] == f"scale_down_cleanup_debt_unresolved:{panes[1]}"
    tmux_server.cmd("kill-pane", "-t", panes[1])
    bad = cli("scale-down", "cli-debt", "--worker", "worker-9", "--force", "-o", "json")
    assert bad.returncode == 4
    answer = json.loads(bad.stdout)
    assert answer["error_detail"] == "Worker worker-9 not found in team cli-debt"
    assert answer["error"] == "Team cli-debt has no worker worker-9; its workers: worker-1."
    assert not team.debt_path().exists()


@pytest.mark.tmux_executors("control")
@pytest.mark.parametrize("mode", [{}, {"OMX_TEAM_SKIP_READY_WAIT": "1"}], ids=["watched", "skip-ready-wait"])
def test_scale_down_removes_what_a_killed_scale_up_left(tmux_server, tmp_path: Path, clean_env,  # type: ignore[no-untyped-def]
                                                        mode: dict[str, str]) -> None:
    """A scale-up SIGKILLed right after its split leaves a pane, a worker folder, a startup script and an
    intent that no membership names; the next `team scale-down` (not only `debt reconcile`) removes them
    all, says so, and `team debt show` then finds nothing left (pure/omx/strays.py)."""
    from tests.omx_up.test_crash_matrix import _crash, _session_panes, _team, pf

    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1", **mode}
    work, leader = _team(tmux_server, tmp_path, env, "left")
    code, up = pf(env, "team", "scale-up", "left", "--count", "2", "--cwd", str(work))
    assert code == 0, up
    assert _crash(env, work, "left", 0, tmux_server.name, what="1", crash_at="split-window") == ""
    state = work / ".omx/state/team/left"
    members = {w["pane_id"] for w in json.loads((state / "config.json").read_text())["workers"]}
    (stray,) = _session_panes(tmux_server, "left") - members - {leader}
    assert (state / "workers/worker-3").is_dir() and (state / "runtime/worker-3-startup.sh").is_file()

    code, down = pf(env, "team", "scale-down", "left", "--worker", "worker-1", "--force", "--cwd", str(work))
    assert code == 0, down
    assert down["removedWorkers"] == ["worker-1"]
    assert [p["paneId"] for p in down["strayPanes"]["removed"]] == [stray]
    assert down["strayPanes"]["cleanedWorkers"] == ["worker-3"]
    (worker_2,) = json.loads((state / "config.json").read_text())["workers"]
    assert _session_panes(tmux_server, "left") == {leader, worker_2["pane_id"]}
    assert sorted(p.name for p in (state / "workers").iterdir()) == ["worker-2"]
    assert not any(p.name.startswith("worker-3") for p in (state / "runtime").iterdir())
    code, debt = pf(env, "team", "debt", "show", "left", "--cwd", str(work))
    assert code == 0 and "leftovers" not in debt, debt
