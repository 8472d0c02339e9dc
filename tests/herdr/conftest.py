"""Fixtures for the Herdr fleet tests: a fake herdr first on PATH, a private store, a driver."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from pure import model as m
from pure import wire
from pure.herdr import fleet
from pure.program import ProgramFactory, decide
from shell.run.executor import Executor
from shell.run.loop import run_program
from shell.store.herdr import HerdrStore
from tests.herdr import in_process
from tests.herdr.fake_herdr.fake import FakeHerdr

FAKE_DIR = Path(__file__).parent / "fake_herdr"
FOLLOWER = ("panefleet",)


def make_bin(bin_dir: Path) -> None:
    """``herdr`` (the fake) plus a ``python3`` that starts without site-packages, so the fake's
    ``#!/usr/bin/env python3`` costs tens of milliseconds, not hundreds."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "herdr").symlink_to(FAKE_DIR / "herdr")
    real = getattr(sys, "_base_executable", sys.executable)
    py = bin_dir / "python3"
    py.write_text(f'#!/bin/sh\nexec "{real}" -S -E "$@"\n')
    py.chmod(0o755)


class SubprocessExecutor(Executor):
    """The shell executor with herdr spawned by ``subprocess`` instead of ``sh`` (≈25 ms less per call).

    Used only where call volume dominates (the soak and the benchmark); every other test runs herdr
    through the real ``sh``-based executor."""

    def run_tool(self, step: m.Run, guards: set[Any] | None = None) -> m.Proc:
        if step.tool != "herdr":
            return super().run_tool(step, guards)
        import shutil
        import subprocess

        path = shutil.which("herdr", path=self.env.get("PATH"))
        if path is None:
            return m.Proc(exit_code=None, stderr="herdr: command not found on PATH")
        done = subprocess.run([path, *step.args], capture_output=True, text=True, env=self.env, check=False)
        return m.Proc(exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr)


