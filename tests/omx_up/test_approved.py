"""The approved-execution binding resolver (``pure/omx/approved.py``) against oh-my-codex's own.

``tests/goldens/omx_up/approved.json`` holds, for every fixture plan directory of ``CASES``, what
oh-my-codex 0.20.3's ``resolvePersistedApprovedTeamExecutionContinuityState`` +
``buildApprovedTeamHandoffSection`` (and scale-up's gate error) answered. Regenerate it with
``python -m tests.omx_up.test_approved /tmp/omx/package/dist`` (needs node).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pure.omx import approved
from shell.run.executor import Executor

GOLDEN = Path(__file__).resolve().parents[1] / "goldens" / "omx_up" / "approved.json"
TEAM = "t"
BINDING = ".omx/state/team/t/approved-execution.json"
PLANS = ".omx/plans"


def _binding(prd: str, task: str, command: str | None = None) -> str:
    value: dict[str, str] = {"prd_path": prd, "task": task}
    if command is not None:
        value["command"] = command
    return json.dumps(value, indent=2) + "\n"


def _seed_state(state: str) -> dict[str, Any]:
    """The seed test's ``prepareScaleUpApprovedBindingState`` fixtures (context packs as PRD text)."""
    task = f"Execute {state} scale-up handoff"
    prd, spec = f"{PLANS}/prd-{state}.md", f"{PLANS}/test-spec-{state}.md"
    command = f'omx team 1:executor "{task}"'
    if state == "malformed":
        return {"files": {BINDING: '{"prd_path":42}\n'}}
    if state == "stale":
        return {"files": {BINDING: _binding(f"$CWD/{prd}", task, command), f"{PLANS}/.keep": ""}}
    if state == "ambiguous":
        text = "\n".join(["# Approved plan", "", f'Launch via omx team 1:executor "{task}"',
                          f'Launch via omx team 2:writer "{task}"'])
        return {"files": {BINDING: _binding(f"$CWD/{prd}", task), prd: text}}
    lines = ["# Approved plan", ""]
    if state in ("incomplete", "invalid", "ready"):
        lines.extend(["## Context Pack Outcome", "",
                      f"- pack: created `.omx/context/context-20260507T120000Z-{state}.json`", ""])
    lines.append(f'Launch via omx team 1:executor "{task}"')
    files = {BINDING: _binding(f"$CWD/{prd}", task, command), prd: "\n".join(lines)}
    if state != "missing-baseline":
        files[spec] = f"# {state} test spec\n" if state != "invalid" else "# invalid drifted test spec\n"
    if state in ("incomplete", "invalid", "ready"):
        files[f".omx/context/context-20260507T120000Z-{state}.json"] = json.dumps({"slug": state}) + "\n"
    return {"files": files}


def _plan(prd_text: str, *, name: str = "x", spec: str | None = "test-spec-x.md", task: str = "Do x",
          command: str | None = None, prd_path: str | None = None, extra: dict[str, str] | None = None) -> dict[str, Any]:
    files = {f"{PLANS}/prd-{name}.md": prd_text,
             BINDING: _binding(prd_path or f"$CWD/{PLANS}/prd-{name}.md", task, command)}
    if spec is not None:
        files[f"{PLANS}/{spec}"] = "# spec\n"
    files.update(extra or {})
    return {"files": files}


