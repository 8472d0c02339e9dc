"""What herdr 0.9 changed, against the fake's 0.9 mode (docs/herdr-fleet.md, "Herdr 0.9"): a version
skew ends the pass with a typed error, a workspace with linked worktrees is debt and never closed with
``--group``, the last pane's close converges whichever way 0.9 answers it, and a restart that comes
back empty (or reissues ids, or moves directories) never makes panefleet claim a stranger's workspace."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pure.herdr.liveness import follower_pulse
from pure.herdr.parse import parse_process_info, version_skew
from pure.model import Proc
from tests.cli_process import run_cli
from tests.herdr.conftest import HERDR_MODES, World, kinds

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["herdr-0.9.3", "herdr-0.9.3-confirm"])
def world09(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    version, last_pane = HERDR_MODES[request.param]
    w = World(tmp_path, version=version, last_pane=last_pane)
    try:
        yield w
    finally:
        w.close()


def converge(world: World, *run_ids: str, project: str = "alpha") -> dict[str, str]:
    for n, run_id in enumerate(run_ids):
        world.start(run_id, project=project, issue=n + 1)
    world.reconcile()
    return {r.run_id: r.pane_id for r in world.store.runs() if r.run_id in run_ids and r.pane_id}


# ------------------------------------------------------------------------------------ version skew


NEWER = ('{"error":{"code":"protocol_mismatch","message":"client protocol 22 is newer than server protocol 20; '
         'restart the Herdr server before using this command. Stop the old server to use the new version.\\n'
         'Stopping exits pane processes.\\nRun `herdr session stop fleet`, then run `herdr session attach fleet` '
         'again."},"id":"cli:workspace:list"}\n')
OLDER = ('{"error":{"code":"protocol_mismatch","message":"client protocol 20 is older than server protocol 22; '
         'upgrade the Herdr client before using this command"},"id":"cli:request"}\n')


def test_version_skew_is_read_from_herdrs_own_answer() -> None:
    newer = version_skew(Proc(exit_code=1, stderr=NEWER))
    assert newer is not None and (newer.client, newer.server, newer.remedy) == ("protocol 22", "protocol 20",
                                                                                 "restart_server")
    older = version_skew(Proc(exit_code=1, stderr=OLDER))
    assert older is not None and (older.client, older.server, older.remedy) == ("protocol 20", "protocol 22",
                                                                                 "update_cli")
    assert "protocol 20" in older.message() and "protocol 22" in older.message() and "update the herdr CLI" in \
        older.message()
    unknown = version_skew(Proc(exit_code=2, stderr="error: unexpected argument '--group' found\n\nUsage: …\n"))
    assert unknown is not None and unknown.remedy == "match_panefleet" and "--group" in unknown.message()
    for other in (Proc(exit_code=1, stderr='{"error":{"code":"workspace_not_found","message":"x"},"id":"i"}'),
                  Proc(exit_code=2, stderr="error: injected usage error"), Proc(exit_code=0, stdout=NEWER),
                  Proc(exit_code=None, stderr="herdr timed out")):
        assert version_skew(other) is None


@pytest.mark.parametrize(("server", "cli", "remedy"), [("0.8.2", "0.9.3", "restart"), ("0.9.3", "0.8.2", "update")])
def test_skew_through_the_cli_ends_the_pass_changes_nothing_and_is_no_debt(tmp_path: Path, server: str, cli: str,
                                                                            remedy: str) -> None:
    world = World(tmp_path, version=server)
    try:
        pane = converge(world, "r1")["r1"]
        world.settle("r1")
        before = world.fake.workspaces()
        world.fake.reset_calls()
        env = {**world.env, "FAKE_HERDR_CLI_VERSION": cli, "PANEFLEET_FOLLOWER": "panefleet"}
        base = ["herdr", "reconcile", "--managed", "alpha"]
        text, answer = run_cli(base, env=env), run_cli([*base, "-o", "json"], env=env)
        assert text.returncode == 1 and answer.returncode == 1, (text, answer)
        protocols = ("protocol 22", "protocol 20")
        assert all(p in text.stderr for p in protocols) and remedy in text.stderr, text.stderr
        result = json.loads(answer.stdout)
        assert result["ok"] is False and result["error_code"] == "herdr_version_skew"
        assert result["versionSkew"]["remedy"] == ("restart_server" if remedy == "restart" else "update_cli")
        assert {result["versionSkew"]["client"], result["versionSkew"]["server"]} == set(protocols)
        assert world.fake.workspaces() == before and world.fake.pane(pane) is not None
        assert world.mutations() == [] and len(world.calls()) == 2  # one workspace list per run, refused
        assert world.recorded() == [pane.split(":")[0]]
        # The same CLI as the server: the pass goes on and converges.
        done = run_cli(base, env={**env, "FAKE_HERDR_CLI_VERSION": server})
        assert done.returncode == 0, done
        assert world.fake.pane(pane) is None
    finally:
        world.close()


def test_skew_midway_ends_the_program_as_an_error_without_debt(world09: World) -> None:
    converge(world09, "r1")
    world09.settle("r1")
    world09.fake.configure(cli_version="0.8.2")
    done = world09.reconcile_raw(managed=["alpha"])
    assert done.outcome.status == "error" and done.debt == ()
    assert isinstance(done.outcome.result, dict) and done.outcome.result["versionSkew"]["remedy"] == "update_cli"


# ------------------------------------------------------------------------------------- group close


def test_linked_worktree_workspace_is_debt_and_never_closed_with_group(world09: World) -> None:
    pane = converge(world09, "r1")["r1"]
    ours = pane.split(":")[0]
    other_ws, _ = world09.fake.plant_workspace("operator", process=["vim"])
    linked = world09.fake.link_worktree(ours)
    world09.settle("r1")
    for _ in range(2):  # the debt stands as long as the group does; nothing else is ever closed
        world09.fake.reset_calls()
        done = world09.reconcile_raw(managed=["alpha"])
        outcomes = done.outcome.result["outcomes"]  # type: ignore[index]
        assert "workspace-group-close-required" in kinds(outcomes), outcomes
        assert done.outcome.status == "debt"
        assert [d.subject for d in done.debt if d.kind == "herdr_workspace"] == [ours]
        assert not [c for c in world09.calls() if "--group" in c]
        assert not [c for c in world09.mutations() if {linked, other_ws} & set(c[4:])]
        assert {linked, other_ws, ours} <= set(world09.ws_ids())
    # Once the operator closes the linked workspace, the next pass removes ours.
    world09.fake.call(["--session", "fleet", "workspace", "close", linked])
    outcomes = world09.reconcile(managed=["alpha"])
    assert world09.last_done.outcome.status == "ok" and ours not in world09.ws_ids(), outcomes
    assert other_ws in world09.ws_ids()


def test_fake_group_close_needs_group_in_09_and_closed_the_group_in_082(tmp_path: Path) -> None:
    for version in ("0.8.2", "0.9.3"):
        world = World(tmp_path / version, version=version)
        try:
            ws, _ = world.fake.plant_workspace("repo")
            linked = world.fake.link_worktree(ws)
            code, _out, err = world.fake.call(["--session", "fleet", "workspace", "close", ws])
            if version == "0.8.2":
                assert code == 0 and world.ws_ids() == []
                continue
            assert code == 1 and json.loads(err)["error"]["code"] == "workspace_group_close_required"
            assert world.fake.call(["--session", "fleet", "workspace", "close", ws, "--group"])[0] == 0
            assert linked not in world.ws_ids() and ws not in world.ws_ids()
        finally:
            world.close()


# ------------------------------------------------------------------------------- the last pane


def test_last_pane_closed_leaves_no_repeating_debt(world09: World) -> None:
    panes = converge(world09, "r1", "r2")
    ws = panes["r1"].split(":")[0]
    world09.settle("r1")
    world09.settle("r2")
    outcomes = world09.reconcile(managed=["alpha"])
    assert world09.last_done.outcome.status == "ok" and world09.last_done.debt == ()
    assert ws not in world09.ws_ids() and world09.recorded() == []
    removed = [o for o in outcomes if o["kind"] == "workspace-removed"]
    assert len(removed) == 1 and set(kinds(outcomes)) == {"stale-released", "workspace-removed"}
    confirm = world09.fake.read()["config"]["last_pane"] == "confirm"
    closes = [c for c in world09.mutations() if c[2:4] == ["workspace", "close"]]
    assert closes == ([["--session", "fleet", "workspace", "close", ws]] if confirm else [])
    world09.fake.reset_calls()
    assert world09.reconcile(managed=["alpha"]) == [] and world09.mutations() == []


def test_confirmation_required_for_a_workspace_the_pass_keeps_is_debt_not_a_guess(tmp_path: Path) -> None:
    world = World(tmp_path, version="0.9.3", last_pane="confirm")
    try:
        pane = converge(world, "r1")["r1"]
        world.settle("r1")
        world.fake.fault("workspace close", "error", code="workspace_busy", message="busy")
        done = world.reconcile_raw(managed=["alpha"])
        assert done.outcome.status == "debt"
        assert sorted(d.kind for d in done.debt) == ["herdr_pane", "herdr_workspace"]
        assert world.fake.pane(pane) is not None
        outcomes = world.reconcile(managed=["alpha"])  # the fault is spent: converged, no debt left
        assert world.last_done.debt == () and world.fake.pane(pane) is None, outcomes
    finally:
        world.close()


# ------------------------------------------------------------------------------------ restarts


def test_restart_to_empty_with_a_reissued_id_and_our_label_is_never_ours(world09: World) -> None:
    world09.fake.plant_workspace("operator", process=["vim"])
    panes = converge(world09, "a1", project="alpha")
    converge(world09, "b1", project="beta")
    alpha_ws = panes["a1"].split(":")[0]
    world09.fake.restart(empty=True)
    assert world09.ws_ids() == ["w1"]
    # Someone makes workspaces until one gets alpha's recorded id, with alpha's label and a follower-like process.
    planted: dict[str, str] = {}
    while alpha_ws not in planted:
        assert len(planted) < 5, planted
        wid, root = world09.fake.plant_workspace("alpha-workers", process=["panefleet", "herdr", "follow", "a1"])
        planted[wid] = root
    world09.fake.set_pane(planted[alpha_ws], label=world09.store.run("a1").pane_label)  # even a lookalike label
    world09.fake.reset_calls()
    outcomes = world09.reconcile()
    assert set(planted.values()) <= set(world09.pane_ids())
    assert not [c for c in world09.mutations() if set(planted) & set(c[4:]) or set(planted.values()) & set(c[4:])]
    assert alpha_ws not in world09.recorded("alpha")
    assert kinds(outcomes).count("reassociated") == 2
    assert kinds(world09.reconcile()) == ["intact", "intact"]
    assert "w1" in world09.ws_ids()  # the default workspace of the empty start is nobody's to close


def test_reissued_id_carrying_another_projects_marker_is_not_ours(world09: World) -> None:
    world09.fake.plant_workspace("operator", process=["vim"])
    panes = converge(world09, "a1", project="alpha")
    alpha_ws = panes["a1"].split(":")[0]
    world09.fake.restart(empty=True)
    world09.fake.call(["--session", "fleet", "workspace", "close", "w1"])
    wid, root = world09.fake.plant_workspace("alpha-workers", tokens={"conductor_workers": "zeta"})
    assert wid == alpha_ws
    world09.reconcile()
    assert root in world09.pane_ids() and alpha_ws not in world09.recorded("alpha")


def test_restore_that_moves_directories_changes_no_decision(world09: World) -> None:
    converge(world09, "a1", project="alpha")
    converge(world09, "b1", project="beta")
    world09.fake.restart(rewrite_cwd=True)
    outcomes = world09.reconcile()
    assert kinds(outcomes).count("reassociated") == 2
    assert kinds(world09.reconcile()) == ["intact", "intact"]


def test_agent_cleared_at_an_idle_shell_still_converges(world09: World) -> None:
    pane = converge(world09, "r1")["r1"]
    world09.fake.kill_follower(pane)
    assert world09.fake.pane(pane)["hook"] is None  # type: ignore[index]
    outcomes = world09.reconcile()
    assert kinds(outcomes) == ["reassociated", "stale-released"]
    assert kinds(world09.reconcile()) == ["intact"]


# ------------------------------------------------------------------------------ process-info


def test_process_info_descendants_and_zombies(world09: World) -> None:
    pane = converge(world09, "r1")["r1"]
    world09.fake.add_descendant(pane, "sh", zombie=True)
    world09.fake.add_descendant(pane, "git", ["git", "status"])
    code, out, _ = world09.fake.call(["--session", "fleet", "pane", "process-info", "--pane", pane])
    procs = json.loads(out)["result"]["process_info"]["foreground_processes"]
    assert code == 0 and procs[0]["name"] == "panefleet" and procs[1] == {"pid": procs[1]["pid"], "name": "sh"}
    assert follower_pulse(parse_process_info(out, pane).unwrap()).pulse == "alive"
    assert kinds(world09.reconcile()) == ["intact"]
    world09.fake.kill_follower(pane)
    world09.fake.add_descendant(pane, "sleep", zombie=True)  # a finished background job of the idle shell
    code, out, _ = world09.fake.call(["--session", "fleet", "pane", "process-info", "--pane", pane])
    assert follower_pulse(parse_process_info(out, pane).unwrap()).pulse == "dead"
