"""The scale-up's undo log (pure/omx/scale_up/undo.py): what the rollback reads of a run."""

from __future__ import annotations

from pure.omx import worktree as wt
from pure.omx.records import Member
from pure.omx.scale_up import undo


def _record(name: str, pane: str, pid: int = 100) -> Member:
    return Member(name=name, index=int(name.removeprefix("worker-")), pane_id=pane, pid=pid)


def test_the_worker_in_flight_is_what_follows_the_last_attempt() -> None:
    log = undo.UndoLog()
    assert log.in_flight() == undo.InFlight()
    log.add(undo.Attempt("worker-1"))
    log.add(undo.Folder("worker-1"))
    log.add(undo.Pane("worker-1", "%1"))
    one = _record("worker-1", "%1")
    log.add(undo.Pinned(one))
    log.add(undo.Tagged(one))
    assert log.in_flight() == undo.InFlight(worker="worker-1", pane="%1", record=one)
    log.add(undo.Attempt("worker-2"))  # split but not answered yet: no pane of its own to name
    assert log.in_flight() == undo.InFlight(worker="worker-2")
    log.add(undo.Pane("worker-2", "%2"))
    assert log.in_flight() == undo.InFlight(worker="worker-2", pane="%2")
    assert log.launched() == [one] and log.tagged_panes() == {"%1"} and log.members() == []


def test_a_fresh_pane_takes_its_old_launch_s_place() -> None:
    log = undo.UndoLog()
    old_1, two = _record("worker-1", "%1"), _record("worker-2", "%2")
    for record in (old_1, two):
        log.add(undo.Attempt(record.name))
        log.add(undo.Pinned(record))
        log.add(undo.Tagged(record))
    fresh_1 = _record("worker-1", "%3", 300)
    log.add(undo.Attempt("worker-1"))
    log.add(undo.Pinned(fresh_1))
    log.add(undo.Tagged(fresh_1))
    assert log.launched() == [old_1, two, fresh_1]
    log.relaunched(fresh_1)
    assert log.launched() == [fresh_1, two]  # placements index launched workers by position
    assert log.tagged_panes() == {"%3", "%2"}


def test_forgetting_a_worker_removed_alone() -> None:
    log = undo.UndoLog()
    tree = wt.Worktree(repo_root="/r", path="/r/.omx/wt/w1", branch="pf/worker-1", detached=False, created=True,
                       branch_created=True)
    task = undo.Task("7", "worker-1")
    other = undo.Task("8", "worker-2")
    for entry in (task, other, undo.Attempt("worker-1"), undo.Folder("worker-1"), undo.Tree("worker-1", tree),
                  undo.Script("worker-1", "/s/worker-1-startup.sh"), undo.Instructions("/t/worker-agents.md"),
                  undo.Folder("worker-2")):
        log.add(entry)
    assert log.tree("worker-1") == tree
    log.drop(task)
    log.forget("worker-1", undo.Tree)  # only its worktree, once git removed it
    assert log.tree("worker-1") is None and log.of(undo.Folder) == [undo.Folder("worker-1"), undo.Folder("worker-2")]
    log.forget("worker-1")
    assert log.entries == [other, undo.Instructions("/t/worker-agents.md"), undo.Folder("worker-2")]
    assert log.in_flight() == undo.InFlight()
