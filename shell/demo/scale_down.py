"""Demo steps for ``panefleet demo``: a scale-down, then a pane kept as debt and its report.

Runs after the scale-up demo steps (it needs at least two workers). The debt half makes a recycled
pane for real: ``tmux respawn-pane -k`` replaces the worker's process, so its pane (same id, same owner
tag) now runs another pid than the one pinned when it was created, the proof fails, and the scale-down
refuses to kill it and records debt instead.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shell.demo.team import Transcript

SCALING = {"OMX_TEAM_SCALING_ENABLED": "1"}


def _workers(workdir: str, team: str) -> list[dict[str, Any]]:
    from pure.omx.state import TeamPaths, resolve_state_root

    paths = TeamPaths(resolve_state_root(workdir, {}), team)
    try:
        with open(paths.manifest, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError):
        return []
    return [w for w in manifest.get("workers", []) if isinstance(w, dict)]


def scale_down_demo(run: Transcript, team: str) -> None:
    workers = _workers(run.workdir, team)
    if len(workers) >= 3:
        run.panefleet("team", "scale-down", team, "--worker", workers[-1]["name"], "--force", env=SCALING)
        workers = _workers(run.workdir, team)
    if len(workers) < 2 or not isinstance(workers[-1].get("pane_id"), str):
        run.panefleet("team", "debt", "show", team)
        return
    victim, pane = workers[-1]["name"], workers[-1]["pane_id"]
    run.outside_change("respawn-pane", "-k", "-t", pane, "sleep 100000",
                       why=f"simulate a recycled pane: {victim}'s pane {pane} now runs another process than the one "
                           "panefleet pinned")
    run.panefleet("team", "scale-down", team, "--worker", victim, "--force", env=SCALING)
    run.panefleet("team", "debt", "show", team)
    run.panefleet("team", "debt", "reconcile", team)


DEMO_STEPS = [scale_down_demo]
