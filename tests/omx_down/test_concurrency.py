"""The two boundary tests of the seed (H06, H07) with real concurrent processes (the CLI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.omx_down.fixtures import Team

ROOT = Path(__file__).resolve().parents[2]


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    full_env = {**os.environ, "PANEFLEET_STATE_DIR": str(cwd / "pf"), "OMX_TEAM_SCALING_ENABLED": "1",
                "PANEFLEET_TMUX_SOCKET": "pf-none-" + cwd.name, **(env or {})}
    return subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "team", *args, "--cwd", str(cwd), "-o", "json"],
                            cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=60)
    assert out.strip(), err
    value: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return value


def wait_for(path: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.005)


def test_h06_claim_serialized_to_claim_conflict(tmp_path: Path, clean_env: dict[str, str]) -> None:
    team = Team(tmp_path, "claim-boundary", 2)
    team.write_task("1", "owned", owner="worker-2")
    down = cli(tmp_path, "scale-down", "claim-boundary", "--worker", "worker-2", "--force",
               env={"OMX_TEAM_SCALE_DOWN_BOUNDARY_HOLD_MS": "1500"})
    wait_for(team.dir / "claims" / "task-1.lock")
    claim = cli(tmp_path, "task", "claim", "claim-boundary", "1", "--worker", "worker-2", "--expected-version", "1")
    time.sleep(0.3)
    assert claim.poll() is None, "the claim must wait for the membership barrier"
    assert result(down) == {"ok": True, "removedWorkers": ["worker-2"], "newWorkerCount": 1}
    answer = result(claim)
    assert (answer["ok"], answer["error_code"]) == (False, "claim_conflict") and "error_detail" not in answer
    task = team.task("1")
    assert "owner" not in task and "claim" not in task and task["version"] == 2


def test_h07_creation_and_null_version_claim_wait_for_the_commit(tmp_path: Path, clean_env: dict[str, str]) -> None:
    team = Team(tmp_path, "create-boundary", 2)
    team.write_task("1", "owned", owner="worker-2")
    marker = tmp_path / "post-snapshot-held"
    down = cli(tmp_path, "scale-down", "create-boundary", "--worker", "worker-2", "--force",
               env={"OMX_TEAM_SCALE_DOWN_BOUNDARY_HOLD_MS": "1500",
                    "OMX_TEAM_SCALE_DOWN_POST_SNAPSHOT_MARKER": str(marker)})
    wait_for(marker)
    assert marker.read_text() == "snapshot-held\n"
    create = cli(tmp_path, "task", "create", "create-boundary", "--subject", "late", "--description", "d",
                 "--owner", "worker-2")
    claim = cli(tmp_path, "task", "claim", "create-boundary", "1", "--worker", "worker-2",
                "--expected-version", "null")
    time.sleep(0.3)
    assert create.poll() is None and claim.poll() is None, "both must wait for the barrier"
    assert result(down) == {"ok": True, "removedWorkers": ["worker-2"], "newWorkerCount": 1}
    answer = result(claim)
    assert (answer["ok"], answer["error_code"]) == (False, "worker_not_found") and "error_detail" not in answer
    created = result(create)
    assert created["ok"] is True
    task = created["task"]
    assert isinstance(task, dict) and task["owner"] == "worker-2" and task["id"] == "2"
    assert team.task("2")["owner"] == "worker-2"
    assert team.worker_names() == ["worker-1"]
    manifest = team.manifest()
    assert manifest is not None and [w["name"] for w in manifest["workers"]] == ["worker-1"]
    assert team.config()["next_task_id"] == 3 and manifest["next_task_id"] == 3


def test_concurrent_scale_downs_serialize_on_the_scaling_lock(tmp_path: Path, clean_env: dict[str, str]) -> None:
    team = Team(tmp_path, "serial", 3)
    first = cli(tmp_path, "scale-down", "serial", "--worker", "worker-2", "--force",
                env={"OMX_TEAM_SCALE_DOWN_BOUNDARY_HOLD_MS": "1200",
                     "OMX_TEAM_SCALE_DOWN_POST_SNAPSHOT_MARKER": str(tmp_path / "held")})
    wait_for(tmp_path / "held")
    started = time.monotonic()
    second = cli(tmp_path, "scale-down", "serial", "--worker", "worker-3", "--force")
    assert result(first) == {"ok": True, "removedWorkers": ["worker-2"], "newWorkerCount": 2}
    assert result(second) == {"ok": True, "removedWorkers": ["worker-3"], "newWorkerCount": 1}
    assert time.monotonic() - started > 0.8, "the second scale-down must wait for the first"
    assert team.worker_names() == ["worker-1"]
    assert team.config()["config_generation"] == 2
    assert not Path(team.paths.scaling_lock).exists() and not Path(team.paths.membership_lock).exists()
