"""``team.scale_up``: oh-my-codex 0.20.3 scale-up as one pure program (spec §4, §8, §9).

Forward path (spec §8.1): gate, ``tmux -V``, scaling lock, canonical read, capacity, frozen launch
plans, owner id, legacy pid migration (§4.3), the initial proof of the split target (§4.2), worktree
mode, tasks, then per worker: preparation, ``L S L split-window``, pin (``L``), tag (``L
set-option``), identity, readiness, inbox + dispatch, config save; finally the leader nudge event.

Any failure after the first artefact exists runs the rollback of §8.2: a tracking commit first (so
a crash still leaves every live pane recorded), dispatch cleanup, pane authorization (only panes
this run both pinned and tagged may be killed), the shared teardown primitive, a membership commit
that keeps exactly the unresolved workers, canonical and resource cleanup, and the result: the
original error when everything was undone, else ``scale_up_rollback_cleanup_debt:<d1;d2;…>``.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from attrs import evolve, field, frozen
from returns.result import Failure

from pure import model as m
from pure import ops
from pure import tmux as t
from pure.agents import startup as supervise
from pure.omx import approved, ids, instructions, layout, startup, strays, txn
from pure.omx import dispatch as dsp
from pure.omx import launch as ln
from pure.omx import tasks as tasks_ops
from pure.omx import worktree as wt
from pure.omx.locks import Barrier, with_barrier, with_scaling_lock
from pure.omx.names import sanitize_team_name
from pure.omx.state import Json, TeamPaths, TeamState, read_team_state, render_json, resolve_state_root
from pure.program import Gen, PlanError, Program, expect, fail

T = TypeVar("T")

DISABLED = "Dynamic scaling is disabled. Set OMX_TEAM_SCALING_ENABLED=1 to enable."
ENABLED_VALUES = ("1", "true", "yes", "on", "enabled")
INJECT_ENV = "OMX_TEAM_SCALE_UP_INJECT_FAILURE"
PLACEHOLDER = "placeholder"


@frozen(kw_only=True)
class TaskSpec:
    subject: str
    description: str
    owner: str | None = None
    role: str | None = None
    blocked_by: tuple[str, ...] | None = None


@frozen(kw_only=True)
class ScaleUpRequest:
    """``panefleet team scale-up``. ``env`` is the relevant environment (spec §14) gathered by the
    shell (it serves as both oh-my-codex's ``env`` argument and the process environment);
    ``process_argv`` is the leader process argv (ambient bypass detection, spec §13.4);
    ``cli_paths`` maps ``codex``/``claude``/``gemini`` to where they were found on PATH, and a CLI
    the shell looked for but did not find to ``""`` (a selected worker CLI mapped to ``""`` refuses
    the scale-up before anything is created; a CLI not in the map at all is launched by its bare
    name, for callers that do not resolve CLIs);
    ``node_path`` is exported to workers as ``OMX_LEADER_NODE_PATH`` (oh-my-codex's CLI runtime);
    ``existing_shells`` lists which zsh/bash candidates (and ``$SHELL``) exist, for the worker shell."""

    team: str
    count: int
    cwd: str
    agent_type: str | None = "executor"
    tasks: tuple[TaskSpec, ...] = ()
    env: dict[str, str] = field(factory=dict)
    process_argv: tuple[str, ...] = ()
    cli_paths: dict[str, str] = field(factory=dict)
    node_path: str = "node"
    existing_shells: tuple[str, ...] = ()


def scaling_enabled(env: dict[str, str]) -> bool:
    return env.get("OMX_TEAM_SCALING_ENABLED", "").strip().lower() in ENABLED_VALUES


def injections(env: dict[str, str]) -> frozenset[str]:
    return frozenset(p.strip() for p in env.get(INJECT_ENV, "").split(",") if p.strip())


# ------------------------------------------------------------------------------------ run context


@frozen(kw_only=True)
class RollbackContext:
    worker: Json | None = None
    pane_id: str | None = None
    worker_name: str | None = None
    worktree_path: str | None = None


class Abort(Exception):
    """A scale-up failure that requires the rollback of §8.2."""

    def __init__(self, message: str, context: RollbackContext | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.context = context or RollbackContext()


class StepFailure(Exception):
    """A failed file step inside preparation/materialization (message as oh-my-codex words it)."""


class Run:
    """Everything this call created, in memory, so that a rollback can undo exactly that."""

    def __init__(self, req: ScaleUpRequest, paths: TeamPaths, state: TeamState, owner: str) -> None:
        self.req = req
        self.paths = paths
        self.owner = owner
        self.inject = injections(req.env)
        self.config: Json = json.loads(json.dumps(state.config))
        self.generation: int = int(state.config.get("config_generation", 0))
        self.base_state = state
        self.base_config_text = state.config_text
        self.base_manifest_text = state.manifest_text
        self.manifest = state.raw_manifest
        self.approved_section: str | None = None  # the approved handoff context for every inbox
        self.created_tasks: list[str] = []
        self.task_owner: dict[str, str | None] = {}
        self.added: list[Json] = []
        self.tagged: set[str] = set()
        self.worktrees: dict[str, wt.Worktree] = {}
        self.agents_backups: dict[str, tuple[str, str]] = {}
        self.prepared: list[str] = []
        self.scripts: list[str] = []
        self.launched: list[Json] = []  # records of panes created, pinned and tagged, not yet committed
        self.dead_kept: set[str] = set()  # panes kept dead by remain-on-exit (removed before teardown)
        self.created_instructions: str | None = None  # worker-agents.md written by this run
        self.deliveries: list[Json] = []
        self.supervised = req.env.get("OMX_TEAM_SKIP_READY_WAIT") != "1"
        self.placements: list[layout.Placement] = []  # where each new worker goes (watched start-up)
        self.runtime_existed = True
        self.worktree_mode: wt.WorktreeMode | None = None
        self.worktree_mode_derived = False

        # The rollback context of the worker in flight (spec §8.2), kept current as its phases
        # progress, so that an unexpected exception still rolls back with that worker's pane.
        self.context = RollbackContext()

    def maybe_inject(self, phase: str) -> None:
        if phase in self.inject:
            raise StepFailure(f"injected_scale_up_failure:{phase}")


# ---------------------------------------------------------------------------------------- helpers


def _ack(step: m.Step) -> Gen[None]:
    ack = yield from expect(step, m.Ack)
    if not ack.ok:
        raise StepFailure(ack.error)


def _patch(text: str, updates: dict[str, Any]) -> str:
    """Replace keys of a JSON object in place (key order kept, new keys appended), as oh-my-codex
    rewrites ``manifest.v2.json``."""
    value: Json = json.loads(text)
    for key, item in updates.items():
        value[key] = item
    return render_json(value)


# The key order of config.json as oh-my-codex's saveTeamConfig writes it when a manifest exists (the
# config it saves was rebuilt from the manifest, so keys only config.json had are dropped).
SAVED_CONFIG_ORDER = (
    "name", "task", "agent_type", "worker_launch_mode", "lifecycle_profile", "worker_count", "max_workers",
    "workers", "created_at", "tmux_session", "tmux_session_id", "tmux_session_created", "next_task_id",
    "leader_cwd", "team_state_root", "workspace_mode", "worktree_mode", "leader_pane_id", "leader_pane_pid",
    "hud_pane_pid", "hud_pane_id", "tmux_pane_owner_id", "resize_hook_name", "resize_hook_target",
    "next_worker_index", "display_name", "requested_name", "identity_source", "config_generation",
)
ALWAYS_SAVED = ("leader_pane_id", "leader_pane_pid", "hud_pane_pid", "hud_pane_id")
# panefleet's own config keys, kept across a save (oh-my-codex never writes them).
PANEFLEET_KEYS = ("worker_cli",)


def _json_object(text: str | None) -> Json | None:
    """``text`` parsed as a JSON object, else ``None`` (absent, unparseable or not an object)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def saved_config_text(state: TeamState, updates: dict[str, Any]) -> str:
    """``config.json`` after oh-my-codex's ``saveTeamConfig`` of the canonical config plus ``updates``."""
    if state.raw_manifest is None:
        return _patch(state.config_text, updates)
    source: Json = {**state.raw_manifest, **state.config, **updates}
    out: Json = {}
    for key in SAVED_CONFIG_ORDER:
        if key in ("agent_type", "worker_launch_mode", "max_workers"):
            out[key] = state.config.get(key)
        elif key in source and (source[key] is not None or key in ALWAYS_SAVED or key in state.raw_manifest):
            out[key] = source[key]
        elif key in ALWAYS_SAVED:
            out[key] = None
    for key in PANEFLEET_KEYS:
        if key in state.raw_config:
            out[key] = state.raw_config[key]
    return render_json(out)


def _membership_updates(workers: list[Json], next_index: int) -> dict[str, Any]:
    return {"workers": workers, "worker_count": len(workers), "next_worker_index": next_index}


def split_target(config: Json) -> tuple[str, int | None, bool]:
    """The last worker's pane when it has one, else the leader pane (spec §4.1)."""
    workers = config.get("workers") or []
    last = workers[-1] if workers else None
    if isinstance(last, dict) and isinstance(last.get("pane_id"), str) and last["pane_id"].strip():
        pid = last.get("pid")
        return last["pane_id"], pid if t.is_positive_pid(pid) else None, False
    leader = config.get("leader_pane_id")
    pid = config.get("leader_pane_pid")
    return (leader if isinstance(leader, str) else ""), pid if t.is_positive_pid(pid) else None, True


def _locked_state(paths: TeamPaths, barrier: Barrier | None = None) -> Gen[TeamState | None]:
    return (yield from with_barrier(paths, lambda b: txn.load_team(paths, b), held=barrier))


def _pos(value: object, default: int) -> int:
    return value if type(value) is int and t.is_positive_pid(value) else default


def _ok(result: Json) -> m.Done:
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))


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


