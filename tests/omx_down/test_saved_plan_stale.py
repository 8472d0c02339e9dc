"""A saved plan is refused when any fact it read differs — its reads after its first change included
(shell/cli/saved_plan.py ``comparable``): the rule on a program of its own, then a saved scale-down
whose worker pane is killed before ``panefleet apply``, on a real private tmux server with the
placeholder agent, through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from pure import model as m
from pure import wire
from pure.omx.ids import uuid_text
from pure.program import Driver, Program, expect, is_mutation
from pure.tmux import list_panes_step
from shell.cli.saved_plan import CheckedExecutor, StalePlan, comparable
from tests.conftest import TmuxServer
from tests.omx_up.test_real_tmux import pf, pf_json, team_files

# ------------------------------------------------------------------------------- the rule, in memory

LIST = list_panes_step()
KILL = m.Run(tool="tmux", args=("kill-pane", "-t", "%2"), mutates=True)
PLANNED_AT = "2026-01-01T00:00:00.000Z"


def program() -> Program:
    yield from expect(m.AcquireLock(path="/s/.locks/x", timeout_ms=10, retry_ms=1), m.Ack)  # 0
    yield from expect(m.ListDir(path="/s/.locks"), m.Listing)  # 1 the run's own lock folder
    yield from expect(m.ReadFile(path="/s/a"), m.FileData)  # 2
    fresh = yield from expect(m.FreshId(), m.Value)  # 3
    yield from expect(m.WriteFile(path=f"/s/claims/{uuid_text(fresh.value)}", content="x"), m.Ack)  # 4 first change
    yield from expect(m.ReadFile(path="/s/b"), m.FileData)  # 5 not reached by the write
    yield from expect(m.ListDir(path="/s/claims"), m.Listing)  # 6 reached by the write
    now = yield from expect(m.Clock(), m.Value)  # 7
    yield from expect(m.Stat(path=f"/s/at-{now.value[:19]}"), m.Value)  # 8 names a later answer
    yield from expect(LIST, m.Proc)  # 9 no tmux change yet
    yield from expect(KILL, m.Proc)  # 10
    yield from expect(LIST, m.Proc)  # 11 after a program's change: nothing is a fact
    yield from expect(m.ReadFile(path="/s/b"), m.FileData)  # 12
    yield from expect(m.Run(tool="git", args=("symbolic-ref", "HEAD")), m.Proc)  # 13 a dry run predicts it
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue({"ok": True})))


class World:
    """Files, panes, ids and the clock; a real run's locks leave their folder (a dry run takes none)."""

    def __init__(self, files: dict[str, str], panes: dict[str, int], ids: Iterable[str], times: Iterable[str],
                 *, locks: bool) -> None:
        self.files, self.panes = dict(files), dict(panes)
        self.ids, self.times, self.locks = iter(ids), iter(times), locks
        self.steps: list[m.Step] = []

    def execute(self, step: m.Step) -> m.Observation:  # noqa: PLR0911
        self.steps.append(step)
        if isinstance(step, m.AcquireLock):
            if self.locks:
                self.files[f"{step.path}/owner"] = "4242.1.abc"
            return m.Ack(ok=True)
        if isinstance(step, m.ReadFile):
            return m.FileData(content=self.files.get(step.path))
        if isinstance(step, m.WriteFile):
            self.files[step.path] = step.content
            return m.Ack(ok=True)
        if isinstance(step, m.ListDir):
            names = {f[len(step.path) + 1:].split("/")[0] for f in self.files if f.startswith(step.path + "/")}
            return m.Listing(names=tuple(sorted(names)))
        if isinstance(step, m.Stat):
            return m.Value(value="file" if step.path in self.files else "absent")
        if isinstance(step, m.FreshId):
            return m.Value(value=next(self.ids))
        if isinstance(step, m.Clock):
            return m.Value(value=next(self.times))
        assert isinstance(step, m.Run)
        if step == KILL:
            self.panes.pop("%2", None)
        if step == LIST:
            return m.Proc(exit_code=0, stdout="".join(f"{p}\t0\t{pid}\n" for p, pid in self.panes.items()))
        return m.Proc(exit_code=0, stdout="main\n" if step.tool == "git" else "")


def drive(executor: Any) -> list[m.Entry]:
    driver, journal = Driver(program), []
    while isinstance(decision := driver.decision(), m.Next):
        step = decision.steps[0]
        observation = executor.execute(step)
        journal.append(m.Entry(step=step, observation=observation))
        driver.feed(step, observation)
    assert decision.outcome.status == "ok"
    return journal


FILES = {"/s/a": "a", "/s/b": "b"}
PANES = {"%1": 11, "%2": 12}


def planned() -> list[m.Entry]:
    """The plan: what a dry run reads (no lock folder, placeholder ids, git's answer predicted)."""
    plan = drive(World(FILES, PANES, ["dry-run-1"], [PLANNED_AT], locks=False))
    return [m.Entry(step=e.step, observation=m.Proc(exit_code=0)) if e.step.op == "run" and e.step.args[0] ==
            "symbolic-ref" else e for e in plan]


def apply(world: World) -> list[m.Entry]:
    return drive(CheckedExecutor(world, program, planned()))


def test_facts_are_the_reads_no_earlier_change_of_the_plan_reaches() -> None:
    facts = comparable(planned())
    assert [n for n, fact in enumerate(facts) if fact] == [2, 5, 8, 9]


