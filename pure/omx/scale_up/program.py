"""The ``team.scale_up`` program: gate, lock, canonical read, plan, the workers, the result."""

from __future__ import annotations

from attrs import evolve, frozen
from returns.result import Failure

from pure import model as m
from pure import operations
from pure import tmux as t
from pure.agents import supervise
from pure.omx import dispatch as dsp
from pure.omx import effects, strays
from pure.omx import worktree as wt
from pure.omx.locks import with_scaling_lock
from pure.omx.names import sanitize_team_name
from pure.omx.records import Member, to_json
from pure.omx.scale_up.config import locked_state
from pure.omx.scale_up.new_tasks import create_tasks
from pure.omx.scale_up.plan import (
    Launches,
    approved_execution_gate,
    migrate_legacy_pid,
    pinned_servers,
    plan_launches,
    plan_placements,
    split_target,
)
from pure.omx.scale_up.rollback import rollback
from pure.omx.scale_up.run import (
    Abort,
    ScaleUpRequest,
    ScaleUpRun,
    ok_done,
    positive_or,
)
from pure.omx.scale_up.worker import Launched, await_started, finish_event, hand_over, launch_worker, settle
from pure.omx.scaling import DISABLED, scaling_enabled
from pure.omx.state import TeamPaths, TeamState, resolve_state_root
from pure.program import (
    INTERRUPTED,
    Gen,
    Interrupted,
    PlanError,
    Program,
    changing,
    expect,
    fail,
    refused,
    uninterrupted,
)

# ---------------------------------------------------------------------------------------- program


def scale_up(req: ScaleUpRequest) -> Program:
    if not scaling_enabled(req.env):
        raise fail(DISABLED, status="refused")
    if type(req.count) is not int or req.count < 1:
        raise fail(f"count must be a positive integer (got {req.count})", status="refused")
    version = yield from expect(t.tmux("-V"), m.Proc)
    if version.exit_code != 0:
        raise fail("tmux is not available", status="refused")
    named = sanitize_team_name(req.team)
    if isinstance(named, Failure):
        raise fail(named.failure(), status="refused")
    paths = TeamPaths(resolve_state_root(req.cwd, req.env), named.unwrap())
    return (yield from with_scaling_lock(paths, lambda: _scale_up(req, paths)))


def _scale_up(req: ScaleUpRequest, paths: TeamPaths) -> Gen[m.Done]:
    """Read and check everything, then create (each creation undone by the rollback on any failure or
    interrupt), then the result."""
    planned = yield from _read_and_plan(req, paths)
    failed = yield from _create_workers(planned)
    if failed is not None:
        return failed
    # Members for good now: their intents go, and an interrupt that comes meanwhile is answered by the
    # finished run (one intent left behind is forgotten by the next sweep, pure/omx/strays.py).
    yield from uninterrupted(_forget_intents(paths, planned.run.undo.members()), answers=True)
    return _result(planned.run, planned.swept)


def _forget_intents(paths: TeamPaths, members: list[Member]) -> Gen[None]:
    for added in members:
        yield from expect(m.RemovePath(path=paths.intent(added.name), effect=effects.worker(added.name, "add")), m.Ack)


@frozen(kw_only=True)
class _Planned:
    """What the read-and-plan phase settled, before anything is created."""

    run: ScaleUpRun
    start: int  # the first new worker's index
    names: tuple[str, ...]
    launches: Launches
    swept: strays.Sweep


def _read_and_plan(req: ScaleUpRequest, paths: TeamPaths) -> Gen[_Planned]:
    """The team's state, the gates and the plan; what a crashed run left is swept first. Nothing of
    this run exists yet, so a refusal here needs no rollback."""
    state = yield from locked_state(paths)
    if state is None:
        raise refused(f"Team {paths.team} not found")
    yield from dsp.read_requests(paths)  # step 6i appends to it: a malformed file is refused before anything changes
    config = state.config
    workers = config.workers
    maximum = positive_or(config.max_workers, 20)
    if len(workers) + req.count > maximum:
        raise refused(f"Cannot add {req.count} workers: would exceed max_workers "
                      f"({len(workers)} + {req.count} > {maximum})")
    start = positive_or(config.next_worker_index, len(workers) + 1)
    names = tuple(f"worker-{start + i}" for i in range(req.count))
    launches = yield from plan_launches(req, paths, start, state)
    approved_section = yield from approved_execution_gate(paths, config, req.cwd)
    owner = (config.tmux_pane_owner_id or "").strip()
    if not owner:
        raise refused(f"scale_up_split_target_owner_unavailable:{split_target(config)[0]}")
    # what a crashed or interrupted run of this team left behind goes first (pure/omx/strays.py), in
    # every mode: oh-my-codex leaves it (docs/scale-up.md, "Stray panes")
    swept = yield from strays.sweep(paths, config, owner)
    blocked = swept.blocking(names)
    if blocked is not None:
        raise refused(f"scale_up_{blocked}")
    run = yield from _new_run(req, paths, state, owner)
    run.approved_section = approved_section
    return _Planned(run=run, start=start, names=names, launches=launches, swept=swept)


