"""A CLI process starts without the cyclic collector and has it back from the first step on
(``shell/run/startup.py``); a command run in a caller's process leaves the caller's collector alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import gc, sys
sys.path.insert(0, {root!r})
from pure import model as m
from shell.run import startup
from shell.run.executor import Executor

startup.hold()
assert not gc.isenabled()
Executor(env={{}}).execute(m.Clock())
assert gc.isenabled() and gc.get_freeze_count() > 0
gc.disable()
startup.hold()
startup.release()
assert not gc.isenabled()  # switched off by someone else: left off
print("ok")
"""


def test_the_first_step_switches_the_collector_back_on() -> None:
    done = subprocess.run([sys.executable, "-c", CHECK.format(root=str(ROOT))], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


def test_a_command_run_in_process_leaves_the_collector_alone() -> None:
    import gc

    import cli

    assert gc.isenabled()
    assert cli.main(["schema", "-o", "json"]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0
