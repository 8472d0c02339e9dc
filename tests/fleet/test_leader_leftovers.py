"""A leader pane a killed run made and never recorded is removed by the next run that makes the team's
leader (pure/fleet/leader.py, ``leftover_leaders``) — but only a pane made after that run's intent:
an older pane that wrote its own pin after the team's folder was made again (a process
``respawn-pane`` started in it) is not the killed run's, and is left alone."""

from __future__ import annotations

import json
from typing import Any

from pure import model as m
from pure.fleet.leader import leader_intent, leftover_leaders
from pure.omx import startup_script, strays

PIN_DIR = "/state/team/alpha"
LEADER = startup_script.self_pinned_shell_command(PIN_DIR)


def _sweep(intent: dict[str, Any] | None, panes: dict[str, int], pins: dict[str, int]) -> tuple[list[str], Any]:
    """Drive ``leftover_leaders`` against these live leader panes (pane → pid) and the pins in the
    folder; the panes it killed and the intent it wrote for its own pane."""
    live = dict(panes)
    killed: list[str] = []
    written: Any = None
    program = leftover_leaders(PIN_DIR)
    answer: Any = None
    try:
        while True:
            step = program.send(answer)
            if isinstance(step, m.ReadFile) and step.path == leader_intent(PIN_DIR):
                answer = m.FileData(content=None if intent is None else json.dumps(intent))
            elif isinstance(step, m.ReadFile):
                pane = "%" + step.path.rsplit("pane-", 1)[1].removesuffix(".pid")
                answer = m.FileData(content=f"{pins[pane]}\n" if pane in pins else None)
            elif isinstance(step, m.WriteFile):
                written, answer = json.loads(step.content), m.Ack(ok=True)
            elif isinstance(step, m.Run) and step.args[0] == "kill-pane":
                killed.append(step.args[-1])
                live.pop(step.args[-1])
                answer = m.Proc(exit_code=0)
            elif isinstance(step, m.Run) and step.args[0] == "list-panes":
                started = step.args[-1] == strays.STRAY_FORMAT
                rows = [f"{pane}\t0\t{pid}\t4242\t1790000000" + (f"\t{LEADER}" if started else "")
                        for pane, pid in live.items()]
                answer = m.Proc(exit_code=0, stdout="".join(row + "\n" for row in rows))
            else:
                raise AssertionError(f"unexpected step {step!r}")
    except StopIteration:
        return killed, written


def test_a_pane_made_after_the_intent_and_pinned_by_itself_is_removed() -> None:
    killed, written = _sweep({"kind": "leader", "new_panes_from": "%6"}, {"%6": 60}, {"%6": 60})
    assert killed == ["%6"]
    assert written == {"kind": "leader", "new_panes_from": "%7"}  # this run's own intent, after the listing


def test_an_older_pane_that_pinned_itself_later_is_left_alone() -> None:
    killed, _ = _sweep({"kind": "leader", "new_panes_from": "%4"}, {"%3": 30, "%6": 60}, {"%3": 30, "%6": 60})
    assert killed == ["%6"]  # %3 existed before the intent: its pin is a respawned process's


def test_without_an_intent_no_pane_is_taken_for_a_leftover() -> None:
    killed, written = _sweep(None, {"%6": 60}, {"%6": 60})
    assert killed == []
    assert written == {"kind": "leader", "new_panes_from": "%7"}


def test_a_pane_whose_process_is_not_the_pinned_one_is_left_alone() -> None:
    killed, _ = _sweep({"kind": "leader", "new_panes_from": "%6"}, {"%6": 61}, {"%6": 60})
    assert killed == []


def test_the_first_pane_of_a_new_server_can_be_a_leftover() -> None:
    """A run that made the server's first pane found no server: every pane is new to it."""
    killed, _ = _sweep({"kind": "leader", "new_panes_from": "%0"}, {"%0": 50}, {"%0": 50})
    assert killed == ["%0"]
