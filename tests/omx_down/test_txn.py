"""The membership/task transaction and the locks (docs/transaction.md) as sub-programs over a real
filesystem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pure import model as m
from pure.omx import locks, txn
from pure.omx.codec import render_json
from pure.omx.records import to_json
from pure.program import Gen, decide
from tests.harness import ScenarioExecutor, err
from tests.omx_down.fixtures import Team, drive, program_of


def no_tmux(args: tuple[str, ...]) -> m.Proc:
    return err(99, "tmux must not run")


def without_worker2(team: Team) -> tuple[str, str, str, str]:
    config_old = (team.dir / "config.json").read_text()
    manifest_old = (team.dir / "manifest.v2.json").read_text()
    config = json.loads(config_old)
    config["workers"] = [w for w in config["workers"] if w["name"] != "worker-2"]
    config["worker_count"] = 1
    manifest = json.loads(manifest_old)
    manifest["workers"] = config["workers"]
    manifest["worker_count"] = 1
    return config_old, render_json(config), manifest_old, render_json(manifest)


def released(team: Team, task_id: str) -> str:
    task = team.task(task_id)
    task.pop("owner", None)
    task.pop("claim", None)
    task["version"] = task["version"] + 1
    return render_json(task)


def two_task_txn(team: Team, **flags: Any) -> txn.Transaction:
    team.write_task("1", "first", owner="worker-2")
    team.write_task("2", "second", owner="worker-2")
    c_old, c_new, man_old, man_new = without_worker2(team)
    tasks = tuple(txn.TaskChange(t, (team.dir / "tasks" / f"task-{t}.json").read_text(), released(team, t))
                  for t in ("1", "2"))
    return txn.Transaction(base_generation=0, tasks=tasks, config=txn.Change(c_old, c_new),
                           manifest=txn.Change(man_old, man_new), **flags)


def under_barrier(team: Team, body: Any) -> Any:
    def program() -> Gen[Any]:
        return (yield from locks.with_barrier(team.paths, body))
    return lambda: program_of(program())


def run(team: Team, body: Any) -> m.Done:
    done, _ = drive(under_barrier(team, body), ScenarioExecutor(team.cwd, no_tmux))
    return done


def state_is(team: Team, new: bool) -> None:
    names = team.worker_names()
    manifest = team.manifest()
    assert manifest is not None
    manifest_names = [w["name"] for w in manifest["workers"]]
    owners = [team.task(t).get("owner") for t in ("1", "2")]
    if new:
        assert names == manifest_names == ["worker-1"] and owners == [None, None]
    else:
        assert names == manifest_names == ["worker-1", "worker-2"] and owners == ["worker-2", "worker-2"]


def test_commit_writes_everything_bumps_generation_and_deletes_journal(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    t = two_task_txn(team)
    done = run(team, lambda b: txn.commit(team.paths, b, t))
    assert done.outcome.status == "ok", done
    state_is(team, new=True)
    assert team.config()["config_generation"] == 1
    assert team.manifest()["config_generation"] == 1  # type: ignore[index]
    assert not team.journal_path().exists()
    assert not Path(team.paths.membership_lock).exists()


def test_commit_requires_the_barrier(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    t = two_task_txn(team)
    done, journal = drive(lambda: program_of(txn.commit(team.paths, None, t)), ScenarioExecutor(tmp_path, no_tmux))
    assert done.outcome.message == "membership_transaction_barrier_required:alpha"
    assert journal == []
    other = locks.Barrier("/elsewhere")
    done, _ = drive(lambda: program_of(txn.commit(team.paths, other, t)), ScenarioExecutor(tmp_path, no_tmux))
    assert done.outcome.message == "membership_transaction_barrier_required:alpha"
    state_is(team, new=False)


def test_stale_generation_refuses_the_writer(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    t = two_task_txn(team)
    team.update(lambda c: c.__setitem__("config_generation", 4))
    before = {p.name: p.read_bytes() for p in team.dir.rglob("*.json")}
    done = run(team, lambda b: txn.commit(team.paths, b, t))
    assert done.outcome.message == "team_membership_stale_generation:alpha:0:4"
    assert {p.name: p.read_bytes() for p in team.dir.rglob("*.json")} == before


def test_missing_config_is_reported(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    t = two_task_txn(team)
    (team.dir / "config.json").unlink()
    done = run(team, lambda b: txn.commit(team.paths, b, t))
    assert done.outcome.message == "team_config_missing:alpha"


def test_interruption_after_first_task_write_converges_new(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    t = two_task_txn(team, recover_to_new_on_failure=True, interrupt_after_first_task_write=True)
    done = run(team, lambda b: txn.commit(team.paths, b, t))
    assert done.outcome.message == "injected_scale_down_interruption:after-first-task-write"
    # torn on disk: task 1 new, task 2 and config old, journal committed
    assert team.task("1").get("owner") is None and team.task("2")["owner"] == "worker-2"
    assert json.loads(team.journal_path().read_text())["phase"] == "committed"
    done = run(team, lambda b: txn.load_team(team.paths, b))
    assert done.outcome.status == "ok"
    state_is(team, new=True)
    assert not team.journal_path().exists()


def test_prepared_interruption_converges_old(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    t = two_task_txn(team, interrupt_after_first_task_write=True)
    before = {p.name: p.read_bytes() for p in team.dir.rglob("*.json")}
    run(team, lambda b: txn.commit(team.paths, b, t))
    assert json.loads(team.journal_path().read_text())["phase"] == "prepared"
    run(team, lambda b: txn.recover(team.paths, b))
    state_is(team, new=False)
    assert {p.name: p.read_bytes() for p in team.dir.rglob("*.json")} == before


@pytest.mark.parametrize("after", ["config", "manifest", None])
def test_rollback_persistence_failure_recovers_on_next_read(tmp_path: Path, after: str | None) -> None:
    team = Team(tmp_path, "alpha", 2)
    flags: dict[str, Any] = {"recover_to_new_on_failure": True}
    if after is None:
        flags["fail_rollback_persistence"] = True
    else:
        flags["fail_rollback_persistence_after"] = after
    t = two_task_txn(team, **flags)
    done = run(team, lambda b: txn.commit(team.paths, b, t))
    assert done.outcome.message == "injected_scale_down_failure:rollback-persistence-failure"
    assert team.journal_path().exists()
    # partially old on disk: at least task 1 restored
    assert team.task("1")["owner"] == "worker-2"
    run(team, lambda b: txn.load_team(team.paths, b))
    state_is(team, new=True)


def test_finalize_deletes_a_committed_journal_only(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    t = two_task_txn(team, retain_journal_on_success=True)
    run(team, lambda b: txn.commit(team.paths, b, t))
    assert json.loads(team.journal_path().read_text())["phase"] == "committed"
    done = run(team, lambda b: txn.finalize(team.paths, b))
    assert done.outcome.status == "ok" and not team.journal_path().exists()
    state_is(team, new=True)
    journal = {"schemaVersion": 1, "phase": "prepared", "files": []}
    team.journal_path().write_text(json.dumps(journal))
    done = run(team, lambda b: txn.finalize(team.paths, b))
    assert done.outcome.message == "Cannot finalize non-committed membership transaction for alpha"


@pytest.mark.parametrize(("journal", "message"), [
    ({"schemaVersion": 2, "phase": "committed", "files": []}, "Invalid membership transaction journal for alpha"),
    ({"schemaVersion": 1, "phase": "done", "files": []}, "Invalid membership transaction journal for alpha"),
    ({"schemaVersion": 1, "phase": "committed", "files": {}}, "Invalid membership transaction journal for alpha"),
    ({"schemaVersion": 1, "phase": "committed", "files": [{"path": 3}]},
     "Invalid membership transaction file entry for alpha"),
    ({"schemaVersion": 1, "phase": "committed", "files": []},
     "Membership transaction must contain exactly one config path for alpha"),
    ({"schemaVersion": 1, "phase": "committed", "files": [{"path": "$T/../alpha/config.json", "oldBytes": None,
                                                           "newBytes": "{}"}]},
     "Invalid membership transaction path for alpha"),
    ({"schemaVersion": 1, "phase": "committed", "files": [{"path": "$T/events/x.json", "oldBytes": None,
                                                           "newBytes": "{}"}]},
     "Membership transaction path escapes expected team files for alpha"),
    ({"schemaVersion": 1, "phase": "committed", "files": [{"path": "$T/tasks/task-a.b.json", "oldBytes": None,
                                                           "newBytes": "{}"}]},
     "Invalid membership transaction task path for alpha"),
])
def test_invalid_journals_are_refused_and_nothing_is_written(tmp_path: Path, journal: Any, message: str) -> None:
    team = Team(tmp_path, "alpha", 2)
    text = json.dumps(journal).replace("$T", str(team.dir))
    team.journal_path().write_text(text)
    before = {p.name: p.read_bytes() for p in team.dir.rglob("*.json")}
    done = run(team, lambda b: txn.load_team(team.paths, b))
    assert done.outcome.message == message
    assert {p.name: p.read_bytes() for p in team.dir.rglob("*.json")} == before


def test_symlinked_tasks_dir_is_refused(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (team.dir / "tasks").rmdir()
    (team.dir / "tasks").symlink_to(foreign)
    journal = {"schemaVersion": 1, "phase": "committed", "files": [
        {"path": str(team.dir / "tasks" / "task-1.json"), "oldBytes": None, "newBytes": "{}"},
        {"path": str(team.dir / "config.json"), "oldBytes": None, "newBytes": "{}"}]}
    team.journal_path().write_text(json.dumps(journal))
    done = run(team, lambda b: txn.load_team(team.paths, b))
    assert done.outcome.message == "Membership transaction tasks root escapes canonical team root for alpha"
    assert list(foreign.iterdir()) == []


# ------------------------------------------------------------------------------------------- locks


def test_barrier_is_reentrant_structurally_and_released_on_failure(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)

    def inner(b: locks.Barrier) -> Gen[int]:
        def deeper(b2: locks.Barrier) -> Gen[int]:
            assert b2 is b
            yield from txn.read_text(team.paths.config)
            raise txn.fail("boom")
        return (yield from locks.with_barrier(team.paths, deeper, held=b))

    done, journal = drive(under_barrier(team, inner), ScenarioExecutor(tmp_path, no_tmux))
    assert done.outcome.message == "boom"
    ops = [e.step.op for e in journal]
    assert ops == ["lock", "read_file", "unlock"]
    assert not Path(team.paths.membership_lock).exists()


def test_lock_timeouts_have_omx_messages(tmp_path: Path) -> None:
    team = Team(tmp_path, "alpha", 2)
    timeout = m.Ack(ok=False, error="timeout")

    def first_step(factory: Any) -> m.Done:
        decision = decide(factory, [])
        assert isinstance(decision, m.Next)
        step = decision.steps[0]
        assert isinstance(step, m.AcquireLock)
        result = decide(factory, [m.Entry(step=step, observation=timeout)])
        assert isinstance(result, m.Done)
        return result

    def body() -> Gen[int]:
        return 1
        yield  # pragma: no cover

    scaling = first_step(lambda: program_of(locks.with_scaling_lock(team.paths, body)))
    assert scaling.outcome.message == "Timed out acquiring scaling lock for team alpha"
    barrier = first_step(lambda: program_of(locks.with_barrier(team.paths, lambda b: body())))
    assert barrier.outcome.message == "Timed out acquiring team task lock for alpha"
    claims = decide(lambda: program_of(locks.with_claim_locks(team.paths, ["10", "2"], body)), [])
    assert isinstance(claims, m.Next) and claims.steps[0] == m.AcquireLock(
        path=team.paths.claim_lock("2"), timeout_ms=5000, retry_ms=25, stale_ms=300_000)
    # second lock times out: the first is released, then omx's message
    s1 = claims.steps[0]
    d2 = decide(lambda: program_of(locks.with_claim_locks(team.paths, ["10", "2"], body)),
                [m.Entry(step=s1, observation=m.Ack(ok=True))])
    assert isinstance(d2, m.Next)
    s2 = d2.steps[0]
    d3 = decide(lambda: program_of(locks.with_claim_locks(team.paths, ["10", "2"], body)),
                [m.Entry(step=s1, observation=m.Ack(ok=True)), m.Entry(step=s2, observation=timeout)])
    assert isinstance(d3, m.Next) and d3.steps[0] == m.ReleaseLock(path=team.paths.claim_lock("2"))
    d4 = decide(lambda: program_of(locks.with_claim_locks(team.paths, ["10", "2"], body)),
                [m.Entry(step=s1, observation=m.Ack(ok=True)), m.Entry(step=s2, observation=timeout),
                 m.Entry(step=d3.steps[0], observation=m.Ack(ok=True))])
    assert isinstance(d4, m.Done)
    assert d4.outcome.message == "Timed out acquiring task claim lock for alpha/10"


def test_held_scaling_lock_dir_exists_inside_and_is_gone_after(tmp_path: Path) -> None:
    team = Team(tmp_path, "lock-test", 1)
    seen: list[bool] = []

    def body() -> Gen[int]:
        kind = yield m.Stat(path=team.paths.scaling_lock)
        seen.append(isinstance(kind, m.Value) and kind.value == "dir")
        return 42

    done, _ = drive(lambda: program_of(locks.with_scaling_lock(team.paths, body)), ScenarioExecutor(tmp_path, no_tmux))
    assert done.outcome.result == {"ok": True, "value": "42"}
    assert seen == [True]
    assert not Path(team.paths.scaling_lock).exists()


# ------------------------------------------------------------------------------------------ claims


def _claim(team: Team, task_id: str, worker: str, version: int | None) -> dict[str, Any]:
    from pure.omx.tasks import TaskClaimRequest
    from tests.omx_down.stub import run_op

    request = TaskClaimRequest(team=team.name, cwd=str(team.cwd), task_id=task_id, worker=worker,
                               expected_version=version)
    done, _ = run_op("team.task_claim", request, ScenarioExecutor(team.cwd, no_tmux))
    assert isinstance(done.outcome.result, dict)
    return done.outcome.result


def test_claim_takes_over_an_expired_lease_only(tmp_path: Path) -> None:
    team = Team(tmp_path, "lease", 2)
    expired = {"owner": "worker-2", "token": "old", "leased_until": "2020-01-01T00:00:00.000Z"}
    live = {"owner": "worker-2", "token": "old", "leased_until": "2999-01-01T00:00:00.000Z"}
    team.write_task("1", "expired", owner="worker-2", status="in_progress", claim=expired, version=3)
    team.write_task("2", "live", owner="worker-2", status="in_progress", claim=live, version=3)
    team.write_task("3", "done", status="completed")
    got = _claim(team, "1", "worker-1", 3)
    assert got["ok"] is True and got["task"]["owner"] == "worker-1" and got["task"]["version"] == 4
    assert got["task"]["claim"]["token"] == got["claimToken"] and got["task"]["claim"]["token"] != "old"
    assert _claim(team, "2", "worker-1", None) == {"ok": False, "error": "claim_conflict"}
    assert _claim(team, "3", "worker-1", None) == {"ok": False, "error": "already_terminal"}
    assert not list((team.dir / "claims").iterdir())


def test_claim_lock_held_elsewhere_is_a_conflict(tmp_path: Path) -> None:
    team = Team(tmp_path, "held", 2)
    team.write_task("1", "t")

    class TimeoutLocks(ScenarioExecutor):
        def execute(self, step: m.Step) -> m.Observation:
            if isinstance(step, m.AcquireLock) and step.path.endswith("task-1.lock"):
                return m.Ack(ok=False, error="timeout")
            return super().execute(step)

    from pure.omx.tasks import TaskClaimRequest
    from tests.omx_down.stub import run_op

    request = TaskClaimRequest(team="held", cwd=str(tmp_path), task_id="1", worker="worker-1")
    done, _ = run_op("team.task_claim", request, TimeoutLocks(tmp_path, no_tmux))
    assert done.outcome.result == {"ok": False, "error": "claim_conflict"}
    assert "owner" not in team.task("1")


def _effective_config(team: Team, barrier: Any) -> Any:
    """The recovered team's effective config, as the JSON text it renders to (what the golden keeps)."""
    state = yield from txn.load_team(team.paths, barrier)
    return None if state is None else render_json(to_json(state.config))


