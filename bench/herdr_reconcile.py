"""Benchmark: one reconcile pass over 20 projects × 10 runs against the fake herdr.

Reports the herdr call count and wall time of (1) the first pass, which builds the fleet, (2) a pass
over the converged fleet (the steady state: one ``workspace list``, one ``pane list`` per owned
workspace, one ``process-info`` per held pane, no mutation) and (3) a pass after a herdr restart
(every follower replaced). Run from the repository root:

    .venv/bin/python bench/herdr_reconcile.py [--projects 20] [--runs 10] [--executor sh|subprocess] [--repeat N]
                                              [--json]

``--repeat N`` times the converged pass N times (the median is reported; each must make the same calls).
The shell executor answers a pass's announced reads (its ``pane list`` and ``process-info`` calls,
``pure/program.py`` ``Ahead``) several at once; ``--sequential`` turns that off, for a before/after
comparison on one machine.

``--executor sh`` (default) is the production shell executor; ``subprocess`` isolates the fake's own
cost from ``sh``'s spawn overhead; ``inprocess`` answers herdr in-process (planning + store cost only).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.herdr.conftest import World  # noqa: E402


def measure(world: World, label: str, projects: list[str], repeat: int = 1) -> dict[str, object]:
    walls: list[float] = []
    counts: set[int] = set()
    for _ in range(repeat):
        world.fake.reset_calls()
        started = time.perf_counter()
        outcomes = world.reconcile(managed=projects)
        walls.append(time.perf_counter() - started)
        calls = world.calls()
        counts.add(len(calls))
    assert len(counts) == 1, f"the repeated passes made different numbers of calls: {sorted(counts)}"
    elapsed = statistics.median(walls)
    verbs = Counter(" ".join(c[2:4]) for c in calls)
    kinds = Counter(str(o["kind"]) for o in outcomes)
    return {
        "pass": label,
        "herdr_calls": len(calls),
        "mutations": len(world.mutations()),
        "wall_s": round(elapsed, 3),
        **({"wall_s_min": round(min(walls), 3), "wall_s_max": round(max(walls), 3), "repeat": repeat}
           if repeat > 1 else {}),
        "ms_per_call": round(1000 * elapsed / max(1, len(calls)), 1),
        "calls_by_verb": dict(sorted(verbs.items())),
        "outcomes": dict(sorted(kinds.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--projects", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10, help="live runs per project")
    parser.add_argument("--executor", choices=("sh", "subprocess", "inprocess"), default="sh")
    parser.add_argument("--repeat", type=int, default=1, help="converged passes timed (the median is reported)")
    parser.add_argument("--sequential", action="store_true", help="answer announced reads one by one")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="panefleet-bench-") as tmp:
        world = World(Path(tmp), mode=args.executor)
        if args.sequential:
            world.executor.read_ahead_most = 1
        projects = [f"proj{p:02d}" for p in range(args.projects)]
        for p, project in enumerate(projects):
            for r in range(args.runs):
                world.start(f"run-{p:02d}-{r:02d}", project=project, issue=100 + r, attempt=1, pid=20_000 + p * 100 + r)
        world.fake.configure(log_calls=True)
        results = [measure(world, "first (builds the fleet)", projects),
                   measure(world, "converged (steady state)", projects, args.repeat)]
        world.fake.restart()
        results.append(measure(world, "after herdr restart", projects))
        results.append(measure(world, "converged again", projects))
        world.close()
    expected = 1 + args.projects + args.projects * args.runs
    if args.json:
        print(json.dumps({"projects": args.projects, "runs_per_project": args.runs, "executor": args.executor,
                          "read_ahead": not args.sequential,
                          "minimum_steady_calls": expected, "passes": results}, indent=2))
    else:
        print(f"{args.projects} projects × {args.runs} runs, executor {args.executor}"
              f"{' (announced reads one by one)' if args.sequential else ''}; "
              f"protocol minimum for a converged pass: 1 + {args.projects} + {args.projects * args.runs}"
              f" = {expected} herdr calls")
        for r in results:
            print(f"  {r['pass']:<26} {r['herdr_calls']:>5} calls ({r['mutations']} mutations)  "
                  f"{r['wall_s']:>7.2f} s  {r['ms_per_call']:>5} ms/call  {r['outcomes']}")
    steady = results[1]
    return 0 if steady["herdr_calls"] == expected and steady["mutations"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
