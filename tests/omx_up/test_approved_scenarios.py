"""Scale-up with a persisted approved-execution binding: seed scenarios D09, D10, D11, F05, F06.

Fixtures are the seed's (``prepareScaleUpApprovedBindingState``, see ``tests/omx_up/test_approved.py``);
the stub tmux is STUB-OK. D09/D10/F05/F06 are frozen as decision goldens under
``tests/goldens/omx_up/approved_*.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import Goldens
from tests.omx_up.fixtures import StubTmux, UpTeam, dispatch, request, run, task
from tests.omx_up.test_approved import BINDING, CASES, _seed_state

HEADING = "## Approved Handoff Context"
BASELINE = "Use the approved plan and matching test specs as the execution baseline"
BLOCKED = ("malformed", "stale", "ambiguous", "missing-baseline")
APPROVED = ("plan-only", "incomplete", "invalid", "ready")


def prepare(team: UpTeam, case: dict[str, object]) -> None:
    files = case.get("files", {})
    assert isinstance(files, dict)
    for rel, text in files.items():
        path = team.dir / "approved-execution.json" if rel == BINDING else team.cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("$CWD", str(team.cwd)), encoding="utf-8")


def expected_error(state: str, cwd: Path, team: str) -> str:
    if state == "malformed":
        return f"approved_execution_binding_malformed:{team}"
    # oh-my-codex 0.20.3: the seed's ambiguous fixture has no test spec, so it resolves stale.
    return (f"approved_execution_binding_stale:{cwd}/.omx/plans/prd-{state}.md:"
            f"Execute {state} scale-up handoff")


def assert_refused_before_tmux(team: UpTeam, out: object, error: str) -> None:
    assert out.result == {"ok": False, "error": error}  # type: ignore[attr-defined]
    assert out.sequence() == "V"  # type: ignore[attr-defined]
    config = team.config()
    assert [w["name"] for w in config["workers"]] == ["worker-1"]
    assert config["worker_count"] == 1 and config["next_worker_index"] == 2
    assert list((team.dir / "tasks").iterdir()) == []
    assert not (team.dir / "workers" / "worker-2").exists()


@pytest.mark.parametrize(("state", "golden"), [("ambiguous", "approved_d09_ambiguous"),
                                               ("missing-baseline", "approved_d10_missing_baseline")])
def test_d09_d10_unresolvable_binding_refused_after_tmux_version_only(
        tmp_path: Path, goldens: Goldens, state: str, golden: str) -> None:
    team = UpTeam(tmp_path)
    prepare(team, _seed_state(state))
    out = run(team, request(team, tasks=(task(f"Execute {state} scale-up handoff"),)), StubTmux(),
              golden=(goldens, golden))
    assert_refused_before_tmux(team, out, expected_error(state, tmp_path, team.name))


def _success_sequence(count: int) -> str:
    parts = ["V L L S(%21) L SPLIT(%21) L L TAG(%31) " + dispatch("%31")]
    parts += ["L S(%31) L SPLIT(%31) L L TAG(%31) " + dispatch("%31")] * (count - 1)
    return " ".join(parts)


@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("state", ["missing", *BLOCKED, *APPROVED])
def test_d11_approved_binding_state_by_count(tmp_path: Path, state: str, count: int) -> None:
    team = UpTeam(tmp_path)
    if state != "missing":
        prepare(team, _seed_state(state))
    tasks = tuple(task(f"Implement {state} follow-up {i}/{count}", owner=f"worker-{i}") for i in range(2, count + 2))
    out = run(team, request(team, count=count, tasks=tasks), StubTmux())
    if state in BLOCKED:
        assert_refused_before_tmux(team, out, expected_error(state, tmp_path, team.name))
        return
    assert out.result["ok"] is True, out.result
    assert out.result["newWorkerCount"] == 1 + count and out.result["nextWorkerIndex"] == 2 + count
    assert out.sequence() == _success_sequence(count)
    assert len(out.commands("split-window")) == count
    assert len(list((team.dir / "tasks").iterdir())) == count
    for i in range(2, count + 2):
        inbox = (team.dir / "workers" / f"worker-{i}" / "inbox.md").read_text()
        assert f"Implement {state} follow-up {i}/{count}" in inbox
        assert (HEADING in inbox) is (state != "missing")
        if state != "missing":
            assert f"- Approved plan: {tmp_path}/.omx/plans/prd-{state}.md" in inbox and BASELINE in inbox


def test_f05_plan_only_binding_puts_the_baseline_in_the_inbox(tmp_path: Path, goldens: Goldens) -> None:
    team = UpTeam(tmp_path)
    prepare(team, _seed_state("plan-only"))
    out = run(team, request(team, tasks=(task("Implement plan-only follow-up"),)), StubTmux(),
              golden=(goldens, "approved_f05_plan_only"))
    assert out.result["ok"] is True, out.result
    assert out.commands("split-window")
    inbox = (team.dir / "workers" / "worker-2" / "inbox.md").read_text()
    assert "Implement plan-only follow-up" in inbox and HEADING in inbox and BASELINE in inbox
    assert "Approved context pack" not in inbox and "Context pack index" not in inbox


def test_f06_ready_binding_carries_plan_specs_and_repository_context(tmp_path: Path, goldens: Goldens) -> None:
    team = UpTeam(tmp_path)
    prepare(team, json.loads(json.dumps(CASES["f06_repo_context_sidecar"])))
    out = run(team, request(team, tasks=(task("Implement approved follow-up"),)), StubTmux(),
              golden=(goldens, "approved_f06_ready_context"))
    assert out.result["ok"] is True, out.result
    assert out.commands("split-window")
    inbox = (team.dir / "workers" / "worker-2" / "inbox.md").read_text()
    plans = tmp_path / ".omx" / "plans"
    assert HEADING in inbox and BASELINE in inbox
    assert f"Approved plan: {plans}/prd-issue-1410.md" in inbox
    assert f"Test specs: {plans}/test-spec-issue-1410.md" in inbox
    assert f"Approved repository context summary source: {plans}/repo-context-issue-1410.md" in inbox
    assert "Read the approved repository slice first." in inbox
    for absent in ("Approved context pack", "Build refs", "Verify refs", "Scope refs", "query the canonical pack",
                   "Context pack index"):
        assert absent not in inbox


def test_truly_ambiguous_binding_uses_oh_my_codex_ambiguous_error(tmp_path: Path) -> None:
    team = UpTeam(tmp_path)
    prepare(team, CASES["ambiguous_with_test_spec"])
    out = run(team, request(team, tasks=(task("x"),)), StubTmux())
    assert_refused_before_tmux(team, out, f"approved_execution_binding_ambiguous:{tmp_path}/.omx/plans/prd-x.md:Do x")
