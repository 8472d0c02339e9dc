"""panefleet vs oh-my-codex 0.20.3: scale-up and scale-down of N workers, side by side in the same run.

    .venv/bin/python bench/vs_oh_my_codex.py --omx /tmp/omx/package [--runs 3] [--count 10] [--bridge]

``--omx`` is an unpacked oh-my-codex 0.20.3 package with its dependencies installed; panefleet does
not depend on it otherwise. To get one::

    mkdir -p /tmp/omx && cd /tmp/omx && npm pack oh-my-codex@0.20.3 && tar xzf oh-my-codex-0.20.3.tgz
    cd package && npm install --omit=dev

Both tools run with ``OMX_TEAM_SCALING_ENABLED=1`` and ``OMX_TEAM_SKIP_READY_WAIT=1`` (the
acceptance mode), each operation as a fresh process: panefleet as ``cli.py team scale-up|scale-down
… -o json``, oh-my-codex as ``node bench/omx_driver.mjs`` calling its own exported ``scaleUp`` /
``scaleDown`` (``dist/team/scaling.js``, as the differential tests' oracle drivers do) with
``OMX_RUNTIME_BRIDGE=0`` unless ``--bridge`` (the npm package ships no ``omx-runtime`` binary).

One cycle = one tool, one operation pair, on its own real private tmux server (``tmux -L
pf-bench-<random>``, killed afterwards; the user's server is never addressed) and its own fresh
team directory and ``HOME``: a leader pane in a 400x4000 window (scale-up never relayouts, so ten
chained ``split-window -v`` need tall room), ``panefleet team init`` (oh-my-codex 0.20.3's state
format) and an untimed ``panefleet team scale-up --count 1`` so the chain splits from a worker. So
both tools start from the same team state. Then, timed as whole processes: the tool's scale-up of
``--count`` workers, then its ``--force`` scale-down of exactly those workers. After each, the
private server's pane list must show the change (for oh-my-codex this proves its plain ``tmux``
calls reached the private server, routed there by ``TMUX=<socket path>,<server pid>,0``).

The worker CLI is ``codex`` for both, resolved on ``PATH`` to a quiet stand-in written by the
bench (terminal echo off, prints one line, swallows its input, never exits): oh-my-codex checks the
pane after typing its trigger and retries the submit (seconds per worker) while the typed text is
still on screen, as it would be with an echoing program; a real agent consumes it.

The team's dispatch policy (``manifest.v2.json`` ``policy.dispatch_mode``) is ``transport_direct``
unless ``--dispatch-mode hook_preferred_with_fallback`` (oh-my-codex's default): there oh-my-codex
first waits ``dispatch_ack_timeout_ms`` (2 s) per worker for a receipt from a worker-side hook,
which no stand-in writes, and panefleet by design does not wait (``pure/omx/dispatch.py``).

tmux calls are counted with a PATH shim (``tmux`` that appends its argv to a log and execs the real
tmux). Each run index has four interleaved cycles, the order alternating between runs: panefleet
and oh-my-codex without the shim (the wall times and ratios), and both again with it (the counts;
their wall times are reported as ``wall_ms_with_shim``). For panefleet the shim counts tmux
*processes* (its control-mode client sends many commands through one); its tmux *commands* come
from its audit log (its one control client shows as ``attach-session`` in ``tmux_processes_by_command``).
Prints one JSON object (progress on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from audit_calls import tmux_calls  # bench/audit_calls.py: this script's directory is on sys.path

ROOT = Path(__file__).resolve().parents[1]
# Started as the installed ``panefleet`` command starts (``from cli import main``), so that cli.py's
# bytecode is cached as it is for a user, not compiled afresh as a script would be.
CLI = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); from cli import main; sys.exit(main())"]
DRIVER = ROOT / "bench" / "omx_driver.mjs"
TEAM = "bench"
TOOLS = ("panefleet", "oh-my-codex")
DISPATCH_MODES = ("transport_direct", "hook_preferred_with_fallback")
OPS = (("scale_up", "up"), ("scale_down", "down"))
MARK = "\x1e"  # starts each record of the shim's log (an argv may contain newlines)

STAND_IN = """#!/bin/sh
# bench stand-in for the codex CLI: no terminal echo, one line, swallows what is typed, never exits
stty -echo 2>/dev/null
printf 'bench agent %s ready\\n' "${OMX_TEAM_WORKER:-worker}"
exec cat >/dev/null
"""


def shim_text(real_tmux: str) -> str:
    return f"#!/bin/sh\nprintf '{MARK}%s\\n' \"$*\" >> \"$PF_BENCH_TMUX_LOG\"\nexec {real_tmux} \"$@\"\n"


def tmux(socket: str, *args: str) -> str:
    done = subprocess.run(["tmux", "-L", socket, *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def panes(socket: str) -> list[str]:
    return tmux(socket, "list-panes", "-a", "-F", "#{pane_id} #{pane_dead} #{pane_pid}").splitlines()


def run_json(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, dict[str, Any], str]:
    """Run one fresh process; its wall time, the JSON object of its last stdout line, and its stderr."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    wall = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        result = {"unparsed_stdout": done.stdout[-2000:]}
    result.setdefault("_exit", done.returncode)
    return wall, result, done.stderr


