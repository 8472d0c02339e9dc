"""A fleet file converged on a real tmux server with the placeholder agent (docs/fleet.md): ``apply``
from nothing and again, growing and shrinking, panes killed from outside, the server killed,
``destroy``, SIGKILL in the middle of an apply, malformed files and hostile values."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fleet.conftest import OWNER, Fleet

pytestmark = [pytest.mark.tmux, pytest.mark.tmux_executors("control"), pytest.mark.timeout(300)]
def mutating_steps(log: Path) -> list[dict[str, Any]]:
    from pure import model as m
    from pure import wire
    from pure.program import is_mutation

    steps = []
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") == "entry":
            step = wire.structure_as(entry["step"], m.Step).unwrap()
            if is_mutation(step):
                steps.append(entry["step"])
    return steps


def test_apply_from_nothing_then_no_changes(fleet: Fleet) -> None:
    fleet.write(3)
    first = fleet.run("apply", "--yes")
    assert first.returncode == 0, first.stderr
    assert "Plan: 4 to add, 0 to change, 0 to remove." in first.stdout
    assert set(fleet.workers()) == {"worker-1", "worker-2", "worker-3"}
    fleet.assert_proven()
    logs = fleet.audit_logs()
    again = fleet.run("apply")  # no --yes, no terminal: nothing to ask when nothing changes
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "No changes: the fleet matches panefleet.toml."
    new_logs = [log for log in fleet.audit_logs() if log not in logs]
    assert all(not mutating_steps(log) for log in new_logs), new_logs


def test_grow_then_shrink_kills_exactly_the_planned_panes(fleet: Fleet) -> None:
    fleet.write(3)
    assert fleet.run("apply", "--yes").returncode == 0
    fleet.write(5)
    code, plan = fleet.json("plan")
    assert code == 0 and (plan["add"], plan["change"], plan["remove"]) == (2, 0, 0), plan
    text = fleet.run("plan").stdout
    assert "+ worker-4  placeholder executor, new pane" in text and "Plan: 2 to add" in text
    assert fleet.run("apply", "--yes").returncode == 0
    assert len(fleet.workers()) == 5
    fleet.assert_proven()
    before = fleet.workers()
    fleet.write(1)
    code, plan = fleet.json("plan")
    doomed = {before[f"worker-{n}"][0] for n in (2, 3, 4, 5)}
    assert plan["remove"] == 4 and set(plan["teams"][0]["actions"][0]["panes"]) == doomed, plan
    text = fleet.run("plan").stdout
    for pane in doomed:
        assert f"pane {pane} killed after proof" in text
    panes_before = set(fleet.server.panes())
    assert fleet.run("apply", "--yes").returncode == 0
    assert panes_before - set(fleet.server.panes()) == doomed
    assert fleet.workers() == {"worker-1": before["worker-1"]}
    fleet.assert_proven()


def test_panes_killed_from_outside_are_respawned(fleet: Fleet) -> None:
    fleet.write(3)
    assert fleet.run("apply", "--yes").returncode == 0
    before = fleet.workers()
    for name in ("worker-1", "worker-3"):
        fleet.server.cmd("kill-pane", "-t", before[name][0])
    code, plan = fleet.json("plan")
    kinds = [(a["kind"], a["workers"]) for a in plan["teams"][0]["actions"]]
    assert kinds == [("respawn", ["worker-1"]), ("respawn", ["worker-3"])] and plan["change"] == 2, plan
    assert fleet.run("apply", "--yes").returncode == 0
    after = fleet.workers()
    assert after["worker-2"] == before["worker-2"]
    assert all(after[n] != before[n] for n in ("worker-1", "worker-3"))
    fleet.assert_proven()


def test_server_killed_whole_team_restored(fleet: Fleet) -> None:
    fleet.write(3)
    assert fleet.run("apply", "--yes").returncode == 0
    team = fleet.project / ".omx/state/team/alpha"
    inboxes = {n: (team / "workers" / n / "inbox.md").read_text() for n in fleet.workers()}
    tasks = sorted(p.name for p in (team / "tasks").iterdir())
    fleet.server.kill()
    code, plan = fleet.json("plan")
    assert plan["teams"][0]["serverRunning"] is False
    assert [a["kind"] for a in plan["teams"][0]["actions"]] == ["restore_leader", "respawn", "respawn", "respawn"]
    applied = fleet.run("apply", "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert set(fleet.workers()) == set(inboxes)
    assert {n: (team / "workers" / n / "inbox.md").read_text() for n in inboxes} == inboxes
    assert sorted(p.name for p in (team / "tasks").iterdir()) == tasks
    fleet.assert_proven()
    for name, (pane, _pid) in fleet.workers().items():  # the trigger was delivered again
        screen = fleet.server.cmd("capture-pane", "-p", "-t", pane).stdout
        assert "received:" in screen and name in screen, screen
    assert fleet.run("apply").stdout.startswith("No changes")


def test_destroy_keeps_leader_and_marks_stopped(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    leader = fleet.config()["leader_pane_id"]
    leader_pid = fleet.server.pane_pid(leader)
    assert fleet.run("destroy").returncode == 2  # no terminal and no --yes: nothing done
    assert len(fleet.ours()) == 3
    destroyed = fleet.run("destroy", "--yes", "--wait", "0.5")
    assert destroyed.returncode == 0, destroyed.stderr
    assert set(fleet.server.panes()) == {leader} and fleet.server.pane_pid(leader) == leader_pid
    team = fleet.project / ".omx/state/team/alpha"
    for name in ("worker-1", "worker-2"):
        request = json.loads((team / "workers" / name / "shutdown-request.json").read_text())
        assert request["requested_by"] == "leader-fixed" and request["requested_at"]
    code, listed = fleet.json("list")
    row = next(r for r in listed["teams"] if r["team"] == "alpha")
    assert row["stopped"] is True, listed
    restored = fleet.run("apply", "--yes")  # the same workers come back
    assert restored.returncode == 0 and set(fleet.workers()) == {"worker-1", "worker-2"}
    fleet.assert_proven()


def test_apply_without_terminal_needs_yes(fleet: Fleet) -> None:
    fleet.write(1)
    refused = fleet.run("apply")
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert not (fleet.project / ".omx").exists() and fleet.server.cmd("ls", check=False).returncode != 0


def test_sigkill_during_apply_next_apply_converges(fleet: Fleet) -> None:
    """Killed after a random number of steps (counted in the run's own audit logs, written as each step
    is answered), the next apply converges and nothing is left that no record names — a pane killed
    with its run between its split and its records included: it pinned itself (pure/omx/startup_script.py)."""
    rng = random.Random(int(os.environ.get("PANEFLEET_SIGKILL_SEED", "1902")))
    count, cut_short = 4, 0
    for trial in range(12):
        count = 4 if count != 4 else 2
        fleet.write(count)
        before = set(fleet.audit_logs())
        proc = subprocess.Popen([sys.executable, "-m", "cli", "apply", "--yes"], cwd=fleet.project, env=fleet.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        steps = rng.randint(2, 150)
        while proc.poll() is None and sum(len(log.read_text().splitlines()) for log in fleet.audit_logs()
                                          if log not in before) < steps:
            time.sleep(0.005)
        if proc.poll() is None:
            cut_short += 1
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        done = fleet.run("apply", "--yes")
        assert done.returncode == 0, f"trial {trial}: {done.stdout}{done.stderr}"
        assert fleet.run("apply").stdout.startswith("No changes"), trial
        assert len(fleet.workers()) == count
        fleet.assert_proven()
        members = {fleet.config()["leader_pane_id"], *(pane for pane, _pid in fleet.workers().values())}
        assert set(fleet.server.panes()) == members, trial  # nothing else on the server: no leftover
        team = fleet.project / ".omx/state/team/alpha/workers"
        assert {p.name for p in team.iterdir() if p.is_dir()} == set(fleet.workers()), trial
    assert cut_short >= 8, f"only {cut_short} of 12 applies were still running when killed"


def test_hostile_values_are_carried_literally(fleet: Fleet, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hostile = f"$(touch {marker}); `touch {marker}` 'q\" x"
    extra = (f"args = [{json.dumps(hostile)}, \"--flag\"]\nmodel = {json.dumps('m;' + hostile)}\n"
             f"env = {{ PANEFLEET_NOTE = {json.dumps(hostile + chr(10) + 'line2')} }}\n")
    fleet.write(1, task=f"fix it {hostile}", extra=extra)
    assert fleet.run("apply", "--yes").returncode == 0
    pane = fleet.workers()["worker-1"][0]
    screen = fleet.server.cmd("capture-pane", "-p", "-J", "-t", pane).stdout
    assert f"[{hostile}]" in screen and f"[m;{hostile}]" in screen, screen
    script = next((fleet.project / ".omx/state/team/alpha").rglob("worker-1-startup.sh"), None) or \
        next(fleet.project.rglob("worker-1-startup.sh"))
    assert "PANEFLEET_NOTE" in script.read_text()
    assert not marker.exists()
    task = json.loads(next((fleet.project / ".omx/state/team/alpha/tasks").glob("*.json")).read_text())
    assert hostile in task["subject"], task


MALFORMED = [
    ("[team.alpha\n", 1, ""),
    ("[team.alpha]\n[team.alpha]\n", 2, ""),
    ("[team.alpha]\ncolour = 1\n[[team.alpha.workers]]\ncli = 'codex'\ncount = 1\n", 2, "team.alpha.colour"),
    ("[team.alpha]\n[[team.alpha.workers]]\ncli = 'codex'\ncount = -1\n", 4, "team.alpha.workers[1].count"),
    ("[team.alpha]\n[[team.alpha.workers]]\ncli = 'codex'\ncount = 'two'\n", 4, "team.alpha.workers[1].count"),
    ("[team.alpha]\n[[team.alpha.workers]]\ncli = 'cobol'\ncount = 1\n", 3, "team.alpha.workers[1].cli"),
    ("[team.alpha]\n[[team.alpha.workers]]\ncli = 'codex'\ncount = 1\nmodle = 'x'\n", 5,
     "team.alpha.workers[1].modle"),
    ("[team.Alpha]\n[[team.Alpha.workers]]\ncli = 'codex'\ncount = 1\n", 1, "team.Alpha"),
    ("[team.alpha]\ntmux_session = 'a'\nleader_pane = '%1'\n[[team.alpha.workers]]\ncli = 'codex'\ncount = 1\n",
     3, "team.alpha.leader_pane"),
    ("[team.alpha]\n[[team.alpha.workers]]\ncli = 'codex'\ncount = 1\nenv = { 'A-B' = 'x' }\n", 5,
     "team.alpha.workers[1].env"),
]


@pytest.mark.parametrize(("text", "line", "key"), MALFORMED, ids=[str(n) for n in range(len(MALFORMED))])
def test_malformed_fleet_file_exit_2_naming_file_line_key(fleet: Fleet, text: str, line: int, key: str) -> None:
    fleet.file.write_text(text, encoding="utf-8")
    for command in (("plan",), ("apply", "--yes")):
        proc = fleet.run(*command)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        assert f"{fleet.file}:{line}:" in proc.stderr, proc.stderr
        assert key in proc.stderr, proc.stderr
    assert not (fleet.project / ".omx").exists()
    assert fleet.server.cmd("ls", check=False).returncode != 0  # no tmux server was started


def test_two_teams_apply_in_parallel(fleet: Fleet) -> None:
    socket = fleet.server.name
    fleet.file.write_text(
        f'[team.alpha]\ntmux_socket = "{socket}"\n[[team.alpha.workers]]\ncli = "placeholder"\ncount = 2\n\n'
        f'[team.beta]\ntmux_socket = "{socket}"\n[[team.beta.workers]]\ncli = "placeholder"\ncount = 1\n'
        f'[[team.beta.workers]]\ncli = "placeholder"\nrole = "test-engineer"\ncount = 1\n', encoding="utf-8")
    applied = fleet.run("apply", "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    beta = json.loads((fleet.project / ".omx/state/team/beta/config.json").read_text())
    assert sorted(w["role"] for w in beta["workers"]) == ["executor", "test-engineer"]
    assert len(fleet.workers()) == 2
    assert fleet.run("apply").stdout.startswith("No changes")


def test_saved_fleet_plan_is_carried_out_or_refused_when_stale(fleet: Fleet, tmp_path: Path) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    fleet.write(3)
    saved = tmp_path / "grow.json"
    assert fleet.run("plan", "--plan-out", str(saved)).returncode == 0
    victim = fleet.workers()["worker-1"][0]
    fleet.server.cmd("kill-pane", "-t", victim)  # a fact the plan read changes
    before = fleet.config()
    stale = fleet.run("apply", str(saved))
    assert stale.returncode == 4, stale.stdout + stale.stderr
    assert "the plan is stale" in stale.stderr and "worker-1" not in fleet.ours() and '"live" → "gone"' in stale.stderr
    assert fleet.config() == before
    fresh = tmp_path / "fresh.json"
    assert fleet.run("plan", "--plan-out", str(fresh)).returncode == 0
    applied = fleet.run("apply", str(fresh))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert len(fleet.workers()) == 3
    fleet.assert_proven()


def test_plan_finds_the_file_from_a_subfolder(fleet: Fleet) -> None:
    fleet.write(1)
    sub = fleet.project / "src" / "deep"
    sub.mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "cli", "plan", "-o", "json"], cwd=sub, env=fleet.env, text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["file"] == str(fleet.file) and answer["teams"][0]["project"] == str(fleet.project)
    missing = subprocess.run([sys.executable, "-m", "cli", "plan"], cwd=fleet.project.parent, env=fleet.env,
                             text=True, capture_output=True, timeout=60)
    assert missing.returncode == 2 and "no panefleet.toml in" in missing.stderr


def _on_a_terminal(fleet: Fleet, answer: str) -> tuple[int, str]:
    """``panefleet apply`` with a pseudo-terminal as its stdin and stdout, answering the question."""
    import pty

    primary, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "cli", "apply"], cwd=fleet.project, env=fleet.env,
                            stdin=secondary, stdout=secondary, stderr=secondary)
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + 60
    while b"Only 'yes' will be accepted" not in seen and time.monotonic() < deadline:
        seen += os.read(primary, 4096)
    os.write(primary, answer.encode() + b"\n")
    while proc.poll() is None or time.monotonic() < deadline:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(primary)
    return proc.wait(timeout=60), seen.decode(errors="replace")


def test_apply_on_a_terminal_asks_first(fleet: Fleet) -> None:
    fleet.write(1)
    code, screen = _on_a_terminal(fleet, "no")
    assert code == 4 and "Plan: 2 to add" in screen and "Apply cancelled: nothing was changed." in screen, screen
    assert not (fleet.project / ".omx").exists()
    code, screen = _on_a_terminal(fleet, "yes")
    assert code == 0 and "Apply complete." in screen, screen
    fleet.assert_proven()


def test_destroy_purge_removes_the_state(fleet: Fleet) -> None:
    fleet.write(1)
    assert fleet.run("apply", "--yes").returncode == 0
    leader = fleet.config()["leader_pane_id"]
    purged = fleet.run("destroy", "--yes", "--no-wait", "--purge")
    assert purged.returncode == 0, purged.stderr
    assert not (fleet.project / ".omx/state/team/alpha").exists()
    assert set(fleet.server.panes()) == {leader}
    again = fleet.run("apply", "--yes")  # a new team, in a new window of the session that is still there
    assert again.returncode == 0, again.stdout + again.stderr
    assert fleet.config()["leader_pane_id"] != leader and leader in fleet.server.panes()
    fleet.assert_proven()


def test_a_killed_leader_pane_is_restored_in_its_session(fleet: Fleet) -> None:
    fleet.write(1)
    assert fleet.run("apply", "--yes").returncode == 0
    old = fleet.config()["leader_pane_id"]
    fleet.server.cmd("kill-pane", "-t", old)
    code, plan = fleet.json("plan")
    assert [a["kind"] for a in plan["teams"][0]["actions"]] == ["restore_leader"], plan
    assert fleet.run("apply", "--yes").returncode == 0
    new = fleet.config()["leader_pane_id"]
    assert new != old and fleet.server.owner(new) == OWNER
    session = fleet.server.cmd("display-message", "-p", "-t", new, "#{session_name}").stdout.strip()
    assert session == "alpha"
    fleet.assert_proven()


def test_a_missing_team_folder_is_refused_before_any_pane_is_made(fleet: Fleet) -> None:
    fleet.file.write_text(f'[team.alpha]\ntmux_socket = "{fleet.server.name}"\ncwd = "missing"\n'
                          '[[team.alpha.workers]]\ncli = "placeholder"\ncount = 1\n', encoding="utf-8")
    refused = fleet.run("apply", "--yes")
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert f"The working directory {fleet.project / 'missing'} does not exist" in refused.stderr
    assert fleet.server.cmd("ls", check=False).returncode != 0  # no tmux server was even started


def test_what_a_killed_run_left_is_named_in_the_plan_and_swept(fleet: Fleet) -> None:
    """A worker folder no member owns (what a killed scale-up leaves) is named in the plan by the
    worker's name, and `apply` sweeps it."""
    fleet.write(1)
    assert fleet.run("apply", "--yes").returncode == 0
    left = fleet.project / ".omx/state/team/alpha/workers/worker-9"
    left.mkdir()
    planned = fleet.run("plan")
    assert planned.returncode == 0 and "debt swept: leftover worker worker-9" in planned.stdout, planned.stdout
    assert fleet.run("apply", "--yes").returncode == 0
    assert not left.exists()
    fleet.assert_proven()


