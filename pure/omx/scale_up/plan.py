"""What a scale-up decides before it changes anything: split targets and placements, launch policies,
role instructions, the approved-execution gate, and the legacy pid migration (docs/tmux-proofs.md,
"Proofs before every mutation")."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from attrs import evolve, frozen
from returns.result import Failure

from pure import model as m
from pure import tmux as t
from pure.omx import approved, layout
from pure.omx import launch as ln
from pure.omx.records import ConfigPatch, Member, TeamConfig, to_json
from pure.omx.scale_up.config import locked_state, save_config
from pure.omx.scale_up.new_tasks import existing_tasks
from pure.omx.scale_up.run import (
    PLACEHOLDER,
    ScaleUpRequest,
    ScaleUpRun,
    read_optional,
    team_state_file,
)
from pure.omx.state import TeamPaths, TeamState
from pure.program import Gen, PlanError, expect, refused


def split_target(config: TeamConfig) -> tuple[str, int | None, bool]:
    """The last worker's pane when it has one, else the leader pane (docs/tmux-proofs.md, "Proofs
    before every mutation")."""
    last = config.workers[-1] if config.workers else None
    if last is not None and last.pane_id is not None and last.pane_id.strip():
        return last.pane_id, last.pid if t.is_positive_pid(last.pid) else None, False
    pid = config.leader_pane_pid
    return config.leader_pane_id or "", pid if t.is_positive_pid(pid) else None, True


def team_panes(config: TeamConfig) -> list[tuple[str, int | None]]:
    """The team's panes with their pinned pids, in split-preference order: newest worker first, the leader last."""
    panes: list[tuple[str, int | None]] = []
    for worker in reversed(config.workers):
        if t.is_pane_id(worker.pane_id):
            panes.append((worker.pane_id, worker.pid if t.is_positive_pid(worker.pid) else None))
    leader, pid = config.leader_pane_id, config.leader_pane_pid
    if t.is_pane_id(leader):
        panes.append((leader, pid if t.is_positive_pid(pid) else None))
    return panes


def pinned_servers(config: TeamConfig, *launched: Member) -> dict[str, str | None]:
    """The tmux server each of the team's panes (and of ``launched``, this run's) was pinned on
    (pure/tmux/parse.py ``on_server``); None for a pin recorded without one."""
    servers: dict[str, str | None] = {}
    if t.is_pane_id(config.leader_pane_id):
        servers[config.leader_pane_id] = config.leader_tmux_server
    servers.update((w.pane_id, w.tmux_server) for w in (*config.workers, *launched) if t.is_pane_id(w.pane_id))
    return servers


def plan_placements(config: TeamConfig, target: str, expected: int | None, count: int) -> Gen[list[layout.Placement]]:
    """Watched start-up (docs/scale-up.md, "Pane placement"): where each new worker goes, from one
    snapshot and the pane geometry. Candidates are the team's panes that are live with their pinned
    pid (so a gone last worker no longer blocks the team: a documented deviation); each is proven
    again (``L, S, L``) right before it is split. No live candidate: oh-my-codex's refusal for its
    split target. No room: refused before anything is created."""
    snapshot = yield from expect(t.list_panes_step(), m.Proc)
    servers = pinned_servers(config)

    def verdict(pane: str) -> t.Verdict:
        return t.on_server(t.verdict_from_answer(pane, snapshot), servers.get(pane))

    live = [pane for pane, pid in team_panes(config) if (v := verdict(pane)).live and pid is not None and v.pid == pid]
    if not live:
        first = verdict(target)
        if not first.live:
            raise refused(f"scale_up_split_target_proof_unavailable:{target}:{first.code()}")
        raise refused(f"scale_up_split_target_pid_changed:{target}:{expected}:{first.pid}")
    geometry = yield from layout.read_geometry()
    if isinstance(geometry, Failure):
        raise refused(f"scale_up_pane_geometry_unavailable:{geometry.failure()}")
    boxes = geometry.unwrap()
    leader = config.leader_pane_id
    planned = layout.plan_placements(boxes, [p for p in live if p in boxes], count,
                                     leader_pane=leader if leader is not None and leader in boxes else live[-1])
    if isinstance(planned, Failure):
        raise refused(f"scale_up_no_room:{planned.failure().message}")
    return planned.unwrap()


