"""Argument helpers shared by every command. Imports nothing but argparse (start-up time)."""

from __future__ import annotations

import argparse


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text",
                        help="text for people, json (one object on stdout) for programs")


def add_tmux(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tmux-socket", metavar="NAME", default=None,
                        help="use the private tmux server `tmux -L NAME` (default: $PANEFLEET_TMUX_SOCKET)")


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true",
                        help="print the predicted plan (real reads, predicted changes) and change nothing")
