"""Decision goldens for every branch of the teardown primitive (docs/tmux-proofs.md, "Teardown").

Each golden holds (operation, request, journal, decision) and a one-line description. A runner in
any language checks that ``decide(request, journal[:i])`` is ``Next([journal[i].step])`` for every
i before the first entry that does not fit and that ``decide(request, journal)`` is ``decision``
(``docs/goldens.md``). ``informative`` holds prose derived from the decision (``shell/cli/render.py``);
it is never compared by a runner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from pure import model as m
from pure import operations, wire
from pure import tmux as t
from pure.program import Program, decide
from shell.cli.render import describe_decide_problem
from tests.harness import Goldens, err, ok, pane_rows

OWNER = "team:alpha"
L = t.LIST_PANES


def live(*rows: tuple[str, int]) -> m.Proc:
    return ok(pane_rows(*((p, 0, pid) for p, pid in rows)))


# two tmux servers, as ``#{pid}`` and ``#{start_time}`` name them: the one a pane was pinned on, and the
# one the same socket answers for after a restart (docs/tmux-proofs.md, "The tmux server")
PINNED, RESTARTED = ("4242", "1790000000"), ("5151", "1790000600")


def on(server: tuple[str, str], *rows: tuple[str, int]) -> m.Proc:
    """A pane table whose rows name ``server``."""
    return ok("".join(f"{p}\t0\t{pid}\t{server[0]}\t{server[1]}\n" for p, pid in rows))


def pinned_on(server: tuple[str, str], pane: str, pid: int, **fields: Any) -> dict[str, Any]:
    """A request for one target pinned on ``server``."""
    raw = request((pane, pid), **fields)
    raw["targets"][0]["server"] = "@".join(server)
    return raw


def request(*targets: tuple[str, int | None], full: bool = True, **fields: Any) -> dict[str, Any]:
    """A wire request; ``full`` writes every field (defaults included), else only those given."""
    raw: dict[str, Any] = {"targets": [{"pane_id": pane, "pid": pid} for pane, pid in targets], **fields}
    if full:
        raw = wire.unstructure(wire.structure({"owner_id": OWNER, **raw}, t.TeardownRequest).unwrap())
    return raw


OWNED = ok(OWNER + "\n")
KILLED = ok()


class Case(NamedTuple):
    description: str
    request: dict[str, Any]
    answers: list[m.Proc]  # the answers to the tmux calls in order
    fates: list[str]
    verbs: list[str]


def _killed(pane: str, pid: int, rest: tuple[tuple[str, int], ...] = ()) -> list[m.Proc]:
    """The five answers of one full proof-and-kill of ``pane`` while ``rest`` stays live."""
    table = live((pane, pid), *rest)
    return [table, OWNED, table, KILLED, live(*rest)]


MANY = tuple((f"%{n}", 500 + n) for n in range(30, 51))  # 21 panes: 2000 // 21 = 95, so the bound is 100


def _unkillable(pane: str, pid: int, pauses: int, rest: tuple[tuple[str, int], ...] = ()) -> list[m.Proc]:
    """A full proof and a kill of ``pane`` after which it stays live with its pid through the
    ``pauses`` pauses of the back-off (one proof right after the kill and one after each pause)."""
    table = live((pane, pid), *rest)
    return [table, OWNED, table, KILLED] + [table] * (1 + pauses)

CASES: dict[str, Case] = {
    "killed_after_full_proof": Case(
        "L, S, L, kill-pane, L: the pane is proven gone right after the kill, with no pause",
        request(("%13", 513)), _killed("%13", 513), ["killed"], ["L", "S", "L", "K", "L"]),
    "absent_at_first_proof_needs_no_kill": Case(
        "a pane missing from the first snapshot is resolved without a kill",
        request(("%13", 513)), [ok("")], ["gone"], ["L"]),
    "dead_at_first_proof_needs_no_kill": Case(
        "a pane listed dead in the first snapshot is resolved without a kill",
        request(("%13", 513)), [ok(pane_rows(("%13", 1, 513)))], ["gone"], ["L"]),
    "first_proof_query_failed_stops": Case(
        "list-panes fails: the pane is unresolved and the loop stops (later panes not attempted)",
        request(("%13", 513), ("%14", 514)), [err(1, "server exited unexpectedly")],
        ["proof_unavailable", "not_attempted"], ["L"]),
    "first_proof_malformed_stops": Case(
        "a snapshot that is not a pane table proves nothing",
        request(("%13", 513)), [ok("garbage\n")], ["proof_unavailable"], ["L"]),
    "pid_reused_at_first_proof": Case(
        "the pane id is live with another pid than the pinned one: refused",
        request(("%13", 513)), [live(("%13", 999))], ["pid_changed"], ["L"]),
    "unpinned_pid_refuses": Case(
        "no pid was pinned (null): the kill is refused after the first proof",
        request(("%13", None)), [live(("%13", 513))], ["pid_changed"], ["L"]),
    "nonpositive_pid_refuses": Case(
        "a pinned pid of 0 is not a pid: refused like an unpinned one",
        request(("%13", 0)), [live(("%13", 513))], ["pid_changed"], ["L"]),
    "owner_of_another_team_refuses": Case(
        "the owner tag names another team: refused",
        request(("%13", 513)), [live(("%13", 513)), ok("team:other\n")], ["pid_changed"], ["L", "S"]),
    "owner_missing_refuses": Case(
        "an untagged pane (empty show-option answer) is not ours: refused",
        request(("%13", 513)), [live(("%13", 513)), ok("")], ["pid_changed"], ["L", "S"]),
    "owner_unreadable_refuses": Case(
        "show-option fails: the owner is unknown, refused",
        request(("%13", 513)), [live(("%13", 513)), err(2, "owner unavailable")], ["pid_changed"], ["L", "S"]),
    "owner_read_did_not_start_refuses": Case(
        "show-option could not be started (exit_code null): an owner error, refused",
        request(("%13", 513)), [live(("%13", 513)), m.Proc(exit_code=None, stderr="tmux: command not found")],
        ["pid_changed"], ["L", "S"]),
    "no_owner_configured_refuses": Case(
        "owner_id null: no tag can authorise the kill (the tag is still read)",
        request(("%13", 513), owner_id=None), [live(("%13", 513)), OWNED], ["pid_changed"], ["L", "S"]),
    "empty_owner_id_refuses": Case(
        "owner_id empty is no owner: refused even though the pane's tag is empty too",
        request(("%13", 513), owner_id=""), [live(("%13", 513)), ok("")], ["pid_changed"], ["L", "S"]),
    "owner_tag_padded_with_ascii_whitespace_accepted": Case(
        "the tag is trimmed of tab, space, CR and LF before it is compared",
        request(("%13", 513)), [live(("%13", 513)), ok("\t team:alpha \r\n"), live(("%13", 513)), KILLED, ok("")],
        ["killed"], ["L", "S", "L", "K", "L"]),
    "owner_tag_padded_with_unicode_spaces_accepted": Case(
        "no-break space, ideographic space, line separator and BOM are in the trimmed set",
        request(("%13", 513)), [live(("%13", 513)), ok("\ufeff\u00a0team:alpha\u3000\u2028\n"), live(("%13", 513)),
                                KILLED, ok("")],
        ["killed"], ["L", "S", "L", "K", "L"]),
    "owner_tag_with_unit_separator_refuses": Case(
        "U+001F is not in the trimmed set: the tag is not the team's, refused",
        request(("%13", 513)), [live(("%13", 513)), ok("team:alpha\u001f\n")], ["pid_changed"], ["L", "S"]),
    "owner_tag_with_next_line_refuses": Case(
        "U+0085 (NEXT LINE) is not in the trimmed set: refused",
        request(("%13", 513)), [live(("%13", 513)), ok("\u0085team:alpha\n")], ["pid_changed"], ["L", "S"]),
    "gone_at_final_proof": Case(
        "the pane disappears between the owner read and the final proof: resolved, no kill",
        request(("%13", 513)), [live(("%13", 513)), OWNED, ok("")], ["gone"], ["L", "S", "L"]),
    "final_proof_unavailable": Case(
        "the final proof fails: unresolved, no kill",
        request(("%13", 513)), [live(("%13", 513)), OWNED, err(1, "lost")], ["proof_unavailable"], ["L", "S", "L"]),
    "pid_reused_between_proofs": Case(
        "the pid changes between the first and the final proof: refused, no kill",
        request(("%13", 513)), [live(("%13", 513)), OWNED, live(("%13", 777))], ["pid_changed"], ["L", "S", "L"]),
    "kill_fails": Case(
        "kill-pane fails: unresolved and the loop stops",
        request(("%13", 513), ("%14", 514)), [live(("%13", 513)), OWNED, live(("%13", 513)), err(1, "kill refused")],
        ["kill_failed", "not_attempted"], ["L", "S", "L", "K"]),
    "kill_fails_without_stderr": Case(
        "kill-pane exits 1 with nothing on stderr: the problem carries an empty stderr",
        request(("%13", 513)), [live(("%13", 513)), OWNED, live(("%13", 513)), err(1, "")],
        ["kill_failed"], ["L", "S", "L", "K"]),
    "kill_fails_with_padded_stderr": Case(
        "kill-pane's stderr is trimmed (inner whitespace kept)",
        request(("%13", 513)), [live(("%13", 513)), OWNED, live(("%13", 513)), err(1, " \n can't  kill \t\r\n")],
        ["kill_failed"], ["L", "S", "L", "K"]),
    "kill_did_not_start": Case(
        "kill-pane could not be started (exit_code null, empty stderr)",
        request(("%13", 513)), [live(("%13", 513)), OWNED, live(("%13", 513)), m.Proc(exit_code=None)],
        ["kill_failed"], ["L", "S", "L", "K"]),
    "still_live_after_kill": Case(
        "the pane stays live with its pid after kill-pane and after each pause of the back-off "
        "(50, 100, 200, 400, 800, 450 ms: the 2000 ms bound): a failed kill",
        request(("%13", 513)), _unkillable("%13", 513, 6), ["kill_failed"], ["L", "S", "L", "K"] + ["L"] * 7),
    "gone_after_a_pause": Case(
        "still live with its pid right after kill-pane, gone after the first 50 ms pause: killed",
        request(("%13", 513)), _unkillable("%13", 513, 0) + [ok("")], ["killed"], ["L", "S", "L", "K", "L", "L"]),
    "recycled_after_kill_is_still_a_failure": Case(
        "the id is live again (another pid) after the kill: still a failed kill, never a success",
        request(("%13", 513)), [live(("%13", 513)), OWNED, live(("%13", 513)), KILLED, live(("%13", 601))],
        ["kill_failed"], ["L", "S", "L", "K", "L"]),
    "dead_after_kill_is_killed": Case(
        "the pane is listed dead after the kill: that proves it gone",
        request(("%13", 513)), [live(("%13", 513)), OWNED, live(("%13", 513)), KILLED, ok(pane_rows(("%13", 1, 513)))],
        ["killed"], ["L", "S", "L", "K", "L"]),
    "proof_lost_after_kill": Case(
        "the proof after the kill fails: unresolved, and the next pane is not attempted",
        request(("%13", 513), ("%14", 514)),
        [live(("%13", 513), ("%14", 514)), OWNED, live(("%13", 513), ("%14", 514)), KILLED, err(1, "lost")],
        ["proof_unavailable", "not_attempted"], ["L", "S", "L", "K", "L"]),
    "two_panes_both_killed": Case(
        "two panes, each with its own L, S, L, kill, L",
        request(("%13", 513), ("%14", 514)),
        _killed("%13", 513, (("%14", 514),)) + _killed("%14", 514),
        ["killed", "killed"], ["L", "S", "L", "K", "L", "L", "S", "L", "K", "L"]),
    "three_panes_all_killed": Case(
        "three panes: the bound is floor(2000 / 3) = 666 ms, the last one's back-off 50, 100, 200, 316 ms",
        request(("%13", 513), ("%14", 514), ("%15", 515)),
        _killed("%13", 513, (("%14", 514), ("%15", 515))) + _killed("%14", 514, (("%15", 515),))
        + _unkillable("%15", 515, 4),
        ["killed", "killed", "kill_failed"], ["L", "S", "L", "K", "L"] * 2 + ["L", "S", "L", "K"] + ["L"] * 5),
    "three_panes_second_refused_stops": Case(
        "the first pane is killed, the second's pid changed: it is refused and the third not attempted",
        request(("%13", 513), ("%14", 514), ("%15", 515)),
        _killed("%13", 513, (("%14", 999), ("%15", 515))) + [live(("%14", 999), ("%15", 515))],
        ["killed", "pid_changed", "not_attempted"], ["L", "S", "L", "K", "L", "L"]),
    "settle_pause_floor_is_100_ms": Case(
        "21 panes: floor(2000 / 21) = 95, so the bound is the 100 ms floor: a back-off of 50, 50 ms",
        request(*MANY), _unkillable(*MANY[0], 2, MANY[1:]), ["kill_failed"] + ["not_attempted"] * 20,
        ["L", "S", "L", "K", "L", "L", "L"]),
    "settle_pause_counts_targets_after_exclusions": Case(
        "four targets, two excluded (leader, no %): n = 2, so the bound is 1000 ms: 50, 100, 200, 400, 250",
        request(("%1", 501), ("%13", 513), ("13", 513), ("%14", 514), leader_pane_id="%1"),
        _unkillable("%13", 513, 5), ["kill_failed", "not_attempted"], ["L", "S", "L", "K"] + ["L"] * 6),
    "leader_hud_invalid_and_duplicates_excluded": Case(
        "leader, HUD, a target without % and a repeated target are excluded before the loop",
        request(("%1", 501), ("%2", 502), ("13", 513), ("%14", 514), ("%14", 514), leader_pane_id="%1",
                hud_pane_id="%2"),
        [ok("")], ["gone"], ["L"]),
    "percent_abc_is_kept_and_refused": Case(
        "%abc starts with %, so it is not excluded: its proof refuses it (invalid_pane_id) without asking tmux",
        request(("%abc", 513), ("%14", 514)), [], ["proof_unavailable", "not_attempted"], []),
    "percent_13_newline_is_kept_and_refused": Case(
        "'%13' followed by a newline is not a pane id: kept, refused as invalid_pane_id, no tmux call",
        request(("%13\n", 513)), [], ["proof_unavailable"], []),
    "empty_target_list": Case(
        "nothing to tear down: ok at once, no call",
        request(), [], [], []),
    "query_failed_without_stderr": Case(
        "list-panes exits 1 with an empty stderr",
        request(("%13", 513)), [err(1, "")], ["proof_unavailable"], ["L"]),
    "query_failed_with_padded_stderr": Case(
        "list-panes' stderr is trimmed before it is kept",
        request(("%13", 513)), [err(1, "\n  no server running on /tmp/tmux-0/x \t\n")], ["proof_unavailable"], ["L"]),
    "list_panes_did_not_start": Case(
        "list-panes could not be started or timed out (exit_code null): query_failed",
        request(("%13", 513)), [m.Proc(exit_code=None, stderr="tmux timed out after 10 s: list-panes -a")],
        ["proof_unavailable"], ["L"]),
    "without_authorization_no_owner_read": Case(
        "authorize false: L, L, kill-pane, L (no owner read)",
        request(("%13", 513), authorize=False), [live(("%13", 513)), live(("%13", 513)), KILLED, ok("")],
        ["killed"], ["L", "L", "K", "L"]),
    "request_fields_omitted": Case(
        "only targets given: authorize defaults to true and owner_id to null, so the owner check refuses",
        request(("%13", 513), full=False), [live(("%13", 513)), OWNED], ["pid_changed"], ["L", "S"]),
    "request_authorize_false_owner_omitted": Case(
        "authorize false with owner_id omitted: no owner read, the pane is killed",
        request(("%13", 513), full=False, authorize=False), [live(("%13", 513)), live(("%13", 513)), KILLED, ok("")],
        ["killed"], ["L", "L", "K", "L"]),
    "killed_on_its_pinned_server": Case(
        "a pane pinned on a tmux server is proven, killed and proven gone through listings of that server",
        pinned_on(PINNED, "%13", 513), [on(PINNED, ("%13", 513)), OWNED, on(PINNED, ("%13", 513)), KILLED,
                                        on(PINNED)], ["killed"], ["L", "S", "L", "K", "L"]),
    "server_replaced_is_gone_without_a_kill": Case(
        "the socket answers for another server (restarted), listing a pane with the same id and pid: not "
        "the pinned pane, which is gone with its server; nothing is asked of the pane, nothing killed",
        pinned_on(PINNED, "%13", 513), [on(RESTARTED, ("%13", 513))], ["gone"], ["L"]),
    "server_replaced_between_proofs": Case(
        "the server is replaced between the first and the final proof: gone at the final proof, no kill",
        pinned_on(PINNED, "%13", 513), [on(PINNED, ("%13", 513)), OWNED, on(RESTARTED, ("%13", 513))], ["gone"],
        ["L", "S", "L"]),
    "server_replaced_between_proofs_of_an_unrecorded_server": Case(
        "a pin without a server: the final proof must still come from the server of the first",
        request(("%13", 513)), [on(PINNED, ("%13", 513)), OWNED, on(RESTARTED, ("%13", 513))], ["gone"],
        ["L", "S", "L"]),
    "server_replaced_after_the_kill_is_killed": Case(
        "after the kill the socket answers for another server: the killed pane is gone with its own",
        pinned_on(PINNED, "%13", 513), [on(PINNED, ("%13", 513)), OWNED, on(PINNED, ("%13", 513)), KILLED,
                                        on(RESTARTED, ("%13", 513))], ["killed"], ["L", "S", "L", "K", "L"]),
    "listing_naming_no_server_cannot_prove_a_server_pin": Case(
        "a pane table of 3 fields names no server: a pane pinned on one is not proven (unavailable)",
        pinned_on(PINNED, "%13", 513), [live(("%13", 513))], ["proof_unavailable"], ["L"]),
    "integral_float_pid_is_an_integer": Case(
        "a pinned pid written 513.0 is the integer 513 (JSON Schema's integer)",
        {"targets": [{"pane_id": "%13", "pid": 513.0}], "owner_id": OWNER, "authorize": False},
        [live(("%13", 513)), live(("%13", 513)), KILLED, ok("")], ["killed"], ["L", "L", "K", "L"]),
}

# One case per class of malformed snapshot (pure/tmux/parse.py MalformedSnapshot), as a first proof of %13.
MALFORMED: dict[str, tuple[str, str]] = {
    "field_count": ("a row with two tab-separated fields", "%12\t0\n%13\t0\t513\n"),
    "pane_id_syntax": ("a row whose pane id is not % and digits", "%1x\t0\t5\n%13\t0\t513\n"),
    "pane_id_duplicate": ("another pane listed twice", "%12\t0\t5\n%12\t0\t6\n%13\t0\t513\n"),
    "pane_dead_syntax": ("a pane_dead field that is not 0 or 1", "%13\t0\t513\n%14\ty\t5\n"),
    "pane_pid_syntax": ("a pid with a trailing CR (a lone CR is not a line end)", "%13\t0\t513\r\n%14\t0\t514\r\n%15\t0\t5\r"),
    "pane_pid_range": ("a pid of 2^53, above the largest safe integer", "%13\t0\t513\n%14\t0\t9007199254740992\n"),
    "pane_pid_huge": ("a 5000-digit pid is out of range, not an error of the planner", f"%13\t0\t{'9' * 5000}\n"),
    "pane_pid_zero": ("pid 0 (written 000) is out of range", "%13\t0\t513\n%14\t0\t000\n"),
    "pane_pid_empty_for_target": ("the target's own row has an empty pid (allowed for other rows)",
                                  "%12\t0\t\n%13\t0\t\n"),
    "field_count_mixed": ("rows naming their server after rows that do not", "%12\t0\t5\n%13\t0\t513\t42\t7\n"),
    "tmux_server_syntax": ("a server pid of 0", "%13\t0\t513\t0\t1790000000\n"),
    "tmux_server_start_range": ("a server start of 2^53", "%13\t0\t513\t42\t9007199254740992\n"),
    "tmux_server_differs": ("two rows from two servers", "%12\t0\t5\t42\t7\n%13\t0\t513\t43\t7\n"),
}
for _name, (_text, _table) in MALFORMED.items():
    CASES[f"malformed_{_name}"] = Case(f"malformed snapshot: {_text}; the proof is unavailable",
                                       request(("%13", 513)), [ok(_table)], ["proof_unavailable"], ["L"])

VERB = {"list-panes": "L", "show-option": "S", "kill-pane": "K"}


def _program(raw: dict[str, Any]) -> Callable[[], Program]:
    op = operations.get("tmux.teardown")
    assert op is not None
    req = wire.structure(raw, op.request_type).unwrap()
    return lambda: op.program(req)


def run_case(raw: dict[str, Any], answers: list[m.Proc]) -> tuple[list[m.Entry], m.Done]:
    program = _program(raw)
    journal: list[m.Entry] = []
    queue = list(answers)
    while True:
        decision = decide(program, journal)
        if isinstance(decision, m.Done):
            assert not queue, f"answers left over: {queue}"
            return journal, decision
        (step,) = decision.steps
        if isinstance(step, m.Run):
            assert queue, f"unexpected extra tmux call {step.args}"
            observation: m.Observation = queue.pop(0)
        else:
            observation = m.Ack(ok=True)
        journal.append(m.Entry(step=step, observation=observation))


def golden(description: str, raw: dict[str, Any], journal: list[Any], done: m.Done) -> dict[str, Any]:
    result: Any = done.outcome.result
    return {"kind": "decision", "operation": "tmux.teardown", "description": description, "request": raw,
            "journal": journal, "decision": wire.unstructure(done), "informative": {"lines": teardown_lines(result)}}


@pytest.mark.parametrize("name", sorted(CASES))
def test_teardown_branch(name: str, goldens: Goldens) -> None:
    case = CASES[name]
    journal, done = run_case(case.request, case.answers)
    result: Any = done.outcome.result
    assert [r["fate"] for r in result["results"]] == case.fates
    assert [VERB[e.step.args[0]] for e in journal if isinstance(e.step, m.Run)] == case.verbs
    authorize = case.request.get("authorize", True)
    kills = [e.step for e in journal if isinstance(e.step, m.Run) and e.step.args[0] == "kill-pane"]
    for kill in kills:  # every kill is immediately preceded by L, S, L (or L, L without authorization)
        index = next(i for i, e in enumerate(journal) if e.step is kill)
        before = [VERB[e.step.args[0]] for e in journal[:index] if isinstance(e.step, m.Run)][-3:]
        assert before[-1] == "L" and (before[-2] == "S" or not authorize)
    goldens.check(f"tmux/teardown/{name}", golden(case.description, case.request,
                                                  [wire.unstructure(e) for e in journal], done))


# ----------------------------------------------------------------------------- error decisions

Journal = list[dict[str, Any]]


def _entries(name: str) -> Journal:
    case = CASES[name]
    journal, _ = run_case(case.request, case.answers)
    return [wire.unstructure(e) for e in journal]


def _replace(at: int, **changes: Any) -> Callable[[Journal], Journal]:
    def change(journal: Journal) -> Journal:
        out = [dict(e) for e in journal]
        out[at] = {**out[at], **changes}
        return out

    return change


SLEEP_ACK = {"step": {"op": "sleep", "ms": 2000}, "observation": {"kind": "ack", "ok": True, "error": ""}}
L_STEP = wire.unstructure(t.list_panes_step())

# name -> (description, the case whose journal is changed, the change, expected problem code)
ERRORS: dict[str, tuple[str, str, Callable[[Journal], Journal], str]] = {
    "journal_divergence_other_op": (
        "entry 1 is a sleep where the program asks for the owner read", "killed_after_full_proof",
        _replace(1, **SLEEP_ACK), "journal_divergence"),
    "journal_divergence_other_args": (
        "entry 0 lists panes with another format: the first differing field is args", "killed_after_full_proof",
        _replace(0, step={**L_STEP, "args": ["list-panes", "-a"]}), "journal_divergence"),
    "journal_divergence_other_sleep": (
        "the first pause is recorded as 1000 ms where the program asks for 50", "still_live_after_kill",
        _replace(5, step={"op": "sleep", "ms": 1000}), "journal_divergence"),
    "journal_divergence_stands_before_more_entries": (
        "the first entry that does not fit decides, whatever follows it", "killed_after_full_proof",
        lambda j: _replace(1, **SLEEP_ACK)(j) + j[2:], "journal_divergence"),
    "journal_mismatch_value_for_proc": (
        "the first proof is answered with a value observation", "killed_after_full_proof",
        _replace(0, observation={"kind": "value", "value": "x"}), "journal_mismatch"),
    "journal_mismatch_after_kill_lists_the_change": (
        "kill-pane answered with an ack: the error lists the kill as a change already made", "killed_after_full_proof",
        _replace(3, observation={"kind": "ack", "ok": True}), "journal_mismatch"),
    "journal_after_done": (
        "an entry after the program had finished", "absent_at_first_proof_needs_no_kill",
        lambda j: j + [j[0]], "journal_after_done"),
    "journal_after_done_for_an_empty_request": (
        "no targets: the program is done before the first entry", "empty_target_list",
        lambda j: j + [_entries("killed_after_full_proof")[0]], "journal_after_done"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_teardown_error_decision(name: str, goldens: Goldens) -> None:
    description, base, change, code = ERRORS[name]
    raw = CASES[base].request
    journal = change(_entries(base))
    entries = [wire.structure(e, m.Entry).unwrap() for e in journal]
    done = decide(_program(raw), entries)
    assert isinstance(done, m.Done) and done.outcome.status == "error"
    result: Any = done.outcome.result
    assert result["problem"]["code"] == code == done.outcome.message
    for i in range(result["problem"]["at"]):
        assert decide(_program(raw), entries[:i]) == m.Next(steps=(entries[i].step,))
    goldens.check(f"tmux/teardown/{name}", golden(description, raw, journal, done))


def test_kill_bound_scales_with_panes_and_the_back_off_fills_it() -> None:
    assert t.kill_backoff_ms(2000) == (50, 100, 200, 400, 800, 450)
    assert t.kill_backoff_ms(100) == (50, 50)
    assert t.kill_backoff_ms(150) == (50, 100)
    assert all(sum(t.kill_backoff_ms(n)) == n for n in range(100, 2001))
    assert t.kill_settle_ms(1) == 2000
    assert t.kill_settle_ms(3) == 666
    assert t.kill_settle_ms(10) == 200
    assert t.kill_settle_ms(50) == 100


def teardown_lines(result: dict[str, Any]) -> list[str]:
    """One line of prose per pane of a ``tmux.teardown`` result (or the error): a golden's informative
    lines (docs/ports.md), never compared."""
    if "problem" in result:
        return [f"error: {describe_decide_problem(result['problem'])}"]
    lines = []
    for pane in result.get("results", []):
        text = f"{pane.get('pane_id')}: {pane.get('fate')}"
        if pane.get("stage"):
            text += f" ({pane['stage']})"
        problem = pane.get("problem")
        if problem:
            text += f": {t.describe(problem)}"
            owner = problem.get("owner")
            if isinstance(owner, dict):
                text += f" (owner read: {owner.get('kind')}" + (f" {owner.get('value')}" if owner.get("value") else "") \
                        + (f", {t.describe(owner.get('problem'))}" if owner.get("problem") else "") + ")"
        lines.append(text)
    lines += [f"{e.get('pane_id')}: excluded ({e.get('rule')})" for e in result.get("excluded", [])]
    return lines
