"""End to end with the real agent CLIs: teams of Codex, Claude Code and Gemini CLI workers, started,
answered and given their tasks by panefleet, each scenario in its own network + pid namespace where the
only server is the mock model (``tests/agents/sandbox.py``, ``tests/agents/flows.py``).

The pinned CLIs come from the agent cache ``./dev test`` fills (``$PANEFLEET_AGENT_CACHE``). Without
it the tests skip, except under CI (``CI=true``), where a missing cache is a failure.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agents.sandbox import missing_prerequisites, run_scenario

pytestmark = [pytest.mark.agents, pytest.mark.timeout(600)]
TEAM_OWNER = "team:alpha"
SCENARIO_TIMEOUT_S = 420.0


@pytest.fixture(autouse=True)
def agents_available() -> Iterator[None]:
    missing = missing_prerequisites()
    if missing:
        reason = "agent scenarios cannot run: " + "; ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    yield


def _brief(result: dict[str, Any]) -> str:
    """What a failure message shows: the commands' answers, then each worker pane's last lines."""
    parts = []
    for key in ("init", "scale_up", "status", "status_after_kill", "respawn", "status_after_respawn"):
        if key in result:
            command = result[key]
            parts.append(f"{key}: exit {command['code']}\n  stdout: {command['stdout'].strip()[:3000]}\n"
                         f"  stderr: {command['stderr'].strip()[-1500:]}")
    for key in ("triggers", "retrigger"):
        if key in result:
            parts.append(f"{key}: {result[key]}")
    for worker, screen in result.get("screens", {}).items():
        lines = [line for line in screen.splitlines() if line.strip()]
        parts.append(f"--- {worker} screen (last lines):\n" + "\n".join(lines[-15:]))
    parts.append(f"panes: {json.dumps(result.get('panes'))}")
    return "\n".join(parts)


def _assert_team_scaled_up(result: dict[str, Any], count: int) -> None:
    brief = _brief(result)
    assert result["init"]["code"] == 0, brief
    up = result["scale_up"]
    assert up["code"] == 0, brief
    answer = up["json"]
    assert isinstance(answer, dict) and answer.get("ok") is True, brief
    names = [f"worker-{i}" for i in range(1, count + 1)]
    assert [w["name"] for w in answer["addedWorkers"]] == names, brief
    deliveries = {d["worker"]: d for d in answer.get("deliveries", [])}
    assert sorted(deliveries) == names, brief
    assert all(d["status"] == "delivered" for d in deliveries.values()), brief
    # each worker's own trigger reached the model, typed into and submitted by its own agent
    assert all(result["triggers"][name] is not None for name in names), brief
    panes = result["panes"]
    for worker in answer["addedWorkers"]:
        pane = worker["pane_id"]
        assert pane in panes and not panes[pane]["dead"], brief
        assert panes[pane]["owner"] == TEAM_OWNER, brief
    assert result["status"]["code"] == 0, brief


def _assert_stopped_without_leftovers(result: dict[str, Any]) -> None:
    """Scale-down of the last worker, then ``tmux kill-server``: no process of the agent CLI is left
    (Gemini ignores the SIGHUP of a killed pane; the gated pane's shell ends it, pure/omx/startup_script.py)."""
    stop = result["stop"]
    brief = _brief(result) + f"\nstop: {json.dumps(stop)[:4000]}"
    assert stop["scale_down"]["code"] == 0, brief
    assert stop["victim_session"] in {p["sid"] for p in stop["before"]}, brief  # the victim's agent ran
    assert stop["left_after_scale_down"] == [], brief
    assert stop["others_after_scale_down"], brief  # the other workers' agents still run
    assert stop["left_after_kill_server"] == [], brief


@pytest.mark.parametrize(("cli", "count"), [("codex", 3), ("claude", 2), ("gemini", 2)])
def test_scale_up_starts_real_agents_and_delivers_their_tasks(cli: str, count: int) -> None:
    # a fresh sandbox: the repository was never trusted by any of the CLIs (each asks first)
    result = run_scenario("team_scale_up", {"cli": cli, "count": count, "stop": True}, timeout_s=SCENARIO_TIMEOUT_S)
    _assert_team_scaled_up(result, count)
    if cli == "gemini":  # one turn per trigger (the mock counts Gemini's streamed turns only)
        assert set(result["trigger_turns"].values()) == {1}, _brief(result) + f"\n{result['trigger_turns']}"
    _assert_stopped_without_leftovers(result)


def test_scale_up_codex_in_worktree_mode() -> None:
    count = 2
    result = run_scenario("team_scale_up", {"cli": "codex", "count": count, "worktree": True},
                          timeout_s=SCENARIO_TIMEOUT_S)
    _assert_team_scaled_up(result, count)
    brief = _brief(result)
    for worker in result["scale_up"]["json"]["addedWorkers"]:
        expected = f"{result['repo']}/.omx/team/alpha/worktrees/{worker['name']}"
        assert worker["worktree_path"] == expected and worker["working_dir"] == expected, brief
        assert f"worktree {expected}\n" in result["worktrees"], brief


def test_broken_codex_config_fails_scale_up_and_leaves_nothing() -> None:
    result = run_scenario("team_scale_up_broken_codex_config", {"count": 1}, timeout_s=SCENARIO_TIMEOUT_S)
    brief = _brief(result)
    assert result["init"]["code"] == 0, brief
    up = result["scale_up"]
    # refused before any pane is made, naming the file and what is wrong with it, as `panefleet doctor` does
    # (pure/agents/doctor.py); Codex itself says "Error: loading config.toml: …" (tests/goldens/screens/codex/)
    assert up["code"] == 4, brief
    told = up["stdout"] + up["stderr"]
    assert "error loading config.toml" in told and "config.toml" in up["json"]["error"], brief
    assert list(result["panes"]) == [result["leader"]], brief  # no worker pane left
    assert result["worker_dirs"] == [], brief
    before, after = result["config_before"], result["config"]
    assert (after["workers"], after["worker_count"]) == (before["workers"], before["worker_count"]), brief


def test_broken_gemini_setup_fails_scale_up_with_its_own_error_and_leaves_nothing() -> None:
    result = run_scenario("team_scale_up_broken_gemini", {}, timeout_s=SCENARIO_TIMEOUT_S)
    before = result["config_before"]
    for case in ("broken_settings", "no_api_key"):
        seen = result[case]
        brief = f"{case}: {json.dumps(seen['scale_up'])[:3000]}\n" + _brief({**result, **seen})
        assert list(seen["panes"]) == [result["leader"]], brief  # no worker pane left
        assert seen["worker_dirs"] == [], brief
        after = seen["config"]
        assert (after["workers"], after["worker_count"]) == (before["workers"], before["worker_count"]), brief
    # settings.json that is not JSON: refused before any pane, in doctor's words (pure/agents/doctor.py);
    # Gemini itself exits 52 with "Error in <path>: …" (tests/goldens/screens/gemini/broken_settings.json)
    up = result["broken_settings"]["scale_up"]
    assert up["code"] == 4, up
    assert "error in" in up["stdout"] + up["stderr"] and ".gemini/settings.json" in up["json"]["error"], up
    # no API key: Gemini starts, is trusted, restarts and stops at its own key dialog; that line is the error
    up = result["no_api_key"]["scale_up"]
    assert up["code"] == 1 and "Enter Gemini API Key" in up["json"]["error"], up
    assert result["no_api_key"]["left"] == [], result["no_api_key"]["left"]  # and its processes are gone


def test_dead_worker_is_reported_and_respawned() -> None:
    victim = "worker-2"
    result = run_scenario("team_respawn", {"cli": "codex", "count": 2, "victim": victim},
                          timeout_s=SCENARIO_TIMEOUT_S)
    brief = _brief(result)
    assert result["scale_up"]["code"] == 0 and result["victim_pane"], brief
    after_kill = result["status_after_kill"]["json"]
    assert isinstance(after_kill, dict), brief
    reports = {p["name"]: p for p in after_kill["panes"]}
    # its pane was killed: absent from the server, never "live", nor any other kind of gone
    assert (reports[victim]["paneId"], reports[victim]["verdict"], reports[victim]["pidMatch"]) == (
        result["victim_pane"], "absent", False), brief
    assert result["status_after_kill"]["code"] == 3, brief  # README: a pane not proven live and ours
    assert reports["worker-1"]["verdict"] == "live", brief
    respawn = result["respawn"]
    assert respawn["code"] == 0 and isinstance(respawn["json"], dict) and respawn["json"].get("ok") is True, brief
    assert result["retrigger"][victim] is not None, brief  # the respawned worker got its trigger again
    workers = {w["name"]: w for w in result["config"]["workers"]}
    pane = workers[victim]["pane_id"]
    assert pane != result["victim_pane"], brief
    assert pane in result["panes"] and not result["panes"][pane]["dead"], brief
    assert result["panes"][pane]["owner"] == TEAM_OWNER, brief
    assert result["status_after_respawn"]["code"] == 0, brief


def test_fleet_file_of_codex_and_claude_workers_applies() -> None:
    result = run_scenario("fleet_apply", {}, timeout_s=SCENARIO_TIMEOUT_S)
    brief = _brief(result) + f"\napply: {json.dumps(result.get('apply'))[:3000]}"
    assert result["apply"]["code"] == 0 and result["apply"]["json"]["ok"] is True, brief
    clis = {w["name"]: w["worker_cli"] for w in result["config"]["workers"]}
    assert clis == {"worker-1": "codex", "worker-2": "codex", "worker-3": "claude"}, brief
    assert all(seconds is not None for seconds in result["triggers"].values()), brief
    again = result["again"]["json"]
    assert result["again"]["code"] == 0 and again["converged"] is True, brief
    assert result["status"]["code"] == 0, brief
    for worker in result["config"]["workers"]:
        assert result["panes"][worker["pane_id"]]["owner"] == TEAM_OWNER, brief
    brief += (f"\nsend: {json.dumps(result.get('send'))[:3000]}\nfollow-ups: {result.get('follow_ups')}"
              f"\nbusy: {json.dumps(result.get('busy_send'))[:3000]} {result.get('busy_follow_ups')}")
    for worker in ("worker-2", "worker-3"):  # a Codex and the Claude worker: `team send` reaches each once
        sent = result["send"][worker]
        assert sent["code"] == 0 and sent["json"]["workers"][0]["result"] == "delivered", brief
        assert result["follow_ups"][worker] == 1, brief
        # sent while the agent was busy: queued (or delivered, as that CLI behaves), and it reaches the model once
        busy = result["busy_send"][worker]["json"]["workers"][0]
        assert busy["result"] in ("queued", "delivered") and busy["agentState"] == "busy", brief
        assert result["busy_follow_ups"][worker] == 1, brief
    # `team watch` saw each busy agent finish its turn and ran its --on-idle hook once per transition
    watch = result["watch"]
    brief += f"\nwatch: {json.dumps(watch)}"
    hooks = watch["hooks"].splitlines()
    assert watch["code"] == 0 and {"worker-2 idle", "worker-3 idle"} <= set(hooks), brief
    assert len(hooks) == watch["stdout"].count(" -> idle") and all(line.endswith(" idle") for line in hooks), brief


def test_an_agent_asking_for_approval_is_reported_and_its_hooks_run_once() -> None:
    """docs/reaching-workers.md, "needs_input": a Codex and a Claude Code worker with approvals on."""
    result = run_scenario("needs_input", {}, timeout_s=SCENARIO_TIMEOUT_S)
    brief = _brief(result) + f"\napply: {json.dumps(result.get('apply'))[:2000]}\napprovals: " \
                             f"{json.dumps(result.get('approvals'))[:4000]}\nwatch: {json.dumps(result.get('watch'))}"
    assert result["apply"]["code"] == 0, brief
    for worker in ("worker-1", "worker-2"):
        seen = result["approvals"][worker]
        # the follow-up was taken (the agent turned busy, then asked): not refused, not left in the input line
        assert seen["send"]["code"] == 0, brief
        states = [state for _, state in seen["states"]]
        assert states[-1] == "needs_input" and not seen["ran_before_approval"], brief
        shown_at = seen["states"][-1][0]
        assert seen["asked_at"] is not None and shown_at - seen["asked_at"] <= 2.0, brief
        after = [state for _, state in seen["after_approval"]]
        assert after[-1] == "idle" and "busy" in after and after.index("busy") < len(after) - 1, brief
        assert "needs_input" not in after[1:] and seen["ran_after_approval"], brief
    hooks = result["watch"]["hooks"].splitlines()
    assert result["watch"]["code"] == 0, brief
    for worker in ("worker-1", "worker-2"):  # each hook once per transition, with the worker's name
        assert hooks.count(f"{worker} needs_input") == 1 and hooks.count(f"{worker} idle") == 1, brief
    assert len(hooks) == 4, brief
