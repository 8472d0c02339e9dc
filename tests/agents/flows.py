"""The acceptance flows of ``tests/agents/test_agents.py``, run inside the sandbox namespace.

Each flow drives the real ``panefleet`` CLI against real agent CLIs (pinned in ./dev) talking to the
mock model, and returns what it observed as JSON: the commands' exit codes and JSON answers, the
panes of the private tmux server with their owner tags, which worker triggers reached the mock
(``workers/worker-N/inbox.md`` in the prompt the agent submitted), the team's files, and each
worker pane's last screen for failure messages. The assertions are made outside, in the test.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.agents.sandbox import CLI, Sandbox, log, scenario

TEAM = "alpha"
TRIGGER_WAIT_S = 60.0  # how long after scale-up returns each worker's trigger may take to reach the mock
STOP_WAIT_S = 10.0  # how long a killed pane's agent may take to end (the gate: SIGTERM, SIGKILL 2 s later)
BROKEN_TOML = 'model = "mock-model\n[[[ this is not toml\n'
BROKEN_JSON = '{"security": {"auth": ,\n'


def trigger_marker(worker: str) -> str:
    return f"workers/{worker}/inbox.md"


def init_team(box: Sandbox, cli: str) -> dict[str, Any]:
    return box.pf("team", "init", TEAM, "--leader-pane", box.leader, "--worker-cli", cli, "--cwd", str(box.repo),
                  "-o", "json").as_json()


def scale_up(box: Sandbox, count: int) -> dict[str, Any]:
    return box.pf("team", "scale-up", TEAM, "--count", str(count), "--cwd", str(box.repo), "-o", "json",
                  timeout_s=240).as_json()


def status(box: Sandbox) -> dict[str, Any]:
    return box.pf("team", "status", TEAM, "--cwd", str(box.repo), "-o", "json").as_json()


def enable_worktree_mode(box: Sandbox) -> None:
    """Worktree mode is the team's ``workspace_mode: "worktree"`` (``resolve_mode`` in
    ``pure/omx/worktree.py``), set in config.json and manifest.v2.json as oh-my-codex's
    ``--worktree`` start writes it (``tests/omx_up/test_real_tmux.py`` does the same)."""
    team_dir = box.repo / ".omx" / "state" / "team" / TEAM
    for name in ("config.json", "manifest.v2.json"):
        path = team_dir / name
        data = json.loads(path.read_text(encoding="utf-8"))
        data["workspace_mode"] = "worktree"
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def wait_triggers(box: Sandbox, workers: list[str], timeout_s: float, *, after: float = 0.0) -> dict[str, Any]:
    """worker -> seconds until a prompt holding its trigger reached the mock (None: never), counting
    only requests recorded after ``after`` (a ``time.time()``)."""
    started = time.monotonic()
    seen: dict[str, Any] = {w: None for w in workers}
    while True:
        for worker in workers:
            if seen[worker] is None and any(r.at >= after for r in box.mock.requests_containing(
                    trigger_marker(worker), prompt_only=True)):
                seen[worker] = round(time.monotonic() - started, 1)
        if all(v is not None for v in seen.values()) or time.monotonic() - started >= timeout_s:
            return seen
        time.sleep(0.5)


def observe(box: Sandbox) -> dict[str, Any]:
    """The state after a flow: panes, team files, worktrees, worker screens, mock traffic."""
    panes = box.panes()
    config = box.team_config(TEAM)
    screens = {}
    for worker in (config or {}).get("workers", []):
        pane = worker.get("pane_id")
        if isinstance(pane, str) and pane in panes:
            screens[worker["name"]] = box.capture(pane)
    worktrees = box.git("worktree", "list", "--porcelain", check=False).stdout
    requests = [{"at": r.at, "method": r.method, "path": r.path, "prompt": r.prompt_text()[-300:]}
                for r in box.mock.snapshot()]
    return {"panes": panes, "config": config, "worker_dirs": box.worker_dirs(TEAM), "screens": screens,
            "worktrees": worktrees, "requests": requests}


@scenario("team_scale_up")
def team_scale_up(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    cli, count = str(params["cli"]), int(params["count"])
    with Sandbox(work) as box:
        out: dict[str, Any] = {"leader": box.leader, "repo": str(box.repo), "init": init_team(box, cli)}
        if out["init"]["code"] != 0:
            return {**out, **observe(box)}
        if params.get("worktree"):
            enable_worktree_mode(box)
        out["scale_up"] = scale_up(box, count)
        workers = [f"worker-{i}" for i in range(1, count + 1)]
        out["triggers"] = wait_triggers(box, workers, TRIGGER_WAIT_S if out["scale_up"]["code"] == 0 else 1)
        log(f"triggers: {out['triggers']}")
        out["status"] = status(box)
        out.update(observe(box))
        # turns (streamed requests whose typed message holds the trigger): Gemini's router call before
        # each turn quotes the message too, and is not one (tests/agents/mock_model.py prompt_text)
        out["trigger_turns"] = {w: len(box.mock.requests_containing(trigger_marker(w), prompt_only=True))
                                for w in workers}
        if params.get("stop") and out["scale_up"]["code"] == 0:
            out["stop"] = stop_team(box, cli, workers[-1])
        return out


def wait_agents_gone(box: Sandbox, cli: str, sessions: set[int] | None = None,
                     timeout_s: float = STOP_WAIT_S) -> list[dict[str, Any]]:
    """The agent processes of ``cli`` (of the panes whose sessions are ``sessions``, else all) still
    running after up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = [p for p in box.agent_processes(cli) if sessions is None or p["sid"] in sessions]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.2)


