"""The scale-down demo steps act on the demo's own team: each command names it (never a placeholder
TEAM), and the recycled pane it makes is the pane of the worker it then scales down."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shell.demo.scale_down import scale_down_demo
from tests.omx_up.fixtures import UpTeam


class Recorder:
    """Stands in for shell/demo/team.py's Transcript: records the commands, and a scale-down removes
    its worker from the manifest as the real one would."""

    def __init__(self, team: UpTeam) -> None:
        self.team = team
        self.workdir = str(team.cwd)
        self.commands: list[tuple[Any, ...]] = []

    def panefleet(self, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        self.commands.append(("panefleet", *args, env or {}))
        if args[:2] == ("team", "scale-down"):
            removed = args[args.index("--worker") + 1]
            manifest = self.team.manifest()
            manifest["workers"] = [w for w in manifest["workers"] if w["name"] != removed]
            (self.team.dir / "manifest.v2.json").write_text(json.dumps(manifest))
        return {}

    def outside_change(self, *args: str, why: str) -> None:
        self.commands.append(("tmux", *args))


def _with_workers(tmp_path: Path, *workers: tuple[str, str]) -> UpTeam:
    team = UpTeam(tmp_path, "demo-team")
    manifest = team.manifest()
    manifest["workers"] = [{"name": name, "index": i, "pane_id": pane} for i, (name, pane) in enumerate(workers, 1)]
    (team.dir / "manifest.v2.json").write_text(json.dumps(manifest))
    return team


def test_scale_down_demo_names_the_team_and_recycles_the_pane_it_scales_down(tmp_path: Path) -> None:
    team = _with_workers(tmp_path, ("worker-1", "%21"), ("worker-2", "%22"), ("worker-3", "%23"))
    run = Recorder(team)
    scale_down_demo(run, "demo-team")  # type: ignore[arg-type]
    scaling = {"OMX_TEAM_SCALING_ENABLED": "1"}
    assert run.commands == [
        ("panefleet", "team", "scale-down", "demo-team", "--worker", "worker-3", "--force", scaling),
        ("tmux", "respawn-pane", "-k", "-t", "%22", "sleep 100000"),
        ("panefleet", "team", "scale-down", "demo-team", "--worker", "worker-2", "--force", scaling),
        ("panefleet", "team", "debt", "show", "demo-team", {}),
        ("panefleet", "team", "debt", "reconcile", "demo-team", {}),
    ]


def test_with_fewer_than_two_workers_it_only_shows_the_debt(tmp_path: Path) -> None:
    run = Recorder(_with_workers(tmp_path, ("worker-1", "%21")))
    scale_down_demo(run, "demo-team")  # type: ignore[arg-type]
    assert run.commands == [("panefleet", "team", "debt", "show", "demo-team", {})]
