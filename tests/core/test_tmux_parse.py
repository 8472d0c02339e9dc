"""Parse goldens: raw ``list-panes`` / ``show-option`` answers in, verdicts out (docs/ports.md,
"Pane table", "Owner tag")."""

from __future__ import annotations

from typing import Any

import pytest
from returns.result import Failure

from pure import model as m
from pure import tmux as t
from pure import wire
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
    ("max_safe_integer_pid_with_zeros", "%21", 0, "%21\t0\t0009007199254740991\n", "", "live//9007199254740991"),
    ("huge_pid_is_malformed", "%21", 0, "%21\t0\t" + "7" * 5000 + "\n", "", "unavailable/malformed_snapshot"),
    ("huge_pid_elsewhere_is_malformed", "%21", 0, "%21\t0\t42421\n%22\t0\t" + "1" * 5000 + "\n", "",
     "unavailable/malformed_snapshot"),
    ("negative_pid", "%21", 0, "%21\t0\t-5\n", "", "unavailable/malformed_snapshot"),
    ("plus_sign_pid", "%21", 0, "%21\t0\t+5\n", "", "unavailable/malformed_snapshot"),
    ("unicode_digit_pid", "%21", 0, "%21\t0\t\u0664\u0662\n", "", "unavailable/malformed_snapshot"),
    ("fullwidth_digit_pane_id", "%21", 0, "%\uff12\uff11\t0\t42421\n", "", "unavailable/malformed_snapshot"),
    ("not_a_pid", "%21", 0, "%21\t0\tnot-a-pid\n", "", "unavailable/malformed_snapshot"),
    ("spaces_instead_of_tabs", "%21", 0, "%21 0 42421\n", "", "unavailable/malformed_snapshot"),
    ("free_text", "%21", 0, "malformed pane snapshot\n", "", "unavailable/malformed_snapshot"),
    ("literal_backslash_t", "%21", 0, "%21\\t0\\t42421\n", "", "unavailable/malformed_snapshot"),
    ("first_bad_row_is_named", "%21", 0, "%21\t0\t1\n%22\tx\t2\n%23\t0\n", "", "unavailable/malformed_snapshot"),
    ("similar_id_is_not_the_target", "%21", 0, "%11\t0\t42411\n%210\t0\t42421\n", "", "gone/absent"),
    ("leading_zero_id_is_another_pane", "%21", 0, "%021\t0\t42421\n", "", "gone/absent"),
    ("target_among_others", "%21", 0, "%11\t0\t42411\n%21\t0\t42421\n%31\t0\t42424\n", "", "live//42421"),
    ("blank_line_between_rows", "%21", 0, "%11\t0\t1\n\n%21\t0\t2\n", "", "unavailable/malformed_snapshot"),
    ("query_failed_exit_1", "%21", 1, "", "no server running on /tmp/tmux-0/x\n", "unavailable/query_failed"),
    ("query_failed_exit_2_no_stderr", "%21", 2, "%21\t0\t42421\n", "", "unavailable/query_failed"),
    ("query_failed_padded_stderr", "%21", 1, "", "\u00a0 lost server\t\r\n", "unavailable/query_failed"),
    ("query_failed_whitespace_stderr", "%21", 1, "", " \n\t", "unavailable/query_failed"),
    ("server_named", "%21", 0, "%11\t0\t5\t4242\t1790000000\n%21\t0\t42421\t4242\t1790000000\n", "",
     "live//42421 on 4242@1790000000"),
    ("server_named_pane_absent", "%21", 0, "%11\t0\t5\t4242\t1790000000\n", "", "gone/absent on 4242@1790000000"),
    ("server_named_pane_dead", "%21", 0, "%21\t1\t42421\t4242\t1790000000\n", "", "gone/dead/42421 on 4242@1790000000"),
    ("server_with_leading_zeros", "%21", 0, "%21\t0\t42421\t04242\t001790000000\n", "", "live//42421 on 4242@1790000000"),
    ("server_rows_differ", "%21", 0, "%11\t0\t5\t4242\t1790000000\n%21\t0\t42421\t4242\t1790000001\n", "",
     "unavailable/malformed_snapshot"),
    ("server_pid_zero", "%21", 0, "%21\t0\t42421\t0\t1790000000\n", "", "unavailable/malformed_snapshot"),
    ("server_start_empty", "%21", 0, "%21\t0\t42421\t4242\t\n", "", "unavailable/malformed_snapshot"),
    ("server_named_by_some_rows_only", "%21", 0, "%11\t0\t5\t4242\t1790000000\n%21\t0\t42421\n", "",
     "unavailable/malformed_snapshot"),
    ("tmux_not_started", "%21", None, "", "tmux: command not found on PATH", "unavailable/query_failed"),
    ("tmux_not_started_no_stderr", "%21", None, "", "", "unavailable/query_failed"),
    ("invalid_target_no_percent", "21", 0, "%21\t0\t42421\n", "", "unavailable/invalid_pane_id"),
    ("invalid_target_trailing_newline", "%21\n", 0, "%21\t0\t42421\n", "", "unavailable/invalid_pane_id"),
    ("invalid_target_letters", "%abc", 0, "%21\t0\t42421\n", "", "unavailable/invalid_pane_id"),
    ("invalid_target_percent_only", "%", 0, "", "", "unavailable/invalid_pane_id"),
    ("invalid_target_empty", "", 0, "", "", "unavailable/invalid_pane_id"),
    ("invalid_target_beats_failed_query", "%2 1", 1, "", "boom", "unavailable/invalid_pane_id"),
]

