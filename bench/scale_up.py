"""Scale-up benchmark on a real private tmux server (rerun: `.venv/bin/python bench/scale_up.py [runs]`).

Per run: a fresh private tmux server and team (``team init`` with the placeholder agent as worker
CLI, then ``scale-up --count 1`` so the chain splits from a worker), then, timed as whole CLI
processes: ``scale-up --count 10 --dry-run`` and ``scale-up --count 10``. tmux calls are counted
from the audit log (real run) and from the predicted plan (dry run). The window is made tall
because scale-up never relayouts (oh-my-codex parity): each ``split-window -v`` halves the newest
pane, so ten chained splits need about 2^10 rows.

Prints one JSON object: median / min / max wall time and tmux calls for both, and the per-worker
tmux-call count.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from audit_calls import tmux_calls  # bench/audit_calls.py: this script's directory is on sys.path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, str(ROOT / "cli.py")]
COUNT = 10


def tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], check=True, capture_output=True, text=True).stdout.strip()


def pf(env: dict[str, str], *args: str) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    done = subprocess.run([*CLI, *args, "-o", "json"], capture_output=True, text=True, env=env, timeout=300)
    wall = time.perf_counter() - start
    return wall, json.loads(done.stdout)


def one_run(extra_env: dict[str, str]) -> dict[str, float]:
    socket = f"pf-bench-{uuid.uuid4().hex[:8]}"
    work = Path(tempfile.mkdtemp(prefix="pf-bench-"))
    state = work / ".pf-state"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMX_", "TMUX"))}
    env.update({"PANEFLEET_TMUX_SOCKET": socket, "PANEFLEET_STATE_DIR": str(state), "OMX_TEAM_SCALING_ENABLED": "1",
                **extra_env})
    try:
        tmux(socket, "new-session", "-d", "-s", "lead", "-x", "400", "-y", "4000", "sleep 100000")
        leader = tmux(socket, "list-panes", "-a", "-F", "#{pane_id}")
        _, init = pf(env, "team", "init", "bench", "--leader-pane", leader, "--worker-cli", "placeholder",
                     "--cwd", str(work))
        assert init.get("ok"), init
        _, first = pf(env, "team", "scale-up", "bench", "--count", "1", "--cwd", str(work))
        assert first.get("ok"), first
        dry_wall, plan = pf(env, "team", "scale-up", "bench", "--count", str(COUNT), "--cwd", str(work), "--dry-run")
        assert plan["predicted"].get("ok"), plan["predicted"]
        dry_calls = sum(1 for p in plan["steps"] if p["step"]["op"] == "run" and p["step"]["tool"] == "tmux")
        wall, result = pf(env, "team", "scale-up", "bench", "--count", str(COUNT), "--cwd", str(work))
        assert result.get("ok"), result
        return {"wall_s": wall, "tmux_calls": tmux_calls(state, "*scale_up*.jsonl")["tmux_calls"], "dry_wall_s": dry_wall,
                "dry_tmux_calls": dry_calls}
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def summary(samples: list[dict[str, float]], key: str) -> dict[str, float]:
    values = [s[key] for s in samples]
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    report: dict[str, Any] = {"count": COUNT, "runs": runs}
    for label, extra in (("default_ready_wait", {}), ("skip_ready_wait", {"OMX_TEAM_SKIP_READY_WAIT": "1"})):
        samples = [one_run(extra) for _ in range(runs)]
        calls = samples[0]["tmux_calls"]
        report[label] = {
            "real": {"wall_s": summary(samples, "wall_s"), "tmux_calls": summary(samples, "tmux_calls")},
            "dry_run": {"wall_s": summary(samples, "dry_wall_s"), "tmux_calls": summary(samples, "dry_tmux_calls")},
            "tmux_calls_per_worker": (calls - 2) / COUNT,  # minus the run's -V and initial gate L
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
