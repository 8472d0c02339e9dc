"""Runs on a saved herdr machine (herdr 0.9.1 ``--machine``; docs/herdr-fleet.md, "Saved machines").

Through the real command line with the fake on PATH (as tests/herdr/test_cli.py), plus the fake's own
model of machines and dropped connections (tests/herdr/fake_herdr/fake.py, "saved machines").
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.herdr.conftest import World
from tests.herdr.fake_herdr.fake import FakeHerdr
from tests.herdr.test_cli import Panefleet

M = "build-box"


@pytest.fixture
def pf(world: World) -> Panefleet:
    return Panefleet(world)


@pytest.fixture
def remote(world: World) -> FakeHerdr:
    world.fake.add_machine(M, host="build.example")
    return world.fake.on_machine(M)


def start(pf: Panefleet, run_id: str, issue: int, *where: str) -> None:
    done = pf("run", "start", "--project", "alpha", "--issue", str(issue), "--attempt", "1", "--run-id", run_id,
              "--pid", "4242", *where)
    assert done.returncode == 0, done.stderr


def machine_calls(world: World) -> list[list[str]]:
    return [c for c in world.calls() if c[:1] != ["machine"]]


def assert_converged(pf: Panefleet, remote: FakeHerdr, live: list[str]) -> None:
    """One workspace of ours on the machine, exactly one labelled pane per live run and nothing else,
    and a further pass that changes nothing."""
    ours = [w for w in remote.workspaces() if w["label"] == "alpha-workers"]
    panes = [p for w in ours for t in w["tabs"] for p in t["panes"]]
    if not live:
        assert ours == []
        return
    assert len(ours) == 1, ours
    labels = sorted(str(p["label"]) for p in panes)
    assert len(panes) == len(live) and all(label.startswith("worker-alpha-") for label in labels), labels
    again = pf.json("reconcile", "--machine", M)
    assert [o["kind"] for o in again["outcomes"]] == ["intact"] * len(live), again


# ------------------------------------------------------------------------------------------ the fake


def test_the_fake_keeps_a_server_per_machine_and_refuses_machine_with_session(world: World,
                                                                               remote: FakeHerdr) -> None:
    listed = json.loads(world.fake.call(["machine", "list"])[1])["result"]["machines"]
    assert [(m["label"], m["host"]) for m in listed] == [(M, "build.example")]
    code, out, _ = world.fake.call(["--machine", M, "workspace", "create", "--label", "x", "--no-focus"])
    assert code == 0 and [w["label"] for w in remote.workspaces()] == ["x"] and world.fake.workspaces() == []
    by_id = listed[0]["machine_id"]
    assert world.fake.call(["--machine", by_id, "workspace", "list"])[0] == 0  # a label or an id
    code, _, err = world.fake.call(["--machine", M, "--session", "fleet", "workspace", "list"])
    assert code == 2 and "cannot be used with '--session" in err
    code, _, err = world.fake.call(["--machine", "nowhere", "workspace", "list"])
    assert code == 1 and json.loads(err)["error"]["code"] == "machine_not_found"


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_dropped_connection_answers_machine_unreachable_applied_or_not(world: World, remote: FakeHerdr,
                                                                         when: str) -> None:
    world.fake.drop_connection(M, times=2, when=when, verb="workspace create")
    assert world.fake.call(["--machine", M, "workspace", "list"])[0] == 0  # before the first create: reached
    for _ in range(2):
        code, out, err = world.fake.call(["--machine", M, "workspace", "create", "--label", "x", "--no-focus"])
        assert (code, out, json.loads(err)["error"]["code"]) == (1, "", "machine_unreachable")
    # only the first can have been applied (after), the second never reached the server
    assert len(remote.workspaces()) == (1 if when == "after" else 0)
    assert world.fake.call(["--machine", M, "workspace", "list"])[0] == 0  # the connection is back
    assert world.fake.workspaces() == []  # never the local server


# ---------------------------------------------------------------------------------- the command line


def test_a_machine_run_opens_follows_and_closes_its_panes_through_machine(pf: Panefleet, world: World,
                                                                           remote: FakeHerdr) -> None:
    local, _ = world.fake.plant_workspace("alpha-workers", {"conductor_workers": "alpha"})  # the same project here
    start(pf, "run-m-1", 5, "--machine", M)
    start(pf, "run-m-2", 6, "--machine", M)
    listed = pf.json("run", "list", "--machine", M)
    assert [(r["run_id"], r["machine"], r["session"]) for r in listed["runs"]] == [
        ("run-m-1", M, ""), ("run-m-2", M, "")]
    assert pf.json("run", "list")["runs"] == []  # the local session's runs are another set
    assert f"machine {M}" in pf("run", "list", "--machine", M).stdout
    world.fake.reset_calls()

    opened = pf.json("reconcile", "--machine", M)
    assert [o["kind"] for o in opened["outcomes"]] == ["reassociated", "reassociated", "stale-released"]
    status = pf.json("status", "--machine", M)
    assert status["machine"] == M and [r["pulse"] for r in status["runs"]] == ["alive", "alive"]
    assert pf("status", "--machine", M).stdout.startswith(f"herdr machine {M}: 2 live runs")
    assert pf("run", "settle", "run-m-1").returncode == 0
    closed = pf.json("reconcile", "--machine", M)
    assert sorted(o["kind"] for o in closed["outcomes"]) == ["intact", "stale-released"]
    retired = pf.json("retire", "run-m-2", "--machine", M)
    assert retired["kind"] == "released"
    assert pf("run", "settle", "run-m-2").returncode == 0
    assert pf.json("reconcile", "--machine", M, "--managed", "alpha")["ok"] is True

    calls = machine_calls(world)
    assert calls and all(c[:2] == ["--machine", M] and "--session" not in c for c in calls), calls
    verbs = {tuple(c[2:4]) for c in calls}
    assert {("workspace", "create"), ("pane", "split"), ("pane", "run"), ("pane", "close")} <= verbs
    assert remote.workspaces() == []  # everything it opened there is gone
    assert [w["workspace_id"] for w in world.fake.workspaces()] == [local]  # the local herdr was never asked
    assert world.store.recorded(["alpha"], "", M) == {"alpha": []}


def test_machine_and_session_together_are_a_usage_error(pf: Panefleet, world: World, remote: FakeHerdr) -> None:
    for args in (("reconcile",), ("status",), ("open", "r1"), ("retire", "r1"), ("run", "list"),
                 ("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1")):
        done = pf(*args, "--machine", M, "--session", "fleet", "-o", "json")
        assert done.returncode == 2, (args, done)
        answer = json.loads(done.stdout)
        assert answer["error_code"] == "usage_error" and "--machine cannot be combined with --session" in answer["error"]
    assert pf("reconcile", "--machine", "-x").returncode == 2
    assert world.calls() == [] and world.store.runs() == []


def test_a_machine_run_is_refused_from_the_local_session_and_back(pf: Panefleet, world: World,
                                                                   remote: FakeHerdr) -> None:
    start(pf, "run-m-1", 5, "--machine", M)
    refused = pf("open", "run-m-1")
    assert refused.returncode == 4 and f"belongs to herdr machine '{M}'" in refused.stderr
    start(pf, "run-l-1", 6)
    refused = pf("open", "run-l-1", "--machine", M)
    assert refused.returncode == 4 and "belongs to herdr session 'fleet'" in refused.stderr
    again = pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "run-m-1")
    assert again.returncode == 4 and f"in herdr machine '{M}'" in again.stderr  # one run, one place
    assert world.calls() == []


# A dropped SSH connection mid-pass: (the call it starts at, how many calls it lasts, whether the first of
# them was applied). Whatever the pass could not prove it leaves (as debt, or to the next pass's
# listing); the next pass converges with no duplicate and nothing leaked.
DROPS = [
    ("workspace create", 1, "before"), ("workspace create", 1, "after"),
    ("workspace report-metadata", 2, "after"),
    ("pane split", 1, "before"), ("pane split", 1, "after"), ("pane split", 3, "after"),
    ("pane rename", 2, "after"), ("pane run", 1, "after"),
    ("pane close", 1, "before"), ("pane close", 1, "after"), ("pane close", 4, "after"),
]


@pytest.mark.parametrize(("verb", "times", "when"), DROPS, ids=[f"{v.replace(' ', '-')}-{t}-{w}" for v, t, w in DROPS])
def test_a_dropped_connection_mid_pass_changes_nothing_unproven_and_the_next_pass_converges(
        pf: Panefleet, world: World, remote: FakeHerdr, verb: str, times: int, when: str) -> None:
    start(pf, "run-m-1", 5, "--machine", M)
    world.fake.drop_connection(M, times=times, when=when, verb=verb)
    first = pf("reconcile", "--machine", M, "-o", "json")
    assert first.returncode in (0, 3), first
    with world.fake.edit() as state:  # the connection is back for the next pass, however far the drop got
        hits, state["drops"] = state["drops"][0].get("hits", 0), []
    assert hits >= 1, "the drop never happened: the test would prove nothing"
    outcomes: list[dict[str, Any]] = json.loads(first.stdout)["outcomes"]
    record = world.store.run("run-m-1")
    assert record is not None
    panes = {p["pane_id"]: p for p in remote.panes()}
    if record.pane_id is not None:  # recorded only what was proven: the pane stands, labelled as the run's
        assert record.pane_id in panes and panes[record.pane_id]["label"] == record.pane_label
        assert any(o["kind"] == "reassociated" for o in outcomes)
    second = pf.json("reconcile", "--machine", M)
    assert second["ok"] is True
    assert_converged(pf, remote, ["run-m-1"])
    # and the same when the run settles: everything it had on the machine goes
    assert pf("run", "settle", "run-m-1").returncode == 0
    if verb == "pane close":
        world.fake.drop_connection(M, times=times, when=when, verb=verb)
        dropped = pf("reconcile", "--machine", M, "--managed", "alpha", "-o", "json")
        assert dropped.returncode in (0, 3)
        with world.fake.edit() as state:
            hits, state["drops"] = state["drops"][0].get("hits", 0), []
        assert hits >= 1
    pf.json("reconcile", "--machine", M, "--managed", "alpha")
    pf.json("reconcile", "--machine", M, "--managed", "alpha")
    assert_converged(pf, remote, [])
    assert all(c[:2] == ["--machine", M] and "--session" not in c for c in machine_calls(world))


def test_a_second_run_is_not_opened_blind_after_a_dropped_split(pf: Panefleet, world: World,
                                                                 remote: FakeHerdr) -> None:
    start(pf, "run-m-1", 5, "--machine", M)
    pf.json("reconcile", "--machine", M)
    start(pf, "run-m-2", 6, "--machine", M)
    start(pf, "run-m-3", 7, "--machine", M)
    world.fake.drop_connection(M, times=1, when="after", verb="pane split")
    world.fake.reset_calls()
    first = pf.json("reconcile", "--machine", M)
    by_run = {o.get("runId"): o for o in first["outcomes"]}
    assert by_run["run-m-2"]["kind"] == "untracked" and "machine_unreachable" in by_run["run-m-2"]["reason"]
    assert by_run["run-m-3"]["kind"] == "untracked" and "the next pass lists first" in by_run["run-m-3"]["reason"]
    assert [c[2:4] for c in world.calls()].count(["pane", "split"]) == 1  # no second split in that pass
    third = world.store.run("run-m-3")
    assert third is not None and third.attempts == 0  # not an attempt: nothing was tried
    pf.json("reconcile", "--machine", M)
    assert_converged(pf, remote, ["run-m-1", "run-m-2", "run-m-3"])


# A ``workspace create`` applied on the machine whose answer is lost, and the listing that looks for it
# lost too (the connection down for 2 or 3 calls): the pending create recorded before it
# (docs/herdr-fleet.md, "Saved machines", "Lost creates") lets the next pass claim that workspace.


def pass_until_the_drop_is_spent(pf: Panefleet, world: World, times: int) -> list[dict[str, Any]]:
    """Reconcile passes until the dropped connection has answered ``times`` calls; the last pass's outcomes."""
    outcomes: list[dict[str, Any]] = []
    for _ in range(times):
        done = pf("reconcile", "--machine", M, "-o", "json")
        assert done.returncode in (1, 3), done  # the create left pending (debt), or the listing failed (error)
        if done.returncode == 3:
            outcomes = json.loads(done.stdout)["outcomes"]
        if world.fake.read()["drops"][0]["times"] == 0:
            return outcomes
    raise AssertionError("the drop was never spent: the test would prove nothing")


