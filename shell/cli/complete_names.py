"""Team and worker names for shell completion: the hidden command ``panefleet _names teams|workers --
WORDS…``, which the completion scripts run with the words typed so far (``shell/cli/args.py``,
``COMPLETE_TEAM`` / ``COMPLETE_WORKER``). It reads the team folders under the state root of the
folder the command line names (``--cwd``, else the current one) and of each folder above it, and
changes nothing; any problem answers no names."""

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
    from shell.cli.team_home import folders_up, state_root_moved

    cwd = os.getcwd()
    for word, following in zip(words, [*words[1:], ""], strict=False):
        if word == "--cwd" and following:
            cwd = os.path.abspath(os.path.expanduser(following))
        elif word.startswith("--cwd="):
            cwd = os.path.abspath(os.path.expanduser(word.split("=", 1)[1]))
    # the folder's project and every one above it, as a team command finds its team (shell/cli/team_home.py)
    folders = [cwd] if state_root_moved(env) else folders_up(cwd)
    roots = [Path(resolve_state_root(folder, env)) / "team" for folder in folders]
    found = {root: team_names(root) for root in roots}
    teams = sorted({team for names in found.values() for team in names})
    if kind == "teams":
        return teams
    for root, names in found.items():
        team = next((word for word in words if word in names), None)
        if team is not None:
            return worker_names(root, team)
    return []


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
