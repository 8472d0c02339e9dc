"""The scale-down demo step names the demo's team in its hints (not the placeholder TEAM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shell.demo.scale_down import scale_down_demo
from tests.omx_up.fixtures import UpTeam


def test_scale_down_demo_hints_name_the_team(tmp_path: Path, monkeypatch: Any) -> None:
    team = UpTeam(tmp_path, "demo-team")
    (team.dir / "manifest.v2.json").write_text(
        (team.dir / "manifest.v2.json").read_text().replace('"workers": [', '"workers": [\n{"name": "worker-9", "index": 9},', 1))
    rendered: list[str] = []

    def step(title: str, op: str, request: object, render: Any) -> dict[str, Any]:
        if op == "team.scale_down":
            rendered.append(render({"ok": False, "error": "scale_down_cleanup_debt:%21:pane_pid_changed"}))
        return {}

    monkeypatch.setattr("shell.demo.scale_down._falsify_pid", lambda *_a: None)
    scale_down_demo(step, "demo-team", str(tmp_path))
    assert rendered
    for text in rendered:
        assert "panefleet team debt show demo-team" in text
        assert "TEAM" not in text
