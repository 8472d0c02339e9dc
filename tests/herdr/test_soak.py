"""Convergence soak against the fake herdr (issue acceptance).

Three projects; runs started and settled at random; herdr restarted; followers killed; one operator
workspace and one lookalike-label workspace planted; one transient fault injected into most passes.
After every clean pass the invariants hold: exactly one living representation per live run with a
pid, no pane of a settled run, no empty or extra marked workspace, operator and lookalike untouched,
and pane/workspace counts that never accumulate. A second pass over the converged fleet performs no
herdr mutation.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from pure.herdr.fleet import pane_label
from tests.herdr.conftest import World

PROJECTS = ("alpha", "beta", "gamma")
CYCLES = 50
# Transient faults (times=1). A split *wall* is excluded on purpose: it spends the whole budget by
# design (phase "split") and is covered by its own scenario test.
FAULTS: list[tuple[str, str, dict[str, Any]]] = [
    ("pane rename", "error", {}),
    ("pane run", "error", {}),
    ("pane report-agent", "error", {}),
    ("pane report-agent-session", "error", {}),
    ("pane split", "drop_field", {"path": "result.pane.pane_id"}),
    ("pane split", "garble", {}),
    ("pane process-info", "pi_no_table", {}),
    ("pane process-info", "garble", {}),
    ("pane list", "garble", {}),
    ("workspace list", "error", {}),
    ("pane close", "error", {}),
    ("pane release-agent", "error", {}),
    ("workspace create", "error", {}),
    ("workspace report-metadata", "error", {}),
    ("tab create", "error", {}),
    ("pane run", "run_no_start", {}),
]


def snapshot_foreign(world: World, ids: set[str]) -> dict[str, Any]:
    # Processes are not compared: a herdr restart legitimately replaces every process.
    return {p["pane_id"]: (p["label"], p["workspace_id"]) for p in world.fake.panes()
            if p["workspace_id"] in ids}


def touched_foreign(world: World, foreign: dict[str, Any], foreign_ids: set[str]) -> list[list[str]]:
    names = set(foreign) | foreign_ids
    return [c for c in world.mutations() if names & set(c[4:])]


def owned_ids(world: World) -> set[str]:
    owned = {w["workspace_id"] for w in world.fake.workspaces()
             if w["tokens"].get("conductor_workers") in PROJECTS}
    for project in PROJECTS:
        owned |= set(world.recorded(project))
    return owned


def check_invariants(world: World, foreign_ids: set[str], foreign: dict[str, Any]) -> None:
    runs = world.store.runs()
    live = [r for r in runs if not r.settled and r.pid is not None]
    settled_labels = {pane_label(r.project, r.issue, r.attempt, r.run_id) for r in runs if r.settled}
    panes = world.fake.panes()
    owned = owned_ids(world)
    assert not owned & foreign_ids, "a foreign workspace became ours"
    owned_panes = [p for p in panes if p["workspace_id"] in owned]
    for run in live:
        label = pane_label(run.project, run.issue, run.attempt, run.run_id)
        mine = [p for p in owned_panes if p["label"] == label]
        assert len(mine) == 1, (run.run_id, mine)
        follower = mine[0]["fg"]
        assert follower and follower[0]["argv"][-1] == run.run_id and follower[0]["name"] == "panefleet"
        assert run.pane_id == mine[0]["pane_id"]
    assert not [p for p in owned_panes if p["label"] in settled_labels], "a settled run kept its pane"
    assert len(owned_panes) == len(live), "junk left in an owned workspace"
    projects_with_panes = {r.project for r in live}
    workspaces = world.fake.workspaces()
    assert len([w for w in workspaces if w["workspace_id"] in owned]) == len(projects_with_panes)
    assert all(w["tabs"] for w in workspaces), "an empty workspace"
    assert snapshot_foreign(world, foreign_ids) == foreign, "operator or lookalike touched"
    # Zero accumulation: everything herdr holds is a live representation or the planted foreign panes.
    assert len(panes) == len(live) + len(foreign)
    assert len(workspaces) == len(projects_with_panes) + len(foreign_ids)


@pytest.mark.slow
@pytest.mark.timeout(280)
def test_convergence_soak(tmp_path: Path) -> None:
    world = World(tmp_path, fast=True)
    rng = random.Random(20261130)
    op_ws, _ = world.fake.plant_workspace("operator", process=["vim", "notes.md"])
    look_ws, _ = world.fake.plant_workspace("alpha-workers", process=["panefleet", "herdr", "follow", "x"])
    foreign_ids = {op_ws, look_ws}
    foreign = snapshot_foreign(world, foreign_ids)
    next_run = 0
    restarts = kills = faults = 0
    for cycle in range(CYCLES):
        for _ in range(rng.randint(1, 3)):
            event = rng.random()
            live = [r for r in world.store.runs() if not r.settled]
            if event < 0.40 or not live:
                next_run += 1
                pid = None if rng.random() < 0.15 else 10_000 + next_run
                world.start(f"run-{next_run:04d}-{rng.randrange(16**6):06x}", project=rng.choice(PROJECTS),
                            issue=next_run, attempt=rng.randint(1, 3), pid=pid)
            elif event < 0.70:
                world.settle(rng.choice(live).run_id)
            elif event < 0.80:
                world.fake.restart()
                restarts += 1
            else:
                held = [p for p in world.fake.panes() if p["workspace_id"] in owned_ids(world) and p["fg"]]
                if held:
                    world.fake.kill_follower(rng.choice(held)["pane_id"])
                    kills += 1
        if rng.random() < 0.8:
            verb, mode, extra = rng.choice(FAULTS)
            world.fake.fault(verb, mode, **extra)
            faults += 1
        world.reconcile_raw(managed=PROJECTS)  # may fail or partly fail: it must never do harm
        assert snapshot_foreign(world, foreign_ids) == foreign
        assert touched_foreign(world, foreign, foreign_ids) == []
        world.fake.clear_faults()
        # One clean pass converges whatever the faulty pass left (a failed close, a leaked split).
        world.reconcile(managed=PROJECTS)
        check_invariants(world, foreign_ids, foreign)
        assert touched_foreign(world, foreign, foreign_ids) == []
        world.fake.reset_calls()
        outcomes = world.reconcile(managed=PROJECTS)
        assert world.mutations() == [], (cycle, outcomes)
        assert {o["kind"] for o in outcomes} <= {"intact", "untracked"}
        world.fake.reset_calls()
    world.close()
    assert restarts >= 3 and kills >= 3 and faults >= 30
