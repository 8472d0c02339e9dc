"""Parallel start-up of real Codex workers (rerun: `.venv/bin/python bench/agents_startup.py [runs]`).

Each run is a fresh network + pid namespace with the pinned Codex CLI (installed by `./dev test` into
`$PANEFLEET_AGENT_CACHE`), a loopback mock model, a fresh never-trusted git repository and a private
tmux server (`tests/agents/sandbox.py`). Timed: one `team scale-up --count N` as a whole CLI process,
until it exits with every agent started (trust prompt answered) and its trigger confirmed on screen.
The watched start-up launches all N panes first and waits for them together, so N workers should take
about one worker's start-up time. Prints one JSON object: median / min / max seconds for N = 1 and
N = 6, and their ratio (target: < 2).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.agents.sandbox import missing_prerequisites, run_scenario  # noqa: E402


def timed(count: int, runs: int) -> dict[str, float]:
    seconds = []
    for _ in range(runs):
        result = run_scenario("timed_scale_up", {"cli": "codex", "count": count}, timeout_s=300)
        if not result["ok"]:
            raise SystemExit(f"scale-up of {count} did not deliver every task: {json.dumps(result['answer'])[:2000]}")
        seconds.append(result["seconds"])
    return {"median_s": statistics.median(seconds), "min_s": min(seconds), "max_s": max(seconds)}


def main() -> int:
    missing = missing_prerequisites()
    if missing:
        sys.stderr.write("cannot run: " + "; ".join(missing) + "\n")
        return 1
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    one, six = timed(1, runs), timed(6, runs)
    print(json.dumps({"runs": runs, "codex_1": one, "codex_6": six,
                      "ratio_6_to_1": round(six["median_s"] / one["median_s"], 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
