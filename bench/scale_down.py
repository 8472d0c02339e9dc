"""Benchmark: ``scale-down`` of N workers on a real private tmux server.

    .venv/bin/python bench/scale_down.py [--workers 10] [--runs 5] [--executor control|spawn] [--skip-settle]

Each run builds a fresh team of N+1 worker panes (``sleep``) plus a leader pane on a private server
(``tmux -L pf-bench-<id>``), removes N of them in one forced scale-down, and records wall time and
the number of tmux invocations. The protocol minimum per removed live pane is 6 calls: the proof
teardown ``L S L kill L`` plus the reconciliation's fresh ``L`` of the committed debt.

``--executor`` picks how tmux steps run (``PANEFLEET_TMUX_EXECUTOR``: one control-mode client per
run, or a spawned ``tmux`` per call; ``shell/tmux_control.py``). ``--skip-settle`` answers the
teardown's settle pauses (``pure/tmux/teardown.py`` ``kill_settle_ms``) at once instead of sleeping — not a
mode panefleet has, a measurement of what the fixed pauses cost; the run must still prove every
killed pane gone at the after-kill proof.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pure import model as m  # noqa: E402
from pure.omx.scale_down import ScaleDownRequest  # noqa: E402
from shell.executor import Executor  # noqa: E402
from shell.loop import run_operation  # noqa: E402
from tests.omx_down.realteam import real_team  # noqa: E402

PROTOCOL_MINIMUM_PER_PANE = 6


class Server:
    def __init__(self) -> None:
        self.name = f"pf-bench-{uuid.uuid4().hex[:8]}"

    def cmd(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, check=check)

    def new_session(self, session: str) -> str:
        return self.cmd("new-session", "-d", "-s", session, "-x", "250", "-y", "80", "-P", "-F", "#{pane_id}",
                        "sleep 100000").stdout.strip()

    def pane_pid(self, pane: str) -> int:
        return int(self.cmd("display-message", "-p", "-t", pane, "#{pane_pid}").stdout.strip())

    def live_panes(self) -> set[str]:
        return set(self.cmd("list-panes", "-a", "-F", "#{pane_id}").stdout.split())

    def kill(self) -> None:
        self.cmd("kill-server", check=False)


class SkipSettle(Executor):
    """Answers every Sleep step at once (what the fixed settle pauses cost, measured)."""

    def execute(self, step: m.Step) -> m.Observation:
        if isinstance(step, m.Sleep):
            return m.Ack(ok=True)
        return super().execute(step)


def one_run(workers: int, executor_mode: str = "control", skip_settle: bool = False) -> dict[str, Any]:
    server = Server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            team, _, panes = real_team(server, cwd, "bench", workers + 1)
            names = tuple(f"worker-{i}" for i in range(2, workers + 2))
            env = {**os.environ, "PANEFLEET_STATE_DIR": str(cwd / "pf"), "PANEFLEET_TMUX_EXECUTOR": executor_mode}
            env.pop("TMUX", None)
            executor = (SkipSettle if skip_settle else Executor)(env=env, tmux_socket=server.name)
            request = ScaleDownRequest(team="bench", cwd=str(cwd), env={"OMX_TEAM_SCALING_ENABLED": "1"},
                                       worker_names=names, force=True)
            start = time.perf_counter()
            done, journal, _ = run_operation("team.scale_down", request, executor, env=env, audit=False)
            wall = time.perf_counter() - start
            assert done.outcome.result == {"ok": True, "removedWorkers": list(names), "newWorkerCount": 1}, done
            assert server.live_panes() & set(panes[1:]) == set()
            sleeps = sum(s.step.ms for s in journal if s.step.op == "sleep")  # type: ignore[union-attr]
            summary = executor.tmux_summary() or {}
            return {"wall_s": wall, "tmux_calls": executor.calls.get("tmux", 0), "settle_sleep_s": sleeps / 1000,
                    "steps": len(journal), "control_calls": summary.get("control_calls", 0)}
    finally:
        server.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--executor", choices=("control", "spawn"), default="control")
    parser.add_argument("--skip-settle", action="store_true")
    args = parser.parse_args()
    runs = [one_run(args.workers, args.executor, args.skip_settle) for _ in range(args.runs)]
    walls = [r["wall_s"] for r in runs]
    calls = runs[0]["tmux_calls"]
    report = {
        "workers_removed": args.workers,
        "runs": args.runs,
        "executor": args.executor,
        "settle_pauses": "answered at once (measurement)" if args.skip_settle else "slept",
        "tmux_calls_via_control": runs[0]["control_calls"],
        "median_wall_s": round(statistics.median(walls), 3),
        "min_wall_s": round(min(walls), 3),
        "max_wall_s": round(max(walls), 3),
        "settle_sleep_s_per_run": 0.0 if args.skip_settle else runs[0]["settle_sleep_s"],
        "median_wall_without_settle_s": round(statistics.median(walls) - (0.0 if args.skip_settle else
                                                                          runs[0]["settle_sleep_s"]), 3),
        "tmux_calls": calls,
        "tmux_calls_per_removed_worker": calls / args.workers,
        "protocol_minimum_per_removed_worker": PROTOCOL_MINIMUM_PER_PANE,
        "steps_per_run": runs[0]["steps"],
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
