"""Herdr answered in the test's own process by the fake's model (``tests/herdr/fake_herdr/fake.py``),
over the state file a spawned fake reads and writes too: the fast tier's herdr (``./dev test fast``
sets ``PANEFLEET_TEST_HERDR=shared``), for the programs a test runs and for the ``panefleet`` it forks
(``tests/cli_process.py``). The whole run spawns the fake for every call, as production spawns herdr.

A call is still spawned when herdr is not on the caller's PATH (the executor answers that itself) or
when a planted fault makes it hang (only a process hangs under its deadline)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import Any

from pure import model as m
from tests.herdr.fake_herdr.fake import FakeHerdr

MODE = "PANEFLEET_TEST_HERDR"


def shared() -> bool:
    return os.environ.get(MODE) == "shared"


def answer(fake: FakeHerdr, step: m.Run, path: str | None, spawn: Callable[[], m.Proc]) -> m.Proc:
    if shutil.which("herdr", path=path) is None or (fake.path is not None and fake.hangs()):
        return spawn()
    code, stdout, stderr = fake.call(list(step.args))
    return m.Proc(exit_code=code, stdout=stdout, stderr=stderr)


def in_forked_cli() -> None:
    """In a ``panefleet`` forked by a test of the fast tier: answer its herdr calls in its process."""
    state = os.environ.get("FAKE_HERDR_STATE")
    if not shared() or not state:
        return
    from shell.run.executor import Executor

    fake = FakeHerdr(state, os.environ.get("HERDR_SESSION") or "default")
    spawned = Executor.run_tool

    def run_tool(self: Executor, step: m.Run, guards: Any = None) -> m.Proc:
        if step.tool != "herdr":
            return spawned(self, step, guards)
        return answer(fake, step, self.env.get("PATH"), lambda: spawned(self, step, guards))

    Executor.run_tool = run_tool  # type: ignore[method-assign]