@pytest.mark.parametrize("times", [2, 3])
def test_a_create_whose_answer_and_listing_were_lost_is_claimed_by_the_next_pass(
        pf: Panefleet, world: World, remote: FakeHerdr, times: int) -> None:
    start(pf, "run-m-1", 5, "--machine", M)
    start(pf, "run-m-2", 6, "--machine", M)
    world.fake.drop_connection(M, times=times, when="after", verb="workspace create")
    first = pass_until_the_drop_is_spent(pf, world, times)
    assert [o["kind"] for o in first] == ["untracked", "untracked", "workspace-create-pending"], first
    made = [w for w in remote.workspaces() if w["label"] == "alpha-workers"]
    assert len(made) == 1 and made[0]["tokens"] == {}  # herdr made it; nothing of ours says so but the store
    assert [(p, b) for _h, _s, p, b in world.store.all_pending()] == [("alpha", [])]
    status = pf.json("status", "--machine", M)
    assert status["pendingCreates"] == [{"project": "alpha", "listedBefore": [], "next": "claim",
                                         "workspaceId": made[0]["workspace_id"]}]
    assert "pending workspace create of alpha" in pf("status", "--machine", M).stdout

    second = pf.json("reconcile", "--machine", M)
    assert sorted(o["kind"] for o in second["outcomes"]) == [
        "reassociated", "reassociated", "stale-released", "workspace-claimed"], second
    assert world.store.all_pending() == []
    assert [w["workspace_id"] for w in remote.workspaces()] == [made[0]["workspace_id"]]  # no second one
    assert_converged(pf, remote, ["run-m-1", "run-m-2"])
    for run_id in ("run-m-1", "run-m-2"):
        assert pf("run", "settle", run_id).returncode == 0
    pf.json("reconcile", "--machine", M, "--managed", "alpha")
    assert_converged(pf, remote, [])
    assert remote.workspaces() == [] and world.store.recorded(["alpha"], "", M) == {"alpha": []}


