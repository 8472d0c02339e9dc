"""Dry run: drive the same program with *predicted* observations and print the trajectory.

Queries that cannot change anything are answered for real (the current pane table, owner tags,
files, ``git rev-parse`` …) so the plan starts from the true state, like a Terraform plan refresh.
Every mutation is predicted instead of executed: files are written into an in-memory overlay that
later reads see, tmux mutations update a simulated pane table (new panes get the next free id and
a placeholder pid), locks are assumed free. Nothing outside the process changes.

A predicted file change (a write, an append, a folder, a removal, a lock directory) is checked first:
it can happen when its folder exists — or an earlier predicted step makes it — and can be written.
A folder on a read-only mount (``statvfs``: as root ``os.access`` alone would say yes) or without
write permission is predicted to fail exactly as the real step would (``shell/run/executor.py``
``os_error``/``named``: ``OSError: Read-only file system: <path>``), so the plan's result and exit
status are those of the real run.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
from collections.abc import Callable, Mapping

from pure import model as m
from pure import tmux as t
from shell.run.executor import Executor, os_error

# Verbs that only read. Anything else is predicted, never run, whatever the step claims.
READ_ONLY: dict[str, frozenset[str]] = {
    "tmux": frozenset({"-V", "list-panes", "show-option", "show-options", "display-message", "has-session",
                       "list-sessions", "list-windows", "capture-pane"}),
    "git": frozenset({"rev-parse", "show-ref", "status", "log", "ls-files", "cat-file", "config"}),
}
PLACEHOLDER_PID_BASE = 4_000_000
PANE_NUMBER = re.compile(r"%(\d+)\b")

Predictor = Callable[[m.Run], m.Proc]


class DryRunExecutor:
    """``predicted_capture``: what ``capture-pane`` of a pane that exists only in the plan shows
    (default: nothing, as a pane that was never started). An operation whose plan polls a new pane
    for output can predict that the pane started, so the plan is not the whole wait."""

    def __init__(self, real: Executor, predictors: Mapping[str, Predictor] | None = None, *,
                 predicted_capture: str | None = None) -> None:
        self.real = real
        self.predicted_capture = predicted_capture
        self.predictors = dict(predictors or {})
        self.files: dict[str, str | None] = {}  # path -> content, None = removed
        self.dirs: set[str] = set()
        self.removed_trees: set[str] = set()
        self.panes: dict[str, tuple[bool, int | None]] | None = None
        self.server_fields = ""  # what the real listing said of its server ("\tPID\tSTART"), said again by ours
        self.snapshot_failure: m.Proc | None = None  # a real failure to read the pane table stays a failure
        self.predicted: set[str] = set()
        self.tags: dict[str, str] = {}
        self.killed: set[str] = set()
        self.new_panes = 0
        self.ids = 0
        self.highest_pane = -1  # the highest pane number any step or answer named: tmux never reissues one

    # ------------------------------------------------------------------------------------- tmux
    @property
    def changed_tmux(self) -> bool:
        """Whether the plan has predicted a tmux change (a new, killed or tagged pane) yet."""
        return bool(self.predicted or self.killed or self.tags or self.new_panes)

    def _snapshot_from(self, answer: m.Proc) -> None:
        parsed = t.parse_pane_table(answer.stdout) if answer.exit_code == 0 else None
        if parsed is None or not isinstance(parsed.value_or(None), dict):
            self.snapshot_failure = answer
            self.panes = {}
        else:
            rows = parsed.unwrap()
            self.panes = {pane: (row.dead, row.pid) for pane, row in rows.items()}
            server = next((row.server for row in rows.values() if row.server), None)
            self.server_fields = "\t" + server.replace("@", "\t") if server else ""

    def _snapshot(self) -> dict[str, tuple[bool, int | None]]:
        if self.panes is None:
            answer = self.real.execute(t.list_panes_step())
            assert isinstance(answer, m.Proc)
            self._snapshot_from(answer)
        assert self.panes is not None
        return self.panes

    def _tmux(self, step: m.Run) -> m.Proc:
        verb = step.args[0] if step.args else ""
        if verb == "list-panes" and tuple(step.args) == t.LIST_PANES and not self.changed_tmux:
            # Nothing predicted yet: the real answer, as it is (a saved plan compares it with the
            # answer at apply time, ``shell/cli/saved_plan.py``); the simulated table starts from it.
            answer = self.real.execute(step)
            assert isinstance(answer, m.Proc)
            self.panes, self.snapshot_failure = None, None
            self._snapshot_from(answer)
            return answer
        if verb == "list-panes" and tuple(step.args) == t.LIST_PANES:
            rows = self._snapshot()
            if self.snapshot_failure is not None:
                return self.snapshot_failure
            text = "".join(f"{pane}\t{int(dead)}\t{'' if pid is None else pid}{self.server_fields}\n"
                           for pane, (dead, pid) in rows.items())
            return m.Proc(exit_code=0, stdout=text)
        if verb == "show-option" and "-t" in step.args:
            pane = step.args[step.args.index("-t") + 1]
            if pane in self.tags:
                return m.Proc(exit_code=0, stdout=self.tags[pane] + "\n")
        target = step.args[step.args.index("-t") + 1] if "-t" in step.args[:-1] else None
        if verb in READ_ONLY["tmux"] and target in self.predicted:
            if verb == "capture-pane" and self.predicted_capture is not None:
                return m.Proc(exit_code=0, stdout=self.predicted_capture)
            return m.Proc(exit_code=0)  # a pane that only exists in the plan: nothing real to read
        if verb in READ_ONLY["tmux"]:
            answer = self.real.execute(step)
            assert isinstance(answer, m.Proc)
            return answer
        if verb in ("split-window", "new-session", "new-window"):
            rows = self._snapshot()
            numbers = [int(p[1:]) for p in rows] + [self.highest_pane]
            pane = f"%{max(numbers) + 1}"
            self.new_panes += 1
            rows[pane] = (False, PLACEHOLDER_PID_BASE + self.new_panes)
            self.predicted.add(pane)
            return m.Proc(exit_code=0, stdout=pane + "\n")
        if verb == "set-option" and "-t" in step.args:
            pane = step.args[step.args.index("-t") + 1]
            if step.args[-2] == t.OWNER_OPTION:
                self.tags[pane] = step.args[-1]
            return m.Proc(exit_code=0)
        if verb == "kill-pane" and "-t" in step.args:
            pane = step.args[step.args.index("-t") + 1]
            self._snapshot().pop(pane, None)
            self.killed.add(pane)
            return m.Proc(exit_code=0)
        return m.Proc(exit_code=0)

    # ------------------------------------------------------------------------------------ files
    def _removed(self, path: str) -> bool:
        return any(path == root or path.startswith(root + "/") for root in self.removed_trees)

    def _read(self, path: str) -> m.FileData:
        if path in self.files:
            content = self.files[path]
            return m.FileData(content=content)
        if self._removed(path):
            return m.FileData(content=None)
        answer = self.real.execute(m.ReadFile(path=path))
        assert isinstance(answer, m.FileData)
        return answer

    def _list(self, path: str) -> m.Listing:
        answer = self.real.execute(m.ListDir(path=path))
        assert isinstance(answer, m.Listing)
        names = set(answer.names or ()) if not self._removed(path) else set()
        exists = answer.names is not None or path in self.dirs
        for file, content in self.files.items():
            if posixpath.dirname(file) == path:
                exists = True
                if content is None:
                    names.discard(posixpath.basename(file))
                else:
                    names.add(posixpath.basename(file))
        for directory in self.dirs:
            if posixpath.dirname(directory) == path:
                names.add(posixpath.basename(directory))
        names = {n for n in names if not self._removed(posixpath.join(path, n))}
        return m.Listing(names=tuple(sorted(names)) if exists else None)

    def _lock(self, step: m.AcquireLock) -> m.Ack:
        """A lock is read, not taken: held by a live holder, the real run would wait out its timeout
        behind it, so that is the prediction (with who holds it); free or abandoned, it is predicted
        taken (``shell/run/fs.py`` takes an abandoned lock over at once) when its folder can be written."""
        import time
        from pathlib import Path

        from shell.run import fs

        holder = fs.inspect_lock(Path(step.path), step.stale_ms)
        if holder.exists and holder.abandoned(time.time() * 1000) is None:
            return m.Ack(ok=False, error=f"timeout: {holder.describe()}")
        # made with its missing parents; an abandoned one is taken over beside it (shell/run/fs.py)
        failure = self._removal_failure(step.path, tree=False) if holder.exists else self._make_failure(step.path)
        return failure or m.Ack(ok=True)

    # ------------------------------------------------------------------------- can it be written?
    def _made(self, path: str) -> bool:
        """A folder an earlier predicted step makes (a folder at or below it, a file written below it)."""
        prefix = path.rstrip("/") + "/"
        return any(d == path or d.startswith(prefix) for d in self.dirs) or any(
            content is not None and file.startswith(prefix) for file, content in self.files.items())

    def _is_dir(self, path: str) -> bool:
        return self._made(path) or (not self._removed(path) and os.path.isdir(path))

    def _new(self, folder: str) -> bool:
        """A folder only the plan makes: made by an earlier predicted step, so it can be written."""
        return self._made(folder) and (self._removed(folder) or not os.path.isdir(folder))

    def _make_failure(self, path: str) -> m.Ack | None:
        """What making the folder ``path`` with its missing parents would observe: the first missing
        one is made in the nearest folder that exists (or is predicted), which must be writable."""
        if self._is_dir(path):
            return None
        missing = path
        while not self._is_dir(posixpath.dirname(missing)) and posixpath.dirname(missing) != missing:
            missing = posixpath.dirname(missing)
        folder = posixpath.dirname(missing)
        return None if self._new(folder) else _unwritable(folder, missing)

    def _file_failure(self, path: str, *, append: bool = False) -> m.Ack | None:
        """What writing (or appending to) the file ``path`` would observe: its folder is made first."""
        folder = posixpath.dirname(path)
        if not self._is_dir(folder):
            return self._make_failure(folder)
        if self._new(folder):
            return None
        failure = _unwritable(folder, path)
        if failure is None and append and path not in self.files and os.path.isfile(path) and not os.access(
                path, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
            failure = _failed(errno.EACCES, path)
        return failure

    def _removal_failure(self, path: str, *, tree: bool) -> m.Ack | None:
        """What removing ``path`` would observe: nothing to do when it is not there for real (or only
        predicted); else its folder, and for a tree the tree itself, must be writable."""
        if path in self.files or self._made(path) or self._removed(path) or not os.path.lexists(path):
            return None
        failure = _unwritable(posixpath.dirname(path), path)
        if failure is None and tree and os.path.isdir(path) and not os.path.islink(path):
            failure = _unwritable(path, path)
        return failure

    def execute(self, step: m.Step) -> m.Observation:
        """The step's real or predicted answer; every pane id it or its answer names is remembered, so
        that a predicted new pane never takes the id of a pane that existed (e.g. a worker's dead one)."""
        answer = self._execute(step)
        named = " ".join(step.args) if isinstance(step, m.Run) else ""
        named += " " + str(getattr(answer, "stdout", "") or getattr(answer, "content", "") or "")
        self.highest_pane = max([self.highest_pane, *(int(n) for n in PANE_NUMBER.findall(named))])
        return answer

    def _execute(self, step: m.Step) -> m.Observation:  # noqa: PLR0911
        if isinstance(step, m.Run):
            if step.tool in self.predictors:
                return self.predictors[step.tool](step)
            if step.tool == "tmux":
                return self._tmux(step)
            verb = step.args[0] if step.args else ""
            if step.tool in READ_ONLY and verb in READ_ONLY[step.tool] and not step.mutates:
                return self.real.execute(step)
            return m.Proc(exit_code=0)
        if isinstance(step, m.ReadFile):
            return self._read(step.path)
        if isinstance(step, m.WriteFile):
            failure = self._file_failure(step.path)
            if failure is not None:
                return failure
            self.files[step.path] = step.content
            return m.Ack(ok=True)
        if isinstance(step, m.AppendFile):
            failure = self._file_failure(step.path, append=True)
            if failure is not None:
                return failure
            before = self._read(step.path).content or ""
            self.files[step.path] = before + step.content
            return m.Ack(ok=True)
        if isinstance(step, m.RemovePath):
            failure = self._removal_failure(step.path, tree=step.recursive)
            if failure is not None:
                return failure
            self.files[step.path] = None
            if step.recursive:
                self.removed_trees.add(step.path)
                for file in list(self.files):
                    if file.startswith(step.path + "/"):
                        self.files[file] = None
            return m.Ack(ok=True)
        if isinstance(step, m.MakeDir):
            failure = self._make_failure(step.path)
            if failure is not None:
                return failure
            self.dirs.add(step.path)
            self.removed_trees.discard(step.path)
            return m.Ack(ok=True)
        if isinstance(step, m.ListDir):
            return self._list(step.path)
        if isinstance(step, m.Stat):
            if step.path in self.files:
                return m.Value(value="absent" if self.files[step.path] is None else "file")
            if step.path in self.dirs:
                return m.Value(value="dir")
            if self._removed(step.path):
                return m.Value(value="absent")
            return self.real.execute(step)
        if isinstance(step, m.RealPath):
            return self.real.execute(step)
        if isinstance(step, m.AcquireLock):
            return self._lock(step)
        if isinstance(step, (m.ReleaseLock, m.Sleep)):
            return m.Ack(ok=True)
        if isinstance(step, m.Clock):
            return self.real.execute(step)
        if isinstance(step, m.FreshId):
            self.ids += 1
            return m.Value(value=f"dry-run-{self.ids}")
        if isinstance(step, m.Store):
            if step.action.startswith(("get", "list", "read", "load")):
                return self.real.execute(step)
            if self.real.store is not None:  # the herdr store, opened read-only in a folder that cannot be written
                from shell.store.herdr import change_failure

                refused = change_failure(self.real.env)
                if refused is not None:
                    return m.JsonResult(ok=False, error=refused)
            return m.JsonResult(ok=True)
        raise TypeError(f"unknown step {step!r}")  # pragma: no cover


def _failed(code: int, path: str) -> m.Ack:
    """The observation the real step gives for ``code`` at ``path`` (``shell/run/executor.py``)."""
    return m.Ack(ok=False, error=os_error(OSError(code, os.strerror(code), path)))


def _unwritable(folder: str, path: str) -> m.Ack | None:
    """The failure of making or removing ``path`` in the existing ``folder`` (``shell/run/fs.py``
    ``unwritable``: a read-only mount, no write permission); None when it can be written."""
    from shell.run import fs

    code = fs.unwritable(folder)
    return None if code is None else _failed(code, path)
