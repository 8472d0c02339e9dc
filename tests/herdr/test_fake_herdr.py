"""The fake herdr itself, against the sample answers (tests/herdr/fixtures/README.md) and the rules of
herdr 0.8.2 it models (tests/herdr/fake_herdr/fake.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.herdr.conftest import World
from tests.herdr.fake_herdr.fake import dec, enc

SAMPLES = [json.loads(line) for line in
           (Path(__file__).parent / "fixtures" / "herdr_0.8_samples.jsonl").read_text().splitlines()]


class Cli:
    def __init__(self, world: World) -> None:
        self.world = world

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["herdr", *args], capture_output=True, text=True, env=self.world.env, check=False)

    def ok(self, *args: str) -> dict[str, Any]:
        done = self("--session", "fleet", *args)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("\n") == 1 and done.stdout.endswith("\n")
        text = done.stdout.strip()
        data = json.loads(text)
        assert text == json.dumps(data, sort_keys=True, separators=(",", ":")), "one line, sorted keys"
        return data  # type: ignore[no-any-return]


@pytest.fixture
def cli(world: World) -> Cli:
    return Cli(world)


def shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def test_id_encoding_is_bijective_base_32() -> None:
    assert [enc(n) for n in (1, 9, 10, 31, 32, 33, 64, 65)] == ["1", "9", "A", "Z", "0", "11", "10", "21"]
    assert all(dec(enc(n)) == n for n in range(1, 3000))


def test_workspace_create_has_the_real_answers_shape(cli: Cli) -> None:
    data = cli.ok("workspace", "create", "--label", "handlab", "--no-focus")
    assert shape(data) == shape(SAMPLES[0])
    assert data["result"]["root_pane"]["pane_id"] == "w1:p1" and data["result"]["tab"]["tab_id"] == "w1:t1"


def test_process_info_has_the_real_answers_shape_without_argv0(cli: Cli) -> None:
    cli.ok("workspace", "create", "--label", "x")
    cli.ok("pane", "split", "--pane", "w1:p1", "--direction", "down")
    assert cli("--session", "fleet", "pane", "run", "w1:p2", "/usr/bin/python3", "x.py").returncode == 0
    data = cli.ok("pane", "process-info", "--pane", "w1:p2")
    assert shape(data) == shape(SAMPLES[1])
    procs = data["result"]["process_info"]["foreground_processes"]
    assert procs[0]["name"] == "python3" and "argv0" not in procs[0]


def test_ok_only_verbs_print_nothing_and_errors_are_json_on_stderr(cli: Cli) -> None:
    cli.ok("workspace", "create")
    done = cli("--session", "fleet", "workspace", "report-metadata", "w1", "--source", "s", "--token", "k=v")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    done = cli("--session", "fleet", "workspace", "report-metadata", "w9", "--source", "s", "--token", "k=v")
    assert done.returncode == 1 and done.stdout == ""
    assert json.loads(done.stderr) == {"error": {"code": "workspace_not_found", "message": "workspace w9 not found"},
                                       "id": "cli:request"}
    done = cli("--session", "fleet", "workspace", "close", "w9")
    assert json.loads(done.stderr)["id"] == "cli:workspace:close"


@pytest.mark.parametrize("args", [
    ("pane", "split", "--pane", "w1:p1"),
    ("pane", "report-agent", "w1:p1", "--agent", "a", "--state", "working"),
    ("workspace", "list", "extra"),
    ("workspace", "report-metadata", "w1", "--source", "s"),
    ("pane", "bogus"),
])
def test_usage_errors_are_plain_text_exit_2(cli: Cli, args: tuple[str, ...]) -> None:
    cli.ok("workspace", "create")
    done = cli("--session", "fleet", *args)
    assert done.returncode == 2 and done.stdout == "" and not done.stderr.startswith("{")


def test_session_is_stripped_anywhere_before_double_dash(cli: Cli, world: World) -> None:
    cli("workspace", "create", "--session", "other")
    cli("--session=fleet", "workspace", "create")
    assert [w["workspace_id"] for w in world.fake.workspaces()] == ["w1"]
    world.fake.session = "other"
    assert [w["workspace_id"] for w in world.fake.workspaces()] == ["w1"]
    # In `pane run`, a --session inside the follower argv is consumed by herdr, not typed.
    cli("--session", "fleet", "pane", "run", "w1:p1", "tool", "--session", "x")
    world.fake.session = "x"
    assert world.fake.workspaces() == []


def test_pane_run_joins_without_quoting(cli: Cli, world: World) -> None:
    cli.ok("workspace", "create")
    assert cli("--session", "fleet", "pane", "run", "w1:p1", "echo", "a b", "c").returncode == 0
    pane = world.fake.pane("w1:p1")
    assert pane["typed"] == ["echo a b c"] and pane["fg"][0]["argv"] == ["echo", "a", "b", "c"]


def test_split_without_target_follows_ui_focus_and_unknown_target_errors(cli: Cli, world: World) -> None:
    cli.ok("workspace", "create", "--label", "operator", "--focus")
    cli.ok("workspace", "create", "--label", "workers", "--no-focus")
    data = cli.ok("pane", "split", "--direction", "down")
    assert data["result"]["pane"]["workspace_id"] == "w1"
    done = cli("--session", "fleet", "pane", "split", "--pane", "w7:p1", "--direction", "down")
    assert json.loads(done.stderr)["error"] == {"code": "pane_not_found", "message": "pane not found"}


def test_split_inserts_after_target_and_pane_numbers_are_monotonic(cli: Cli) -> None:
    cli.ok("workspace", "create")
    cli.ok("pane", "split", "--pane", "w1:p1", "--direction", "down")
    cli.ok("pane", "split", "--pane", "w1:p1", "--direction", "down")
    cli.ok("pane", "close", "w1:p3")
    cli.ok("pane", "split", "--pane", "w1:p2", "--direction", "right")
    panes = cli.ok("pane", "list", "--workspace", "w1")["result"]["panes"]
    assert [p["pane_id"] for p in panes] == ["w1:p1", "w1:p2", "w1:p4"]
    assert all("label" not in p and "agent" not in p and "agent_session" not in p for p in panes)


def test_closing_the_last_pane_closes_the_workspace(cli: Cli) -> None:
    cli.ok("workspace", "create")
    cli.ok("tab", "create", "--workspace", "w1", "--no-focus")
    cli.ok("pane", "close", "w1:p1")
    assert cli.ok("workspace", "list")["result"]["workspaces"][0]["tab_count"] == 1
    cli.ok("pane", "close", "w1:p2")
    assert cli.ok("workspace", "list")["result"]["workspaces"] == []
    assert json.loads(cli("--session", "fleet", "workspace", "close", "w1").stderr)["error"]["code"] == \
        "workspace_not_found"


def test_metadata_rules(cli: Cli) -> None:
    cli.ok("workspace", "create")
    long = "p" * 100
    assert cli("--session", "fleet", "workspace", "report-metadata", "w1", "--source", "omp conductor",
               "--token", "a=b").returncode == 1
    assert cli("--session", "fleet", "workspace", "report-metadata", "w1", "--source", "s",
               "--token", "bad key=b").returncode == 1
    cli("--session", "fleet", "workspace", "report-metadata", "w1", "--source", "s", "--token", f"k={long}")
    ws = cli.ok("workspace", "list")["result"]["workspaces"][0]
    assert ws["tokens"] == {"k": "p" * 80}
    cli("--session", "fleet", "workspace", "report-metadata", "w1", "--source", "s", "--token", "k=  ")
    assert "tokens" not in cli.ok("workspace", "list")["result"]["workspaces"][0]


def test_agent_session_only_for_official_sources_unless_switched(cli: Cli, world: World) -> None:
    cli.ok("workspace", "create")
    base = ("--session", "fleet", "pane", "report-agent-session", "w1:p1")
    cli(*base, "--source", "panefleet", "--agent", "w", "--agent-session-id", "r1")
    assert "agent_session" not in cli.ok("pane", "list")["result"]["panes"][0]
    cli(*base, "--source", "herdr:claude", "--agent", "claude", "--agent-session-id", "s1")
    assert cli.ok("pane", "list")["result"]["panes"][0]["agent_session"]["value"] == "s1"
    world.fake.configure(store_custom_sessions=True)
    cli(*base, "--source", "panefleet", "--agent", "w", "--agent-session-id", "r1")
    assert cli.ok("pane", "list")["result"]["panes"][0]["agent_session"] == {
        "agent": "w", "kind": "id", "source": "panefleet", "value": "r1"}


def test_hook_authority_seq_rules_and_release_match(cli: Cli) -> None:
    cli.ok("workspace", "create")
    rep = ("--session", "fleet", "pane", "report-agent", "w1:p1", "--source", "s", "--agent", "a")
    cli(*rep, "--state", "working", "--seq", "5")
    cli(*rep, "--state", "idle")  # unsequenced after sequenced: ignored
    cli(*rep, "--state", "blocked", "--seq", "4")  # stale seq: ignored
    pane = cli.ok("pane", "list")["result"]["panes"][0]
    assert (pane["agent"], pane["agent_status"]) == ("a", "working")
    cli("--session", "fleet", "pane", "release-agent", "w1:p1", "--source", "s", "--agent", "other", "--seq", "6")
    assert cli.ok("pane", "list")["result"]["panes"][0]["agent"] == "a"
    cli("--session", "fleet", "pane", "release-agent", "w1:p1", "--source", "s", "--agent", "a", "--seq", "7")
    assert "agent" not in cli.ok("pane", "list")["result"]["panes"][0]


def test_restart_keeps_ids_and_labels_drops_tokens_hooks_processes_and_reissues_ids(cli: Cli, world: World) -> None:
    cli.ok("workspace", "create", "--label", "keep")
    cli.ok("workspace", "create", "--label", "gone")
    cli("--session", "fleet", "workspace", "report-metadata", "w1", "--source", "s", "--token", "k=v")
    cli.ok("pane", "rename", "w1:p1", "my", "label")
    cli("--session", "fleet", "pane", "report-agent", "w1:p1", "--source", "s", "--agent", "a", "--state", "working")
    cli("--session", "fleet", "pane", "run", "w1:p1", "panefleet", "herdr", "follow", "r")
    before = cli.ok("pane", "process-info", "--pane", "w1:p1")["result"]["process_info"]
    cli.ok("workspace", "close", "w2")
    world.fake.restart()
    ws = cli.ok("workspace", "list")["result"]["workspaces"]
    assert [(w["workspace_id"], w["label"], "tokens" in w) for w in ws] == [("w1", "keep", False)]
    pane = cli.ok("pane", "list")["result"]["panes"][0]
    assert pane["label"] == "my label" and "agent" not in pane and pane["agent_status"] == "unknown"
    after = cli.ok("pane", "process-info", "--pane", "w1:p1")["result"]["process_info"]
    assert after["shell_pid"] != before["shell_pid"]
    assert [p["name"] for p in after["foreground_processes"]] == ["bash"]
    assert cli.ok("workspace", "create")["result"]["workspace"]["workspace_id"] == "w2"


def test_fault_plan_modes(cli: Cli, world: World) -> None:
    cli.ok("workspace", "create")
    world.fake.fault("pane split", "garble")
    done = cli("--session", "fleet", "pane", "split", "--pane", "w1:p1", "--direction", "down")
    assert done.returncode == 0
    with pytest.raises(json.JSONDecodeError):
        json.loads(done.stdout)
    assert len(world.fake.panes()) == 2  # the split happened; only its answer was lost
    world.fake.fault("workspace list", "plain", message="connection reset")
    done = cli("--session", "fleet", "workspace", "list")
    assert (done.returncode, done.stderr) == (1, "connection reset\n")
    world.fake.fault("pane process-info", "pi_no_shell")
    info = cli.ok("pane", "process-info", "--pane", "w1:p1")["result"]["process_info"]
    assert "shell_pid" not in info
    world.fake.stop()
    done = cli("--session", "fleet", "workspace", "list")
    assert json.loads(done.stderr)["error"]["code"] == "server_not_running"


def test_fault_plan_process_modes(cli: Cli, world: World) -> None:
    import time

    cli.ok("workspace", "create")
    world.fake.fault("pane run", "run_exit")
    assert cli("--session", "fleet", "pane", "run", "w1:p1", "panefleet", "herdr", "follow", "r").returncode == 0
    assert [p["name"] for p in cli.ok("pane", "process-info", "--pane", "w1:p1")["result"]["process_info"][
        "foreground_processes"]] == ["bash"]
    world.fake.fault("pane run", "run_as", argv=["node", "/srv/other.js"])
    cli("--session", "fleet", "pane", "run", "w1:p1", "panefleet", "herdr", "follow", "r")
    procs = cli.ok("pane", "process-info", "--pane", "w1:p1")["result"]["process_info"]["foreground_processes"]
    assert [(p["name"], p["argv"]) for p in procs] == [("node", ["node", "/srv/other.js"])]
    world.fake.fault("pane list", "latency", ms=300)
    started = time.monotonic()
    cli.ok("pane", "list")
    assert time.monotonic() - started >= 0.3
    world.fake.configure(macos=True)
    procs = cli.ok("pane", "process-info", "--pane", "w1:p1")["result"]["process_info"]["foreground_processes"]
    assert procs[0]["argv0"] == "node"
    world.fake.fault("workspace list", "multiline")
    done = cli("--session", "fleet", "workspace", "list")
    assert done.stdout.count("\n") == 2
