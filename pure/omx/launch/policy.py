"""Which CLI each worker runs and, for one scale-up call, every worker's launch policy (stage 1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from returns.result import Failure, Result, Success

from pure.omx.launch.agents import (
    CodexHome,
    agent_default_model,
    agent_reasoning_effort,
    honors_exact_model,
    resolve_codex_home_override,
)
from pure.omx.launch.args import parse_launch_args, resolve_team_worker_launch_args
from pure.omx.launch.flags import MODEL_FLAG, LaunchError, WorkerCli, js_lower, js_trim

# --------------------------------------------------------------------------- CLI selection


_CLI_MODES: Final = ("auto", "codex", "claude", "gemini")


def model_before_eoo(args: Sequence[str]) -> str | None:
    """``extractModelOverride`` used for auto CLI selection."""
    model: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        if arg == MODEL_FLAG:
            nxt = args[i + 1] if i + 1 < len(args) else None
            if nxt is not None and js_trim(nxt) != "" and not nxt.startswith("-"):
                model = js_trim(nxt)
                i += 1
        elif arg.startswith(MODEL_FLAG + "="):
            inline = js_trim(arg[len(MODEL_FLAG) + 1 :])
            if inline:
                model = inline
        i += 1
    return model


def auto_cli(args: Sequence[str]) -> WorkerCli:
    model = model_before_eoo(args)
    if model and "claude" in model.lower():
        return "claude"
    if model and "gemini" in model.lower():
        return "gemini"
    return "codex"


def resolve_worker_cli(
    worker_position: int, worker_count: int, launch_args: Sequence[str], env: Mapping[str, str]
) -> Result[WorkerCli, str]:
    """``resolveTeamWorkerCliForResolvedLaunchArgs`` (position is 1-based within this scale-up call)."""
    if worker_count < 1:
        return Failure(f"workerCount must be >= 1 (got {worker_count})")
    if not 1 <= worker_position <= worker_count:
        return Failure(f"workerIndex must be within 1..{worker_count} (got {worker_position})")
    raw_map_value = env.get("OMX_TEAM_WORKER_CLI_MAP")
    raw_map = js_trim(raw_map_value or "")
    if raw_map == "":
        raw = env.get("OMX_TEAM_WORKER_CLI")
        mode = js_lower(js_trim("auto" if raw is None else raw))
        if mode in ("", "auto"):
            return Success(auto_cli(launch_args))
        if mode in _CLI_MODES:
            return Success(mode)  # type: ignore[arg-type]
        return Failure(f'Invalid OMX_TEAM_WORKER_CLI value "{raw}". Expected: auto, codex, claude, gemini')
    entries = [js_trim(part) for part in raw_map.split(",")]
    invalid = f'Invalid OMX_TEAM_WORKER_CLI_MAP value "{raw_map_value}". '
    if all(e == "" for e in entries):
        return Failure(invalid + "Expected comma-separated values: auto|codex|claude|gemini.")
    if any(e == "" for e in entries):
        return Failure(invalid + "Empty entries are not allowed.")
    if len(entries) not in (1, worker_count):
        return Failure(
            f"Invalid OMX_TEAM_WORKER_CLI_MAP length {len(entries)}; expected 1 or {worker_count} comma-separated values."
        )
    entry = js_lower(entries[0] if len(entries) == 1 else entries[worker_position - 1])
    if entry not in _CLI_MODES:
        return Failure(invalid + "Expected comma-separated values: auto|codex|claude|gemini.")
    return Success(auto_cli(launch_args) if entry == "auto" else entry)  # type: ignore[arg-type]


def cli_policy_compatibility_error(cli: WorkerCli, launch_args: Sequence[str]) -> str | None:
    """``assertTeamWorkerCliPolicyCompatibility`` as an optional message."""
    if cli in ("claude", "gemini") and parse_launch_args(launch_args).classified in ("direct-policy", "mixed-policy"):
        return f'Selected team worker CLI "{cli}" is incompatible with an explicit approval or sandbox policy.'
    return None


# --------------------------------------------------------------------------- stage 1: scale-up plans


@dataclass(frozen=True)
class TaskRole:
    """The parts of a task (existing or incoming) that decide a worker's runtime role."""

    owner: str | None = None
    role: str | None = None


@dataclass(frozen=True)
class WorkerLaunchPolicy:
    worker_index: int
    worker_name: str
    role: str | None  # runtime role: the unique role of the worker's tasks, else the call's agent type
    launch_args: tuple[str, ...]  # policy argv in canonical order (docs/launch-policy.md), before stage 2
    worker_cli: WorkerCli
    mixed_task_roles: tuple[str, ...]


@dataclass(frozen=True)
class ScaleUpLaunchRequest:
    count: int
    next_worker_index: int
    agent_type: str | None
    env: Mapping[str, str]  # scaleUp's env argument
    process_env: Mapping[str, str]  # leader process environment (OMX_DEFAULT_*_MODEL lookups)
    leader_cwd: str
    codex_home: CodexHome  # files of the effective CODEX_HOME (override, or process CODEX_HOME/~/.codex)
    setup_scope_json: str | None = None  # text of <leader_cwd>/.omx/setup-scope.json
    existing_tasks: tuple[TaskRole, ...] = ()
    incoming_tasks: tuple[TaskRole, ...] = ()


def _runtime_role(worker_name: str, tasks: Sequence[TaskRole], agent_type: str | None) -> tuple[str | None, tuple[str, ...]]:
    roles = [t.role for t in tasks if t.owner == worker_name and t.role]
    unique = tuple(dict.fromkeys(r for r in roles if r is not None))
    return (roles[0] if roles and len(unique) == 1 else agent_type), unique


def plan_scale_up_launches(request: ScaleUpLaunchRequest) -> Result[tuple[WorkerLaunchPolicy, ...], str]:
    """Every worker's policy argv and CLI for one scale-up call, or the first refusal (no side effects)."""
    override = resolve_codex_home_override(request.env, request.leader_cwd, request.setup_scope_json)
    launch_env = dict(request.env)
    if override:
        launch_env["CODEX_HOME"] = override
    home = request.codex_home
    tasks = (*request.existing_tasks, *request.incoming_tasks)
    plans: list[WorkerLaunchPolicy] = []
    for offset in range(request.count):
        index = request.next_worker_index + offset
        name = f"worker-{index}"
        role, unique_roles = _runtime_role(name, tasks, request.agent_type)
        reasoning = agent_reasoning_effort(role, home) or agent_reasoning_effort(request.agent_type, home)
        inherited_raw = launch_env.get("OMX_TEAM_WORKER_INHERITED_MODEL")
        inherited = js_trim(inherited_raw) if inherited_raw is not None else None
        try:
            args = resolve_team_worker_launch_args(
                launch_env.get("OMX_TEAM_WORKER_LAUNCH_ARGS"),
                [MODEL_FLAG, inherited] if inherited else [],
                agent_default_model(role, request.process_env, home),
                reasoning,
                honors_exact_model(role, home),
            )
        except LaunchError as error:
            return Failure(str(error))
        cli_result = resolve_worker_cli(offset + 1, request.count, args, launch_env)
        if isinstance(cli_result, Failure):
            return Failure(cli_result.failure())
        cli = cli_result.unwrap()
        incompatible = cli_policy_compatibility_error(cli, args)
        if incompatible is not None:
            return Failure(incompatible)
        plans.append(WorkerLaunchPolicy(index, name, role, tuple(args), cli, unique_roles))
    return Success(tuple(plans))
