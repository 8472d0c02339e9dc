"""Decision goldens for every branch of the teardown primitive (oh-my-codex §4.5).

Each golden holds (operation, request, journal, decision). A runner in any language checks that
``decide(request, journal[:i])`` is ``Next([journal[i].step])`` for every i and that
``decide(request, journal)`` is ``decision``.
"""

from __future__ import annotations

from typing import Any

import pytest

from pure import model as m
from pure import ops, wire
from pure import tmux as t
from pure.program import decide
from tests.harness import Goldens, err, ok, pane_rows

OWNER = "team:alpha"
L = t.LIST_PANES


def target(pane: str, pid: int | None) -> t.TeardownTarget:
    return t.TeardownTarget(pane_id=pane, pid=pid)


def live(*rows: tuple[str, int]) -> m.Proc:
    return ok(pane_rows(*((p, 0, pid) for p, pid in rows)))


OWNED = ok(OWNER + "\n")
KILLED = ok()

# name -> (request, answers to the tmux calls in order, expected fates, expected tmux verbs)
CASES: dict[str, tuple[t.TeardownRequest, list[m.Proc], list[str], list[str]]] = {
    "killed_after_full_proof": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), OWNED, live(("%13", 513)), KILLED, ok("")],
        ["killed"], ["L", "S", "L", "K", "L"]),
    "absent_at_first_proof_needs_no_kill": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [ok("")], ["gone"], ["L"]),
    "dead_at_first_proof_needs_no_kill": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [ok(pane_rows(("%13", 1, 513)))], ["gone"], ["L"]),
    "first_proof_query_failed_stops": (
        t.TeardownRequest(targets=(target("%13", 513), target("%14", 514)), owner_id=OWNER),
        [err(1, "server exited unexpectedly")], ["proof_unavailable", "not_attempted"], ["L"]),
    "first_proof_malformed_stops": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [ok("garbage\n")], ["proof_unavailable"], ["L"]),
    "pid_reused_at_first_proof": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 999))], ["pid_changed"], ["L"]),
    "unpinned_pid_refuses": (
        t.TeardownRequest(targets=(target("%13", None),), owner_id=OWNER),
        [live(("%13", 513))], ["pid_changed"], ["L"]),
    "owner_of_another_team_refuses": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), ok("team:other\n")], ["pid_changed"], ["L", "S"]),
    "owner_missing_refuses": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), ok("")], ["pid_changed"], ["L", "S"]),
    "owner_unreadable_refuses": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), err(2, "owner unavailable")], ["pid_changed"], ["L", "S"]),
    "no_owner_configured_refuses": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=None),
        [live(("%13", 513)), OWNED], ["pid_changed"], ["L", "S"]),
    "gone_at_final_proof": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), OWNED, ok("")], ["gone"], ["L", "S", "L"]),
    "final_proof_unavailable": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), OWNED, err(1, "lost")], ["proof_unavailable"], ["L", "S", "L"]),
    "pid_reused_between_proofs": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), OWNED, live(("%13", 777))], ["pid_changed"], ["L", "S", "L"]),
    "kill_fails": (
        t.TeardownRequest(targets=(target("%13", 513), target("%14", 514)), owner_id=OWNER),
        [live(("%13", 513)), OWNED, live(("%13", 513)), err(1, "kill refused")],
        ["kill_failed", "not_attempted"], ["L", "S", "L", "K"]),
    "still_live_after_kill": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), OWNED, live(("%13", 513)), KILLED, live(("%13", 513))],
        ["kill_failed"], ["L", "S", "L", "K", "L"]),
    "recycled_after_kill_is_still_a_failure": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER),
        [live(("%13", 513)), OWNED, live(("%13", 513)), KILLED, live(("%13", 601))],
        ["kill_failed"], ["L", "S", "L", "K", "L"]),
    "proof_lost_after_kill": (
        t.TeardownRequest(targets=(target("%13", 513), target("%14", 514)), owner_id=OWNER),
        [live(("%13", 513), ("%14", 514)), OWNED, live(("%13", 513), ("%14", 514)), KILLED, err(1, "lost")],
        ["proof_unavailable", "not_attempted"], ["L", "S", "L", "K", "L"]),
    "two_panes_both_killed": (
        t.TeardownRequest(targets=(target("%13", 513), target("%14", 514)), owner_id=OWNER),
        [live(("%13", 513), ("%14", 514)), OWNED, live(("%13", 513), ("%14", 514)), KILLED, live(("%14", 514)),
         live(("%14", 514)), OWNED, live(("%14", 514)), KILLED, ok("")],
        ["killed", "killed"], ["L", "S", "L", "K", "L", "L", "S", "L", "K", "L"]),
    "leader_hud_invalid_and_duplicates_excluded": (
        t.TeardownRequest(targets=(target("%1", 501), target("%2", 502), target("13", 513), target("%14", 514),
                                   target("%14", 514)), owner_id=OWNER, leader_pane_id="%1", hud_pane_id="%2"),
        [ok("")], ["gone"], ["L"]),
    "without_authorization_no_owner_read": (
        t.TeardownRequest(targets=(target("%13", 513),), owner_id=OWNER, authorize=False),
        [live(("%13", 513)), live(("%13", 513)), KILLED, ok("")], ["killed"], ["L", "L", "K", "L"]),
}

VERB = {"list-panes": "L", "show-option": "S", "kill-pane": "K"}


def run_case(req: t.TeardownRequest, answers: list[m.Proc]) -> tuple[list[m.Entry], m.Done]:
    op = ops.get("tmux.teardown")
    assert op is not None
    journal: list[m.Entry] = []
    queue = list(answers)
    while True:
        decision = decide(lambda: op.program(req), journal)
        if isinstance(decision, m.Done):
            return journal, decision
        (step,) = decision.steps
        if isinstance(step, m.Run):
            assert queue, f"unexpected extra tmux call {step.args}"
            observation: m.Observation = queue.pop(0)
        else:
            observation = m.Ack(ok=True)
        journal.append(m.Entry(step=step, observation=observation))


@pytest.mark.parametrize("name", sorted(CASES))
def test_teardown_branch(name: str, goldens: Goldens) -> None:
    req, answers, fates, verbs = CASES[name]
    journal, done = run_case(req, answers)
    result: Any = done.outcome.result
    assert [r["fate"] for r in result["results"]] == fates
    assert [VERB[e.step.args[0]] for e in journal if isinstance(e.step, m.Run)] == verbs
    kills = [e.step for e in journal if isinstance(e.step, m.Run) and e.step.args[0] == "kill-pane"]
    for kill in kills:  # every kill is immediately preceded by L, S, L (or L, L without authorization)
        index = next(i for i, e in enumerate(journal) if e.step is kill)
        before = [VERB[e.step.args[0]] for e in journal[:index] if isinstance(e.step, m.Run)][-3:]
        assert before[-1] == "L" and (before[-2] == "S" or not req.authorize)
    goldens.check(f"tmux/teardown/{name}", {
        "kind": "decision",
        "operation": "tmux.teardown",
        "request": wire.unstructure(req),
        "journal": [wire.unstructure(e) for e in journal],
        "decision": wire.unstructure(done),
    })


def test_sleep_after_kill_scales_with_panes() -> None:
    assert t.kill_settle_ms(1) == 2000
    assert t.kill_settle_ms(10) == 200
    assert t.kill_settle_ms(50) == 100
