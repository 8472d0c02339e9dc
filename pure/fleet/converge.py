"""What converging a team to its fleet-file declaration takes: observed facts in, actions out.

``converge(spec, facts)`` compares one team's declaration (``pure/fleet/spec.py``) with what was
read of it (:class:`TeamFacts`: its records and the proof of each recorded pane) and answers a
:class:`TeamPlan`, in the order the shell carries it out (``shell/cli/fleet.py``):

1. ``create_team``    no team state: a leader pane (a new tmux session, or a window of an existing
                      one) and oh-my-codex team state, as ``team init`` makes them
2. ``restore_leader`` the recorded leader pane is gone (tmux server restarted, machine rebooted)
3. ``sweep_debt``     cleanup debt, stray panes, leftover worker folders or an undelivered task are recorded
4. ``respawn``        a declared worker whose pane is gone gets a new proven pane (same name,
                      identity, inbox and startup script; its task is delivered again)
5. ``add``            a group has fewer workers than declared: a scale-up of the difference
6. ``remove``         workers beyond their group's count, or of no declared group: a scale-down of
                      exactly those (their panes killed after proof)

Adding comes before removing, so a team whose workers all change group never drops to no worker
(oh-my-codex's scale-down keeps at least one). Workers are matched to groups by (CLI, role); within
a group the lowest-numbered workers are kept. A pane that is live but not proven ours (another pid,
another owner) is never touched: it is a ``blocked`` note and the team is not converged.
"""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from pure.fleet.spec import TeamSpec, WorkerGroup

PaneState = Literal["live", "gone", "unproven"]
ActionKind = Literal["create_team", "restore_leader", "sweep_debt", "respawn", "add", "remove"]


@frozen(kw_only=True)
class WorkerFacts:
    name: str
    index: int
    cli: str
    role: str
    pane_id: str | None
    pane: PaneState
    why: str = ""  # the proof's words for a pane that is not live and ours


@frozen(kw_only=True)
class TeamFacts:
    exists: bool
    leader_pane: str | None = None
    leader: PaneState = "gone"
    leader_why: str = ""
    workers: tuple[WorkerFacts, ...] = ()
    next_index: int = 1
    debt: tuple[str, ...] = ()  # what the team's cleanup debt, stray panes and leftovers say, one line each


@frozen(kw_only=True)
class Action:
    kind: ActionKind
    workers: tuple[str, ...] = ()  # the workers it adds (predicted names), restarts or removes
    panes: tuple[str, ...] = ()  # their recorded panes (respawn, remove)
    group: WorkerGroup | None = None  # what an ``add`` launches
    reason: str = ""
    why: tuple[str, ...] = ()  # a ``remove``: why each of its workers goes


@frozen(kw_only=True)
class TeamPlan:
    team: str
    actions: tuple[Action, ...]
    blocked: tuple[str, ...] = ()  # what cannot be converged without a person

    @property
    def to_add(self) -> int:
        return sum(len(a.workers) for a in self.actions if a.kind == "add") + \
            sum(1 for a in self.actions if a.kind == "create_team")

    @property
    def to_change(self) -> int:
        return sum(len(a.workers) or 1 for a in self.actions if a.kind in ("restore_leader", "sweep_debt", "respawn"))

    @property
    def to_remove(self) -> int:
        return sum(len(a.workers) for a in self.actions if a.kind == "remove")

    @property
    def converged(self) -> bool:
        return not self.actions and not self.blocked


def converge(spec: TeamSpec, facts: TeamFacts) -> TeamPlan:
    if not facts.exists:
        return TeamPlan(team=spec.name, actions=(
            Action(kind="create_team", reason=_where(spec)),
            *_additions(spec, {}, 1),
        ))
    actions: list[Action] = []
    blocked: list[str] = []
    if facts.leader == "gone":
        actions.append(Action(kind="restore_leader", panes=tuple(p for p in (facts.leader_pane,) if p),
                              reason=f"leader pane {facts.leader_pane or '(none)'} is gone: {facts.leader_why}"
                              if facts.leader_why else f"leader pane {facts.leader_pane or '(none)'} is gone"))
    elif facts.leader == "unproven":
        blocked.append(f"leader pane {facts.leader_pane} is not proven ours ({facts.leader_why}): left alone")
    if facts.debt:
        actions.append(Action(kind="sweep_debt", reason="; ".join(facts.debt)))
    declared = {(g.cli, g.role): g for g in spec.groups}
    kept: dict[tuple[str, str], list[WorkerFacts]] = {}
    surplus: list[WorkerFacts] = []
    for worker in sorted(facts.workers, key=lambda w: w.index):
        key = (worker.cli, worker.role)
        group = declared.get(key)
        if group is not None and len(kept.setdefault(key, [])) < group.count:
            kept[key].append(worker)
        else:
            surplus.append(worker)
    for worker in (w for members in kept.values() for w in members):
        if worker.pane == "gone":
            actions.append(Action(kind="respawn", workers=(worker.name,), panes=_pane(worker),
                                  reason=f"pane {worker.pane_id or '(none)'} is gone" +
                                  (f": {worker.why}" if worker.why else "")))
        elif worker.pane == "unproven":
            blocked.append(f"{worker.name}: pane {worker.pane_id} is not proven ours ({worker.why}): left alone")
    actions.extend(_additions(spec, {k: len(v) for k, v in kept.items()}, facts.next_index))
    removable = [w for w in surplus if w.pane != "unproven"]
    blocked.extend(f"{w.name}: surplus, but pane {w.pane_id} is not proven ours ({w.why}): left alone"
                   for w in surplus if w.pane == "unproven")
    if removable:
        why = tuple(_surplus_reason(w, declared) for w in removable)
        actions.append(Action(kind="remove", workers=tuple(w.name for w in removable),
                              panes=tuple(p for w in removable for p in _pane(w)), why=why,
                              reason="; ".join(f"{w.name}: {text}" for w, text in zip(removable, why, strict=True))))
    return TeamPlan(team=spec.name, actions=tuple(actions), blocked=tuple(blocked))


def _additions(spec: TeamSpec, have: dict[tuple[str, str], int], next_index: int) -> list[Action]:
    """One ``add`` per group short of its count, with the names scale-up will give (in file order)."""
    actions = []
    for group in spec.groups:
        missing = group.count - have.get((group.cli, group.role), 0)
        if missing > 0:
            names = tuple(f"worker-{next_index + i}" for i in range(missing))
            next_index += missing
            actions.append(Action(kind="add", workers=names, group=group,
                                  reason=f"{group.cli} {group.role}: {group.count} declared"))
    return actions


def _pane(worker: WorkerFacts) -> tuple[str, ...]:
    return (worker.pane_id,) if worker.pane_id else ()


def _surplus_reason(worker: WorkerFacts, declared: dict[tuple[str, str], WorkerGroup]) -> str:
    group = declared.get((worker.cli, worker.role))
    if group is None:
        return f"no group declares {worker.cli} {worker.role}"
    return f"{worker.cli} {worker.role} has {group.count} declared"


def _where(spec: TeamSpec) -> str:
    if spec.leader_pane is not None:
        return f"leader pane {spec.leader_pane}"
    return f"tmux session {spec.tmux_session or spec.name}"