PARSE_DESCRIPTIONS: dict[str, str] = {
    "empty_output_is_absent": "no rows at all: the pane is absent",
    "lone_newline_is_malformed": "a single empty row is a row with one field",
    "two_newlines_are_malformed": "only the final empty row is dropped; the first has one field",
    "no_final_newline": "the last row needs no newline",
    "crlf": "CRLF line ends are LF line ends",
    "lone_cr_is_malformed": "a lone CR is not a line end: it stays in the pid field",
    "leading_zeros_accepted": "a pid may have leading zeros",
    "dead_row": "pane_dead 1: gone (dead) with its pid",
    "dead_row_empty_pid": "the target's row has an empty pid: malformed (even when dead)",
    "live_row_empty_pid": "the target's row has an empty pid: malformed",
    "other_pane_empty_pid_ok": "another pane's empty pid is allowed",
    "other_pane_pid_zero_poisons": "pid 0 on any row poisons the whole snapshot",
    "other_pane_duplicated_poisons": "any pane listed twice poisons the snapshot",
    "target_duplicated": "the target listed twice: malformed",
    "other_row_bad_id_poisons": "a row whose id lacks % poisons the snapshot",
    "dead_flag_two": "pane_dead must be exactly 0 or 1",
    "trailing_space": "a space after the pid is not digits",
    "four_fields": "a row must have exactly three tab-separated fields",
    "unsafe_integer_pid": "2^53 + 1 is above the largest safe integer",
    "max_safe_integer_pid": "2^53 - 1 is the largest pid",
    "max_safe_integer_pid_with_zeros": "leading zeros do not count towards the range",
    "huge_pid_is_malformed": "a 5000-digit pid is out of range (never an error of the parser)",
    "huge_pid_elsewhere_is_malformed": "a 5000-digit pid on another row poisons the snapshot",
    "negative_pid": "a sign is not a digit",
    "plus_sign_pid": "a plus sign is not a digit",
    "unicode_digit_pid": "only ASCII 0-9 are digits (not ARABIC-INDIC digits)",
    "fullwidth_digit_pane_id": "a pane id takes ASCII digits only (not FULLWIDTH digits)",
    "not_a_pid": "letters are not a pid",
    "spaces_instead_of_tabs": "fields are separated by TAB only",
    "free_text": "free text is one field",
    "literal_backslash_t": "a backslash and t is not a TAB",
    "first_bad_row_is_named": "rows are checked in order; the first bad one is the problem",
    "similar_id_is_not_the_target": "ids are compared exactly (%210 is not %21)",
    "leading_zero_id_is_another_pane": "%021 is a valid id, but not %21",
    "target_among_others": "the target's row among others",
    "blank_line_between_rows": "an empty row between rows is malformed",
    "query_failed_exit_1": "a non-zero exit is a failed query",
    "query_failed_exit_2_no_stderr": "a failed query's output is never parsed",
    "query_failed_padded_stderr": "stderr is trimmed (no-break space, tab, CR, LF)",
    "query_failed_whitespace_stderr": "stderr of whitespace only trims to empty",
    "server_named": "rows of 5 fields name the server that answered (its pid and start time)",
    "server_named_pane_absent": "a table naming its server, without the target: absent, the server said",
    "server_named_pane_dead": "a dead pane in a table naming its server",
    "server_with_leading_zeros": "the server's pid and start are written without their leading zeros",
    "server_rows_differ": "two rows naming two servers: one listing comes from one server",
    "server_pid_zero": "a server pid of 0 is not a pid",
    "server_start_empty": "a row of 5 fields with an empty start time",
    "server_named_by_some_rows_only": "rows of 5 fields, then one of 3: every row has as many fields as the first",
    "tmux_not_started": "exit_code null: tmux could not be started or timed out",
    "tmux_not_started_no_stderr": "exit_code null with an empty stderr",
    "invalid_target_no_percent": "the target must be % and digits: no tmux answer is read",
    "invalid_target_trailing_newline": "'%21' and a newline is not a pane id",
    "invalid_target_letters": "%abc is not a pane id",
    "invalid_target_percent_only": "% alone is not a pane id",
    "invalid_target_empty": "the empty string is not a pane id",
    "invalid_target_beats_failed_query": "the target is checked before the answer",
}

