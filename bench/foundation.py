"""Foundation benchmarks (rerun: `.venv/bin/python bench/foundation.py`).

* parse + verdict over a 10,000-row pane table (target: < 20 ms on a 2-core machine);
* the teardown decision sequence for 100 panes (every decide step of a full run);
* CLI start-up: `panefleet --help` (target: < 100 ms), measured as whole processes.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pure import model as m  # noqa: E402
from pure import tmux as t  # noqa: E402
from pure.program import Driver  # noqa: E402


def timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def bench_parse() -> dict[str, float]:
    rows = "".join(f"%{i}\t{i % 7 == 0:d}\t{100000 + i}\n" for i in range(10_000))
    answer = m.Proc(exit_code=0, stdout=rows)
    samples = timed(lambda: t.verdict_from_answer("%9999", answer), 30)
    return {"median_ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples)}


def bench_teardown(n: int = 100) -> dict[str, float]:
    targets = tuple(t.TeardownTarget(pane_id=f"%{i}", pid=1000 + i) for i in range(n))
    req = t.TeardownRequest(targets=targets, owner_id="team:a")
    table = {f"%{i}": 1000 + i for i in range(n)}

    def run() -> int:
        live = dict(table)
        driver = Driver(lambda: t.teardown_program(req))
        steps = 0
        while True:
            decision = driver.decision()
            if isinstance(decision, m.Done):
                return steps
            step = decision.steps[0]
            steps += 1
            if isinstance(step, m.Run) and step.args[0] == "list-panes":
                obs: m.Observation = m.Proc(exit_code=0, stdout="".join(f"{p}\t0\t{pid}\n" for p, pid in live.items()))
            elif isinstance(step, m.Run) and step.args[0] == "show-option":
                obs = m.Proc(exit_code=0, stdout="team:a\n")
            elif isinstance(step, m.Run) and step.args[0] == "kill-pane":
                live.pop(step.args[-1])
                obs = m.Proc(exit_code=0)
            else:
                obs = m.Ack(ok=True)
            driver.feed(step, obs)

    steps = run()
    samples = timed(run, 10)
    return {"panes": n, "steps": steps, "median_ms": statistics.median(samples), "min_ms": min(samples),
            "max_ms": max(samples)}


def bench_cli_start() -> dict[str, float]:
    cli = str(Path(__file__).resolve().parents[1] / "cli.py")
    samples = []
    for _ in range(15):
        start = time.perf_counter()
        subprocess.run([sys.executable, cli, "--help"], capture_output=True, check=True)
        samples.append((time.perf_counter() - start) * 1000)
    bare = []
    for _ in range(15):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], capture_output=True, check=True)
        bare.append((time.perf_counter() - start) * 1000)
    return {"help_median_ms": statistics.median(samples), "bare_python_median_ms": statistics.median(bare)}


if __name__ == "__main__":
    print(json.dumps({"parse_10000_rows": bench_parse(), "teardown_decisions": bench_teardown(),
                      "cli_start": bench_cli_start()}, indent=2))
