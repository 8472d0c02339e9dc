"""Help for people, over the whole parser: every command's help has examples that parse as written,
every option and positional says what it is, the global options are described once (``panefleet help
options``) and each help names those that apply, ``panefleet help [COMMAND...]``, and "did you mean"
for a mistyped command, choice or option."""

from __future__ import annotations

import argparse
import json
import re
import shlex

import pytest

import cli
from shell.cli.args import HIDDEN, apply_global_defaults, leaves, subcommands, walk


def listed(parser: argparse.ArgumentParser) -> set[str]:
    """The commands ``parser``'s help lists (a hidden one, added without help, is not)."""
    return {choice.dest for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for choice in action._get_subactions()}


def public(nodes: list[tuple[tuple[str, ...], argparse.ArgumentParser]]
           ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    by_path = dict(walk(cli.build_parser()))
    return [(path, node) for path, node in nodes
            if all(path[i] in listed(by_path[path[:i]]) for i in range(len(path)))]


NODES = public(list(walk(cli.build_parser())))
LEAVES = public(list(leaves(cli.build_parser())))
GROUPS = [(path, node) for path, node in NODES if subcommands(node)]
SHELL_OPERATORS = {">", ">>", "<", "|", "||", "&&", ";", "&"}


def _ids(value: object) -> str:
    return " ".join(value) or "panefleet" if isinstance(value, tuple) else ""


def shell_words(line: str) -> list[str]:
    """The words a shell passes to the command of ``line`` (its comment, redirections and pipes left out)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words: list[str] = []
    for word in lexer:
        if word in SHELL_OPERATORS:
            break
        words.append(word)
    return words


def section(text: str, title: str) -> list[str]:
    """The command lines of the indented section ``title:`` of a help text (comment lines left out)."""
    assert f"\n{title}:\n" in text, text
    lines = []
    for line in text.split(f"\n{title}:\n", 1)[1].splitlines():
        if not line.startswith("  "):
            break
        if not line.strip().startswith("#"):
            lines.append(line.strip())
    return lines


def parse_example(line: str) -> argparse.Namespace:
    """``line`` parsed as panefleet parses it: by the whole parser and by the one built for it alone."""
    assert line.startswith("panefleet "), line
    argv = shell_words(line)[1:]
    args = cli.build_parser().parse_args(argv)  # a usage error raises cli.UsageError
    assert vars(cli.build_parser(argv).parse_args(argv)) == vars(args), line
    assert apply_global_defaults(args) is None, line
    return args


def help_of(node: argparse.ArgumentParser) -> str:
    return node.format_help()


# ----------------------------------------------------------------------------------------- examples


@pytest.mark.parametrize(("path", "node"), LEAVES, ids=_ids)
def test_every_command_has_examples_that_parse_as_written(path: tuple[str, ...], node: argparse.ArgumentParser) -> None:
    lines = section(help_of(node), "examples")
    assert 1 <= len(lines) <= 3, lines
    parsed = [parse_example(line) for line in lines]
    assert any(args.command_path == path for args in parsed), f"no example of `{' '.join(path)}` itself"


@pytest.mark.parametrize(("path", "node"), [(p, n) for p, n in GROUPS if p], ids=_ids)
def test_every_group_has_examples_of_its_commands(path: tuple[str, ...], node: argparse.ArgumentParser) -> None:
    lines = section(help_of(node), "examples")
    assert lines
    for line in lines:
        assert parse_example(line).command_path[:len(path)] == path, line


def test_the_top_level_help_starts_people_off_with_commands_that_parse() -> None:
    lines = section(help_of(cli.build_parser()), "start here")
    assert lines[0].startswith("panefleet demo")
    assert any(line.startswith("panefleet help team") for line in lines)
    for line in lines:
        parse_example(line)


def test_an_example_that_does_not_parse_is_caught() -> None:
    with pytest.raises(cli.UsageError):
        parse_example("panefleet team scale-up alpha --cuont 2")
    with pytest.raises(cli.UsageError):
        parse_example("panefleet team status")


# ---------------------------------------------------------------------------------- descriptions


@pytest.mark.parametrize(("path", "node"), NODES, ids=_ids)
def test_every_option_positional_and_command_says_what_it_is(path: tuple[str, ...],
                                                             node: argparse.ArgumentParser) -> None:
    for action in node._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._get_subactions():
                assert choice.help and choice.help.strip(), (path, choice.dest)
            continue
        assert action.help and action.help.strip() and action.help != argparse.SUPPRESS, (path, action.dest)
    if path:
        assert node.description and node.description.strip(), path


@pytest.mark.parametrize(("path", "node"), LEAVES, ids=_ids)
def test_each_help_names_the_global_options_that_apply_instead_of_repeating_them(
        path: tuple[str, ...], node: argparse.ArgumentParser) -> None:
    text = help_of(node)
    for hidden in ("text for people", "use the private tmux server", "say more"):
        assert hidden not in text, (path, hidden)
    pointer = re.search(r"global options: (.*?) — see `panefleet help options`\.", " ".join(text.split()))
    assert pointer is not None, text
    named = pointer.group(1).split(", ")
    assert named[0] == "-o"
    assert ("--tmux-socket" in named) == (path[0] != "herdr" and path not in (
        ("schema",), ("replay",), ("decide",), ("show",), ("completion",), ("help",), ("doctor",),
        ("team", "task", "create"), ("team", "task", "claim"))), named
    if path[0] == "herdr":
        assert "--tmux-socket" not in text
    if any(action.dest == "dry_run" for action in node._actions):
        assert "-v" in named and "Here -v means: also list every step of a dry run" in " ".join(text.split())
    # hidden from help, still parsed and completed
    copies = [action for action in node._actions if action.dest in ("output", "tmux_socket", "verbose")]
    assert len(copies) == 3 and all(getattr(action, HIDDEN, False) for action in copies)


def test_group_help_names_the_global_options_below_it() -> None:
    root = " ".join(help_of(cli.build_parser()).split())
    assert "global options (before or after the command): -o, --tmux-socket, -v, --session" in root
    herdr = dict(NODES)[("herdr",)]
    assert "global options (before or after the command): -o, -v, --session —" in " ".join(help_of(herdr).split())


# ------------------------------------------------------------------------------------ panefleet help


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_help_is_the_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["help"], capsys)
    assert code == 0 and out == help_of(cli.build_parser())
    assert run(["--help"], capsys)[1] == out


def test_help_of_a_command_is_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["help", "team", "scale-up"], capsys)
    assert code == 0 and out.startswith("usage: panefleet team scale-up")
    assert run(["team", "scale-up", "--help"], capsys)[1] == out
    code, out, _ = run(["help", "herdr", "run"], capsys)
    assert code == 0 and out.startswith("usage: panefleet herdr run") and "RUN_COMMAND" in out
    code, out, _ = run(["help", "team", "scale-up", "-o", "json"], capsys)
    assert code == 0 and json.loads(out) == {"ok": True, "help": run(["help", "team", "scale-up"], capsys)[1]}


def test_help_options_describes_every_global_option_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["help", "options"], capsys)
    assert code == 0
    flat = " ".join(out.split())
    for flag in ("-o {text,json}, --output {text,json}", "--tmux-socket NAME", "-v, --verbose", "--session NAME"):
        assert flat.count(flag) == 1, flag
    assert "wherever they stand" in flat and "the last one wins" in flat
    for line in section(out, "examples"):
        parse_example(line)


@pytest.mark.parametrize(("argv", "expected"), [
    (["help", "nosuch"], "panefleet has no command 'nosuch' (choose from team, herdr, doctor, plan, destroy, apply, show, demo, help, "),
    (["help", "tema"], "panefleet has no command 'tema' (did you mean 'team'?)"),
    (["help", "optoins"], "(did you mean 'options'?)"),
    (["help", "team", "sclae-up"], "panefleet team has no command 'sclae-up' (did you mean 'scale-up'?)"),
    (["help", "team", "status", "alpha"], "panefleet team status has no command 'alpha' (it has no subcommands)"),
])
def test_help_of_an_unknown_command_is_a_usage_error_with_a_suggestion(
        argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, "") and expected in err, err
    code, out, _ = run([*argv, "-o", "json"], capsys)
    answer = json.loads(out)
    assert code == 2 and answer["ok"] is False and expected in answer["error"]


# -------------------------------------------------------------------------------- did you mean


def test_a_mistyped_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["tema", "status"], capsys)
    assert code == 2 and "invalid choice: 'tema' (did you mean 'team'?)" in err
    code, _, err = run(["herdr", "stauts"], capsys)
    assert code == 2 and "invalid choice: 'stauts' (did you mean 'status'?)" in err
    code, out, _ = run(["team", "scael-up", "alpha", "-o", "json"], capsys)
    assert code == 2 and "(did you mean 'scale-up'?)" in json.loads(out)["error"]
    code, _, err = run(["team", "status", "alpha", "-o", "jsno"], capsys)
    assert code == 2 and "invalid choice: 'jsno' (did you mean 'json'?)" in err
    code, _, err = run(["zzzzzz"], capsys)  # nothing close: the commands help lists
    assert code == 2 and "invalid choice: 'zzzzzz' (choose from 'team', 'herdr', 'doctor', 'plan', 'destroy', 'apply'," in err
    assert "'_" not in err
    code, _, err = run(["--tmux-sokcet", "s", "team", "status", "alpha"], capsys)
    assert code == 2 and "unrecognized argument --tmux-sokcet (did you mean --tmux-socket?)" in err


def test_a_mistyped_option_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["team", "scale-up", "x", "--cuont", "2"], capsys)
    assert (code, out) == (2, "")
    assert "unrecognized argument --cuont (did you mean --count?)" in err
    code, out, err = run(["team", "scale-up", "x", "--count", "1", "--cuont", "2"], capsys)
    assert code == 2 and "unrecognized arguments: --cuont 2 (did you mean --count?)" in err
    code, out, _ = run(["team", "scale-up", "x", "--cuont", "2", "-o", "json"], capsys)
    answer = json.loads(out)
    assert code == 2 and answer["ok"] is False and "did you mean --count?" in answer["error"]
    code, _, err = run(["herdr", "reconcile", "--manged", "api"], capsys)
    assert code == 2 and "(did you mean --managed?)" in err
    code, _, err = run(["team", "status", "alpha", "--frobnicate"], capsys)  # nothing close
    assert code == 2 and err.rstrip().endswith("unrecognized arguments: --frobnicate")


# ------------------------------------------------------------------------------------------ order


def test_the_top_level_lists_fleets_first_and_tools_for_ports_last() -> None:
    text = help_of(cli.build_parser())
    order = ["plan", "apply", "destroy", "list", "team", "herdr", "show", "demo", "completion", "schema", "replay",
             "decide"]
    places = [re.search(rf"^  {name} ", text, re.MULTILINE) for name in order]
    assert all(places), text
    assert [m.start() for m in places if m] == sorted(m.start() for m in places if m)
    assert list(subcommands(cli.build_parser()))[:2] == ["team", "herdr"]
    for title in ("fleets:", "saved plans:", "tools for ports and replay:", "exit codes:"):
        assert f"\n{title}\n" in text, title
