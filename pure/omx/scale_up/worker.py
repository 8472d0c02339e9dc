"""One worker: preparation, the proven split, pin and tag, the watched start, inbox, dispatch and the
membership commit (docs/scale-up.md)."""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Sequence

from attrs import evolve, frozen
from returns.result import Failure

from pure import model as m
from pure import tmux as t
from pure.agents import supervise
from pure.omx import dispatch as dsp
from pure.omx import effects, ids, instructions, layout, startup_script, strays, transcripts
from pure.omx import launch as ln
from pure.omx import worktree as wt
from pure.omx.codec import render_json
from pure.omx.records import DispatchRequest, Member, Task, membership, to_json
from pure.omx.scale_up import undo
from pure.omx.scale_up.config import save_config
from pure.omx.scale_up.plan import (
    Launches,
    model_of,
    pinned_servers,
    placed_target,
    role_instructions,
    role_prompt,
    split_target,
    split_target_problem,
)
from pure.omx.scale_up.run import (
    PLACEHOLDER,
    Abort,
    ScaleUpRun,
    StepFailure,
    T,
    acked,
    read_optional,
    team_state_file,
)
from pure.omx.scaling import leader_nudge
from pure.omx.state import TeamPaths
from pure.program import Gen, PlanError, changing, expect, uninterrupted

# ------------------------------------------------------------------------------------- one worker


@frozen(kw_only=True)
class Prepared:
    """A worker whose files are written (step 6a): what its pane is split with."""

    name: str
    index: int
    position: int  # among this run's new workers (its placement)
    cli: str  # what runs in the pane, for the screen model (codex, claude, gemini, placeholder)
    role: str | None
    prompt: str | None
    tree: wt.Worktree | None
    working_dir: str


@frozen(kw_only=True)
class Launched(Prepared):
    """A worker whose pane exists, pinned and tagged, with its identity written; not yet a member."""

    pane: str
    pid: int
    record: Member

    @property
    def server(self) -> str | None:
        """The tmux server its pane was pinned on (pure/tmux/parse.py ``on_server``)."""
        return self.record.tmux_server


def launch_worker(run: ScaleUpRun, name: str, index: int, launches: Launches, position: int) -> Gen[Launched]:
    """A new worker: its files (step 6a), then its pane (6b-6f)."""
    run.undo.add(undo.Attempt(name))
    _split_target_of(run, position)  # a team without a pinned split target fails before any file is written
    prepared = yield from changing(effects.worker(name, "add"), _prepare(run, name, index, launches, position))
    return (yield from split_worker(run, prepared))


def _split_target_of(run: ScaleUpRun, position: int) -> tuple[layout.Placement | None, str, int, bool]:
    """Where the worker at ``position`` is split: its placement (watched), the pane and its pinned pid,
    and whether that pane is the leader's."""
    target, pid, leader = split_target(run.config)
    placement: layout.Placement | None = None
    if run.placements:
        placement, target, pid = placed_target(run, position)
    if pid is None:
        raise Abort(f"scale_up_split_target_pid_missing:{target}")
    return placement, target, pid, leader


