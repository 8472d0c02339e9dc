"""Tasks and roles as a person types them (``team scale-up --task/--agent-type``, ``team task create
--task/--blocked-by``, ``team init --agent-type``), checked before the command runs: every problem
found here is a usage error (exit 2, ``shell/cli/operation.py`` ``usage_error``).

A task is plain text (the first line is its subject, the lines after it its description; one line
is both, as a task given only a subject would read) or a JSON object (text that starts with ``{``).
A role must be known (docs/scale-up.md, "Roles"); a task a new task is blocked by must exist. Both
need what is on disk, read through the steps of ``pure/omx/task_input.py`` (also for a dry run).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pure.omx.launch import AGENTS
from pure.omx.scale_up.run import TaskSpec

TASK_KEYS = ("subject", "description", "owner", "role", "blocked_by")
TEXT_EXAMPLE = '--task "fix the login bug" (first line: the subject; the lines after it: the description)'
JSON_EXAMPLE = ('--task \'{"subject": "fix the login bug", "description": "the form rejects valid emails", '
                '"owner": "worker-2"}\'')
EXAMPLES = f"give plain text, e.g. {TEXT_EXAMPLE}, or a JSON object, e.g. {JSON_EXAMPLE}"
# A role of the agent table with this suffix runs on the spark model (pure/omx/launch/agents.py
# agent_default_model): it is a known role too.
LOW = "-low"


def parse_task(text: str, option: str = "--task") -> TaskSpec:
    """One task from what was typed; ``ValueError`` says what is wrong with it and how it is written."""
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"{option} is empty: {EXAMPLES}")
    if stripped.startswith("{"):
        return _json_task(stripped, option)
    first, _, rest = stripped.partition("\n")
    subject = first.strip()
    return TaskSpec(subject=subject, description=rest.strip() or subject)


def _json_task(text: str, option: str) -> TaskSpec:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{option} is not JSON: {exc.msg} (column {exc.colno}); {EXAMPLES}") from None
    shape = f"a JSON task is an object like {JSON_EXAMPLE[len('--task '):]}"
    if not isinstance(value, dict):
        raise ValueError(f"{option} must be a JSON object: {shape}")
    unknown = set(value) - set(TASK_KEYS)
    if unknown:
        raise ValueError(f"{option} has unknown keys: {', '.join(sorted(unknown))} (it may have "
                         f"{', '.join(TASK_KEYS)})")
    for key in ("subject", "description"):
        if not isinstance(value.get(key), str):
            raise ValueError(f"{option} needs a string {key!r}: {shape}")
    for key in ("owner", "role"):
        if key in value and value[key] is not None and not isinstance(value[key], str):
            raise ValueError(f"{option} {key!r} must be a string")
    blocked = value.get("blocked_by")
    if blocked is not None and (not isinstance(blocked, list) or not all(isinstance(b, str) for b in blocked)):
        raise ValueError(f"{option} 'blocked_by' must be a list of task id strings")
    return TaskSpec(subject=value["subject"], description=value["description"], owner=value.get("owner"),
                    role=value.get("role"), blocked_by=tuple(blocked) if blocked is not None else None)


def count_problem(tasks: int, count: int) -> str | None:
    """More tasks than new workers. Fewer is oh-my-codex's ordinary case: a worker without a task of
    its own starts from the team's task list (``pure/omx/dispatch.py`` ``render_inbox``)."""
    if tasks <= count:
        return None
    return (f"{tasks} tasks (--task) for {count} new worker{'' if count == 1 else 's'} (--count {count}): "
            "give at most one --task per new worker, or raise --count")


def is_table_role(name: str) -> bool:
    return name in AGENTS or (name.endswith(LOW) and name[:-len(LOW)] in AGENTS)


def role_problem(what: str, name: str, configured: Iterable[str]) -> str | None:
    """``what`` (``--agent-type``, ``role of --task 1``) names no known role: say so, with the closest
    known names and all of them."""
    known = sorted({*AGENTS, *configured})
    if is_table_role(name) or name in known:
        return None
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    return (f"{what} {name!r} is not a known role{hint}; the known roles: {', '.join(known)}; a role of your own "
            "needs its prompt file .codex/prompts/<role>.md")


def blocked_problem(what: str, blocked: Sequence[str], team: str, task_ids: Sequence[str]) -> str | None:
    """``what`` (``--blocked-by``, ``blocked_by of --task 1``) names a task the team does not have."""
    missing = [b for b in blocked if b not in task_ids]
    if not missing:
        return None
    there = f"its tasks: {', '.join(task_ids)}" if task_ids else "it has no tasks yet"
    return f"{what} {', '.join(missing)}: team {team} has no such task ({there})"


def read_known(args: argparse.Namespace, team: str, cwd: str, env: dict[str, str], *, tasks: bool,
               roles: bool) -> dict[str, Any] | None:
    """Run the read-only program of ``pure/omx/task_input.py`` through the real executor."""
    from pure.omx.task_input import known_program
    from shell.cli.operation import make_executor
    from shell.run.loop import run_program

    done, _journal = run_program(lambda: known_program(team, cwd, env, tasks=tasks, roles=roles),
                                 make_executor(args, dict(os.environ)))
    result = done.outcome.result
    return result if done.outcome.status == "ok" and isinstance(result, dict) else None


def check_against_team(args: argparse.Namespace, team: str, cwd: str, env: Mapping[str, str], *,
                       roles: Sequence[tuple[str, str]] = (),
                       blocked: Sequence[tuple[str, Sequence[str]]] = ()) -> str | None:
    """The first problem of the roles (``(what, name)``) and the tasks named as blockers (``(what,
    ids)``), reading the disk only for what the agent table does not answer. A team whose tasks
    cannot be read here is left to the command, which says what is wrong with it."""
    from shell.cli.team_home import placed_on

    strange = [(what, name) for what, name in roles if not is_table_role(name)]
    blocking = [(what, ids) for what, ids in blocked if ids]
    if not strange and not blocking or placed_on(args) is not None:
        return None  # a team on another machine: the command itself, there, says what is wrong
    known = read_known(args, team, cwd, dict(env), tasks=bool(blocking), roles=bool(strange))
    if known is None:
        return None
    for what, name in strange:
        problem = role_problem(what, name, known.get("roles") or ())
        if problem is not None:
            return problem
    task_ids = known.get("taskIds")
    if task_ids is None:
        return None
    for what, ids in blocking:
        problem = blocked_problem(what, ids, team, task_ids)
        if problem is not None:
            return problem
    return None


def task_checks(tasks: Sequence[TaskSpec]) -> tuple[list[tuple[str, str]], list[tuple[str, Sequence[str]]]]:
    """The roles and blockers of ``--task`` values, each named by its position."""
    several = len(tasks) > 1
    roles: list[tuple[str, str]] = []
    blocked: list[tuple[str, Sequence[str]]] = []
    for number, task in enumerate(tasks, start=1):
        which = f"--task {number}" if several else "--task"
        if task.role is not None:
            roles.append((f"role of {which}", task.role))
        if task.blocked_by:
            blocked.append((f"blocked_by of {which}", task.blocked_by))
    return roles, blocked
