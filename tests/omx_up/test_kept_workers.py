"""Workers a scale-up's rollback had to keep (docs/scale-up.md, "Kept workers"): the rollback writes
each one's record, ``team status`` and ``team debt show`` list it, and ``team debt reconcile`` removes
it as a forced scale-down of it would — after its pane's proof, or into the scale-down's own debt
record. The kill that fails is scripted (stub tmux): real tmux does not refuse a kill on demand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pure import model as m
from pure.omx.scale_down import DebtRequest, debt_reconcile_program, debt_show_program
from pure.omx.scale_up import scale_up
from pure.team import TeamStatusRequest, team_status
from tests.harness import ScenarioExecutor, run_scenario
from tests.omx_up.fixtures import E_UP, StubTmux, UpTeam, request

RECORD = "runtime/worker-2.intent"


def _kept(tmp_path: Path) -> tuple[UpTeam, StubTmux]:
    """A team whose scale-up of one failed at its trigger and could not kill the new pane %31."""
    team, tmux = UpTeam(tmp_path), StubTmux(send_fails=True, kill_keeps=True)
    done, _ = run_scenario(lambda: scale_up(request(team)), ScenarioExecutor(tmp_path, tmux))
    assert done.outcome.message.startswith("scale_up_rollback_cleanup_debt:pane_teardown_failed:%31"), done
    assert team.worker_names() == ["worker-1", "worker-2"]
    return team, tmux


def _run(team: UpTeam, tmux: StubTmux, program: Any) -> dict[str, Any]:
    done, _ = run_scenario(lambda: program, ScenarioExecutor(team.cwd, tmux))
    result = done.outcome.result
    assert isinstance(result, dict), done
    return {**result, "_status": done.outcome.status, "_debt": [d.kind for d in done.debt]}


def _debt_request(team: UpTeam) -> DebtRequest:
    return DebtRequest(team=team.name, cwd=str(team.cwd), env=E_UP)


def test_the_rollback_records_a_kept_worker_and_every_read_lists_it(tmp_path: Path) -> None:
    team, tmux = _kept(tmp_path)
    record = json.loads((team.dir / RECORD).read_text())
    assert record == {"kind": "kept", "worker": "worker-2", "script": str(team.dir / "runtime/worker-2-startup.sh"),
                      "pane_id": "%31", "pid": 42424, "debt": ["pane_teardown_failed"], "reason": record["reason"]}
    assert record["reason"].startswith("scale_up_dispatch_failed:worker-2:tmux_send_keys_failed:"), record
    status = _run(team, tmux, team_status(TeamStatusRequest(team=team.name, cwd=str(team.cwd), env=E_UP)))
    listed = [{"worker": "worker-2", "paneId": "%31", "pid": 42424, "debt": ["pane_teardown_failed"],
               "reason": record["reason"]}]
    assert status["keptWorkers"] == listed and status["healthy"] is False and status["_status"] == "debt"
    shown = _run(team, tmux, debt_show_program(_debt_request(team)))
    assert shown["leftovers"]["keptWorkers"] == listed


def test_debt_reconcile_removes_a_kept_worker_once_its_pane_is_proven(tmp_path: Path) -> None:
    team, tmux = _kept(tmp_path)
    tmux.kill_keeps = False  # the pane can be killed now
    answer = _run(team, tmux, debt_reconcile_program(_debt_request(team)))
    assert answer["keptWorkers"] == {"workers": ["worker-2"], "removed": ["worker-2"]}, answer
    assert answer["_status"] == "ok" and tmux.killed == {"%31"}
    assert team.worker_names() == ["worker-1"]
    assert not (team.dir / RECORD).exists() and not (team.dir / "workers" / "worker-2").exists()
    status = _run(team, tmux, team_status(TeamStatusRequest(team=team.name, cwd=str(team.cwd), env=E_UP)))
    assert "keptWorkers" not in status and status["debt"] is None


def test_a_pane_that_still_cannot_be_killed_moves_into_the_scale_downs_debt_record(tmp_path: Path) -> None:
    team, tmux = _kept(tmp_path)
    answer = _run(team, tmux, debt_reconcile_program(_debt_request(team)))
    assert answer["keptWorkers"]["removed"] == ["worker-2"] and answer["_status"] == "debt", answer
    assert "tmux_pane" in answer["_debt"]
    debt = json.loads((team.dir / ".scale-down-cleanup-debt.json").read_text())
    assert [p["pane_id"] for p in debt["unresolved_panes"]] == ["%31"]
    assert team.worker_names() == ["worker-1"] and not (team.dir / RECORD).exists()
    tmux.kill_keeps = False
    again = _run(team, tmux, debt_reconcile_program(_debt_request(team)))
    assert again["_status"] == "ok" and not (team.dir / ".scale-down-cleanup-debt.json").exists(), again


def test_a_kept_worker_the_team_cannot_lose_stays_kept_as_debt(tmp_path: Path) -> None:
    team, tmux = _kept(tmp_path)
    for name in ("config.json", "manifest.v2.json"):  # worker-1 gone: a scale-down may not empty the team
        data = json.loads((team.dir / name).read_text())
        data["workers"] = [w for w in data["workers"] if w["name"] != "worker-1"]
        data["worker_count"] = len(data["workers"])
        (team.dir / name).write_text(json.dumps(data, indent=2))
    tmux.kill_keeps = False
    answer = _run(team, tmux, debt_reconcile_program(_debt_request(team)))
    assert answer["keptWorkers"]["removed"] == [] and "at least 1 must remain" in answer["keptWorkers"]["error"]
    assert answer["_status"] == "debt" and "kept_worker" in answer["_debt"]
    assert team.worker_names() == ["worker-2"] and (team.dir / RECORD).exists()


def test_the_stray_sweep_keeps_a_kept_workers_record(tmp_path: Path) -> None:
    """A scale-up's sweep (pure/omx/strays.py) forgets the intents it is done with, never this record."""
    team, tmux = _kept(tmp_path)
    tmux.send_fails, tmux.splits = False, ["%32"]
    tmux.snapshot = lambda _call, killed: m.Proc(exit_code=0, stdout="".join(
        f"{pane}\t0\t{pid}\n" for pane, pid in (("%11", 42411), ("%21", 42421), ("%31", 42424), ("%32", 42432))
        if pane not in killed))
    done, _ = run_scenario(lambda: scale_up(request(team)), ScenarioExecutor(team.cwd, tmux))
    assert done.outcome.status == "ok", done
    assert team.worker_names() == ["worker-1", "worker-2", "worker-3"]
    assert json.loads((team.dir / RECORD).read_text())["kind"] == "kept"