def _prepare(run: ScaleUpRun, name: str, index: int, launches: Launches, position: int) -> Gen[Prepared]:
    """Step 6a: the worker's folder, worktree, instructions and startup script."""
    paths = run.paths
    policy = launches.policies[position]
    role = policy.role or run.req.agent_type
    working_dir = run.req.cwd
    tree: wt.Worktree | None = None
    script = paths.startup_script(index)
    # 6a. prepare
    try:
        yield from acked(m.MakeDir(path=paths.worker_dir(name)))
        run.undo.add(undo.Folder(name))
        extra: dict[str, str] = {**(run.req.worker_env or {}), "OMX_TEAM_STATE_ROOT": paths.state_root,
                                 "OMX_TEAM_LEADER_CWD": run.req.cwd}
        if run.worktree_mode is not None:
            root = yield from wt.repo_root(run.req.cwd)
            # the intent names the worktree before git makes it: a run killed then leaves a record of it
            tree = yield from wt.ensure(root, paths.team, name, run.worktree_mode,
                                        lambda planned: acked(strays.intent_step(paths, "scale_up", name,
                                                                                 worktree=planned)))
            if tree.created:
                run.undo.add(undo.Tree(name, tree))
            run.maybe_inject("worktree-ensure-post-create")
            run.maybe_inject("worktree-post-create")
            working_dir = tree.path
        prompt = None if role is None else (yield from role_prompt(launches, role))
        block = None if role is None or prompt is None else role_instructions(role, prompt,
                                                                                model_of(policy.launch_args))
        team_file = posixpath.join(paths.team_dir, instructions.FILE_NAME)
        extra.update((yield from _install_instructions(run, name, tree, block)))
        built = ln.build_worker_launch(policy, team_name=paths.team, worker_cwd=working_dir, extra_env=extra,
                                       host=launches.host)
        if isinstance(built, Failure):
            raise StepFailure(built.failure())
        plan = built.unwrap()
        if launches.placeholder is not None:
            plan = dataclasses.replace(plan, command=launches.placeholder)
        elif tree is None and block is None and any(team_file in arg for arg in plan.argv):
            yield from _ensure_instructions(run)  # a launch never points at a missing file
        run.undo.add(undo.Script(name, script))  # before the write: a half-written script goes too
        yield from _write_startup_script(run, script, plan, working_dir, extra)
    except (StepFailure, wt.WorktreeError) as error:
        if isinstance(error, wt.WorktreeError) and error.half is not None:
            run.undo.forget(name, undo.Tree)
            run.undo.add(undo.Tree(name, error.half))
        raise Abort(f"scale_up_worker_preparation_failed:{name}:{error}") from None
    return Prepared(name=name, index=index, position=position, role=role, prompt=prompt, tree=tree,
                    working_dir=working_dir, cli=PLACEHOLDER if launches.placeholder is not None else plan.worker_cli)


def _install_instructions(run: ScaleUpRun, name: str, tree: wt.Worktree | None, block: str | None) -> Gen[dict[str, str]]:
    """The worker's instructions: the worktree's root ``AGENTS.md`` (the original backed up), else its
    own role ``AGENTS.md``, else the team's file; the environment that names them to the worker."""
    paths = run.paths
    team_file = posixpath.join(paths.team_dir, instructions.FILE_NAME)
    if tree is None:
        if block is None:
            return {"OMX_MODEL_INSTRUCTIONS_FILE": team_file}
        agents = paths.worker_file(name, "AGENTS.md")
        yield from acked(m.WriteFile(path=agents, content=block))
        return {"OMX_MODEL_INSTRUCTIONS_FILE": agents}
    team_text = yield from read_optional(team_file)
    backup = yield from wt.install_root_agents(tree.path, worktree_instructions(paths.team, name, team_text, block))
    run.undo.add(undo.RootAgents(name, tree.path, backup))
    env = {"OMX_MODEL_INSTRUCTIONS_FILE": posixpath.join(tree.path, "AGENTS.md"), "OMX_TEAM_WORKTREE_PATH": tree.path}
    if tree.branch is not None:
        env["OMX_TEAM_WORKTREE_BRANCH"] = tree.branch
    env["OMX_TEAM_WORKTREE_DETACHED"] = "1" if tree.detached else "0"
    return env


