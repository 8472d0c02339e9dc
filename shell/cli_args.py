"""Argument helpers shared by every command. Imports nothing but argparse (start-up time)."""

from __future__ import annotations

import argparse
import re

SOCKET_RE = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def socket_name(value: str) -> str:
    """A tmux ``-L`` name: a plain file name under tmux's socket directory, never empty."""
    if SOCKET_RE.fullmatch(value) is None:
        raise argparse.ArgumentTypeError(f"invalid tmux socket name {value!r} (use letters, digits, '_', '.', '-')")
    return value


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text",
                        help="text for people, json (one object on stdout) for programs")


def add_tmux(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tmux-socket", metavar="NAME", default=None, type=socket_name,
                        help="use the private tmux server `tmux -L NAME` (default: $PANEFLEET_TMUX_SOCKET)")


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true",
                        help="print the predicted plan (real reads, predicted changes) and change nothing")
