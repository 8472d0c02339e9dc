"""How a fleet plan reads (``shell/cli/fleet.py``): one line per team and per change, in the plan view's signs,
and the same as JSON for programs (docs/fleet.md, "plan")."""

from __future__ import annotations

import os
from typing import Any

from pure.fleet.converge import Action, TeamPlan
from pure.fleet.spec import FleetFile
from shell.cli.fleet_teams import Observed, Target

NO_CHANGES = "No changes: the fleet matches {file}."


def unknown_teams(planned: list[tuple[Target, Observed, TeamPlan]]) -> list[str]:
    """Why each team whose host was not reached could not be read."""
    return [f"team {target.spec.name}: {seen.unknown}" for target, seen, _ in planned if seen.unknown]


def action_lines(plan: TeamPlan, seen: Observed) -> list[str]:
    """One line per thing that changes, in the plan view's signs: + added, ~ changed, - removed, ! swept."""
    lines: list[str] = []
    panes = {w.name: w.pane_id for w in seen.facts.workers}
    for action in plan.actions:
        if action.kind == "create_team":
            leader = "joins " + action.reason if action.reason.startswith("leader pane") else \
                f"new leader pane in {action.reason}"
            lines.append(f"  + team {plan.team}: {leader}, oh-my-codex team state")
        elif action.kind == "restore_leader":
            lines.append(f"  ~ leader  restore: {action.reason}; a new leader pane in its tmux session")
        elif action.kind == "sweep_debt":
            lines.append(f"  ! debt swept: {action.reason}")
        elif action.kind == "respawn":
            lines.append(f"  ~ {action.workers[0]}  respawn: {action.reason}")
        elif action.kind == "add" and action.group is not None:
            group = action.group
            extra = "".join(f", {label}" for label, on in (
                (f"model {group.model}", group.model is not None), ("own worktree", group.worktree),
                ("with its task", group.task is not None)) if on)
            lines.extend(f"  + {name}  {group.cli} {group.role}, new pane{extra}" for name in action.workers)
        elif action.kind == "remove":
            lines.extend(f"  - {name}  surplus ({why}): "
                         + (f"pane {panes[name]} killed after proof" if panes.get(name) else "no pane to kill")
                         for name, why in zip(action.workers, action.why, strict=True))
    lines.extend(f"  ? {note}" for note in plan.blocked)
    return lines


def plan_text(fleet: FleetFile, planned: list[tuple[Target, Observed, TeamPlan]]) -> str:
    if all(plan.converged for _, _, plan in planned):
        return NO_CHANGES.format(file=os.path.basename(fleet.path))
    out: list[str] = []
    for target, seen, plan in planned:
        declared = target.spec.declared
        live = sum(1 for w in seen.facts.workers if w.pane == "live")
        where = f"tmux server {target.socket or 'default'}" + (" (not running)" if seen.server_down else "")
        folder = target.spec.cwd if target.host is None else f"{target.host}:{target.spec.cwd}"
        if seen.unknown:
            out.append(f"team {plan.team}  {folder}  host not reached  workers unknown / {declared} declared")
        else:
            out.append(f"team {plan.team}  {folder}  {where}  workers {live} live / {declared} declared")
        out.extend(action_lines(plan, seen) or ["  (no changes)"])
    add, change, remove = (sum(getattr(p, k) for _, _, p in planned) for k in ("to_add", "to_change", "to_remove"))
    out.append(f"Plan: {add} to add, {change} to change, {remove} to remove.")
    return "\n".join(out)


def action_json(action: Action) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": action.kind, "workers": list(action.workers), "panes": list(action.panes),
                            "reason": action.reason}
    if action.group is not None:
        from pure.fleet.spec import group_as_json

        data["group"] = group_as_json(action.group)
    return data


def plan_json(fleet: FleetFile, planned: list[tuple[Target, Observed, TeamPlan]]) -> dict[str, Any]:
    teams = [{"team": plan.team, "project": target.spec.cwd, "host": target.host,
              # whether the host answered (None: the team is on this machine); its workers "unknown" when not
              "hostReached": None if target.host is None else not seen.unknown, "tmuxSocket": target.socket,
              "serverRunning": None if seen.unknown else not seen.server_down, "declared": target.spec.declared,
              "live": None if seen.unknown else sum(1 for w in seen.facts.workers if w.pane == "live"),
              "workers": "unknown" if seen.unknown else "read",
              "actions": [action_json(a) for a in plan.actions], "blocked": list(plan.blocked),
              "add": plan.to_add, "change": plan.to_change, "remove": plan.to_remove}
             for target, seen, plan in planned]
    unknown = unknown_teams(planned)
    return {"ok": not unknown, **({"error": "; ".join(unknown)} if unknown else {}), "file": fleet.path,
            "converged": all(p.converged for _, _, p in planned), "teams": teams,
            "add": sum(t["add"] for t in teams), "change": sum(t["change"] for t in teams),
            "remove": sum(t["remove"] for t in teams)}
