"""``panefleet herdr …`` with no herdr on PATH (docs/herdr-fleet.md, "Without herdr"): the commands that
drive herdr refuse at once and change nothing; the ones that touch only the run store work and say
what they did not check."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.herdr.conftest import World
from tests.herdr.test_cli import Panefleet

NEEDS_HERDR = [
    ("open", "r2"),
    ("open", "r2", "--dry-run"),
    ("retire", "r1"),
    ("retire", "r1", "--dry-run"),
    ("reconcile",),
    ("reconcile", "--managed", "alpha", "--dry-run"),
    ("status",),
    ("status", "--watch"),
]
STORE_ONLY = [
    ("run", "start", "--project", "alpha", "--issue", "7", "--attempt", "1", "--run-id", "r3"),
    ("run", "settle", "r1"),
    ("run", "list"),
    ("follow", "r1", "--once"),
]


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_says_what_herdr_is(sentence: str) -> None:
    assert sentence.startswith("herdr was not found on PATH. "), sentence
    for words in ("terminal workspace manager for coding agents", "herdr 0.8.2", "docs/herdr-fleet.md",
                  "https://herdr.dev", "herdrdev/herdr/releases", "put the directory that holds `herdr` on PATH"):
        assert words in sentence, (words, sentence)


@pytest.fixture
def pf(world: World) -> Panefleet:
    world.start("r1")
    assert world.open("r1")["kind"] == "tracked"
    world.start("r2")
    world.fake.reset_calls()
    return Panefleet(world)


@pytest.fixture
def no_herdr(pf: Panefleet, tmp_path: Path) -> dict[str, str]:
    """The test's environment with a PATH on which there is no herdr at all."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    return {**pf.env, "PATH": str(empty)}


@pytest.mark.parametrize("args", NEEDS_HERDR, ids=" ".join)
def test_a_command_that_drives_herdr_refuses_at_once_and_changes_nothing(
        pf: Panefleet, world: World, no_herdr: dict[str, str], args: tuple[str, ...]) -> None:
    before = files(world.state_dir)
    herdr_before = world.state_path.read_bytes()

    text = pf(*args, env=no_herdr)
    assert (text.returncode, text.stdout) == (1, ""), text
    assert text.stderr.startswith("panefleet herdr: ") and text.stderr.count("\n") == 1, text.stderr
    sentence = text.stderr.removeprefix("panefleet herdr: ").rstrip("\n")
    assert_says_what_herdr_is(sentence)

    answer = pf(*args, "-o", "json", env=no_herdr)
    assert (answer.returncode, answer.stderr) == (1, ""), answer
    assert answer.stdout.count("\n") == 1
    assert json.loads(answer.stdout) == {"ok": False, "error": sentence, "error_code": "herdr_not_found"}

    assert files(world.state_dir) == before  # no store write, no lock, no audit log
    assert world.state_path.read_bytes() == herdr_before


def test_nothing_is_created_in_a_state_dir_that_does_not_exist(pf: Panefleet, no_herdr: dict[str, str],
                                                               tmp_path: Path) -> None:
    fresh = tmp_path / "fresh-state"
    plan = tmp_path / "plan.json"
    env = {**no_herdr, "PANEFLEET_STATE_DIR": str(fresh)}
    for args in [*NEEDS_HERDR, ("reconcile", "--plan-out", str(plan))]:
        done = pf(*args, "-o", "json", env=env)
        assert done.returncode == 1 and json.loads(done.stdout)["error_code"] == "herdr_not_found", (args, done)
    # `status` over an empty store used to answer "0 live runs": it asks herdr nothing then
    assert not fresh.exists() and not plan.exists()


def test_a_herdr_that_is_not_executable_is_not_found(pf: Panefleet, world: World, tmp_path: Path) -> None:
    bin_dir = tmp_path / "plain-bin"
    bin_dir.mkdir()
    (bin_dir / "herdr").write_text("#!/bin/sh\nexit 0\n")  # mode 0644: the executor could not run it either
    done = pf("status", "-o", "json", env={**pf.env, "PATH": str(bin_dir)})
    assert done.returncode == 1 and json.loads(done.stdout)["error_code"] == "herdr_not_found", done


def note_of(done: subprocess.CompletedProcess[str]) -> str:
    notes = [line for line in done.stderr.splitlines() if line.startswith("panefleet herdr: note: ")]
    assert len(notes) == 1, done.stderr
    return notes[0].removeprefix("panefleet herdr: note: ")


@pytest.mark.parametrize("args", STORE_ONLY, ids=" ".join)
def test_a_store_only_command_works_and_says_herdr_was_not_checked(
        pf: Panefleet, world: World, no_herdr: dict[str, str], args: tuple[str, ...]) -> None:
    done = pf(*args, "-o", "json", env=no_herdr)
    assert done.returncode == 0, done
    assert done.stdout.count("\n") == 1 and json.loads(done.stdout)["ok"] is True
    note = note_of(done)
    assert note.startswith("herdr was not found on PATH, so "), note
    assert "run store" in note
    assert_says_what_herdr_is("herdr was not found on PATH. " + note.split(". ", 1)[1])
    assert world.calls() == []


def test_store_only_commands_do_their_work_without_herdr(pf: Panefleet, world: World,
                                                         no_herdr: dict[str, str]) -> None:
    started = pf("run", "start", "--project", "alpha", "--issue", "7", "--attempt", "1", "--run-id", "r3",
                 env=no_herdr)
    assert started.returncode == 0 and started.stdout == "run r3 is live (alpha #7)\n", started
    assert "no herdr pane shows this run until `panefleet herdr reconcile` runs with herdr" in note_of(started)
    record = world.store.run("r3")
    assert record is not None and not record.settled

    settled = pf("run", "settle", "r1", env=no_herdr)
    assert settled.returncode == 0, settled
    assert "the run's herdr pane stays until `panefleet herdr reconcile` runs with herdr" in note_of(settled)
    record = world.store.run("r1")
    assert record is not None and record.settled

    listed = pf("run", "list", "-o", "json", env=no_herdr)
    assert [r["run_id"] for r in json.loads(listed.stdout)["runs"]] == ["r1", "r2", "r3"]
    assert "what herdr shows of these runs was not checked" in note_of(listed)

    followed = pf("follow", "r2", "--once", env=no_herdr)
    assert followed.returncode == 0 and "run r2  alpha #1 attempt 1  live" in followed.stdout, followed
    assert "what herdr shows of this run was not checked" in note_of(followed)
    assert world.calls() == [] and len(world.fake.panes()) == 2  # the pane of settled r1 waits for reconcile


def test_with_herdr_on_path_nothing_is_noted(pf: Panefleet) -> None:
    for args in [("run", "list"), ("follow", "r1", "--once"), ("status",)]:
        done = pf(*args)
        assert done.returncode == 0 and done.stderr == "", (args, done)