def _refuse(message: str) -> PlanError:
    return fail(message, status="refused")


def _scale_up(req: ScaleUpRequest, paths: TeamPaths) -> Gen[m.Done]:
    state = yield from _locked_state(paths)
    if state is None:
        raise _refuse(f"Team {paths.team} not found")
    config = state.config
    workers = [w for w in config.get("workers") or [] if isinstance(w, dict)]
    maximum = _pos(config.get("max_workers"), 20)
    if len(workers) + req.count > maximum:
        raise _refuse(f"Cannot add {req.count} workers: would exceed max_workers "
                      f"({len(workers)} + {req.count} > {maximum})")
    start = _pos(config.get("next_worker_index"), len(workers) + 1)
    names = [f"worker-{start + i}" for i in range(req.count)]
    launches = yield from _plan_launches(req, paths, start, state)
    approved_section = yield from _approved_execution_gate(paths, config, req.cwd)
    owner = config.get("tmux_pane_owner_id")
    target, expected, _leader = split_target(config)
    if not isinstance(owner, str) or not owner.strip():
        raise _refuse(f"scale_up_split_target_owner_unavailable:{target}")
    owner = owner.strip()
    swept = strays.Sweep()
    if req.env.get("OMX_TEAM_SKIP_READY_WAIT") != "1":
        # panes a crashed run of this team left behind go first (pure/omx/strays.py)
        swept = yield from strays.sweep(paths, config, owner)
    expected_before_migration = expected
    pre_migration_manifest = state.manifest_text
    if expected is None:
        state = yield from _migrate_legacy_pid(paths, state, owner)
        target, expected, _leader = split_target(state.config)
    supervised = req.env.get("OMX_TEAM_SKIP_READY_WAIT") != "1"
    placements: list[layout.Placement] = []
    if supervised:
        placements = yield from _plan_placements(state.config, target, expected, req.count)
    else:
        first = yield from t.prove(target)
        if not first.live:
            raise _refuse(f"scale_up_split_target_proof_unavailable:{target}:{first.code()}")
        if first.pid != expected:
            raise _refuse(f"scale_up_split_target_pid_changed:{target}:{expected}:{first.pid}")
    run = Run(req, paths, state, owner)
    run.placements = placements
    run.approved_section = approved_section
    if expected_before_migration is None:
        # oh-my-codex quirk kept on purpose (spec §16): the rollback baseline of the manifest is the
        # bytes read before a legacy pid migration, so a migrated leader pid is null again in reads
        # after a rollback (a migrated worker pid survives: the rollback rewrites ``workers``).
        run.base_manifest_text = pre_migration_manifest
    mode, derived = wt.resolve_mode(run.config)
    run.worktree_mode, run.worktree_mode_derived = mode, derived
    if mode is not None and derived:
        run.config["worktree_mode"] = mode.as_json()
    runtime = yield from expect(m.Stat(path=paths.runtime_dir), m.Value)
    run.runtime_existed = runtime.value != "absent"
    try:
        tasks = yield from _create_tasks(run)
        if run.supervised:
            # Split and launch every worker, wait for all of them to start together, then hand each
            # its task and commit it, in order (docs/scale-up.md, "Watched start-up").
            launched: list[Launched] = []
            for position, name in enumerate(names):
                launched.append((yield from _launch_worker(run, name, start + position, launches, position)))
            yield from _await_started(run, launched)
            requests = []
            for worker in launched:
                requests.append((yield from _hand_over(run, worker, tasks)))
            delivered = yield from supervise.deliver_all(
                [supervise.Message(worker=w.name, cli=w.cli, pane=w.pane, pid=w.pid, text=r["trigger_message"],
                                   token=dsp.trigger_token(w.name)) for w, r in zip(launched, requests, strict=True)],
                run.owner)
            for worker, request in zip(launched, requests, strict=True):
                yield from _settle(run, worker, request, delivered[worker.name])
        else:
            for position, name in enumerate(names):
                worker = yield from _launch_worker(run, name, start + position, launches, position)
                request = yield from _hand_over(run, worker, tasks)
                delivery = yield from dsp.deliver_trigger(worker.pane, worker.pid, run.owner,
                                                          request["trigger_message"])
                yield from _settle(run, worker, request, delivery)
        yield from _finish_event(run)
    except Abort as abort:
        return (yield from rollback(run, abort))
    except PlanError as error:  # a typed failure nobody turned into an Abort: still roll back
        return (yield from rollback(run, Abort(error.outcome.message, run.context)))
    except Exception as error:  # noqa: BLE001 - safety net: a bug must not leak a tagged pane
        return (yield from rollback(run, Abort(f"internal_error:{type(error).__name__}:{error}", run.context)))
    result: Json = {"ok": True, "addedWorkers": run.added, "newWorkerCount": run.config["worker_count"],
                    "nextWorkerIndex": run.config["next_worker_index"]}
    if not run.supervised:
        return _ok(result)
    result["deliveries"] = run.deliveries
    if swept.removed or swept.kept:
        result["strayPanes"] = swept.to_json()
    undelivered = tuple(m.Debt(kind="task_delivery", subject=d["worker"], reason=d["reason"])
                        for d in run.deliveries if d["status"] != "delivered")
    if not undelivered and not swept.kept:
        return _ok(result)
    # Members now, with live proven panes, but a task may not have reached its worker, or a stray pane
    # could not be proven ours: needs attention.
    return m.Done(outcome=m.Outcome(status="debt", result=m.JsonValue(result)), debt=undelivered + swept.debts())


def _team_panes(config: Json) -> list[tuple[str, int | None]]:
    """The team's panes with their pinned pids, in split-preference order: newest worker first, the leader last."""
    panes: list[tuple[str, int | None]] = []
    for worker in reversed([w for w in config.get("workers") or [] if isinstance(w, dict)]):
        pane, pid = worker.get("pane_id"), worker.get("pid")
        if isinstance(pane, str) and t.is_pane_id(pane):
            panes.append((pane, pid if t.is_positive_pid(pid) else None))
    leader, pid = config.get("leader_pane_id"), config.get("leader_pane_pid")
    if isinstance(leader, str) and t.is_pane_id(leader):
        panes.append((leader, pid if t.is_positive_pid(pid) else None))
    return panes


