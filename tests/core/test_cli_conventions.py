"""Command-line conventions over the whole parser: global options in either position, ``--version``,
completion scripts, streams and exit codes, a boolean ``ok`` in every JSON answer, audit pruning."""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import cli
from shell.cli.args import leaves, takes_session
from shell.run import audit_prune
from tests.cli_process import run_cli

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "cli.py")]


def _value(action: argparse.Action) -> str:
    if action.choices:
        return str(next(iter(action.choices)))
    if action.type in (int,) or getattr(action.type, "__name__", "") in ("positive_int", "non_negative_int",
                                                                          "_non_negative"):
        return "1"
    if getattr(action.type, "__name__", "") == "_version":
        return "null"
    if action.dest == "interval":
        return "1"
    return "x"


def minimal_args(parser: argparse.ArgumentParser) -> list[str]:
    """The required positionals and options of a command, with plain values."""
    words: list[str] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.dest in ("help",):
            continue
        if not action.option_strings:
            count = action.nargs if isinstance(action.nargs, int) else 1
            words += [_value(action)] * count
        elif action.required:
            words += [action.option_strings[-1], _value(action)]
    return words


def commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    return list(leaves(cli.build_parser()))


GLOBALS = ["-o", "json", "--tmux-socket", "pf-conv", "-v"]


def _parse(argv: list[str]) -> argparse.Namespace:
    from shell.cli.args import apply_global_defaults

    args = cli.build_parser(argv).parse_args(argv)
    assert apply_global_defaults(args) is None
    return args


