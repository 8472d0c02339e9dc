"""Every external call has a deadline (``shell/run/deadlines.py``, ``shell/run/process.py``): stub tools on
PATH that never answer, through the executor and through the real CLI."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pure import model as m
from shell.run import deadlines, fs
from shell.run.executor import Executor
from shell.run.process import run_process
from tests.omx_down.fixtures import Team
from tests.omx_up.fixtures import UpTeam

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "cli.py")]

# Records its pid and its child's, then never answers.
HANGING = """#!/bin/sh
echo $$ >> "{pids}"
sleep 3600 &
echo $! >> "{pids}"
wait
"""
# Like HANGING, but shrugs SIGTERM off: only SIGKILL ends it.
STUBBORN = """#!/bin/sh
trap '' TERM
echo $$ >> "{pids}"
sleep 3600 &
echo $! >> "{pids}"
wait
wait
"""
# A healthy tmux as far as scale-up of UpTeam needs (tests/omx_up/fixtures.py StubTmux), except that
# split-window never answers.
SPLIT_HANGS = """#!/bin/sh
[ "$1" = "-L" ] && shift 2
echo "$1" >> "{log}"
case "$1" in
  -V) echo "tmux 3.2a" ;;
  list-panes) printf '%%11\\t0\\t42411\\n%%21\\t0\\t42421\\n' ;;
  show-option) echo "team:scale-up" ;;
  split-window) echo $$ >> "{pids}"; sleep 3600 ;;
  *) : ;;
