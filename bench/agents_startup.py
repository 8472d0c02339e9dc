"""Parallel start-up of real Codex workers, on a quiet or a busy machine.

Rerun: `.venv/bin/python bench/agents_startup.py [--runs N] [--one-runs M] [--count K] [--busy]`
(defaults: 3 runs of each, 6 workers, quiet).

Each run is a fresh network + pid namespace with the pinned Codex CLI (installed by `./dev test` into
`$PANEFLEET_AGENT_CACHE`), a loopback mock model, a fresh `CODEX_HOME`, a fresh never-trusted git
repository and a private tmux server (`tests/agents/sandbox.py`). Timed: one `team scale-up --count N`
as a whole CLI process, until it exits with every agent started (trust prompt answered) and its
trigger confirmed on screen. The watched start-up launches all N panes first and waits for them
together, so N workers should take about one worker's start-up time.

`--busy` keeps every core busy for the whole bench (one CPU burner per core, at normal priority), as
agents' own builds and tests do to a machine. Prints one JSON object: for 1 and for N workers, how
many runs delivered every task, and the median / min / max seconds of those; and the ratio of the
medians (target: every run delivers, ratio <= 2).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.agents.sandbox import missing_prerequisites, run_scenario  # noqa: E402


def timed(count: int, runs: int) -> dict[str, Any]:
    seconds, failures = [], []
    for _ in range(runs):
        result = run_scenario("timed_scale_up", {"cli": "codex", "count": count}, timeout_s=400)
        if result["ok"]:
            seconds.append(result["seconds"])
        else:
            failures.append(json.dumps(result["answer"])[:1500])
        print(f"codex x{count}: {'ok' if result['ok'] else 'FAILED'} in {result['seconds']} s", file=sys.stderr)
    out: dict[str, Any] = {"runs": runs, "delivered_all": len(seconds), "failures": failures}
    if seconds:
        out.update(median_s=statistics.median(seconds), min_s=min(seconds), max_s=max(seconds))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of the N-worker scale-up")
    parser.add_argument("--one-runs", type=int, default=None, help="runs of the 1-worker scale-up (default: --runs)")
    parser.add_argument("--count", type=int, default=6, help="N, the workers of one scale-up")
    parser.add_argument("--busy", action="store_true", help="one CPU burner per core for the whole bench")
    args = parser.parse_args()
    missing = missing_prerequisites()
    if missing:
        sys.stderr.write("cannot run: " + "; ".join(missing) + "\n")
        return 1
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)
               ] if args.busy else []
    try:
        one = timed(1, args.one_runs if args.one_runs is not None else args.runs)
        many = timed(args.count, args.runs)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    ratio = round(many["median_s"] / one["median_s"], 2) if "median_s" in many and "median_s" in one else None
    print(json.dumps({"busy": args.busy, "burners": len(burners), "codex_1": one, f"codex_{args.count}": many,
                      f"ratio_{args.count}_to_1": ratio}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