def shim_calls(log: Path) -> dict[str, Any]:
    """Calls logged by the shim: how many, and how many per tmux command (global flags skipped)."""
    records = [r for r in log.read_text().split(MARK) if r.strip()] if log.exists() else []
    verbs: Counter[str] = Counter()
    for record in records:
        words = record.split()
        while words and words[0].startswith("-") and words[0] != "-V":
            words = words[2:] if words[0] in ("-L", "-S", "-f", "-T") else words[1:]
        verbs[words[0] if words else "?"] += 1
    return {"calls": len(records), "by_command": dict(sorted(verbs.items(), key=lambda kv: (-kv[1], kv[0])))}


class Bench:
    """The shared stand-ins and settings; :meth:`cycle` runs one tool's scale-up and scale-down."""

    def __init__(self, omx: Path, count: int, bridge: bool, dispatch_mode: str, root: Path) -> None:
        self.omx, self.count, self.bridge, self.dispatch_mode = omx, count, bridge, dispatch_mode
        self.root, self.bin, self.shim = root, root / "bin", root / "shim"
        real_tmux, node = shutil.which("tmux"), shutil.which("node")
        if real_tmux is None or node is None:
            raise SystemExit("tmux and node must be on PATH")
        self.node = node
        scripts = ((self.bin, "codex", STAND_IN), (self.shim, "tmux", shim_text(real_tmux)))
        for directory, name, text in scripts:
            directory.mkdir()
            (directory / name).write_text(text)
            (directory / name).chmod(0o755)
        self.base_env = {k: v for k, v in os.environ.items()
                         if not k.startswith(("OMX_", "TMUX", "PANEFLEET_", "CODEX", "PF_BENCH_"))
                         and k != "PYTHONDONTWRITEBYTECODE"}  # timed with bytecode cached, as installed
        self.added = [f"worker-{i}" for i in range(2, count + 2)]

    def setup(self, socket: str, work: Path, env: dict[str, str]) -> list[str]:
        """The private server, its leader pane and the one-worker team (panefleet, untimed)."""
        tmux(socket, "-f", "/dev/null", "new-session", "-d", "-s", "lead", "-x", "400", "-y", "4000",
             "sleep 100000")
        leader = tmux(socket, "list-panes", "-a", "-F", "#{pane_id}")
        init = ["team", "init", TEAM, "--leader-pane", leader, "--worker-cli", "codex"]
        _, done, err = run_json([*CLI, *init, "--cwd", str(work), "-o", "json"], env, work)
        assert done.get("ok"), (init, done, err)
        manifest_path = work / ".omx" / "state" / "team" / TEAM / "manifest.v2.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["policy"]["dispatch_mode"] = self.dispatch_mode
        manifest_path.write_text(json.dumps(manifest, indent=2))
        first = ["team", "scale-up", TEAM, "--count", "1"]
        _, done, err = run_json([*CLI, *first, "--cwd", str(work), "-o", "json"], env, work)
        assert done.get("ok"), (first, done, err)
        before = panes(socket)
        assert len(before) == 2, before
        return before

    def commands(self, tool: str, work: Path) -> tuple[list[str], list[str]]:
        """The scale-up and scale-down command lines of ``tool``."""
        if tool == "panefleet":
            tail = ["--cwd", str(work), "-o", "json"]
            workers = [a for name in self.added for a in ("--worker", name)]
            return ([*CLI, "team", "scale-up", TEAM, "--count", str(self.count), *tail],
                    [*CLI, "team", "scale-down", TEAM, "--force", *workers, *tail])
        driver = [self.node, str(DRIVER), str(self.omx)]
        return ([*driver, "up", TEAM, str(work), str(self.count)],
                [*driver, "down", TEAM, str(work), *self.added])

    def cycle(self, tool: str, counted: bool) -> dict[str, Any]:
        socket = f"pf-bench-{uuid.uuid4().hex[:8]}"
        work = Path(tempfile.mkdtemp(prefix="cycle-", dir=self.root)).resolve()
        state, home, log = work / ".pf-state", work / "home", work / "tmux-calls.log"
        home.mkdir()
        env = {**self.base_env, "HOME": str(home), "SHELL": "/bin/bash",
               "PATH": f"{self.bin}:{self.base_env.get('PATH', '/usr/bin:/bin')}",
               "OMX_TEAM_SCALING_ENABLED": "1", "OMX_TEAM_SKIP_READY_WAIT": "1",
               "PANEFLEET_TMUX_SOCKET": socket, "PANEFLEET_STATE_DIR": str(state)}
        try:
            before = self.setup(socket, work, env)
            if tool == "oh-my-codex":  # its plain `tmux` calls reach the private server through $TMUX
                env = {k: v for k, v in env.items() if not k.startswith("PANEFLEET_")}
                server = tmux(socket, "display", "-p", "#{socket_path},#{pid}")
                env["TMUX"] = f"{server},0"
                if not self.bridge:
                    env["OMX_RUNTIME_BRIDGE"] = "0"
            if counted:
                env = {**env, "PATH": f"{self.shim}:{env['PATH']}", "PF_BENCH_TMUX_LOG": str(log)}
            up_argv, down_argv = self.commands(tool, work)

            up_wall, up, err = run_json(up_argv, env, work)
            added = up.get("addedWorkers") or []
            assert up.get("ok") and [w.get("name") for w in added] == self.added, (tool, up, err[-2000:])
            listed = panes(socket)
            # exactly the reported panes, live with the reported pids, are on the private server
            expected = before + [f"{w['pane_id']} 0 {w['pid']}" for w in added]
            assert sorted(listed) == sorted(expected), (tool, listed, expected)
            up_calls = shim_calls(log)
            log.unlink(missing_ok=True)

            down_wall, down, err = run_json(down_argv, env, work)
            assert down.get("ok") and down.get("removedWorkers") == self.added, (tool, down, err[-2000:])
            assert panes(socket) == before, (tool, panes(socket), before)
            down_calls = shim_calls(log)
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
            sockets = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}"
            (sockets / socket).unlink(missing_ok=True)
        out: dict[str, Any] = {"up_ms": up_wall * 1000, "down_ms": down_wall * 1000,
                               "up_shim": up_calls, "down_shim": down_calls}
        if tool == "panefleet":
            out["up_commands"] = tmux_calls(state, "*scale_up*.jsonl")["tmux_calls"]
            out["down_commands"] = tmux_calls(state, "*scale_down*.jsonl")["tmux_calls"]
        shutil.rmtree(work, ignore_errors=True)
        return out