def _new_run(req: ScaleUpRequest, paths: TeamPaths, state: TeamState, owner: str) -> Gen[ScaleUpRun]:
    """The run's baseline: the split target proven (its legacy pid migrated first), the placements,
    the worktree mode and whether the runtime directory existed."""
    target, expected, _leader = split_target(state.config)
    pre_migration_manifest = state.manifest_text
    migrated = expected is None
    if migrated:
        state = yield from migrate_legacy_pid(paths, state, owner)
        target, expected, _leader = split_target(state.config)
    run = ScaleUpRun(req, paths, state, owner)
    if run.supervised:
        run.placements = yield from plan_placements(state.config, target, expected, req.count)
    else:
        first = t.on_server((yield from t.prove(target)), pinned_servers(state.config).get(target))
        if not first.live:
            raise refused(f"scale_up_split_target_proof_unavailable:{target}:{first.code()}")
        if first.pid != expected:
            raise refused(f"scale_up_split_target_pid_changed:{target}:{expected}:{first.pid}")
    if migrated:
        # oh-my-codex quirk kept on purpose (docs/scale-up.md, "oh-my-codex quirks kept"): the
        # rollback baseline of the manifest is the bytes read before a legacy pid migration, so a
        # migrated leader pid is null again in reads after a rollback (a migrated worker pid
        # survives: the rollback rewrites ``workers``).
        run.base_manifest_text = pre_migration_manifest
    mode, derived = wt.resolve_mode(run.config)
    if mode is None and req.worktree:  # a fleet group's own worktrees; the team's mode is not changed
        mode = wt.WorktreeMode(enabled=True, detached=True, name=None)
    run.worktree_mode, run.worktree_mode_derived = mode, derived
    if mode is not None and derived:
        run.config = evolve(run.config, worktree_mode=mode.as_json())
    runtime = yield from expect(m.Stat(path=paths.runtime_dir), m.Value)
    run.runtime_existed = runtime.value != "absent"
    return run


def _create_workers(planned: _Planned) -> Gen[m.Done | None]:
    """The tasks and every worker, in order; on any failure, interrupt or bug, the rollback's answer
    (pure/omx/scale_up/rollback.py), else None."""
    run = planned.run
    try:
        tasks = yield from create_tasks(run)
        launch = [(name, planned.start + position, position) for position, name in enumerate(planned.names)]
        if run.supervised:
            # Split and launch every worker, wait for all of them to start together, then hand each
            # its task and commit it, in order (docs/scale-up.md, "Watched start-up").
            launched: list[Launched] = []
            for name, index, position in launch:
                launched.append((yield from launch_worker(run, name, index, planned.launches, position)))
            launched = yield from await_started(run, launched)
            requests = []
            for worker in launched:
                requests.append((yield from hand_over(run, worker, tasks)))
            delivered = yield from supervise.deliver_all(
                [supervise.Message(worker=w.name, cli=w.cli, pane=w.pane, pid=w.pid, text=str(r.trigger_message),
                                   token=dsp.trigger_token(w.name), server=w.server)
                 for w, r in zip(launched, requests, strict=True)],
                run.owner)
            for worker, request in zip(launched, requests, strict=True):
                yield from settle(run, worker, request, delivered[worker.name])
        else:
            for name, index, position in launch:
                worker = yield from launch_worker(run, name, index, planned.launches, position)
                request = yield from hand_over(run, worker, tasks)
                delivery = yield from changing(effects.worker(worker.name, "add"), dsp.deliver_trigger(
                    worker.pane, worker.pid, run.owner, str(request.trigger_message), worker.server))
                yield from settle(run, worker, request, delivery)
        yield from finish_event(run)
    except Abort as abort:
        return (yield from rollback(run, abort))
    except Interrupted:  # undone as on any failure (docs/design-notes.md, "Interrupts")
        return (yield from rollback(run, Abort(INTERRUPTED)))
    except PlanError as error:  # a typed failure nobody turned into an Abort: still roll back
        return (yield from rollback(run, Abort(error.outcome.message)))
    except Exception as error:  # noqa: BLE001 - safety net: a bug must not leak a tagged pane
        return (yield from rollback(run, Abort(f"internal_error:{type(error).__name__}:{error}")))
    return None


def _result(run: ScaleUpRun, swept: strays.Sweep) -> m.Done:
    """The answer: the workers added, their deliveries, those removed and the strays; ``debt`` when a
    worker was removed, a task may not have reached its worker or a stray pane could not be proven ours."""
    result: m.Answer = {"ok": True, "addedWorkers": [to_json(w) for w in run.undo.members()],
                    "newWorkerCount": run.config.worker_count, "nextWorkerIndex": run.config.next_worker_index}
    if run.supervised:
        result["deliveries"] = run.deliveries
    removed = [d for d in run.deliveries if d.get("status") == "removed"]  # worker.py drop_worker
    if removed:
        result["removedWorkers"] = [{"name": d["worker"], "reason": d["reason"], "lastLines": d["lastLines"],
                                     **{k: d[k] for k in ("transcript", "transcriptWarning") if k in d}}
                                    for d in removed]
    undelivered = tuple(m.Debt(kind="task_delivery", subject=d["worker"], reason=d["reason"])
                        for d in run.deliveries if d["status"] not in ("delivered", "removed"))
    if not undelivered and not removed:
        return swept.onto(ok_done(result))
    not_started = tuple(m.Debt(kind="worker_start", subject=d["worker"], reason=d["reason"],
                               detail=" | ".join(d["lastLines"])) for d in removed)
    return swept.onto(m.Done(outcome=m.Outcome(status="debt", result=m.JsonValue(result)),
                             debt=(*not_started, *undelivered)))


operations.register("team.scale_up", ScaleUpRequest, scale_up)
