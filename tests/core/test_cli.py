from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "cli.py")]


def test_schema_command_prints_the_committed_schema() -> None:
    done = subprocess.run([*CLI, "schema"], capture_output=True, text=True, check=True)
    assert done.stdout == (ROOT / "docs" / "schema.json").read_text(encoding="utf-8")


def test_usage_errors_exit_2() -> None:
    assert subprocess.run([*CLI, "team", "frobnicate"], capture_output=True).returncode == 2
    assert subprocess.run([*CLI], capture_output=True).returncode == 2


def test_decide_answers_a_planning_question_from_stdin() -> None:
    golden = json.loads((ROOT / "tests/goldens/tmux/teardown/killed_after_full_proof.json").read_text())
    question = {"operation": golden["operation"], "request": golden["request"], "journal": golden["journal"][:2]}
    done = subprocess.run([*CLI, "decide"], input=json.dumps(question), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"kind": "next", "steps": [golden["journal"][2]["step"]]}
    full = {**question, "journal": golden["journal"]}
    done = subprocess.run([*CLI, "decide"], input=json.dumps(full), capture_output=True, text=True)
    assert json.loads(done.stdout) == golden["decision"]


def test_decide_rejects_bad_input_with_a_clear_error() -> None:
    done = subprocess.run([*CLI, "decide"], input="{not json", capture_output=True, text=True)
    assert done.returncode == 2 and "JSON object" in done.stderr
    done = subprocess.run([*CLI, "decide"], input='{"operation": "nope"}', capture_output=True, text=True)
    assert done.returncode == 2 and "unknown operation 'nope'" in done.stderr
    bad = {"operation": "tmux.teardown", "request": {"targets": "x"}, "journal": []}
    done = subprocess.run([*CLI, "decide"], input=json.dumps(bad), capture_output=True, text=True)
    assert done.returncode == 2 and "TeardownRequest" in done.stderr


def test_replay_of_a_missing_or_garbage_file(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "replay", str(tmp_path / "none.jsonl")], capture_output=True, text=True)
    assert done.returncode == 1 and "No such file" in done.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n")
    done = subprocess.run([*CLI, "replay", str(bad)], capture_output=True, text=True)
    assert done.returncode == 1 and "malformed JSON" in done.stderr


def test_usage_errors_answer_json_when_json_was_asked() -> None:
    done = subprocess.run([*CLI, "team", "status", "-o", "json"], capture_output=True, text=True)
    assert done.returncode == 2
    assert json.loads(done.stdout) == {"ok": False, "error": "usage: the following arguments are required: team",
                                      "error_code": "usage_error"}
    done = subprocess.run([*CLI, "team", "status", "x", "--tmux-socket", "", "-o", "json"], capture_output=True, text=True)
    assert done.returncode == 2 and "invalid tmux socket name" in json.loads(done.stdout)["error"]
    done = subprocess.run([*CLI, "replay", "/nonexistent.jsonl", "-o", "json"], capture_output=True, text=True)
    assert done.returncode == 1 and json.loads(done.stdout)["ok"] is False


def test_replay_tells_an_interrupted_log_from_a_divergent_one(tmp_path: Path) -> None:
    golden = json.loads((ROOT / "tests/goldens/tmux/teardown/killed_after_full_proof.json").read_text())
    lines = [json.dumps({"type": "start", "format_version": "1.0", "operation": golden["operation"],
                         "request": golden["request"]})]
    lines += [json.dumps({"type": "entry", **e}) for e in golden["journal"][:2]]
    log = tmp_path / "cut.jsonl"
    log.write_text("\n".join(lines) + "\n")
    done = subprocess.run([*CLI, "replay", str(log), "-o", "json"], capture_output=True, text=True)
    report = json.loads(done.stdout)
    assert done.returncode == 1 and report["incomplete"] is True and report["divergence"] is None
    assert report["steps"] == 2


def test_decide_names_what_is_wrong() -> None:
    done = subprocess.run([*CLI, "decide"], input='{"operation": "nope"}', capture_output=True, text=True)
    assert "known: " in done.stderr and "tmux.teardown" in done.stderr
    bad = {"operation": "tmux.teardown", "request": {"targets": []}, "journal": ["x"]}
    done = subprocess.run([*CLI, "decide"], input=json.dumps(bad), capture_output=True, text=True)
    assert done.returncode == 2 and "journal[0] is invalid:" in done.stderr
