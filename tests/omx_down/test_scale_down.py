"""Every scale-down and debt scenario of the seed (catalogue H, I) as a golden: exact tmux sequence,
exact result string, exact files afterwards."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pure import model as m
from pure.omx.codec import render_json
from pure.omx.scale_down import DebtRequest, ScaleDownRequest
from pure.tmux import PANE_FORMAT
from tests.harness import Goldens, ScenarioExecutor, err
from tests.omx_down.fixtures import Team
from tests.omx_down.stub import Stub, record, run_op

L = "list-panes -a -F " + PANE_FORMAT


def S(p: str) -> str:  # noqa: N802
    return f"show-option -qv -p -t {p} @omx_team_pane_owner_id"


def K(p: str) -> str:  # noqa: N802
    return f"kill-pane -t {p}"


def T(p: str) -> list[str]:  # noqa: N802
    """The transcript kept right before a pane's teardown: its proof and its capture (panefleet's own,
    pure/omx/transcripts.py; oh-my-codex makes none of these calls)."""
    return [L, S(p), L, f"capture-pane -p -S -10000 -t {p}"]


ENV = {"OMX_TEAM_SCALING_ENABLED": "1"}


class Scenario:
    def __init__(self, tmp_path: Path, goldens: Goldens, name: str, stub: Stub | None = None) -> None:
        self.root = tmp_path
        self.cwd = tmp_path / "work"
        self.cwd.mkdir(exist_ok=True)
        self.goldens = goldens
        self.name = name
        self.stub = stub or Stub()
        self.runs: list[tuple[str, m.Done, list[m.Entry], list[str]]] = []
        self.team: Team | None = None

    def make_team(self, name: str, workers: int) -> Team:
        self.team = Team(self.cwd, name, workers)
        return self.team

    def _go(self, call: str, op: str, request: Any) -> m.Done:
        before = len(self.stub.log)
        executor = ScenarioExecutor(self.root, self.stub)
        done, journal = run_op(op, request, executor)
        self.runs.append((call, done, journal, self.stub.log[before:]))
        return done

    def scale_down(self, team: str, workers: tuple[str, ...] = (), force: bool = True,
                   env: dict[str, str] | None = None, count: int | None = None) -> dict[str, Any]:
        request = ScaleDownRequest(team=team, cwd=str(self.cwd), env={**ENV, **(env or {})}, worker_names=workers,
                                   force=force, count=count)
        done = self._go("scale_down", "team.scale_down", request)
        return done.outcome.result  # type: ignore[return-value]

    def reconcile(self, team: str) -> dict[str, Any]:
        done = self._go("reconcile", "team.debt_reconcile", DebtRequest(team=team, cwd=str(self.cwd)))
        return done.outcome.result  # type: ignore[return-value]

    def finish(self) -> None:
        team_dir = self.team.dir if self.team is not None else self.cwd
        record(self.goldens, self.name, self.root, self.runs, team_dir)


def debt_of(team: Team) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(team.debt_path().read_text())
    return value


# ------------------------------------------------------------------------------------------ H: args


def test_h01_disabled_gate(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "h01_disabled_gate")
    done = sc._go("scale_down", "team.scale_down", ScaleDownRequest(team="test", cwd="/tmp"))
    assert done.outcome.result == {"ok": False, "error": "Dynamic scaling is disabled. Set "
                                   "OMX_TEAM_SCALING_ENABLED=1 to enable."}
    assert sc.stub.log == []
    sc.finish()


def test_h02_unknown_team(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "h02_unknown_team")
    assert sc.scale_down("nonexistent", force=False) == {"ok": False, "error": "Team nonexistent not found"}
    sc.finish()


def test_h03_cannot_remove_all(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "h03_cannot_remove_all")
    sc.make_team("all-test", 1)
    assert sc.scale_down("all-test", ("worker-1",), force=False) == {
        "ok": False, "error": "Cannot remove all workers \u2014 at least 1 must remain"}
    sc.finish()


def test_h04_unknown_worker(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "h04_unknown_worker")
    sc.make_team("miss-test", 2)
    assert sc.scale_down("miss-test", ("worker-99",), force=False) == {
        "ok": False, "error": "Worker worker-99 not found in team miss-test"}
    sc.finish()


def test_h05_not_enough_idle(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "h05_not_enough_idle")
    team = sc.make_team("busy-test", 2)
    for w in ("worker-1", "worker-2"):
        team.worker_file(w, "status.json").write_text(render_json(
            {"state": "working", "updated_at": "2026-07-14T00:00:00.000Z"}))
    assert sc.scale_down("busy-test", count=1, force=False) == {
        "ok": False, "error": "Not enough idle workers to remove: found 0, requested 1. "
                              "Use force=true to remove busy workers."}
    sc.finish()


def test_count_mode_removes_idle_worker_without_force(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "count_mode_idle_unforced")
    team = sc.make_team("count-test", 3)
    team.worker_file("worker-1", "status.json").write_text(render_json(
        {"state": "working", "updated_at": "2026-07-14T00:00:00.000Z"}))
    assert sc.scale_down("count-test", count=1, force=False) == {
        "ok": True, "removedWorkers": ["worker-2"], "newWorkerCount": 2}
    assert team.worker_names() == ["worker-1", "worker-3"]
    assert not team.debt_path().exists()
    sc.finish()


def test_count_zero_and_no_selection(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "count_zero")
    sc.make_team("zero-test", 2)
    assert sc.scale_down("zero-test", count=0) == {"ok": False, "error": "count must be a positive integer (got 0)"}
    sc.finish()


def test_h08_worktree_root_agents_restored(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "h08_worktree_agents_restored")
    team = sc.make_team("scale-down-worktree", 2)
    worktree = sc.cwd / ".omx" / "team" / "scale-down-worktree" / "worktrees" / "worker-2"
    worktree.mkdir(parents=True)
    (worktree / "AGENTS.md").write_text("# generated worker instructions\n")
    team.worker_file("worker-2", "root-agents-backup.json").write_text(json.dumps(
        {"existed": True, "tracked": False, "previousContent": "# Tracked root instructions\n"}))

    def change(config: dict[str, Any]) -> None:
        config["workspace_mode"] = "worktree"
        config["team_state_root"] = str(sc.cwd / ".omx" / "state")
        config["workers"][1]["worktree_path"] = str(worktree)
    team.update(change)
    assert sc.scale_down("scale-down-worktree", ("worker-2",)) == {
        "ok": True, "removedWorkers": ["worker-2"], "newWorkerCount": 1}
    assert (worktree / "AGENTS.md").read_text() == "# Tracked root instructions\n"
    assert not team.worker_file("worker-2", "root-agents-backup.json").exists()
    assert sc.stub.log == []
    sc.finish()


# --------------------------------------------------------------------------------- I: teardown


def test_i01_dead_pane_removed_without_kill(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i01_dead_pane_no_kill", Stub({"%405": (1, 4050)}, kill_exit=1))
    team = sc.make_team("dead-pane", 2)
    team.set_panes(owner="team:scale-down", worker_2=("%405", 424405))
    assert sc.scale_down("dead-pane", ("worker-2",)) == {
        "ok": True, "removedWorkers": ["worker-2"], "newWorkerCount": 1}
    assert sc.stub.log == [L] + [L, L]  # no transcript: its proof ends at the first L (another pid)
    assert team.worker_names() == ["worker-1"]
    assert not team.worker_file("worker-2", "").exists() and not team.debt_path().exists()
    events = (team.dir / "events" / "events.ndjson").read_text().splitlines()
    assert json.loads(events[-1])["reason"] == "scale_down: removed 1 worker(s) [worker-2], new count=1"
    sc.finish()


def test_i02_pidless_live_recycled_pane_is_debt(tmp_path: Path, goldens: Goldens) -> None:
    stub = Stub({"%405": (0, 999405)}, show=err(99), kill_exit=99)
    sc = Scenario(tmp_path, goldens, "i02_pidless_live_is_debt", stub)
    team = sc.make_team("unpinned-recycled", 2)
    team.set_panes(owner="team:scale-down", worker_2=("%405", None))
    assert sc.scale_down("unpinned-recycled", ("worker-2",)) == {
        "ok": False, "error": "scale_down_cleanup_debt:pane_teardown_unresolved:%405"}
    debt = debt_of(team)
    assert debt["unresolved_panes"] == [{"name": "worker-2", "index": 2, "pane_id": "%405", "pid": None}]
    assert "%405:legacy_pid_missing_live" in debt["reasons"]
    assert sc.reconcile("unpinned-recycled") == {"ok": False, "error": "scale_down_cleanup_debt_unresolved:%405"}
    assert "%405:legacy_pid_missing_live" in debt_of(team)["reasons"]
    assert stub.log == [L, L]
    sc.finish()


def test_i03_leader_and_hud_never_targeted(tmp_path: Path, goldens: Goldens) -> None:
    stub = Stub({"%11": (0, 42411), "%12": (0, 42412), "%13": (0, 42413), "%14": (0, 42414)})
    sc = Scenario(tmp_path, goldens, "i03_leader_hud_excluded", stub)
    team = sc.make_team("exclusions", 4)
    team.set_panes(owner="team:scale-down", leader="%11", hud="%12", worker_1=("%11", 42411),
                   worker_2=("%12", 42412), worker_3=("%13", 42413), worker_4=("%14", 42414))
    assert sc.scale_down("exclusions", ("worker-1", "worker-2", "worker-3")) == {
        "ok": False, "error": "scale_down_cleanup_debt:pane_teardown_unresolved:%11;pane_teardown_unresolved:%12"}
    assert stub.log == T("%13") + [L, S("%13"), L, K("%13"), L]  # no transcript of the leader or HUD pane
    assert team.worker_names() == ["worker-4"]
    # probe-verified quirk: that debt names the leader/HUD panes, so reconcile rejects it
    assert sc.reconcile("exclusions") == {"ok": False, "error": "scale_down_cleanup_debt_malformed"}
    sc.finish()


def test_i04_pane_id_reused_after_kill(tmp_path: Path, goldens: Goldens) -> None:
    stub = Stub({"%13": (0, 42413)})
    stub.on_kill["%13"] = lambda: stub.panes.__setitem__("%13", (0, 42414))
    sc = Scenario(tmp_path, goldens, "i04_pane_reused_after_kill", stub)
    team = sc.make_team("kill-fail", 2)
    worktree = sc.cwd / ".omx" / "team" / "kill-fail" / "worktrees" / "worker-2"
    worktree.mkdir(parents=True)
    (worktree / "keep.txt").write_text("keep")
    team.update(lambda c: c["workers"][1].update({"pane_id": "%13", "pid": 42413, "worktree_path": str(worktree)}))
    team.set_panes(owner="team:scale-down")
    team.worker_file("worker-2", "identity.json").write_text('{"worker":"worker-2"}')
    team.worker_file("worker-2", "inbox.md").write_text("retryable inbox")
    (team.dir / "runtime").mkdir()
    (team.dir / "runtime" / "worker-2-startup.sh").write_text("#!/bin/sh\n")
    status = render_json({"state": "idle", "reason": "waiting for assignment",
                          "updated_at": "2026-07-14T00:00:00.000Z"})
    team.worker_file("worker-2", "status.json").write_text(status)
    assert sc.scale_down("kill-fail", ("worker-2",)) == {
        "ok": False, "error": "scale_down_cleanup_debt:pane_teardown_failed:%13;pane_teardown_unresolved:%13"}
    assert stub.log == T("%13") + [L, S("%13"), L, K("%13"), L]
    assert team.worker_names() == ["worker-1"]
    assert team.worker_file("worker-2", "identity.json").read_text() == '{"worker":"worker-2"}'
    assert team.worker_file("worker-2", "inbox.md").read_text() == "retryable inbox"
    assert (worktree / "keep.txt").read_text() == "keep"
    assert (team.dir / "runtime" / "worker-2-startup.sh").read_text() == "#!/bin/sh\n"
    assert team.worker_file("worker-2", "status.json").read_text() == status
    debt = debt_of(team)
    assert debt["status"] == "unresolved" and debt["unresolved_panes"][0]["pane_id"] == "%13"
    sc.finish()


def test_i05_claim_lock_timeout_preserves_everything(tmp_path: Path, goldens: Goldens) -> None:
    stub = Stub({"%11": (0, 42411)})
    sc = Scenario(tmp_path, goldens, "i05_claim_lock_timeout", stub)
    team = sc.make_team("task-reconcile-fail", 2)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413))
    team.write_task("1", "one", owner="worker-2")
    team.write_task("2", "two", owner="worker-2")
    lock = team.dir / "claims" / "task-2.lock"
    lock.mkdir()
    before = {str(p): p.read_bytes() for p in team.dir.rglob("*") if p.is_file()}
    assert sc.scale_down("task-reconcile-fail", ("worker-2",)) == {
        "ok": False, "error": "scale_down_task_reconciliation_failed:Error: Timed out acquiring task claim lock "
                              "for task-reconcile-fail/2"}
    assert stub.log == []
    after = {str(p): p.read_bytes() for p in team.dir.rglob("*") if p.is_file()}
    debt_file = str(team.debt_path())
    assert {k: v for k, v in after.items() if k != debt_file} == before
    assert not team.debt_path().exists()
    assert lock.is_dir() and not (team.dir / "claims" / "task-1.lock").exists()
    sc.finish()


def test_i06_proof_unavailable(tmp_path: Path, goldens: Goldens) -> None:
    stub = Stub()
    stub.list_fail = True
    sc = Scenario(tmp_path, goldens, "i06_proof_unavailable", stub)
    team = sc.make_team("proof-unavailable", 2)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413))
    team.write_task("1", "owned", owner="worker-2")
    status = '{"state":"idle", "reason":"preserve bytes", "updated_at":"2026-07-14T00:00:00.000Z"}\n'
    team.worker_file("worker-2", "status.json").write_text(status)
    assert sc.scale_down("proof-unavailable", ("worker-2",)) == {
        "ok": False, "error": "scale_down_pane_proof_unavailable:%13:query_failed"}
    assert stub.log == [L] + [L]  # no transcript (its proof is unavailable), the teardown as without one
    assert team.worker_names() == ["worker-1"]
    assert "owner" not in team.task("1")
    assert team.worker_file("worker-2", "status.json").read_text() == status
    debt = debt_of(team)
    assert debt["status"] == "unresolved" and debt["unresolved_panes"][0]["pane_id"] == "%13"
    sc.finish()


def _two_tasks(team: Team) -> None:
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413))
    team.write_task("1", "first", owner="worker-2")
    team.write_task("2", "second", owner="worker-2")


def test_i07_interruption_converges_all_new(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i07_interrupt_after_first_task", Stub({"%13": (0, 42413)}))
    team = sc.make_team("atomic-down", 2)
    _two_tasks(team)
    result = sc.scale_down("atomic-down", ("worker-2",), env={"OMX_TEAM_SCALE_DOWN_INJECT_FAILURE":
                                                              "after-first-task-write"})
    assert result == {"ok": False, "error": "scale_down_task_reconciliation_failed:Error: "
                                            "injected_scale_down_interruption:after-first-task-write"}
    assert sc.stub.log == []
    # torn on disk until the next public read
    assert team.journal_path().exists()
    # a public read recovers; the committed debt then names a live pane with no identity file
    assert sc.reconcile("atomic-down") == {"ok": False, "error": "scale_down_cleanup_debt_unresolved:%13"}
    assert debt_of(team)["reasons"] == ["%13:worker_identity_unavailable"]
    assert not team.journal_path().exists()
    assert team.worker_names() == ["worker-1"]
    assert [team.task(t).get("owner") for t in ("1", "2")] == [None, None]
    sc.finish()


def test_i08_rollback_persistence_failure_recovers(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i08_rollback_persistence", Stub({"%13": (0, 42413)}))
    team = sc.make_team("rollback-recovery", 2)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413))
    team.write_task("1", "first", owner="worker-2")
    result = sc.scale_down("rollback-recovery", ("worker-2",), env={"OMX_TEAM_SCALE_DOWN_INJECT_FAILURE":
                                                                    "rollback-persistence-failure"})
    assert result == {"ok": False, "error": "scale_down_task_reconciliation_failed:Error: "
                                            "injected_scale_down_failure:rollback-persistence-failure"}
    assert sc.stub.log == []
    done = sc._go("status", "team.debt_show", DebtRequest(team="rollback-recovery", cwd=str(sc.cwd)))
    assert done.outcome.status == "ok"
    sc.reconcile("rollback-recovery")
    assert team.worker_names() == ["worker-1"]
    manifest = team.manifest()
    assert manifest is not None and [w["name"] for w in manifest["workers"]] == ["worker-1"]
    assert "owner" not in team.task("1")
    sc.finish()


def _precommit_debt() -> dict[str, Any]:
    return {"schema_version": 1, "operation": "scale_down", "status": "pending_teardown",
            "removed_worker_names": ["worker-2"],
            "workers": [{"name": "worker-2", "index": 2, "pane_id": "%13", "pid": 42413}],
            "resource_workers": [{"name": "worker-2"}]}


def test_i11_precommit_debt_discarded(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i11_precommit_debt_discarded", Stub(show=err(99), kill_exit=99))
    team = sc.make_team("precommit-debt", 2)
    team.debt_path().write_text(render_json(_precommit_debt()))
    assert sc.reconcile("precommit-debt") == {"ok": True}
    assert not team.debt_path().exists() and team.worker_names() == ["worker-1", "worker-2"]
    assert sc.stub.log == []
    sc.finish()


def test_i12_proof_lost_after_kill_then_reconciled(tmp_path: Path, goldens: Goldens) -> None:
    stub = Stub({"%13": (0, 42413), "%14": (0, 42414)})

    def lose() -> None:
        stub.list_fail = True
    stub.on_kill["%13"] = lose
    sc = Scenario(tmp_path, goldens, "i12_proof_lost_then_reconciled", stub)
    team = sc.make_team("success-proof-loss", 3)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413), worker_3=("%14", 42414))
    for i, w, p in ((2, "worker-2", "%13"), (3, "worker-3", "%14")):
        team.worker_file(w, "identity.json").write_text(render_json(
            {"name": w, "index": i, "pane_id": p, "pid": 42400 + int(p[1:])}))
    claim = {"owner": "worker-2", "token": "t", "leased_until": "2999-01-01T00:00:00.000Z"}
    team.write_task("1", "A", owner="worker-2", status="in_progress", claim=claim)
    team.write_task("2", "B", owner="worker-3")
    raw3 = '{"reason":"three",\n"updated_at":"2026-07-14T00:00:01.000Z", "state":"idle"}\n'
    team.worker_file("worker-3", "status.json").write_text(raw3)
    assert sc.scale_down("success-proof-loss", ("worker-2", "worker-3")) == {
        "ok": False, "error": "scale_down_pane_proof_unavailable:%13:query_failed"}
    assert stub.log == T("%13") + T("%14") + [L, S("%13"), L, K("%13"), L]
    assert team.worker_names() == ["worker-1"]
    assert team.worker_file("worker-3", "status.json").read_text() == raw3
    a = team.task("1")
    assert "owner" not in a and a["status"] == "pending" and "claim" not in a
    assert "owner" not in team.task("2")
    assert [p["pane_id"] for p in debt_of(team)["unresolved_panes"]] == ["%13", "%14"]
    # phase 2: tmux answers again and lists both panes until each is killed
    stub.list_fail = False
    stub.on_kill.clear()
    stub.panes = {"%13": (0, 42413), "%14": (0, 42414)}
    before = len(stub.log)
    assert sc.reconcile("success-proof-loss") == {"ok": True}
    assert stub.log[before:] == [L, S("%13"), *T("%13"), L, S("%13"), L, K("%13"), L,
                                 L, S("%14"), *T("%14"), L, S("%14"), L, K("%14"), L]
    assert [x for x in stub.log if x.startswith("kill-pane")] == [K("%13"), K("%13"), K("%14")]
    assert not team.debt_path().exists()
    sc.finish()


def test_i13_later_teardown_failure(tmp_path: Path, goldens: Goldens) -> None:
    stub = Stub({"%13": (0, 42413), "%14": (0, 42414)}, kill_exit={"%14": 1})
    sc = Scenario(tmp_path, goldens, "i13_later_teardown_fails", stub)
    team = sc.make_team("gone-kill-fail", 3)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413), worker_3=("%14", 42414))
    claim = {"owner": "worker-2", "token": "t", "leased_until": "2999-01-01T00:00:00.000Z"}
    team.write_task("1", "A", owner="worker-2", status="in_progress", claim=claim)
    team.write_task("2", "B", owner="worker-3")
    raw3 = '{\n "state" : "idle", "reason":"three", "updated_at":"2026-07-14T00:00:01.000Z"\n}\n'
    team.worker_file("worker-3", "status.json").write_text(raw3)
    assert sc.scale_down("gone-kill-fail", ("worker-2", "worker-3")) == {
        "ok": False, "error": "scale_down_cleanup_debt:pane_teardown_failed:%14;pane_teardown_unresolved:%14"}
    assert stub.log == T("%13") + T("%14") + [L, S("%13"), L, K("%13"), L, L, S("%14"), L, K("%14")]
    assert team.worker_names() == ["worker-1"]
    assert team.worker_file("worker-3", "status.json").read_text() == raw3
    a = team.task("1")
    assert "owner" not in a and a["status"] == "pending" and "claim" not in a
    assert "owner" not in team.task("2")
    assert [p["pane_id"] for p in debt_of(team)["unresolved_panes"]] == ["%14"]
    sc.finish()


@pytest.mark.parametrize(("label", "raw"), [
    ("absent", None),
    ("malformed", '{"state":\n'),
    ("noncanonical", '{\n  "updated_at" : "2026-07-14T00:00:00.000Z",\n "reason":"waiting for assignment", '
                     '"state" : "idle"\n}\n'),
])
def test_i14_i16_status_restored_exactly(tmp_path: Path, goldens: Goldens, label: str, raw: str | None) -> None:
    stub = Stub({"%13": (0, 42413)}, kill_exit=1)
    sc = Scenario(tmp_path, goldens, f"i14_16_status_restore_{label}", stub)
    team = sc.make_team("status-" + label, 2)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413))
    status = team.worker_file("worker-2", "status.json")
    if raw is not None:
        status.write_text(raw)
    assert sc.scale_down("status-" + label, ("worker-2",)) == {
        "ok": False, "error": "scale_down_cleanup_debt:pane_teardown_failed:%13;pane_teardown_unresolved:%13"}
    assert stub.log == T("%13") + [L, S("%13"), L, K("%13")]
    assert (status.read_text() if status.exists() else None) == raw
    sc.finish()


def test_owner_refusal_is_proof_unavailable_pid_changed(tmp_path: Path, goldens: Goldens) -> None:
    stub = Stub({"%13": (0, 42413)}, owner="team:someone-else")
    sc = Scenario(tmp_path, goldens, "owner_refusal_pid_changed", stub)
    team = sc.make_team("owner-refusal", 2)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413))
    assert sc.scale_down("owner-refusal", ("worker-2",)) == {
        "ok": False, "error": "scale_down_pane_proof_unavailable:%13:pane_pid_changed"}
    assert stub.log == [L, S("%13")] + [L, S("%13")]  # no transcript: another owner tag, for both proofs
    assert debt_of(team)["reasons"] == ["%13:pane_pid_changed"]
    sc.finish()


# ------------------------------------------------------------------------------------- I: reconcile


def test_i17_stale_caller_view_never_authorizes(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i17_canonical_not_caller", Stub(show=err(99), kill_exit=99))
    team = sc.make_team("canonical-debt", 2)
    team.worker_file("worker-2", "sentinel").write_text("keep")
    team.debt_path().write_text(render_json(_precommit_debt()))
    assert sc.reconcile("canonical-debt") == {"ok": True}
    assert not team.debt_path().exists()
    assert team.worker_file("worker-2", "sentinel").read_text() == "keep"
    assert team.worker_names() == ["worker-1", "worker-2"]
    sc.finish()


def _drop_worker2(team: Team) -> None:
    def change(config: dict[str, Any]) -> None:
        config["workers"] = [w for w in config["workers"] if w["name"] != "worker-2"]
        config["worker_count"] = len(config["workers"])
    team.update(change)


def test_i18_paneless_crash_debt(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i18_paneless_crash_debt", Stub(show=err(99), kill_exit=99))
    team = sc.make_team("zero-pane-debt", 2)
    team.set_panes(owner="team:scale-down")
    _drop_worker2(team)
    team.worker_file("worker-2", "status.json").write_text('{"state":"draining"}')
    team.debt_path().write_text(render_json({
        "schema_version": 1, "operation": "scale_down", "status": "resource_cleanup_pending",
        "removed_worker_names": ["worker-2"], "workers": [], "resource_workers": [{"name": "worker-2"}]}))
    assert sc.reconcile("zero-pane-debt") == {"ok": True}
    assert not team.worker_file("worker-2", "").exists() and not team.debt_path().exists()
    assert sc.stub.log == []
    sc.finish()


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def git_repo(cwd: Path) -> Path:
    git(cwd, "init", "-q", "-b", "main")
    (cwd / "README.md").write_text("repo\n")
    git(cwd, "add", "README.md")
    git(cwd, "commit", "-qm", "init")
    return Path(os.path.realpath(cwd))


def _resource_debt(team: Team, resource: dict[str, Any]) -> None:
    team.debt_path().write_text(render_json({
        "schema_version": 1, "operation": "scale_down", "status": "resource_cleanup_pending",
        "removed_worker_names": ["worker-2"], "workers": [], "resource_workers": [resource]}))


def test_i19_resource_debt_after_worktree_already_removed(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i19_resource_retry_real_git", Stub(show=err(99), kill_exit=99))
    repo = git_repo(sc.cwd)
    team = sc.make_team("resource-retry", 2)
    _drop_worker2(team)
    worktree = repo / ".omx" / "team" / "resource-retry" / "worktrees" / "worker-2"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    git(repo, "worktree", "remove", "--force", str(worktree))
    _resource_debt(team, {"name": "worker-2", "worktree_path": str(worktree), "worktree_repo_root": str(repo),
                          "worktree_detached": True, "worktree_created": True})
    assert sc.reconcile("resource-retry") == {"ok": True}
    assert not worktree.exists() and not team.worker_file("worker-2", "").exists()
    assert not team.debt_path().exists()
    sc.finish()


def test_resource_debt_removes_a_live_git_worktree(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "resource_debt_removes_worktree_real_git", Stub(show=err(99), kill_exit=99))
    repo = git_repo(sc.cwd)
    team = sc.make_team("resource-live", 2)
    _drop_worker2(team)
    worktree = repo / ".omx" / "team" / "resource-live" / "worktrees" / "worker-2"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    _resource_debt(team, {"name": "worker-2", "worktree_path": str(worktree), "worktree_repo_root": str(repo),
                          "worktree_detached": True, "worktree_created": True})
    assert sc.reconcile("resource-live") == {"ok": True}
    assert not worktree.exists()
    assert str(worktree) not in git(repo, "worktree", "list")
    sc.finish()


@pytest.mark.parametrize("kind", ["traversal", "foreign", "symlink_parent"])
def test_i20_i22_bad_worktree_debt_rejected(tmp_path: Path, goldens: Goldens, kind: str) -> None:
    sc = Scenario(tmp_path, goldens, f"i20_22_worktree_debt_{kind}", Stub(show=err(99), kill_exit=99))
    repo = git_repo(sc.cwd)
    name = {"traversal": "malformed-resource-debt", "foreign": "foreign-resource-debt",
            "symlink_parent": "symlink-resource-debt"}[kind]
    team = sc.make_team(name, 2)
    _drop_worker2(team)
    team.worker_file("worker-2", "sentinel").write_text("keep")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "AGENTS.md").write_text("foreign")
    if kind == "traversal":
        path = os.path.normpath(os.path.join(repo, ".omx/team", name, "worktrees", "..", "worker-2"))
    elif kind == "foreign":
        path = str(foreign)
    else:
        (repo / ".omx" / "team" / name).mkdir(parents=True)
        (repo / ".omx" / "team" / name / "worktrees").symlink_to(foreign)
        path = str(repo / ".omx" / "team" / name / "worktrees" / "worker-2")
    _resource_debt(team, {"name": "worker-2", "worktree_path": path, "worktree_repo_root": str(repo),
                          "worktree_detached": True, "worktree_created": True})
    before = team.debt_path().read_text()
    assert sc.reconcile(name) == {"ok": False, "error": "scale_down_cleanup_debt_malformed"}
    assert team.worker_file("worker-2", "sentinel").read_text() == "keep"
    assert (foreign / "AGENTS.md").read_text() == "foreign"
    assert team.debt_path().read_text() == before
    sc.finish()


def test_i23_survivor_collision_rejected_before_tmux(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i23_survivor_collision", Stub(show=err(99), kill_exit=99))
    team = sc.make_team("debt-survivor-collision", 3)
    team.set_panes(owner="team:scale-down", worker_1=("%13", 42413))

    def change(config: dict[str, Any]) -> None:
        config["workers"] = config["workers"][:1]
        config["worker_count"] = 1
    team.update(change)
    debt = {"schema_version": 1, "operation": "scale_down", "status": "pending_teardown",
            "removed_worker_names": ["worker-2", "worker-3"],
            "workers": [{"name": "worker-2", "index": 2, "pane_id": "%13", "pid": 42414},
                        {"name": "worker-3", "index": 3, "pane_id": "%14", "pid": 42413}],
            "resource_workers": [{"name": "worker-2"}, {"name": "worker-3"}]}
    team.debt_path().write_text(render_json(debt))
    assert sc.reconcile("debt-survivor-collision") == {"ok": False, "error": "scale_down_cleanup_debt_malformed"}
    assert debt_of(team) == debt and sc.stub.log == []
    sc.finish()


@pytest.mark.parametrize(("label", "stub", "calls", "reason"), [
    ("foreign_occupant", Stub({"%13": (0, 42413)}, owner="team:another-team", kill_exit=99), 2,
     "%13:team_owner_mismatch"),
    ("pid_reused", Stub({"%13": (0, 52413)}, owner="team:debt-pane-authority", kill_exit=99), 1,
     "%13:pane_pid_changed"),
    ("owner_unavailable", Stub({"%13": (0, 42413)}, show=err(2, "owner-query-failed"), kill_exit=99), 2,
     "%13:team_owner_unavailable"),
])
def test_i24_i26_debt_pane_authority(tmp_path: Path, goldens: Goldens, label: str, stub: Stub, calls: int,
                                     reason: str) -> None:
    sc = Scenario(tmp_path, goldens, f"i24_26_authority_{label}", stub)
    team = sc.make_team("debt-pane-authority", 2)
    team.set_panes(owner="team:scale-down")
    _drop_worker2(team)
    team.worker_file("worker-2", "identity.json").write_text(render_json(
        {"name": "worker-2", "index": 2, "pane_id": "%13", "pid": 42413}))
    team.debt_path().write_text(render_json(_precommit_debt()))
    assert sc.reconcile("debt-pane-authority") == {"ok": False, "error": "scale_down_cleanup_debt_unresolved:%13"}
    assert stub.log == [L, S("%13")][:calls]
    assert reason in debt_of(team)["reasons"]
    sc.finish()


def test_i27_mismatched_binding_rejected(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i27_mismatched_binding", Stub(show=err(99), kill_exit=99))
    team = sc.make_team("debt-mismatched-binding", 2)
    _drop_worker2(team)
    team.worker_file("worker-2", "sentinel").write_text("keep")
    debt = {**_precommit_debt(), "status": "unresolved",
            "unresolved_panes": [{"name": "worker-2", "index": 2, "pane_id": "%14", "pid": 42413}]}
    team.debt_path().write_text(render_json(debt))
    assert sc.reconcile("debt-mismatched-binding") == {"ok": False, "error": "scale_down_cleanup_debt_malformed"}
    assert team.worker_file("worker-2", "sentinel").read_text() == "keep" and sc.stub.log == []
    sc.finish()


def test_i28_pidless_record_converges_after_gone_proof(tmp_path: Path, goldens: Goldens) -> None:
    sc = Scenario(tmp_path, goldens, "i28_pidless_gone_converges", Stub(kill_exit=99))
    team = sc.make_team("debt-legacy-gone", 2)
    _drop_worker2(team)
    pane = {"name": "worker-2", "index": 2, "pane_id": "%13", "pid": None}
    team.debt_path().write_text(render_json({**_precommit_debt(), "status": "unresolved", "workers": [pane],
                                             "unresolved_panes": [pane]}))
    assert sc.reconcile("debt-legacy-gone") == {"ok": True}
    assert sc.stub.log == [L] and not team.debt_path().exists()
    sc.finish()


@pytest.mark.parametrize(("label", "mutate", "error"), [
    ("missing_pid_key", lambda d: d["workers"][0].pop("pid"), "scale_down_cleanup_debt_malformed"),
    ("bad_schema", lambda d: d.__setitem__("schema_version", 2), "scale_down_cleanup_debt_malformed"),
    ("bad_name", lambda d: d.__setitem__("removed_worker_names", ["w2"]), "scale_down_cleanup_debt_malformed"),
    ("extra_resource", lambda d: d["resource_workers"].append({"name": "worker-3"}),
     "scale_down_cleanup_debt_malformed"),
    ("index_mismatch", lambda d: d["workers"][0].__setitem__("index", 3), "scale_down_cleanup_debt_malformed"),
    ("partial_membership", lambda d: (d["removed_worker_names"].append("worker-1"),
                                      d["resource_workers"].append({"name": "worker-1"})),
     "scale_down_cleanup_debt_membership_inconsistent"),
])
def test_more_malformed_debt(tmp_path: Path, label: str, mutate: Any, error: str) -> None:
    sc = Scenario(tmp_path, Goldens(False), label, Stub(show=err(99), kill_exit=99))
    team = sc.make_team("malformed-more", 2)
    _drop_worker2(team)
    debt = _precommit_debt()
    mutate(debt)
    team.debt_path().write_text(render_json(debt))
    assert sc.reconcile("malformed-more") == {"ok": False, "error": error}
    assert sc.stub.log == [] and debt_of(team) == debt


def test_unreadable_debt(tmp_path: Path) -> None:
    sc = Scenario(tmp_path, Goldens(False), "unreadable", Stub())
    team = sc.make_team("unreadable", 2)
    team.debt_path().write_text("{not json")
    result = sc.reconcile("unreadable")
    assert result["ok"] is False and result["error"].startswith("scale_down_cleanup_debt_unreadable:SyntaxError")