@pytest.mark.parametrize(("path", "parser"), commands(), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_command_takes_every_global_option_before_or_after(path: tuple[str, ...],
                                                                 parser: argparse.ArgumentParser) -> None:
    rest = minimal_args(parser)
    positions = {
        "before": [*GLOBALS, *path, *rest],
        "after": [*path, *rest, *GLOBALS],
        "between": [*path[:1], *GLOBALS, *path[1:], *rest],
    }
    for where, argv in positions.items():
        args = _parse(argv)
        assert (args.output, args.tmux_socket, args.verbose) == ("json", "pf-conv", 1), (where, argv)
        assert args.command_path == path
    plain = _parse([*path, *rest])
    assert (plain.output, plain.tmux_socket, plain.verbose) == ("text", None, 0)
    # the last one given wins
    assert _parse(["-o", "json", *path, *rest, "-o", "text"]).output == "text"
    if takes_session(parser):
        for argv in (["--session", "s1", *path, *rest], [*path, *rest, "--session", "s1"],
                     [*path[:1], "--session", "s1", *path[1:], *rest]):
            assert _parse(argv).session == "s1", argv
        assert _parse([*path, *rest]).session is None


def test_session_before_a_command_that_has_none_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--session", "s", "team", "status", "alpha", "-o", "json"]) == 2
    out = capsys.readouterr().out
    assert json.loads(out) == {"ok": False, "error": "usage: --session does not apply to `team status` "
                                                     "(it takes no session)", "error_code": "usage_error"}


def test_json_before_the_command(tmp_path: Path, clean_env: dict[str, str]) -> None:
    for argv in (["-o", "json", "team", "status", "nosuch", "--cwd", str(tmp_path)],
                 ["team", "status", "nosuch", "--cwd", str(tmp_path), "-o", "json"]):
        done = run_cli(argv, env=clean_env)
        assert done.returncode == 4, done.stderr
        answer = json.loads(done.stdout)
        assert (answer["ok"], answer["error_code"], answer["error_detail"]) == (False, "team_not_found",
                                                                                "Team nosuch not found")


def test_version() -> None:
    from shell.run.loop import panefleet_version

    done = subprocess.run([*CLI, "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == f"panefleet {panefleet_version()}\n"


def test_completion_scripts_come_from_the_parser(tmp_path: Path) -> None:
    bash = subprocess.run([*CLI, "completion", "bash"], capture_output=True, text=True)
    assert bash.returncode == 0, bash.stderr
    for word in ("scale-up", "scale-down", "reconcile", "apply", "--plan-out", "--tmux-socket"):
        assert word in bash.stdout, word
    script = tmp_path / "panefleet.bash"
    script.write_text(bash.stdout)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    # bash completes a command and an option through the generated function
    probe = (f"source {script}\nCOMP_WORDS=(panefleet team sca); COMP_CWORD=2; COMP_LINE='panefleet team sca'; "
             "COMP_POINT=${#COMP_LINE}\n_shtab_panefleet\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True)
    assert {"scale-up", "scale-down"} <= set(done.stdout.split()), done.stdout + done.stderr
    zsh = subprocess.run([*CLI, "completion", "zsh"], capture_output=True, text=True)
    assert zsh.returncode == 0 and zsh.stdout.startswith("#compdef panefleet")
    assert "scale-up" in zsh.stdout
    bad = subprocess.run([*CLI, "completion", "fish"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == "" and "invalid choice" in bad.stderr


def test_zsh_completion_script_parses(tmp_path: Path) -> None:
    """``zsh -n`` accepts the zsh script. Without zsh this skips, except under CI (``CI=true``, set by
    .ci/run), where it fails: ``./dev test`` installs zsh."""
    if shutil.which("zsh") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("zsh is not installed (./dev test installs it)")
        pytest.skip("zsh is not installed (./dev test installs it)")
    zsh = subprocess.run([*CLI, "completion", "zsh"], capture_output=True, text=True)
    assert zsh.returncode == 0, zsh.stderr
    script = tmp_path / "_panefleet"
    script.write_text(zsh.stdout)
    checked = subprocess.run(["zsh", "-n", str(script)], capture_output=True, text=True)
    assert checked.returncode == 0 and checked.stderr == "", checked.stderr


@pytest.mark.parametrize("argv", [
    ["team", "scale-up", "alpha", "--count", "-1"],
    ["team", "scale-up", "alpha", "--count", "0"],
    ["team", "scale-down", "alpha", "--count", "-2"],
    ["team", "scale-up", "alpha", "--count", "1", "--task", "{not json"],
    ["herdr", "reconcile", "--max-attempts", "-1"],
])
def test_input_errors_exit_2_on_stderr_or_as_one_json_object(argv: list[str], capsys: pytest.CaptureFixture[str],
                                                            clean_env: dict[str, str]) -> None:
    assert cli.main(argv) == 2
    text = capsys.readouterr()
    assert text.out == "" and text.err
    assert cli.main([*argv, "-o", "json"]) == 2
    answer = capsys.readouterr().out.splitlines()
    assert len(answer) == 1 and json.loads(answer[0])["ok"] is False


def test_text_refusals_go_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    clean_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMX_TEAM_SCALING_ENABLED", "1")
    for argv in (["team", "status", "nosuch"], ["team", "scale-down", "nosuch"], ["team", "debt", "show", "nosuch"]):
        assert cli.main([*argv, "--cwd", str(tmp_path)]) == 4
        text = capsys.readouterr()
        assert text.out == "" and "Team nosuch was not found" in text.err, argv


# ----------------------------------------------------------------------- every JSON answer has `ok`


def _answer(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, Any]:
    done = run_cli(argv, env=env, cwd=cwd)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, (argv, done.stdout, done.stderr)
    return done.returncode, json.loads(lines[0])


SKIPPED = {("demo",): "starts its own tmux server (tests/core/test_team_tmux.py runs it)"}


def test_every_json_answer_has_a_boolean_ok(tmp_path: Path, clean_env: dict[str, str]) -> None:
    """Every command, with its plain arguments, against a team that does not exist, no tmux server
    and no herdr: each still answers exactly one JSON object with a boolean ``ok``, dry run or not."""
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": "pf-none-" + tmp_path.name, "PATH": os.defpath}
    (tmp_path / "plan.json").write_text("{}")
    seen = 0
    for path, parser in commands():
        if path in SKIPPED:
            continue
        rest = minimal_args(parser)
        if path[-1] in ("apply", "show", "replay"):
            rest = [str(tmp_path / "plan.json")]
        if path == ("herdr", "follow"):
            rest += ["--once"]
        if path == ("team", "task", "create"):
            rest += ["--subject", "s"]  # without a task it is a usage error
        variants = [[*path, *rest, "-o", "json"]]
        if any(a.dest == "dry_run" for a in parser._actions):
            # a team init plan needs a leader (without one it is a usage error, test_exit_codes.py); only the
            # dry run gets --new-session, so that no tmux server is started
            planned = ["--new-session"] if path == ("team", "init") else []
            variants.append([*path, *rest, *planned, "--dry-run", "-o", "json"])
        for argv in variants:
            _, answer = _answer(argv, env, tmp_path)
            assert isinstance(answer, dict) and isinstance(answer.get("ok"), bool), (argv, answer)
            if answer.get("error_code") == "herdr_not_found":  # refused before planning (docs/herdr-fleet.md)
                assert path[:1] == ("herdr",) and answer["ok"] is False, argv
            elif "--dry-run" in argv:
                assert set(answer) >= {"ok", "dryRun", "predicted", "changes", "steps"}, argv
                assert answer["ok"] == answer["predicted"]["ok"]
            seen += 1
    assert seen > 30


# ------------------------------------------------------------------------------------ audit logs


def _logs(directory: Path, count: int, age_days: float) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    made = []
    now = time.time()
    for n in range(count):
        path = directory / f"2026-{n:04d}-op.jsonl"
        path.write_text("{}\n")
        stamp = now - age_days * 86_400 - n
        os.utime(path, (stamp, stamp))
        made.append(path)
    return made


def test_audit_policy_from_env() -> None:
    assert audit_prune.policy_from_env({}) == audit_prune.Policy(500, 30)
    assert audit_prune.policy_from_env({"PANEFLEET_AUDIT_KEEP": "20"}) == audit_prune.Policy(20, None)
    assert audit_prune.policy_from_env({"PANEFLEET_AUDIT_KEEP": "7d"}) == audit_prune.Policy(None, 7)
    assert audit_prune.policy_from_env({"PANEFLEET_AUDIT_KEEP": "20, 7d"}) == audit_prune.Policy(20, 7)
    assert audit_prune.policy_from_env({"PANEFLEET_AUDIT_KEEP": "off"}) == audit_prune.Policy(None, None)
    for bad in ("0", "-3", "ten", "5w", "5,,"):
        with pytest.raises(ValueError, match="PANEFLEET_AUDIT_KEEP"):
            audit_prune.policy_from_env({"PANEFLEET_AUDIT_KEEP": bad})


def test_prune_keeps_the_newest_and_the_young(tmp_path: Path) -> None:
    old = _logs(tmp_path / "a", 5, age_days=40)
    young = _logs(tmp_path / "b", 5, age_days=1)
    (tmp_path / "a" / "notes.txt").write_text("kept")
    assert sorted(audit_prune.prune(tmp_path / "a", audit_prune.Policy(None, 30))) == sorted(old)
    assert (tmp_path / "a" / "notes.txt").exists()
    removed = audit_prune.prune(tmp_path / "b", audit_prune.Policy(2, 30))
    assert sorted(removed) == sorted(young[2:])  # young[0] is the newest
    fresh = _logs(tmp_path / "c", 3, age_days=0)  # written within the last minute: a run may still write it
    assert audit_prune.prune(tmp_path / "c", audit_prune.Policy(1, None)) == []
    assert all(p.exists() for p in fresh)
    assert audit_prune.prune(tmp_path / "c", audit_prune.Policy(None, None)) == []


def test_a_run_prunes_the_audit_logs_by_the_env_policy(tmp_path: Path, clean_env: dict[str, str]) -> None:
    audit = Path(clean_env["PANEFLEET_STATE_DIR"]) / "audit"
    old = _logs(audit, 4, age_days=2)
    env = {**clean_env, "PANEFLEET_AUDIT_KEEP": "3"}
    done = subprocess.run([*CLI, "team", "status", "nosuch", "--cwd", str(tmp_path)], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 4
    left = sorted(audit.glob("*.jsonl"))
    assert len(left) == 3 and not any(p in left for p in old[2:]) and all(p in left for p in old[:2])
    bad = subprocess.run([*CLI, "team", "status", "nosuch", "-o", "json"], capture_output=True, text=True,
                         env={**clean_env, "PANEFLEET_AUDIT_KEEP": "lots"})
    assert bad.returncode == 2 and "PANEFLEET_AUDIT_KEEP" in json.loads(bad.stdout)["error"]


# --------------------------------------------------------------------------------- status legend


def test_status_explains_every_state_it_prints() -> None:
    from shell.cli.status_view import render_status_explained

    result = {
        "ok": True, "team": "alpha", "stateRoot": "/s", "ownerId": "team:alpha", "workerCount": 2,
        "configGeneration": 3, "debt": None, "panesProven": False, "healthy": False,
        "panes": [
            {"role": "leader", "name": "leader", "paneId": "%0", "verdict": "live", "pid": 5, "pinnedPid": 5,
             "pidMatch": True, "owner": "team:alpha", "ownerRead": "value", "ownerMatch": True},
            {"role": "worker", "name": "worker-1", "paneId": "%1", "verdict": "live", "pid": 6, "pinnedPid": 6,
             "pidMatch": True, "owner": "team:alpha", "ownerRead": "value", "ownerMatch": True, "screen": "ready",
             "state": "unknown"},
            {"role": "worker", "name": "worker-2", "paneId": "%2", "verdict": "absent", "pinnedPid": 7,
             "pidMatch": False, "state": "unknown", "screen": None},
        ],
    }
    text = render_status_explained(result)
    legend = text.split("states:\n", 1)[1].splitlines()
    explained = {line.split("  ")[1].strip() for line in legend}
    assert explained == {"live", "agent ready", "status.json unknown", "absent"}
    assert any("status.json unknown" in line and "wrote no status yet" in line for line in legend)


def test_main_keeps_stdout_to_one_object_when_a_handler_prints_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def silent(args: argparse.Namespace) -> int:
        sys.stderr.write("panefleet demo: tmux is not installed\n")
        return 1

    monkeypatch.setattr(cli, "cmd_demo", silent)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    assert cli.main(["demo", "-o", "json"]) == 1
    assert json.loads(out.getvalue()) == {"ok": False, "error": "panefleet demo: tmux is not installed",
                                          "error_code": "failed"}
