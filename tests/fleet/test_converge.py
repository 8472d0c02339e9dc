"""The fleet planner alone (pure/fleet/converge.py): declared groups against observed facts."""

from __future__ import annotations

from pure.fleet.converge import Action, TeamFacts, WorkerFacts, converge
from pure.fleet.spec import TeamSpec, WorkerGroup


def team(*groups: tuple[str, str, int]) -> TeamSpec:
    return TeamSpec(name="alpha", tmux_session="alpha", cwd="/p",
                    groups=tuple(WorkerGroup(cli=cli, role=role, count=count) for cli, role, count in groups))


def worker(n: int, cli: str = "codex", role: str = "executor", pane: str = "live", why: str = "") -> WorkerFacts:
    return WorkerFacts(name=f"worker-{n}", index=n, cli=cli, role=role, pane_id=f"%{n}", pane=pane,  # type: ignore[arg-type]
                       why=why)


def facts(*workers: WorkerFacts, leader: str = "live", debt: tuple[str, ...] = ()) -> TeamFacts:
    return TeamFacts(exists=True, leader_pane="%0", leader=leader, workers=workers,  # type: ignore[arg-type]
                     next_index=max([w.index for w in workers], default=0) + 1, debt=debt)


def kinds(actions: tuple[Action, ...]) -> list[tuple[str, tuple[str, ...]]]:
    return [(a.kind, a.workers) for a in actions]


def test_no_team_is_made_with_every_worker() -> None:
    plan = converge(team(("codex", "executor", 2), ("claude", "reviewer", 1)), TeamFacts(exists=False))
    assert kinds(plan.actions) == [("create_team", ()), ("add", ("worker-1", "worker-2")), ("add", ("worker-3",))]
    assert (plan.to_add, plan.to_change, plan.to_remove) == (4, 0, 0)


def test_a_matching_team_is_converged() -> None:
    plan = converge(team(("codex", "executor", 2)), facts(worker(1), worker(2)))
    assert plan.converged and plan.actions == ()


def test_surplus_goes_highest_numbered_first_and_after_additions() -> None:
    spec = team(("codex", "executor", 1), ("claude", "executor", 1))
    plan = converge(spec, facts(worker(1), worker(2), worker(3)))
    assert kinds(plan.actions) == [("add", ("worker-4",)), ("remove", ("worker-2", "worker-3"))]
    assert plan.actions[1].panes == ("%2", "%3")
    assert plan.actions[1].why == ("codex executor has 1 declared", "codex executor has 1 declared")


def test_a_worker_of_no_group_is_removed() -> None:
    plan = converge(team(("claude", "executor", 1)), facts(worker(1)))
    assert kinds(plan.actions) == [("add", ("worker-2",)), ("remove", ("worker-1",))]
    assert plan.actions[1].why == ("no group declares codex executor",)


def test_gone_panes_are_respawned_unproven_ones_left_alone() -> None:
    plan = converge(team(("codex", "executor", 3)),
                    facts(worker(1, pane="gone", why="absent"), worker(2, pane="unproven", why="owner tag 'x'"),
                          worker(3)))
    assert kinds(plan.actions) == [("respawn", ("worker-1",))]
    assert plan.blocked == ("worker-2: pane %2 is not proven ours (owner tag 'x'): left alone",)
    assert not plan.converged


def test_a_surplus_gone_worker_is_removed_not_respawned() -> None:
    plan = converge(team(("codex", "executor", 1)), facts(worker(1), worker(2, pane="gone")))
    assert kinds(plan.actions) == [("remove", ("worker-2",))]


def test_a_lost_leader_and_debt_come_first() -> None:
    plan = converge(team(("codex", "executor", 1)), facts(worker(1, pane="gone"), leader="gone",
                                                           debt=("stray pane %7",)))
    assert kinds(plan.actions) == [("restore_leader", ()), ("sweep_debt", ()), ("respawn", ("worker-1",))]
    assert plan.to_change == 3


def test_an_unproven_leader_blocks() -> None:
    plan = converge(team(("codex", "executor", 1)), facts(worker(1), leader="unproven"))
    assert plan.actions == () and plan.blocked and not plan.converged
