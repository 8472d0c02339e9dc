"""Parse goldens: raw ``list-panes`` / ``show-option`` answers in, verdicts out (spec §2.3, §3.3)."""

from __future__ import annotations

from typing import Any

import pytest
from returns.result import Failure

from pure import model as m
from pure import tmux as t
from tests.harness import Goldens

# (name, target, exit_code, stdout, stderr, expected "status/reason[/pid]") — the oh-my-codex table
# plus more edges. The expectations here are the specification; the golden file is their portable form.
PARSE_CASES: list[tuple[str, str, int | None, str, str, str]] = [
    ("empty_output_is_absent", "%21", 0, "", "", "gone/absent"),
    ("lone_newline_is_malformed", "%21", 0, "\n", "", "unavailable/malformed_snapshot"),
    ("two_newlines_are_malformed", "%21", 0, "\n\n", "", "unavailable/malformed_snapshot"),
    ("no_final_newline", "%21", 0, "%21\t0\t42421", "", "live//42421"),
    ("crlf", "%21", 0, "%21\t0\t42421\r\n", "", "live//42421"),
    ("lone_cr_is_malformed", "%21", 0, "%21\t0\t42421\r", "", "unavailable/malformed_snapshot"),
    ("leading_zeros_accepted", "%21", 0, "%21\t0\t042421\n", "", "live//42421"),
    ("dead_row", "%21", 0, "%21\t1\t42421\n", "", "gone/dead/42421"),
    ("dead_row_empty_pid", "%21", 0, "%21\t1\t\n", "", "unavailable/malformed_snapshot"),
    ("live_row_empty_pid", "%21", 0, "%21\t0\t\n", "", "unavailable/malformed_snapshot"),
    ("other_pane_empty_pid_ok", "%21", 0, "%22\t0\t\n%21\t0\t42421\n", "", "live//42421"),
    ("other_pane_pid_zero_poisons", "%21", 0, "%22\t0\t0\n%21\t0\t42421\n", "", "unavailable/malformed_snapshot"),
    ("other_pane_duplicated_poisons", "%21", 0, "%22\t0\t1\n%22\t0\t2\n%21\t0\t42421\n", "",
     "unavailable/malformed_snapshot"),
    ("target_duplicated", "%21", 0, "%21\t0\t42421\n%21\t0\t42421\n", "", "unavailable/malformed_snapshot"),
    ("other_row_bad_id_poisons", "%21", 0, "21\t0\t5\n%21\t0\t42421\n", "", "unavailable/malformed_snapshot"),
    ("dead_flag_two", "%21", 0, "%21\t2\t42421\n", "", "unavailable/malformed_snapshot"),
    ("trailing_space", "%21", 0, "%21\t0\t42421 \n", "", "unavailable/malformed_snapshot"),
    ("four_fields", "%21", 0, "%21\t0\t42421\tx\n", "", "unavailable/malformed_snapshot"),
    ("unsafe_integer_pid", "%21", 0, "%21\t0\t9007199254740993\n", "", "unavailable/malformed_snapshot"),
    ("max_safe_integer_pid", "%21", 0, "%21\t0\t9007199254740991\n", "", "live//9007199254740991"),
    ("negative_pid", "%21", 0, "%21\t0\t-5\n", "", "unavailable/malformed_snapshot"),
    ("plus_sign_pid", "%21", 0, "%21\t0\t+5\n", "", "unavailable/malformed_snapshot"),
    ("unicode_digit_pid", "%21", 0, "%21\t0\t٤٢\n", "", "unavailable/malformed_snapshot"),
    ("not_a_pid", "%21", 0, "%21\t0\tnot-a-pid\n", "", "unavailable/malformed_snapshot"),
    ("spaces_instead_of_tabs", "%21", 0, "%21 0 42421\n", "", "unavailable/malformed_snapshot"),
    ("free_text", "%21", 0, "malformed pane snapshot\n", "", "unavailable/malformed_snapshot"),
    ("literal_backslash_t", "%21", 0, "%21\\t0\\t42421\n", "", "unavailable/malformed_snapshot"),
    ("similar_id_is_not_the_target", "%21", 0, "%11\t0\t42411\n%210\t0\t42421\n", "", "gone/absent"),
    ("target_among_others", "%21", 0, "%11\t0\t42411\n%21\t0\t42421\n%31\t0\t42424\n", "", "live//42421"),
    ("blank_line_between_rows", "%21", 0, "%11\t0\t1\n\n%21\t0\t2\n", "", "unavailable/malformed_snapshot"),
    ("query_failed_exit_1", "%21", 1, "", "no server running on /tmp/tmux-0/x\n", "unavailable/query_failed"),
    ("query_failed_exit_2_no_stderr", "%21", 2, "%21\t0\t42421\n", "", "unavailable/query_failed"),
    ("tmux_not_started", "%21", None, "", "tmux: command not found on PATH", "unavailable/query_failed"),
    ("invalid_target_no_percent", "21", 0, "%21\t0\t42421\n", "", "unavailable/invalid_pane_id"),
    ("invalid_target_trailing_newline", "%21\n", 0, "%21\t0\t42421\n", "", "unavailable/invalid_pane_id"),
    ("invalid_target_empty", "", 0, "", "", "unavailable/invalid_pane_id"),
]