def test_an_unchanged_plan_runs_with_its_real_ids_and_reads_its_later_facts_first() -> None:
    real_id = "0123456789abcdef" * 2
    world = World(FILES, PANES, [real_id], ["2026-01-01T00:07:00.000Z"], locks=True)
    journal = apply(world)
    write = m.WriteFile(path=f"/s/claims/{uuid_text(real_id)}", content="x")  # the id as a UUID, not as read
    assert journal[4].step == write
    # before the first change: the facts after it that name no later answer (5 and 9, not 8)
    assert world.steps[4:7] == [m.ReadFile(path="/s/b"), LIST, write]


def test_a_fact_after_the_first_change_that_differs_refuses_before_it() -> None:
    world = World({**FILES, "/s/b": "changed"}, PANES, ["f" * 32], [PLANNED_AT], locks=True)
    with pytest.raises(StalePlan) as stale:
        apply(world)
    assert stale.value.step == 6 and stale.value.fact.startswith("/s/b changed since the plan")
    assert not any(is_mutation(step) for step in world.steps)


def test_a_pane_gone_after_the_plan_refuses_before_the_first_change() -> None:
    world = World(FILES, {"%1": 11}, ["f" * 32], [PLANNED_AT], locks=True)
    with pytest.raises(StalePlan) as stale:
        apply(world)
    assert (stale.value.step, stale.value.fact) == (10, "pane %2 was live (pid 12) when the plan was made; "
                                                        "now it is absent")
    assert not any(is_mutation(step) for step in world.steps)


# ---------------------------------------------------------------------------- the CLI, on real tmux

Demo = tuple[dict[str, str], Path]


@pytest.fixture
def demo(tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str]) -> Demo:
    """Team ``demo``: a proven leader and three placeholder workers."""
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}
    leader = tmux_server.new_session("lead")
    work = tmp_path / "work"
    work.mkdir()
    code, init = pf_json("team", "init", "demo", "--leader-pane", leader, "--worker-cli", "placeholder",
                         "--cwd", str(work), env=env)
    assert code == 0, init
    code, up = pf_json("team", "scale-up", "demo", "--count", "3", "--cwd", str(work), env=env)
    assert code == 0 and up["newWorkerCount"] == 3, up
    return env, work


def workers(work: Path) -> dict[str, tuple[str, int]]:
    config = json.loads((work / ".omx/state/team/demo/config.json").read_text())
    return {w["name"]: (w["pane_id"], w["pid"]) for w in config["workers"]}


def plan_scale_down(env: dict[str, str], work: Path, plan: Path) -> None:
    done = pf("team", "scale-down", "demo", "--worker", "worker-2", "--force", "--cwd", str(work),
              "--plan-out", str(plan), env=env)
    assert done.returncode == 0 and "Plan: 0 to add" in done.stdout, done.stderr


@pytest.mark.tmux
def test_saved_scale_down_is_refused_when_its_worker_pane_was_killed(tmux_server: TmuxServer, demo: Demo,
                                                                    tmp_path: Path) -> None:
    env, work = demo
    plan = tmp_path / "p.json"
    plan_scale_down(env, work, plan)
    pane, pid = workers(work)["worker-2"]
    tmux_server.cmd("kill-pane", "-t", pane)
    before_files, before_panes = team_files(work), tmux_server.panes()
    audit = Path(env["PANEFLEET_STATE_DIR"]) / "audit"
    fact = f"pane {pane} was live (pid {pid}) when the plan was made; now it is absent"

    done = pf("apply", str(plan), env=env)
    assert done.returncode == 4 and done.stdout == "", done.stderr
    assert f"refused, nothing was changed: the plan is stale: {fact}" in done.stderr
    assert team_files(work) == before_files and tmux_server.panes() == before_panes
    runs = sorted(audit.glob("*scale_down*.jsonl"))
    steps = [wire.structure_as(json.loads(line)["step"], m.Step).unwrap()
             for line in runs[-1].read_text().splitlines() if json.loads(line).get("type") == "entry"]
    assert steps and not any(is_mutation(step) for step in steps)  # no change was even started

    code, answer = pf_json("apply", str(plan), env=env)
    assert code == 4 and answer["ok"] is False and answer["refused"] is True
    assert answer["error_code"] == "plan_stale" and fact in answer["error"]
    journal = json.loads(plan.read_text())["journal"]
    read = journal[answer["step"] - 1]["step"]
    assert read["args"][0] == "list-panes"  # the pane table scale-down reads after its first change
    assert any(is_mutation(wire.structure_as(e["step"], m.Step).unwrap()) for e in journal[:answer["step"] - 1])
    assert team_files(work) == before_files and tmux_server.panes() == before_panes
    left = workers(work)
    assert all(before_panes[left[name][0]] == (False, left[name][1]) for name in ("worker-1", "worker-3"))


@pytest.mark.tmux
def test_saved_scale_down_applies_when_nothing_changed(tmux_server: TmuxServer, demo: Demo, tmp_path: Path) -> None:
    env, work = demo
    plan = tmp_path / "p.json"
    plan_scale_down(env, work, plan)
    before = workers(work)
    done = pf("apply", str(plan), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("removed worker-2; 2 worker(s) remain")
    panes = tmux_server.panes()
    assert before["worker-2"][0] not in panes
    assert workers(work) == {name: before[name] for name in ("worker-1", "worker-3")}
    assert all(panes[pane] == (False, pid) for pane, pid in workers(work).values())
