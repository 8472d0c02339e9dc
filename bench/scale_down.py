"""Benchmark: ``scale-down`` of N workers on a real private tmux server.

    .venv/bin/python bench/scale_down.py [--workers 10] [--runs 5] [--executor control|spawn]

Each run builds a fresh team of N+1 worker panes (``sleep``) plus a leader pane on a private server
(``tmux -L pf-bench-<id>``), removes N of them in one forced scale-down, and records wall time and
the number of tmux invocations. The protocol minimum per removed live pane is 10 calls: its transcript
``L S L capture-pane`` (pure/omx/transcripts.py), the proof teardown ``L S L kill L`` and the
reconciliation's fresh ``L`` of the committed debt.

``--executor`` picks how tmux steps run (``PANEFLEET_TMUX_EXECUTOR``: one control-mode client per
run, or a spawned ``tmux`` per call; ``shell/run/tmux_control.py``). ``back_off_pause_s_per_run`` is
the time spent in the teardown's after-kill back-off (``pure/tmux/teardown.py`` ``kill_backoff_ms``):
0 when every killed pane is proven gone by the proof right after its kill.
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
from shell.run.executor import Executor  # noqa: E402
from shell.run.loop import run_operation  # noqa: E402
from tests.omx_down.realteam import real_team  # noqa: E402

PROTOCOL_MINIMUM_PER_PANE = 10


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


def one_run(workers: int, executor_mode: str = "control") -> dict[str, Any]:
    server = Server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            team, _, panes = real_team(server, cwd, "bench", workers + 1)
            names = tuple(f"worker-{i}" for i in range(2, workers + 2))
            env = {**os.environ, "PANEFLEET_STATE_DIR": str(cwd / "pf"), "PANEFLEET_TMUX_EXECUTOR": executor_mode}
            env.pop("TMUX", None)
            executor = Executor(env=env, tmux_socket=server.name)
            request = ScaleDownRequest(team="bench", cwd=str(cwd), env={"OMX_TEAM_SCALING_ENABLED": "1"},
                                       worker_names=names, force=True)
            start = time.perf_counter()
            done, journal, _ = run_operation("team.scale_down", request, executor, env=env, audit=False)
            wall = time.perf_counter() - start
            assert done.outcome.result == {"ok": True, "removedWorkers": list(names), "newWorkerCount": 1}, done
            assert server.live_panes() & set(panes[1:]) == set()
            sleeps = sum(e.step.ms for e in journal if isinstance(e.step, m.Sleep))
            summary = executor.tmux_summary() or {}
            return {"wall_s": wall, "tmux_calls": executor.calls.get("tmux", 0), "back_off_s": sleeps / 1000,
                    "steps": len(journal), "control_calls": summary.get("control_calls", 0)}
    finally:
        server.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--executor", choices=("control", "spawn"), default="control")
    args = parser.parse_args()
    runs = [one_run(args.workers, args.executor) for _ in range(args.runs)]
    walls = [r["wall_s"] for r in runs]
    calls = runs[0]["tmux_calls"]
    report = {
        "workers_removed": args.workers,
        "runs": args.runs,
        "executor": args.executor,
        "tmux_calls_via_control": runs[0]["control_calls"],
        "median_wall_s": round(statistics.median(walls), 3),
        "min_wall_s": round(min(walls), 3),
        "max_wall_s": round(max(walls), 3),
        "back_off_pause_s_per_run": max(r["back_off_s"] for r in runs),
        "tmux_calls": calls,
        "tmux_calls_per_removed_worker": calls / args.workers,
        "protocol_minimum_per_removed_worker": PROTOCOL_MINIMUM_PER_PANE,
        "steps_per_run": runs[0]["steps"],
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