OWNER_CASES: list[tuple[str, int | None, str, str, str]] = [
    ("value", 0, "team:scale-up\n", "", "value/team:scale-up"),
    ("value_trimmed", 0, "  team:scale-up  \n", "", "value/team:scale-up"),
    ("empty_stdout_is_missing", 0, "", "", "missing/"),
    ("whitespace_stdout_is_missing", 0, " \n", "", "missing/"),
    ("exit_1_no_stderr_is_missing", 1, "", "", "missing/"),
    ("exit_1_with_stderr_is_error", 1, "", "can't find pane: %13\n", "error/"),
    ("exit_2_is_error", 2, "", "owner unavailable\n", "error/"),
    ("exit_2_no_stderr_is_error", 2, "", "", "error/"),
    ("not_started_is_error", None, "", "tmux: command not found", "error/"),
]


def _verdict_code(v: t.Verdict) -> str:
    return f"{v.status}/{v.reason}" + (f"/{v.pid}" if v.pid is not None else "")


@pytest.mark.parametrize("case", PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_pane_verdicts(case: tuple[str, str, int | None, str, str, str]) -> None:
    _, target, code, stdout, stderr, expected = case
    verdict = t.verdict_from_answer(target, m.Proc(exit_code=code, stdout=stdout, stderr=stderr))
    assert _verdict_code(verdict) == expected


@pytest.mark.parametrize("case", OWNER_CASES, ids=[c[0] for c in OWNER_CASES])
def test_owner_classification(case: tuple[str, int | None, str, str, str]) -> None:
    _, code, stdout, stderr, expected = case
    answer = t.owner_from_answer(m.Proc(exit_code=code, stdout=stdout, stderr=stderr))
    assert f"{answer.kind}/{answer.value}" == expected


def test_invalid_target_never_runs_tmux() -> None:
    gen = t.prove("21")
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value.reason == "invalid_pane_id"


def test_parse_goldens(goldens: Goldens) -> None:
    cases: list[dict[str, Any]] = []
    for name, target, code, stdout, stderr, _ in PARSE_CASES:
        v = t.verdict_from_answer(target, m.Proc(exit_code=code, stdout=stdout, stderr=stderr))
        cases.append({"name": name, "target": target,
                      "answer": {"kind": "proc", "exit_code": code, "stdout": stdout, "stderr": stderr},
                      "verdict": {"status": v.status, "reason": v.reason, "pid": v.pid}})
    goldens.check("tmux/pane_verdicts", {
        "kind": "parse",
        "description": "list-panes -a -F '#{pane_id}<TAB>#{pane_dead}<TAB>#{pane_pid}' answer + target pane -> verdict",
        "cases": cases,
    })
    owners: list[dict[str, Any]] = []
    for name, code, stdout, stderr, _ in OWNER_CASES:
        a = t.owner_from_answer(m.Proc(exit_code=code, stdout=stdout, stderr=stderr))
        owners.append({"name": name, "answer": {"kind": "proc", "exit_code": code, "stdout": stdout, "stderr": stderr},
                       "owner": {"kind": a.kind, "value": a.value}})
    goldens.check("tmux/owner_answers", {
        "kind": "parse",
        "description": "show-option -qv -p -t PANE @omx_team_pane_owner_id answer -> value|missing|error",
        "cases": owners,
    })


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_fields = st.tuples(
    st.sampled_from(["%1", "%2", "%21", "%210", "%021", "21", "%", "%2a", "%٤"]),
    st.sampled_from(["0", "1", "2", "", " 0"]),
    st.sampled_from(["1", "42421", "0", "00", "007", "", "-1", "9007199254740991", "9007199254740992",
                     "0009007199254740991", "12345678901234567890", " 5", "5\r"]),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_fields, max_size=5), st.sampled_from(["\n", "\r\n"]), st.booleans(), st.sampled_from(["%21", "%1", "%210"]))
def test_fast_path_agrees_with_the_row_parser(rows: list[tuple[str, str, str]], eol: str, final: bool, target: str) -> None:
    text = eol.join("\t".join(r) for r in rows) + (eol if final and rows else "")
    fast = t.verdict_from_answer(target, m.Proc(exit_code=0, stdout=text))
    parsed = t.parse_pane_table(text)
    if isinstance(parsed, Failure):
        assert (fast.status, fast.reason) == ("unavailable", "malformed_snapshot")
        return
    row = parsed.unwrap().get(target)
    if row is None:
        assert (fast.status, fast.reason) == ("gone", "absent")
    elif row.pid is None:
        assert fast.reason == "malformed_snapshot"
    else:
        assert (fast.status, fast.pid) == ("gone" if row.dead else "live", row.pid)
