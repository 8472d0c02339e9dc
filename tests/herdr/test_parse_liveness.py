"""Pure parsers of herdr answers and followerPulseFromProcessInfo: table-driven, and total."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from pure.herdr.liveness import Pulse, follower_pulse
from pure.herdr.parse import (
    ProcessEntry,
    ProcessInfo,
    error_code,
    failure_text,
    parse_created_workspace,
    parse_pane_list,
    parse_process_info,
    parse_root_pane,
    parse_split_pane,
    parse_workspace_list,
)
from pure.model import Proc

SAMPLES = [json.loads(line) for line in
           (Path(__file__).parent / "fixtures" / "herdr_0.8_samples.jsonl").read_text().splitlines()]


def line(data: object) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


# ------------------------------------------------------------------------------------- samples


def test_real_workspace_create_sample_parses() -> None:
    parsed = parse_created_workspace(line(SAMPLES[0]))
    assert parsed.unwrap().workspace_id == "w1" and parsed.unwrap().root_pane_id == "w1:p1"


def test_real_linux_process_info_sample_is_dead_for_a_non_follower() -> None:
    info = parse_process_info(line(SAMPLES[1]), "w1:p2").unwrap()
    assert info.shell_pid == 1015684
    assert info.processes == (ProcessEntry(pid=1017533, name="python3", argv0=None, argv=("/usr/bin/python3", "…")),)
    assert follower_pulse(info) == Pulse("dead")


def test_process_info_for_another_pane_is_refused() -> None:
    assert isinstance(parse_process_info(line(SAMPLES[1]), "w1:p9"), Failure)


# ------------------------------------------------------------------------------------- parsers


@pytest.mark.parametrize("text", ["", "\n", "not json", '{"id":"x"}', '{"result":[]}', "[1,2]", '{"result":{"type":"x"', "null"])
def test_garbled_answers_are_reasons_never_exceptions(text: str) -> None:
    for parsed in (parse_workspace_list(text), parse_pane_list(text, "panefleet"), parse_created_workspace(text),
                   parse_root_pane(text), parse_split_pane(text), parse_process_info(text, "w1:p1")):
        assert isinstance(parsed, Failure) and isinstance(parsed.failure(), str) and parsed.failure()


def test_workspace_list_reads_tokens_and_skips_entries_without_id() -> None:
    text = line({"id": "cli:workspace:list", "result": {"type": "workspace_list", "workspaces": [
        {"workspace_id": "w1", "label": "a-workers", "tokens": {"conductor_workers": "a", "n": 3}},
        {"workspace_id": "", "label": "x"}, "junk", {"label": "no id"},
        {"workspace_id": "w2", "label": "plain"}]}})
    listed = parse_workspace_list(text).unwrap()
    assert [w.workspace_id for w in listed] == ["w1", "w2"]
    assert listed[0].token("conductor_workers") == "a" and listed[0].token("n") is None
    assert listed[1].tokens == ()


def test_pane_list_reads_run_id_only_from_our_source() -> None:
    text = line({"id": "cli:pane:list", "result": {"type": "pane_list", "panes": [
        {"pane_id": "w1:p1", "agent_session": {"source": "panefleet", "agent": "x", "kind": "id", "value": "r1"},
         "agent": "worker-x", "label": "worker-x", "workspace_id": "w1"},
        {"pane_id": "w1:p2", "agent_session": {"source": "herdr:claude", "agent": "claude", "kind": "id",
                                               "value": "sess"}},
        {"pane_id": 7}]}})
    panes = parse_pane_list(text, "panefleet").unwrap()
    assert [(p.pane_id, p.run_id, p.agent, p.label) for p in panes] == [
        ("w1:p1", "r1", "worker-x", "worker-x"), ("w1:p2", "", None, None)]


def test_multi_line_stdout_reads_the_first_line() -> None:
    text = line({"id": "cli:pane:split", "result": {"pane": {"pane_id": "w1:p3"}, "type": "pane_info"}}) + "trailing\n"
    assert parse_split_pane(text) == Success("w1:p3")


def test_failure_text_names_the_error() -> None:
    err = Proc(exit_code=1, stderr='{"error":{"code":"pane_not_found","message":"pane not found"},"id":"cli:pane:split"}\n')
    assert error_code(err) == "pane_not_found"
    assert failure_text(err) == "pane_not_found: pane not found"
    assert failure_text(Proc(exit_code=2, stderr="error: unexpected argument '--x' found\n")) == \
        "error: unexpected argument '--x' found"
    assert failure_text(Proc(exit_code=None, stderr="herdr: command not found on PATH")) == \
        "herdr: command not found on PATH"
    assert failure_text(Proc(exit_code=1)) == "exit 1, no output"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parsers_are_total_on_any_text(text: str) -> None:
    for parsed in (parse_workspace_list(text), parse_pane_list(text, "s"), parse_created_workspace(text),
                   parse_root_pane(text), parse_split_pane(text), parse_process_info(text, "w1:p1")):
        assert isinstance(parsed, (Success, Failure))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["process_info", "panes", "workspaces", "pane", "root_pane", "workspace"]),
                       json_values, max_size=4))
def test_parsers_and_pulse_are_total_on_any_result_shape(result: dict) -> None:
    text = json.dumps({"id": "cli:x", "result": result})
    for parsed in (parse_workspace_list(text), parse_pane_list(text, "s"), parse_created_workspace(text),
                   parse_root_pane(text), parse_split_pane(text)):
        assert isinstance(parsed, (Success, Failure))
    info = parse_process_info(text, "w1:p1")
    if isinstance(info, Success):
        assert follower_pulse(info.unwrap()).pulse in ("alive", "dead", "unknown")


# ------------------------------------------------------------------------------------- liveness


def P(pid: int | None, name: str | None = None, argv: tuple[str, ...] | None = None,
      argv0: str | None = None) -> ProcessEntry:
    return ProcessEntry(pid=pid, name=name, argv0=argv0, argv=argv)


PULSE_CASES = [
    ("missing table", ProcessInfo("p", 10, None), "unknown"),
    ("empty table", ProcessInfo("p", 10, ()), "unknown"),
    ("blank non-shell entry", ProcessInfo("p", 10, (P(11, "", None),)), "unknown"),
    ("follower by name", ProcessInfo("p", 10, (P(11, "panefleet", None),)), "alive"),
    ("follower by argv path, Linux (no argv0)",
     ProcessInfo("p", 10, (P(11, "python3", ("/usr/bin/python3", "/opt/venv/bin/panefleet", "herdr", "follow", "r")),)),
     "alive"),
    ("follower by argv0 (macOS)", ProcessInfo("p", 10, (P(11, "Python", None, "/usr/local/bin/PANEFLEET"),)), "alive"),
    ("case ignored", ProcessInfo("p", 10, (P(11, "PaneFleet", None),)), "alive"),
    ("suffix is not enough", ProcessInfo("p", 10, (P(11, "mypanefleet", ("mypanefleet",)),)), "dead"),
    ("only the shell", ProcessInfo("p", 10, (P(10, "bash", ("bash",)),)), "dead"),
    ("shell entry without name still the shell", ProcessInfo("p", 10, (P(10, "", None),)), "dead"),
    ("unrelated process with identity", ProcessInfo("p", 10, (P(12, "vim", ("vim",)),)), "dead"),
    ("thread name, unrelated argv", ProcessInfo("p", 10, (P(12, "MainThread", ("node", "x.js")),)), "dead"),
    ("no shell pid, blank entry", ProcessInfo("p", None, (P(12, "", None),)), "unknown"),
    ("no shell pid, follower", ProcessInfo("p", None, (P(12, "panefleet", None),)), "alive"),
    ("unknown pid, no identity", ProcessInfo("p", 10, (P(None, None, None),)), "unknown"),
]


@pytest.mark.parametrize(("why", "info", "pulse"), PULSE_CASES, ids=[c[0] for c in PULSE_CASES])
def test_follower_pulse(why: str, info: ProcessInfo, pulse: str) -> None:
    result = follower_pulse(info)
    assert result.pulse == pulse, why
    assert (result.reason != "") == (pulse == "unknown")


def test_follower_argv_survives_herdr_joining_and_session_strip() -> None:
    from pure.herdr.fleet import follower_argv, unsafe_word

    argv = follower_argv(("PANEFLEET_STATE_DIR=/var/lib/pf", "/opt/venv/bin/panefleet"), "run-1")
    assert unsafe_word(argv) is None
    assert " ".join(argv).split() == list(argv)
    for bad in ("a b", "it's", "$(rm)", "--session", "--session=x", "x;y", "", "--"):
        assert unsafe_word(("panefleet", bad)) == bad
