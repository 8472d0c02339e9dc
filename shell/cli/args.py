"""Argument helpers shared by every command. Imports nothing but argparse (start-up time).

Global options (``GLOBAL_OPTIONS``: ``-o/--output``, ``--tmux-socket``, ``-v/--verbose``) mean the
same thing wherever they stand: before the command (``panefleet -o json team status X``), between a
group and its command, or after it (``panefleet team status X -o json``). ``finish_tree`` gives
every parser of the tree the same definitions with ``argparse.SUPPRESS`` defaults, so that a parser
deeper in the tree sets a value only when it is given there (the last one given wins), and
``apply_global_defaults`` fills in what was given nowhere. ``--session`` is global where it exists
(the herdr commands that take a herdr session, and ``team init``): given before the command, it is
refused for a command that has no ``--session``.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from typing import Any

SOCKET_RE = re.compile(r"[A-Za-z0-9_.-]{1,100}")

# How shtab completes a value (shell -> completion function); kept here so that building the parser
# never imports shtab (it is imported by `panefleet completion` only).
COMPLETE_FILE = {"bash": "_shtab_compgen_files", "zsh": "_files", "tcsh": "f"}
COMPLETE_DIRECTORY = {"bash": "_shtab_compgen_dirs", "zsh": "_files -/", "tcsh": "d"}

# dest -> default when the option was given nowhere
GLOBAL_DEFAULTS: dict[str, Any] = {"output": "text", "tmux_socket": None, "verbose": 0}
SESSION_DEST = "session"
# options that take a value (what `command_words` skips when it looks for the command)
VALUE_OPTIONS = frozenset({"-o", "--output", "--tmux-socket", "--session"})


def socket_name(value: str) -> str:
    """A tmux ``-L`` name: a plain file name under tmux's socket directory, never empty."""
    if SOCKET_RE.fullmatch(value) is None:
        raise argparse.ArgumentTypeError(f"invalid tmux socket name {value!r} (use letters, digits, '_', '.', '-')")
    return value


def _int_at_least(text: str, least: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}")
    return value


def positive_int(text: str) -> int:
    return _int_at_least(text, 1, "positive")


def non_negative_int(text: str) -> int:
    return _int_at_least(text, 0, "non-negative")


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=("text", "json"), default=argparse.SUPPRESS,
                        help="text for people (default), json (exactly one object on stdout) for programs")


def add_tmux(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tmux-socket", metavar="NAME", default=argparse.SUPPRESS, type=socket_name,
                        help="use the private tmux server `tmux -L NAME` (default: $PANEFLEET_TMUX_SOCKET)")


def add_verbose(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                        help="say more: a dry run also lists every step it would take")


def add_session(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--session", metavar="NAME", default=argparse.SUPPRESS, help=help_text)


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan (real reads, predicted changes) and change nothing")
    plan_out = parser.add_argument(
        "--plan-out", metavar="FILE", default=None,
        help="save the plan to FILE (implies --dry-run); `panefleet apply FILE` carries it out and refuses "
             "when what it was computed from has changed")
    plan_out.complete = COMPLETE_FILE  # type: ignore[attr-defined]
    parser.add_argument("--steps", action="store_true", help="also list every step of the plan")


def complete_path(action: argparse.Action, *, directory: bool = False) -> argparse.Action:
    action.complete = COMPLETE_DIRECTORY if directory else COMPLETE_FILE  # type: ignore[attr-defined]
    return action


# ------------------------------------------------------------------------------------- the tree


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
         ) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser of the tree with its command path, parents before children."""
    yield path, parser
    for name, child in subcommands(parser).items():
        yield from walk(child, (*path, name))


def leaves(parser: argparse.ArgumentParser) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """The commands (parsers without subcommands) with their paths."""
    for path, node in walk(parser):
        if path and not subcommands(node):
            yield path, node


def _dests(parser: argparse.ArgumentParser) -> set[str]:
    return {action.dest for action in parser._actions}


def takes_session(parser: argparse.ArgumentParser) -> bool:
    return any(a.dest == SESSION_DEST and a.option_strings for a in parser._actions)


def finish_tree(root: argparse.ArgumentParser) -> None:
    """Give every parser the global options (SUPPRESS defaults: see the module docstring), mark
    each command parser so that the chosen one is known after parsing, and ``--session`` on the
    root and group parsers above a command that takes one."""
    for path, node in walk(root):
        for action in node._actions:
            if action.dest in GLOBAL_DEFAULTS or action.dest == SESSION_DEST:
                action.default = argparse.SUPPRESS
        have = _dests(node)
        if "output" not in have:
            add_output(node)
        if "tmux_socket" not in have:
            add_tmux(node)
        if "verbose" not in have:
            add_verbose(node)
        children = subcommands(node)
        if children:
            below = [leaf for _, leaf in leaves(node)]
            if SESSION_DEST not in have and any(takes_session(leaf) for leaf in below):
                add_session(node, "the session the command works in, as the command's own --session "
                                  "(herdr session; tmux session for `team init`)")
        else:
            node.set_defaults(command_path=path, takes_session=takes_session(node))


def apply_global_defaults(args: argparse.Namespace) -> str | None:
    """Fill in the global options given nowhere; answer a usage problem (or None)."""
    for dest, default in GLOBAL_DEFAULTS.items():
        if not hasattr(args, dest):
            setattr(args, dest, default)
    if hasattr(args, SESSION_DEST) and not getattr(args, "takes_session", True):
        command = " ".join(getattr(args, "command_path", ()))
        return f"--session does not apply to `{command}` (it takes no session)"
    if not hasattr(args, SESSION_DEST):
        setattr(args, SESSION_DEST, None)
    return None


def command_words(argv: list[str]) -> list[str]:
    """The words of ``argv`` that are not options or option values (the command path first)."""
    words: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        if word == "--":
            break
        if word.startswith("-"):
            skip = word in VALUE_OPTIONS
            continue
        words.append(word)
    return words


def wants_json(argv: list[str]) -> bool:
    """Whether ``-o json`` was asked anywhere (the last ``-o`` wins), read before parsing so that even
    a usage error is answered as JSON."""
    choice = None
    for word, following in zip(argv, [*argv[1:], ""], strict=False):
        if word in ("-o", "--output"):
            choice = following
        elif word.startswith("--output="):
            choice = word.split("=", 1)[1]
        elif word.startswith("-o") and len(word) > 2 and not word.startswith("--"):
            choice = word[2:]
    return choice == "json"
