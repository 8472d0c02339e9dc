"""Benchmark: the cost of one bounded tmux call through the shell executor.

Times ``--calls`` ``tmux list-panes -a`` calls (the proof snapshot) through ``Executor.execute`` on a
private tmux server (``tmux -L pf-bench-…``, killed afterwards), ``--rounds`` times, and prints the
per-call time. Every call runs under a deadline (``shell/run/deadlines.py``): ``--executor spawn`` spawns
``tmux`` in a session of its own per call; ``--executor control`` (the default, as for a run)
sends each through one control-mode client (``shell/run/tmux_control.py``). Run from the repository root:

    .venv/bin/python bench/calls.py [--calls 200] [--rounds 5] [--executor control|spawn] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pure import model as m  # noqa: E402
from pure import tmux as t  # noqa: E402
from shell.run.executor import Executor  # noqa: E402
from shell.run.process import run_process  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--executor", choices=("control", "spawn"), default="control")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        sys.stderr.write("tmux is not installed\n")
        return 1
    name = f"pf-bench-{uuid.uuid4().hex[:10]}"
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env["PANEFLEET_TMUX_EXECUTOR"] = args.executor
    executor = Executor(env=env, tmux_socket=name)
    step = t.list_panes_step()
    per_call: list[float] = []
    try:
        started = run_process("tmux", ("-L", name, "-f", "/dev/null", "new-session", "-d", "-s", "bench",
                                       "sleep 600"), env=env)
        if started.exit_code != 0:
            sys.stderr.write(f"could not start a private tmux server: {started.stderr}\n")
            return 1
        for _ in range(10):  # warm-up
            executor.execute(step)
        for _ in range(args.rounds):
            begin = time.perf_counter()
            for _ in range(args.calls):
                observed = executor.execute(step)
            per_call.append((time.perf_counter() - begin) * 1000 / args.calls)
            assert isinstance(observed, m.Proc) and observed.exit_code == 0, observed
        via = executor.tmux_summary()
    finally:
        executor.end_run()  # the control client is closed before its server is killed
        run_process("tmux", ("-L", name, "kill-server"), env=env)
        socket = Path(env.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / name
        socket.unlink(missing_ok=True)
    report = {"calls": args.calls, "rounds": args.rounds, "executor": args.executor, "tmux": via,
              "median_ms_per_call": round(statistics.median(per_call), 3),
              "min_ms_per_call": round(min(per_call), 3), "max_ms_per_call": round(max(per_call), 3)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{args.executor}: {args.rounds} rounds x {args.calls} `tmux list-panes -a` calls: median "
              f"{report['median_ms_per_call']} ms/call (min {report['min_ms_per_call']}, "
              f"max {report['max_ms_per_call']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