class InProcessExecutor(Executor):
    """The shell executor with herdr answered by the fake's model in this process (no spawn at all).

    For property tests that run thousands of passes, and the fast tier; the fake's parser, model and
    answers are the very code the ``herdr`` executable runs."""

    def __init__(self, fake: FakeHerdr, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fake = fake
        self.read_ahead_most = 1  # the in-process fake's state is not shared safely between threads

    def run_tool(self, step: m.Run, guards: set[Any] | None = None) -> m.Proc:
        if step.tool == "herdr":
            return in_process.answer(self.fake, step, self.env.get("PATH"), lambda: super(
                InProcessExecutor, self).run_tool(step, guards))
        return super().run_tool(step, guards)


class World:
    """One fake herdr server, one store, and the real shell loop between them.

    ``mode``: ``sh`` (the production executor spawning the fake ``herdr`` through ``sh``),
    ``shared`` (answered in this process over the state file a spawned fake uses too),
    ``subprocess`` (the same executable, spawned without ``sh``), ``inprocess`` (no spawn)."""

    def __init__(self, root: Path, session: str = "fleet", fast: bool = False, mode: str | None = None,
                 version: str = "0.8.2", last_pane: str = "closes") -> None:
        mode = mode or ("subprocess" if fast else "sh")
        self.version = version
        self.root = root
        bin_dir = root / "bin"
        make_bin(bin_dir)
        self.state_path = root / "herdr-state.json"
        self.state_dir = root / "state"
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "FAKE_HERDR_STATE": str(self.state_path),
            "PANEFLEET_STATE_DIR": str(self.state_dir),
            "HERDR_SESSION": session,
        }
        self.session = session
        self.last_done = m.Done(outcome=m.Outcome(status="ok"))  # of the last reconcile()
        self.fake = FakeHerdr(None if mode == "inprocess" else str(self.state_path), session)
        self.fake.configure(version=version, last_pane=last_pane)
        self.store = HerdrStore(self.state_dir / "herdr.sqlite3")
        self.executor: Executor
        if mode == "shared":
            self.executor = InProcessExecutor(self.fake, env=self.env, store=self.store.handle)
        elif mode == "inprocess":
            self.executor = InProcessExecutor(self.fake, env=self.env, store=self.store.handle)
        elif mode == "subprocess":
            self.executor = SubprocessExecutor(env=self.env, store=self.store.handle)
        else:
            self.executor = Executor(env=self.env, store=self.store.handle)

    def close(self) -> None:
        self.store.close()

    # runs
    def start(self, run_id: str, project: str = "alpha", issue: int = 1, attempt: int = 1,
              pid: int | None = 1000) -> None:
        self.store.start_run(run_id=run_id, project=project, issue=issue, attempt=attempt, pid=pid,
                             session_file=None, session=self.session)

    def settle(self, run_id: str) -> None:
        assert self.store.settle(run_id)

    # programs
    def run(self, factory: ProgramFactory) -> tuple[m.Done, list[m.Entry]]:
        done, journal = run_program(factory, self.executor)
        # Every run is replayable: the pure planner re-derives the same decision from the journal.
        assert decide(factory, journal) == done
        return done, journal

    def op(self, name: str, request: Any, goldens: Any = None, golden: str | None = None) -> tuple[m.Done, list[m.Entry]]:
        from pure import operations

        operation = operations.get(name)
        assert operation is not None
        done, journal = self.run(lambda: operation.program(request))
        # The goldens pin herdr 0.8.2's call log; a 0.9 world checks the same outcomes without them.
        if goldens is not None and golden is not None and self.version == "0.8.2":
            goldens.check(f"herdr/{golden}", {
                "kind": "decision",
                "operation": name,
                "request": wire.unstructure(request),
                "journal": [wire.unstructure(e) for e in journal],
                "decision": wire.unstructure(done),
            })
        return done, journal

    def reconcile(self, managed: Sequence[str] = (), max_attempts: int = 3, goldens: Any = None,
                  golden: str | None = None) -> list[dict[str, Any]]:
        request = fleet.ReconcileRequest(session=self.session, managed=tuple(managed), max_attempts=max_attempts,
                                         follower=FOLLOWER)
        done, _ = self.op("herdr.reconcile", request, goldens, golden)
        self.last_done = done
        result = done.outcome.result
        assert isinstance(result, dict) and result.get("ok") is True, result
        outcomes = result["outcomes"]
        assert isinstance(outcomes, list)
        return outcomes

    def reconcile_raw(self, managed: Sequence[str] = (), max_attempts: int = 3) -> m.Done:
        request = fleet.ReconcileRequest(session=self.session, managed=tuple(managed), max_attempts=max_attempts,
                                         follower=FOLLOWER)
        done, _ = self.op("herdr.reconcile", request)
        return done

    def open(self, run_id: str, goldens: Any = None, golden: str | None = None) -> dict[str, Any]:
        request = fleet.OpenRequest(session=self.session, run_id=run_id, follower=FOLLOWER)
        done, _ = self.op("herdr.open", request, goldens, golden)
        result = done.outcome.result
        assert isinstance(result, dict)
        return result

    def ensure(self, project: str = "alpha", goldens: Any = None, golden: str | None = None) -> dict[str, Any]:
        done, _ = self.op("herdr.ensure", fleet.EnsureRequest(session=self.session, project=project), goldens, golden)
        result = done.outcome.result
        assert isinstance(result, dict)
        return result

    def release(self, goldens: Any = None, golden: str | None = None, **identity: Any) -> dict[str, Any]:
        done, _ = self.op("herdr.release", fleet.ReleaseRequest(session=self.session, **identity), goldens, golden)
        result = done.outcome.result
        assert isinstance(result, dict)
        return result

    # observation
    def calls(self) -> list[list[str]]:
        return self.fake.calls()

    def mutations(self) -> list[list[str]]:
        read_only = {("workspace", "list"), ("pane", "list"), ("pane", "process-info")}
        return [c for c in self.calls() if tuple(c[2:4]) not in read_only]

    def recorded(self, project: str = "alpha") -> list[str]:
        return self.store.recorded([project], self.session)[project]

    def pane_ids(self) -> list[str]:
        return [p["pane_id"] for p in self.fake.panes()]

    def ws_ids(self) -> list[str]:
        return [w["workspace_id"] for w in self.fake.workspaces()]


# Both herdr versions the fake plays; 0.9 with each way the last pane's close may go (docs/herdr-fleet.md).
HERDR_MODES = {"herdr-0.8.2": ("0.8.2", "closes"), "herdr-0.9.3": ("0.9.3", "closes"),
               "herdr-0.9.3-confirm": ("0.9.3", "confirm")}


# Modules whose ``world`` runs in both herdr versions: the programs' own tests. The command-line tests
# (each a process per command) run against 0.8.2 only, to keep the suite's time bounded; the 0.9
# command line is covered by tests/herdr/test_herdr_09.py, and both versions by the soak.
BOTH_VERSIONS = {"test_reconcile", "test_ensure_open", "test_fake_herdr", "test_parse_liveness", "test_store"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "herdr_mode" in metafunc.fixturenames:
        both = metafunc.module.__name__.rsplit(".", 1)[-1] in BOTH_VERSIONS
        metafunc.parametrize("herdr_mode", ["herdr-0.8.2", "herdr-0.9.3"] if both else ["herdr-0.8.2"])


@pytest.fixture
def world(herdr_mode: str, tmp_path: Path) -> Iterator[World]:
    version, last_pane = HERDR_MODES[herdr_mode]
    # 0.8.2 goes through the production executor (herdr spawned by ``sh``); 0.9, the same executable
    # spawned directly, to keep the doubled suite's time bounded (SubprocessExecutor). The fast tier
    # (``./dev test fast``) answers both in the test's process (tests/herdr/in_process.py); the full run spawns.
    mode = "shared" if in_process.shared() else "subprocess" if version != "0.8.2" else None
    w = World(tmp_path, version=version, last_pane=last_pane, mode=mode)
    try:
        yield w
    finally:
        w.close()


def kinds(outcomes: list[dict[str, Any]]) -> list[str]:
    return [o["kind"] for o in outcomes]
