"""A panefleet process starts without the cyclic garbage collector, and ends without the
interpreter's teardown.

Start-up — parsing the command line and importing the modules a command needs — allocates a few
hundred thousand objects and makes hardly any garbage, yet it set off dozens of collections, each
scanning what had just been imported: about a seventh of a ``team status`` run (bench/status.py).
So ``cli.py`` calls :func:`hold` when a process starts, and :func:`release` switches the collector
back on before the first step of a run (``shell/run/executor.py``), before a loop that runs no steps
(``herdr follow``), and when the command ends, whichever comes first. What was allocated until then
is moved to the permanent generation first (``gc.freeze``), so no later collection scans it again.

When the command has finished, :func:`leave` ends the process: it flushes the standard streams,
runs the exit handlers (one closes a tmux control client still open: ``shell/run/tmux_control.py``)
and exits without the interpreter's teardown of every module and object, which changes nothing
outside the process and took about 16 ms of a 290 ms scale-down (bench/vs_oh_my_codex.py). While a
thread that is not a daemon still runs, it exits the ordinary way, which waits for it.

Only a whole process does either (``cli.main`` without ``argv``): a caller that runs commands in its
own process (the tests) keeps its collector as it is, and its process.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from typing import NoReturn

_held = False


def hold() -> None:
    """Switch the cyclic collector off until :func:`release` (nothing happens if it was off)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """Switch the collector back on if :func:`hold` switched it off; a no-op otherwise."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()


def leave(code: int) -> NoReturn:
    """End the process with ``code`` once its command has finished (see above)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: what could not be written is lost anyway
            pass
    threading = sys.modules.get("threading")  # never imported: no thread was ever started
    if threading is not None and any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()
    os._exit(code)
