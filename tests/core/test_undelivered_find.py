"""Which tasks count as undelivered (pure/omx/undelivered.py ``find``): a member's latest request, failed."""

from __future__ import annotations

from pure.omx import undelivered
from pure.omx.records import DispatchRequest, Member, TeamConfig


def _request(worker: str | None, status: object, request_id: str, trigger: object = "Read it") -> DispatchRequest:
    return DispatchRequest(request_id=request_id, to_worker=worker, status=status, trigger_message=trigger,
                           attempt_count=1, last_reason=f"{status}:why")


def test_only_a_member_s_latest_failed_request_is_undelivered() -> None:
    config = TeamConfig(name="t", workers=(Member(name="worker-1", index=1, pane_id="%1", pid=11, worker_cli="claude"),
                                           Member(name="worker-2", index=2, pane_id="%2", pid=0),
                                           Member(name="worker-3", index=3, pane_id="%3", pid=33)))
    requests = [_request("worker-1", "delivered", "a"), _request("worker-1", "failed", "b"),
                _request("worker-2", "failed", "c"),
                _request("worker-3", "failed", "d"), _request("worker-3", "delivered", "e"),  # delivered since
                _request("worker-9", "failed", "f"),  # no member
                _request(None, "failed", "g"),  # to no worker
                _request("worker-3", "failed", "h", trigger=7), _request("worker-3", 5, "i")]  # not what is written
    found = undelivered.find(config, requests)
    assert [(u.worker, u.cli, u.pane, u.pid, u.request.request_id) for u in found] == [
        ("worker-1", "claude", "%1", 11, "b"), ("worker-2", "codex", "%2", None, "c")]
    assert found[0].to_json() == {"worker": "worker-1", "paneId": "%1", "requestId": "b", "attempts": 1,
                                  "reason": "failed:why"}
    assert found[0].debt().kind == "task_delivery" and found[0].debt().subject == "worker-1"
    assert undelivered.find(TeamConfig(name="t"), requests) == ()
