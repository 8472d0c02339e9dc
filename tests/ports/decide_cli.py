"""``panefleet decide`` run in-process: the CLI's own handler with its streams swapped.

What it reads and answers is exactly what ``panefleet decide`` reads and answers (a few questions
are also put to the real CLI by the tests, to keep this honest), without a Python start per question.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "cli.py")]


class Answer(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str


def decide_in_process(stdin: str) -> Answer:
    import cli

    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = cli.cmd_decide(argparse.Namespace())
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Answer(code, out.getvalue(), err.getvalue())


def decide_cli(stdin: str) -> Answer:
    done = subprocess.run([*CLI, "decide"], input=stdin.encode("utf-8"), capture_output=True, check=False)
    return Answer(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


def known_operations() -> str:
    from pure import operations

    return ", ".join(sorted(operations.load_all()))
