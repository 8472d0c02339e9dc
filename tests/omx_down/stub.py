"""A scripted tmux answering like the seed's stub scripts, plus a scenario runner with goldens."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pure import model as m
from pure import operations
from pure.program import Program
from shell.run.loop import run_program
from tests.harness import Goldens, ScenarioExecutor, err, journal_json, normalize, ok, snapshot_files


class Stub:
    """Pane table ``panes`` (id → (dead, pid)); owner answers; kill behaviour per pane.

    ``on_kill[pane]`` runs after a successful kill (default: the pane disappears).
    ``list_fail`` makes every ``list-panes`` exit 1.
    """

    def __init__(self, panes: dict[str, tuple[int, int | str]] | None = None, owner: str = "team:scale-down",
                 kill_exit: int | dict[str, int] = 0, show: m.Proc | None = None) -> None:
        self.panes = dict(panes or {})
        self.owner = owner
        self.kill_exit = kill_exit
        self.show = show
        self.list_fail = False
        self.on_kill: dict[str, Callable[[], None]] = {}
        self.log: list[str] = []

    def rows(self) -> str:
        return "".join(f"{p}\t{dead}\t{pid}\n" for p, (dead, pid) in self.panes.items())

    def __call__(self, args: tuple[str, ...]) -> m.Proc:
        self.log.append(" ".join(args))
        verb = args[0]
        if verb == "list-panes":
            return err(1) if self.list_fail else ok(self.rows())
        if verb == "show-option":
            return self.show if self.show is not None else ok(self.owner + "\n")
        if verb == "kill-pane":
            pane = args[-1]
            code = self.kill_exit if isinstance(self.kill_exit, int) else self.kill_exit.get(pane, 0)
            if code != 0:
                return err(code)
            hook = self.on_kill.get(pane)
            if hook is not None:
                hook()
            else:
                self.panes.pop(pane, None)
            return ok()
        return ok()


def run_op(name: str, request: Any, executor: ScenarioExecutor) -> tuple[m.Done, list[m.Entry]]:
    op = operations.get(name)
    assert op is not None, name

    def factory() -> Program:
        return op.program(request)

    return run_program(factory, executor)


def record(goldens: Goldens, name: str, root: Path, runs: list[tuple[str, m.Done, list[m.Entry], list[str]]],
           team_dir: Path) -> None:
    data = {
        "runs": [
            {"call": call, "tmux": tmux, "outcome": normalize(done.outcome.result, root),
             "status": done.outcome.status,
             "debt": [{"kind": x.kind, "subject": x.subject, "reason": x.reason} for x in done.debt],
             "journal": journal_json(journal, root)}
            for call, done, journal, tmux in runs
        ],
        "files_after": normalize(snapshot_files(root, team_dir), root),
    }
    goldens.check(f"omx_down/{name}", data)
