"""Every failure a person reads is a sentence with a next step (shell/cli/explain.py), and with ``-o json``
it carries ``ok``, ``error`` (the sentence) and ``error_code`` (the stable code).

Three layers: every rule of the table has an example that it explains; every failure path the suite
reaches through the CLI is run here through the CLI, in text and in JSON (in-process on team state made
by ``tests/omx_down/fixtures.py``, and against a real tmux server where the failure is tmux's); and
nothing reaches a person as a bare ``snake_case:code``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import cli
from shell.cli.explain import RULES, Scene, explain, is_sentence
from tests.conftest import TmuxServer
from tests.omx_down.fixtures import Team

# (message as the planner gives it, the code people's tools see)
EXAMPLES = [
    ("Team alpha not found", "team_not_found"),
    ("herdr_version_skew: the herdr CLI speaks client protocol 22 and the running herdr server protocol 20; "
     "restart the herdr server. Nothing more was asked of herdr.", "herdr_version_skew"),
    ("Team alpha already exists", "team_exists"),
    ("invalid_team_name:../ALPHA (a team name is 1-30 characters; oh-my-codex would act on team 'alpha')",
     "invalid_team_name"),
    ("team_config_missing:alpha", "team_config_missing"),
    ("team_config_stale_generation:alpha:3:4", "team_config_stale_generation"),
    ("team_membership_stale_generation:alpha:3:4", "team_membership_stale_generation"),
    ("team_state_malformed:/w/config.json: malformed JSON at line 2 column 1", "team_state_malformed"),
    ("membership_transaction_barrier_required:alpha", "membership_transaction_barrier_required"),
    ("Invalid membership transaction journal for alpha", "team_journal_invalid"),
    ("ENOENT: no such file or directory, open '/w/config.json'", "file_missing"),
    ("cannot write /w/config.json: EROFS: read-only file system", "state_io_failed"),
    ("OSError: Read-only file system: /w/.omx/state/team/.team-locks/alpha.scaling", "state_not_writable"),
    ("OSError: Read-only file system: /w/.omx/state; undone: killed pane %1, and with it the tmux session it had "
     "started", "state_not_writable"),
    ("working directory does not exist: /nowhere", "cwd_missing"),
    ("working directory is not a directory: /etc/passwd", "cwd_not_a_directory"),
    ("tmux is not available", "tmux_unavailable"),
    ("no leader pane: run inside tmux ($TMUX_PANE), or pass --leader-pane %ID or --new-session", "leader_pane_missing"),
    ("leader pane id must look like %N, got '99'", "leader_pane_invalid"),
    ("choose one of --leader-pane and --new-session", "leader_pane_ambiguous"),
    ("invalid tmux session name: 'a.b'", "session_name_invalid"),
    ("Failed to create tmux session omx-team-a: duplicate session", "session_create_failed"),
    ("failed to tag tmux pane %3: no such pane", "leader_tag_failed"),
    ("exact_pane_proof_unavailable:%99:query_failed", "exact_pane_proof_unavailable"),
    ("pane_snapshot_unavailable:query_failed:tmux timed out after 1 s: list-panes -a", "pane_snapshot_unavailable"),
    ("team_owner_unavailable:%3:timed out", "team_owner_unavailable"),
    ("leader_pane_owned_by_other_team:%3:team:beta", "leader_pane_owned_by_other_team"),
    ("tmux pane identity changed: %3", "leader_pane_changed"),
    ("Dynamic scaling is disabled. Set OMX_TEAM_SCALING_ENABLED=1 to enable.", "scaling_disabled"),
    ("count must be a positive integer (got 0)", "count_invalid"),
    ("Cannot add 30 workers: would exceed max_workers (20).", "max_workers_exceeded"),
    ("scale_up_split_target_proof_unavailable:%9:query_failed", "scale_up_split_target_proof_unavailable"),
    ("scale_up_split_target_proof_unavailable:%9:absent", "scale_up_split_target_proof_unavailable"),
    ("scale_up_split_target_pid_changed:%9:100:200", "scale_up_split_target_pid_changed"),
    ("scale_up_split_target_owner_changed:%9", "scale_up_split_target_owner_changed"),
    ("scale_up_split_target_owner_unavailable:%9", "scale_up_split_target_owner_unavailable"),
    ("scale_up_split_target_pid_persistence_failed:%9:cannot write", "scale_up_split_target_pid_persistence_failed"),
    ("scale_up_pane_geometry_unavailable:no window", "scale_up_pane_geometry_unavailable"),
    ("scale_up_no_room:window 20x10 too small", "scale_up_no_room"),
    ("worker_cli_unavailable:codex: the worker CLI 'codex' selected for worker-2 was not found on PATH; install it",
     "worker_cli_unavailable"),
    ("worker_cli_not_ready:claude:worker-2:onboarding not done (/h/.claude.json); fix: run `claude` once as this "
     "user and finish its first-run questions", "worker_cli_not_ready"),
    ("placeholder_agent_unavailable: the panefleet placeholder agent was not found", "placeholder_agent_unavailable"),
    ("scale_up_stray_pane_kept:worker-3:%7:stray_pid_unrecorded:%7", "scale_up_stray_pane_kept"),
    ("respawn_stray_pane_kept:worker-3:%7:pane_pid_changed", "respawn_stray_pane_kept"),
    ("scale_up_stray_listing_unavailable:worker-3", "scale_up_stray_listing_unavailable"),
    ("respawn_stray_listing_unavailable:worker-3", "respawn_stray_listing_unavailable"),
    ("scale_up_rollback_cleanup_debt:pane_pid_changed:%5", "scale_up_rollback_cleanup_debt"),
    ("scale_up_rollback_membership_persistence_failed:EIO", "scale_up_rollback_membership_persistence_failed"),
    ("scale_up_worker_start_failed:worker-2:codex exited 1", "scale_up_worker_start_failed"),
    ("Worker bogus not found in team alpha", "worker_not_found"),
    ("Not enough idle workers to remove: found 0, requested 1. Use force=true to remove busy workers.",
     "not_enough_idle_workers"),
    ("No workers selected for removal", "no_workers_selected"),
    ("Cannot remove all workers \u2014 at least 1 must remain", "last_worker"),
    ("canonical_scale_down_membership_changed", "canonical_scale_down_membership_changed"),
    ("scale_down_task_reconciliation_failed:Error: boom", "scale_down_task_reconciliation_failed"),
    ("scale_down_cleanup_debt:pane_teardown_failed:%13", "scale_down_cleanup_debt"),
    ("scale_down_cleanup_debt_unreadable:SyntaxError: Unexpected end", "scale_down_cleanup_debt_unreadable"),
    ("scale_down_cleanup_debt_malformed", "scale_down_cleanup_debt_malformed"),
    ("scale_down_cleanup_debt_membership_inconsistent", "scale_down_cleanup_debt_membership_inconsistent"),
    ("scale_down_cleanup_debt_unresolved:%13", "scale_down_cleanup_debt_unresolved"),
    ("worktree_rollback_failed:git worktree remove failed", "worktree_rollback_failed"),
    ("injected_scale_down_interruption:after-first-task-write", "injected_scale_down_interruption"),
    ("respawn_worker_not_found:worker-99", "respawn_worker_not_found"),
    ("respawn_worker_alive:worker-2:%5", "respawn_worker_alive"),
    ("respawn_startup_script_missing:worker-2", "respawn_startup_script_missing"),
    ("respawn_tag_failed:%7", "respawn_tag_failed"),
    ("peek_worker_not_found:worker-9", "peek_worker_not_found"),
    ("peek_pane_unproven:%2:absent", "peek_pane_unproven"),
    ("peek_no_pane:worker-2", "peek_no_pane"),
    ("peek_capture_failed:%2:no such pane", "peek_capture_failed"),
    ("peek_lines_out_of_range:0 (1 to 10000)", "peek_lines_out_of_range"),
    ("logs_worker_not_found:worker-9", "logs_worker_not_found"),
    ("logs_pane_unproven:%2:absent", "logs_pane_unproven"),
    ("logs_no_pane:worker-2", "logs_no_pane"),
    ("logs_capture_failed:%2:no such pane", "logs_capture_failed"),
    ("logs_lines_out_of_range:0 (1 to 10000)", "logs_lines_out_of_range"),
    ("logs_transcript_unreadable:/w/transcripts/worker-2.20260101T000000.001Z.log:EACCES", "logs_transcript_unreadable"),
    ("send_worker_not_found:worker-9", "send_worker_not_found"),
    ("send_message_empty", "send_message_empty"),
    ("send_message_too_long:70000:65536", "send_message_too_long"),
    ("send_message_control_character:U+001B:4", "send_message_control_character"),
    ("send_role_not_found:reviewer:executor", "send_role_not_found"),
    ("send_no_workers", "send_no_workers"),
    ("send_no_pane:worker-2", "send_no_pane"),
    ("send_pane_unproven:worker-2:%2:absent", "send_pane_unproven"),
    ("send_mailbox_malformed:/t/mailbox/worker-1.json:not JSON", "send_mailbox_malformed"),
    ("Failed to create tmux pane for worker-2: no space for new pane", "pane_create_failed"),
    ("task_not_found", "task_not_found"),
    ("claim_conflict", "claim_conflict"),
    ("blocked_dependency", "blocked_dependency"),
    ("worker_not_found", "worker_not_found"),
    ("already_terminal", "already_terminal"),
    ("Invalid task id: ../1", "task_id_invalid"),
    ("Invalid task status: done", "task_status_invalid"),
    ("Timed out acquiring scaling lock for team alpha", "lock_timeout"),
    ("Timed out acquiring team task lock for k9: /w/.team-locks/k9.membership held by an unknown holder (no owner "
     "file), taken over at 2026-12-02T10:39:11.494Z unless an owner is written", "lock_timeout"),
    ("interrupted", "interrupted"),
]

CODE_ONLY = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+:\S")  # a code with details glued on, e.g. claim_x:%3


def assert_for_people(text: str) -> None:
    assert is_sentence(text), text
    assert CODE_ONLY.search(text) is None, f"a bare code reaches a person: {text}"


@pytest.mark.parametrize(("message", "code"), EXAMPLES, ids=[code + ":" + m[:24] for m, code in EXAMPLES])
def test_every_example_is_explained_by_a_rule(message: str, code: str) -> None:
    found = explain(message, Scene(command="team scale-up", team="alpha", cwd="/w", socket="pf-none"))
    assert found.known and found.code == code
    assert_for_people(found.text)


def test_every_rule_has_an_example() -> None:
    used = {next(i for i, (pattern, _c, _s) in enumerate(RULES) if pattern.fullmatch(message))
            for message, _code in EXAMPLES}
    assert used == set(range(len(RULES))), [RULES[i][0].pattern for i in set(range(len(RULES))) - used]


def test_a_lock_timeout_keeps_who_holds_the_lock_and_until_when() -> None:
    found = explain("Timed out acquiring team task lock for k9: /w/.team-locks/k9.membership held by pid 7 (alive), "
                    "lease until 2026-12-02T10:39:11.494Z", Scene(team="k9"))
    assert "team task lock of k9 (/w/.team-locks/k9.membership held by pid 7 (alive), lease until " \
           "2026-12-02T10:39:11.494Z)" in found.text


def test_a_message_no_rule_knows_is_still_words() -> None:
    found = explain("some_new_failure:%3:x", Scene())
    assert (found.code, found.known) == ("some_new_failure", False) and is_sentence(found.text)


# ------------------------------------------------------------------------------- through the CLI


@pytest.fixture
def work(clean_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("OMX_TEAM_SCALING_ENABLED", "1")
    monkeypatch.setenv("PANEFLEET_TMUX_SOCKET", "pf-none-" + tmp_path.name)  # no server runs there
    monkeypatch.setenv("OMX_TEAM_WORKER_CLI", "placeholder")
    cwd = tmp_path / "work"
    cwd.mkdir()
    return cwd


def _busy(team: Team, *workers: int) -> None:
    """Workers (by index) each with a task in progress, claimed until 2999."""
    for index in workers or (2,):
        worker = f"worker-{index}"
        team.write_task(str(index), "one", owner=worker, status="in_progress", version=2,
                        claim={"owner": worker, "token": "t", "leased_until": "2999-01-01T00:00:00.000Z"})
        team.update(lambda c, i=index: c["workers"][i - 1].__setitem__("assigned_tasks", [str(i)]))
        status = team.worker_file(worker, "status.json")
        status.parent.mkdir(parents=True, exist_ok=True)
        status.write_text(json.dumps({"state": "working", "current_task_id": str(index),
                                      "updated_at": "2026-01-01T00:00:00.000Z"}))


# (name, setup of the team folder, team command, exit, error_code, words the sentence must have)
Setup = Callable[[Path], Any]
CASES: list[tuple[str, Setup, list[str], int, str, list[str]]] = [
    ("team not found", lambda w: None, ["status", "nosuch"], 4, "team_not_found", ["team init nosuch"]),
    ("corrupt config", lambda w: (Team(w, "t", 2).dir / "config.json").write_text("{\n"),
     ["scale-down", "t", "--worker", "worker-1"], 1, "team_state_malformed", ["config.json", "malformed JSON"]),
    ("unreadable debt", lambda w: Team(w, "t", 2).debt_path().write_text("{\n"),
     ["scale-down", "t", "--worker", "worker-1", "--force"], 4, "scale_down_cleanup_debt_unreadable",
     ["not valid JSON", "team debt show t"]),
    ("unknown worker", lambda w: Team(w, "t", 3), ["scale-down", "t", "--worker", "bogus"], 4, "worker_not_found",
     ["bogus", "worker-1, worker-2, worker-3"]),
    ("busy workers", lambda w: _busy(Team(w, "t", 3), 2, 3), ["scale-down", "t", "--count", "2"], 4,
     "not_enough_idle_workers", ["--force"]),
    ("last worker", lambda w: Team(w, "t", 1), ["scale-down", "t", "--worker", "worker-1", "--force"], 4,
     "last_worker", ["at least one worker"]),
    ("respawn unknown worker", lambda w: Team(w, "t", 2), ["respawn", "t", "worker-99"], 4,
     "respawn_worker_not_found", ["worker-99", "worker-1, worker-2"]),
    ("claim held", lambda w: _busy(Team(w, "t", 3)), ["task", "claim", "t", "2", "--worker", "worker-3"], 4,
     "claim_conflict", ["Task 2", "worker-2", "2999-01-01"]),
    ("claim unknown task", lambda w: Team(w, "t", 2).write_task("1", "one"),
     ["task", "claim", "t", "4", "--worker", "worker-1"], 4, "task_not_found", ["task 4", "its tasks: 1"]),
    ("claim by unknown worker", lambda w: Team(w, "t", 2).write_task("1", "one"),
     ["task", "claim", "t", "1", "--worker", "worker-9"], 4, "worker_not_found", ["worker-9", "worker-1, worker-2"]),
    ("claim finished task", lambda w: Team(w, "t", 2).write_task("1", "one", status="completed"),
     ["task", "claim", "t", "1", "--worker", "worker-1"], 4, "already_terminal", ["already finished"]),
    ("no pane to split", lambda w: Team(w, "t", 1), ["scale-up", "t", "--count", "1"], 4,
     "scale_up_split_target_proof_unavailable", ["records no pane id there"]),
    ("split target without a server", lambda w: Team(w, "t", 1).set_panes(leader="%1"),
     ["scale-up", "t", "--count", "1"], 4,
     "scale_up_split_target_proof_unavailable", ["no tmux server is running", "--tmux-socket"]),
]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(("name", "setup", "argv", "exit_code", "error_code", "words"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_failure_reads_as_a_sentence_and_answers_its_code(
        work: Path, capsys: pytest.CaptureFixture[str], name: str, setup: Setup, argv: list[str], exit_code: int,
        error_code: str, words: list[str]) -> None:
    setup(work)
    code, out, err = _run(["team", *argv, "--cwd", str(work)], capsys)
    assert code == exit_code, (out, err)
    line = err.splitlines()[0]
    assert line.split(": ", 1)[0] in ("error", "scale-up failed", "respawn failed"), line
    assert_for_people(line.split(": ", 1)[1])
    for word in words:
        assert word in err, (word, err)
    code, out, _err = _run(["team", *argv, "--cwd", str(work), "-o", "json"], capsys)
    answer = json.loads(out)
    assert code == exit_code and answer["ok"] is False and answer["error_code"] == error_code
    assert_for_people(answer["error"])
    assert answer["error"] in err  # the same sentence in both


def test_a_dry_run_predicts_the_same_sentence(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Team(work, "t", 1)
    argv = ["team", "scale-down", "t", "--worker", "worker-1", "--force", "--cwd", str(work)]
    code, out, _ = _run([*argv, "--dry-run", "-o", "json"], capsys)
    predicted = json.loads(out)["predicted"]
    assert code == 4 and predicted["error_code"] == "last_worker"
    code, out, _ = _run([*argv, "--dry-run"], capsys)
    assert predicted["error"] in out


@pytest.mark.tmux
def test_a_leader_pane_on_a_server_that_is_not_running(tmux_server: TmuxServer, clean_env: dict[str, str],
                                                       tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With no server on the socket: "no tmux server is running", never a bare proof code."""
    code, out, err = _run(["team", "init", "alpha", "--leader-pane", "%99", "--tmux-socket", tmux_server.name,
                           "--cwd", str(tmp_path)], capsys)
    assert code == 4
    assert f"no tmux server is running on socket {tmux_server.name}" in err
    assert_for_people(err.split(": ", 1)[1])
    tmux_server.new_session("lead")  # now a server runs, but not that pane
    code, out, _ = _run(["team", "init", "alpha", "--leader-pane", "%99", "--tmux-socket", tmux_server.name,
                         "--cwd", str(tmp_path), "-o", "json"], capsys)
    answer = json.loads(out)
    assert code == 4 and answer["error_code"] == "exact_pane_proof_unavailable"
    assert "no such pane exists" in answer["error"] and tmux_server.name in answer["error"]


def test_usage_errors_and_internal_failures_carry_a_code_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                             ) -> None:
    code, out, _ = _run(["team", "scale-up", "t", "--count", "0", "-o", "json"], capsys)
    assert code == 2 and json.loads(out)["error_code"] == "usage_error"
    code, out, _ = _run(["replay", str(tmp_path / "none.jsonl"), "-o", "json"], capsys)
    assert code == 1 and json.loads(out)["error_code"] == "audit_unreadable"
    (tmp_path / "p.json").write_text("{}")
    code, out, _ = _run(["show", str(tmp_path / "p.json"), "-o", "json"], capsys)
    assert json.loads(out)["error_code"] in ("usage_error", "plan_unreadable")
