"""The dry-run executor: real reads, predicted changes, and nothing outside the process changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pure import model as m
from pure import tmux as t
from shell.run.dryrun import DryRunExecutor
from shell.run.executor import Executor
from tests.conftest import TmuxServer


def test_unreadable_pane_table_stays_unreadable() -> None:
    dry = DryRunExecutor(Executor(env=dict(os.environ), tmux_socket="pf-no-such-server-x"))
    answer = dry.execute(t.list_panes_step())
    assert isinstance(answer, m.Proc) and answer.exit_code != 0
    assert t.verdict_from_answer("%0", answer).reason == "query_failed"
    assert dry.execute(t.list_panes_step()) == answer


@pytest.mark.tmux
def test_predicted_tmux_world(tmux_server: TmuxServer) -> None:
    leader = tmux_server.new_session("lead")
    before = tmux_server.panes()
    dry = DryRunExecutor(Executor(env=dict(os.environ), tmux_socket=tmux_server.name))
    split = dry.execute(t.tmux("split-window", "-v", "-t", leader, "-d", "-P", "-F", "#{pane_id}", "sh", mutates=True))
    assert isinstance(split, m.Proc)
    new = split.stdout.strip()
    assert t.is_pane_id(new) and new not in before
    listing = dry.execute(t.list_panes_step())
    assert isinstance(listing, m.Proc)
    assert t.verdict_from_answer(new, listing).live and t.verdict_from_answer(leader, listing).live
    assert dry.execute(t.tmux("capture-pane", "-t", new, "-p")) == m.Proc(exit_code=0)  # not asked of tmux
    dry.execute(t.tmux("set-option", "-p", "-t", new, t.OWNER_OPTION, "team:a", mutates=True))
    owner = dry.execute(t.show_owner_step(new))
    assert isinstance(owner, m.Proc) and owner.stdout.strip() == "team:a"
    dry.execute(t.tmux("kill-pane", "-t", leader, mutates=True))
    after = dry.execute(t.list_panes_step())
    assert isinstance(after, m.Proc) and t.verdict_from_answer(leader, after).reason == "absent"
    assert tmux_server.panes() == before and tmux_server.owner(leader) == ""  # nothing real changed


def test_file_overlay(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    dry = DryRunExecutor(Executor(env=dict(os.environ)))
    assert dry.execute(m.ReadFile(path=str(real))) == m.FileData(content="old")
    dry.execute(m.WriteFile(path=str(real), content="new"))
    dry.execute(m.WriteFile(path=str(tmp_path / "d" / "x"), content="x"))
    assert dry.execute(m.ReadFile(path=str(real))) == m.FileData(content="new")
    listing = dry.execute(m.ListDir(path=str(tmp_path / "d")))
    assert listing == m.Listing(names=("x",))
    dry.execute(m.RemovePath(path=str(tmp_path), recursive=True))
    assert dry.execute(m.ReadFile(path=str(real))) == m.FileData(content=None)
    assert dry.execute(m.Stat(path=str(real))) == m.Value(value="absent")
    assert real.read_text() == "old" and not (tmp_path / "d").exists()  # nothing real changed
    lock = dry.execute(m.AcquireLock(path=str(tmp_path / "lock"), timeout_ms=10, retry_ms=1))
    assert lock == m.Ack(ok=True) and not (tmp_path / "lock").exists()
