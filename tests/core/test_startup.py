"""A CLI process starts without the cyclic collector and has it back from the first step on, and ends
without the interpreter's teardown but with its output flushed and its exit handlers run
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


LEAVE = """
import atexit, sys, threading, time
sys.path.insert(0, {root!r})
from shell.run import startup

atexit.register(lambda: sys.stderr.write("exit handler ran\\n"))
if {thread!r}:
    threading.Thread(target=lambda: (time.sleep(0.3), sys.stdout.write("thread finished\\n"))).start()
sys.stdout.write("x" * 200000)  # more than a pipe holds: flushed before the process ends
startup.leave(3)
sys.stdout.write("never written")
"""


def test_a_process_leaves_with_its_streams_flushed_and_exit_handlers_run() -> None:
    done = subprocess.run([sys.executable, "-c", LEAVE.format(root=str(ROOT), thread=False)], capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (3, "x" * 200000, "exit handler ran\n")


def test_a_process_with_a_thread_still_running_waits_for_it() -> None:
    done = subprocess.run([sys.executable, "-c", LEAVE.format(root=str(ROOT), thread=True)], capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (3, "x" * 200000 + "thread finished\n", "exit handler ran\n")


def test_the_cli_process_ends_through_leave_and_answers_in_full() -> None:
    entry = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from cli import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", entry, "schema"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == (ROOT / "docs" / "schema.json").read_text(encoding="utf-8")
    usage = subprocess.run([sys.executable, "-c", entry, "team", "nosuch"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "invalid choice" in usage.stderr
