"""Differential goldens: oh-my-codex 0.20.3 itself ran these scenarios (``oracles/gen_oracle.py``);
panefleet must give the same results, the same tmux calls and byte-identical files (timestamps and
uuids masked)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pure import model as m
from pure.omx.scale_down import DebtRequest, ScaleDownRequest
from pure.omx.tasks import TaskClaimRequest, TaskCreateRequest
from tests.harness import ScenarioExecutor
from tests.omx_down.oracles.normalise import files, norm, tmux_calls_without_transcripts
from tests.omx_down.oracles.scenarios import ENV, SCENARIOS
from tests.omx_down.oracles.stub_tmux import answer
from tests.omx_down.stub import run_op


class HexIds(ScenarioExecutor):
    """FreshId answers like the real shell (32 hex digits), deterministically."""

    def execute(self, step: m.Step) -> m.Observation:
        if isinstance(step, m.FreshId):
            self.ids += 1
            return m.Value(value=f"{self.ids:032x}")
        return super().execute(step)


GOLDENS = Path(__file__).resolve().parents[1] / "goldens" / "omx_down" / "oracle"


def request_for(call: dict[str, Any], team: str, cwd: Path) -> tuple[str, object]:
    fn = call["fn"]
    if fn == "scaleDown":
        options = call["options"]
        return "team.scale_down", ScaleDownRequest(
            team=team, cwd=str(cwd), env={**ENV, **call.get("env", {})},
            worker_names=tuple(options.get("workerNames", ())), count=options.get("count"),
            force=bool(options.get("force")))
    if fn == "reconcile":
        return "team.debt_reconcile", DebtRequest(team=team, cwd=str(cwd))
    if fn == "createTask":
        task = call["task"]
        return "team.task_create", TaskCreateRequest(
            team=team, cwd=str(cwd), subject=task["subject"], description=task["description"],
            owner=task.get("owner"), status=task.get("status"),
            blocked_by=tuple(task["blocked_by"]) if "blocked_by" in task else None)
    assert fn == "claimTask"
    return "team.task_claim", TaskClaimRequest(team=team, cwd=str(cwd), task_id=call["taskId"],
                                               worker=call["worker"], expected_version=call["expectedVersion"])


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_as_oh_my_codex(tmp_path: Path, name: str) -> None:
    expected = json.loads((GOLDENS / f"{name}.json").read_text())
    scenario = SCENARIOS[name]
    cwd = tmp_path.resolve() / "work"
    cwd.mkdir()
    scenario["setup"](cwd)
    spec: dict[str, Any] = json.loads(json.dumps(scenario["stub"]))

    def tmux(args: tuple[str, ...]) -> m.Proc:
        code, out, err = answer(spec, list(args))
        return m.Proc(exit_code=code, stdout=out, stderr=err)

    got = []
    for call in scenario["calls"]:
        if "stub" in call:
            spec = json.loads(json.dumps(call["stub"]))
            continue
        op, request = request_for(call, scenario["team"], cwd)
        done, journal = run_op(op, request, HexIds(tmp_path, tmux))
        got.append({"fn": call["fn"], "result": norm(done.outcome.result, cwd),
                    "tmux": tmux_calls_without_transcripts(journal)})
    assert got == expected["calls"]
    assert files(cwd) == expected["files_after"]