OWNER_CASES: list[tuple[str, int | None, str, str, str]] = [
    ("value", 0, "team:scale-up\n", "", "value/team:scale-up"),
    ("value_trimmed", 0, "  team:scale-up  \n", "", "value/team:scale-up"),
    ("value_crlf", 0, "team:scale-up\r\n", "", "value/team:scale-up"),
    ("value_unicode_spaces_trimmed", 0, "\u3000\u00a0team:scale-up\u2029\ufeff", "", "value/team:scale-up"),
    ("value_inner_space_kept", 0, " team: scale-up \n", "", "value/team: scale-up"),
    ("value_unit_separator_kept", 0, "\u001fteam:scale-up\n", "", "value/\u001fteam:scale-up"),
    ("value_next_line_kept", 0, "team:scale-up\u0085\n", "", "value/team:scale-up\u0085"),
    ("value_zero_width_space_kept", 0, "\u200bteam:scale-up\n", "", "value/\u200bteam:scale-up"),
    ("value_stderr_ignored", 0, "team:scale-up\n", "warning\n", "value/team:scale-up"),
    ("empty_stdout_is_missing", 0, "", "", "missing/"),
    ("whitespace_stdout_is_missing", 0, " \n", "", "missing/"),
    ("unicode_whitespace_stdout_is_missing", 0, "\u2003\u00a0\n", "", "missing/"),
    ("exit_1_no_stderr_is_missing", 1, "", "", "missing/"),
    ("exit_1_whitespace_stderr_is_missing", 1, "", " \r\n", "missing/"),
    ("exit_1_with_stderr_is_error", 1, "", "can't find pane: %13\n", "error/"),
    ("exit_2_is_error", 2, "", "owner unavailable\n", "error/"),
    ("exit_2_no_stderr_is_error", 2, "", "", "error/"),
    ("not_started_is_error", None, "", "tmux: command not found", "error/"),
    ("not_started_no_stderr_is_error", None, "team:scale-up\n", "", "error/"),
]

OWNER_DESCRIPTIONS: dict[str, str] = {
    "value": "exit 0 with a tag: its value",
    "value_trimmed": "the value is trimmed",
    "value_crlf": "CR and LF are trimmed",
    "value_unicode_spaces_trimmed": "ideographic space, no-break space, paragraph separator and BOM are trimmed",
    "value_inner_space_kept": "only the ends are trimmed",
    "value_unit_separator_kept": "U+001F is not in the trimmed set",
    "value_next_line_kept": "U+0085 is not in the trimmed set",
    "value_zero_width_space_kept": "U+200B is not in the trimmed set",
    "value_stderr_ignored": "with exit 0, stderr does not matter",
    "empty_stdout_is_missing": "exit 0 and no output: untagged",
    "whitespace_stdout_is_missing": "output that trims to empty: untagged",
    "unicode_whitespace_stdout_is_missing": "output of Unicode spaces only: untagged",
    "exit_1_no_stderr_is_missing": "exit 1 and an empty stderr: untagged",
    "exit_1_whitespace_stderr_is_missing": "exit 1 and a stderr that trims to empty: untagged",
    "exit_1_with_stderr_is_error": "exit 1 with a message: an error",
    "exit_2_is_error": "any other exit: an error",
    "exit_2_no_stderr_is_error": "any other exit, even without a message: an error",
    "not_started_is_error": "exit_code null: an error",
    "not_started_no_stderr_is_error": "exit_code null: an error whatever the output",
}


def _verdict_code(v: t.Verdict) -> str:
    return f"{v.status}/{v.reason}" + (f"/{v.pid}" if v.pid is not None else "") + (f" on {v.server}" if v.server else "")


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


def test_every_case_is_described() -> None:
    assert sorted(PARSE_DESCRIPTIONS) == sorted(c[0] for c in PARSE_CASES)
    assert sorted(OWNER_DESCRIPTIONS) == sorted(c[0] for c in OWNER_CASES)