def _write_startup_script(run: ScaleUpRun, script: str, plan: ln.LaunchPlan, working_dir: str,
                          extra: dict[str, str]) -> Gen[None]:
    """The worker's startup script, in the worker shell chosen from ``$SHELL`` and those that exist."""
    shell, rc_file = startup_script.choose_worker_shell(run.req.env.get("SHELL"), run.req.existing_shells)
    rendered = startup_script.render_startup_script(plan, worker_cwd=working_dir, shell=shell, rc_file=rc_file,
                                                    source_rc=startup_script.should_source_shell_rc(
                                                        {**run.req.env, **extra}))
    if isinstance(rendered, Failure):
        raise StepFailure(rendered.failure())
    yield from acked(m.WriteFile(path=script, content=rendered.unwrap(), mode=0o700))


def split_worker(run: ScaleUpRun, worker: Prepared) -> Gen[Launched]:
    """Steps 6b-6f for a prepared worker: a new pane running its startup script (also the fresh pane
    a worker that did not start is tried once more in, ``await_started``)."""
    return (yield from changing(effects.worker(worker.name, "add"), _split_worker(run, worker)))


def _split_worker(run: ScaleUpRun, worker: Prepared) -> Gen[Launched]:
    paths, owner = run.paths, run.owner
    name, index, tree, working_dir = worker.name, worker.index, worker.tree, worker.working_dir
    placement, target, pid, leader = _split_target_of(run, worker.position)
    # 6b. L S L
    run.undo.add(undo.Attempt(name))
    into = yield from prove_split_target(target, pid, owner, pinned_servers(run.config, *run.undo.launched()).get(target))
    # 6c. the intent, then the split: a run killed from here on leaves a record naming the pane it
    # may have made (pure/omx/strays.py)
    try:
        yield from acked(strays.intent_step(paths, "scale_up", name, worktree=run.undo.tree(name),
                                            first_new_pane=into.first_new_pane))
    except StepFailure as error:
        raise Abort(f"scale_up_intent_not_written:{name}:{error}") from None
    script = paths.startup_script(index)
    command = (startup_script.gated_startup_command(script, paths.worker_dir(name)) if run.supervised
               else startup_script.self_pinned_startup_command(script, paths.worker_dir(name)))
    rest = ("-d", "-P", "-F", t.NEW_PANE_FORMAT, "-c", working_dir, command)
    direction = "-h" if leader else "-v"
    said = effects.worker(name, "add", ", ".join(filter(None, (
        layout.placement_words(placement, target, direction), f"{worker.cli} ({worker.role or '?'})",
        f"worktree {tree.path}" if tree is not None else (f"cwd {working_dir}" if working_dir != run.req.cwd else "")))))
    step = (t.split_step(into.pane, direction, *rest, effect=said) if placement is None
            else layout.placement_step(placement, into.pane, *rest, effect=said))
    # 6c-6f with interrupts held: an interrupt between the split and the pin would leave a pane
    # that the rollback cannot prove (docs/design-notes.md, "Interrupts")
    pane, pid, record = yield from uninterrupted(
        _new_pane(run, name, index, worker.role, worker.cli, step, working_dir, tree))
    return Launched(name=name, index=index, position=worker.position, cli=worker.cli, role=worker.role,
                    prompt=worker.prompt, tree=tree, working_dir=working_dir, pane=pane, pid=pid, record=record)


