"""Benchmark: ``team status`` of a team of N workers, each run a fresh CLI process, on a real private
tmux server; and ``panefleet --help``.

    .venv/bin/python bench/status.py [--workers 10] [--runs 15] [--executor control|spawn|both] [--cli PATH]

One team is built on a private server (``tmux -L pf-bench-<id>``): a leader pane and N worker panes
running ``sleep``, every one tagged with the team's owner id, so the status is healthy (exit 0) and
every worker's screen is read. Then, after one warm-up run, each run times a whole
``panefleet team status bench`` process (start-up, imports, the run, the audit log) and counts its
tmux calls from the run's audit log. Every run must print exactly what the first printed. The same
is done for ``panefleet --help``.

Each process starts as the installed ``panefleet`` command does (``from cli import main``, so its
bytecode is cached; ``python cli.py`` would compile ``cli.py`` every time). ``--executor`` sets
``PANEFLEET_TMUX_EXECUTOR`` (``both``: control, then spawn). ``--cli`` times another checkout's
``cli.py`` against the same team (e.g. an older commit unpacked with ``git archive``), for
before/after figures on one machine.

Prints one JSON object: median / min / max wall seconds of status per executor, its tmux calls (and
how many went through the control client), and the same wall figures for ``--help``.
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

from audit_calls import tmux_calls  # bench/audit_calls.py: this script's directory is on sys.path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import TmuxServer  # noqa: E402
from tests.omx_down.realteam import real_team  # noqa: E402

TEAM = "bench"
# What the installed console script runs, with the checkout first on sys.path.
ENTRY = "import sys; sys.path.insert(0, {root!r}); from cli import main; sys.exit(main())"


def figures(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4)}


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
    return time.perf_counter() - start, done


def status_runs(cli: list[str], env: dict[str, str], cwd: Path, runs: int) -> dict[str, Any]:
    cmd = [*cli, "team", "status", TEAM, "--cwd", str(cwd)]
    _, first = timed(cmd, env, cwd)
    assert first.returncode == 0, (first.returncode, first.stdout, first.stderr)
    walls = []
    for _ in range(runs):
        wall, done = timed(cmd, env, cwd)
        assert (done.returncode, done.stdout, done.stderr) == (0, first.stdout, first.stderr), done
        walls.append(wall)
    return {"wall_s": figures(walls), **tmux_calls(Path(env["PANEFLEET_STATE_DIR"]), "*team-status*.jsonl")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--executor", choices=("control", "spawn", "both"), default="both")
    parser.add_argument("--cli", default=str(ROOT / "cli.py"), help="the cli.py to time (default: this checkout's)")
    args = parser.parse_args()
    cli = [sys.executable, "-c", ENTRY.format(root=str(Path(args.cli).resolve().parent))]
    server = TmuxServer(f"pf-bench-{uuid.uuid4().hex[:8]}")
    report: dict[str, Any] = {"workers": args.workers, "runs": args.runs, "cli": args.cli}
    try:
        with tempfile.TemporaryDirectory(prefix="pf-bench-") as tmp:
            cwd = Path(tmp)
            _, leader, _ = real_team(server, cwd, TEAM, args.workers)
            server.cmd("set-option", "-p", "-t", leader, "@omx_team_pane_owner_id", f"team:{TEAM}")
            # PYTHONDONTWRITEBYTECODE dropped: the warm-up run caches the bytecode, as an installed CLI has it
            env = {k: v for k, v in os.environ.items()
                   if not k.startswith(("OMX_", "TMUX")) and k != "PYTHONDONTWRITEBYTECODE"}
            env.update({"PANEFLEET_TMUX_SOCKET": server.name, "PANEFLEET_STATE_DIR": str(cwd / "pf")})
            modes = ("control", "spawn") if args.executor == "both" else (args.executor,)
            for mode in modes:
                report[f"status_{mode}"] = status_runs(cli, {**env, "PANEFLEET_TMUX_EXECUTOR": mode}, cwd, args.runs)
            timed([*cli, "--help"], env, cwd)
            helps = [timed([*cli, "--help"], env, cwd)[0] for _ in range(args.runs)]
            report["help_wall_s"] = figures(helps)
    finally:
        server.kill()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
