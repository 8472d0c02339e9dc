"""Interrupts during a run (docs/design-notes.md, "Interrupts").

The first SIGINT, SIGTERM or SIGHUP while a program runs does not stop panefleet where it is: it is
noted, a read in flight is ended as its deadline would (``shell/run/process.py``
``interrupt_foreground``; observed as interrupted, never as an answer) while a change in flight
finishes, and the program is interrupted at the next step boundary (``pure/program.py``
``Driver.interrupt``), so that it undoes what it created exactly as on a failure. A second one stops
at once (``KeyboardInterrupt``, or ``SystemExit`` for SIGTERM and SIGHUP, as ``cli.py`` does without
a run): what the run created is left to the next command. A signal panefleet was started with ignored (``nohup``) stays ignored; off the main thread
(where Python runs no signal handler) nothing is installed.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

from shell.run.process import INTERRUPTS, interrupt_foreground


class Interrupts:
    """Installed for one run (a context manager): ``requested`` names the first signal, ``delivered``
    says whether the program was interrupted."""

    def __init__(self) -> None:
        self.requested: signal.Signals | None = None
        self.delivered = False
        self._previous: dict[signal.Signals, Any] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in INTERRUPTS:
                if signal.getsignal(sig) != signal.SIG_IGN:
                    self._previous[sig] = signal.signal(sig, self._noted)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _noted(self, signum: int, _frame: FrameType | None) -> None:
        if self.requested is None:
            self.requested = signal.Signals(signum)
            interrupt_foreground()
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    def due(self) -> bool:
        """Whether the program is to be interrupted now (once per run)."""
        if self.requested is None or self.delivered:
            return False
        self.delivered = True
        return True