def _new_pane(run: ScaleUpRun, name: str, index: int, role: str | None, cli: str, step: m.Run, working_dir: str,
              tree: wt.Worktree | None) -> Gen[tuple[str, int, Member]]:
    """Steps 6c-6f: the split, the pin, the tag (and, watched, the release of the gated pane), the
    identity that records the pin, each logged for the rollback as it happens; the pane, its pid and
    the worker record."""
    paths, owner = run.paths, run.owner
    split = yield from expect(step, m.Proc)
    if split.exit_code != 0:
        raise Abort(f"Failed to create tmux pane for {name}: {split.stderr.strip()}")
    pane = t.answered_pane(split)[0]
    if not pane.startswith("%"):
        raise Abort(f"Failed to capture pane ID for {name}")
    # 6d. pin: from the split's own answer (pure/tmux/owned.py, ``pin_new_pane``)
    # A pane exists from here on: an exception before the record below still names it.
    run.undo.add(undo.Pane(name, pane))
    pinned = yield from t.pin_new_pane(split)
    record = _worker_record(run, name=name, index=index, role=role, cli=cli, pid=pinned.pid, pane=pane,
                            server=pinned.server, working_dir=working_dir, tree=tree)
    run.undo.add(undo.Pinned(record))
    if pinned.pid is None:
        raise Abort(f"Failed to prove tmux pane for {name}")
    try:  # the pinned process in the intent, before anything else is done with the pane
        yield from acked(strays.intent_step(paths, "scale_up", name, pane_id=pane, pid=pinned.pid,
                                            worktree=run.undo.tree(name)))
    except StepFailure as error:
        raise Abort(f"scale_up_intent_not_written:{name}:{error}") from None
    # 6e. tag, after a listing shows the pane still running the pinned process
    problem = yield from tag_pane(pane, pinned.pid, owner, pinned.server)
    if problem is not None:
        raise Abort(f"Failed to tag tmux pane for {name}: {problem}")
    run.undo.add(undo.Tagged(record))
    # 6f. identity, right after the tag: from here a crash leaves a stray the next sweep can prove
    # (pure/omx/strays.py); only then may the gated pane start its agent
    try:
        yield from acked(m.WriteFile(path=paths.worker_file(name, "identity.json"), content=render_json(to_json(record))))
        run.maybe_inject("identity")
    except StepFailure as error:
        raise Abort(f"scale_up_worker_materialization_failed:{name}:{error}") from None
    if run.supervised:
        # Keep the pane if its CLI exits during start-up, so that its last lines can be read; only
        # then let the gated pane start its CLI.
        problem = yield from supervise.keep_on_exit(pane, pinned.pid, owner, True, pinned.server)
        if problem is None:
            problem = yield from supervise.release(pane, pinned.pid, owner, pinned.server)
        if problem is not None:
            raise Abort(f"scale_up_worker_start_failed:{name}: {problem}")
    return pane, pinned.pid, record


def await_started(run: ScaleUpRun, launched: Sequence[Launched]) -> Gen[list[Launched]]:
    """Wait for every launched agent to start (``pure/agents/supervise.py``); the workers that started.

    One worker that does not start costs only itself (docs/scale-up.md, "One slow worker"): one that
    did not become ready in time is tried once more in a fresh pane, and one that still did not start,
    or whose CLI failed, is removed alone (``drop_worker``); the run then ends needing attention. The
    first failure aborts the whole scale-up instead (it rolls back) with ``all_or_nothing``
    (oh-my-codex's rule), when no worker started, or when a pane could not be proven."""
    policy = supervise.policy_from_env(run.req.env)
    outcomes = yield from _wait_started(run, launched, policy)
    failed = [w for w in launched if not outcomes[w.name].ok]
    if not failed:
        return list(launched)
    if run.req.all_or_nothing or len(failed) == len(launched) or any(
            outcomes[w.name].state in _UNPROVEN for w in failed):
        raise Abort(f"scale_up_{outcomes[failed[0].name].reason}")
    current = {w.name: w for w in launched}
    retried = []
    for worker in failed:
        if outcomes[worker.name].reason.startswith(supervise.NOT_READY):
            yield from remove_worker_pane(run, worker, "its agent was not ready, so it is tried in a fresh pane")
            fresh = yield from split_worker(run, worker)
            run.undo.relaunched(fresh.record)
            current[worker.name] = fresh
            retried.append(fresh)
    if retried:
        outcomes.update((yield from _wait_started(run, retried, policy, retry=True)))
    started = []
    for worker in (current[w.name] for w in launched):
        if outcomes[worker.name].ok:
            started.append(worker)
        else:
            yield from drop_worker(run, worker, outcomes[worker.name])
    return started