@pytest.mark.parametrize("after", ["config", "manifest"])
def test_i09_i10_rollback_persistence_golden(tmp_path: Path, goldens: Any, after: str) -> None:
    """Seed I09/I10: one task owned by worker-2; commit under the barrier with the injection."""
    from tests.harness import journal_json, normalize, snapshot_files

    team = Team(tmp_path, "txn-recover", 2)
    team.write_task("1", "owned", owner="worker-2")
    c_old, c_new, man_old, man_new = without_worker2(team)
    t = txn.Transaction(base_generation=0,
                        tasks=(txn.TaskChange("1", (team.dir / "tasks" / "task-1.json").read_text(),
                                              released(team, "1")),),
                        config=txn.Change(c_old, c_new), manifest=txn.Change(man_old, man_new),
                        recover_to_new_on_failure=True, fail_rollback_persistence_after=after)  # type: ignore[arg-type]
    executor = ScenarioExecutor(tmp_path, no_tmux)
    done, journal = drive(under_barrier(team, lambda b: txn.commit(team.paths, b, t)), executor)
    assert "rollback-persistence-failure" in done.outcome.message
    assert team.journal_path().exists()
    torn = snapshot_files(tmp_path, team.dir)
    done2, journal2 = drive(under_barrier(team, lambda b: _effective_config(team, b)), executor)
    assert done2.outcome.status == "ok"
    assert [w["name"] for w in team.config()["workers"]] == ["worker-1"]
    manifest = team.manifest()
    assert manifest is not None and [w["name"] for w in manifest["workers"]] == ["worker-1"]
    assert "owner" not in team.task("1")
    goldens.check(f"omx_down/txn_i09_i10_rollback_after_{after}", normalize({
        "commit": {"outcome": done.outcome.result, "journal": journal_json(journal, tmp_path)},
        "files_torn": torn,
        "recover": {"outcome": done2.outcome.result, "journal": journal_json(journal2, tmp_path)},
        "files_after": snapshot_files(tmp_path, team.dir)}, tmp_path))


def test_a_journal_that_is_not_json_is_malformed_state_and_a_bad_shape_is_oh_my_codexs_error() -> None:
    from returns.result import Failure

    unreadable = txn.parse_journal("{", "alpha", "/t/.membership-task-transaction.json")
    assert isinstance(unreadable, Failure) and isinstance(unreadable.failure(), txn.StateMalformed)
    assert unreadable.failure().outcome.message.startswith(
        "team_state_malformed:/t/.membership-task-transaction.json")
    shape = txn.parse_journal("[]", "alpha")
    assert isinstance(shape, Failure) and not isinstance(shape.failure(), txn.StateMalformed)
    assert shape.failure().outcome.message == "Invalid membership transaction journal for alpha"
