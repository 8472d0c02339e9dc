"""Tasks and roles as a person types them, through the real command line (``cli.main`` in-process; a
real private tmux server for the scale-up plans): plain-text tasks, JSON tasks, and the usage errors
of ``shell/cli/task_input.py`` (exit 2, ``{"ok": false, "error": "usage: …"}`` with ``-o json``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import cli
from pure.omx.launch import AGENTS
from tests.conftest import TmuxServer
from tests.omx_down.fixtures import Team

CLI = [sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py")]


@pytest.fixture
def cwd(clean_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A working directory with team ``t`` (2 workers, task 1), away from the developer's Codex home."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PANEFLEET_TMUX_SOCKET", "pf-none-" + tmp_path.name)
    work = tmp_path / "work"
    work.mkdir()
    Team(work, "t", 2).write_task("1", "one")
    return work


def run(capsys: pytest.CaptureFixture[str], cwd: Path, *args: str) -> tuple[int, str]:
    """Exit status, and what was said: the JSON answer with ``-o json``, else stderr then stdout."""
    code = cli.main(["team", *args, "--cwd", str(cwd)])
    out = capsys.readouterr()
    return code, out.out if "json" in args else out.err + out.out


def usage_answer(capsys: pytest.CaptureFixture[str], cwd: Path, *args: str) -> str:
    """The usage error of a command, the same in both output modes; its message."""
    code, text = run(capsys, cwd, *args)
    assert code == 2, text
    prefix = "panefleet team " + args[0]
    assert text.startswith(prefix), text
    code, answer = run(capsys, cwd, *args, "-o", "json")
    parsed = json.loads(answer)
    assert code == 2 and parsed["ok"] is False and parsed["error"].startswith("usage: "), answer
    message = parsed["error"].removeprefix("usage: ")
    assert message in text
    return message


def task_file(cwd: Path, number: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((cwd / f".omx/state/team/t/tasks/task-{number}.json").read_text())
    return value


# ------------------------------------------------------------------------------ plain text and JSON


def test_plain_text_is_subject_then_description(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run(capsys, cwd, "task", "create", "t", "--task", "  fix the login bug\n\n  the form rejects\n"
                                                                  "valid emails  \n")
    assert code == 0, text
    task = task_file(cwd, "2")
    assert (task["subject"], task["description"]) == ("fix the login bug", "the form rejects\nvalid emails")
    assert (task["status"], task["depends_on"], task["version"]) == ("pending", [], 1)


def test_one_line_of_text_is_both_subject_and_description(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, cwd, "task", "create", "t", "--task", "fix the bug")[0] == 0
    task = task_file(cwd, "2")
    assert (task["subject"], task["description"]) == ("fix the bug", "fix the bug")
    assert run(capsys, cwd, "task", "create", "t", "--subject", "tidy up")[0] == 0  # a subject alone: the same
    assert (task_file(cwd, "3")["subject"], task_file(cwd, "3")["description"]) == ("tidy up", "tidy up")


def test_a_json_task_is_still_taken_as_given(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    given = {"subject": "s", "description": "d", "owner": "worker-2", "role": "writer", "blocked_by": ["1"]}
    code, text = run(capsys, cwd, "task", "create", "t", "--task", json.dumps(given))
    assert code == 0, text
    task = task_file(cwd, "2")
    assert {k: task[k] for k in given} == given and task["depends_on"] == ["1"]


def test_text_that_looks_like_json_but_is_not_shows_both_forms(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (("task", "create", "t"), ("scale-up", "t", "--count", "1")):
        message = usage_answer(capsys, cwd, *command, "--task", '{"subject": fix}')
        assert message.startswith("--task is not JSON: Expecting value (column 13)"), message
        assert '--task "fix the login bug"' in message and "--task '{\"subject\": " in message, message
    assert not (cwd / ".omx/state/team/t/tasks/task-2.json").exists()


def test_task_create_needs_one_way_of_giving_the_task(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_answer(capsys, cwd, "task", "create", "t").startswith("a task is needed")
    assert "give --task alone" in usage_answer(capsys, cwd, "task", "create", "t", "--task", "x", "--subject", "y")
    assert "given twice" in usage_answer(capsys, cwd, "task", "create", "t", "--task",
                                         '{"subject": "s", "description": "d", "owner": "worker-1"}',
                                         "--owner", "worker-2")


# --------------------------------------------------------------------------------- tasks and --count


def test_more_tasks_than_new_workers_says_how_many_of_each(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = usage_answer(capsys, cwd, "scale-up", "t", "--count", "1", "--task", "a", "--task", "b")
    assert message.startswith("2 tasks (--task) for 1 new worker (--count 1)"), message
    # fewer tasks than workers is oh-my-codex's ordinary case: past the input checks, to the scaling gate
    code, text = run(capsys, cwd, "scale-up", "t", "--count", "2", "--task", "a")
    assert code == 4 and "OMX_TEAM_SCALING_ENABLED" in text, text


# ------------------------------------------------------------------------------------------- roles


def test_an_unknown_agent_type_is_refused_with_the_closest_roles(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = usage_answer(capsys, cwd, "scale-up", "t", "--count", "1", "--agent-type", "exectuor")
    assert message.startswith("--agent-type 'exectuor' is not a known role (did you mean executor"), message
    listed = re.search(r"the known roles: ([^;]+);", message)
    assert listed is not None and listed.group(1).split(", ") == sorted(AGENTS)
    assert "not a known role" in usage_answer(capsys, cwd, "scale-up", "t", "--count", "1", "--agent-type", "banana")
    message = usage_answer(capsys, cwd, "scale-up", "t", "--count", "1", "--task",
                           '{"subject": "s", "description": "d", "role": "wirter"}')
    assert message.startswith("role of --task 'wirter' is not a known role (did you mean writer"), message
    assert "'banana' is not a known role" in usage_answer(capsys, cwd, "init", "t2", "--leader-pane", "%1",
                                                          "--agent-type", "banana")


def test_the_documented_roles_are_the_agent_table() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "scale-up.md").read_text()
    listed = re.search(r"a role of the agent table, `pure/omx/launch/agents.py`: ([^;]+);", text)
    assert listed is not None and " ".join(listed.group(1).split()).split(", ") == sorted(AGENTS)


def test_a_role_of_ones_own_or_a_low_role_is_known(cwd: Path, capsys: pytest.CaptureFixture[str],
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (cwd / ".codex/prompts").mkdir(parents=True)
    (cwd / ".codex/prompts/release-captain.md").write_text("You cut releases.\n")
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / ".omx-config.json").write_text(json.dumps({"agentModels": {"Data-Wrangler": "gpt-5"}}))
    monkeypatch.setenv("CODEX_HOME", str(home))
    for role in ("release-captain", "data-wrangler", "executor-low", "writer"):
        code, text = run(capsys, cwd, "scale-up", "t", "--count", "1", "--agent-type", role)
        assert code == 4 and "OMX_TEAM_SCALING_ENABLED" in text, (role, text)
    message = usage_answer(capsys, cwd, "scale-up", "t", "--count", "1", "--agent-type", "release-captian")
    assert "did you mean release-captain" in message and "release-captain, " in message, message


# ---------------------------------------------------------------------------------------- blocked_by


def test_blocked_by_a_task_the_team_does_not_have(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for dry in ((), ("--dry-run",)):
        message = usage_answer(capsys, cwd, "task", "create", "t", "--task", "x", "--blocked-by", "99", *dry)
        assert message == "--blocked-by 99: team t has no such task (its tasks: 1)", message
    message = usage_answer(capsys, cwd, "scale-up", "t", "--count", "1", "--task",
                           '{"subject": "s", "description": "d", "blocked_by": ["1", "7"]}')
    assert message == "blocked_by of --task 7: team t has no such task (its tasks: 1)", message
    assert not (cwd / ".omx/state/team/t/tasks/task-2.json").exists()
    code, text = run(capsys, cwd, "task", "create", "t", "--task", "x", "--blocked-by", "1")
    assert code == 0, text
    assert task_file(cwd, "2")["blocked_by"] == ["1"]


def test_blocked_by_on_a_team_without_tasks_says_so(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Team(cwd, "empty", 1)
    message = usage_answer(capsys, cwd, "task", "create", "empty", "--subject", "s", "--blocked-by", "1")
    assert message == "--blocked-by 1: team empty has no such task (it has no tasks yet)", message


def test_blocked_by_on_an_unknown_team_leaves_it_to_the_command(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run(capsys, cwd, "task", "create", "nosuch", "--subject", "s", "--blocked-by", "1")
    assert code == 4 and "nosuch" in text and "no such task" not in text, text


# -------------------------------------------------------------------------------- plans of new tasks


def test_task_create_plan_shows_the_new_task(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run(capsys, cwd, "task", "create", "t", "--task", "fix the bug", "--dry-run")
    assert code == 0 and "\n  + task 2  " in text and "created: fix the bug" in text, text
    assert not (cwd / ".omx/state/team/t/tasks/task-2.json").exists()


@pytest.mark.tmux
@pytest.mark.tmux_executors("control")
def test_scale_up_plans_and_writes_tasks_typed_as_text(tmux_server: TmuxServer, tmp_path: Path,
                                                        clean_env: dict[str, str]) -> None:
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1",
           "HOME": str(tmp_path / "home")}
    env.pop("CODEX_HOME", None)
    leader = tmux_server.new_session("lead")
    work = tmp_path / "w"
    work.mkdir()

    def pf(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *args, "--cwd", str(work)], capture_output=True, text=True, env=env, timeout=120)

    assert pf("team", "init", "alpha", "--leader-pane", leader, "--worker-cli", "placeholder").returncode == 0
    assert pf("team", "task", "create", "alpha", "--task", "an existing task").returncode == 0
    tasks = ("--task", "fix the bug\nthe login form rejects valid emails",
             "--task", '{"subject": "review it", "description": "d", "owner": "worker-2", "blocked_by": ["1"]}')
    plan = pf("team", "scale-up", "alpha", "--count", "2", *tasks, "--dry-run")
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    assert any(line.startswith("  + task 2 ") and line.endswith("created: fix the bug") for line in lines), plan.stdout
    assert any(line.startswith("  + task 3 ") and line.endswith("created: review it (owner worker-2)")
               for line in lines), plan.stdout
    assert not any(line.startswith("  ~ task") for line in lines), plan.stdout
    assert not (work / ".omx/state/team/alpha/tasks/task-2.json").exists()
    done = pf("team", "scale-up", "alpha", "--count", "2", *tasks)
    assert done.returncode == 0, done.stderr
    written = json.loads((work / ".omx/state/team/alpha/tasks/task-2.json").read_text())
    assert (written["subject"], written["description"]) == ("fix the bug", "the login form rejects valid emails")
    assert json.loads((work / ".omx/state/team/alpha/tasks/task-3.json").read_text())["depends_on"] == ["1"]