@pytest.mark.parametrize("when", ["after", "before"])
def test_a_lookalike_that_existed_before_the_create_is_never_claimed(
        pf: Panefleet, world: World, remote: FakeHerdr, when: str) -> None:
    lookalike, root = remote.plant_workspace("alpha-workers")  # someone else's, our label, no token
    start(pf, "run-m-1", 5, "--machine", M)
    world.fake.drop_connection(M, times=2, when=when, verb="workspace create")
    pass_until_the_drop_is_spent(pf, world, 2)
    assert [b for _h, _s, _p, b in world.store.all_pending()] == [[lookalike]]
    second = pf.json("reconcile", "--machine", M)
    kinds = sorted(o["kind"] for o in second["outcomes"])
    # applied: the new one is claimed; never applied: the pending create is cleared and one is made now
    assert kinds == (["reassociated", "stale-released", "workspace-claimed"] if when == "after"
                     else ["reassociated", "stale-released"]), second
    assert world.store.all_pending() == []
    ours = [w for w in remote.workspaces() if w["workspace_id"] != lookalike]
    assert len(ours) == 1 and ours[0]["tokens"] == {"conductor_workers": "alpha"}
    theirs = next(w for w in remote.workspaces() if w["workspace_id"] == lookalike)
    assert theirs["tokens"] == {} and [p["pane_id"] for t in theirs["tabs"] for p in t["panes"]] == [root]
    assert pf("run", "settle", "run-m-1").returncode == 0
    pf.json("reconcile", "--machine", M, "--managed", "alpha")
    assert [w["workspace_id"] for w in remote.workspaces()] == [lookalike]  # ours gone, theirs untouched


