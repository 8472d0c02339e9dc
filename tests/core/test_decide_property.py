"""decide is total and deterministic: random journals (garbage answers included) never raise."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.program import Driver, decide
from pure.team import TeamInitRequest, TeamStatusRequest

garbage = st.one_of(
    st.text(max_size=60),
    st.lists(st.tuples(st.sampled_from(["%1", "%2", "%13", "%21", "1", "%x"]), st.sampled_from(["0", "1", "2", ""]),
                       st.sampled_from(["42", "0", "", "x", "9007199254740993", "513"])), max_size=4)
    .map(lambda rows: "".join("\t".join(r) + "\n" for r in rows)),
)
observations = st.one_of(
    st.builds(m.Proc, exit_code=st.none() | st.integers(-1, 3), stdout=garbage, stderr=st.text(max_size=10)),
    st.builds(m.FileData, content=st.none() | st.sampled_from(['{"name": 1}', "{", "[]", '{"name":"a","workers":[]}']),
              error=st.sampled_from(["", "EACCES"])),
    st.builds(m.Ack, ok=st.booleans()),
    st.builds(m.Value, value=st.text(max_size=10)),
    st.builds(m.Listing, names=st.none()),
)
requests = st.one_of(
    st.builds(TeamStatusRequest, team=st.sampled_from(["alpha", "Bad Name", ""]), cwd=st.just("/w")),
    st.builds(TeamInitRequest, team=st.sampled_from(["alpha", "x" * 40]), cwd=st.just("/w"),
              leader_pane=st.none() | st.sampled_from(["%1", "1"]), new_session=st.booleans()),
    st.builds(t.TeardownRequest, targets=st.lists(st.builds(t.TeardownTarget, pane_id=st.sampled_from(["%1", "%13", "x"]),
                                                           pid=st.none() | st.integers(-1, 600)), max_size=3).map(tuple),
              owner_id=st.none() | st.just("team:a"), authorize=st.booleans()),
)
NAMES = {TeamStatusRequest: "team.status", TeamInitRequest: "team.init", t.TeardownRequest: "tmux.teardown"}


@settings(max_examples=300, deadline=None)
@given(requests, st.lists(observations, max_size=25))
def test_decide_never_raises_and_is_deterministic(request: object, answers: list[m.Observation]) -> None:
    op = operations.get(NAMES[type(request)])
    assert op is not None
    driver = Driver(lambda: op.program(request))
    journal: list[m.Entry] = []
    for answer in answers:
        decision = driver.decision()
        if isinstance(decision, m.Done):
            break
        step = decision.steps[0]
        journal.append(m.Entry(step=step, observation=answer))
        driver.feed(step, answer)
    first = decide(lambda: op.program(request), journal)
    second = decide(lambda: op.program(request), journal)
    assert first == second
    assert isinstance(first, (m.Next, m.Done))
    assert first == driver.decision()


def test_divergent_journal_is_a_typed_error() -> None:
    op = operations.get("team.status")
    assert op is not None
    req = TeamStatusRequest(team="alpha", cwd="/w")
    bogus = m.Entry(step=m.Run(tool="tmux", args=("kill-server",)), observation=m.Proc(exit_code=0))
    decision = decide(lambda: op.program(req), [bogus])
    assert isinstance(decision, m.Done)
    assert decision.outcome.status == "error"
    assert decision.outcome.message == "journal_divergence"
    assert decision.outcome.result == {"ok": False, "error": "journal_divergence", "problem": {
        "code": "journal_divergence", "at": 0, "expected_op": "stat", "got_op": "run", "field": "op"}}


def test_the_first_entry_that_does_not_fit_decides() -> None:
    op = operations.get("tmux.teardown")
    assert op is not None
    req = t.TeardownRequest(targets=(t.TeardownTarget(pane_id="%1", pid=1),), owner_id="team:a")
    listing = m.Entry(step=t.list_panes_step(), observation=m.Value(value="x"))
    done = decide(lambda: op.program(req), [listing, listing, listing])
    assert isinstance(done, m.Done)
    assert done.outcome.result == {"ok": False, "error": "journal_mismatch", "problem": {
        "code": "journal_mismatch", "at": 0, "op": "run", "expected_kind": "proc", "got_kind": "value"}}
    empty = t.TeardownRequest(targets=())
    done = decide(lambda: op.program(empty), [listing, listing])
    assert isinstance(done, m.Done) and done.outcome.result == {"ok": False, "error": "journal_after_done",
                                                                "problem": {"code": "journal_after_done", "at": 0,
                                                                            "got_op": "run"}}


def test_a_crash_after_changes_says_what_was_changed() -> None:
    from pure.program import expect

    def program():  # type: ignore[no-untyped-def]
        yield from expect(m.WriteFile(path="/w/a", content="x"), m.Ack)
        yield from expect(m.ReadFile(path="/w/b"), m.FileData)
        raise ValueError("boom")

    journal = [m.Entry(step=m.WriteFile(path="/w/a", content="x"), observation=m.Ack(ok=True)),
               m.Entry(step=m.ReadFile(path="/w/b"), observation=m.FileData(content=None))]
    done = decide(program, journal)
    assert isinstance(done, m.Done) and done.outcome.message == "internal_error:ValueError:boom"
    assert done.outcome.result == {"ok": False, "error": "internal_error:ValueError:boom",
                                   "problem": {"code": "internal_error"},
                                   "changesMade": [{"op": "write_file", "path": "/w/a", "content": "x",
                                                    "mode": None, "note": ""}]}
