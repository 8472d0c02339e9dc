"""The ``panefleet decide`` golden (tests/goldens/tmux/decide.json) and the corpus manifest.

``decide.json`` pins what ``panefleet decide`` reads and answers for ``tmux.teardown``: the input
checks in their order, every decoding problem class (with its path), absurd numbers, and a few
answers. An unknown operation is not in it: that message quotes the name the way cli.py does
(``docs/ports.md``, "panefleet decide").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pure import model as m
from pure.tmux import PANE_FORMAT
from tests.harness import GOLDEN_ROOT, Goldens
from tests.ports.decide_cli import decide_cli, decide_in_process

TMUX = GOLDEN_ROOT / "tmux"
OP = "tmux.teardown"
L_STEP = {"op": "run", "tool": "tmux", "args": ["list-panes", "-a", "-F", PANE_FORMAT]}
PROC = {"kind": "proc", "exit_code": 0, "stdout": "", "stderr": ""}


def q(request: Any = None, journal: Any = None, **extra: Any) -> str:
    body: dict[str, Any] = {"operation": OP, **extra}
    if request is not None:
        body["request"] = request
    if journal is not None:
        body["journal"] = journal
    return json.dumps(body)


TARGETS = {"targets": [{"pane_id": "%13", "pid": 513}]}
ENTRY = {"step": L_STEP, "observation": PROC}


def pid(value: str) -> str:
    """A question whose pinned pid is written as ``value`` verbatim."""
    return '{"operation": "tmux.teardown", "request": {"targets": [{"pane_id": "%13", "pid": ' + value + "}]}}"


# name -> (description, stdin)
CASES: dict[str, tuple[str, str]] = {
    "not_json": ("stdin that is not JSON", "{not json"),
    "empty_stdin": ("nothing on stdin", ""),
    "array_not_object": ("a JSON array is not a question", "[]"),
    "string_not_object": ("a JSON string is not a question", '"tmux.teardown"'),
    "nan_literal": ("NaN is not JSON", pid("NaN")),
    "infinity_literal": ("Infinity is not JSON", pid("-Infinity")),
    "number_beyond_double": ("a number literal beyond the range of a double is malformed JSON", pid("1e400")),
    "five_thousand_digit_integer": ("a 5000-digit integer literal is malformed JSON, not an error", pid("9" * 5000)),
    "nested_too_deeply": ("more than 100 levels of nesting is malformed",
                          q(TARGETS).replace('"operation"', '"x": ' + "[" * 100 + "]" * 100 + ', "operation"')),
    "nested_100_levels": ("exactly 100 levels of nesting is accepted (the extra key is not read)",
                          q(TARGETS).replace('"operation"', '"x": ' + "[" * 99 + "]" * 99 + ', "operation"')),
    "journal_not_array": ("journal must be an array", q(TARGETS, {"step": L_STEP})),
    "journal_null": ("journal null is not an array", '{"operation": "tmux.teardown", "request": {"targets": []}, '
                                                     '"journal": null}'),
    "journal_checked_before_request": ("a bad journal is reported before a bad request", q({"targets": 1}, 5)),
    "entry_checked_before_request": ("a bad entry is reported before a bad request", q({"targets": 1}, [1])),
    "entry_not_object": ("an entry must be an object", q(TARGETS, [ENTRY, "x"])),
    "entry_missing_observation": ("an entry needs an observation", q(TARGETS, [{"step": L_STEP}])),
    "entry_keys_in_code_point_order": ("observation sorts before step: its problem is named first",
                                       q(TARGETS, [{"step": {"op": "zap"}, "observation": {"kind": "zap"}}])),
    "entry_unknown_step_op": ("an unknown op names the known ones", q(TARGETS, [{**ENTRY, "step": {"op": "zap"}}])),
    "entry_step_op_not_string": ("an op must be a string", q(TARGETS, [{**ENTRY, "step": {"op": 1}}])),
    "entry_step_without_op": ("a step without op", q(TARGETS, [{**ENTRY, "step": {"tool": "tmux"}}])),
    "entry_unknown_tool": ("tool is one of the enum", q(TARGETS, [{**ENTRY, "step": {**L_STEP, "tool": "bash"}}])),
    "entry_args_not_strings": ("args are strings", q(TARGETS, [{**ENTRY, "step": {**L_STEP, "args": ["a", 1]}}])),
    "entry_exit_code_string": ("exit_code \"0\" is not an integer",
                               q(TARGETS, [{**ENTRY, "observation": {**PROC, "exit_code": "0"}}])),
    "entry_exit_code_bool": ("true is not an integer", q(TARGETS, [{**ENTRY, "observation": {**PROC, "exit_code": True}}])),
    "entry_exit_code_fraction": ("1.5 is not an integer", q(TARGETS, [{**ENTRY, "observation": {**PROC, "exit_code": 1.5}}])),
    "entry_exit_code_out_of_range": ("2^53 is out of range",
                                     q(TARGETS, [{**ENTRY, "observation": {**PROC, "exit_code": 2**53}}])),
    "entry_exit_code_huge_float": ("1e300 is an integer, out of range",
                                   q(TARGETS, [{**ENTRY, "observation": {**PROC, "exit_code": 1e300}}])),
    "entry_unknown_key_plain": ("an unknown key", q(TARGETS, [{**ENTRY, "observation": {**PROC, "pid": 1}}])),
    "entry_unknown_key_quoted": ("an unknown key that is not a plain name is written as an ASCII JSON string",
                                 q(TARGETS, [{**ENTRY, "observation": {**PROC, "a b\u00e9\"": 1}}])),
    "entry_unpaired_surrogate": ("strings are Unicode scalar values",
                                 '{"operation": "tmux.teardown", "request": {"targets": []}, "journal": [{"step": '
                                 + json.dumps(L_STEP) + ', "observation": {"kind": "proc", "exit_code": 0, '
                                 '"stdout": "\\ud800"}}]}'),
    "entry_null_stdout": ("stdout is a string, not null", q(TARGETS, [{**ENTRY, "observation": {**PROC, "stdout": None}}])),
    "request_missing": ("no request at all", q()),
    "request_not_object": ("the request must be an object", q([1])),
    "request_missing_targets": ("targets is required", q({"owner_id": "team:a"})),
    "request_targets_not_array": ("targets is an array", q({"targets": "%13"})),
    "request_target_missing_pid": ("a target's pid is required (null when unpinned)", q({"targets": [{"pane_id": "%1"}]})),
    "request_pid_string": ("a pid is an integer or null", q({"targets": [{"pane_id": "%1", "pid": "513"}]})),
    "request_pid_fraction": ("513.5 is not an integer", pid("513.5")),
    "request_pid_out_of_range": ("9007199254740992 is out of range", pid("9007199254740992")),
    "request_pid_exponent": ("5.13e2 is the integer 513", pid("5.13e2")),
    "request_pane_id_number": ("a pane id is a string", q({"targets": [{"pane_id": 13, "pid": 1}]})),
    "request_authorize_string": ("authorize is a boolean", q({**TARGETS, "authorize": "true"})),
    "request_owner_id_number": ("owner_id is a string or null", q({**TARGETS, "owner_id": 5})),
    "request_unknown_key": ("an unknown request key", q({**TARGETS, "ownerId": "team:a"})),
    "request_keys_in_code_point_order": ("authorize sorts before targets",
                                         q({"targets": 1, "authorize": 1})),
    "answer_first_step": ("no journal: the first step", q(TARGETS)),
    "answer_extra_keys_ignored": ("keys other than operation, request and journal are not read", q(TARGETS, [], x=1)),
    "answer_last_duplicate_key_wins": ("a repeated key: the last one counts",
                                       '{"operation": "tmux.teardown", "request": {"targets": 1}, '
                                       '"request": {"targets": []}}'),
    "answer_defaults_filled": ("an entry may omit fields with defaults",
                               q(TARGETS, [{"step": L_STEP, "observation": {"kind": "proc", "exit_code": 0}}])),
    "answer_done": ("a whole run", q({**TARGETS, "owner_id": "team:a", "authorize": False}, [
        {"step": L_STEP, "observation": {**PROC, "stdout": "%13\t0\t513\n"}},
        {"step": L_STEP, "observation": {**PROC, "stdout": "%13\t0\t513\n"}},
        {"step": {"op": "run", "tool": "tmux", "args": ["kill-pane", "-t", "%13"], "mutates": True, "effect": {
            "action": "remove", "kind": "pane", "subject": "%13", "detail": "killed after proof (pid 513)"}},
         "observation": PROC},
        {"step": L_STEP, "observation": PROC}])),
    "answer_error_decision": ("a journal that does not fit is an error decision, exit 0",
                              q(TARGETS, [{"step": {"op": "sleep", "ms": 1}, "observation": {"kind": "ack", "ok": True}}])),
}


def test_decide_golden(goldens: Goldens) -> None:
    cases = []
    for name, (description, stdin) in CASES.items():
        answer = decide_in_process(stdin)
        assert answer.exit_code in (0, 2), (name, answer)
        assert "Error" not in answer.stderr and "Traceback" not in answer.stderr, (name, answer)
        cases.append({"name": name, "description": description, "stdin": stdin, "exit_code": answer.exit_code,
                      "stdout": answer.stdout, "stderr": answer.stderr})
    goldens.check("tmux/decide", {
        "kind": "decide",
        "description": "panefleet decide for tmux.teardown: stdin in, exit code, stdout and stderr out",
        "cases": cases,
    })


def test_the_real_cli_answers_like_the_in_process_handler() -> None:
    for name in ("not_json", "entry_unknown_key_quoted", "request_pid_out_of_range", "answer_done"):
        stdin = CASES[name][1]
        assert decide_cli(stdin) == decide_in_process(stdin), name


# --------------------------------------------------------------------------------------- manifest


def _entry(path: Path) -> dict[str, str]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    kind = str(data["kind"])
    schema = {"decision": "TeardownGolden", "decide": "DecideGolden", "manifest": "Manifest"}.get(kind)
    if kind == "parse":
        schema = "VerdictGolden" if "verdict" in data["cases"][0] else "OwnerGolden"
    assert schema is not None, path
    return {"path": str(path.relative_to(TMUX)), "kind": kind, "schema": schema,
            "description": str(data.get("description", ""))}


def test_manifest_lists_every_file(goldens: Goldens) -> None:
    files = [p for p in sorted(TMUX.rglob("*.json")) if p.name != "manifest.json"]
    entries = [_entry(p) for p in files]
    entries.append({"path": "manifest.json", "kind": "manifest", "schema": "Manifest",
                    "description": "this list"})
    goldens.check("tmux/manifest", {
        "kind": "manifest",
        "description": "every file of the tmux corpus (pane verdicts, owner answers, tmux.teardown decisions, "
                       "panefleet decide runs), its kind and the schema definition it validates against",
        "files": entries,
    })
    assert m.FORMAT_VERSION == "1.0"
