"""Exit codes as documented (cli.py ``EXIT_CODES``, README): a walk of the whole parser gives every
command its usage errors (exit 2, answered as JSON with ``-o json``), and every team command a refusal
(exit 4: nothing was changed). The commands run in-process; none of them gets past its checks."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import cli
from shell.cli.args import leaves

# A valid value for each required argument, by dest (anything else gets "x").
SAMPLE = {"count": "1", "worker": "worker-1", "task_id": "1", "shell": "bash", "issue": "1", "attempt": "1",
          "project": "p", "run_id": "r1", "team": "alpha"}


def _required(node: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in node._actions
            if a.required or (not a.option_strings and a.nargs not in ("?", "*", argparse.SUPPRESS))]


def _valid(node: argparse.ArgumentParser, *, skip: argparse.Action | None = None) -> list[str]:
    args: list[str] = []
    for action in _required(node):
        if action is skip:
            continue
        value = SAMPLE.get(action.dest, "x")
        args += [action.option_strings[-1], value] if action.option_strings else [value]
    return args


def _usage_errors() -> Iterator[tuple[str, list[str]]]:
    """(why, argv) for every usage error the walk can make of each command."""
    for path, node in leaves(cli.build_parser()):
        name = " ".join(path)
        yield f"{name}: unknown option", [*path, *_valid(node), "--no-such-option"]
        for action in _required(node):
            if not action.option_strings:
                yield f"{name}: without {action.dest}", [*path, *_valid(node, skip=action)]
        for action in node._actions:
            if not action.option_strings or action.help == argparse.SUPPRESS or action.nargs == 0:
                continue
            if action.choices is not None:
                yield f"{name}: {action.option_strings[-1]} out of its choices", \
                    [*path, *_valid(node), action.option_strings[-1], "no-such-choice"]
            elif action.type in (int, float) or getattr(action.type, "__name__", "").endswith("_int"):
                yield f"{name}: {action.option_strings[-1]} not a number", \
                    [*path, *_valid(node, skip=action), action.option_strings[-1], "not-a-number"]


USAGE_ERRORS = list(_usage_errors())


def test_the_walk_reaches_every_command() -> None:
    named = {why.split(":")[0] for why, _ in USAGE_ERRORS}
    assert {"team scale-up", "team init", "team task claim", "herdr run start", "apply", "completion"} <= named


@pytest.mark.parametrize(("why", "argv"), USAGE_ERRORS, ids=[why for why, _ in USAGE_ERRORS])
def test_every_usage_error_exits_2_and_answers_json(why: str, argv: list[str], capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main([*argv, "-o", "json"]) == 2, why
    answer = json.loads(capsys.readouterr().out)
    assert answer["ok"] is False and answer["error"].startswith("usage: ") and answer["error_code"] == "usage_error"
    assert not list(tmp_path.iterdir()), "a usage error changed nothing"


@pytest.mark.parametrize("argv", [
    ["team", "init", "alpha"],                              # no leader pane: not in tmux, no option
    ["team", "init", "alpha", "--leader-pane", "99"],       # not a pane id
    ["team", "init", "alpha", "--leader-pane", "%x"],
])
def test_a_missing_or_malformed_leader_pane_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX_PANE", raising=False)
    assert cli.main([*argv, "--cwd", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--leader-pane" in err and ("%3" in err or "--new-session" in err)
    assert not (tmp_path / ".omx").exists()


# What a command needs beyond its required arguments to get as far as reading its team.
NEEDS = {"team task create": ["--subject", "s"], "team send": ["the message"]}


def _team_commands() -> Iterator[tuple[str, list[str]]]:
    for path, node in leaves(cli.build_parser()):
        if path[0] == "team" and path[1] != "init" and any(action.dest == "team" for action in node._actions):
            args, name = _valid(node), " ".join(path)
            yield name, [*path, *(["nosuch"] + args[1:] if args[:1] == ["alpha"] else args), *NEEDS.get(name, [])]


@pytest.mark.parametrize(("name", "argv"), list(_team_commands()), ids=[n for n, _ in _team_commands()])
def test_every_team_command_refuses_a_team_that_is_not_there_with_4(
        name: str, argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMX_TEAM_SCALING_ENABLED", "1")
    assert cli.main([*argv, "--cwd", str(tmp_path), "-o", "json"]) == 4, name
    answer = json.loads(capsys.readouterr().out)
    assert answer["ok"] is False and answer["error_code"] == "team_not_found"
    assert "nosuch" in answer["error"] and "panefleet team init nosuch" in answer["error"]
    assert not (tmp_path / ".omx" / "state" / "team" / "nosuch").exists()