# A pane the start-up could not prove (another owner or pid, or tmux not answering): only the whole
# rollback may deal with it, keeping debt.
_UNPROVEN = frozenset({"changed", "unavailable"})


def _wait_started(run: ScaleUpRun, launched: Sequence[Launched], policy: supervise.Policy,
                  retry: bool = False) -> Gen[dict[str, supervise.Started]]:
    """Wait for ``launched`` to start together; each outcome is recorded in ``run.deliveries``."""
    items = [supervise.Starting(worker=w.name, cli=w.cli, pane=w.pane, pid=w.pid, server=w.server) for w in launched]
    started = yield from supervise.wait_until_ready(items, run.owner, policy)
    for worker, outcome in zip(launched, started, strict=True):
        entry: m.Answer = {"worker": worker.name, "paneId": worker.pane, "cli": worker.cli, "started": outcome.state,
                       "answered": list(outcome.answered)}
        if retry:
            entry["retried"] = True
        run.deliveries = [d for d in run.deliveries if d["worker"] != worker.name] + [entry]
    return {outcome.worker: outcome for outcome in started}


def remove_worker_pane(run: ScaleUpRun, worker: Launched, why: str = "its agent did not start") -> Gen[transcripts.Kept]:
    """Kill the pane of a launched worker that did not start, behind its proof (a dead pane first, as
    kept by ``remain-on-exit``), its transcript kept first (``pure/omx/transcripts.py``: why it did not
    start is often on it); one that cannot be proven gone aborts the scale-up (whose rollback keeps it
    as debt)."""
    said = effects.worker(worker.name, "remove", f"its pane is removed: {why}")
    return (yield from changing(said, _remove_worker_pane(run, worker, said)))


def _remove_worker_pane(run: ScaleUpRun, worker: Launched, said: m.Effect) -> Gen[transcripts.Kept]:
    kept = yield from transcripts.keep(run.paths, worker.name, worker.pane, worker.pid, run.owner, worker.server)
    problem = yield from supervise.remove_dead(worker.pane, worker.pid, run.owner, worker.server)
    report = yield from t.teardown([t.TeardownTarget(pane_id=worker.pane, pid=worker.pid, server=worker.server)],
                                   owner_id=run.owner,
                                   authorize=True, leader_pane_id=run.config.leader_pane_id,
                                   hud_pane_id=run.config.hud_pane_id,
                                   effects={worker.pane: said})
    if problem is not None or worker.pane not in report.resolved_ids():
        reason = problem or ",".join(r.reason or r.fate for r in report.results)
        raise Abort(f"scale_up_worker_pane_not_removed:{worker.name}:{worker.pane}:{reason}")
    # the pin the gone pane wrote of itself (pure/omx/startup_script.py self_pin_path) names nothing any more
    yield from acked(m.RemovePath(path=startup_script.self_pin_path(run.paths.worker_dir(worker.name), worker.pane)))
    return kept


def drop_worker(run: ScaleUpRun, worker: Launched, outcome: supervise.Started) -> Gen[None]:
    """Remove one worker that did not start, and only it: its pane, then its tasks, worktree (or the
    worktree's restored ``AGENTS.md``), folder and startup script. The run forgets it, so a later
    rollback does not look for it; its delivery entry says why it was removed (the result's
    ``removedWorkers`` and ``worker_start`` debt, program.py)."""
    kept = yield from remove_worker_pane(run, worker)
    yield from changing(effects.worker(worker.name, "remove", "removed: its agent did not start"),
                        _drop_files(run, worker))
    run.undo.forget(worker.name)
    for entry in run.deliveries:
        if entry["worker"] == worker.name:
            entry.update(status="removed", reason=f"scale_up_{outcome.reason}", lastLines=list(outcome.last_lines))
            entry.update({"transcript": kept.path} if kept.path else {"transcriptWarning": kept.missing}
                         if kept.missing else {})


