"""Follower liveness from a pane's foreground process table (``followerPulseFromProcessInfo``).

The follower is panefleet itself (``panefleet herdr follow RUN_ID``). Recognition of ``panefleet`` in a
process's name, argv0 or any argv element (equal, or ending in ``/panefleet``, case ignored) is
positive evidence of life; its absence is evidence of death only when every non-shell entry carries
enough identity to rule it out. A missing or empty table, a nameless entry, or a table naming neither
a shell nor anything identifiable is ``unknown`` — and ``unknown`` never destroys a pane.
"""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from pure.herdr.parse import ProcessInfo

FOLLOWER_NAME = "panefleet"


@frozen
class Pulse:
    pulse: Literal["alive", "dead", "unknown"]
    reason: str = ""


def _names_follower(part: str, name: str) -> bool:
    low = part.lower()
    return low == name or low.endswith("/" + name)


def follower_pulse(info: ProcessInfo, name: str = FOLLOWER_NAME) -> Pulse:
    procs = info.processes
    if procs is None or len(procs) == 0:
        return Pulse("unknown", "process-info carried no foreground process table")
    shell = info.shell_pid
    non_shell = False
    for proc in procs:
        parts = [proc.name or "", proc.argv0 or "", *(proc.argv or ())]
        is_shell = shell is not None and proc.pid == shell
        if not is_shell and not any(p != "" for p in parts):
            pid = "unknown" if proc.pid is None else str(proc.pid)
            return Pulse("unknown", f"foreground pid {pid} carries no name or argv")
        if not is_shell:
            non_shell = True
            if any(_names_follower(p, name) for p in parts):
                return Pulse("alive")
    if not non_shell and shell is None:
        return Pulse("unknown", "process-info named neither a shell nor any identifiable process")
    return Pulse("dead")
