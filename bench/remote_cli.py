"""Benchmark: the command line with a team on another machine over OpenSSH against the same here.

Starts a simulated host (OpenSSH's sshd in namespaces of its own, ``tests/hosts/sim.py``; needs root and
``openssh-server``) and runs panefleet as a user does, each command a process of its own
(``tests/hosts/scenarios.py`` ``cli_cost``): ``team scale-up --count N`` of placeholder workers for a team here and
for a team on the host; then, for a fleet file of two teams of N/2 workers each, both here or one here and one
on the host, ``apply --yes`` and the median of ``--plans`` runs of ``plan`` (every team's status read, every
pane proven). Prints seconds and the host-over-here ratios; run from the repository root:

    .venv/bin/python bench/remote_cli.py [--workers 10] [--plans 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hosts.sim import missing_prerequisites, run_scenario  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--plans", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    missing = missing_prerequisites()
    if missing:
        raise SystemExit("cannot run: " + "; ".join(missing))
    result = run_scenario("cli_cost", {"workers": args.workers, "plans": args.plans}, timeout_s=900)
    summary: dict[str, float | int] = {"workers": args.workers, **{k: round(v, 2) for k, v in result.items()}}
    summary["scale_up_host_over_here"] = round(result["scale_up_host_s"] / result["scale_up_here_s"], 2)
    summary["fleet_apply_two_hosts_over_here"] = round(result["apply_two_hosts_s"] / result["apply_here_s"], 2)
    summary["fleet_plan_two_hosts_over_here"] = round(result["plan_two_hosts_s"] / result["plan_here_s"], 2)
    print(json.dumps(summary) if args.json else "\n".join(f"{key}: {value}" for key, value in summary.items()))


if __name__ == "__main__":
    main()
