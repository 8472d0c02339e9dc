"""What the benchmarks read back from a run's audit log (``shell/run/loop.py``): its tmux calls."""

from __future__ import annotations

import json
from pathlib import Path


def tmux_calls(state: Path, pattern: str) -> dict[str, int]:
    """The tmux calls of the newest audit log under ``state/audit`` matching ``pattern``, and how
    many of them went through the control client."""
    latest = max((state / "audit").glob(pattern), key=lambda p: p.stat().st_mtime_ns)
    calls = control = 0
    for line in latest.read_text().splitlines():
        record = json.loads(line)
        if record["type"] == "entry" and record["step"]["op"] == "run" and record["step"]["tool"] == "tmux":
            calls += 1
            control += record.get("tmux_via") == "control"
    return {"tmux_calls": calls, "through_control": control}