def stats(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values)), "min": round(min(values)), "max": round(max(values))}


Samples = list[dict[str, Any]]


def summarize(tool: str, key: str, timed: Samples, counted: Samples) -> dict[str, Any]:
    shim = [s[f"{key}_shim"] for s in counted]
    processes = stats([s["calls"] for s in shim])
    calls = stats([s[f"{key}_commands"] for s in timed + counted]) if tool == "panefleet" else processes
    walls = [s[f"{key}_ms"] for s in timed]
    return {"wall_ms": stats(walls), "wall_ms_runs": [round(w) for w in walls],
            "wall_ms_with_shim": stats([s[f"{key}_ms"] for s in counted]),
            "tmux_calls": calls, "tmux_processes": processes,
            "tmux_processes_by_command": shim[0]["by_command"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--omx", type=Path, required=True,
                        help="unpacked oh-my-codex 0.20.3 package directory")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--bridge", action="store_true", help="leave oh-my-codex's runtime bridge on")
    parser.add_argument("--dispatch-mode", choices=DISPATCH_MODES, default=DISPATCH_MODES[0],
                        help="the team's manifest policy.dispatch_mode (default: %(default)s)")
    args = parser.parse_args(argv)
    omx = args.omx.resolve()
    if not (omx / "dist" / "team" / "scaling.js").exists():
        parser.error(f"{omx} has no dist/team/scaling.js")
    version = json.loads((omx / "package.json").read_text()).get("version")
    root = Path(tempfile.mkdtemp(prefix="pf-bench-vs-omx-")).resolve()
    timed: dict[str, Samples] = {t: [] for t in TOOLS}
    counted: dict[str, Samples] = {t: [] for t in TOOLS}
    try:
        bench = Bench(omx, args.count, args.bridge, args.dispatch_mode, root)
        order = [(t, False) for t in TOOLS] + [(t, True) for t in reversed(TOOLS)]
        for index in range(args.runs):
            for tool, with_shim in order if index % 2 == 0 else order[::-1]:
                sample = bench.cycle(tool, with_shim)
                (counted if with_shim else timed)[tool].append(sample)
                sys.stderr.write(f"run {index + 1}/{args.runs} {tool}{' (shim)' if with_shim else ''}: "
                                 f"up {sample['up_ms']:.0f} ms, down {sample['down_ms']:.0f} ms\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report: dict[str, Any] = {
        "count": args.count, "runs": args.runs, "oh_my_codex_version": version,
        "dispatch_mode": args.dispatch_mode,
        "env": {"OMX_TEAM_SKIP_READY_WAIT": "1", "OMX_TEAM_SCALING_ENABLED": "1",
                "OMX_RUNTIME_BRIDGE": "(unset)" if args.bridge else "0"},
        "tmux_counting": "PATH shim (logs, execs the real tmux) in separate interleaved cycles; wall_ms from "
                         "cycles without it; panefleet's tmux_calls from its audit log",
    }
    for tool in TOOLS:
        report[tool] = {op: summarize(tool, key, timed[tool], counted[tool]) for op, key in OPS}
    report["ratio_panefleet_over_oh_my_codex"] = {}
    for op, key in OPS:
        pairs = zip(timed["panefleet"], timed["oh-my-codex"], strict=True)
        paired = [p[f"{key}_ms"] / o[f"{key}_ms"] for p, o in pairs]
        medians = (report["panefleet"][op]["wall_ms"]["median"]
                   / report["oh-my-codex"][op]["wall_ms"]["median"])
        report["ratio_panefleet_over_oh_my_codex"][op] = {
            "of_medians": round(medians, 3), "per_run": [round(r, 3) for r in paired],
            "worst_run": round(max(paired), 3), "each_run_at_most_1_10": max(paired) <= 0.1}
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
