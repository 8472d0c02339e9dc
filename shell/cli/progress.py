"""Progress lines on stderr for long runs on a terminal (one line per worker as it comes up or goes).

``Progress`` wraps the executor of a real run (``shell/cli/operation.py``). It watches the steps as they
are executed: a ``split-window`` or ``new-window`` that answered a pane id (the worker is named by the
startup script in its command), the ``remain-on-exit`` release that ends a watched start
(``pure/agents/supervise.py``), a ``kill-pane``. Nothing is printed for a run that ends within
``QUIET_S``; after that, what happened so far and then each event as it happens.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from pure import model as m
from pure import tmux as t
from pure.omx.startup_script import started_worker

QUIET_S = 1.0


class Progress:
    def __init__(self, real: Any, out: TextIO | None = None) -> None:
        self.real = real
        self.out = out or sys.stderr
        self.started = time.monotonic()
        self.pending: list[str] = []
        self.workers: dict[str, str] = {}  # pane id -> worker name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def execute(self, step: m.Step) -> m.Observation:
        observation: m.Observation = self.real.execute(step)
        if isinstance(step, m.Run) and step.tool == "tmux" and step.mutates and isinstance(observation, m.Proc):
            line = self._event(step.args, observation)
            if line is not None:
                self._say(line)
        return observation

    def _event(self, args: tuple[str, ...], done: m.Proc) -> str | None:
        if done.exit_code != 0 or not args:
            return None
        if args[0] in ("split-window", "new-window"):
            pane = t.answered_pane(done)[0]
            worker = next(filter(None, map(started_worker, args)), "a worker")
            self.workers[pane] = worker
            return f"{worker}: pane {pane} created, its agent starting"
        if args[0] == "set-option" and "-u" in args and "remain-on-exit" in args:
            pane = args[args.index("-t") + 1]
            return f"{self.workers.get(pane, 'pane ' + pane)}: agent ready"
        if args[0] == "kill-pane":
            pane = args[-1]
            who = self.workers.get(pane)
            return f"{who + ': ' if who else ''}pane {pane} killed"
        return None

    def _say(self, line: str) -> None:
        self.pending.append(line)
        if time.monotonic() - self.started < QUIET_S:
            return
        self.out.write("".join(f"panefleet: {text}\n" for text in self.pending))
        self.out.flush()
        self.pending.clear()