def test_parse_goldens(goldens: Goldens) -> None:
    cases: list[dict[str, Any]] = []
    for name, target, code, stdout, stderr, _ in PARSE_CASES:
        v = t.verdict_from_answer(target, m.Proc(exit_code=code, stdout=stdout, stderr=stderr))
        cases.append({"name": name, "description": PARSE_DESCRIPTIONS[name], "target": target,
                      "answer": {"kind": "proc", "exit_code": code, "stdout": stdout, "stderr": stderr},
                      "verdict": wire.unstructure(v), "informative": {"detail": t.describe(v.problem)}})
    goldens.check("tmux/pane_verdicts", {
        "kind": "parse",
        "description": "list-panes -a -F '#{pane_id}<TAB>#{pane_dead}<TAB>#{pane_pid}<TAB>#{pid}<TAB>#{start_time}' "
                       "answer + target pane -> verdict",
        "cases": cases,
    })
    owners: list[dict[str, Any]] = []
    for name, code, stdout, stderr, _ in OWNER_CASES:
        a = t.owner_from_answer(m.Proc(exit_code=code, stdout=stdout, stderr=stderr))
        owners.append({"name": name, "description": OWNER_DESCRIPTIONS[name],
                       "answer": {"kind": "proc", "exit_code": code, "stdout": stdout, "stderr": stderr},
                       "owner": wire.unstructure(a), "informative": {"detail": t.describe(a.problem)}})
    goldens.check("tmux/owner_answers", {
        "kind": "parse",
        "description": "show-option -qv -p -t PANE @omx_team_pane_owner_id answer -> value|missing|error",
        "cases": owners,
    })


def test_trim_is_the_listed_set_only() -> None:
    every = "".join(sorted(t.WHITESPACE))
    assert t.trim(every + "x" + every) == "x"
    for ch in ("\u001c", "\u001f", "\u0085", "\u180e", "\u200b", "\u2060"):
        assert t.trim(ch + "x" + ch) == ch + "x" + ch


def test_absurd_pids_are_malformed_not_errors() -> None:
    for digits in ("9" * 17, "1" * 5000, "0" * 5000 + "1", "0" * 5000):
        v = t.verdict_from_answer("%1", m.Proc(exit_code=0, stdout=f"%1\t0\t{digits}\n"))
        expected = "live" if digits.lstrip("0") == "1" else "unavailable"
        assert v.status == expected, digits[:20]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_fields = st.tuples(
    st.sampled_from(["%1", "%2", "%21", "%210", "%021", "21", "%", "%2a", "%٤"]),
    st.sampled_from(["0", "1", "2", "", " 0"]),
    st.sampled_from(["1", "42421", "0", "00", "007", "", "-1", "9007199254740991", "9007199254740992",
                     "0009007199254740991", "12345678901234567890", " 5", "5\r"]),
)


# what a row may say of its server: none (3 fields), the same one written two ways, another, nonsense
_servers = st.sampled_from([(), ("4242", "1790000000"), ("04242", "1790000000"), ("4242", "1790000001"),
                            ("0", "5"), ("4242", ""), ("9007199254740992", "1"), ("x", "1"), ("4242",)])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_fields, _servers), max_size=5), st.sampled_from(["\n", "\r\n"]), st.booleans(),
       st.sampled_from(["%21", "%1", "%210"]))
def test_fast_path_agrees_with_the_row_parser(rows: list[tuple[tuple[str, str, str], tuple[str, ...]]], eol: str,
                                              final: bool, target: str) -> None:
    text = eol.join("\t".join((*r, *server)) for r, server in rows) + (eol if final and rows else "")
    fast = t.verdict_from_answer(target, m.Proc(exit_code=0, stdout=text))
    parsed = t.parse_pane_table(text)
    if isinstance(parsed, Failure):
        assert (fast.status, fast.reason) == ("unavailable", "malformed_snapshot")
        return
    table = parsed.unwrap()
    row = table.get(target)
    server = next(iter(table.values())).server if table else None
    if row is None:
        assert (fast.status, fast.reason, fast.server) == ("gone", "absent", server)
    elif row.pid is None:
        assert fast.reason == "malformed_snapshot"
        assert fast.problem == t.MalformedSnapshot(row=row.row, field="pane_pid", rule="empty",
                                                   fields=3 if server is None else 5)
    else:
        assert (fast.status, fast.pid, fast.server) == ("gone" if row.dead else "live", row.pid, server)


def test_a_new_pane_is_numbered_above_every_pane_listed() -> None:
    listing = "%3\t0\t11\n%12\t1\t12\n%9\t0\t13\n"
    assert t.first_new_pane(m.Proc(exit_code=0, stdout=listing)) == 13
    assert t.first_new_pane(m.Proc(exit_code=0, stdout=listing.replace("\n", "\r\n"))) == 13
    assert t.first_new_pane(m.Proc(exit_code=0, stdout="")) == 0
    assert t.first_new_pane(m.Proc(exit_code=1, stderr="no server running on /tmp/tmux-0/pf\n")) == 0
    assert t.first_new_pane(m.Proc(exit_code=1, stderr="lost server\n")) is None  # it cannot tell
    assert t.first_new_pane(m.Proc(exit_code=None, stderr="tmux timed out after 5 s")) is None
