"""Progress lines on a terminal: a scale-up longer than a second says each worker as it comes up."""

from __future__ import annotations

import io
import time

from pure import model as m
from shell.cli import progress


class Slow:
    def __init__(self) -> None:
        self.tmux_socket = "s"

    def execute(self, step: m.Step) -> m.Observation:
        if isinstance(step, m.Run) and step.args[0] == "split-window":
            return m.Proc(exit_code=0, stdout="%7\n")
        return m.Proc(exit_code=0)


def _split(worker: str) -> m.Run:
    return m.Run(tool="tmux", args=("split-window", "-h", "-t", "%0", "-d", "-P", "-F", "#{pane_id}", "-c", "/w",
                                    f"exec /bin/sh '/w/.omx/state/team/a/runtime/{worker}-startup.sh'"), mutates=True)


def test_quiet_for_a_short_run_then_one_line_per_event() -> None:
    out = io.StringIO()
    watched = progress.Progress(Slow(), out)
    watched.execute(_split("worker-2"))
    assert out.getvalue() == ""  # within the first second: nothing yet
    assert watched.tmux_socket == "s"  # the wrapped executor's attributes stay visible
    watched.started = time.monotonic() - 2
    watched.execute(m.Run(tool="tmux", args=("set-option", "-p", "-u", "-t", "%7", "remain-on-exit"), mutates=True))
    watched.execute(m.Run(tool="tmux", args=("kill-pane", "-t", "%7"), mutates=True))
    assert out.getvalue().splitlines() == ["panefleet: worker-2: pane %7 created, its agent starting",
                                           "panefleet: worker-2: agent ready", "panefleet: worker-2: pane %7 killed"]
