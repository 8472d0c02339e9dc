"""A task no screen confirmed reaching its worker is debt until it does (pure/omx/undelivered.py): real
tmux, a stand-in agent that takes nothing typed until told to. `team status` and `team debt show` name
it alike; `team debt reconcile` types it again, keeps it while the agent still does not take it, and
clears it once the agent does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import TmuxServer
from tests.omx_up.test_real_tmux import pf, pf_json, scale_up_with_agent

pytestmark = [pytest.mark.tmux, pytest.mark.tmux_executors("control")]


def _agent(awake: Path) -> str:
    """The placeholder agent's screen, but a submitted line is only read, not shown, until ``awake`` exists."""
    return ("#!/bin/sh\n"
            "printf 'panefleet placeholder agent %s ready\\n' \"${OMX_TEAM_WORKER:-unknown-worker}\"\n"
            "printf '> '\n"
            "while IFS= read -r line; do\n"
            f"  if [ -e '{awake}' ]; then printf 'received: %s\\n> ' \"$line\"; fi\n"
            "done\n"
            "exec sleep 2147483647\n")


def _requests(work: Path) -> list[dict[str, object]]:
    return json.loads((work / ".omx/state/team/alpha/dispatch/requests.json").read_text())


def test_an_undelivered_task_is_debt_until_a_reconcile_delivers_it(tmux_server: TmuxServer, tmp_path: Path,
                                                                     clean_env: dict[str, str]) -> None:
    awake = tmp_path / "awake"
    done, env, work, _leader = scale_up_with_agent(tmux_server, tmp_path, clean_env, _agent(awake), count=1)
    assert done.outcome.status == "debt", done.outcome
    assert [(d.kind, d.subject) for d in done.debt] == [("task_delivery", "worker-1")]
    (request,) = _requests(work)
    assert request["status"] == "failed" and request["attempt_count"] == 1

    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 3 and status["panesProven"] and not status["healthy"], status
    (task,) = status["undeliveredTasks"]
    assert task["worker"] == "worker-1" and task["requestId"] == request["request_id"] and task["attempts"] == 1
    code, shown = pf_json("team", "debt", "show", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and shown["undeliveredTasks"] == status["undeliveredTasks"], shown
    text = pf("team", "status", "alpha", "--cwd", str(work), env=env).stdout
    assert "undelivered: worker-1's task" in text and "1 task never reached its worker" in text, text

    code, again = pf_json("team", "debt", "reconcile", "alpha", "--cwd", str(work), env=env)
    assert code == 3 and again["redeliveredTasks"]["delivered"] == [], again  # still not taken: kept
    assert again["redeliveredTasks"]["notDelivered"][0]["attempts"] == 2
    assert _requests(work)[0]["status"] == "failed"

    awake.touch()
    code, retried = pf_json("team", "debt", "reconcile", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and retried["redeliveredTasks"] == {"delivered": ["worker-1"], "notDelivered": []}, retried
    (request,) = _requests(work)
    assert request["status"] == "delivered" and request["attempt_count"] == 3 and "delivered_at" in request
    log = next((work / ".omx/logs").glob("team-delivery-*.jsonl")).read_text().splitlines()
    assert [(json.loads(line)["event"], json.loads(line)["result"]) for line in log] == [
        ("dispatch_attempted", "queued"), ("dispatch_result", "failed"), ("dispatch_result", "failed"),
        ("dispatch_result", "confirmed")]
    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and status["healthy"] and "undeliveredTasks" not in status, status
    code, quiet = pf_json("team", "debt", "reconcile", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and "redeliveredTasks" not in quiet  # nothing left to retry, nothing typed


def test_a_respawn_s_undelivered_task_is_recorded_and_retried(tmux_server: TmuxServer, tmp_path: Path,
                                                              clean_env: dict[str, str]) -> None:
    """A respawn records its trigger's delivery as a dispatch request of its own (`respawn:<worker>`), so
    one its agent did not take is debt like a scale-up's until `team debt reconcile` delivers it."""
    awake = tmp_path / "awake"
    awake.touch()
    done, env, work, _leader = scale_up_with_agent(tmux_server, tmp_path, clean_env, _agent(awake), count=1)
    assert done.outcome.status == "ok", done.outcome
    (worker,) = json.loads((work / ".omx/state/team/alpha/config.json").read_text())["workers"]
    awake.unlink()
    tmux_server.cmd("kill-pane", "-t", worker["pane_id"])
    code, respawned = pf_json("team", "respawn", "alpha", "worker-1", "--cwd", str(work), env=env)
    assert code == 3 and respawned["delivery"]["status"] == "not_delivered", respawned
    request = _requests(work)[-1]
    assert request["inbox_correlation_key"] == "respawn:worker-1" and request["status"] == "failed"
    assert request["pane_id"] == respawned["paneId"]
    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 3 and [t["requestId"] for t in status["undeliveredTasks"]] == [request["request_id"]], status
    awake.touch()
    code, retried = pf_json("team", "debt", "reconcile", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and retried["redeliveredTasks"]["delivered"] == ["worker-1"], retried
    code, status = pf_json("team", "status", "alpha", "--cwd", str(work), env=env)
    assert code == 0 and status["healthy"], status
