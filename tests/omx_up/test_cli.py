"""The scale-up command line: task parsing, usage errors, and the text explanation of outcomes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shell.cli.environment import recorded_env
from shell.cli.scale_up import explain
from shell.cli.task_input import parse_task

CLI = [sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py")]


def test_parse_task_accepts_the_documented_shape() -> None:
    spec = parse_task('{"subject": "s", "description": "d", "owner": "worker-2", "role": "writer", '
                      '"blocked_by": ["1"]}')
    assert (spec.subject, spec.description, spec.owner, spec.role, spec.blocked_by) == (
        "s", "d", "worker-2", "writer", ("1",))


def test_parse_task_takes_plain_text_as_subject_and_description() -> None:
    spec = parse_task("not json\n  but a task\n")
    assert (spec.subject, spec.description, spec.owner, spec.role, spec.blocked_by) == (
        "not json", "but a task", None, None, None)
    spec = parse_task("[1] one line")
    assert (spec.subject, spec.description) == ("[1] one line", "[1] one line")


@pytest.mark.parametrize(("text", "problem"), [
    ("{not json", "not JSON"),
    ("   ", "empty"),
    ('{"subject": "s"}', "description"),
    ('{"subject": "s", "description": "d", "colour": "red"}', "unknown keys: colour"),
    ('{"subject": "s", "description": "d", "blocked_by": [1]}', "blocked_by"),
    ('{"subject": "s", "description": "d", "owner": 2}', "owner"),
])
def test_parse_task_rejects_bad_input(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_task(text)


def test_bad_task_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "team", "scale-up", "alpha", "--count", "1", "--task", "{", "--cwd", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--task is not JSON" in done.stderr


def test_disabled_gate_prints_one_json_object_and_refuses(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "PANEFLEET_STATE_DIR": str(tmp_path / "pf")}
    done = subprocess.run([*CLI, "team", "scale-up", "alpha", "--count", "1", "--cwd", str(tmp_path), "-o", "json"],
                          capture_output=True, text=True, env=env, timeout=60)
    answer = json.loads(done.stdout)
    assert done.stdout.count("\n") == 1 and (answer["ok"], answer["error_code"]) == (False, "scaling_disabled")
    assert answer["error_detail"] == "Dynamic scaling is disabled. Set OMX_TEAM_SCALING_ENABLED=1 to enable."
    assert "OMX_TEAM_SCALING_ENABLED=1 panefleet team scale-up" in answer["error"]
    assert done.returncode == 4


def test_explain_debt_names_every_kept_pane_and_the_retry_path() -> None:
    text = explain({"ok": False, "error": "scale_up_rollback_cleanup_debt:pane_pid_unpinned:%32;"
                                          "pane_teardown_failed:%31;pane_teardown_unresolved:%32"}, "debt")
    assert "%32: a rolled-back worker's pane with no pinned pid (kept as a member" in text
    assert "%31: a rolled-back worker's pane whose kill failed" in text
    assert "%32: a rolled-back worker's pane not proven gone" in text
    assert "team debt reconcile" in text


def test_explain_distinguishes_refusal_from_rollback() -> None:
    assert "Nothing was changed." in explain({"ok": False, "error": "tmux is not available"}, "refused")
    rolled = explain({"ok": False, "error": "scale_up_split_target_proof_unavailable:%21:query_failed"}, "error")
    assert "rolled back" in rolled
    ok = explain({"ok": True, "addedWorkers": [{"name": "worker-2", "pane_id": "%31", "pid": 7, "role": "executor",
                                                "working_dir": "/w"}], "newWorkerCount": 2, "nextWorkerIndex": 3}, "ok")
    assert "added 1 worker(s)" in ok and "worker-2: pane %31 pid 7" in ok


def test_only_relevant_environment_is_recorded() -> None:
    env = recorded_env({"OMX_TEAM_SCALING_ENABLED": "1", "CODEX_HOME": "/c", "AWS_SECRET_ACCESS_KEY": "x",
                      "HOME": "/h", "https_proxy": "p", "PATH": "/bin"})
    assert env == {"CODEX_HOME": "/c", "HOME": "/h", "OMX_TEAM_SCALING_ENABLED": "1", "https_proxy": "p"}


def test_explain_claims_no_rollback_when_nothing_was_changed() -> None:
    text = explain({"ok": False, "error": "team_state_malformed:config.json: not JSON"}, "error", changed=False)
    assert "Nothing was changed." in text
    assert "rolled back" not in text


def test_explain_lists_the_changes_of_a_run_that_stopped_before_its_rollback() -> None:
    from pure import model as m
    from pure import wire

    step = m.MakeDir(path="/s/team/t/workers/worker-2")
    text = explain({"ok": False, "error": "internal_error:RuntimeError:boom",
                    "changesMade": [wire.unstructure(step)]}, "error")
    assert "rolled back" not in text.replace("before it could roll back", "")
    assert "worker-2" in text


def test_changed_anything_ignores_reads_and_locks() -> None:
    from pure import model as m
    from shell.cli.scale_up import changed_anything

    lock = m.Entry(step=m.AcquireLock(path="/s/.team-locks/t.scaling", timeout_ms=1, retry_ms=1, stale_ms=1),
                   observation=m.Ack(ok=True))
    read = m.Entry(step=m.ReadFile(path="/s/team/t/config.json"), observation=m.FileData(content="{}"))
    assert not changed_anything([lock, read])
    write = m.Entry(step=m.WriteFile(path="/s/team/t/x", content=""), observation=m.Ack(ok=True))
    assert changed_anything([lock, write])
