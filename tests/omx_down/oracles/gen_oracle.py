"""Regenerate ``tests/goldens/omx_down/oracle/*.json`` by running oh-my-codex 0.20.3 itself.

    .venv/bin/python -m tests.omx_down.oracles.gen_oracle /tmp/omx/package/dist

Needs node and the unpacked package; the test suite only reads the committed goldens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.omx_down.oracles.normalise import files, norm
from tests.omx_down.oracles.scenarios import ENV, SCENARIOS

HERE = Path(__file__).resolve().parent
GOLDENS = HERE.parents[1] / "goldens" / "omx_down" / "oracle"


def run(name: str, dist: str) -> dict[str, object]:
    scenario = SCENARIOS[name]
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp).resolve() / "work"
        cwd.mkdir()
        scenario["setup"](cwd)
        bindir = Path(tmp) / "bin"
        bindir.mkdir()
        (bindir / "tmux").write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'stub_tmux.py'} \"$@\"\n")
        (bindir / "tmux").chmod(0o755)
        state, log = Path(tmp) / "stub.json", Path(tmp) / "stub.log"
        state.write_text(json.dumps(scenario["stub"]))
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("OMX_")}, "OMX_RUNTIME_BRIDGE": "0",
               "PATH": f"{bindir}:{os.environ['PATH']}", "STUB_TMUX_STATE": str(state), "STUB_TMUX_LOG": str(log)}
        calls = []
        for call in scenario["calls"]:
            if "stub" in call:
                state.write_text(json.dumps(call["stub"]))
                continue
            log.write_text("")
            full = {**call, "team": scenario["team"], "cwd": str(cwd), "env": {**ENV, **call.get("env", {})}}
            out = subprocess.run(["node", str(HERE / "driver.mjs"), dist, json.dumps(full)], env=env,
                                 capture_output=True, text=True, timeout=120, cwd=cwd)
            assert out.returncode == 0, out.stderr
            result = json.loads(out.stdout.strip().splitlines()[-1])
            tmux = [json.loads(line) for line in log.read_text().splitlines()]
            calls.append({"fn": call["fn"], "result": norm(result, cwd), "tmux": tmux})
        return {"scenario": name, "calls": calls, "files_after": files(cwd)}


def main() -> None:
    dist = sys.argv[1]
    GOLDENS.mkdir(parents=True, exist_ok=True)
    for name in SCENARIOS:
        data = run(name, dist)
        (GOLDENS / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        print(name, [c["result"] for c in data["calls"]])


if __name__ == "__main__":
    main()