esac
"""


def stub(bin_dir: Path, name: str, text: str) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def gone(pid: int) -> bool:
    facts = fs.process_start_ms(pid)
    return facts is None or facts[0] in ("Z", "X")


def assert_all_gone(pids_file: Path) -> None:
    """Every process a stub recorded has ended (a failure kills them: no sleeper outlives the test)."""
    pids = [int(line) for line in pids_file.read_text().split()]
    assert pids
    deadline = time.monotonic() + 2
    while not all(gone(p) for p in pids):
        if time.monotonic() >= deadline:
            alive = [p for p in pids if not gone(p)]
            for pid in alive:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"still running: {alive}")
        time.sleep(0.02)


# -------------------------------------------------------------------------------------- the variable


def test_defaults_and_overrides() -> None:
    default = deadlines.parse(None)
    assert [default.seconds(t) for t in ("tmux", "git", "herdr", "anything")] == [10, 120, 30, 60]
    assert deadlines.parse("") == default
    every = deadlines.parse("5")
    assert [every.seconds(t) for t in ("tmux", "git", "herdr", "anything")] == [5, 5, 5, 5]
    some = deadlines.parse("tmux=0.5, git=60")
    assert [some.seconds(t) for t in ("tmux", "git", "herdr", "anything")] == [0.5, 60, 30, 60]
    mixed = deadlines.parse("20,git=300")
    assert [mixed.seconds(t) for t in ("tmux", "git", "herdr", "anything")] == [20, 300, 20, 20]


@pytest.mark.parametrize("value", ["0", "-1", "abc", "tmux=", "inf", "nan", "1e3", "tmux=5,,git=1"])
def test_bad_values_are_refused(value: str) -> None:
    with pytest.raises(ValueError, match="PANEFLEET_CALL_TIMEOUT: .* is not a positive number of seconds"):
        deadlines.parse(value)


def test_unknown_tool_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown tool 'tmxu' in 'tmxu=5' \(known: git, herdr, herdr-machine, ssh, tmux\)"):
        deadlines.parse("tmxu=5")


def test_a_herdr_call_to_a_saved_machine_has_a_deadline_of_its_own() -> None:
    machine = deadlines.deadline_key("herdr", ("--machine", "m1", "pane", "list"))
    local = deadlines.deadline_key("herdr", ("--session", "fleet", "pane", "list"))
    assert (machine, local, deadlines.deadline_key("tmux", ("--machine",))) == ("herdr-machine", "herdr", "tmux")
    assert [deadlines.parse(None).seconds(k) for k in (machine, local)] == [120, 30]
    assert [deadlines.parse("herdr=10").seconds(k) for k in (machine, local)] == [120, 10]
    assert [deadlines.parse("herdr-machine=600").seconds(k) for k in (machine, local)] == [600, 30]
    assert [deadlines.parse("5").seconds(k) for k in (machine, local)] == [5, 5]


def test_cli_refuses_a_bad_variable_as_a_usage_error(tmp_path: Path) -> None:
    env = {**os.environ, "PANEFLEET_CALL_TIMEOUT": "tmux=soon", "PANEFLEET_STATE_DIR": str(tmp_path / "pf")}
    done = subprocess.run([*CLI, "team", "status", "alpha", "--cwd", str(tmp_path), "-o", "json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"].startswith("usage: PANEFLEET_CALL_TIMEOUT: 'tmux=soon'")


# -------------------------------------------------------------------------------------- the executor


def test_a_hanging_call_is_killed_with_its_process_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    stub(tmp_path / "bin", "tmux", HANGING.format(pids=pids))
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    started = time.monotonic()
    proc = run_process("tmux", ("list-panes", "-a"), env=env, timeout=0.5)
    assert time.monotonic() - started < 1.5
    assert proc == m.Proc(exit_code=None, stderr="tmux timed out after 0.5 s: list-panes -a")
    assert_all_gone(pids)  # the stub and the sleep it started


def test_sigterm_is_followed_by_sigkill(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    stub(tmp_path / "bin", "git", STUBBORN.format(pids=pids))
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "PANEFLEET_CALL_TIMEOUT": "git=0.3"}
    started = time.monotonic()
    observed = Executor(env=env).execute(m.Run(tool="git", args=("status",)))
    elapsed = time.monotonic() - started
    assert isinstance(observed, m.Proc) and observed.exit_code is None
    assert observed.stderr == "git timed out after 0.3 s: status"
    assert 0.3 + deadlines.KILL_GRACE_SECONDS - 0.05 < elapsed < 0.3 + deadlines.KILL_GRACE_SECONDS + 1
    assert_all_gone(pids)


def test_a_normal_call_is_answered_as_before(tmp_path: Path) -> None:
    proc = run_process("sh", ("-c", "echo out; echo err >&2; exit 3"), env=dict(os.environ), timeout=5)
    assert proc == m.Proc(exit_code=3, stdout="out\n", stderr="err\n")
    killed = run_process("sh", ("-c", "kill -TERM $$"), env=dict(os.environ), timeout=5)
    assert killed.exit_code == 128 + signal.SIGTERM


# ----------------------------------------------------------------------------------------- the CLI


def test_status_against_a_hanging_tmux_answers_within_the_deadline(tmp_path: Path) -> None:
    Team(tmp_path, "alpha", 1)
    pids = tmp_path / "pids"
    stub(tmp_path / "bin", "tmux", HANGING.format(pids=pids))
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "PANEFLEET_CALL_TIMEOUT": "tmux=1",
           "PANEFLEET_STATE_DIR": str(tmp_path / "pf")}
    env.pop("PANEFLEET_TMUX_SOCKET", None)
    started = time.monotonic()
    done = subprocess.run([*CLI, "team", "status", "alpha", "--cwd", str(tmp_path), "-o", "json"],
                          capture_output=True, text=True, env=env, timeout=60)
    elapsed = time.monotonic() - started
    assert elapsed < 1 + 1, elapsed
    assert done.returncode == 1, done
    error = json.loads(done.stdout)["error_detail"]
    assert error.startswith("pane_snapshot_unavailable:query_failed:tmux timed out after 1 s: list-panes -a -F ")
    assert_all_gone(pids)
    assert list((tmp_path / ".omx" / "state" / ".team-locks").iterdir()) == []


def _scale_up(tmp_path: Path, timeout: str) -> tuple[subprocess.Popen[str], UpTeam, Path, Path]:
    team = UpTeam(tmp_path / "work")
    log, pids = tmp_path / "tmux.log", tmp_path / "pids"
    stub(tmp_path / "bin", "tmux", SPLIT_HANGS.format(log=log, pids=pids))
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "PANEFLEET_CALL_TIMEOUT": timeout,
           "PANEFLEET_STATE_DIR": str(tmp_path / "pf"), "OMX_TEAM_SCALING_ENABLED": "1",
           "OMX_TEAM_SKIP_READY_WAIT": "1", "OMX_TEAM_WORKER_CLI": "placeholder"}
    env.pop("PANEFLEET_TMUX_SOCKET", None)
    run = subprocess.Popen([*CLI, "team", "scale-up", team.name, "--count", "1", "--cwd", str(team.cwd),
                            "-o", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return run, team, log, pids


def membership(team: UpTeam) -> list[object]:
    """Config and manifest but their generation (a commit and its rollback each bump it)."""
    return [{k: v for k, v in doc.items() if k != "config_generation"} for doc in (team.config(), team.manifest())]


def _lock_dirs(team: UpTeam) -> list[str]:
    root = Path(team.paths.state_root)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_dir() and p.name.endswith((".scaling", ".membership", ".lock", ".takeover")))


def test_scale_up_whose_split_hangs_rolls_back_and_leaves_no_lock(tmp_path: Path) -> None:
    run, team, log, pids = _scale_up(tmp_path, "tmux=1")
    before = membership(team)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 1, (out, err)
    error = json.loads(out)["error_detail"]
    assert error.startswith("Failed to create tmux pane for worker-2: tmux timed out after 1 s: split-window -v "
                            "-t %21 "), error
    assert log.read_text().split().count("split-window") == 1
    assert membership(team) == before
    assert not (team.dir / "workers" / "worker-2").exists()
    assert _lock_dirs(team) == []
    assert_all_gone(pids)


def _split_running(run: subprocess.Popen[str], team: UpTeam, pids: Path) -> None:
    deadline = time.monotonic() + 30
    while not (pids.exists() and pids.read_text().strip()):  # split-window is running, the lock is held
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.02)
    assert _lock_dirs(team) == [".team-locks/scale-up.scaling"]


def test_sigterm_during_a_change_lets_it_end_within_its_deadline_then_undoes_the_run(tmp_path: Path) -> None:
    """A change in flight is not cut short (only its answer says what it made): the hanging split
    ends at its deadline, and the run is undone as on any failure (docs/design-notes.md, "Interrupts")."""
    run, team, log, pids = _scale_up(tmp_path, "tmux=2")
    _split_running(run, team, pids)
    before = membership(team)
    started = time.monotonic()
    run.send_signal(signal.SIGTERM)
    out, _err = run.communicate(timeout=30)
    assert time.monotonic() - started < 2 + 3
    assert run.returncode == 130
    answer = json.loads(out)
    assert answer["interrupted"] is True and answer["error_detail"].startswith(
        "Failed to create tmux pane for worker-2: tmux timed out after 2 s: split-window "), answer
    assert membership(team) == before and not (team.dir / "workers" / "worker-2").exists()
    assert _lock_dirs(team) == []
    assert_all_gone(pids)


def test_a_second_sigterm_stops_at_once_releases_the_locks_and_kills_the_call(tmp_path: Path) -> None:
    run, team, log, pids = _scale_up(tmp_path, "tmux=60")
    _split_running(run, team, pids)
    run.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    run.send_signal(signal.SIGTERM)
    run.communicate(timeout=10)
    assert run.returncode == 128 + signal.SIGTERM
    assert _lock_dirs(team) == []
    assert_all_gone(pids)
