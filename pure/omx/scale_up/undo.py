"""The scale-up's undo log: each thing one run created, appended as it is created, in order; the
rollback (pure/omx/scale_up/rollback.py) undoes what the log holds and nothing else. An entry leaves
the log only when the run itself undid it (a worker removed alone, worker.py ``drop_worker``).

Each kind, how the rollback undoes it (docs/scale-up.md, "Rollback"), and the debt code of an undo
that fails:

| entry        | created by                                 | undone in             | debt code                  |
|--------------|--------------------------------------------|-----------------------|----------------------------|
| ``Attempt``  | a worker's start, and each split of it     | (what follows it)     |                            |
| ``Task``     | a task file (new_tasks.py)                 | canonical cleanup     | ``canonical_cleanup_failed`` |
| ``Folder``   | ``workers/<name>``                         | canonical, resources  | ``resource_cleanup_failed``  |
| ``Tree``     | a git worktree (or half of one)            | resource cleanup      | ``resource_cleanup_failed``  |
| ``RootAgents`` | a worktree's ``AGENTS.md`` (its backup)  | resource cleanup      | ``resource_cleanup_failed``  |
| ``Script``   | ``runtime/worker-N-startup.sh`` (logged before it is written) | resource cleanup | ``resource_cleanup_failed`` |
| ``Instructions`` | the team's ``worker-agents.md``        | resource cleanup      | ``resource_cleanup_failed``  |
| ``Pane``     | a split's answer: a pane, not pinned yet   | teardown              | ``pane_pid_unpinned``        |
| ``Pinned``   | the pane's pinned pid: the worker record   | tracking commit, teardown | ``pane_owner_unverified`` |
| ``Tagged``   | the owner tag: a pane this run may kill    | teardown              | ``pane_teardown_failed`` …   |
| ``Member``   | the membership commit                      | membership commit     | (the run's failure)          |

``Pane`` and ``Pinned`` matter only for the worker in flight (the entries after the last ``Attempt``):
once tagged, the ``Tagged`` entry names the worker's pane."""

from __future__ import annotations

from typing import TypeVar

from attrs import define, field, frozen

from pure.omx import records
from pure.omx import worktree as wt


@frozen
class Attempt:
    worker: str


@frozen
class Task:
    task_id: str
    owner: str | None


@frozen
class Folder:
    worker: str


@frozen
class Tree:
    worker: str
    tree: wt.Worktree


@frozen
class RootAgents:
    worker: str
    tree_path: str
    backup: str


@frozen
class Script:
    worker: str
    path: str


@frozen
class Instructions:
    path: str


@frozen
class Pane:
    worker: str
    pane: str


@frozen
class Pinned:
    record: records.Member  # the worker record: name, pane_id, pid, …


@frozen
class Tagged:
    record: records.Member  # a launched worker: its pane pinned, tagged, its identity written; not yet a member


@frozen
class Member:
    record: records.Member


Entry = Attempt | Task | Folder | Tree | RootAgents | Script | Instructions | Pane | Pinned | Tagged | Member
E = TypeVar("E", Attempt, Task, Folder, Tree, RootAgents, Script, Instructions, Pane, Pinned, Tagged, Member)


@frozen(kw_only=True)
class InFlight:
    """The worker the run was making when it stopped, as far as it got."""

    worker: str | None = None
    pane: str | None = None
    record: records.Member | None = None


@define
class UndoLog:
    entries: list[Entry] = field(factory=list)

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.entries if isinstance(e, kind)]

    def launched(self) -> list[records.Member]:
        return [e.record for e in self.of(Tagged)]

    def members(self) -> list[records.Member]:
        return [e.record for e in self.of(Member)]

    def tagged_panes(self) -> set[str]:
        return {str(record.pane_id) for record in self.launched()}

    def tree(self, worker: str) -> wt.Worktree | None:
        return next((e.tree for e in self.of(Tree) if e.worker == worker), None)

    def in_flight(self) -> InFlight:
        attempts = [(i, e) for i, e in enumerate(self.entries) if isinstance(e, Attempt)]
        if not attempts:
            return InFlight()
        last, attempt = attempts[-1]
        after = self.entries[last + 1:]
        panes = [e.pane for e in after if isinstance(e, Pane)]
        records = [e.record for e in after if isinstance(e, Pinned)]
        return InFlight(worker=attempt.worker, pane=panes[-1] if panes else None,
                        record=records[-1] if records else None)

    def relaunched(self, fresh: records.Member) -> None:
        """A worker's fresh pane (worker.py ``await_started``) takes its old launch's place: later
        placements index launched workers by position."""
        entries = [e for e in self.entries if not (isinstance(e, Tagged) and e.record is fresh)]
        self.entries = [Tagged(fresh) if isinstance(e, Tagged) and e.record.name == fresh.name else e
                        for e in entries]

    def drop(self, entry: Entry) -> None:
        self.entries.remove(entry)

    def forget(self, worker: str, *kinds: type[Entry]) -> None:
        """The run undid these entries of ``worker`` itself (all of them when no kind is named)."""
        self.entries = [e for e in self.entries if not (_worker_of(e) == worker and
                                                        (not kinds or isinstance(e, kinds)))]


def _worker_of(entry: Entry) -> str | None:
    if isinstance(entry, Task):
        return entry.owner
    if isinstance(entry, Pinned | Tagged | Member):
        return entry.record.name
    if isinstance(entry, Instructions):
        return None
    return entry.worker
