"""A scripted scale-up of two interrupted before each one of its steps in turn (docs/design-notes.md,
"Interrupts"): it ends interrupted with the team as before — every lock it took released, every pane it
split killed after its proof, nothing it created left — or, when the interrupt came once its workers
were members, finished. The real-tmux form, at moments drawn from a real run's progress, is
tests/omx_up/test_interrupted_scale_up.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from pure import model as m
from pure.omx.scale_up import scale_up
from pure.program import INTERRUPTED, Driver
from tests.harness import ScenarioExecutor
from tests.omx_up.fixtures import StubTmux, UpTeam, request, rows

LIVE = (("%11", 42411), ("%21", 42421), ("%31", 43431), ("%32", 43432))


def _stub() -> StubTmux:
    return StubTmux(splits=("%31", "%32"), snapshot=lambda _call, killed: m.Proc(
        exit_code=0, stdout=rows(*[(pane, 0, pid) for pane, pid in LIVE if pane not in killed])))


def _interrupted_before(step: int, root: Path) -> tuple[UpTeam, StubTmux, list[m.Entry], m.Done]:
    """The scale-up, interrupted when ``step`` steps are done (never, past its end)."""
    team, tmux = UpTeam(root), _stub()
    executor = ScenarioExecutor(root, tmux)
    driver = Driver(lambda: scale_up(request(team, count=2)))
    journal: list[m.Entry] = []
    try:
        while isinstance(decision := driver.decision(), m.Next):
            if len(journal) == step:
                driver.interrupt()
                if not isinstance(decision := driver.decision(), m.Next):
                    break
            (pending,) = decision.steps
            journal.append(m.Entry(step=pending, observation=executor.execute(pending)))
            driver.feed(pending, journal[-1].observation)
    finally:
        executor.real.release_all()
    return team, tmux, journal, decision


def _locks_held(journal: list[m.Entry]) -> list[str]:
    held: Counter[str] = Counter()
    for entry in journal:
        if isinstance(entry.step, m.AcquireLock) and entry.observation == m.Ack(ok=True):
            held[entry.step.path] += 1
        elif isinstance(entry.step, m.ReleaseLock):
            held[entry.step.path] -= 1
    return sorted(path for path, count in held.items() if count)


def _tidying(step: m.Step) -> bool:
    """A step of the finished run's tidy-up: an intent's removal, a lock's release."""
    return isinstance(step, m.ReleaseLock) or (isinstance(step, m.RemovePath) and step.path.endswith(".intent"))


def test_a_scale_up_interrupted_before_any_of_its_steps_leaves_the_team_as_before(tmp_path: Path) -> None:
    *_, whole, done = _interrupted_before(-1, tmp_path / "whole")
    assert done.outcome.status == "ok", done
    for step in range(len(whole)):
        team, tmux, journal, done = _interrupted_before(step, tmp_path / f"at-{step}")
        where = (step, whole[step].step)
        assert _locks_held(journal) == [], where
        if done.outcome.status == "ok":  # it came once the workers were members: the finished run answers it
            assert all(_tidying(entry.step) for entry in whole[step:]), where
            assert team.worker_names() == ["worker-1", "worker-2", "worker-3"], where
            assert list((team.dir / "runtime").glob("*.intent")) == [], where
            continue
        assert done.outcome.message == INTERRUPTED, (where, done.outcome)
        assert team.worker_names() == ["worker-1"], where
        assert set(tmux.splits[:tmux.split_calls]) <= tmux.killed, where
        assert sorted(p.name for p in (team.dir / "workers").iterdir()) == ["worker-1"], where
        assert list((team.dir / "runtime").glob("worker-*-startup.sh")) == [], where
        assert list((team.dir / "tasks").iterdir()) == [], where
