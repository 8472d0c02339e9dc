"""Typed team state (pure/omx/records.py): fields read typed, every other key kept in its place."""

from __future__ import annotations

import json

import pytest
from attrs import evolve

from pure.omx import state as st
from pure.omx.codec import render_json
from pure.omx.records import (
    Claim,
    ConfigPatch,
    Member,
    Task,
    TeamConfig,
    from_json,
    membership,
    patch_json,
    to_json,
)

PATHS = st.TeamPaths("/s", "alpha")

WORKER_1 = {"name": "worker-1", "index": 1, "pane_id": "%1", "pid": 11, "x_tool": "keep me"}
CONFIG = {
    "name": "alpha", "vendor_note": {"kept": [1, 2]}, "task": "t", "workers": [WORKER_1],
    "worker_count": 1, "leader_pane_id": None, "config_generation": 3, "zz_last": True,
}


def test_a_record_renders_back_the_object_it_was_read_from_byte_for_byte() -> None:
    text = render_json(CONFIG)
    config = st.read_team_state(PATHS, text, None).unwrap().raw_config
    assert render_json(to_json(config)) == text
    assert config.workers[0].pane_id == "%1" and config.workers[0].pid == 11 and config.generation == 3


def test_a_change_keeps_every_key_in_its_place_and_appends_new_ones_in_declared_order() -> None:
    config = from_json(TeamConfig, CONFIG)
    grown = evolve(config, workers=(*config.workers, Member(name="worker-2", index=2, pane_id="%2", pid=22)),
                   worker_count=2, next_worker_index=3, leader_pane_pid=7)
    out = to_json(grown)
    assert list(out) == [*CONFIG, "leader_pane_pid", "next_worker_index"]  # the class's order, not the call's
    assert out["vendor_note"] == {"kept": [1, 2]} and out["leader_pane_id"] is None  # an explicit null stays
    assert out["workers"] == [WORKER_1, {"name": "worker-2", "index": 2, "pid": 22, "pane_id": "%2"}]


def test_none_leaves_an_absent_key_absent_and_a_present_key_null() -> None:
    member = from_json(Member, {"name": "worker-1", "index": 1, "pid": 5})
    assert to_json(evolve(member, pid=None)) == {"name": "worker-1", "index": 1, "pid": None}
    assert "pane_id" not in to_json(member)


def test_a_released_task_drops_owner_and_claim_as_oh_my_codex_does() -> None:
    raw = {"id": "1", "subject": "s", "description": "d", "status": "in_progress", "created_at": "c",
           "owner": "worker-1", "claim": {"owner": "worker-1", "token": "t", "x": 1}, "custom": "kept"}
    task = from_json(Task, raw)
    assert task.claim == Claim(owner="worker-1", token="t") and task.claim.held
    released = to_json(evolve(task, owner=None, claim=None, status="pending"))
    assert released == {"id": "1", "subject": "s", "description": "d", "status": "pending", "created_at": "c",
                        "custom": "kept"}
    assert to_json(task)["claim"] == {"owner": "worker-1", "token": "t", "x": 1}  # a nested record keeps its keys too
    assert not from_json(Task, {**raw, "claim": {}}).claim.held  # type: ignore[union-attr]


def test_normalized_task_defaults_dependencies_and_version() -> None:
    task = from_json(Task, {"id": "2", "subject": "s", "description": "d", "status": "pending", "created_at": "c",
                            "blocked_by": ["1"], "version": 0})
    assert (task.normalized().depends_on, task.normalized().version) == (("1",), 1)
    assert list(to_json(task.normalized())) == ["id", "subject", "description", "status", "created_at", "blocked_by",
                                                "version", "depends_on"]  # version in its place, depends_on new


def test_a_patch_writes_only_its_keys_in_place() -> None:
    text = json.dumps({"name": "alpha", "workers": [], "other": 1, "next_task_id": 4})
    patched = json.loads(patch_json(text, ConfigPatch(next_task_id=5, leader_pane_id="%3")))
    assert patched == {"name": "alpha", "workers": [], "other": 1, "next_task_id": 5, "leader_pane_id": "%3"}
    members = membership((Member(name="worker-1", index=1),), 2)
    assert members.items() == [("workers", [{"name": "worker-1", "index": 1}]), ("worker_count", 1),
                               ("next_worker_index", 2)]


@pytest.mark.parametrize("value", ["1", True, 1.0])
def test_a_value_the_checks_should_have_refused_is_never_converted(value: object) -> None:
    with pytest.raises(TypeError):
        from_json(Member, {"name": "worker-1", "index": value})