def _drop_files(run: ScaleUpRun, worker: Launched) -> Gen[None]:
    paths, name = run.paths, worker.name
    try:
        for task in [task for task in run.undo.of(undo.Task) if task.owner == name]:
            yield from acked(m.RemovePath(path=paths.task(task.task_id), effect=m.effect(
                "remove", "task", f"task {task.task_id}", f"removed with {name}")))
            run.undo.drop(task)
        problems: list[str] = []
        tree = run.undo.tree(name)  # forgotten once removed: a rollback retries one that was not
        backups = [e for e in run.undo.of(undo.RootAgents) if e.worker == name]
        run.undo.forget(name, undo.RootAgents)
        if tree is not None:
            problems += yield from wt.remove(tree)
        elif backups:
            yield from wt.restore_root_agents(backups[0].tree_path, backups[0].backup)
        yield from acked(m.RemovePath(path=paths.worker_dir(name), recursive=True))
        yield from acked(m.RemovePath(path=paths.startup_script(worker.index)))
        if problems:  # the intent stays: it names the worktree for the next command to remove
            raise StepFailure("; ".join(problems))
        run.undo.forget(name, undo.Tree)
        yield from acked(m.RemovePath(path=paths.intent(name)))
    except (StepFailure, wt.WorktreeError) as error:
        raise Abort(f"scale_up_worker_cleanup_failed:{name}:{error}") from None


def _materializing(worker: Launched, action: Gen[T]) -> Gen[T]:
    """Run ``action``; a failed file step is oh-my-codex's ``scale_up_worker_materialization_failed``."""
    try:
        return (yield from action)
    except StepFailure as error:
        raise Abort(f"scale_up_worker_materialization_failed:{worker.name}:{error}") from None


def hand_over(run: ScaleUpRun, worker: Launched, tasks: list[Task]) -> Gen[DispatchRequest]:
    """Steps 6h-6i for one launched worker (started, when watched, 6g): its inbox and its pending
    dispatch request, whose trigger is then typed (``settle`` records how that went)."""
    return (yield from _materializing(worker, changing(effects.worker(worker.name, "add"),
                                                       _hand_over_steps(run, worker, tasks))))


def _hand_over_steps(run: ScaleUpRun, worker: Launched, tasks: list[Task]) -> Gen[DispatchRequest]:
    paths, name = run.paths, worker.name
    if run.supervised:  # started: stop keeping the pane after its process exits (oh-my-codex's default)
        problem = yield from supervise.keep_on_exit(worker.pane, worker.pid, run.owner, False, worker.server)
        if problem is not None:
            raise Abort(f"scale_up_worker_start_failed:{name}: {problem}")
    mine = [task for task in tasks if task.owner == name]
    ultragoal = yield from read_optional(team_state_file(paths, run.config, run.req.cwd, "ultragoal-context.json"))
    section = dsp.ultragoal_section(ultragoal)
    inbox = dsp.render_inbox(team=paths.team, worker=name, role=worker.role or "", tasks=mine, paths=paths,
                             leader_cwd=run.req.cwd, specialization=None if worker.tree is not None else worker.prompt,
                             context=tuple(c for c in (run.approved_section, section) if c is not None))
    yield from acked(m.WriteFile(path=paths.worker_file(name, "inbox.md"), content=inbox, effect=effects.worker(
        name, "add", " ".join(["tasks" if len(mine) > 1 else "task", *(f"#{task.id}" for task in mine)])
        if mine else "")))
    run.maybe_inject("inbox")
    return (yield from _enqueue(run, worker))


def settle(run: ScaleUpRun, worker: Launched, request: DispatchRequest, delivery: dsp.Delivery | supervise.Delivery) -> Gen[None]:
    """Step 6i's end and step 6j: record the delivery, then commit the worker as a member."""
    failure = yield from _materializing(worker, changing(effects.worker(worker.name, "add"),
                                                         _record_delivery(run, worker, request, delivery)))
    if failure is not None:
        raise Abort(f"scale_up_dispatch_failed:{worker.name}:{failure}")
    yield from _materializing(worker, _commit_member(run, worker))