def placed_target(run: ScaleUpRun, position: int) -> tuple[layout.Placement, str, int | None]:
    """The placement of the worker at ``position``, its real target pane (the leader's, for a new
    window) and that pane's pinned pid."""
    placement = run.placements[position]
    pinned = {pane: pid for pane, pid in team_panes(run.base_state.config)}
    pinned.update({str(r.pane_id): r.pid for r in run.undo.launched()})
    if isinstance(placement, layout.Split):
        planned = layout.planned_index(placement.target)
        target = str(run.undo.launched()[planned].pane_id) if planned is not None else placement.target
    else:
        target = str(run.config.leader_pane_id)
    pid = pinned.get(target)
    return placement, target, pid if t.is_positive_pid(pid) else None


def approved_execution_gate(paths: TeamPaths, config: TeamConfig, cwd: str) -> Gen[str | None]:
    """Step 3: a persisted approved-execution binding must resolve before any worker launches
    (``pure/omx/approved.py``). ``missing`` passes with no context; ``malformed``, ``stale`` and
    ``ambiguous`` fail closed with oh-my-codex's errors; a valid binding passes and answers the
    ``## Approved Handoff Context`` section every new worker's inbox carries."""
    binding = team_state_file(paths, config, cwd, "approved-execution.json")
    resolution = yield from approved.resolve_binding(binding, config.leader_cwd or cwd)
    error = resolution.error(paths.team)
    if error is not None:
        raise refused(error)
    return resolution.inbox_section()


@frozen(kw_only=True)
class Launches:
    """Step 3: every worker's launch policy, frozen before any mutation, and what stage 2 needs."""

    policies: tuple[ln.WorkerLaunchPolicy, ...]
    host: ln.LaunchHost
    prompt_dirs: tuple[str, ...]
    placeholder: str | None  # the placeholder agent that replaces the CLI (panefleet extension)


def _home_dir(env: dict[str, str]) -> str:
    return env.get("HOME", "/root") or "/root"


def codex_home_dir(env: dict[str, str], cwd: str, setup_scope: str | None) -> tuple[str | None, str]:
    """The launch's ``CODEX_HOME`` override (None: none) and the directory its files are read from:
    the override, else the environment's ``CODEX_HOME``, else ``~/.codex``."""
    override = ln.resolve_codex_home_override(env, cwd, setup_scope)
    home_dir = override or env.get("CODEX_HOME", "").strip() or posixpath.join(_home_dir(env), ".codex")
    return override, posixpath.normpath(posixpath.join(cwd, home_dir))


def prompt_dirs(cwd: str, home_dir: str) -> tuple[str, ...]:
    """Where a role's prompt ``<role>.md`` is looked for, in order (``role_prompt``)."""
    return posixpath.join(cwd, ".codex", "prompts"), posixpath.join(home_dir, "prompts")


