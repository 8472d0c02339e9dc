"""Argument helpers shared by every command. Imports nothing but argparse (start-up time).

Global options (``GLOBAL_OPTIONS``: ``-o/--output``, ``--tmux-socket``, ``-v/--verbose``) mean the
same thing wherever they stand: before the command (``panefleet -o json team status X``), between a
group and its command, or after it (``panefleet team status X -o json``). ``finish_tree`` gives
every parser of the tree the same definitions with ``argparse.SUPPRESS`` defaults, so that a parser
deeper in the tree sets a value only when it is given there (the last one given wins), and
``apply_global_defaults`` fills in what was given nowhere. ``--session`` is global where it exists
(the herdr commands that take a herdr session, and ``team init``): given before the command, it is
refused for a command that has no ``--session``.

Help shows each global option once, in ``panefleet help options`` (``global_options_help``): every
other parser hides its copies (``HelpFormatter``) and names in its epilog those that apply to it,
with what ``-v`` does there. Parsing and completion still see every copy.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable, Iterator, Sequence
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
VALUE_OPTIONS = frozenset({"-o", "--output", "--tmux-socket", "--session", "--machine"})


def socket_name(value: str) -> str:
    """A tmux ``-L`` name: a plain file name under tmux's socket directory, never empty."""
    if SOCKET_RE.fullmatch(value) is None:
        raise argparse.ArgumentTypeError(f"invalid tmux socket name {value!r} (use letters, digits, '_', '.', '-')")
    return value


HOST_HELP = ("the team lives on another machine: an OpenSSH destination ([user@]host or a ~/.ssh/config alias; "
             "docs/hosts.md); its --cwd is a folder there. Once made there, the team is found without it")


def add_host(parser: argparse.ArgumentParser) -> None:
    """``--host DEST`` of a team command (``shell/cli/team_home.py``)."""
    parser.add_argument("--host", metavar="DEST", default=None, help=HOST_HELP)


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
                        help='text for people (default); json for programs: exactly one object on stdout, '
                             'with a boolean "ok"')


def add_tmux(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tmux-socket", metavar="NAME", default=argparse.SUPPRESS, type=socket_name,
                        help="use the private tmux server `tmux -L NAME` (default: $PANEFLEET_TMUX_SOCKET, else the "
                             "server a team panefleet made was made on)")


VERBOSE_HELP = "say more (what more, each command's help says)"
DRY_RUN_VERBOSE = "also list every step of a dry run (as --steps), and print the path of a real run's audit log"
AUDIT_VERBOSE = "also print the path of the run's audit log"


def add_verbose(parser: argparse.ArgumentParser, help_text: str = VERBOSE_HELP) -> None:
    """``-v``; a command that adds it itself says with ``help_text`` what it does there."""
    parser.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=help_text)


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


def _complete_names(kind: str) -> dict[str, Any]:
    """A shtab completion of team or worker names by ``panefleet _names KIND -- WORDS…``
    (shell/cli/complete_names.py), given the words typed so far."""
    function = f"_panefleet_{kind}"
    ask = f"panefleet _names {kind} --"
    return {"bash": function, "zsh": f"($({ask} ${{words[@]}} 2>/dev/null))", "tcsh": "",
            "preamble": {"bash": f'{function}() {{\n  compgen -W "$({ask} "${{COMP_WORDS[@]}}" 2>/dev/null)" -- "$1"\n}}'}}


COMPLETE_TEAM, COMPLETE_WORKER = _complete_names("teams"), _complete_names("workers")


