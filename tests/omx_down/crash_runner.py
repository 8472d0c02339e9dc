"""Run a scale-down as a real process and SIGKILL it right after its Nth file-write step.

Usage: python -m tests.omx_down.crash_runner CWD TEAM N TMUX_SOCKET WORKER...
Prints the number of write steps when the run finishes before reaching N.
"""

from __future__ import annotations

import os
import signal
import sys

from pure import model as m
from pure.omx.scale_down import ScaleDownRequest
from shell.run.executor import Executor
from shell.run.loop import run_operation

WRITES = (m.WriteFile, m.RemovePath, m.AppendFile, m.MakeDir)


class CrashingExecutor(Executor):
    """Kills its own process right after the Nth file write (and, with ``tmux``, tmux mutation), or with
    ``crash_on`` right after the first tmux mutation of that command (``split-window``)."""

    def __init__(self, crash_after: int, *, tmux: bool = False, crash_on: str | None = None,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.crash_after = crash_after
        self.tmux = tmux
        self.crash_on = crash_on
        self.writes = 0

    def execute(self, step: m.Step) -> m.Observation:
        observation = super().execute(step)
        mutates_tmux = isinstance(step, m.Run) and step.mutates
        if isinstance(step, WRITES) or self.tmux and mutates_tmux:
            self.writes += 1
            if self.writes == self.crash_after:
                os.kill(os.getpid(), signal.SIGKILL)
        if mutates_tmux and self.crash_on is not None and self.crash_on in step.args:
            os.kill(os.getpid(), signal.SIGKILL)
        return observation


def main() -> None:
    cwd, team, n, socket, *workers = sys.argv[1:]
    executor = CrashingExecutor(int(n), env=dict(os.environ), tmux_socket=socket)
    request = ScaleDownRequest(team=team, cwd=cwd, env={"OMX_TEAM_SCALING_ENABLED": "1"},
                               worker_names=tuple(workers), force=True)
    done, _, _ = run_operation("team.scale_down", request, executor, env=dict(os.environ), audit=False)
    print(executor.writes, done.outcome.result)


if __name__ == "__main__":
    main()
