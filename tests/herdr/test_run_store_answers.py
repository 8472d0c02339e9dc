"""``herdr run start`` ends as the store's answer says, by its shape: a conflict (a run recorded
otherwise between the read and the write) is a refusal, any other store failure an error
(shell/store/herdr_runs.py ``run_start``; the store's answers: shell/cli/herdr.py)."""

from __future__ import annotations

import pytest

from pure import model as m
from pure.program import decide
from shell.store.herdr_runs import RunStartRequest, run_start

REQUEST = RunStartRequest(run_id="r1", project="alpha", issue=7, attempt=1, session="main")


def _ended_with(answer: m.JsonResult) -> m.Done:
    first = decide(lambda: run_start(REQUEST), [])
    assert isinstance(first, m.Next) and isinstance(first.steps[0], m.Store)
    read = m.Entry(step=first.steps[0], observation=m.JsonResult(ok=True))  # no run recorded yet
    second = decide(lambda: run_start(REQUEST), [read])
    assert isinstance(second, m.Next) and isinstance(second.steps[0], m.Store)
    done = decide(lambda: run_start(REQUEST), [read, m.Entry(step=second.steps[0], observation=answer)])
    assert isinstance(done, m.Done)
    return done


@pytest.mark.parametrize(("answer", "status"), [
    (m.JsonResult(ok=False, value=m.JsonValue({"conflict": "run 'r1' is already beta #2"}),
                  error="run 'r1' is already beta #2"), "refused"),
    (m.JsonResult(ok=False, error="store /x/runs.sqlite: database is locked"), "error"),
    # a store error whose text merely starts like a conflict is still an error
    (m.JsonResult(ok=False, error="conflict: disk I/O error"), "error"),
])
def test_a_conflict_is_refused_and_any_other_failure_is_an_error(answer: m.JsonResult, status: str) -> None:
    done = _ended_with(answer)
    assert done.outcome.status == status
    assert done.outcome.result == m.JsonValue({"ok": False, "error": answer.error})
    assert done.outcome.message == answer.error
