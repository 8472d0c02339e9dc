"""Test harness: scripted tmux for scenario goldens, deterministic clock/ids, golden files.

A scenario runs a real program through the real loop against a real temporary filesystem; only the
tmux answers come from a responder (the seed's stub-tmux behaviour, for faults a real tmux cannot
produce on demand). The resulting exact command log (with each answer), outcome and final files
are compared with a golden JSON file that a port in another language can replay call by call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pure import model as m
from pure import wire
from pure.program import ProgramFactory
from shell.run.executor import Executor
from shell.run.loop import run_program
from shell.run.process import run_process

GOLDEN_ROOT = Path(__file__).parent / "goldens"
Responder = Callable[[tuple[str, ...]], m.Proc]


def ok(stdout: str = "") -> m.Proc:
    return m.Proc(exit_code=0, stdout=stdout)


def err(code: int = 1, stderr: str = "", stdout: str = "") -> m.Proc:
    return m.Proc(exit_code=code, stdout=stdout, stderr=stderr)


def pane_rows(*rows: tuple[str, int, int | str]) -> str:
    return "".join(f"{pane}\t{dead}\t{pid}\n" for pane, dead, pid in rows)


class ScenarioExecutor:
    """Real files, scripted tmux, real git, a deterministic clock and id source, no sleeping.

    A lock timeout is recorded as the bare ``timeout``: the shell's detail (who holds the lock,
    when its lease lapses) carries wall-clock times, and goldens must not."""

    def __init__(self, root: Path, tmux: Responder, env: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.tmux = tmux
        self.env = dict(os.environ if env is None else env)
        self.real = Executor(env=self.env)
        self.tmux_log: list[tuple[str, ...]] = []
        self.ticks = 0
        self.ids = 0

    def execute(self, step: m.Step) -> m.Observation:
        if isinstance(step, m.Run) and step.tool == "tmux":
            self.tmux_log.append(step.args)
            return self.tmux(step.args)
        if isinstance(step, m.Run) and step.tool == "git":
            return run_process("git", step.args, env=self.env, cwd=step.cwd)
        if isinstance(step, m.Sleep):
            return m.Ack(ok=True)
        if isinstance(step, m.Clock):
            self.ticks += 1
            return m.Value(value=f"2026-01-01T00:00:{self.ticks // 1000:02d}.{self.ticks % 1000:03d}Z")
        if isinstance(step, m.FreshId):
            self.ids += 1
            return m.Value(value=f"id-{self.ids:04d}")
        observed = self.real.execute(step)
        if isinstance(step, m.AcquireLock) and isinstance(observed, m.Ack) and observed.error.startswith("timeout:"):
            return m.Ack(ok=False, error="timeout")
        return observed


def run_scenario(factory: ProgramFactory, executor: ScenarioExecutor) -> tuple[m.Done, list[m.Entry]]:
    return run_program(factory, executor)


def normalize(value: Any, root: Path) -> Any:
    """Replace the temporary root with ``$ROOT`` everywhere (goldens are machine-independent)."""
    text = json.dumps(value, sort_keys=True)
    text = text.replace(json.dumps(str(root))[1:-1], "$ROOT")
    return json.loads(text)


def snapshot_files(root: Path, under: Path | None = None) -> dict[str, str | None]:
    """Every file below ``under`` (default root) as text, keyed by its path relative to root."""
    base = under or root
    files: dict[str, str | None] = {}
    if not base.exists():
        return files
    for path in sorted(base.rglob("*")):
        if path.is_file():
            try:
                files[str(path.relative_to(root))] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                files[str(path.relative_to(root))] = None
        elif path.is_dir() and path.name.endswith(".lock"):
            files[str(path.relative_to(root)) + "/"] = ""
    return files


def journal_json(journal: list[m.Entry], root: Path) -> list[Any]:
    return normalize([wire.unstructure(e) for e in journal], root)


def golden_text(data: Any) -> str:
    """The reviewable text of a golden (docs/goldens.md): canonical JSON — sorted keys,
    two-space indent, UTF-8 — except that each journal entry (an object with ``step`` and
    ``observation``) is written whole on one line, its step first, so a diff shows exactly the steps
    that changed."""

    def one_line(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))

    def text(value: Any, depth: int) -> str:
        if isinstance(value, dict) and "step" in value and "observation" in value:
            keys = ["step", *sorted(k for k in value if k != "step")]
            return "{" + ", ".join(f"{json.dumps(k)}: {one_line(value[k])}" for k in keys) + "}"
        if isinstance(value, dict) and value:
            inner = "  " * (depth + 1)
            rows = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {text(value[k], depth + 1)}" for k in sorted(value)]
            return "{\n" + ",\n".join(rows) + "\n" + "  " * depth + "}"
        if isinstance(value, list) and value:
            inner = "  " * (depth + 1)
            rows = [inner + text(item, depth + 1) for item in value]
            return "[\n" + ",\n".join(rows) + "\n" + "  " * depth + "]"
        return json.dumps(value, ensure_ascii=False)

    return text(data, 0) + "\n"


class Goldens:
    """Compare data with ``tests/goldens/<name>.json``, in its reviewable text (``golden_text``); rewrite
    only with ``--update-goldens``."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def check(self, name: str, data: Any) -> None:
        path = GOLDEN_ROOT / f"{name}.json"
        body = {"format_version": m.FORMAT_VERSION, **data}
        text = golden_text(json.loads(wire.dumps(body)))  # plain JSON data, as it reads back
        if self.update or not path.exists():
            if not self.update:
                raise AssertionError(f"golden {path} is missing: run pytest with --update-goldens and review it")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        stored = path.read_text(encoding="utf-8")
        assert json.loads(text) == json.loads(stored), f"golden {path} differs (rerun with --update-goldens and review the diff)"
        assert text == stored, f"golden {path} is not in its reviewable form (rerun with --update-goldens)"
