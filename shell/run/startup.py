"""A panefleet process starts without the cyclic garbage collector.

Start-up — parsing the command line and importing the modules a command needs — allocates a few
hundred thousand objects and makes hardly any garbage, yet it set off dozens of collections, each
scanning what had just been imported: about a seventh of a ``team status`` run (bench/status.py).
So ``cli.py`` calls :func:`hold` when a process starts, and :func:`release` switches the collector
back on before the first step of a run (``shell/run/executor.py``), before a loop that runs no steps
(``herdr follow``), and when the command ends, whichever comes first. What was allocated until then
is moved to the permanent generation first (``gc.freeze``), so no later collection scans it again.

Only a whole process holds the collector (``cli.main`` without ``argv``): a caller that runs
commands in its own process (the tests) keeps its collector as it is.
"""

from __future__ import annotations

import gc

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
