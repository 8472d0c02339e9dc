"""Step 5: the incoming tasks, written as oh-my-codex's ``createTask`` writes them, and the task list."""

from __future__ import annotations

import re

from pure import model as m
from pure.omx import effects, tasks, txn
from pure.omx.codec import render_json
from pure.omx.locks import Barrier, with_barrier
from pure.omx.records import ConfigPatch, Task
from pure.omx.scale_up import undo
from pure.omx.scale_up.config import json_object
from pure.omx.scale_up.run import Abort, ScaleUpRun, StepFailure, TaskSpec, acked, positive_or
from pure.omx.state import TeamPaths
from pure.program import Gen, PlanError, expect


def existing_tasks(paths: TeamPaths) -> Gen[list[Task]]:
    """Every task of the team as its file has it, in id order, read the way every operation reads
    them (``pure/omx/tasks.py``): a task file that is not a valid task, or a tasks directory that
    cannot be listed, ends the scale-up (``team_state_malformed:<file>…``, ``cannot read …``). Step 3
    reads them before anything is written, so a corrupt task is refused with nothing changed."""
    return [tf.raw for tf in (yield from tasks.list_tasks(paths))]


# ------------------------------------------------------------------------------------------- tasks


def _task_json(spec: TaskSpec, task_id: str, now: str) -> dict[str, object]:
    """A new task file as oh-my-codex's ``createTask`` writes it, key by key in its order."""
    task: dict[str, object] = {"subject": spec.subject, "description": spec.description, "status": "pending"}
    if spec.owner is not None:
        task["owner"] = spec.owner
    if spec.blocked_by is not None:
        task["blocked_by"] = list(spec.blocked_by)
    if spec.role is not None:
        task["role"] = spec.role
    task.update({"id": task_id, "created_at": now,
                 "depends_on": list(spec.blocked_by) if spec.blocked_by is not None else [], "version": 1})
    return task


_TASK_FILE = re.compile(r"task-([0-9]{1,20})\.json")


def _advance_next_task_id(paths: TeamPaths, next_id: int) -> Gen[None]:
    """oh-my-codex's ``createTask`` bumps ``next_task_id`` in config and manifest right after the task
    file (no generation change), so a rollback that deletes the task never hands its id out again."""

    def body(b: Barrier) -> Gen[None]:
        config_text = yield from txn.read_text(paths.config)
        if config_text is None:
            raise StepFailure(f"team_config_missing:{paths.team}")
        manifest_text = yield from txn.read_text(paths.manifest)
        if json_object(config_text) is None:
            raise StepFailure(f"team_state_malformed:{paths.config}")
        yield from tasks.write_config_pair(paths, b, config_text,
                                           manifest_text if json_object(manifest_text) is not None else None,
                                           ConfigPatch(next_task_id=next_id))

    try:
        yield from with_barrier(paths, body)
    except PlanError as error:
        raise StepFailure(error.outcome.message) from None


def create_tasks(run: ScaleUpRun) -> Gen[list[Task]]:
    """Step 5: create every incoming task (``pending``), then re-list all tasks."""
    paths = run.paths
    try:
        if run.req.tasks:
            listing = yield from expect(m.ListDir(path=paths.tasks_dir), m.Listing)
            if listing.error:
                raise StepFailure(listing.error)
            highest = max((int(mt.group(1)) for n in listing.names or () if (mt := _TASK_FILE.fullmatch(n))),
                          default=0)
            next_id = max(positive_or(run.config.next_task_id, 1), highest + 1)
            for spec in run.req.tasks:
                task_id = str(next_id)
                next_id += 1
                now = yield from expect(m.Clock(), m.Value)
                run.undo.add(undo.Task(task_id, spec.owner))  # before the write: a half-written file goes too
                record = _task_json(spec, task_id, now.value)
                yield from acked(m.WriteFile(path=paths.task(task_id), content=render_json(record),
                                             effect=effects.created_task(task_id, record)))
                yield from _advance_next_task_id(paths, next_id)
        return (yield from existing_tasks(paths))
    except StepFailure as error:
        raise Abort(f"scale_up_task_materialization_failed:{error}") from None
    except PlanError as error:  # the task list re-read after the writes: changed since step 3
        raise Abort(f"scale_up_task_materialization_failed:{error.outcome.message}") from None
