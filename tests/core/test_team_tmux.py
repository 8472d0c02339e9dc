"""team init / team status against a real tmux server on a private socket, through the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TmuxServer

pytestmark = pytest.mark.tmux
CLI = [sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py")]


def pf(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)


def pf_json(*args: str, env: dict[str, str]) -> tuple[int, dict[str, Any]]:
    done = pf(*args, "-o", "json", env=env)
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected exactly one JSON line, got {done.stdout!r} (stderr {done.stderr!r})"
    return done.returncode, json.loads(lines[0])


def _config(work: Path, team: str = "alpha") -> Path:
    return work / ".omx" / "state" / "team" / team / "config.json"


def _add_worker(work: Path, name: str, index: int, pane: str, pid: int | None, team: str = "alpha") -> None:
    for file in ("config.json", "manifest.v2.json"):
        path = work / ".omx" / "state" / "team" / team / file
        data = json.loads(path.read_text())
        data["workers"].append({"name": name, "index": index, "role": "executor", "assigned_tasks": [],
                                "pane_id": pane, "pid": pid})
        data["worker_count"] = len(data["workers"])
        path.write_text(json.dumps(data, indent=2))


def test_init_binds_an_explicit_leader_and_status_proves_every_pane(
    tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    leader = tmux_server.new_session("lead")
    work = tmp_path / "work"
    work.mkdir()
    code, init = pf_json("team", "init", "alpha", "--leader-pane", leader, "--cwd", str(work), env=env)
    assert code == 0, init
    assert init["leaderPaneId"] == leader and init["leaderPanePid"] == tmux_server.pane_pid(leader)
    assert tmux_server.owner(leader) == "team:alpha"
    config = json.loads(_config(work).read_text())
    assert config["leader_pane_pid"] == tmux_server.pane_pid(leader)
    assert config["tmux_pane_owner_id"] == "team:alpha" and config["workers"] == []
    assert not _config(work).read_text().endswith("\n")  # JSON.stringify(x, null, 2) bytes

    # three worker panes: ours and live, ours but killed, and a foreign one carrying another team's tag
    ours = tmux_server.cmd("split-window", "-d", "-t", leader, "-P", "-F", "#{pane_id}", "sleep 100000").stdout.strip()
    tmux_server.cmd("set-option", "-p", "-t", ours, "@omx_team_pane_owner_id", "team:alpha")
    killed = tmux_server.cmd("split-window", "-d", "-t", leader, "-P", "-F", "#{pane_id}", "sleep 100000").stdout.strip()
    killed_pid = tmux_server.pane_pid(killed)
    tmux_server.cmd("kill-pane", "-t", killed)
    foreign = tmux_server.cmd("split-window", "-d", "-t", leader, "-P", "-F", "#{pane_id}", "sleep 100000").stdout.strip()
    tmux_server.cmd("set-option", "-p", "-t", foreign, "@omx_team_pane_owner_id", "team:beta")
    _add_worker(work, "worker-1", 1, ours, tmux_server.pane_pid(ours))
    _add_worker(work, "worker-2", 2, killed, killed_pid)
    _add_worker(work, "worker-3", 3, foreign, tmux_server.pane_pid(foreign))
    panes_before = tmux_server.panes()

    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 3  # needs attention: not every pane is proven ours and live
    by_name = {p["name"]: p for p in status["panes"]}
    assert by_name["leader"]["verdict"] == "live" and by_name["leader"]["ownerMatch"] is True
    assert (by_name["worker-1"]["verdict"], by_name["worker-1"]["pidMatch"], by_name["worker-1"]["ownerMatch"]) == (
        "live", True, True)
    assert by_name["worker-2"]["verdict"] == "absent" and by_name["worker-2"]["pidMatch"] is False
    assert (by_name["worker-3"]["verdict"], by_name["worker-3"]["owner"], by_name["worker-3"]["ownerMatch"]) == (
        "live", "team:beta", False)
    assert status["healthy"] is False
    assert tmux_server.panes() == panes_before  # status changes nothing

    text = pf("team", "status", "alpha", "--cwd", str(work), env=env).stdout
    assert "NOT OURS" in text and "absent" in text


def test_init_new_session_and_refusals(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    work = tmp_path / "w"
    work.mkdir()
    code, init = pf_json("team", "init", "alpha", "--new-session", "--session", "pf-alpha", "--cwd", str(work), env=env)
    assert code == 0, init
    assert init["leaderPaneId"] in tmux_server.panes()
    again = pf("team", "init", "alpha", "--new-session", "--cwd", str(work), env=env)
    assert again.returncode == 4 and "already exists" in again.stderr and again.stdout == ""

    # a pane already owned by another team is refused and keeps its tag
    other = tmux_server.new_session("other")
    tmux_server.cmd("set-option", "-p", "-t", other, "@omx_team_pane_owner_id", "team:beta")
    w2 = tmp_path / "w2"
    w2.mkdir()
    code, refused = pf_json("team", "init", "gamma", "--leader-pane", other, "--cwd", str(w2), env=env)
    assert code == 4 and refused["error_detail"] == f"leader_pane_owned_by_other_team:{other}:team:beta"
    assert refused["error_code"] == "leader_pane_owned_by_other_team" and f"Pane {other} already leads" in refused["error"]
    assert tmux_server.owner(other) == "team:beta"
    assert not (w2 / ".omx").exists()

    # a pane that does not exist: proof says absent, nothing written
    code, absent = pf_json("team", "init", "delta", "--leader-pane", "%999", "--cwd", str(w2), env=env)
    assert code == 4 and absent["error_detail"] == "exact_pane_proof_unavailable:%999:absent"
    assert not (w2 / ".omx").exists()


def test_dead_server_missing_binary_and_bad_state(tmp_path: Path, clean_env: dict[str, str]) -> None:
    work = tmp_path / "w"
    work.mkdir()
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": "pf-no-server-here"}
    code, dead = pf_json("team", "init", "alpha", "--leader-pane", "%0", "--cwd", str(work), env=env)
    assert code == 4 and dead["error_detail"] == "exact_pane_proof_unavailable:%0:query_failed"
    assert not (work / ".omx").exists()

    no_tmux = {**env, "PATH": str(tmp_path / "empty-bin")}
    (tmp_path / "empty-bin").mkdir()
    done = subprocess.run([*CLI, "team", "init", "alpha", "--leader-pane", "%0", "--cwd", str(work), "-o", "json"],
                          capture_output=True, text=True, env=no_tmux)
    assert done.returncode == 4 and json.loads(done.stdout)["error_detail"] == "tmux is not available"

    code, unknown = pf_json("team", "status", "nosuch", "--cwd", str(work), env=env)
    assert code == 4 and unknown["error_detail"] == "Team nosuch not found"

    team_dir = work / ".omx" / "state" / "team" / "broken"
    team_dir.mkdir(parents=True)
    (team_dir / "config.json").write_text('{"name": "broken", "workers": [')
    code, broken = pf_json("team", "status", "broken", "--cwd", str(work), env=env)
    assert code == 1
    assert broken["error_detail"].startswith(f"team_state_malformed:{team_dir}/config.json: malformed JSON")
    (team_dir / "config.json").write_text('{"name": "broken", "workers": [{"name": "worker-1", "index": "1"}]}')
    code, typed = pf_json("team", "status", "broken", "--cwd", str(work), env=env)
    assert code == 1 and "field workers[0].index" in typed["error"]
    assert (team_dir / "config.json").read_text().startswith('{"name": "broken"')  # nothing rewritten


def test_dry_run_changes_nothing_and_audit_replays(
    tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    leader = tmux_server.new_session("lead")
    work = tmp_path / "w"
    work.mkdir()
    plan = pf("team", "init", "alpha", "--leader-pane", leader, "--cwd", str(work), "--dry-run", env=env)
    assert plan.returncode == 0, plan.stderr
    # what will change, in words; the step trace with --steps
    assert f"~ pane {leader}" in plan.stdout and "owner tag set to team:alpha" in plan.stdout
    assert "+ team alpha" in plan.stdout and "Plan: 1 to add, 1 to change, 0 to remove." in plan.stdout
    assert "set-option -p -t " + leader not in plan.stdout
    traced = pf("team", "init", "alpha", "--leader-pane", leader, "--cwd", str(work), "--dry-run", "--steps", env=env)
    assert "set-option -p -t " + leader in traced.stdout and "write " in traced.stdout
    assert tmux_server.owner(leader) == "" and not (work / ".omx").exists()

    done = pf("team", "init", "alpha", "--leader-pane", leader, "--cwd", str(work), env=env)
    assert done.returncode == 0
    logs = sorted((Path(env["PANEFLEET_STATE_DIR"]) / "audit").glob("*team-init*.jsonl"))
    assert len(logs) == 1
    replayed = pf("replay", str(logs[0]), "-o", "json", env=env)
    assert replayed.returncode == 0 and json.loads(replayed.stdout)["ok"] is True

    # tamper with one recorded observation: the replay must report the divergence
    lines = logs[0].read_text().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("type") == "entry" and record["step"].get("args", [None])[0] == "show-option":
            record["observation"]["stdout"] = "team:intruder\n"
            lines[i] = json.dumps(record)
            break
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(lines) + "\n")
    diverged = pf("replay", str(tampered), env=env)
    assert diverged.returncode == 1 and "DIVERGES" in diverged.stdout


def test_demo_runs_and_cleans_up(clean_env: dict[str, str]) -> None:
    name = f"pf-demo-test-{os.getpid()}"
    done = pf("demo", "--tmux-socket", name, "-o", "json", env=clean_env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ok"] is True and report["kept"] is False
    assert [s["status"] for s in report["steps"]][:2] == ["ok", "ok"]
    alive = subprocess.run(["tmux", "-L", name, "list-sessions"], capture_output=True, text=True)
    assert alive.returncode != 0  # the demo server is gone
    assert not Path(report["workdir"]).exists()
    socket = Path(clean_env.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}" / name
    assert not socket.exists()  # and so is its socket file


def test_status_recovers_an_interrupted_commit_first(
    tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]
) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    leader = tmux_server.new_session("lead")
    work = tmp_path / "w"
    work.mkdir()
    assert pf("team", "init", "alpha", "--leader-pane", leader, "--cwd", str(work), env=env).returncode == 0
    team_dir = (work / ".omx" / "state" / "team" / "alpha").resolve()
    config_path = team_dir / "config.json"
    old = config_path.read_text()
    new_config = json.loads(old)
    new_config["worker_count"] = 0
    new_config["task"] = "rolled forward"
    journal = {"schemaVersion": 1, "phase": "committed",
               "files": [{"path": str(config_path), "oldBytes": old, "newBytes": json.dumps(new_config, indent=2)}]}
    (team_dir / ".membership-task-transaction.json").write_text(json.dumps(journal))
    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 0, status
    assert json.loads(config_path.read_text())["task"] == "rolled forward"
    assert not (team_dir / ".membership-task-transaction.json").exists()
    assert not (work / ".omx" / "state" / ".team-locks" / "alpha.membership").exists()  # barrier released


def test_demo_refuses_a_server_it_did_not_start(tmux_server: TmuxServer, clean_env: dict[str, str]) -> None:
    precious = tmux_server.new_session("precious")
    done = pf("demo", "--tmux-socket", tmux_server.name, env=clean_env)
    assert done.returncode == 4 and "already running" in done.stderr
    assert precious in tmux_server.panes()  # untouched


def test_refusals_that_leave_no_trace(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    leader = tmux_server.new_session("lead")
    missing = tmp_path / "does-not-exist"
    code, out = pf_json("team", "init", "alpha", "--leader-pane", leader, "--cwd", str(missing), env=env)
    assert code == 4 and out["error_detail"] == f"working directory does not exist: {missing}"
    assert not missing.exists() and tmux_server.owner(leader) == ""

    work = tmp_path / "w"
    work.mkdir()
    for bad in ("../alpha", "Alpha", "a b", "x" * 31):
        code, out = pf_json("team", "status", bad, "--cwd", str(work), env=env)
        assert code == 2 and out["error"].startswith(f"usage: {bad!r} is not a team name")  # a usage error
    code, out = pf_json("team", "status", "nosuch", "--cwd", str(work), env=env)
    assert code == 4 and not (work / ".omx").exists()  # no lock directory for a team that does not exist


def test_status_against_a_dead_server_is_an_error(tmux_server: TmuxServer, tmp_path: Path,
                                                  clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    leader = tmux_server.new_session("lead")
    work = tmp_path / "w"
    work.mkdir()
    assert pf("team", "init", "alpha", "--leader-pane", leader, "--cwd", str(work), env=env).returncode == 0
    tmux_server.kill()
    code, out = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 1 and out["ok"] is False and out["error_detail"].startswith("pane_snapshot_unavailable:query_failed:")
    assert out["panes"][0]["verdict"] == "unavailable"
