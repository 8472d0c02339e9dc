"""docs/herdr-fleet.md: ensureWorkerWorkspace and openWorkerPane, end to end against the fake herdr."""

from __future__ import annotations

import pytest

from tests.herdr.conftest import World

TOKEN = {"conductor_workers": "alpha"}


def verbs(calls: list[list[str]]) -> list[str]:
    return [" ".join(c[2:4]) for c in calls]


# ------------------------------------------------------------------------------------------ ensure


def test_token_marked_workspace_is_reused_first_pane_anchors_and_is_remembered(world: World, goldens) -> None:
    wid, root = world.fake.plant_workspace("renamed-by-someone", tokens=TOKEN)
    second = world.fake.plant_pane(root)
    result = world.ensure(goldens=goldens, golden="ensure_token_reused")
    assert result == {"kind": "ready", "workspaceId": wid, "anchorPaneId": root}
    assert world.recorded() == [wid]
    assert world.pane_ids() == [root, second]
    assert verbs(world.mutations()) == []


def test_recorded_workspace_without_token_or_recorded_pane_is_not_reused_after_restart(world: World, goldens) -> None:
    """After a restart a workspace held by the record alone, with no pane panefleet recorded, cannot be
    told from a stranger's with our label that got the id reissued: it is left alone (owned.py
    ``prove_recorded``), and ensure makes a new one."""
    first = world.ensure()
    assert first["created"] is True
    world.fake.restart()
    world.fake.reset_calls()
    assert "tokens" not in world.fake.workspaces()[0] or world.fake.workspaces()[0]["tokens"] == {}
    again = world.ensure(goldens=goldens, golden="ensure_recorded_after_restart")
    assert again["created"] is True and again["workspaceId"] != first["workspaceId"]
    assert world.ws_ids() == [first["workspaceId"], again["workspaceId"]]
    assert not [c for c in world.mutations() if first["workspaceId"] in c[4:]]


def test_recorded_id_herdr_no_longer_lists_is_forgotten(world: World, goldens) -> None:
    world.store.remember("alpha", "w7")
    result = world.ensure(goldens=goldens, golden="ensure_forgets_vanished_record")
    assert result["created"] is True
    assert world.recorded() == [result["workspaceId"]]


def test_lookalike_label_without_token_is_ignored_and_a_new_workspace_created(world: World, goldens) -> None:
    lookalike, root = world.fake.plant_workspace("alpha-workers")
    result = world.ensure(goldens=goldens, golden="ensure_lookalike_ignored")
    assert result["created"] is True and result["workspaceId"] != lookalike
    assert lookalike in world.ws_ids() and root in world.pane_ids()
    assert not [c for c in world.mutations() if lookalike in c[4:] or root in c[4:]]


def test_duplicate_owned_workspaces_lowest_id_chosen_nothing_closed(world: World, goldens) -> None:
    w1, p1 = world.fake.plant_workspace("a", tokens=TOKEN)
    w2, _ = world.fake.plant_workspace("b", tokens=TOKEN)
    result = world.ensure(goldens=goldens, golden="ensure_duplicates_lowest")
    assert result == {"kind": "ready", "workspaceId": w1, "anchorPaneId": p1}
    assert sorted(world.ws_ids()) == sorted([w1, w2])
    assert world.mutations() == []
    assert world.recorded() == [w1, w2]


def _empty_owned_workspace(world: World) -> str:
    wid, _ = world.fake.plant_workspace("alpha-workers", tokens=TOKEN)
    with world.fake.edit() as state:
        ws = state["sessions"]["fleet"]["workspaces"][0]
        ws["tabs"] = []
    return wid


def test_discovered_workspace_with_no_panes_gets_a_tab_whose_root_anchors(world: World, goldens) -> None:
    wid = _empty_owned_workspace(world)
    result = world.ensure(goldens=goldens, golden="ensure_empty_workspace_tab")
    assert result == {"kind": "ready", "workspaceId": wid, "anchorPaneId": f"{wid}:p2"}
    assert verbs(world.mutations()) == ["tab create"]