def test_a_worker_a_rollback_kept_is_swept_and_replaced(fleet: Fleet) -> None:
    """A member a rolled-back scale-up had to keep (pure/omx/kept_workers.py: its record written here
    as that rollback writes it) is not one of its group's workers: the plan sweeps it and adds one in
    its place, and after `apply` the fleet matches the file."""
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    pane, pid = fleet.workers()["worker-2"]
    runtime = fleet.project / ".omx/state/team/alpha/runtime"
    (runtime / "worker-2.intent").write_text(json.dumps({
        "kind": "kept", "worker": "worker-2", "script": str(runtime / "worker-2-startup.sh"), "pane_id": pane,
        "pid": pid, "debt": ["pane_teardown_failed"], "reason": "scale_up_dispatch_failed:worker-2:test"}))
    planned = fleet.run("plan")
    assert planned.returncode == 0 and "debt swept: kept worker worker-2" in planned.stdout, planned.stdout
    assert "1 to add" in planned.stdout, planned.stdout
    applied = fleet.run("apply", "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert set(fleet.workers()) == {"worker-1", "worker-3"} and pane not in fleet.server.panes()
    assert not (runtime / "worker-2.intent").exists()
    assert fleet.run("plan").stdout.strip() == "No changes: the fleet matches panefleet.toml."
    fleet.assert_proven()
