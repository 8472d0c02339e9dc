"""Benchmark: ``panefleet plan`` and ``panefleet apply`` of a converged fleet of N placeholder workers,
each run a fresh CLI process, on a real private tmux server.

    .venv/bin/python bench/fleet.py [--workers 20] [--runs 15]

A fleet file declares one team of N placeholder workers on a private server (``tmux -L pf-bench-<id>``);
one ``panefleet apply --yes`` builds it (timed once, reported as ``build_s``). Then, after one warm-up
run each, every run times a whole ``panefleet plan`` and ``panefleet apply`` process (start-up,
imports, reading the team's records, one pane snapshot, an owner read and a screen read per pane);
each must answer ``No changes``. Targets (issue: fleets as desired state): plan ≤ 0.4 s, apply with no
changes ≤ 0.5 s, medians.

Prints one JSON object: median / min / max wall seconds of plan and of apply.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What the installed console script runs, with the checkout first on sys.path.
ENTRY = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from cli import main; sys.exit(main())"


def figures(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4)}


def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=300)
    return time.perf_counter() - start, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    socket = f"pf-bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix="pf-bench-fleet-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "panefleet.toml").write_text(
            f'[team.bench]\ntmux_socket = "{socket}"\n\n[[team.bench.workers]]\ncli = "placeholder"\n'
            f"count = {options.workers}\n", encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OMX_", "TMUX"))}
        env.update(PANEFLEET_STATE_DIR=str(Path(tmp) / "state"), XDG_STATE_HOME=str(Path(tmp) / "xdg"))
        try:
            build_s, built = timed(["apply", "--yes"], env, project)
            if built.returncode != 0:
                raise SystemExit(f"building the fleet failed: {built.stdout}{built.stderr}")
            results: dict[str, object] = {"workers": options.workers, "runs": options.runs, "build_s": round(build_s, 3)}
            for command in ("plan", "apply"):
                walls = []
                for run in range(options.runs + 1):
                    wall, done = timed([command], env, project)
                    if done.returncode != 0 or not done.stdout.startswith("No changes"):
                        raise SystemExit(f"{command} did not answer No changes: {done.stdout}{done.stderr}")
                    if run:  # the first is the warm-up
                        walls.append(wall)
                results[command] = figures(walls)
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