@pytest.mark.parametrize(
    ("mode", "extra", "reason"),
    [
        ("error", {}, "herdr tab create failed: injected_failure: injected failure"),
        ("drop_field", {"path": "result.root_pane"}, "herdr tab create reported no root pane"),
    ],
)
def test_failed_tab_create_or_no_root_pane_is_unavailable(world: World, mode: str, extra: dict, reason: str,
                                                          goldens) -> None:
    _empty_owned_workspace(world)
    world.fake.fault("tab create", mode, **extra)
    assert world.ensure(goldens=goldens, golden=f"ensure_tab_create_{mode}") == {"kind": "unavailable",
                                                                                  "reason": reason}


@pytest.mark.parametrize("mode", ["error", "garble", "plain", "empty"])
def test_pane_list_failing_or_unreadable_is_unavailable(world: World, mode: str, goldens) -> None:
    world.fake.plant_workspace("alpha-workers", tokens=TOKEN)
    world.fake.fault("pane list", mode)
    result = world.ensure(goldens=goldens, golden=f"ensure_pane_list_{mode}")
    assert result["kind"] == "unavailable" and "pane list" in result["reason"]
    assert world.mutations() == []


def test_create_failure_is_unavailable_with_no_residue(world: World, goldens) -> None:
    world.fake.fault("workspace create", "error", code="workspace_create_failed", message="no pty")
    result = world.ensure(goldens=goldens, golden="ensure_create_fails")
    assert result == {"kind": "unavailable",
                      "reason": "herdr workspace create failed: workspace_create_failed: no pty"}
    assert world.ws_ids() == [] and world.recorded() == []


def test_create_answer_without_workspace_id_is_unavailable(world: World, goldens) -> None:
    world.fake.fault("workspace create", "drop_field", path="result.workspace.workspace_id")
    result = world.ensure(goldens=goldens, golden="ensure_create_no_workspace_id")
    # herdr made the workspace anyway: a fresh listing finds it by this attempt's label and it is closed.
    assert result == {"kind": "unavailable", "reason": "herdr workspace create reported no workspace id; "
                      "closed workspace w1, which herdr created anyway"}
    assert world.ws_ids() == [] and world.recorded() == []


@pytest.mark.parametrize("mode", ["garble", "empty", "not_json"])
def test_unreadable_create_answer_finds_and_closes_what_herdr_created(world: World, mode: str) -> None:
    lookalike, _ = world.fake.plant_workspace("alpha-workers")  # listed before: never touched
    world.start("r1")
    world.fake.fault("workspace create", mode)
    result = world.open("r1")
    assert result["kind"] == "unavailable" and "closed workspace w2, which herdr created anyway" in result["reason"]
    assert "residue" not in result
    assert world.ws_ids() == [lookalike] and world.recorded() == []
    # The next open starts clean and reuses no id it leaked.
    assert world.open("r1")["kind"] == "tracked"


def test_unreadable_create_answer_whose_workspace_cannot_be_closed_is_residue_reconcile_removes(
        world: World) -> None:
    world.start("r1", project="gamma")
    world.fake.fault("workspace create", "garble")
    world.fake.fault("workspace close", "error")
    result = world.open("r1")
    assert result["residue"] == ["w1"] and "stays recorded" in result["reason"]
    assert world.recorded("gamma") == ["w1"]
    world.settle("r1")
    outcomes = world.reconcile(managed=["gamma"])
    assert {"kind": "workspace-removed", "project": "gamma", "workspaceId": "w1"} in [
        {k: v for k, v in o.items() if k != "reason"} for o in outcomes]
    assert world.ws_ids() == [] and world.recorded("gamma") == []


