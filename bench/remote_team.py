"""Benchmark: a team on another machine over OpenSSH against the same team on this one.

Starts a simulated host (OpenSSH's sshd in namespaces of its own, ``tests/hosts/sim.py``; needs root and
``openssh-server``), then runs the same programs twice (``tests/hosts/scenarios.py`` ``team_cost``): placed on
the host (``pure/on_host.py``: its tmux server, files, locks and tools there, over one master connection, one
tmux control client and one shell) and on this machine's own tmux server: ``team init``, a scale-up of
``--workers`` placeholder workers (each started, proven, tagged and given its trigger), then ``team status``
``--statuses`` times. Prints seconds, the host-over-here ratios and where the time went on the host, by kind of
step; run from the repository root:

    .venv/bin/python bench/remote_team.py [--workers 10] [--statuses 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hosts.sim import missing_prerequisites, run_scenario  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--statuses", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    missing = missing_prerequisites()
    if missing:
        raise SystemExit("cannot run: " + "; ".join(missing))
    result = run_scenario("team_cost", {"workers": args.workers, "statuses": args.statuses}, timeout_s=600)
    summary: dict[str, object] = {"workers": args.workers}
    for where in ("host", "here"):
        runs = result[where]
        failed = [name for name in ("init", "scale_up") if runs[name][0] != "ok"] + [
            "status" for status, _ in runs["status"] if status != "ok"]
        if failed:
            raise SystemExit(f"{where}: {', '.join(failed)} did not succeed: {runs}")
        summary[f"scale_up_{where}_s"] = round(runs["scale_up"][1], 2)
        summary[f"status_{where}_median_s"] = round(statistics.median(seconds for _, seconds in runs["status"]), 3)
    summary["scale_up_host_over_here"] = round(summary["scale_up_host_s"] / summary["scale_up_here_s"], 2)  # type: ignore[operator]
    summary["status_host_over_here"] = round(
        summary["status_host_median_s"] / summary["status_here_median_s"], 2)  # type: ignore[operator]
    spent = sorted(result["host"]["spent"].items(), key=lambda item: -item[1][1])[:6]
    summary["host_time_by_step"] = ", ".join(f"{kind} x{count} {seconds:.2f}s" for kind, (count, seconds) in spent)
    print(json.dumps(summary) if args.json else "\n".join(f"{key}: {value}" for key, value in summary.items()))


if __name__ == "__main__":
    main()