def complete_names(root: argparse.ArgumentParser) -> None:
    """Team names complete for the TEAM of every team command but ``team init`` (which names a new
    one), worker names for a WORKER or --worker."""
    for path, node in walk(root):
        if path[:1] != ("team",) or path == ("team", "init"):
            continue
        for action in node._actions:
            if action.dest == "team":
                action.complete = COMPLETE_TEAM  # type: ignore[attr-defined]
            elif action.dest == "worker":
                action.complete = COMPLETE_WORKER  # type: ignore[attr-defined]


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
    root and group parsers above a command that takes one. Help hides those copies and names the
    ones that apply instead, pointing to ``panefleet help options``."""
    applying = {id(leaf): _applying(leaf) for _, leaf in leaves(root)}
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
            pointer = _group_pointer([applying[id(leaf)] for leaf in below], SESSION_DEST in _dests(node))
        else:
            node.set_defaults(command_path=path, takes_session=takes_session(node))
            pointer = _command_pointer(*applying[id(node)])
        for action in node._actions:
            if action.dest in GLOBAL_DEFAULTS or (children and action.dest == SESSION_DEST):
                setattr(action, HIDDEN, True)
        node.formatter_class = HelpFormatter
        node.epilog = "\n\n".join(text for text in (pointer, node.epilog) if text)


# (global option, its flag in help) for the options a command adds itself when they apply to it
_POINTED = (("output", "-o"), ("tmux_socket", "--tmux-socket"))


def _applying(command: argparse.ArgumentParser) -> tuple[list[str], str | None]:
    """The global options that apply to ``command`` (those it adds itself), and what ``-v`` does there
    (None: nothing)."""
    own = {action.dest: action for action in command._actions}
    flags = [flag for dest, flag in _POINTED if dest in own]
    if "verbose" in own:
        return flags, own["verbose"].help
    return flags, DRY_RUN_VERBOSE if "dry_run" in own else None


def _command_pointer(flags: list[str], verbose: str | None) -> str:
    names = [*flags, *(["-v"] if verbose else [])]
    if not names:
        return ""
    text = f"global options: {', '.join(names)} — see `panefleet help options`."
    return f"{text} Here -v means: {verbose}." if verbose else text


def _group_pointer(below: list[tuple[list[str], str | None]], session: bool) -> str:
    names = [flag for _, flag in _POINTED if any(flag in flags for flags, _ in below)]
    names += ["-v"] if any(verbose for _, verbose in below) else []
    names += ["--session"] if session else []
    return f"global options (before or after the command): {', '.join(names)} — see `panefleet help options`."


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


# ------------------------------------------------------------------------------------------- help

HIDDEN = "hidden_in_help"  # an action attribute: parsed and completed, but not shown in help


class HelpFormatter(argparse.HelpFormatter):
    """Help as panefleet shows it: actions marked ``HIDDEN`` left out; in descriptions and epilogs,
    lines that start at the margin are wrapped as paragraphs and indented lines (examples, lists)
    kept as written."""

    def add_usage(self, usage: str | None, actions: Iterable[argparse.Action],
                  groups: Iterable[Any], prefix: str | None = None) -> None:
        super().add_usage(usage, [a for a in actions if not getattr(a, HIDDEN, False)], groups, prefix)

    def add_argument(self, action: argparse.Action) -> None:
        if not getattr(action, HIDDEN, False):
            super().add_argument(action)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        lines: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                lines.append(textwrap.fill(" ".join(paragraph), width, initial_indent=indent,
                                           subsequent_indent=indent))
                paragraph.clear()

        for line in text.strip("\n").splitlines():
            if line.strip() and not line[0].isspace():
                paragraph.append(line.strip())
            else:
                flush()
                lines.append(indent + line.rstrip() if line.strip() else "")
        flush()
        return "\n".join(lines)


def examples(*items: str | tuple[str, str], title: str = "examples") -> str:
    """An ``examples:`` section for an epilog: each item a command line as it is typed (a test parses
    every one), or (command line, what it does). What it does stands beside the commands when they
    are short, else above each."""
    pairs = [item if isinstance(item, tuple) else (item, "") for item in items]
    width = max((len(command) for command, why in pairs if why), default=0)
    if width > 60:
        lines = [line for command, why in pairs for line in ([f"  # {why}"] if why else []) + [f"  {command}"]]
    else:
        lines = [f"  {command.ljust(width)}   # {why}" if why else f"  {command}" for command, why in pairs]
    return f"{title}:\n" + "\n".join(lines)


def grouped_help(parser: argparse.ArgumentParser, groups: Sequence[tuple[str, Sequence[str]]]) -> str:
    """``parser``'s help with its commands listed under the titles of ``groups`` ((title, names), in
    order) instead of in one block."""
    formatter = parser._get_formatter()
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    formatter.add_text(parser.description)
    listed: dict[str, argparse.Action] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed.update((choice.dest, choice) for choice in action._get_subactions())
    for title, names in [*groups, ("other commands", list(listed))]:
        formatter.start_section(title)
        formatter.add_arguments([listed.pop(name) for name in names if name in listed])
        formatter.end_section()
    formatter.start_section(parser._optionals.title)
    formatter.add_arguments(parser._optionals._group_actions)
    formatter.end_section()
    formatter.add_text(parser.epilog)
    return formatter.format_help()


def global_options_help() -> str:
    """``panefleet help options``: every global option, described once."""
    parser = argparse.ArgumentParser(
        prog="panefleet", add_help=False, formatter_class=HelpFormatter,
        usage="%(prog)s [GLOBAL OPTION]... COMMAND... [GLOBAL OPTION]...",
        description="Global options mean the same wherever they stand: before the command, between a group "
        "and its command, or after it (`panefleet -o json team status alpha` is `panefleet team status alpha "
        "-o json`). Given more than once, the last one wins. Each command's help names the ones that apply "
        "to it.",
        epilog=examples(("panefleet -o json team status alpha", "one JSON object on stdout"),
                        ("panefleet team scale-up alpha --count 2 --dry-run -v", "the plan with every step"),
                        ("panefleet --tmux-socket work team status alpha", "a team on `tmux -L work`"),
                        ("panefleet herdr status --session review", "the herdr session `review`")))
    parser._optionals.title = "global options"
    add_output(parser)
    add_tmux(parser)
    add_verbose(parser, "say more: a dry run also lists every step (as --steps), a real run prints the path "
                        "of its audit log, `show` lists every step of the plan; each command's help says what "
                        "-v does there")
    add_session(parser, "for the commands that have one: the herdr session of a herdr command (default: "
                        "$HERDR_SESSION, else fleet), or the tmux session `team init` records (and creates "
                        "with --new-session); refused before a command that has none")
    return parser.format_help()


def closest(word: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``word`` most looks like a typo of, if any."""
    import difflib

    found = difflib.get_close_matches(word, list(known), n=1)
    return found[0] if found else None


def unknown_option_hint(parser: argparse.ArgumentParser, argv: Sequence[str], message: str) -> str:
    """What to add to the usage error ``message`` of ``parser`` when ``argv`` (what it parsed) has a
    ``--option`` that the command it names does not know but one it knows looks like: nothing else."""
    node = parser
    for word in command_words(list(argv)):
        child = subcommands(node).get(word)
        if child is None:
            break
        node = child
    known = [flag for action in node._actions for flag in action.option_strings if flag.startswith("--")]
    for word in argv:
        if word == "--":
            break
        option = word.split("=", 1)[0]
        if not option.startswith("--") or any(flag.startswith(option) for flag in known):
            continue  # not an option, or one the command knows (or an abbreviation of one)
        suggestion = closest(option, known)
        if suggestion is not None:
            if message.startswith("unrecognized arguments:"):
                return f" (did you mean {suggestion}?)"
            return f"; unrecognized argument {option} (did you mean {suggestion}?)"
    return ""