def _commit_member(run: ScaleUpRun, worker: Launched) -> Gen[None]:
    run.maybe_inject("post-dispatch-rollback")
    workers = (*run.config.workers, worker.record)
    run.config = evolve(run.config, workers=workers, worker_count=len(workers), next_worker_index=worker.index + 1)
    run.undo.add(undo.Member(worker.record))
    run.maybe_inject("config")
    # oh-my-codex's saveTeamConfig writes the config it read at the start: next_task_id as it was
    # before this run's tasks (they exist, so their ids are not handed out again)
    patch = evolve(membership(workers, worker.index + 1), next_task_id=run.base_state.raw_config.next_task_id,
                   worktree_mode=run.config.worktree_mode if run.worktree_mode_derived else None)
    try:
        run.generation = yield from save_config(run.paths, run.generation, patch, None)
    except PlanError as error:
        raise StepFailure(error.outcome.message) from None
    run.maybe_inject("finalization")


def _ensure_instructions(run: ScaleUpRun) -> Gen[None]:
    """Write the team's ``worker-agents.md`` when it is missing (``pure/omx/instructions.py``)."""
    path = posixpath.join(run.paths.team_dir, instructions.FILE_NAME)
    if run.undo.of(undo.Instructions) or (yield from read_optional(path)) is not None:
        return
    sources = []
    for source in instructions.source_paths(run.req.env, run.req.cwd):
        sources.append((yield from read_optional(source)))
    yield from acked(m.WriteFile(path=path, content=instructions.compose(run.paths.team, sources),
                                 effect=m.effect("add", "file", instructions.FILE_NAME, "the team's worker instructions")))
    run.undo.add(undo.Instructions(path))


def worktree_instructions(team: str, worker: str, team_text: str | None, role_block: str | None) -> str:
    """The generated worktree-root ``AGENTS.md`` (the original is kept in a backup: docs/scale-up.md,
    "Worktrees")."""
    head = team_text if team_text is not None else (
        f"# Team worker instructions\n\nYou are {worker} of team {team}. Read your inbox under "
        f"$OMX_TEAM_STATE_ROOT/team/{team}/workers/{worker}/inbox.md and follow it.\n")
    return head if role_block is None else head.rstrip("\n") + "\n\n" + role_block


def _worker_record(run: ScaleUpRun, *, name: str, index: int, role: str | None, cli: str, pid: int | None, pane: str,
                   server: str | None, working_dir: str, tree: wt.Worktree | None) -> Member:
    return Member(name=name, index=index, role=role, worker_cli=cli, assigned_tasks=[], pid=pid, pane_id=pane,
                  working_dir=working_dir, worktree_repo_root=None if tree is None else tree.repo_root,
                  worktree_path=None if tree is None else tree.path, worktree_branch=None if tree is None else tree.branch,
                  worktree_detached=None if tree is None else tree.detached,
                  worktree_created=None if tree is None else tree.created, team_state_root=run.paths.state_root,
                  tmux_server=server)


@frozen(kw_only=True)
class SplitTarget:
    """The pane about to be split, proven ours, and the lowest number the new pane can have (its proof's
    listing says it), which the intent records (pure/omx/strays.py, ``pin_of``)."""

    pane: t.OwnedPane
    first_new_pane: int | None


def prove_split_target(target: str, pid: int, owner: str, server: str | None) -> Gen[SplitTarget]:
    """Step 6b: ``L, S, L`` of the pane about to be split, on the tmux ``server`` it was pinned on."""
    proof = yield from t.prove_owned(target, pid, owner, server=server)
    if proof.token is None:
        raise Abort(split_target_problem(proof))
    return SplitTarget(pane=proof.token, first_new_pane=proof.first_new_pane)


