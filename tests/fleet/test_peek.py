"""``panefleet team peek`` on a real tmux server with the placeholder agent (pure/omx/peek.py): the screen
after the pane proof, the agent's state, and refusals that read nothing."""

from __future__ import annotations

import json

import pytest

from tests.fleet.conftest import Fleet

pytestmark = [pytest.mark.tmux, pytest.mark.tmux_executors("control"), pytest.mark.timeout(120)]


def test_peek_shows_the_screen_after_the_proof(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    code, seen = fleet.json("team", "peek", "alpha", "worker-2", "-n", "3")
    assert code == 0 and seen["state"] == "ready" and seen["paneId"] == fleet.workers()["worker-2"][0], seen
    assert len(seen["lines"]) == 3 and any("received: Read" in line for line in seen["lines"]), seen
    text = fleet.run("team", "peek", "alpha", "worker-2")
    assert text.returncode == 0 and text.stdout.startswith(f"worker-2  pane {seen['paneId']}  placeholder  agent ready")
    assert "panefleet placeholder agent alpha/worker-2 ready" in text.stdout


def test_peek_refuses_an_unknown_worker_and_a_pane_not_proven(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    unknown = fleet.run("team", "peek", "alpha", "worker-9")
    assert unknown.returncode == 4 and "no worker worker-9" in unknown.stderr and "worker-1, worker-2" in unknown.stderr
    pane = fleet.workers()["worker-1"][0]
    fleet.server.cmd("set-option", "-p", "-t", pane, "@omx_team_pane_owner_id", "team:other")
    code, answer = fleet.json("team", "peek", "alpha", "worker-1")
    assert code == 4 and answer["error_code"] == "peek_pane_unproven", answer
    fleet.server.cmd("kill-pane", "-t", fleet.workers()["worker-2"][0])
    gone = fleet.run("team", "peek", "alpha", "worker-2")
    assert gone.returncode == 4 and "absent" in gone.stderr, gone.stderr
    assert json.loads(fleet.run("team", "peek", "alpha", "worker-1", "-n", "0", "-o", "json").stdout)["ok"] is False
