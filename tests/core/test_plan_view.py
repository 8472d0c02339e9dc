"""The plan view only groups the effects the planners state (shell/cli/plan_view.py), and every
planner states one on every change step (pure/model.py ``Effect``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from pure import model as m
from pure.omx import effects
from pure.program import changing
from shell.cli.plan_view import changes, count_line, render_changes
from shell.cli.saved_plan import not_as_planned

GOLDENS = Path(__file__).resolve().parents[1] / "goldens"
OK = m.Ack(ok=True)


def _entry(step: m.Step, observation: m.Observation = OK) -> m.Entry:
    return m.Entry(step=step, observation=observation)


def test_the_steps_of_one_thing_make_one_line_with_the_strongest_action_and_each_detail_once() -> None:
    journal = [
        _entry(m.MakeDir(path="/t/workers/worker-3", effect=effects.worker("worker-3", "add"))),
        _entry(m.ReadFile(path="/t/config.json"), m.FileData(content="{}")),
        _entry(m.Run(tool="tmux", args=("split-window",), mutates=True,
                     effect=effects.worker("worker-3", "add", "new pane split from %1 (below)")),
               m.Proc(exit_code=0, stdout="%9\t41\n")),
        _entry(m.WriteFile(path="/t/workers/worker-3/inbox.md", content="x",
                           effect=effects.worker("worker-3", "add", "task #1"))),
        _entry(m.Run(tool="tmux", args=("kill-pane", "-t", "%9"), mutates=True,
                     effect=effects.rolled_back("worker-3")), m.Proc(exit_code=0)),
        _entry(m.RemovePath(path="/t/workers/worker-3", recursive=True, effect=effects.rolled_back("worker-3"))),
    ]
    [line] = changes(journal)
    assert (line.action, line.kind, line.subject, line.steps) == ("add", "worker", "worker-3", [1, 3, 4, 5, 6])
    assert line.detail == "new pane split from %1 (below), task #1, removed again (rolled back)"


def test_details_part_at_commas_outside_parentheses_and_each_part_is_said_once() -> None:
    draining = effects.worker("worker-1", "remove", "draining")
    journal = [_entry(m.WriteFile(path="/t/status.json", content="", effect=draining))] + [
        _entry(m.Run(tool="tmux", args=("kill-pane",), mutates=True, effect=effects.killed("worker-1", pane, pid, "t")),
               m.Proc(exit_code=0)) for pane, pid in (("%4", 41), ("%5", 42), ("%5", 42))]
    [line] = changes(journal)
    assert line.detail == ("draining, pane %4 killed after proof (pid 41 as pinned, tagged t), "
                           "pane %5 killed after proof (pid 42 as pinned, tagged t)")


def test_a_change_step_that_states_nothing_still_gets_a_line() -> None:
    [line] = changes([_entry(m.Run(tool="git", args=("branch", "-D", "x"), mutates=True), m.Proc(exit_code=0))])
    assert (line.action, line.kind, line.subject) == ("change", "step", "git branch -D x")


def test_a_change_the_dry_run_saw_fail_changes_nothing_and_is_left_out() -> None:
    failed = m.Ack(ok=False, error="EACCES")
    said = m.effect("add", "file", "notes")
    assert changes([_entry(m.WriteFile(path="/x/notes", content="", effect=said), failed)]) == []


def test_predicted_debt_is_a_line_of_its_own_worded_once() -> None:
    done = m.Done(outcome=m.Outcome(status="debt"), debt=(m.Debt(kind="tmux_pane", subject="%4", reason="kill_failed"),))
    [line] = changes([], done)
    what, retry = m.DEBT_WORDS["tmux_pane"]
    assert line.action == "debt" and line.detail == f"kept as debt: kill_failed ({what}; {retry})"
    assert count_line([line]) == "Plan: 0 to add, 0 to change, 0 to remove, 1 kept as debt."
    assert render_changes([line])[0].startswith("  ! tmux_pane %4")


def test_lines_come_in_kind_order_then_journal_order() -> None:
    journal = [_entry(m.AppendFile(path="/t/events/e", content="x", effect=effects.EVENT)),
               _entry(m.WriteFile(path="/t/tasks/task-2.json", content="{}", effect=effects.created_task("2", {}))),
               _entry(m.WriteFile(path="/t/workers/worker-1/x", content="", effect=effects.worker("worker-1")))]
    assert [c.kind for c in changes(journal)] == ["worker", "task", "events"]


def test_a_part_of_a_program_states_its_effect_once_for_every_change_step_that_states_none() -> None:
    def part() -> Any:
        yield m.ReadFile(path="/a")
        yield m.WriteFile(path="/a", content="")
        yield m.RemovePath(path="/b", effect=m.effect("remove", "file", "b"))
        return "done"

    said = effects.worker("worker-2", "remove")
    program = changing(said, part())
    steps = [next(program)]
    try:
        while True:
            steps.append(program.send(OK))
    except StopIteration as stop:
        assert stop.value == "done"
    assert [getattr(s, "effect", None) for s in steps] == [None, said, m.effect("remove", "file", "b")]


def test_task_effects_say_what_happened_to_the_task() -> None:
    pending = {"subject": "fix", "status": "pending"}
    claimed = {**pending, "status": "in_progress", "owner": "worker-1", "claim": {"owner": "worker-1"}}
    assert effects.created_task("3", {**pending, "owner": "worker-2"}).detail == "created: fix (owner worker-2)"
    assert effects.changed_task("3", pending, claimed).detail == "claimed by worker-1, status pending → in_progress"
    assert effects.changed_task("3", claimed, pending).detail == \
        "released (owner worker-1 → none), status in_progress → pending"
    assert effects.task_file("/t/tasks/task-3.json", json.dumps(pending), None) == m.effect(
        "remove", "task", "task 3", "removed")
    assert effects.task_file("/t/config.json", None, "{}") is None


def test_config_effects_name_the_generation_and_the_members() -> None:
    before = json.dumps({"config_generation": 4, "workers": [{"name": "worker-1"}]})
    after = json.dumps({"config_generation": 5, "workers": [{"name": "worker-1"}, {"name": "worker-2"}]})
    assert effects.config(before, after).detail == "generation 4 → 5, workers 1 → 2"


def test_changes_of_one_value_chain_into_one_from_the_first_to_the_last() -> None:
    states = [json.dumps({"config_generation": g, "workers": [{}] * g}) for g in (1, 2, 3, 4)]
    journal = [_entry(m.WriteFile(path="/t/config.json", content=after, effect=effects.config(before, after)))
               for before, after in itertools.pairwise(states)]
    [line] = changes(journal)
    assert line.detail == "generation 1 → 4, workers 1 → 4"


def _mutations(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [s for v in value for s in _mutations(v)]
    if not isinstance(value, dict):
        return []
    op = value.get("op")
    if op == "run" and value.get("mutates") or op in ("write_file", "append_file", "remove", "mkdir") or (
            op == "store" and not str(value.get("action")).startswith(("get", "list", "read", "load"))):
        return [value]
    return [s for v in value.values() for s in _mutations(v)]


def test_every_change_step_of_every_golden_states_its_effect() -> None:
    unstated = []
    total = 0
    for path in sorted(GOLDENS.rglob("*.json")):
        found = _mutations(json.loads(path.read_text()))
        total += len(found)
        unstated += [f"{path.relative_to(GOLDENS)}: {json.dumps(s)[:160]}" for s in found if "effect" not in s]
    assert total > 1000, total  # the corpus holds the planners' change steps
    assert not unstated, "\n".join(unstated[:20])


def test_a_saved_plan_run_says_where_its_changes_differ_from_the_plan(capsys: Any) -> None:
    split = m.Run(tool="tmux", args=("split-window",), mutates=True,
                  effect=effects.worker("worker-2", "add", "new pane split from %0 (below)"))
    config = m.WriteFile(path="/t/config.json", content="{}", effect=m.effect("change", "config", "config.json",
                                                                              "workers 1 → 2"))
    planned = [_entry(split, m.Proc(exit_code=0)), _entry(config)]
    assert not_as_planned(planned, planned) == {}
    rolled_back = [_entry(split, m.Proc(exit_code=0)),
                   _entry(m.RemovePath(path="/t/workers/worker-2", effect=effects.rolled_back("worker-2")))]
    assert not_as_planned(planned, rolled_back) == {"changesNotAsPlanned": [
        "planned, not made: add worker worker-2: new pane split from %0 (below)",
        "planned, not made: change config config.json: workers 1 → 2",
        "made, not planned: add worker worker-2: new pane split from %0 (below), removed again (rolled back)"]}
    assert "the run changed otherwise than its plan said" in capsys.readouterr().err