def tag_pane(pane: str, pid: int, owner: str, server: str | None = None) -> Gen[str | None]:
    """The owner-tag write (docs/tmux-proofs.md, "The owner tag"): a live proof with the pinned pid (on the
    tmux ``server`` its creation answered), then ``set-option`` (no read-back)."""
    claim = yield from t.prove_created(pane, pid, server)
    if claim.token is None:
        if claim.proof.kind == "unavailable":
            return f"exact_pane_proof_unavailable:{pane}:{claim.proof.code}"
        if claim.proof.kind == "gone":
            return f"tmux pane is not proven live: {pane}"
        return f"tmux pane identity changed: {pane}"
    done = yield from expect(t.tag_step(claim.token, owner), m.Proc)
    if done.exit_code != 0:
        return f"failed to tag tmux pane {pane}: {done.stderr.strip()}"
    return None


def _enqueue(run: ScaleUpRun, worker: Launched) -> Gen[DispatchRequest]:
    """Step 6i: append the worker's inbox request (``pending``) to ``dispatch/requests.json``."""
    paths = run.paths
    mode = dsp.dispatch_mode(run.manifest)
    trigger = dsp.trigger_message(paths, worker.name, run.req.cwd, worker.tree is not None)
    request_id = yield from ids.fresh_uuid()
    now = yield from expect(m.Clock(), m.Value)
    request = dsp.new_request(request_id=request_id, team=paths.team, worker=worker.name, index=worker.index,
                              pane_id=worker.pane, trigger=trigger, mode=mode, now=now.value)
    try:
        yield from dsp.append_request(paths, request)
    except PlanError as error:
        raise StepFailure(error.outcome.message) from None
    yield from expect(dsp.attempted_log_step(run.req.cwd, request, now.value), m.Ack)
    return request


def _record_delivery(run: ScaleUpRun, worker: Launched, request: DispatchRequest,
                     delivery: dsp.Delivery | supervise.Delivery) -> Gen[str | None]:
    """The request's outcome. Returns the failure that aborts the scale-up; a delivery the screen did
    not confirm is recorded and reported instead (docs/scale-up.md, "Watched start-up")."""
    paths = run.paths
    done = yield from expect(m.Clock(), m.Value)
    if isinstance(delivery, supervise.Delivery):
        request = dsp.watched_outcome(request, delivery.ok, delivery.reason, done.value, attempts=1)
    else:
        request = dsp.typed_outcome(request, delivery.ok, delivery.reason, done.value)
    try:
        yield from dsp.update_request(paths, request)
    except PlanError as error:
        raise StepFailure(error.outcome.message) from None
    source = "panefleet.scale_up" if isinstance(delivery, supervise.Delivery) else dsp.OMX_RESULT_SOURCE
    yield from expect(dsp.result_log_step(run.req.cwd, request, done.value, source), m.Ack)
    if not isinstance(delivery, supervise.Delivery):
        return None if delivery.ok else delivery.reason
    entry = next(d for d in run.deliveries if d["worker"] == worker.name)
    entry.update(status="delivered" if delivery.ok else "not_delivered", reason=delivery.reason,
                 requestId=request.request_id, rounds=delivery.rounds)
    return delivery.reason if delivery.lost else None


def leader_event(paths: TeamPaths, reason: str) -> Gen[None]:
    """The leader-nudge event; a failed append is a ``StepFailure``."""
    ack = yield from leader_nudge(paths, reason)
    if not ack.ok:
        raise StepFailure(ack.error)


def finish_event(run: ScaleUpRun) -> Gen[None]:
    try:
        yield from leader_event(run.paths, f"scale_up: added {len(run.undo.members())} worker(s), "
                                     f"new count={run.config.worker_count}")
    except StepFailure as error:
        raise Abort(f"scale_up_finalization_failed:{error}") from None