def test_unreadable_create_answer_with_unreadable_relisting_claims_no_zero_residue(world: World) -> None:
    world.start("r1")
    world.fake.fault("workspace create", "garble")
    world.fake.fault("workspace list", "garble", skip=1)  # the re-listing after the create
    result = world.open("r1")
    assert result["kind"] == "unavailable" and "could not check for it" in result["reason"]
    assert result["residue"] == ["a alpha-workers workspace herdr may have created"]


def test_report_metadata_failure_closes_and_forgets_the_new_workspace(world: World, goldens) -> None:
    world.fake.fault("workspace report-metadata", "error", code="invalid_metadata_token", message="bad token")
    result = world.ensure(goldens=goldens, golden="ensure_mark_fails")
    assert result["kind"] == "unavailable" and "report-metadata" in result["reason"]
    assert world.ws_ids() == [] and world.recorded() == []
    assert verbs(world.mutations()) == ["workspace create", "workspace report-metadata", "workspace close"]


def test_create_answer_without_root_pane_closes_and_forgets(world: World, goldens) -> None:
    world.fake.fault("workspace create", "drop_field", path="result.root_pane")
    result = world.ensure(goldens=goldens, golden="ensure_create_no_root_pane")
    assert result == {"kind": "unavailable", "reason": "herdr workspace create reported no root pane"}
    assert world.ws_ids() == [] and world.recorded() == []


def test_success_creates_marks_and_records(world: World, goldens) -> None:
    result = world.ensure(goldens=goldens, golden="ensure_created")
    assert result == {"kind": "ready", "workspaceId": "w1", "anchorPaneId": "w1:p1", "created": True}
    assert world.recorded() == ["w1"]
    ws = world.fake.workspaces()[0]
    assert ws["tokens"] == {"conductor_workers": "alpha"} and ws["label"] == "alpha-workers"
    assert world.mutations()[0] == ["--session", "fleet", "workspace", "create", "--label", "alpha-workers",
                                    "--no-focus"]


# -------------------------------------------------------------------------------------------- open


def test_open_splits_with_explicit_anchor_and_orders_identity_before_display(world: World, goldens) -> None:
    world.start("run-0001-abcdef", issue=12, attempt=2, pid=4242)
    result = world.open("run-0001-abcdef", goldens=goldens, golden="open_created_workspace")
    label = "worker-alpha-12-a2-run-0001"
    assert result == {"ok": True, "kind": "tracked", "paneId": "w1:p2", "label": label, "pid": 4242, "workspaceId": "w1"}
    muts = world.mutations()
    assert verbs(muts) == ["workspace create", "workspace report-metadata", "pane split", "pane rename",
                           "pane report-agent-session", "pane run", "pane report-agent"]
    assert muts[2] == ["--session", "fleet", "pane", "split", "--pane", "w1:p1", "--direction", "down",
                       "--ratio", "0.3", "--no-focus"]
    assert muts[4][4:] == ["w1:p2", "--source", "panefleet", "--agent", label, "--agent-session-id",
                           "run-0001-abcdef"]
    assert muts[5][4:] == ["w1:p2", "panefleet", "herdr", "follow", "run-0001-abcdef"]
    assert muts[6][4:] == ["w1:p2", "--source", "panefleet", "--agent", label, "--state", "working"]
    assert world.store.run("run-0001-abcdef").pane_id == "w1:p2"
    pane = world.fake.pane("w1:p2")
    assert pane["label"] == label and pane["fg"][0]["name"] == "panefleet"


def test_split_never_follows_the_ui_focus(world: World) -> None:
    operator_ws, operator_pane = world.fake.plant_workspace("operator", process=["vim"])
    with world.fake.edit() as state:
        state["sessions"]["fleet"]["focus"] = operator_pane
    world.start("r1")
    world.open("r1")
    assert [p["pane_id"] for p in world.fake.panes() if p["workspace_id"] == operator_ws] == [operator_pane]


STEP_FAULTS = [
    ("pane split", "error", {}, "split"),
    ("pane split", "split_failed", {}, "split"),
    ("pane split", "drop_field", {"path": "result.pane.pane_id"}, None),
    ("pane rename", "error", {}, None),
    ("pane report-agent-session", "error", {}, None),
    ("pane run", "error", {}, None),
    ("pane report-agent", "error", {}, None),
]