def stop_team(box: Sandbox, cli: str, victim: str) -> dict[str, Any]:
    """Scale ``victim`` down, then kill the tmux server (a teardown): the agent processes each leaves
    behind. Gemini ignores the SIGHUP of a killed pane (../shared/spec/agents.md); the gated pane's
    shell (pure/omx/startup_script.py) takes its process group down with it."""
    config = box.team_config(TEAM) or {}
    panes = {w.get("name"): w.get("pane_id") for w in config.get("workers", [])}
    pids = {pane: row["pid"] for pane, row in box.panes().items()}
    victim_session = pids.get(str(panes.get(victim)))
    out: dict[str, Any] = {"before": box.agent_processes(cli), "victim_session": victim_session}
    out["scale_down"] = box.pf("team", "scale-down", TEAM, "--worker", victim, "--force", "--cwd", str(box.repo),
                               "-o", "json", timeout_s=120).as_json()
    out["left_after_scale_down"] = wait_agents_gone(box, cli, {victim_session} if victim_session else set())
    out["others_after_scale_down"] = [p for p in box.agent_processes(cli) if p["sid"] != victim_session]
    box.tmux("kill-server", check=False)
    out["left_after_kill_server"] = wait_agents_gone(box, cli)
    log(f"stop: {len(out['before'])} {cli} processes; left after scale-down {out['left_after_scale_down']}, "
        f"after kill-server {out['left_after_kill_server']}")
    return out


