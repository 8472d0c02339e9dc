"""Demo steps for ``panefleet demo``: a scale-down, then a pane kept as debt and its report.

Runs after the scale-up demo steps (it needs at least two workers). The debt half simulates a
recycled pane: the worker's recorded pid is changed on disk, exactly what a pane whose process was
replaced looks like to the proof, so the scale-down refuses to kill it and records debt instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

Step = Callable[[str, str, object, Any], dict[str, Any]]


def _workers(workdir: str, team: str) -> list[dict[str, Any]]:
    from pure.omx.state import TeamPaths, resolve_state_root

    paths = TeamPaths(resolve_state_root(workdir, {}), team)
    try:
        with open(paths.manifest, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError):
        return []
    return [w for w in manifest.get("workers", []) if isinstance(w, dict)]


def _falsify_pid(workdir: str, team: str, worker: str) -> None:
    """Make the recorded pid stale in config and manifest (as a recycled pane would)."""
    from pure.omx.codec import render_json
    from pure.omx.state import TeamPaths, resolve_state_root

    paths = TeamPaths(resolve_state_root(workdir, {}), team)
    for path in (paths.config, paths.manifest):
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        for w in data.get("workers", []):
            if w.get("name") == worker and isinstance(w.get("pid"), int):
                w["pid"] = w["pid"] + 100_000
        tmp = path + ".demo-tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(render_json(data))
        os.replace(tmp, path)


def scale_down_demo(step: Step, team: str, workdir: str) -> None:
    from pure.omx.scale_down import DebtRequest, ScaleDownRequest
    from shell.cli.scale_down import render_debt, render_scale_down

    env = {"OMX_TEAM_SCALING_ENABLED": "1"}

    def render(result: dict[str, Any]) -> str:
        return render_scale_down(result, team)

    workers = _workers(workdir, team)
    if len(workers) < 2:
        step(f"panefleet team debt show {team}", "team.debt_show", DebtRequest(team=team, cwd=workdir),
             render_debt)
        return
    if len(workers) >= 3:
        last = workers[-1]["name"]
        step(f"panefleet team scale-down {team} --worker {last} --force", "team.scale_down",
             ScaleDownRequest(team=team, cwd=workdir, env=env, worker_names=(last,), force=True), render)
        workers = _workers(workdir, team)
    victim = workers[-1]["name"]
    _falsify_pid(workdir, team, victim)
    step(f"(simulate a recycled pane: {victim}'s recorded pid no longer matches)\n"
         f"$ panefleet team scale-down {team} --worker {victim} --force", "team.scale_down",
         ScaleDownRequest(team=team, cwd=workdir, env=env, worker_names=(victim,), force=True), render)
    step(f"panefleet team debt show {team}", "team.debt_show", DebtRequest(team=team, cwd=workdir), render_debt)
    step(f"panefleet team debt reconcile {team}", "team.debt_reconcile", DebtRequest(team=team, cwd=workdir),
         lambda r: "ok" if r.get("ok") else f"still refused: {r.get('error')} (the pane is left alive, as debt)")


DEMO_STEPS = [scale_down_demo]