def _plan_placements(config: Json, target: str, expected: int | None, count: int) -> Gen[list[layout.Placement]]:
    """Watched start-up (docs/scale-up.md, "Pane placement"): where each new worker goes, from one
    snapshot and the pane geometry. Candidates are the team's panes that are live with their pinned
    pid (so a gone last worker no longer blocks the team: a documented deviation); each is proven
    again (``L, S, L``) right before it is split. No live candidate: oh-my-codex's refusal for its
    split target. No room: refused before anything is created."""
    snapshot = yield from expect(t.list_panes_step(), m.Proc)
    live = [pane for pane, pid in _team_panes(config)
            if (v := t.verdict_from_answer(pane, snapshot)).live and pid is not None and v.pid == pid]
    if not live:
        first = t.verdict_from_answer(target, snapshot)
        if not first.live:
            raise _refuse(f"scale_up_split_target_proof_unavailable:{target}:{first.code()}")
        raise _refuse(f"scale_up_split_target_pid_changed:{target}:{expected}:{first.pid}")
    geometry = yield from layout.read_geometry()
    if isinstance(geometry, Failure):
        raise _refuse(f"scale_up_pane_geometry_unavailable:{geometry.failure()}")
    boxes = geometry.unwrap()
    leader = config.get("leader_pane_id")
    planned = layout.plan_placements(boxes, [p for p in live if p in boxes], count,
                                     leader_pane=leader if isinstance(leader, str) and leader in boxes else live[-1])
    if isinstance(planned, Failure):
        raise _refuse(f"scale_up_no_room:{planned.failure().message}")
    return planned.unwrap()


def _placed_target(run: Run, position: int) -> tuple[layout.Placement, str, int | None]:
    """The placement of the worker at ``position``, its real target pane (the leader's, for a new
    window) and that pane's pinned pid."""
    placement = run.placements[position]
    pinned = {pane: pid for pane, pid in _team_panes(run.base_state.config)}
    pinned.update({r["pane_id"]: r.get("pid") for r in run.launched})
    if isinstance(placement, layout.Split):
        planned = layout.planned_index(placement.target)
        target = run.launched[planned]["pane_id"] if planned is not None else placement.target
    else:
        target = str(run.config.get("leader_pane_id"))
    pid = pinned.get(target)
    return placement, target, pid if t.is_positive_pid(pid) else None


def _team_file(paths: TeamPaths, config: Json, cwd: str, name: str) -> str:
    """A file of the team directory under the config's ``team_state_root`` (else the state root)."""
    root = _str(config.get("team_state_root")) or paths.state_root
    return posixpath.join(posixpath.normpath(posixpath.join(cwd, root)), "team", paths.team, name)


def _approved_execution_gate(paths: TeamPaths, config: Json, cwd: str) -> Gen[str | None]:
    """Step 7: a persisted approved-execution binding must resolve before any worker launches
    (``pure/omx/approved.py``). ``missing`` passes with no context; ``malformed``, ``stale`` and
    ``ambiguous`` fail closed with oh-my-codex's errors; a valid binding passes and answers the
    ``## Approved Handoff Context`` section every new worker's inbox carries."""
    binding = _team_file(paths, config, cwd, "approved-execution.json")
    resolution = yield from approved.resolve_binding(binding, _str(config.get("leader_cwd")) or cwd)
    error = resolution.error(paths.team)
    if error is not None:
        raise _refuse(error)
    return resolution.inbox_section()


@frozen(kw_only=True)
class Launches:
    """Step 6: every worker's launch policy, frozen before any mutation, and what stage 2 needs."""

    policies: tuple[ln.WorkerLaunchPolicy, ...]
    host: ln.LaunchHost
    prompt_dirs: tuple[str, ...]
    placeholder: str | None  # the placeholder agent that replaces the CLI (panefleet extension)


def _home_dir(env: dict[str, str]) -> str:
    return env.get("HOME", "/root") or "/root"


def _plan_launches(req: ScaleUpRequest, paths: TeamPaths, start: int, state: TeamState) -> Gen[Launches]:
    setup_scope = yield from _read_optional(posixpath.join(req.cwd, ".omx", "setup-scope.json"))
    override = ln.resolve_codex_home_override(req.env, req.cwd, setup_scope)
    home_dir = override or req.env.get("CODEX_HOME", "").strip() or posixpath.join(_home_dir(req.env), ".codex")
    home_dir = posixpath.normpath(posixpath.join(req.cwd, home_dir))
    omx_config = yield from _read_optional(posixpath.join(home_dir, ".omx-config.json"))
    config_toml = yield from _read_optional(posixpath.join(home_dir, "config.toml"))
    home = ln.CodexHome(omx_config_json=omx_config, config_toml=config_toml)
    existing = yield from _list_tasks_safely(paths)
    placeholder = None
    launch_env = dict(req.env)
    if launch_env.get("OMX_TEAM_WORKER_CLI", "").strip() == PLACEHOLDER or state.raw_config.get("worker_cli") == PLACEHOLDER:
        launch_env.pop("OMX_TEAM_WORKER_CLI", None)
        placeholder = req.cli_paths.get(PLACEHOLDER)
        if not placeholder:
            raise _refuse("placeholder_agent_unavailable: the panefleet placeholder agent was not found")
    team_cli = state.raw_config.get("worker_cli")
    if (placeholder is None and team_cli in ln.CLI_NAMES and not launch_env.get("OMX_TEAM_WORKER_CLI", "").strip()
            and not launch_env.get("OMX_TEAM_WORKER_CLI_MAP", "").strip()):
        # the team's CLI (team init --worker-cli) when the environment selects none: docs/scale-up.md
        launch_env["OMX_TEAM_WORKER_CLI"] = team_cli
    request = ln.ScaleUpLaunchRequest(
        count=req.count, next_worker_index=start, agent_type=req.agent_type, env=launch_env, process_env=launch_env,
        leader_cwd=req.cwd, codex_home=home, setup_scope_json=setup_scope,
        existing_tasks=tuple(ln.TaskRole(owner=_str(x.get("owner")), role=_str(x.get("role"))) for x in existing),
        incoming_tasks=tuple(ln.TaskRole(owner=spec.owner, role=spec.role) for spec in req.tasks),
    )
    planned = ln.plan_scale_up_launches(request)
    if isinstance(planned, Failure):
        raise _refuse(planned.failure())
    if placeholder is None:
        for offset, policy in enumerate(planned.unwrap()):
            if req.cli_paths.get(policy.worker_cli) == "":
                raise _refuse(cli_unavailable(policy.worker_cli, f"worker-{start + offset}"))
    env = dict(launch_env)
    if override:
        env["CODEX_HOME"] = override
    host = ln.LaunchHost(process_env=env, process_argv=req.process_argv, cli_paths=req.cli_paths,
                         node_path=req.node_path, codex_home=home)
    prompts = (posixpath.join(req.cwd, ".codex", "prompts"), posixpath.join(home_dir, "prompts"))
    return Launches(policies=planned.unwrap(), host=host, prompt_dirs=prompts, placeholder=placeholder)


CLI_UNAVAILABLE = "worker_cli_unavailable"


def cli_unavailable(cli: str, worker: str) -> str:
    return (f"{CLI_UNAVAILABLE}:{cli}: the worker CLI '{cli}' selected for {worker} was not found on PATH; "
            "install it or fix PATH, or choose another CLI (OMX_TEAM_WORKER_CLI, OMX_TEAM_WORKER_CLI_MAP)")


def _read_optional(path: str) -> Gen[str | None]:
    data = yield from expect(m.ReadFile(path=path), m.FileData)
    return data.content


def _list_tasks_safely(paths: TeamPaths) -> Gen[list[Json]]:
    try:
        return (yield from _list_tasks(paths))
    except StepFailure:
        return []


def _role_prompt(launches: Launches, role: str) -> Gen[str | None]:
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", role):
        return None
    for folder in launches.prompt_dirs:
        data = yield from expect(m.ReadFile(path=posixpath.join(folder, f"{role}.md")), m.FileData)
        if data.content is not None:
            return data.content
    return None


def _model_of(argv: Sequence[str]) -> str | None:
    for position, arg in enumerate(argv):
        if arg == "--":
            return None
        if arg == "--model" and position + 1 < len(argv):
            return argv[position + 1]
        if arg.startswith("--model="):
            return arg.split("=", 1)[1]
    return None


