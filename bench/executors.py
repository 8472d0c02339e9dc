"""Benchmark: spawned tmux per call vs one control-mode client per run (``shell/run/tmux_control.py``).

    .venv/bin/python bench/executors.py [--runs 5] [--workers 10] [--status-runs 5] [--json]

Per run and executor (``PANEFLEET_TMUX_EXECUTOR=control`` / ``spawn``, interleaved, the order
alternating between runs): a fresh private tmux server (``tmux -L pf-bench-…``, killed afterwards)
and team (``team init`` with the placeholder agent as worker CLI, ``scale-up --count 1`` so the chain
splits from a worker), then, each as a fresh CLI process with ``OMX_TEAM_SKIP_READY_WAIT=1``:
``team scale-up --count N``, ``team status`` (``--status-runs`` times), and ``team scale-down
--force`` of the N new workers. The window is tall for the same reason as in ``bench/scale_up.py``.

From the audit logs: tmux calls, how many went through the control client, and the settle pauses
scale-down's teardown sleeps (``pure/tmux/teardown.py`` ``kill_settle_ms``). Prints medians (min, max).
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, str(ROOT / "cli.py")]
EXECUTORS = ("control", "spawn")


def tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], check=True, capture_output=True, text=True).stdout.strip()


def pf(env: dict[str, str], *args: str, ok_codes: tuple[int, ...] = (0,)) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    done = subprocess.run([*CLI, *args, "-o", "json"], capture_output=True, text=True, env=env, timeout=300)
    wall = time.perf_counter() - start
    assert done.returncode in ok_codes, (args, done.returncode, done.stdout, done.stderr)
    return wall, json.loads(done.stdout)


def audit_facts(state: Path, pattern: str) -> dict[str, Any]:
    """tmux calls, how they were answered and the sleeps of the newest audit log matching ``pattern``."""
    latest = sorted((state / "audit").glob(pattern))[-1]
    calls = control = 0
    sleep_ms = 0
    summary: Any = None
    for line in latest.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "entry":
            step = record["step"]
            if step["op"] == "run" and step["tool"] == "tmux":
                calls += 1
                control += record.get("tmux_via") == "control"
            elif step["op"] == "sleep":
                sleep_ms += step["ms"]
        elif record["type"] == "done":
            summary = record.get("tmux_executor")
    return {"tmux_calls": calls, "control_calls": control, "sleep_s": sleep_ms / 1000, "summary": summary}


def one_run(executor: str, workers: int, status_runs: int) -> dict[str, Any]:
    socket = f"pf-bench-{uuid.uuid4().hex[:8]}"
    work = Path(tempfile.mkdtemp(prefix="pf-bench-"))
    state = work / ".pf-state"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMX_", "TMUX", "PANEFLEET_"))}
    env.update({"PANEFLEET_TMUX_SOCKET": socket, "PANEFLEET_STATE_DIR": str(state), "OMX_TEAM_SCALING_ENABLED": "1",
                "OMX_TEAM_SKIP_READY_WAIT": "1", "PANEFLEET_TMUX_EXECUTOR": executor})
    try:
        tmux(socket, "-f", "/dev/null", "new-session", "-d", "-s", "lead", "-x", "400", "-y", "4000", "sleep 100000")
        leader = tmux(socket, "list-panes", "-a", "-F", "#{pane_id}")
        pf(env, "team", "init", "bench", "--leader-pane", leader, "--worker-cli", "placeholder", "--cwd", str(work))
        pf(env, "team", "scale-up", "bench", "--count", "1", "--cwd", str(work))
        up_wall, up = pf(env, "team", "scale-up", "bench", "--count", str(workers), "--cwd", str(work))
        assert up.get("ok"), up
        up_facts = audit_facts(state, "*scale_up*.jsonl")
        status_walls = []
        for _ in range(status_runs):
            wall, status = pf(env, "team", "status", "bench", "--cwd", str(work))
            status_walls.append(wall)
        assert status.get("workerCount") == workers + 1 and status.get("panesProven"), status
        names = [f"worker-{i}" for i in range(2, workers + 2)]
        down_wall, down = pf(env, "team", "scale-down", "bench", "--force", *[a for n in names for a in ("--worker", n)],
                             "--cwd", str(work))
        assert down.get("ok") and down.get("removedWorkers") == names, down
        down_facts = audit_facts(state, "*scale_down*.jsonl")
        return {"scale_up_s": up_wall, "status_s": statistics.median(status_walls), "scale_down_s": down_wall,
                "up": up_facts, "down": down_facts}
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        (Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / socket).unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--status-runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        sys.stderr.write("tmux is not installed\n")
        return 1
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in EXECUTORS}
    for index in range(args.runs):
        for name in EXECUTORS if index % 2 == 0 else tuple(reversed(EXECUTORS)):
            samples[name].append(one_run(name, args.workers, args.status_runs))
    report: dict[str, Any] = {"workers": args.workers, "runs": args.runs}
    for name, runs in samples.items():
        first = runs[0]
        report[name] = {
            "scale_up_s": summary([r["scale_up_s"] for r in runs]),
            "status_s": summary([r["status_s"] for r in runs]),
            "scale_down_s": summary([r["scale_down_s"] for r in runs]),
            "scale_up_tmux_calls": first["up"]["tmux_calls"], "scale_up_control_calls": first["up"]["control_calls"],
            "scale_down_tmux_calls": first["down"]["tmux_calls"],
            "scale_down_control_calls": first["down"]["control_calls"],
            "scale_down_settle_sleep_s": first["down"]["sleep_s"],
            "scale_up_sleep_s": first["up"]["sleep_s"],
            "scale_down_executor": first["down"]["summary"],
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name in EXECUTORS:
        r = report[name]
        print(f"{name:8} scale-up {r['scale_up_s']['median']:.3f} s ({r['scale_up_tmux_calls']} tmux calls, "
              f"{r['scale_up_control_calls']} via control)  status {r['status_s']['median'] * 1000:.0f} ms  "
              f"scale-down {r['scale_down_s']['median']:.3f} s ({r['scale_down_tmux_calls']} calls, "
              f"{r['scale_down_control_calls']} via control, {r['scale_down_settle_sleep_s']:.1f} s settle sleeps)")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