def test_two_new_lookalikes_keep_the_pending_create_as_debt_and_touch_nothing(
        pf: Panefleet, world: World, remote: FakeHerdr) -> None:
    start(pf, "run-m-1", 5, "--machine", M)
    world.fake.drop_connection(M, times=2, when="after", verb="workspace create")
    pass_until_the_drop_is_spent(pf, world, 2)
    other, _root = remote.plant_workspace("alpha-workers")  # made by someone else after the create
    before = remote.workspaces()
    kept = pf("reconcile", "--machine", M, "-o", "json")
    assert kept.returncode == 3, kept
    answer = json.loads(kept.stdout)
    pending = next(o for o in answer["outcomes"] if o["kind"] == "workspace-create-pending")
    assert other in pending["candidates"] and len(pending["candidates"]) == 2
    assert remote.workspaces() == before  # nothing claimed, closed or created
    plan = pf("reconcile", "--machine", M, "--dry-run")
    assert "herdr_workspace" in plan.stdout and other in plan.stdout and "kept as debt" in plan.stdout, plan
    text = pf("reconcile", "--machine", M)
    assert text.returncode == 3 and "pending workspace create of alpha" in text.stdout, text
    assert pf.json("status", "--machine", M)["pendingCreates"][0]["next"] == "keep"
    remote.kill_shell(_root)  # theirs goes: the one left is the create's
    pf.json("reconcile", "--machine", M)
    assert world.store.all_pending() == []
    assert_converged(pf, remote, ["run-m-1"])


def test_a_local_create_that_never_finished_is_claimed_by_the_next_pass(pf: Panefleet, world: World) -> None:
    start(pf, "run-l-1", 5)
    world.fake.fault("workspace create", "hang_after", ms=20_000)
    world.fake.fault("workspace list", "error", code="server_not_running", message="no herdr server", skip=1)
    slow = {**pf.env, "PANEFLEET_CALL_TIMEOUT": "herdr=1"}
    first = pf("reconcile", "-o", "json", env=slow)
    assert first.returncode == 3, first
    kinds = [o["kind"] for o in json.loads(first.stdout)["outcomes"]]
    assert kinds == ["untracked", "workspace-create-pending"] and "timed out" in first.stdout
    made = [w for w in world.fake.workspaces() if w["label"] == "alpha-workers"]
    assert len(made) == 1 and made[0]["tokens"] == {}
    second = pf.json("reconcile")
    assert sorted(o["kind"] for o in second["outcomes"]) == ["reassociated", "stale-released", "workspace-claimed"]
    assert [w["workspace_id"] for w in world.fake.workspaces()] == [made[0]["workspace_id"]]
    assert world.store.all_pending() == []
    assert pf("run", "settle", "run-l-1").returncode == 0
    pf.json("reconcile", "--managed", "alpha")
    assert world.fake.workspaces() == [] and world.store.recorded(["alpha"]) == {"alpha": []}