@pytest.mark.parametrize(("verb", "mode", "extra", "phase"), STEP_FAULTS)
def test_open_failure_in_a_created_workspace_leaves_zero_residue(world: World, verb, mode, extra, phase,
                                                                  goldens) -> None:
    world.start("r1")
    world.fake.fault(verb, mode, **extra)
    result = world.open("r1", goldens=goldens, golden=f"open_fails_{verb.split()[1]}_{mode}_created")
    assert result["kind"] == "unavailable"
    assert result.get("phase") == phase
    assert world.ws_ids() == [] and world.pane_ids() == [] and world.recorded() == []
    assert world.store.run("r1").pane_id is None


@pytest.mark.parametrize(("verb", "mode", "extra", "phase"), STEP_FAULTS)
def test_open_failure_in_an_existing_workspace_closes_only_the_new_pane(world: World, verb, mode, extra,
                                                                          phase, goldens) -> None:
    wid, root = world.fake.plant_workspace("alpha-workers", tokens=TOKEN)
    world.start("r1")
    world.fake.fault(verb, mode, **extra)
    result = world.open("r1", goldens=goldens, golden=f"open_fails_{verb.split()[1]}_{mode}_existing")
    assert result["kind"] == "unavailable" and result.get("phase") == phase
    assert world.ws_ids() == [wid] and world.recorded() == [wid]
    assert not any(c[2:4] == ["workspace", "close"] for c in world.calls())
    if extra.get("path") == "result.pane.pane_id":
        # The split happened but its id is unknowable: the pane is an unidentified shell in
        # our workspace, and the next reconcile pass closes it.
        leaked = [p for p in world.pane_ids() if p != root]
        assert len(leaked) == 1
        outcomes = world.reconcile(managed=["alpha"])
        assert {"kind": "stale-released", "paneId": leaked[0], "runId": "", "cause": "unidentified"} in outcomes
    else:
        assert world.pane_ids() == [root]


def test_open_refuses_a_follower_argv_herdr_would_mangle_before_any_mutation(world: World) -> None:
    from pure.herdr import fleet

    world.start("r1")
    request = fleet.OpenRequest(session="fleet", run_id="r1", follower=("/opt/my tools/panefleet",))
    done, _ = world.op("herdr.open", request)
    assert done.outcome.result["kind"] == "unavailable"
    assert "unquoted" in done.outcome.result["reason"]
    assert world.calls() == []
    request = fleet.OpenRequest(session="fleet", run_id="r1", follower=("panefleet", "--session", "x"))
    done, _ = world.op("herdr.open", request)
    assert "--session" in done.outcome.result["reason"] and world.calls() == []


def test_open_refuses_unknown_and_settled_runs(world: World) -> None:
    assert world.open("nope")["kind"] == "unavailable"
    world.start("r1")
    world.settle("r1")
    assert "settled" in world.open("r1")["reason"]
    assert world.calls() == []


def test_open_twice_reuses_a_living_pane_and_replaces_a_dead_one(world: World, goldens) -> None:
    world.start("r1")
    first = world.open("r1")
    world.fake.reset_calls()
    again = world.open("r1", goldens=goldens, golden="open_reuses_living_pane")
    assert again == {**first, "reused": True, "pulse": "alive"}
    assert world.mutations() == []
    world.fake.kill_follower(first["paneId"])
    replaced = world.open("r1")
    assert replaced["kind"] == "tracked" and replaced["paneId"] not in (first["paneId"], "w1:p1")
    assert world.store.run("r1").pane_id == replaced["paneId"]
    # The dead pane (and the root shell) are junk now; reconcile folds them away.
    outcomes = world.reconcile()
    assert outcomes[0] == {"kind": "intact", "runId": "r1", "paneId": replaced["paneId"]}
    assert world.pane_ids() == [replaced["paneId"]]
