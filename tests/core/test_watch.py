"""``team watch``'s transitions (shell/cli/watch.py): a hook fires only on a change into idle or exited
of a worker seen before."""

from __future__ import annotations

from shell.cli.watch import transitions, worker_states


def test_states_and_transitions() -> None:
    result = {"panes": [{"role": "leader", "name": "leader", "verdict": "live", "screen": None},
                        {"role": "worker", "name": "worker-1", "verdict": "live", "screen": "busy"},
                        {"role": "worker", "name": "worker-2", "verdict": "absent"},
                        {"role": "worker", "name": "worker-3", "verdict": "live", "screen": None}]}
    assert {w: s for w, (s, _) in worker_states(result).items()} == {"worker-1": "busy", "worker-2": "exited"}
    before = {"worker-1": "busy", "worker-2": "idle", "worker-3": "ready"}
    now = {"worker-1": "idle", "worker-2": "exited", "worker-3": "busy", "worker-4": "idle"}
    # every change is a line; hooks run only for the changes into EVENTS (shell/cli/watch.py)
    assert transitions(before, now) == [("worker-1", "busy", "idle"), ("worker-2", "idle", "exited"),
                                        ("worker-3", "ready", "busy")]
    assert transitions(now, now) == []
    assert transitions({}, now) == []  # the first snapshot only sets what was seen