@scenario("team_scale_up_broken_codex_config")
def team_scale_up_broken_codex_config(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    with Sandbox(work) as box:
        out: dict[str, Any] = {"leader": box.leader, "init": init_team(box, "codex")}
        if out["init"]["code"] != 0:
            return {**out, **observe(box)}
        out["config_before"] = box.team_config(TEAM)
        box.write_codex_config(BROKEN_TOML)
        out["scale_up"] = scale_up(box, int(params.get("count", 1)))
        return {**out, **observe(box)}


@scenario("team_scale_up_broken_gemini")
def team_scale_up_broken_gemini(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    """Two broken Gemini set-ups, one scale-up of one worker each: ~/.gemini/settings.json that is not
    JSON (refused before any pane, as ``panefleet doctor`` says it), then GEMINI_API_KEY missing from
    the panes' environment (Gemini starts and stops at its API key dialog: a start-up failure, rolled
    back)."""
    with Sandbox(work) as box:
        out: dict[str, Any] = {"leader": box.leader, "init": init_team(box, "gemini")}
        if out["init"]["code"] != 0:
            return {**out, **observe(box)}
        out["config_before"] = box.team_config(TEAM)
        box.write_gemini_settings(BROKEN_JSON)
        out["broken_settings"] = {"scale_up": scale_up(box, 1), **observe(box)}
        box.write_gemini_settings()
        box.tmux("set-environment", "-g", "-u", "GEMINI_API_KEY")
        out["no_api_key"] = {"scale_up": scale_up(box, 1), **observe(box),
                             "left": wait_agents_gone(box, "gemini")}
        return out


@scenario("team_respawn")
def team_respawn(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    cli, count, victim = str(params["cli"]), int(params["count"]), str(params["victim"])
    with Sandbox(work) as box:
        out: dict[str, Any] = {"leader": box.leader, "init": init_team(box, cli)}
        if out["init"]["code"] != 0:
            return {**out, **observe(box)}
        out["scale_up"] = scale_up(box, count)
        workers = [f"worker-{i}" for i in range(1, count + 1)]
        out["triggers"] = wait_triggers(box, workers, TRIGGER_WAIT_S if out["scale_up"]["code"] == 0 else 1)
        config = box.team_config(TEAM) or {}
        pane = next((w.get("pane_id") for w in config.get("workers", []) if w.get("name") == victim), None)
        out["victim_pane"] = pane
        if not isinstance(pane, str):
            return {**out, **observe(box)}
        box.tmux("kill-pane", "-t", pane, check=False)
        out["status_after_kill"] = status(box)
        killed_at = time.time()
        # the contract's spelling, without --cwd: panefleet runs in the team's directory (Sandbox.run)
        out["respawn"] = box.pf("team", "respawn", TEAM, victim, "-o", "json", timeout_s=240).as_json()
        out["retrigger"] = wait_triggers(box, [victim], TRIGGER_WAIT_S if out["respawn"]["code"] == 0 else 1,
                                         after=killed_at)
        out["status_after_respawn"] = status(box)
        return {**out, **observe(box)}


@scenario("timed_scale_up")
def timed_scale_up(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    """``bench/agents_startup.py``: the wall time of one real scale-up (a fresh CLI process, from start
    until it exits with every agent started and its trigger confirmed on screen)."""
    cli, count = str(params["cli"]), int(params["count"])
    with Sandbox(work) as box:
        init_team(box, cli)
        started = time.perf_counter()
        answer = scale_up(box, count)
        seconds = time.perf_counter() - started
        up = answer.get("json") if isinstance(answer, dict) else None
        ok = isinstance(up, dict) and up.get("ok") is True and all(
            d.get("status") == "delivered" for d in up.get("deliveries", []))
        return {"seconds": round(seconds, 3), "ok": ok, "answer": up}


FLEET = """[team.alpha]
leader_pane = "{leader}"

[[team.alpha.workers]]
cli = "codex"
count = 2
task = "Write the release notes"

[[team.alpha.workers]]
cli = "claude"
count = 1
task = "Review the release notes"
"""


@scenario("fleet_apply")
def fleet_apply(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    """A fleet file of 2 Codex and 1 Claude worker joined to the sandbox's leader pane, applied, then
    applied again (docs/fleet.md)."""
    with Sandbox(work) as box:
        (box.repo / "panefleet.toml").write_text(FLEET.format(leader=box.leader), encoding="utf-8")
        out: dict[str, Any] = {"leader": box.leader, "repo": str(box.repo)}
        out["apply"] = box.pf("apply", "--yes", "-o", "json", timeout_s=300).as_json()
        workers = ["worker-1", "worker-2", "worker-3"]
        out["triggers"] = wait_triggers(box, workers, TRIGGER_WAIT_S if out["apply"]["code"] == 0 else 1)
        out["again"] = box.pf("apply", "-o", "json").as_json()
        out["status"] = status(box)
        # a follow-up to one Codex and the Claude worker: typed, submitted, confirmed (docs/reaching-workers.md)
        out["send"], out["follow_ups"] = {}, {}
        for worker in ("worker-2", "worker-3"):
            marker = f"follow-up {worker}: also list the files you changed"
            started = time.time()
            out["send"][worker] = box.pf("team", "send", TEAM, worker, marker, "--cwd", str(box.repo), "-o", "json",
                                         timeout_s=120).as_json()
            deadline = time.monotonic() + TRIGGER_WAIT_S
            while time.monotonic() < deadline and not box.mock.requests_containing(marker, prompt_only=True):
                time.sleep(0.5)
            time.sleep(2)  # a second turn of the same message would show by now
            # turns whose user message is exactly the follow-up (Codex also asks the model to title the
            # thread, quoting the prompt inside a longer one: not a turn)
            out["follow_ups"][worker] = len([r for r in box.mock.requests_containing(marker, prompt_only=True)
                                             if r.at >= started and r.prompt_text().strip() == marker])
        # a follow-up while the agent is busy (the model holds its answer to the one before open), with
        # `team watch` running: each agent's return to idle runs its hook
        hooks = box.work / "idle-hooks"
        watcher = subprocess.Popen([sys.executable, str(CLI), "team", "watch", TEAM, "--interval", "0.5", "--cwd",
                                    str(box.repo), "--tmux-socket", box.socket, "--on-idle",
                                    f'echo "$PANEFLEET_WORKER $PANEFLEET_STATE" >> {hooks}'],
                                   cwd=box.repo, env=box.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)  # its first snapshot: every worker idle after its follow-up
        box.mock.configure(delay_s=6.0)
        out["busy_send"], out["busy_follow_ups"] = {}, {}
        for worker in ("worker-2", "worker-3"):
            first, second = f"slow turn for {worker}", f"while busy {worker}: then run the tests"
            started = time.time()
            box.pf("team", "send", TEAM, worker, first, "--cwd", str(box.repo), "-o", "json", timeout_s=120)
            out["busy_send"][worker] = box.pf("team", "send", TEAM, worker, second, "--cwd", str(box.repo), "-o",
                                              "json", timeout_s=120).as_json()
            deadline = time.monotonic() + TRIGGER_WAIT_S
            while time.monotonic() < deadline and not [
                    r for r in box.mock.requests_containing(second, prompt_only=True) if second in r.prompt_text()]:
                time.sleep(0.5)
            time.sleep(8)  # the held answer ends; a second turn of the same message would show by now
            out["busy_follow_ups"][worker] = len([r for r in box.mock.requests_containing(second, prompt_only=True)
                                                  if r.at >= started and second in r.prompt_text()
                                                  and "User prompt:" not in r.prompt_text()])
        box.mock.configure(delay_s=0.0)
        time.sleep(3)
        watcher.send_signal(signal.SIGINT)
        watch_out, watch_err = watcher.communicate(timeout=30)
        out["watch"] = {"code": watcher.returncode, "stdout": watch_out, "stderr": watch_err[-2000:],
                        "hooks": hooks.read_text() if hooks.exists() else ""}
        return {**out, **observe(box)}


APPROVAL_FLEET = """[team.alpha]
leader_pane = "{leader}"

# workers of a role without execution tools run with their approvals on (pure/omx/launch/process.py)
[[team.alpha.workers]]
cli = "codex"
role = "explore"
count = 1
model = "mock-model"  # explore's own (gpt-5.6-luna) gets no tools from Codex when the catalog is the mock's

[[team.alpha.workers]]
cli = "claude"
role = "explore"
count = 1
"""
# Claude Code's default is its "auto mode", which asks a classifier, not the user; its settings choose the
# mode that asks the user (a Claude worker gets no arguments of the fleet file: docs/fleet.md)
CLAUDE_ASKS = '{"permissions": {"defaultMode": "default"}}\n'
APPROVAL_MARKER = "approval-probe"
NEEDS_INPUT_WITHIN_S = 2.0


def _screen_states(box: Sandbox, worker: str, until: set[str], timeout_s: float) -> list[tuple[float, str]]:
    """``team status`` again and again: (time, worker's agent state) for each change, until one in ``until``."""
    seen: list[tuple[float, str]] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = status(box).get("json")
        panes = answer.get("panes", []) if isinstance(answer, dict) else []
        state = next((str(p.get("screen")) for p in panes if p.get("name") == worker), "none")
        if not seen or seen[-1][1] != state:
            seen.append((time.time(), state))
        if state in until:
            break
    return seen


def _approve(box: Sandbox, worker: str, pane: str) -> tuple[list[tuple[float, str]], int]:
    """Approve as a user does: Enter on the highlighted first option once the dialog has settled, again
    when it is still there (Claude Code's dialogs drop a key pressed in their first moments, as its trust
    dialog does: tests/goldens/screens/README.md); then the states until idle, each change once."""
    time.sleep(1.0)
    states: list[tuple[float, str]] = []
    presses = 0
    while presses < 3:
        box.tmux("send-keys", "-t", pane, "Enter")
        presses += 1
        states += _screen_states(box, worker, {"busy", "idle"}, 5)
        if states[-1][1] != "needs_input":
            break
    states += _screen_states(box, worker, {"idle"}, 60)
    changes = [entry for i, entry in enumerate(states) if i == 0 or states[i - 1][1] != entry[1]]
    return changes, presses


@scenario("needs_input")
def needs_input(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    """A Codex and a Claude Code worker with their approvals on, and ``team watch`` with hooks: for each, a
    follow-up the mock model answers with a command to run; the agent asks for approval (needs_input);
    the test approves with Enter in its pane, as a user attached to it would; busy, then idle."""
    with Sandbox(work) as box:
        (box.repo / "panefleet.toml").write_text(APPROVAL_FLEET.format(leader=box.leader), encoding="utf-8")
        (box.home / ".claude").mkdir(exist_ok=True)
        (box.home / ".claude" / "settings.json").write_text(CLAUDE_ASKS, encoding="utf-8")
        out: dict[str, Any] = {"leader": box.leader, "repo": str(box.repo)}
        out["apply"] = box.pf("apply", "--yes", "-o", "json", timeout_s=300).as_json()
        workers = ["worker-1", "worker-2"]
        out["triggers"] = wait_triggers(box, workers, TRIGGER_WAIT_S if out["apply"]["code"] == 0 else 1)
        out["idle_before"] = {w: _screen_states(box, w, {"idle", "ready"}, 60) for w in workers}
        hooks = box.work / "hooks"
        record = f'echo "$PANEFLEET_WORKER $PANEFLEET_STATE" >> {hooks}'
        watcher = subprocess.Popen([sys.executable, str(CLI), "team", "watch", TEAM, "--interval", "0.5", "--cwd",
                                    str(box.repo), "--tmux-socket", box.socket, "--on-needs-input", record,
                                    "--on-idle", record],
                                   cwd=box.repo, env=box.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)  # its first snapshot
        out["approvals"] = {}
        for worker in workers:
            made = box.repo / f"approved-{worker}.txt"
            marker = f"{APPROVAL_MARKER} {worker}"
            box.mock.configure(tool_call=(marker, f"touch {made}"))
            seen: dict[str, Any] = {}
            seen["send"] = box.pf("team", "send", TEAM, worker, f"{marker}: create the file {made.name}", "--cwd",
                                  str(box.repo), "-o", "json", timeout_s=120).as_json()
            seen["states"] = _screen_states(box, worker, {"needs_input"}, 60)
            asked = [r.at for r in box.mock.requests_containing(marker, prompt_only=True)]
            seen["asked_at"] = min(asked) if asked else None  # the mock's answer: the tool call
            seen["ran_before_approval"] = made.exists()
            deadline = time.monotonic() + 15  # the user answers once told: when the watch's hook has run
            while time.monotonic() < deadline and f"{worker} needs_input" not in (
                    hooks.read_text() if hooks.exists() else ""):
                time.sleep(0.2)
            pane = next(w["pane_id"] for w in box.team_config(TEAM)["workers"] if w["name"] == worker)
            box.mock.configure(tool_call=None, delay_s=3.0)  # the answer to the tool's result is held back: busy
            seen["after_approval"], seen["enter_presses"] = _approve(box, worker, pane)
            box.mock.configure(delay_s=0.0)
            seen["ran_after_approval"] = made.exists()
            out["approvals"][worker] = seen
        time.sleep(2)  # the watch's next snapshots
        watcher.send_signal(signal.SIGINT)
        watch_out, watch_err = watcher.communicate(timeout=30)
        out["watch"] = {"code": watcher.returncode, "stdout": watch_out, "stderr": watch_err[-2000:],
                        "hooks": hooks.read_text() if hooks.exists() else ""}
        return {**out, **observe(box)}
