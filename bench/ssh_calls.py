"""Benchmark: the cost of one call on another machine over OpenSSH, against the same call run locally.

Starts a simulated host (OpenSSH's sshd in namespaces of its own, ``tests/hosts/sim.py``; needs root and
``openssh-server``), then times ``shell/run/hosts.py`` ``call(host, ["true"])``: the first call (it opens
the master connection) and ``--calls`` more over that connection, each beside a local ``true`` run through
``shell/run/process.py`` and one through the shell a run keeps on the host (``hosts.start_shell``); a
4.6 KB file written on the host (``hosts.file_step``), in a session of its own and through that shell,
beside one written by the local executor; and ``tmux list-panes -a`` on the host's own tmux server, run over ssh per call
and sent through one control-mode client through the master (``hosts.tmux_client``); and the pure
teardown of one pane (``L S L kill L``) with its steps naming the host (``shell/run/remote.py``) against
the same on this machine's tmux server. Prints medians; run from the repository root:

    .venv/bin/python bench/ssh_calls.py [--calls 50] [--json]
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
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    missing = missing_prerequisites()
    if missing:
        raise SystemExit("cannot run: " + "; ".join(missing))
    result = run_scenario("call_cost", {"calls": args.calls}, timeout_s=300)
    summary = {"calls": args.calls, "first_call_ms": round(result["first_ms"], 1),
               "remote_call_median_ms": round(statistics.median(result["remote_ms"]), 2),
               "local_call_median_ms": round(statistics.median(result["local_ms"]), 2)}
    summary["remote_over_local"] = round(summary["remote_call_median_ms"] / summary["local_call_median_ms"], 2)
    summary["call_through_host_shell_median_ms"] = round(statistics.median(result["shell_ms"]), 2)
    summary["file_write_on_host_median_ms"] = round(statistics.median(result["write_remote_ms"]), 2)
    summary["file_write_through_host_shell_median_ms"] = round(statistics.median(result["write_shell_ms"]), 2)
    summary["file_write_local_median_ms"] = round(statistics.median(result["write_local_ms"]), 2)
    tmux = run_scenario("remote_tmux", {"calls": args.calls}, timeout_s=300)["servers"]["build1"]
    summary["tmux_list_panes_over_ssh_per_call_ms"] = round(tmux["per_call_ms"], 1)
    summary["tmux_list_panes_through_remote_control_client_ms"] = round(tmux["control_ms"], 2)
    routed = run_scenario("routed_cost", {"panes": min(args.calls, 40)}, timeout_s=300)
    summary["teardown_of_a_pane_on_the_host_median_ms"] = round(statistics.median(routed["build1"]), 2)
    summary["teardown_of_a_pane_here_median_ms"] = round(statistics.median(routed["local"]), 2)
    print(json.dumps(summary) if args.json else "\n".join(f"{key}: {value}" for key, value in summary.items()))


if __name__ == "__main__":
    main()
