"""``panefleet herdr …`` as a person or a program runs it: a real process, the fake herdr on PATH."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import run_cli
from tests.herdr.conftest import World

ROOT = Path(__file__).resolve().parents[2]


class Panefleet:
    def __init__(self, world: World) -> None:
        self.world = world
        self.env = {**world.env, "PANEFLEET_FOLLOWER": "panefleet"}

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        group = [] if args[:1] in (("apply",), ("show",)) else ["herdr"]
        return run_cli([*group, *args], env=env or self.env)

    def json(self, *args: str) -> Any:
        done = self(*args, "-o", "json")
        assert done.stdout.count("\n") == 1, (done.stdout, done.stderr)
        return json.loads(done.stdout)


@pytest.fixture
def pf(world: World) -> Panefleet:
    return Panefleet(world)


def test_run_set_and_reconcile_json(pf: Panefleet, world: World) -> None:
    assert pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "run-aaaa-1",
              "--pid", "4242").returncode == 0
    assert pf("run", "start", "--project", "alpha", "--issue", "6", "--attempt", "1", "--run-id",
              "run-bbbb-2").returncode == 0
    listed = pf.json("run", "list")
    assert [r["run_id"] for r in listed["runs"]] == ["run-aaaa-1", "run-bbbb-2"]
    result = pf.json("reconcile")
    assert result["ok"] is True
    assert [o["kind"] for o in result["outcomes"]] == ["reassociated", "untracked", "stale-released"]
    assert set(result["outcomes"][0]) == {"kind", "runId", "paneId", "label"}
    assert pf.json("reconcile")["outcomes"][0] == {"kind": "intact", "runId": "run-aaaa-1",
                                                   "paneId": result["outcomes"][0]["paneId"]}
    assert pf("run", "settle", "run-aaaa-1").returncode == 0
    text = pf("reconcile", "--managed", "alpha")
    assert text.returncode == 0
    assert "closed    pane w1:p2 of run run-aaaa-1: settled" in text.stdout
    assert "removed   workspace w1 of alpha (herdr closed it with its last pane)" in text.stdout
    assert world.fake.workspaces() == []


def test_reconcile_failure_json_and_exit_code(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    world.fake.fault("workspace list", "garble")
    done = pf("reconcile", "-o", "json")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert result["ok"] is False and result["error"].startswith("herdr workspace list was unreadable")


def test_a_pane_reconcile_could_not_close_is_debt_exit_3_until_a_pass_closes_it(pf: Panefleet, world: World) -> None:
    for run_id in ("run-aaaa-1", "run-bbbb-2"):
        pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", run_id, "--pid", "1")
    converged = pf.json("reconcile")
    pane = next(o["paneId"] for o in converged["outcomes"] if o["runId"] == "run-bbbb-2")
    pf("run", "settle", "run-bbbb-2")
    world.fake.fault("pane close", "error", code="pane_busy", message="busy")
    text = pf("reconcile")
    assert text.returncode == 3, text
    assert f"debt: herdr_pane {pane}: herdr pane close failed: pane_busy: busy" in text.stderr
    shown = pf("status")  # the pass's debt is recorded: status names it between passes
    assert shown.returncode == 3 and f"debt: herdr_pane {pane}: herdr pane close failed: pane_busy: busy" in shown.stdout
    world.fake.fault("pane close", "error", code="pane_busy", message="busy")
    done = pf("reconcile", "-o", "json")
    assert done.returncode == 3 and json.loads(done.stdout)["ok"] is True
    assert pf.json("status")["debt"][0]["subject"] == pane
    assert pf("reconcile").returncode == 0  # the fault is gone: the next pass closes it
    cleared = pf("status", "-o", "json")
    assert cleared.returncode == 0 and json.loads(cleared.stdout)["debt"] == []


def test_missing_herdr_binary_is_named(pf: Panefleet) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    env = {**pf.env, "PATH": "/nonexistent"}
    done = pf("reconcile", "-o", "json", env=env)
    assert done.returncode == 1
    answer = json.loads(done.stdout)  # before any herdr call (every command: tests/herdr/test_without_herdr.py)
    assert (answer["ok"], answer["error_code"]) == (False, "herdr_not_found")
    assert answer["error"].startswith("herdr was not found on PATH. Herdr is a terminal workspace manager")


def test_corrupt_store_is_a_typed_error(pf: Panefleet, world: World) -> None:
    world.state_dir.mkdir(parents=True, exist_ok=True)
    (world.state_dir / "herdr.sqlite3").write_bytes(b"garbage" * 1000)
    world.store.close()
    done = pf("reconcile", "-o", "json")
    assert done.returncode == 1
    assert "not a usable panefleet store" in json.loads(done.stdout)["error"]
    assert (world.state_dir / "herdr.sqlite3").read_bytes() == b"garbage" * 1000


def test_dry_run_changes_nothing_and_predicts_the_plan(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    plan = pf.json("reconcile", "--dry-run")
    assert plan["dryRun"] is True and plan["predicted"]["ok"] is True
    steps = [e["step"] for e in plan["steps"] if e["change"]]
    assert [s["args"][2:4] for s in steps if s["op"] == "run"] == [
        ["workspace", "create"], ["workspace", "report-metadata"], ["pane", "split"], ["pane", "rename"],
        ["pane", "report-agent-session"], ["pane", "run"], ["pane", "report-agent"], ["pane", "close"]]
    assert world.fake.workspaces() == []
    assert world.store.run("r1").pane_id is None
    assert [c[2:4] for c in world.fake.calls()] == [["workspace", "list"]]


def test_open_retire_status_follow(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    opened = pf.json("open", "r1")
    assert opened["kind"] == "tracked"
    world.fake.reset_calls()
    status = pf.json("status")
    assert status["workspaces"][0]["workspaceId"] == opened["workspaceId"]
    assert status["runs"][0]["paneId"] == opened["paneId"] and status["runs"][0]["pulse"] == "alive"
    assert [p.get("cause") for p in status["workspaces"][0]["panes"]] == ["unidentified", None]  # root shell
    assert world.mutations() == []
    follow = pf("follow", "r1", "--once")
    assert follow.returncode == 0 and "run r1  alpha #5 attempt 1  live" in follow.stdout
    retired = pf.json("retire", "r1")
    assert retired == {"ok": True, "kind": "released", "paneId": opened["paneId"]}
    assert pf.json("retire", "r1") == {"ok": True, "kind": "none"}


def test_session_flag_and_env(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1",
       "--session", "other")
    pf("reconcile", "--session", "other")
    world.fake.session = "other"
    assert len(world.fake.workspaces()) == 1
    world.fake.session = "fleet"
    assert world.fake.workspaces() == []
    env = {k: v for k, v in pf.env.items() if k != "HERDR_SESSION"}
    pf("run", "start", "--project", "alpha", "--issue", "6", "--attempt", "1", "--run-id", "r2", "--pid", "2",
       env=env)
    pf("reconcile", env=env)
    assert len(world.fake.workspaces()) == 1  # default session is fleet
    assert world.store.run("r2").session == "fleet" and world.store.run("r1").session == "other"


def test_sessions_never_touch_each_others_records(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    opened = pf.json("open", "r1")
    assert opened["kind"] == "tracked"
    recorded = world.recorded()
    status = pf.json("status", "--session", "other")
    assert status["runs"] == [] and status["workspaces"] == []
    assert pf.json("run", "list", "--session", "other")["runs"] == []
    result = pf.json("reconcile", "--session", "other", "--managed", "alpha")
    assert result == {"ok": True, "outcomes": []}
    world.fake.session = "other"
    assert world.fake.workspaces() == []
    world.fake.session = "fleet"
    assert world.store.run("r1").pane_id == opened["paneId"] and world.recorded() == recorded
    refused = pf("open", "r1", "--session", "other")
    assert refused.returncode == 4 and "belongs to herdr session 'fleet'" in refused.stderr and refused.stdout == ""
    assert pf.json("reconcile")["outcomes"][0] == {"kind": "intact", "runId": "r1", "paneId": opened["paneId"]}


@pytest.mark.parametrize("args", [
    ("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "has space"),
    ("run", "start", "--project", "p" * 81, "--issue", "5", "--attempt", "1", "--run-id", "r"),
    ("reconcile", "--max-attempts", "-1"),
    ("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r", "--pid", "0"),
    ("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r", "--pid", "-1"),
    ("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "-1", "--run-id", "r"),
    ("run", "start", "--project", "alpha", "--issue", "-5", "--attempt", "1", "--run-id", "r"),
])
def test_bad_arguments_are_usage_errors(pf: Panefleet, args: tuple[str, ...]) -> None:
    assert pf(*args).returncode == 2


def test_concurrent_reconciles_serialise_on_the_fleet_lock(pf: Panefleet, world: World) -> None:
    for n in range(4):
        pf("run", "start", "--project", "alpha", "--issue", str(n), "--attempt", "1", "--run-id", f"r{n}",
           "--pid", str(100 + n))
    procs = [subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "herdr", "reconcile", "-o", "json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=pf.env, cwd=ROOT)
             for _ in range(2)]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(r["ok"] for r in results)
    kinds = sorted(tuple(sorted({o["kind"] for o in r["outcomes"]})) for r in results)
    assert kinds == [("intact",), ("reassociated", "stale-released")]
    labels = [p["label"] for p in world.fake.panes()]
    assert sorted(labels) == sorted(f"worker-alpha-{n}-a1-r{n}" for n in range(4))
    assert not (world.state_dir / "herdr.lock").exists()


def test_a_held_lock_refuses_without_touching_herdr(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from pure.herdr import fleet
    from shell.run import fs

    monkeypatch.setattr(fleet.programs, "LOCK_TIMEOUT_MS", 300)
    lock = world.root / "herdr.lock"
    fs.acquire_lock(lock, timeout_ms=1000, retry_ms=50, stale_ms=300_000, token="someone-else")
    world.start("r1")
    request = fleet.ReconcileRequest(session="fleet", follower=("panefleet",), lock_path=str(lock))
    done, journal = world.op("herdr.reconcile", request)
    assert done.outcome.status == "refused" and done.outcome.result["ok"] is False
    assert "holds" in done.outcome.result["error"]
    assert world.calls() == []


def test_every_herdr_run_is_replayable_from_its_audit_log(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    world.fake.fault("pane rename", "error")
    pf("reconcile")
    pf("reconcile")
    logs = sorted((world.state_dir / "audit").glob("*herdr-reconcile*.jsonl"))
    assert len(logs) == 2
    for log in logs:
        done = subprocess.run([sys.executable, str(ROOT / "cli.py"), "replay", str(log), "-o", "json"],
                              capture_output=True, text=True, env=pf.env, cwd=ROOT, check=False)
        assert json.loads(done.stdout)["ok"] is True, done.stdout


def test_open_with_an_unreadable_create_answer_leaves_nothing_and_says_so(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "gamma", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "4242")
    world.fake.fault("workspace create", "garble")
    done = pf("open", "r1")
    assert done.returncode == 1
    assert "closed workspace w1, which herdr created anyway; nothing was left behind" in done.stderr
    assert world.fake.workspaces() == []
    world.fake.fault("workspace create", "garble")
    world.fake.fault("workspace close", "error")
    done = pf("open", "r1")
    assert "left behind in herdr: w2" in done.stderr and "nothing was left behind" not in done.stderr
    pf("run", "settle", "r1")
    assert pf("reconcile", "--managed", "gamma").returncode == 0
    assert world.fake.workspaces() == []


def test_run_start_refuses_to_rewrite_a_run_with_another_identity(pf: Panefleet, world: World) -> None:
    start = ("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "7")
    assert pf(*start).returncode == 0
    opened = pf.json("open", "r1")
    assert pf(*start).returncode == 0  # an identical re-start is idempotent
    assert world.store.run("r1").pane_id == opened["paneId"]
    for change in (("--project", "beta"), ("--issue", "6"), ("--attempt", "2")):
        args = list(start)
        args[args.index(change[0]) + 1] = change[1]
        done = pf(*args)
        assert done.returncode == 4 and "refusing to rewrite" in done.stderr, done
    done = pf(*start, "--session", "other")
    assert done.returncode == 4
    record = world.store.run("r1")
    assert (record.project, record.issue, record.attempt, record.session) == ("alpha", 5, 1, "fleet")
    assert pf.json("reconcile")["outcomes"][0] == {"kind": "intact", "runId": "r1", "paneId": opened["paneId"]}


@pytest.mark.parametrize("interval", ["inf", "1e400", "nan", "-1", "0", "0.01", "1e9"])
def test_follow_refuses_absurd_intervals_as_usage_errors(pf: Panefleet, interval: str) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    done = pf("follow", "r1", "--interval", interval)
    assert done.returncode == 2 and "--interval" in done.stderr and "Traceback" not in done.stderr


def test_follow_stops_when_the_run_settles_or_leaves_or_stdout_closes(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    cmd = [sys.executable, str(ROOT / "cli.py"), "herdr", "follow", "r1", "--interval", "0.1"]
    follower = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=pf.env, cwd=ROOT)
    assert follower.stdout is not None
    assert "live" in follower.stdout.readline()
    pf("run", "settle", "r1")
    out, err = follower.communicate(timeout=30)
    assert follower.returncode == 0 and "settled" in out and err == ""
    # Already settled: one line, then stop.
    done = subprocess.run(cmd, capture_output=True, text=True, env=pf.env, cwd=ROOT, timeout=30, check=False)
    assert done.returncode == 0 and done.stdout.count("\n") == 1
    # Nobody reading: no traceback, exit 0.
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    closed = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=pf.env, cwd=ROOT)
    assert closed.stdout is not None and closed.stderr is not None
    closed.stdout.close()
    assert closed.wait(timeout=30) == 0
    assert b"Traceback" not in closed.stderr.read()
    # The run leaves the store while followed.
    follower = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=pf.env, cwd=ROOT)
    assert follower.stdout is not None
    assert "live" in follower.stdout.readline()
    world.store.conn.execute("DELETE FROM runs WHERE run_id = 'r1'")
    out, _ = follower.communicate(timeout=30)
    assert follower.returncode == 0 and "no longer in the store" in out


def test_exit_codes_and_ok_of_open_and_follow(pf: Panefleet, world: World) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "nopid")
    done = pf("open", "nopid", "-o", "json")
    assert done.returncode == 4  # refused before any herdr call: nothing to leave behind
    result = json.loads(done.stdout)
    assert result["ok"] is False and result["kind"] == "unavailable" and "pid" in result["reason"]
    assert world.fake.calls() == []
    assert pf("open", "nosuch").returncode == 4
    assert pf("follow", "nosuch").returncode == 4
    assert pf("follow", "nosuch", "--once").returncode == 4
    assert pf("retire", "nosuch").returncode == 4
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    opened = pf.json("open", "r1")
    assert opened["ok"] is True and opened["kind"] == "tracked"
    world.fake.fault("pane split", "error")
    pf("run", "start", "--project", "alpha", "--issue", "6", "--attempt", "1", "--run-id", "r2", "--pid", "2")
    failed = pf("open", "r2", "-o", "json")
    assert failed.returncode == 1 and json.loads(failed.stdout)["ok"] is False


def test_reconcile_text_and_summary_agree_and_status_pluralises(pf: Panefleet) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    pf("run", "start", "--project", "alpha", "--issue", "6", "--attempt", "1", "--run-id", "r2")
    text = pf("reconcile").stdout.splitlines()
    assert text[0].startswith("opened    r1: new pane w1:p2")
    assert text[1].startswith("no pane   r2:") and text[2].startswith("closed    pane w1:p1")
    assert text[-1] == "reconcile: 1 opened, 1 without a pane, 1 closed"
    assert pf("reconcile").stdout.splitlines()[-1] == "reconcile: 1 kept, 1 without a pane"
    pf("run", "settle", "r2")
    status = pf("status").stdout.splitlines()
    assert status[0] == "herdr session fleet: 1 live run, 1 settled"
    assert "alpha: 1 pane" in status[2]


def test_run_start_and_settle_dry_run_change_nothing(pf: Panefleet, world: World) -> None:
    plan = pf.json("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1",
                   "--dry-run")
    assert plan["ok"] is True and plan["predicted"] == {"ok": True, "runId": "r1"}
    assert [(c["action"], c["kind"], c["subject"]) for c in plan["changes"]] == [("add", "run", "r1")]
    assert world.store.run("r1") is None
    text = pf("run", "settle", "r1", "--dry-run")
    assert text.returncode == 4 and "no run 'r1' in the store" in text.stdout
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1")
    text = pf("run", "settle", "r1", "--dry-run")
    assert text.returncode == 0 and "~ run r1" in text.stdout and "settled" in text.stdout
    assert world.store.run("r1").settled is False


def test_saved_herdr_plans_apply_or_refuse_when_stale(pf: Panefleet, world: World, tmp_path: Path) -> None:
    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    plan_file = tmp_path / "reconcile.plan"
    shown = pf("reconcile", "--plan-out", str(plan_file))
    assert shown.returncode == 0 and "+ pane" in shown.stdout and "+ workspace alpha-workers" in shown.stdout
    assert world.fake.workspaces() == []
    done = pf("apply", str(plan_file), "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outcomes"][0]["kind"] == "reassociated"
    assert "changesNotAsPlanned" not in json.loads(done.stdout), done.stdout  # its effects are the plan's
    assert world.store.run("r1").pane_id is not None
    # the run set changes between plan and apply: refused, nothing done
    stale_file = tmp_path / "stale.plan"
    assert pf("reconcile", "--plan-out", str(stale_file)).returncode == 0
    pf("run", "start", "--project", "alpha", "--issue", "6", "--attempt", "1", "--run-id", "r2", "--pid", "2")
    world.fake.reset_calls()
    done = pf("apply", str(stale_file))
    assert done.returncode == 4 and done.stdout == "" and "the plan is stale" in done.stderr
    assert world.mutations() == [] and world.store.run("r2").pane_id is None
    # another panefleet state dir: refused before anything is read
    elsewhere = {**pf.env, "PANEFLEET_STATE_DIR": str(tmp_path / "other")}
    done = pf("apply", str(stale_file), env=elsewhere)
    assert done.returncode == 4 and "made for the state root" in done.stderr


@pytest.mark.tmux
@pytest.mark.tmux_executors("control")  # the tmux server is only the terminal: panefleet makes no tmux call
def test_status_watch_redraws_on_a_terminal_and_prints_once_without_one(pf: Panefleet, world: World,
                                                                        tmux_server: Any) -> None:
    import shlex
    import time

    pf("run", "start", "--project", "alpha", "--issue", "5", "--attempt", "1", "--run-id", "r1", "--pid", "1")
    once = pf("status", "--watch")  # no terminal: one snapshot, then exit
    assert once.returncode == 0 and "refreshed" not in once.stdout and "r1" in once.stdout
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in pf.env.items()
                       if k in ("PATH", "FAKE_HERDR_STATE", "PANEFLEET_STATE_DIR", "HERDR_SESSION"))
    command = f"env {exports} {shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'cli.py'))} herdr status --watch " \
              "--interval 0.5"
    viewer = tmux_server.cmd("new-session", "-d", "-s", "view", "-x", "160", "-y", "40", "-P", "-F", "#{pane_id}",
                             command).stdout.strip()
    deadline = time.monotonic() + 20
    screen = ""
    while time.monotonic() < deadline:
        screen = tmux_server.cmd("capture-pane", "-p", "-t", viewer).stdout
        if screen.count("refreshed") == 1 and "r1" in screen:
            break
        time.sleep(0.2)
    assert screen.count("refreshed") == 1 and "r1" in screen, screen
    tmux_server.cmd("send-keys", "-t", viewer, "C-c")
