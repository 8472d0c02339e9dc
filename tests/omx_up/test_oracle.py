"""Differential test: panefleet's scale-up against oh-my-codex 0.20.3 itself.

``tests/goldens/omx_up/oracle/*.json`` were produced by running oh-my-codex's own ``scaleUp`` on
the same starting files with the same stub tmux (``python -m tests.omx_up.oracles.gen_oracle
<dist>``). Here the same scenario runs through panefleet and must give the same result, the same
tmux calls outside dispatch (proofs, splits, tags, kills, in order), and byte-identical files
(timestamps and ids masked) — config, manifest, tasks, identity, dispatch requests, events,
startup scripts, the transaction journal and the delivery log. Not compared, by design: the inbox
text; the keystroke choreography inside dispatch (oh-my-codex adds pane
captures and a second Enter) is compared only in that every keystroke has its ``L, S, L``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pure import model as m
from pure.omx import txn
from pure.omx.locks import with_barrier
from pure.omx.scale_up import ScaleUpRequest, TaskSpec, scale_up
from pure.program import Program
from tests.harness import ScenarioExecutor, run_scenario
from tests.omx_up.oracles.normalise import files, norm, phases, tmux_calls_as_oh_my_codex_makes_them
from tests.omx_up.oracles.scenarios import SCENARIOS, call, setup
from tests.omx_up.oracles.stub_tmux import answer

GOLDENS = Path(__file__).resolve().parents[1] / "goldens" / "omx_up" / "oracle"


def _request(raw: dict[str, Any], node_path: str, home: Path) -> ScaleUpRequest:
    tasks = tuple(TaskSpec(subject=t["subject"], description=t["description"], owner=t.get("owner"),
                           role=t.get("role"), blocked_by=tuple(t["blocked_by"]) if "blocked_by" in t else None)
                  for t in raw["tasks"])
    return ScaleUpRequest(team=raw["team"], count=raw["count"], cwd=raw["cwd"], agent_type=raw["agentType"],
                          tasks=tasks, env={**raw["env"], "HOME": str(home)}, node_path=node_path,
                          existing_shells=("/bin/bash",))


class Stub:
    def __init__(self, scenario: dict[str, Any]) -> None:
        self.scenario = scenario
        self.state: dict[str, Any] = {}

    def __call__(self, args: tuple[str, ...]) -> m.Proc:
        code, stdout, stderr = answer(self.scenario, self.state, list(args))
        return m.Proc(exit_code=code, stdout=stdout, stderr=stderr)


def _without_result_lines(files: dict[str, str]) -> dict[str, str]:
    """The files, the delivery log's ``dispatch_result`` lines left out."""
    return {k: "".join(line for line in v.splitlines(keepends=True) if '"event":"dispatch_result"' not in line)
            if k.startswith(".omx/logs/") else v for k, v in files.items()}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scale_up_matches_oh_my_codex(tmp_path: Path, name: str) -> None:
    golden = json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))
    cwd = tmp_path / "work"
    cwd.mkdir()
    setup(name, cwd)
    assert files(cwd) == golden["files_before"]
    request = _request(call(name, cwd), golden["node_path"], tmp_path / "home")
    executor = ScenarioExecutor(cwd, Stub(SCENARIOS[name]["stub"]))
    done, journal = run_scenario(lambda: scale_up(request), executor)
    assert norm(done.outcome.result, cwd) == golden["result"]
    ours = phases(norm(tmux_calls_as_oh_my_codex_makes_them(journal), cwd))
    theirs = phases(golden["tmux"])
    assert ours == theirs
    for index, args in enumerate(executor.tmux_log):  # every keystroke behind its own L, S, L
        if args[0] == "send-keys":
            proof = [a[0] for a in executor.tmux_log[index - 3:index]]
            assert proof == ["list-panes", "show-option", "list-panes"]
    after = files(cwd)
    # Designed difference: panefleet writes the worker instructions file a launch points at when it is
    # missing (pure/omx/instructions.py); oh-my-codex's scale-up expects its team start to have written it.
    instructions_file = ".omx/state/team/scale-up/worker-agents.md"
    if instructions_file not in golden["files_after"] and instructions_file in after:
        assert after.pop(instructions_file).startswith("<!-- OMX:TEAM:WORKER:START -->")
    for ours_text, theirs_text in SCENARIOS[name].get("ours", {}).items():  # designed differences only
        after = {k: v.replace(ours_text, theirs_text) for k, v in after.items()}
    expected = golden["files_after"]
    if SCENARIOS[name].get("log_result_differs"):
        after, expected = _without_result_lines(after), _without_result_lines(expected)
    assert after == expected
    if golden["files_after_read"] is not None:
        paths = txn.TeamPaths(str(cwd / ".omx" / "state"), "scale-up")  # type: ignore[attr-defined]

        def public_read() -> Program:
            yield from with_barrier(paths, lambda b: txn.load_team(paths, b))
            return m.Done(outcome=m.Outcome(status="ok"))

        run_scenario(public_read, ScenarioExecutor(cwd, Stub({})))
        read = files(cwd)
        if instructions_file not in golden["files_after_read"]:
            read.pop(instructions_file, None)
        assert read == golden["files_after_read"]
