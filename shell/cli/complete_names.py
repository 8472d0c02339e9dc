"""Team and worker names for shell completion: the hidden command ``panefleet _names teams|workers --
WORDS…``, which the completion scripts run with the words typed so far (``shell/cli/args.py``,
``COMPLETE_TEAM`` / ``COMPLETE_WORKER``). It reads the team folders under the state root of the
folder the command line names (``--cwd``, else the current one) and changes nothing; any problem
answers no names."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path


def team_names(root: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in root.iterdir() if (entry / "config.json").is_file())
    except OSError:
        return []


def worker_names(root: Path, team: str) -> list[str]:
    try:
        config = json.loads((root / team / "config.json").read_text())
    except (OSError, ValueError):
        return []
    workers = config.get("workers") if isinstance(config, dict) else None
    return [str(w["name"]) for w in workers or [] if isinstance(w, dict) and isinstance(w.get("name"), str)]


def names(kind: str, words: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The completions of ``kind`` for a command line of ``words``."""
    from pure.omx.state import resolve_state_root

    cwd = os.getcwd()
    for word, following in zip(words, [*words[1:], ""], strict=False):
        if word == "--cwd" and following:
            cwd = os.path.abspath(os.path.expanduser(following))
        elif word.startswith("--cwd="):
            cwd = os.path.abspath(os.path.expanduser(word.split("=", 1)[1]))
    root = Path(resolve_state_root(cwd, env)) / "team"
    teams = team_names(root)
    if kind == "teams":
        return teams
    team = next((word for word in words if word in teams), None)
    return worker_names(root, team) if team is not None else []


def cmd_names(args: argparse.Namespace) -> int:
    import sys

    sys.stdout.write("".join(f"{name}\n" for name in names(args.kind, args.words, os.environ)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``_names``: added without help, so neither the help nor the completion scripts list it."""
    p = subparsers.add_parser("_names")
    p.add_argument("kind", choices=("teams", "workers"), help="what to complete")
    p.add_argument("words", nargs="*", help="the words of the command line typed so far (after --)")
    p.set_defaults(handler=cmd_names)