LINE = 'Launch via omx team 1:executor "Do x"'
CASES: dict[str, dict[str, Any]] = {
    **{f"seed_{state}": _seed_state(state) for state in
       ("malformed", "stale", "ambiguous", "missing-baseline", "plan-only", "incomplete", "invalid", "ready")},
    "seed_missing": {"files": {f"{PLANS}/prd-x.md": LINE}},
    "f06_repo_context_sidecar": _plan(
        "\n".join(["# Approved plan", "", "## Context Pack Outcome", "",
                   "- pack: created `.omx/context/context-20260507T120000Z-issue-1410.json`", "",
                   'Launch via omx team 1:executor "Execute approved issue 1410 plan"']),
        name="issue-1410", spec="test-spec-issue-1410.md", task="Execute approved issue 1410 plan",
        command='omx team 1:executor "Execute approved issue 1410 plan"',
        extra={f"{PLANS}/repo-context-issue-1410.md": "Read the approved repository slice first.\n"}),
    "not_json": {"files": {BINDING: "{nope"}},
    "blank_task": {"files": {BINDING: '{"prd_path": "/x/prd-x.md", "task": "   "}'}},
    "array_binding": {"files": {BINDING: "[]"}},
    "task_not_string": {"files": {BINDING: '{"prd_path": "/x/prd-x.md", "task": 3}'}},
    "padded_binding_fields": _plan(LINE, prd_path=f"  $CWD/{PLANS}/prd-x.md \t", task="  Do x  ",
                                   command="   "),
    "ambiguous_with_test_spec": _plan("\n".join([LINE, 'Or omx team 2:writer "Do x"'])),
    "command_picks_one_of_two": _plan("\n".join([LINE, 'Or omx team 2:writer "Do x"']),
                                      command='omx team 2:writer "Do x"'),
    "command_normalised_case_and_spaces": _plan('Run $TEAM  RALPH 3:Writer   "Do x" now',
                                                command='$team ralph 3:Writer "Do x"'),
    "command_exact_duplicate_is_ambiguous": _plan("\n".join([LINE, LINE]), command='omx team 1:executor "Do x"'),
    "command_other_task": _plan(LINE, command='omx team 1:executor "Do y"'),
    "command_not_a_launch_line": _plan(LINE, command="something else"),
    "task_mismatch": _plan('omx team 1 "Do something else"'),
    "single_quotes_and_escapes": _plan("omx team 2 'Do \\'x\\''", task="Do 'x'"),
    "escaped_double_quotes": _plan('omx team 2 "Say \\"hi\\""', task='Say "hi"'),
    "line_in_fence": _plan("\n".join(["```bash", LINE, "```"])),
    "line_in_tilde_fence_unclosed_by_backticks": _plan("\n".join(["~~~~", "```", LINE, "~~~"])),
    "line_after_fence": _plan("\n".join(["```", "x", "```", LINE])),
    "line_in_comment": _plan("\n".join(["<!-- hidden", LINE, "-->"])),
    "line_after_comment": _plan("\n".join(["<!-- hidden -->", LINE])),
    "line_indented": _plan("    " + LINE),
    "line_three_spaces": _plan("   " + LINE),
    "line_spans_chunk": _plan('omx team 1\n"Do x"'),
    "dollar_team": _plan('$team 4:test-engineer "Do x"'),
    "no_test_spec": _plan(LINE, spec=None),
    "unrelated_test_spec": _plan(LINE, spec="test-spec-y.md"),
    "legacy_testspec_names": _plan(LINE, spec="testspec-x.md", extra={
        f"{PLANS}/TEST-SPEC-x.md": "#\n", f"{PLANS}/test-spec-x.md": "#\n", f"{PLANS}/test-spec-xx.md": "#\n"}),
    "timestamped_prd": _plan(LINE, name="20260101T000000Z-x", spec="test-spec-20260101T000000Z-x.md"),
    "timestamped_prd_legacy_spec_only": _plan(LINE, name="20260101T000000Z-x", spec="test-spec-x.md"),
    "relative_from_root": _plan(LINE, prd_path=f"{PLANS}/prd-x.md"),
    "relative_from_plans": _plan(LINE, prd_path="prd-x.md"),
    "relative_escaping_root": _plan(LINE, prd_path="../prd-x.md"),
    "absolute_unnormalised": _plan(LINE, prd_path="$CWD/.omx/./plans/../plans/prd-x.md"),
    "prd_not_a_prd_name": {"files": {f"{PLANS}/plan-x.md": LINE, f"{PLANS}/test-spec-x.md": "#\n",
                                     BINDING: _binding(f"$CWD/{PLANS}/plan-x.md", "Do x")}},
    "prd_is_directory": {"files": {f"{PLANS}/prd-x.md/inner": "", f"{PLANS}/test-spec-x.md": "#\n",
                                   BINDING: _binding(f"$CWD/{PLANS}/prd-x.md", "Do x")}},
    "symlinked_binding_path": {**_plan(LINE, prd_path="$CWD/alias/prd-x.md"), "symlinks": {"alias": PLANS}},
    "inline_repo_context": _plan("\n".join([
        "# Plan", "", "## Approved Repository Context Summary  ", "", "Touch only src/a.py.   ",
        "### Detail", "kept", "## Next", "not kept", LINE])),
    "inline_repo_context_deeper_heading": _plan("\n".join([
        "### approved repository context summary", "first", "#### sub", "kept", "## Up", LINE])),
    "empty_sidecar_falls_back_to_inline": _plan("\n".join([
        "# Approved Repository Context Summary", "inline", LINE]), extra={f"{PLANS}/repo-context-x.md": " \n\n"}),
    "sidecar_truncated_lines": _plan(LINE, extra={
        f"{PLANS}/repo-context-x.md": "\n".join(f"line {i}" for i in range(100)) + "\n"}),
    "sidecar_truncated_chars": _plan(LINE, extra={f"{PLANS}/repo-context-x.md": ("ab " * 1500) + "\n"}),
    "sidecar_crlf": _plan(LINE, extra={f"{PLANS}/repo-context-x.md": "one  \r\ntwo\r\n"}),
    "ultragoal_in_prd": _plan("\n".join(["Tracks .omx/ultragoal goal G012-runtime per-story.", LINE])),
    "ultragoal_without_id": _plan("\n".join(["Ultragoal aggregate.", LINE])),
    "ultragoal_in_task": _plan('omx team 1 "Advance ultragoal G003"', task="Advance ultragoal G003"),
    "newest_binding_not_latest_prd": {"files": {
        f"{PLANS}/prd-a.md": LINE, f"{PLANS}/test-spec-a.md": "#\n",
        f"{PLANS}/prd-b.md": LINE, f"{PLANS}/test-spec-b.md": "#\n",
        BINDING: _binding(f"$CWD/{PLANS}/prd-a.md", "Do x")}},
}


