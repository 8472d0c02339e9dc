"""Regenerate ``tests/goldens/omx_up/oracle/*.json`` by running oh-my-codex 0.20.3's scaleUp itself.

    .venv/bin/python -m tests.omx_up.oracles.gen_oracle /tmp/omx/package/dist

Needs node and the unpacked package; the test suite only reads the committed goldens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.omx_up.oracles.normalise import files, norm
from tests.omx_up.oracles.scenarios import SCENARIOS, call, setup

HERE = Path(__file__).resolve().parent
GOLDENS = HERE.parents[1] / "goldens" / "omx_up" / "oracle"


def run(name: str, dist: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp).resolve() / "work"
        cwd.mkdir()
        setup(name, cwd)
        before = files(cwd)
        bindir = Path(tmp) / "bin"
        bindir.mkdir()
        (bindir / "tmux").write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'stub_tmux.py'} \"$@\"\n")
        (bindir / "tmux").chmod(0o755)
        scenario_file, state, log = Path(tmp) / "scenario.json", Path(tmp) / "state.json", Path(tmp) / "log"
        scenario_file.write_text(json.dumps(SCENARIOS[name]["stub"]))
        log.write_text("")
        request = call(name, cwd)
        env = {**{k: v for k, v in os.environ.items() if not k.startswith(("OMX_", "CODEX"))},
               "OMX_RUNTIME_BRIDGE": "0", "HOME": str(Path(tmp) / "home"), "SHELL": "/bin/bash",
               "PATH": f"{bindir}:/usr/bin:/bin", "STUB_SCENARIO": str(scenario_file), "STUB_STATE": str(state),
               "STUB_LOG": str(log)}
        out = subprocess.run(["node", str(HERE / "driver.mjs"), dist, json.dumps(request)], env=env,
                             capture_output=True, text=True, timeout=120, cwd=cwd)
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout.strip().splitlines()[-1])
        tmux = [json.loads(line) for line in log.read_text().splitlines()]
        after = files(cwd)
        read_after = None
        if SCENARIOS[name].get("read_after"):
            subprocess.run(["node", str(HERE / "driver.mjs"), dist, json.dumps({**request, "fn": "read"})],
                           env=env, capture_output=True, text=True, timeout=120, cwd=cwd, check=True)
            read_after = files(cwd)
        return {"scenario": name, "request": norm(request, cwd), "result": norm(result, cwd), "tmux": norm(tmux, cwd),
                "files_before": before, "files_after": after, "files_after_read": read_after,
                "node_path": norm(_node(), cwd)}


def _node() -> str:
    return subprocess.run(["node", "-e", "process.stdout.write(process.execPath)"], capture_output=True,
                          text=True, check=True).stdout


def main() -> None:
    dist = sys.argv[1]
    GOLDENS.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(SCENARIOS)
    for name in names:
        data = run(name, dist)
        (GOLDENS / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        print(name, data["result"])


if __name__ == "__main__":
    main()