_FRONTMATTER = re.compile(r"---\r?\n.*?\r?\n---\r?\n?", re.DOTALL)


def role_instructions(role: str, prompt: str, model: str | None) -> str:
    """The role block written into a worker's ``AGENTS.md``: the role prompt (YAML front matter
    removed), exact-model guidance when the worker runs on the model its role is pinned to (or on
    gpt-5.6-terra), and the agent metadata. oh-my-codex's posture and model-class overlays are not
    reproduced."""
    front = _FRONTMATTER.match(prompt)
    body = prompt[front.end():] if front is not None else prompt
    agent = ln.get_agent(role)
    exact = ln.DEFAULT_STANDARD_MODEL if model == ln.DEFAULT_STANDARD_MODEL else (agent.exact_model if agent else None)
    lines = [
        "<!-- OMX:TEAM:ROLE:START -->",
        "<team_worker_role>",
        f"You are operating as the **{role}** role for this team run. Apply the following role-local "
        "guidance in addition to the team worker protocol.",
        "",
        body.strip(),
    ]
    if model is not None and exact is not None and model == exact:
        lines += ["", "<exact_model_guidance>",
                  f"You run on the exact {exact} model. Keep a strict execution order: inspect -> plan -> act -> "
                  "verify. Report done only with fresh verification; name blockers instead of guessing.",
                  "</exact_model_guidance>"]
    lines += ["", "## OMX Agent Metadata"]
    if agent is not None and agent.model_class is not None:
        lines += [f"- role: {role}", f"- model_class: {agent.model_class}"]
    if model:
        lines.append(f"- resolved_model: {model}")
    lines += ["</team_worker_role>", "<!-- OMX:TEAM:ROLE:END -->", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ legacy pid migration


def _migrate_legacy_pid(paths: TeamPaths, state: TeamState, owner: str) -> Gen[TeamState]:
    """Spec §4.3: pin a pid-less split target through ``L, S, L`` and persist it before splitting."""
    target, _pid, leader = split_target(state.config)
    first = yield from t.prove(target)
    if not first.live:
        raise _refuse(f"scale_up_split_target_proof_unavailable:{target}:{first.code()}")
    tag = yield from t.read_owner(target)
    if tag.kind != "value" or tag.value != owner:
        raise _refuse(f"scale_up_split_target_owner_changed:{target}")
    second = yield from t.prove(target)
    if not second.live:
        raise _refuse(f"scale_up_split_target_proof_unavailable:{target}:{second.code()}")
    if second.pid != first.pid:
        raise _refuse(f"scale_up_split_target_pid_changed:{target}:{first.pid}:{second.pid}")
    config: Json = json.loads(json.dumps(state.config))
    if leader:
        config["leader_pane_pid"] = first.pid
        updates: dict[str, Any] = {"leader_pane_pid": first.pid}
    else:
        config["workers"][-1]["pid"] = first.pid
        updates = {"workers": config["workers"]}
    try:
        yield from save_config(paths, int(config.get("config_generation", 0)), updates, None)
    except PlanError as error:
        raise _refuse(f"scale_up_split_target_pid_persistence_failed:{target}:{error.outcome.message}") from None
    fresh = yield from _locked_state(paths)
    if fresh is None:
        raise _refuse(f"Team {paths.team} not found")
    return fresh


def save_config(paths: TeamPaths, generation: int, updates: dict[str, Any], barrier: Barrier | None) -> Gen[int]:
    """oh-my-codex ``saveTeamConfig``: generation-checked, config + manifest through a prepared
    journal. ``updates`` replace keys of both raw files in place. Returns the new generation."""

    def body(b: Barrier) -> Gen[int]:
        yield from txn.recover(paths, b)
        config_text = yield from txn.read_text(paths.config)
        if config_text is None:
            raise fail(f"team_config_missing:{paths.team}")
        current = yield from txn.raw_generation(paths)
        if current != generation:
            raise fail(f"team_config_stale_generation:{paths.team}:{generation}:{current}")
        manifest_text = yield from txn.read_text(paths.manifest)
        loaded = read_team_state(paths, config_text, manifest_text)
        if isinstance(loaded, Failure):
            raise fail(f"team_state_malformed:{loaded.failure()}")
        state = loaded.unwrap()
        change = txn.Change(config_text, saved_config_text(state, updates))
        # oh-my-codex's writeConfig keeps the manifest in sync only when it reads as a v2 manifest;
        # a missing, unparseable or invalid one is left as it is and only config.json is written.
        manifest = (None if manifest_text is None or state.raw_manifest is None
                    else txn.Change(manifest_text, _patch(manifest_text, updates)))
        return (yield from txn.commit(paths, b, txn.Transaction(
            base_generation=generation, tasks=(), config=change, manifest=manifest)))

    return (yield from with_barrier(paths, body, held=barrier))


# ------------------------------------------------------------------------------------------- tasks


def _task_json(spec: TaskSpec, task_id: str, now: str) -> Json:
    task: Json = {"subject": spec.subject, "description": spec.description, "status": "pending"}
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


def _list_tasks(paths: TeamPaths) -> Gen[list[Json]]:
    listing = yield from expect(m.ListDir(path=paths.tasks_dir), m.Listing)
    if listing.error:
        raise StepFailure(listing.error)
    ids = sorted(int(mt.group(1)) for n in listing.names or () if (mt := _TASK_FILE.fullmatch(n)))
    tasks: list[Json] = []
    for task_id in ids:
        data = yield from expect(m.ReadFile(path=paths.task(str(task_id))), m.FileData)
        if data.content is None:
            continue
        try:
            value = json.loads(data.content)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            tasks.append(value)
    return tasks


def _advance_next_task_id(paths: TeamPaths, next_id: int) -> Gen[None]:
    """oh-my-codex's ``createTask`` bumps ``next_task_id`` in config and manifest right after the task
    file (no generation change), so a rollback that deletes the task never hands its id out again."""

    def body(b: Barrier) -> Gen[None]:
        config_text = yield from txn.read_text(paths.config)
        if config_text is None:
            raise StepFailure(f"team_config_missing:{paths.team}")
        manifest_text = yield from txn.read_text(paths.manifest)
        raw_config = _json_object(config_text)
        if raw_config is None:
            raise StepFailure(f"team_state_malformed:{paths.config}")
        manifest = _json_object(manifest_text)
        config_next = {**raw_config, "next_task_id": next_id}
        manifest_next = None if manifest is None else {**manifest, "next_task_id": next_id}
        yield from tasks_ops.write_config_pair(paths, b, config_text, config_next,
                                              manifest_text if manifest is not None else None, manifest_next)

    try:
        yield from with_barrier(paths, body)
    except PlanError as error:
        raise StepFailure(error.outcome.message) from None


def _create_tasks(run: Run) -> Gen[list[Json]]:
    """Step 12: create every incoming task (``pending``), then re-list all tasks."""
    paths = run.paths
    try:
        if run.req.tasks:
            listing = yield from expect(m.ListDir(path=paths.tasks_dir), m.Listing)
            if listing.error:
                raise StepFailure(listing.error)
            highest = max((int(mt.group(1)) for n in listing.names or () if (mt := _TASK_FILE.fullmatch(n))),
                          default=0)
            next_id = max(_pos(run.config.get("next_task_id"), 1), highest + 1)
            for spec in run.req.tasks:
                task_id = str(next_id)
                next_id += 1
                now = yield from expect(m.Clock(), m.Value)
                run.created_tasks.append(task_id)
                run.task_owner[task_id] = spec.owner
                yield from _ack(m.WriteFile(path=paths.task(task_id),
                                            content=render_json(_task_json(spec, task_id, now.value))))
                yield from _advance_next_task_id(paths, next_id)
        return (yield from _list_tasks(paths))
    except StepFailure as error:
        raise Abort(f"scale_up_task_materialization_failed:{error}") from None


# ------------------------------------------------------------------------------------- one worker


@frozen(kw_only=True)
class Launched:
    """A worker whose pane exists, pinned and tagged, with its identity written; not yet a member."""

    name: str
    index: int
    pane: str
    pid: int
    cli: str  # what runs in the pane, for the screen model (codex, claude, gemini, placeholder)
    record: Json
    role: str | None
    prompt: str | None
    tree: wt.Worktree | None
    context: RollbackContext


def _launch_worker(run: Run, name: str, index: int, launches: Launches, position: int) -> Gen[Launched]:
    paths, owner = run.paths, run.owner
    run.context = RollbackContext(worker_name=name)
    target, pid, leader = split_target(run.config)
    placement: layout.Placement | None = None
    if run.placements:
        placement, target, pid = _placed_target(run, position)
    if pid is None:
        raise Abort(f"scale_up_split_target_pid_missing:{target}", run.context)
    policy = launches.policies[position]
    role = policy.role or run.req.agent_type
    working_dir = run.req.cwd
    tree: wt.Worktree | None = None
    script = paths.startup_script(index)
    # 15. prepare
    try:
        yield from _ack(m.MakeDir(path=paths.worker_dir(name)))
        run.prepared.append(name)
        extra: dict[str, str] = {"OMX_TEAM_STATE_ROOT": paths.state_root, "OMX_TEAM_LEADER_CWD": run.req.cwd}
        if run.worktree_mode is not None:
            root = yield from wt.repo_root(run.req.cwd)
            tree = yield from wt.ensure(root, paths.team, name, run.worktree_mode)
            if tree.created:
                run.worktrees[name] = tree
            run.context = RollbackContext(worker_name=name, worktree_path=tree.path)
            run.maybe_inject("worktree-ensure-post-create")
            run.maybe_inject("worktree-post-create")
            working_dir = tree.path
        prompt = None if role is None else (yield from _role_prompt(launches, role))
        block = None if role is None or prompt is None else role_instructions(role, prompt,
                                                                                _model_of(policy.launch_args))
        team_file = posixpath.join(paths.team_dir, instructions.FILE_NAME)
        if tree is not None:
            team_text = yield from _read_optional(team_file)
            content = worktree_instructions(paths.team, name, team_text, block)
            backup = yield from wt.install_root_agents(tree.path, content)
            run.agents_backups[name] = (tree.path, backup)
            extra["OMX_MODEL_INSTRUCTIONS_FILE"] = posixpath.join(tree.path, "AGENTS.md")
            extra["OMX_TEAM_WORKTREE_PATH"] = tree.path
            if tree.branch is not None:
                extra["OMX_TEAM_WORKTREE_BRANCH"] = tree.branch
            extra["OMX_TEAM_WORKTREE_DETACHED"] = "1" if tree.detached else "0"
        elif block is not None:
            agents = paths.worker_file(name, "AGENTS.md")
            yield from _ack(m.WriteFile(path=agents, content=block))
            extra["OMX_MODEL_INSTRUCTIONS_FILE"] = agents
        else:
            extra["OMX_MODEL_INSTRUCTIONS_FILE"] = team_file
        built = ln.build_worker_launch(policy, team_name=paths.team, worker_cwd=working_dir, extra_env=extra,
                                       host=launches.host)
        if isinstance(built, Failure):
            raise StepFailure(built.failure())
        plan = built.unwrap()
        if launches.placeholder is not None:
            plan = dataclasses.replace(plan, command=launches.placeholder)
        elif tree is None and block is None and any(team_file in arg for arg in plan.argv):
            yield from _ensure_instructions(run)  # a launch never points at a missing file
        run.scripts.append(script)
        shell, rc_file = startup.choose_worker_shell(run.req.env.get("SHELL"), run.req.existing_shells)
        rendered = startup.render_startup_script(plan, worker_cwd=working_dir, shell=shell, rc_file=rc_file,
                                                 source_rc=startup.should_source_shell_rc({**run.req.env, **extra}))
        if isinstance(rendered, Failure):
            raise StepFailure(rendered.failure())
        yield from _ack(m.WriteFile(path=script, content=rendered.unwrap(), mode=0o700))
    except (StepFailure, wt.WorktreeError) as error:
        if isinstance(error, wt.WorktreeError) and error.half is not None:
            run.worktrees[name] = error.half
            tree = error.half
        raise Abort(f"scale_up_worker_preparation_failed:{name}:{error}",
                    RollbackContext(worker_name=name, worktree_path=tree.path if tree else None)) from None
    # 16. L S L
    context = run.context = RollbackContext(worker_name=name, worktree_path=tree.path if tree else None)
    yield from _prove_split_target(target, pid, owner, context)
    # 17. split
    direction = "-h" if leader else "-v"
    command = startup.gated_startup_command(script) if run.supervised else startup.startup_command(script)
    run.context = evolve(context, pane_id=None)
    where = (("split-window", direction, "-t", target) if placement is None
             else layout.placement_args(placement, target if isinstance(placement, layout.Split) else None))
    split = yield from expect(t.tmux(*where, "-d", "-P", "-F", "#{pane_id}", "-c", working_dir, command,
                                     mutates=True), m.Proc)
    if split.exit_code != 0:
        raise Abort(f"Failed to create tmux pane for {name}: {split.stderr.strip()}", context)
    lines = split.stdout.split("\n")
    pane = lines[0].strip() if lines else ""
    if not pane.startswith("%"):
        raise Abort(f"Failed to capture pane ID for {name}", context)
    # 18. pin
    # A pane exists from here on: an exception before the record below still names it.
    run.context = evolve(context, pane_id=pane)
    pinned = yield from t.prove(pane)
    cli = PLACEHOLDER if launches.placeholder is not None else plan.worker_cli
    record = _worker_record(run, name=name, index=index, role=role, cli=cli,
                            pid=pinned.pid if pinned.live else None, pane=pane, working_dir=working_dir, tree=tree)
    context = run.context = RollbackContext(worker=record, pane_id=pane, worker_name=name,
                                            worktree_path=tree.path if tree else None)
    if not pinned.live or pinned.pid is None:
        raise Abort(f"Failed to prove tmux pane for {name}", context)
    # 19. tag
    problem = yield from _tag(pane, pinned.pid, owner)
    if problem is not None:
        raise Abort(f"Failed to tag tmux pane for {name}: {problem}", context)
    run.tagged.add(pane)
    run.launched.append(record)
    if run.supervised:
        # Keep the pane if its CLI exits during start-up, so that its last lines can be read; only
        # then let the gated pane start its CLI.
        problem = yield from supervise.keep_on_exit(pane, pinned.pid, owner, True)
        if problem is None:
            problem = yield from supervise.release(pane, pinned.pid, owner)
        if problem is not None:
            raise Abort(f"scale_up_worker_start_failed:{name}: {problem}", context)
    # 20. identity
    try:
        yield from _ack(m.WriteFile(path=paths.worker_file(name, "identity.json"), content=render_json(record)))
        run.maybe_inject("identity")
    except StepFailure as error:
        raise Abort(f"scale_up_worker_materialization_failed:{name}:{error}", context) from None
    return Launched(name=name, index=index, pane=pane, pid=pinned.pid, cli=cli, record=record, role=role,
                    prompt=prompt, tree=tree, context=context)


def _await_started(run: Run, launched: Sequence[Launched]) -> Gen[None]:
    """Wait for every launched agent to start (``pure/agents/startup.py``); the first that failed
    to start aborts the scale-up with its CLI's own last lines."""
    items = [supervise.Starting(worker=w.name, cli=w.cli, pane=w.pane, pid=w.pid) for w in launched]
    started = yield from supervise.wait_until_ready(items, run.owner, supervise.policy_from_env(run.req.env))
    for worker, outcome in zip(launched, started, strict=True):
        run.deliveries.append({"worker": worker.name, "paneId": worker.pane, "cli": worker.cli,
                               "started": outcome.state, "answered": list(outcome.answered)})
        if not outcome.ok:
            run.context = worker.context
            raise Abort(f"scale_up_{outcome.reason}", worker.context)


def _materializing(worker: Launched, action: Gen[T]) -> Gen[T]:
    """Run ``action``; a failed file step is oh-my-codex's ``scale_up_worker_materialization_failed``."""
    try:
        return (yield from action)
    except StepFailure as error:
        raise Abort(f"scale_up_worker_materialization_failed:{worker.name}:{error}", worker.context) from None


def _hand_over(run: Run, worker: Launched, tasks: list[Json]) -> Gen[Json]:
    """Steps 21-22 for one launched worker (started, when watched): its inbox and its pending
    dispatch request, whose trigger is then typed (``_settle`` records how that went)."""
    run.context = worker.context
    return (yield from _materializing(worker, _hand_over_steps(run, worker, tasks)))


def _hand_over_steps(run: Run, worker: Launched, tasks: list[Json]) -> Gen[Json]:
    paths, name = run.paths, worker.name
    if run.supervised:  # started: stop keeping the pane after its process exits (oh-my-codex's default)
        problem = yield from supervise.keep_on_exit(worker.pane, worker.pid, run.owner, False)
        if problem is not None:
            raise Abort(f"scale_up_worker_start_failed:{name}: {problem}", worker.context)
    mine = [task for task in tasks if task.get("owner") == name]
    ultragoal = yield from _read_optional(_team_file(paths, run.config, run.req.cwd, "ultragoal-context.json"))
    section = dsp.ultragoal_section(ultragoal)
    inbox = dsp.render_inbox(team=paths.team, worker=name, role=worker.role or "", tasks=mine, paths=paths,
                             leader_cwd=run.req.cwd, specialization=None if worker.tree is not None else worker.prompt,
                             context=tuple(c for c in (run.approved_section, section) if c is not None))
    yield from _ack(m.WriteFile(path=paths.worker_file(name, "inbox.md"), content=inbox))
    run.maybe_inject("inbox")
    return (yield from _enqueue(run, worker))


def _settle(run: Run, worker: Launched, request: Json, delivery: dsp.Delivery | supervise.Delivery) -> Gen[None]:
    """Step 22's end and step 23: record the delivery, then commit the worker as a member."""
    run.context = worker.context
    failure = yield from _materializing(worker, _record_delivery(run, worker, request, delivery))
    if failure is not None:
        raise Abort(f"scale_up_dispatch_failed:{worker.name}:{failure}", worker.context)
    yield from _materializing(worker, _commit_member(run, worker))


def _commit_member(run: Run, worker: Launched) -> Gen[None]:
    run.maybe_inject("post-dispatch-rollback")
    run.config["workers"] = [*run.config.get("workers", []), worker.record]
    run.config["worker_count"] = len(run.config["workers"])
    run.config["next_worker_index"] = worker.index + 1
    run.added.append(worker.record)
    run.maybe_inject("config")
    updates = _membership_updates(run.config["workers"], worker.index + 1)
    if "next_task_id" in run.base_state.raw_config:
        # oh-my-codex's saveTeamConfig writes the config it read at the start: next_task_id as it was
        # before this run's tasks (they exist, so their ids are not handed out again)
        updates["next_task_id"] = run.base_state.raw_config["next_task_id"]
    if run.worktree_mode_derived:
        updates["worktree_mode"] = run.config["worktree_mode"]
    try:
        run.generation = yield from save_config(run.paths, run.generation, updates, None)
    except PlanError as error:
        raise StepFailure(error.outcome.message) from None
    run.maybe_inject("finalization")


def _ensure_instructions(run: Run) -> Gen[None]:
    """Write the team's ``worker-agents.md`` when it is missing (``pure/omx/instructions.py``)."""
    path = posixpath.join(run.paths.team_dir, instructions.FILE_NAME)
    if run.created_instructions is not None or (yield from _read_optional(path)) is not None:
        return
    sources = []
    for source in instructions.source_paths(run.req.env, run.req.cwd):
        sources.append((yield from _read_optional(source)))
    yield from _ack(m.WriteFile(path=path, content=instructions.compose(run.paths.team, sources)))
    run.created_instructions = path


def worktree_instructions(team: str, worker: str, team_text: str | None, role_block: str | None) -> str:
    """The generated worktree-root ``AGENTS.md`` (the original is kept in a backup, §8.2 step 8)."""
    head = team_text if team_text is not None else (
        f"# Team worker instructions\n\nYou are {worker} of team {team}. Read your inbox under "
        f"$OMX_TEAM_STATE_ROOT/team/{team}/workers/{worker}/inbox.md and follow it.\n")
    return head if role_block is None else head.rstrip("\n") + "\n\n" + role_block


def _worker_record(run: Run, *, name: str, index: int, role: str | None, cli: str, pid: int | None, pane: str,
                   working_dir: str, tree: wt.Worktree | None) -> Json:
    record: Json = {"name": name, "index": index}
    if role is not None:
        record["role"] = role
    record.update({"worker_cli": cli, "assigned_tasks": []})
    if pid is not None:
        record["pid"] = pid
    record["pane_id"] = pane
    record["working_dir"] = working_dir
    if tree is not None:
        record["worktree_repo_root"] = tree.repo_root
        record["worktree_path"] = tree.path
        if tree.branch is not None:
            record["worktree_branch"] = tree.branch
        record["worktree_detached"] = tree.detached
        record["worktree_created"] = tree.created
    record["team_state_root"] = run.paths.state_root
    return record


def _prove_split_target(target: str, pid: int, owner: str, context: RollbackContext) -> Gen[None]:
    first = yield from t.prove(target)
    if not first.live:
        raise Abort(f"scale_up_split_target_proof_unavailable:{target}:{first.code()}", context)
    if first.pid != pid:
        raise Abort(f"scale_up_split_target_pid_changed:{target}:{pid}:{first.pid}", context)
    tag = yield from t.read_owner(target)
    if tag.kind != "value" or tag.value != owner:
        raise Abort(f"scale_up_split_target_owner_changed:{target}", context)
    final = yield from t.prove(target)
    if not final.live:
        raise Abort(f"scale_up_split_target_proof_unavailable:{target}:{final.code()}", context)
    if final.pid != pid:
        raise Abort(f"scale_up_split_target_pid_changed:{target}:{pid}:{final.pid}", context)


def _tag(pane: str, pid: int, owner: str) -> Gen[str | None]:
    """Spec §3.4: a live proof with the pinned pid, then ``set-option`` (no read-back)."""
    proof = yield from t.prove(pane)
    if proof.unavailable:
        return f"exact_pane_proof_unavailable:{pane}:{proof.code()}"
    if not proof.live:
        return f"tmux pane is not proven live: {pane}"
    if proof.pid != pid:
        return f"tmux pane identity changed: {pane}"
    done = yield from expect(t.set_owner_step(pane, owner), m.Proc)
    if done.exit_code != 0:
        return f"failed to tag tmux pane {pane}: {done.stderr.strip()}"
    return None


def _enqueue(run: Run, worker: Launched) -> Gen[Json]:
    """Step 22: append the worker's inbox request (``pending``) to ``dispatch/requests.json``."""
    paths = run.paths
    mode = dsp.dispatch_mode(run.manifest)
    trigger = dsp.trigger_message(paths, worker.name, run.req.cwd, worker.tree is not None)
    request_id = yield from ids.fresh_uuid()
    now = yield from expect(m.Clock(), m.Value)
    request = dsp.new_request(request_id=request_id, team=paths.team, worker=worker.name, index=worker.index,
                              pane_id=worker.pane, trigger=trigger, mode=mode, now=now.value)
    try:
        requests = yield from dsp.read_requests(paths)
        yield from dsp.write_requests(paths, [*requests, request])
    except OSError as error:
        raise StepFailure(str(error)) from None
    return request


def _record_delivery(run: Run, worker: Launched, request: Json,
                     delivery: dsp.Delivery | supervise.Delivery) -> Gen[str | None]:
    """The request's outcome. Returns the failure that aborts the scale-up; a delivery the screen did
    not confirm is recorded and reported instead (docs/scale-up.md, "Watched start-up")."""
    paths = run.paths
    done = yield from expect(m.Clock(), m.Value)
    request = {**request, "attempt_count": 1, "updated_at": done.value}
    if isinstance(delivery, supervise.Delivery):
        request["status"] = "delivered" if delivery.ok else "failed"
        request["delivered_at" if delivery.ok else "failed_at"] = done.value
        request["last_reason"] = delivery.reason
    else:
        request["status"] = "notified" if delivery.ok else "failed"
        if delivery.ok:
            request["notified_at"] = done.value
        mode = str(request["transport_preference"])
        request["last_reason"] = dsp.delivered_reason(mode, delivery.reason) if delivery.ok else delivery.reason
    try:
        current = yield from dsp.read_requests(paths)
        yield from dsp.write_requests(paths, [request if isinstance(r, dict) and r.get("request_id") ==
                                              request["request_id"] else r for r in current])
    except OSError as error:
        raise StepFailure(str(error)) from None
    if not isinstance(delivery, supervise.Delivery):
        return None if delivery.ok else delivery.reason
    yield from _log_delivery(run, request, done.value)
    entry = next(d for d in run.deliveries if d["worker"] == worker.name)
    entry.update(status="delivered" if delivery.ok else "not_delivered", reason=delivery.reason,
                 requestId=request["request_id"], rounds=delivery.rounds)
    return delivery.reason if delivery.lost else None


def _log_delivery(run: Run, request: Json, now: str) -> Gen[None]:
    """oh-my-codex's delivery log line (``<cwd>/.omx/logs/team-delivery-<date>.jsonl``); best effort, as there."""
    line = {"timestamp": now, "kind": "team_delivery", "event": "dispatch_result", "source": "panefleet.scale_up",
            "team": run.paths.team, "request_id": request["request_id"], "to_worker": request["to_worker"],
            "intent": request["intent"], "transport": "send-keys",
            "result": "confirmed" if request["status"] == "delivered" else "failed", "reason": request["last_reason"]}
    path = posixpath.join(run.req.cwd, ".omx", "logs", f"team-delivery-{now[:10]}.jsonl")
    yield from expect(m.AppendFile(path=path, content=json.dumps(line, ensure_ascii=False, separators=(",", ":"))
                                   + "\n"), m.Ack)


def _event(paths: TeamPaths, reason: str) -> Gen[None]:
    event_id = yield from ids.fresh_uuid()
    now = yield from expect(m.Clock(), m.Value)
    event = {"type": "team_leader_nudge", "worker": "leader-fixed", "reason": reason,
             "event_id": event_id, "team": paths.team, "created_at": now.value}
    yield from _ack(m.AppendFile(path=paths.events, content=json.dumps(event, ensure_ascii=False,
                                                                       separators=(",", ":")) + "\n"))


def _finish_event(run: Run) -> Gen[None]:
    try:
        yield from _event(run.paths, f"scale_up: added {len(run.added)} worker(s), "
                                     f"new count={run.config['worker_count']}")
    except StepFailure as error:
        raise Abort(f"scale_up_finalization_failed:{error}") from None


# ------------------------------------------------------------------------------------------ rollback


def _persistence_failure(error: BaseException) -> str:
    message = error.outcome.message if isinstance(error, PlanError) else str(error)
    return f"Error: {message}"


def _rollback_workers(run: Run, context: RollbackContext) -> list[Json]:
    workers = list(run.added)
    for record in [*run.launched, *([context.worker] if context.worker is not None else [])]:
        if all(w["name"] != record["name"] for w in workers):
            workers.append(record)
    return workers


def _tracking_commit(run: Run, rollback_workers: list[Json]) -> Gen[None]:
    """§8.2 step 1: record every rollback worker in canonical state before any teardown."""
    paths = run.paths

    def body(b: Barrier) -> Gen[None]:
        yield from txn.recover(paths, b)
        config_text = yield from txn.read_text(paths.config)
        if config_text is None:
            raise fail(f"team_config_missing:{paths.team}")
        manifest_text = yield from txn.read_text(paths.manifest)
        loaded = read_team_state(paths, config_text, manifest_text)
        if isinstance(loaded, Failure):
            raise fail(f"team_state_malformed:{loaded.failure()}")
        # A manifest that is not a JSON object is left untouched (oh-my-codex would crash here and
        # leak the pane; the canonical read ignores such a manifest, so config.json records it).
        manifest_value = _json_object(manifest_text)
        current: Json = manifest_value if manifest_value is not None else json.loads(config_text)
        members = [w for w in current.get("workers") or [] if isinstance(w, dict)]
        next_index = _pos(current.get("next_worker_index"), 1)
        for worker in rollback_workers:
            if all(w.get("name") != worker["name"] for w in members):
                members.append(worker)
            next_index = max(next_index, worker["index"] + 1)
        updates = _membership_updates(members, next_index)
        generation = yield from txn.raw_generation(paths)
        change = txn.Change(config_text, saved_config_text(loaded.unwrap(), updates))
        manifest = None if manifest_value is None else txn.Change(manifest_text, _patch(manifest_text or "", updates))
        yield from txn.commit(paths, b, txn.Transaction(base_generation=generation or 0, tasks=(), config=change,
                                                         manifest=manifest, recover_to_new_on_failure=True))
        check = yield from txn.read_text(paths.config)
        recorded = {w.get("name"): w.get("pane_id") for w in json.loads(check or "{}").get("workers") or []
                    if isinstance(w, dict)}
        for worker in rollback_workers:
            if recorded.get(worker["name"], "\0") != worker.get("pane_id"):
                raise fail(f"scale_up_rollback_tracking_verification_failed:{worker['name']}")

    yield from with_barrier(paths, body)


def _authorize(run: Run, rollback_workers: list[Json], context: RollbackContext,
               debts: list[str]) -> tuple[list[str], list[t.TeardownTarget]]:
    """§8.2 step 3: candidates and the panes this run may kill (pinned and tagged by this run)."""
    candidates: list[str] = []
    for pane in [*(w.get("pane_id") for w in rollback_workers), context.pane_id]:
        if isinstance(pane, str) and pane.startswith("%") and pane not in candidates:
            candidates.append(pane)
    targets: list[t.TeardownTarget] = []
    for pane in candidates:
        owners = [w for w in rollback_workers if w.get("pane_id") == pane]
        if len(owners) != 1 or not t.is_positive_pid(owners[0].get("pid")):
            debts.append(f"pane_pid_unpinned:{pane}")
        elif pane not in run.tagged:
            debts.append(f"pane_owner_unverified:{pane}")
        else:
            targets.append(t.TeardownTarget(pane_id=pane, pid=owners[0]["pid"]))
    return candidates, targets


def _membership_commit(run: Run, unresolved: list[Json]) -> Gen[None]:
    """§8.2 step 6: canonical membership = baseline + unresolved workers, with their tasks."""
    paths = run.paths
    keep = {w["name"] for w in unresolved}

    def body(b: Barrier) -> Gen[None]:
        yield from txn.recover(paths, b)
        config_now = yield from txn.read_text(paths.config)
        if config_now is None:
            raise fail(f"team_config_missing:{paths.team}")
        manifest_now = yield from txn.read_text(paths.manifest)
        base = run.base_state.config
        members = [w for w in base.get("workers") or [] if isinstance(w, dict)]
        members += unresolved
        next_index = max([_pos(base.get("next_worker_index"), 1), *(w["index"] + 1 for w in unresolved)])
        updates = _membership_updates(members, next_index)
        config = txn.Change(config_now, saved_config_text(run.base_state, updates))
        manifest = None
        if _json_object(run.base_manifest_text) is None and run.base_manifest_text is not None:
            # The baseline manifest was not a JSON object (the canonical read ignored it): restore its bytes.
            if manifest_now != run.base_manifest_text:
                manifest = txn.Change(manifest_now, run.base_manifest_text)
        elif run.base_manifest_text is not None or manifest_now is not None:
            manifest = txn.Change(manifest_now, None if run.base_manifest_text is None
                                  else _patch(run.base_manifest_text, updates))
        changes: list[txn.TaskChange] = []
        for task_id in run.created_tasks:
            old = yield from txn.read_text(paths.task(task_id))
            if old is None:
                continue
            owner = run.task_owner.get(task_id)
            changes.append(txn.TaskChange(task_id, old, old if owner in keep else None))
        after: str | None = None
        if "rollback-membership-config-persistence" in run.inject:
            after = "config"
        elif "rollback-membership-manifest-persistence" in run.inject:
            after = "manifest"
        generation = yield from txn.raw_generation(paths)
        yield from txn.commit(paths, b, txn.Transaction(
            base_generation=generation or 0, tasks=tuple(changes), config=config, manifest=manifest,
            recover_to_new_on_failure=True, retain_journal_on_success=True,
            fail_rollback_persistence="rollback-membership-persistence" in run.inject,
            fail_rollback_persistence_after=after,  # type: ignore[arg-type]
        ))
        check = yield from txn.read_text(paths.config)
        recorded = {w.get("name"): w.get("pane_id") for w in json.loads(check or "{}").get("workers") or []
                    if isinstance(w, dict)}
        for worker in unresolved:
            if recorded.get(worker["name"], "\0") != worker.get("pane_id"):
                raise fail(f"scale_up_rollback_membership_verification_failed:{worker['name']}")
        for worker in _rollback_workers(run, RollbackContext()):
            if worker["name"] not in keep and worker["name"] in recorded and not _in_baseline(run, worker["name"]):
                raise fail(f"scale_up_rollback_membership_verification_failed:{worker['name']}")
        yield from txn.finalize(paths, b)

    yield from with_barrier(paths, body)


def _in_baseline(run: Run, name: str) -> bool:
    base = _json_object(run.base_manifest_text) or _json_object(run.base_config_text) or {}
    return any(isinstance(w, dict) and w.get("name") == name for w in base.get("workers") or [])


def _guard(action: Callable[[], Gen[T]]) -> Gen[tuple[T | None, str | None]]:
    """Run a sub-program; a failure becomes its message instead of ending the rollback."""
    try:
        value = yield from action()
    except PlanError as error:
        return None, error.outcome.message
    except (StepFailure, OSError, wt.WorktreeError) as error:
        return None, str(error)
    return value, None


def rollback(run: Run, abort: Abort) -> Gen[m.Done]:
    paths, context = run.paths, abort.context
    rollback_workers = _rollback_workers(run, context)
    _, problem = yield from _guard(lambda: _tracking_commit(run, rollback_workers))
    if problem is not None:
        return _error(f"scale_up_rollback_membership_persistence_failed:Error: {problem}")
    names = [w["name"] for w in rollback_workers]
    debts: list[str] = []
    _, problem = yield from _guard(lambda: dsp.remove_requests_for(paths, names))
    if problem is not None:
        debts.append(f"authoritative_dispatch_cleanup_failed:{problem}")
    candidates, targets = _authorize(run, rollback_workers, context, debts)
    if run.supervised:
        # A CLI that exited during start-up left its pane dead (remain-on-exit): remove it first, so
        # that the teardown below proves it absent instead of leaving a dead pane on screen.
        for target in targets:
            if target.pid is not None:
                problem = yield from supervise.remove_dead(target.pane_id, target.pid, run.owner)
                if problem is not None:
                    debts.append(f"pane_teardown_failed:{target.pane_id}")
    resolved: set[str] = set()
    if targets:
        report, problem = yield from _guard(lambda: t.teardown(
            targets, owner_id=run.owner, authorize=True,
            leader_pane_id=_str(run.config.get("leader_pane_id")), hud_pane_id=_str(run.config.get("hud_pane_id"))))
        if report is None:
            debts.append(f"pane_cleanup_exception:{problem}")
        else:
            resolved = set(report.resolved_ids())
            failed = report.failed_kills()
            proof = report.proof_failures()
            if failed or proof:  # proof failures include pid/owner refusals (reason pane_pid_changed)
                if failed:
                    debts.append(f"pane_teardown_failed:{','.join(failed)}")
                if proof:
                    debts.append("pane_proof_unavailable:" + ",".join(f"{r.pane_id}:{r.reason}" for r in proof))
                direct = set(failed) | {r.pane_id for r in proof}
                rest = [p for p in candidates if p not in resolved and p not in direct]
                if rest:
                    debts.append(f"pane_teardown_unresolved:{','.join(rest)}")
    unresolved_panes = {p for p in candidates if p not in resolved}
    unresolved = [w for w in rollback_workers if w.get("pane_id") in unresolved_panes]
    unresolved_names = {w["name"] for w in unresolved}
    if context.worker_name and context.pane_id in unresolved_panes:
        unresolved_names.add(context.worker_name)
    try:
        yield from _membership_commit(run, unresolved)
    except PlanError as error:
        journal = yield from expect(m.Stat(path=paths.journal), m.Value)
        prefix = "" if journal.value != "absent" else "no_recoverable_journal:"
        return _error(f"scale_up_rollback_membership_persistence_failed:{prefix}{_persistence_failure(error)}")
    _, problem = yield from _guard(lambda: _canonical_cleanup(run, rollback_workers, context, unresolved_names))
    if problem is not None:
        debts.append(f"canonical_cleanup_failed:{problem}")
    _, problem = yield from _guard(lambda: _resource_cleanup(run, context, unresolved_names))
    if problem is not None:
        debts.append(f"resource_cleanup_failed:{problem}")
    if not debts:
        return _error(abort.message)
    joined = ";".join(debts)
    reason = f"scale_up_rollback_cleanup_debt:{joined}; retry cleanup for [{','.join(names)}]"
    _, problem = yield from _guard(lambda: _event(paths, reason))
    if problem is not None:
        joined += f";cleanup_debt_event_failed:{problem}"
    message = f"scale_up_rollback_cleanup_debt:{joined}"
    debt = tuple(m.Debt(kind=d.split(":", 1)[0], subject=d.split(":", 1)[1] if ":" in d else "",
                        reason=abort.message) for d in debts)
    return m.Done(outcome=m.Outcome(status="debt", result=m.JsonValue({"ok": False, "error": message}),
                                    message=message), debt=debt)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _error(message: str) -> m.Done:
    return m.Done(outcome=m.Outcome(status="error", result=m.JsonValue({"ok": False, "error": message}),
                                    message=message))


def _canonical_cleanup(run: Run, rollback_workers: list[Json], context: RollbackContext,
                       unresolved: set[str]) -> Gen[None]:
    """§8.2 step 7: tasks of resolved workers and their worker directories go."""
    paths = run.paths
    for task_id in run.created_tasks:
        if run.task_owner.get(task_id) not in unresolved:
            yield from _ack(m.RemovePath(path=paths.task(task_id)))
    doomed = [w["name"] for w in rollback_workers if w["name"] not in unresolved]
    if context.worker_name and context.worker_name not in unresolved and context.worker_name not in doomed:
        doomed.append(context.worker_name)
    for name in doomed:
        yield from _ack(m.RemovePath(path=paths.worker_dir(name), recursive=True))
        kind = yield from expect(m.Stat(path=paths.worker_dir(name)), m.Value)
        if kind.value != "absent":
            raise StepFailure(f"worker directory still present: {paths.worker_dir(name)}")


def _resource_cleanup(run: Run, context: RollbackContext, unresolved: set[str]) -> Gen[None]:
    """§8.2 step 8: root AGENTS, created worktrees (and branches), prepared dirs, startup scripts."""
    paths = run.paths
    problems: list[str] = []
    for name, (tree_path, backup) in run.agents_backups.items():
        if name in unresolved or name in run.worktrees:
            continue  # a created worktree goes away whole; an unresolved one stays as it is
        yield from wt.restore_root_agents(tree_path, backup)
    for name, tree in run.worktrees.items():
        if name not in unresolved:
            problems += yield from wt.remove(tree)
    for name in run.prepared:
        if name not in unresolved:
            yield from _ack(m.RemovePath(path=paths.worker_dir(name), recursive=True))
    for script in run.scripts:
        worker = _script_worker(script)
        if worker not in unresolved:
            yield from _ack(m.RemovePath(path=script))
    if not run.runtime_existed and not unresolved:
        yield from _ack(m.RemovePath(path=paths.runtime_dir, recursive=True))
    if run.created_instructions is not None and not unresolved:
        yield from _ack(m.RemovePath(path=run.created_instructions))
    if problems:
        raise StepFailure("; ".join(problems))


_SCRIPT = re.compile(r"worker-([0-9]+)-startup\.sh")


def _script_worker(path: str) -> str:
    match = _SCRIPT.fullmatch(posixpath.basename(path))
    return f"worker-{match.group(1)}" if match else ""


ops.register("team.scale_up", ScaleUpRequest, scale_up)