# ------------------------------------------------------------------------------------- fixtures


def build_fixture(root: Path, case: dict[str, Any]) -> None:
    for rel, text in case.get("files", {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("$CWD", str(root)), encoding="utf-8")
    for rel, target in case.get("symlinks", {}).items():
        (root / rel).symlink_to(root / target)
    (root / ".omx" / "state" / "team" / TEAM).mkdir(parents=True, exist_ok=True)


def ours(root: Path) -> dict[str, Any]:
    executor = Executor(env={})
    program = approved.resolve_binding(str(root / BINDING), str(root))
    try:
        step = next(program)
        while True:
            step = program.send(executor.execute(step))
    except StopIteration as stop:
        resolution: approved.Resolution = stop.value
    section = resolution.hint and approved.handoff_section(resolution.hint)
    result = {"status": resolution.status, "error": resolution.error(TEAM), "section": section}
    return json.loads(json.dumps(result).replace(str(root), "$CWD"))


ORACLE = r"""
import { join } from 'node:path';
const dist = process.argv[2];
const { resolvePersistedApprovedTeamExecutionContinuityState: resolve, buildApprovedTeamHandoffSection: section } =
  await import(join(dist, 'team', 'approved-execution.js'));
const team = process.argv[3];
const cwd = process.cwd();
const state = await resolve(team, cwd, join(cwd, '.omx', 'state'));
// scale-up's gate (resolveScaleUpApprovedExecutionGate in dist/team/scaling.js)
const error = state.status === 'malformed' ? `approved_execution_binding_malformed:${team}`
  : (state.status === 'stale' || state.status === 'ambiguous')
    ? `approved_execution_binding_${state.status}:${state.binding.prd_path}:${state.binding.task}` : null;
process.stdout.write(JSON.stringify({ status: state.status, error,
  section: state.status === 'valid' ? (section(state.approvedHint) ?? null) : null }));
"""


def generate(dist: str) -> None:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "oracle.mjs"
        script.write_text(ORACLE)
        for name, case in CASES.items():
            root = Path(tmp) / name
            root.mkdir()
            build_fixture(root, case)
            answer = subprocess.run(["node", str(script), dist, TEAM], cwd=root, capture_output=True, text=True,
                                    env={**os.environ, "OMX_RUNTIME_BRIDGE": "0"}, check=True).stdout
            out[name] = json.loads(answer.replace(str(root), "$CWD"))
    GOLDEN.write_text(json.dumps({
        "kind": "function",
        "function": "pure.omx.approved.resolve_binding",
        "format_version": "1.0",
        "comment": "oh-my-codex 0.20.3's resolvePersistedApprovedTeamExecutionContinuityState and "
                   "buildApprovedTeamHandoffSection run by node (OMX_RUNTIME_BRIDGE=0) in each fixture directory "
                   "of CASES in tests/omx_up/test_approved.py, plus scale-up's gate error; $CWD is the fixture "
                   "directory. Regenerate: python -m tests.omx_up.test_approved /tmp/omx/package/dist",
        "cases": {name: {"fixture": CASES[name], "expected": out[name]} for name in CASES},
    }, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _golden_cases() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]


def test_golden_covers_every_case() -> None:
    assert set(_golden_cases()) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_resolver_matches_oh_my_codex(tmp_path: Path, name: str) -> None:
    golden = _golden_cases()[name]
    assert golden["fixture"] == json.loads(json.dumps(CASES[name])), "fixture changed: regenerate the golden"
    build_fixture(tmp_path, CASES[name])
    assert ours(tmp_path) == golden["expected"]


def test_golden_states_cover_the_seed_model() -> None:
    cases = _golden_cases()
    assert {cases[f"seed_{s}"]["expected"]["status"] for s in ("ambiguous", "missing-baseline", "stale")} == {"stale"}
    assert {cases[f"seed_{s}"]["expected"]["status"]
            for s in ("plan-only", "incomplete", "invalid", "ready")} == {"valid"}
    assert cases["ambiguous_with_test_spec"]["expected"]["status"] == "ambiguous"


if __name__ == "__main__":
    generate(sys.argv[1])