def plan_launches(req: ScaleUpRequest, paths: TeamPaths, start: int, state: TeamState) -> Gen[Launches]:
    setup_scope = yield from read_optional(posixpath.join(req.cwd, ".omx", "setup-scope.json"))
    override, home_dir = codex_home_dir(req.env, req.cwd, setup_scope)
    omx_config = yield from read_optional(posixpath.join(home_dir, ".omx-config.json"))
    config_toml = yield from read_optional(posixpath.join(home_dir, "config.toml"))
    home = ln.CodexHome(omx_config_json=omx_config, config_toml=config_toml)
    existing = yield from existing_tasks(paths)
    placeholder = None
    launch_env = dict(req.env)
    if launch_env.get("OMX_TEAM_WORKER_CLI", "").strip() == PLACEHOLDER or state.raw_config.worker_cli == PLACEHOLDER:
        launch_env.pop("OMX_TEAM_WORKER_CLI", None)
        placeholder = req.cli_paths.get(PLACEHOLDER)
        if not placeholder:
            raise refused("placeholder_agent_unavailable: the panefleet placeholder agent was not found")
    team_cli = state.raw_config.worker_cli
    if (placeholder is None and team_cli is not None and team_cli in ln.CLI_NAMES and not launch_env.get("OMX_TEAM_WORKER_CLI", "").strip()
            and not launch_env.get("OMX_TEAM_WORKER_CLI_MAP", "").strip()):
        # the team's CLI (team init --worker-cli) when the environment selects none: docs/scale-up.md
        launch_env["OMX_TEAM_WORKER_CLI"] = team_cli
    request = ln.ScaleUpLaunchRequest(
        count=req.count, next_worker_index=start, agent_type=req.agent_type, env=launch_env, process_env=launch_env,
        leader_cwd=req.cwd, codex_home=home, setup_scope_json=setup_scope,
        existing_tasks=tuple(ln.TaskRole(owner=x.owner, role=x.role) for x in existing),
        incoming_tasks=tuple(ln.TaskRole(owner=spec.owner, role=spec.role) for spec in req.tasks),
    )
    planned = ln.plan_scale_up_launches(request)
    if isinstance(planned, Failure):
        raise refused(planned.failure())
    if placeholder is None:
        for offset, policy in enumerate(planned.unwrap()):
            if req.cli_paths.get(policy.worker_cli) == "":
                raise refused(cli_unavailable(policy.worker_cli, f"worker-{start + offset}"))
            problems = (req.cli_problems or {}).get(policy.worker_cli)
            if problems:
                raise refused(f"{CLI_NOT_READY}:{policy.worker_cli}:worker-{start + offset}:{problems[0]}")
    env = dict(launch_env)
    if override:
        env["CODEX_HOME"] = override
    host = ln.LaunchHost(process_env=env, process_argv=req.process_argv, cli_paths=req.cli_paths,
                         node_path=req.node_path, codex_home=home)
    return Launches(policies=planned.unwrap(), host=host, prompt_dirs=prompt_dirs(req.cwd, home_dir),
                    placeholder=placeholder)


CLI_UNAVAILABLE = "worker_cli_unavailable"
CLI_NOT_READY = "worker_cli_not_ready"  # what panefleet doctor says keeps the CLI from starting here


def cli_unavailable(cli: str, worker: str) -> str:
    return (f"{CLI_UNAVAILABLE}:{cli}: the worker CLI '{cli}' selected for {worker} was not found on PATH; "
            "install it or fix PATH, or choose another CLI (OMX_TEAM_WORKER_CLI, OMX_TEAM_WORKER_CLI_MAP)")


# a role whose prompt file may be looked for (a name that cannot leave its prompt folder)
ROLE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


def role_prompt(launches: Launches, role: str) -> Gen[str | None]:
    if not ROLE_NAME.fullmatch(role):
        return None
    for folder in launches.prompt_dirs:
        data = yield from expect(m.ReadFile(path=posixpath.join(folder, f"{role}.md")), m.FileData)
        if data.content is not None:
            return data.content
    return None


def model_of(argv: Sequence[str]) -> str | None:
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


def split_target_problem(proof: t.Proof) -> str:
    """Why a split target is not ours to split, in oh-my-codex's words (also for a pid-less target
    pinned by ``pin_owned``)."""
    target = proof.pane_id
    if proof.kind == "owner_changed":
        return f"scale_up_split_target_owner_changed:{target}"
    if proof.kind in ("pid_changed", "pid_unpinned"):
        return f"scale_up_split_target_pid_changed:{target}:{proof.pinned_pid}:{proof.found_pid}"
    return f"scale_up_split_target_proof_unavailable:{target}:{proof.code}"


def migrate_legacy_pid(paths: TeamPaths, state: TeamState, owner: str) -> Gen[TeamState]:
    """The legacy pid migration: pin a pid-less split target through ``L, S, L`` and persist it before
    splitting."""
    target, _pid, leader = split_target(state.config)
    proof = yield from t.pin_owned(target, owner)
    if proof.token is None:
        raise refused(split_target_problem(proof))
    pinned, server = proof.token.pid, proof.token.server
    workers = state.config.workers
    patch = (ConfigPatch(leader_pane_pid=pinned, leader_tmux_server=server) if leader
             else ConfigPatch(workers=tuple(to_json(w) for w in (
                 *workers[:-1], evolve(workers[-1], pid=pinned, tmux_server=server)))))
    try:
        yield from save_config(paths, state.config.generation, patch, None)
    except PlanError as error:
        raise refused(f"scale_up_split_target_pid_persistence_failed:{target}:{error.outcome.message}") from None
    fresh = yield from locked_state(paths)
    if fresh is None:
        raise refused(f"Team {paths.team} not found")
    return fresh
