"""Stage 2: a worker's final command, argv and environment (startup-script mode, docs/launch-policy.md,
"Process launch")."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from returns.result import Failure, Result, Success

from pure.omx.launch.agents import CodexHome, configured_text, get_agent, posix_join
from pure.omx.launch.args import config_string_value, is_config_for, normalize_launch_args, parse_launch_args
from pure.omx.launch.flags import (
    AMBIENT_ENV_ALLOWLIST,
    CLAUDE_SKIP_PERMISSIONS_FLAG,
    CODEX_BYPASS_FLAG,
    CONFIG_FLAG,
    DISABLED_OMX_MCP_SERVERS,
    GEMINI_APPROVAL_ARGS,
    GEMINI_PROMPT_FLAG,
    HUD_OWNERSHIP_ENV,
    JS_WS,
    LONG_CONFIG_FLAG,
    MADMAX_FLAG,
    MODEL_FLAG,
    MODEL_INSTRUCTIONS_FILE_KEY,
    MODEL_PROVIDER_KEY,
    LaunchError,
    WorkerCli,
    js_lower,
    js_trim,
)
from pure.omx.launch.policy import (
    ScaleUpLaunchRequest,
    WorkerLaunchPolicy,
    cli_policy_compatibility_error,
    model_before_eoo,
    plan_scale_up_launches,
)

# --------------------------------------------------------------------------- stage 2: process launch


@dataclass(frozen=True)
class LaunchHost:
    """Facts about the leader process and host that the shell observed."""

    process_env: Mapping[str, str]
    process_argv: tuple[str, ...]
    cli_paths: Mapping[str, str]  # "codex"/"claude"/"gemini" -> resolved path (or the bare name)
    node_path: str  # the leader's node binary, used unless OMX_LEADER_NODE_PATH is set
    codex_home: CodexHome = field(default_factory=CodexHome)  # files of the worker's effective CODEX_HOME


@dataclass(frozen=True)
class LaunchPlan:
    worker_cli: WorkerCli
    command: str  # the CLI path that the startup script execs
    argv: tuple[str, ...]  # arguments after the command, final (steps 1-5 applied)
    env: tuple[tuple[str, str], ...]  # the worker process env (processSpec.env order)
    startup_env: tuple[tuple[str, str], ...]  # ambient proxy vars + env, as exported by the startup script
    leader_node_path: str


def _insert_before_eoo(args: Sequence[str], inserted: Sequence[str]) -> list[str]:
    if "--" not in args:
        return [*args, *inserted]
    cut = list(args).index("--")
    return [*args[:cut], *inserted, *args[cut:]]


def _canonical_bypass(args: Sequence[str]) -> list[str]:
    cut = list(args).index("--") if "--" in args else len(args)
    head = [a for a in args[:cut] if a not in (CODEX_BYPASS_FLAG, MADMAX_FLAG)]
    return [*head, CODEX_BYPASS_FLAG, *args[cut:]]


def _config_values_before_eoo(args: Sequence[str]) -> list[str]:
    values: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        if arg in (CONFIG_FLAG, LONG_CONFIG_FLAG):
            nxt = args[i + 1] if i + 1 < len(args) else None
            if nxt == "--":
                break
            i += 1
            if nxt is not None:
                values.append(nxt)
        elif arg.startswith(CONFIG_FLAG + "="):
            values.append(arg[len(CONFIG_FLAG) + 1 :])
        elif arg.startswith(LONG_CONFIG_FLAG + "="):
            values.append(arg[len(LONG_CONFIG_FLAG) + 1 :])
        i += 1
    return values


def _has_config_key(args: Sequence[str], key: str) -> bool:
    for value in _config_values_before_eoo(args):
        trimmed = js_trim(value)
        if trimmed.startswith(key) and re.match(JS_WS + "*=", trimmed[len(key) :]):
            return True
    return False


def grants_execution_bypass(role: str | None) -> bool:
    """``shouldGrantExecutionBypassForRole``: absent/unknown roles and ``tools == "execution"`` roles."""
    normalized = js_lower(js_trim(role)) if role is not None else ""
    if not normalized:
        return True
    agent = get_agent(normalized)
    return agent is None or agent.tools == "execution"


def _escape_toml(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _toml_declares_mcp_server(config_toml: str | None, server: str) -> bool:
    if config_toml is None:
        return False
    text = config_toml
    for terminator in "\r\u2028\u2029":
        text = text.replace(terminator, "\n")
    name = re.escape(server)
    pattern = (
        rf"^{JS_WS}*\[{JS_WS}*mcp_servers{JS_WS}*\.{JS_WS}*(?:\"{name}\"|'{name}'|{name}){JS_WS}*\]{JS_WS}*$"
    )
    return re.search(pattern, text, re.MULTILINE) is not None


def _mcp_compat(env: Mapping[str, str]) -> bool:
    raw = env.get("OMX_TEAM_WORKER_MCP_COMPAT")
    return raw is not None and js_lower(js_trim(raw)) in ("1", "true", "on", "compat")


def _provider_env(effective_env: Mapping[str, str], home: CodexHome, provider_override: str | None) -> dict[str, str]:
    """``readActiveProviderEnvOverrides``: ``{env_key: value}`` of the active model provider."""
    config = home.toml()
    if config is None:
        return {}
    active = configured_text(provider_override) or configured_text(config.get("model_provider"))
    providers = config.get("model_providers")
    if not active or not isinstance(providers, dict):
        return {}
    provider = providers.get(active)
    if not isinstance(provider, dict):
        return {}
    env_key = configured_text(provider.get("env_key"))
    if not env_key:
        return {}
    value = configured_text(effective_env.get(env_key))
    return {env_key: value} if value else {}


def _translate_for_cli(cli: WorkerCli, args: Sequence[str], role: str | None, initial_prompt: str | None) -> list[str]:
    if cli == "codex":
        return list(args)
    if cli == "gemini":
        model = model_before_eoo(args)
        out = list(GEMINI_APPROVAL_ARGS) if grants_execution_bypass(role) else []
        prompt = js_trim(initial_prompt) if initial_prompt is not None else ""
        if prompt:
            out += [GEMINI_PROMPT_FLAG, prompt]
        if model and "gemini" in model.lower():
            out += [MODEL_FLAG, model]
        return out
    return [CLAUDE_SKIP_PERMISSIONS_FLAG] if grants_execution_bypass(role) else []


def resolve_process_launch_args(
    launch_args: Sequence[str], worker_cwd: str, effective_env: Mapping[str, str], process_argv: Sequence[str]
) -> list[str]:
    """Process-launch steps 1–3 (``resolveWorkerLaunchArgs``); raises :class:`LaunchError`."""
    merged = list(launch_args)
    if parse_launch_args(merged).classified == "direct-policy":
        merged = normalize_launch_args(merged)
    policy = parse_launch_args(merged).classified
    ambient = parse_launch_args(process_argv, "ambient process arguments", ignore_direct_policy=True).wants_bypass
    if policy in ("none", "bypass") and (ambient or policy == "bypass"):
        merged = _canonical_bypass(merged)
    if effective_env.get("OMX_BYPASS_DEFAULT_SYSTEM_PROMPT") != "0" and not _has_config_key_regex(
        merged, MODEL_INSTRUCTIONS_FILE_KEY
    ):
        path = effective_env.get("OMX_MODEL_INSTRUCTIONS_FILE") or posix_join(worker_cwd, "AGENTS.md")
        merged = _insert_before_eoo(merged, [CONFIG_FLAG, f'{MODEL_INSTRUCTIONS_FILE_KEY}="{_escape_toml(path)}"'])
    return merged


def _has_config_key_regex(args: Sequence[str], key: str) -> bool:
    return any(is_config_for(v, key) for v in _config_values_before_eoo(args))


def build_worker_launch(
    policy: WorkerLaunchPolicy,
    *,
    team_name: str,
    worker_cwd: str,
    extra_env: Mapping[str, str],
    host: LaunchHost,
    initial_prompt: str | None = None,
) -> Result[LaunchPlan, str]:
    """The worker's final command, argv and environment (startup-script mode, process-launch steps 1–5)."""
    effective_env = {**host.process_env, **extra_env}
    cli = policy.worker_cli
    try:
        full_args = resolve_process_launch_args(policy.launch_args, worker_cwd, effective_env, host.process_argv)
        incompatible = cli_policy_compatibility_error(cli, full_args)
        if incompatible is not None:
            return Failure(incompatible)
        if cli == "codex" and parse_launch_args(full_args).classified == "mixed-policy":
            return Failure("internal_mixed_codex_worker_policy_argv")
        cli_args = _translate_for_cli(cli, full_args, policy.role, initial_prompt)
        if cli == "codex" and grants_execution_bypass(policy.role) and parse_launch_args(cli_args).classified == "none":
            cli_args = _canonical_bypass(cli_args)
        provider_override = None
        if cli == "codex":
            override = parse_launch_args(cli_args).model_provider_override
            provider_override = config_string_value(override, MODEL_PROVIDER_KEY) if override else None
    except LaunchError as error:
        return Failure(str(error))

    command = host.cli_paths.get(cli, cli)
    node_override = host.process_env.get("OMX_LEADER_NODE_PATH")
    leader_node = js_trim(node_override) if node_override and js_trim(node_override) else host.node_path
    codex_home_value = effective_env.get("CODEX_HOME")
    codex_home_trimmed = js_trim(codex_home_value) if codex_home_value is not None else ""
    sqlite_value = effective_env.get("CODEX_SQLITE_HOME")
    sqlite_trimmed = js_trim(sqlite_value) if sqlite_value is not None else ""

    display = js_trim(extra_env.get("OMX_TEAM_DISPLAY_NAME", ""))
    internal = f"{team_name}/worker-{policy.worker_index}"
    env: dict[str, str] = {
        "OMX_TEAM_WORKER": f"{display}/worker-{policy.worker_index}" if display else internal,
        "OMX_TEAM_INTERNAL_WORKER": internal,
        "OMX_LEADER_NODE_PATH": leader_node,
        "OMX_LEADER_CLI_PATH": command,
    }
    if cli == "codex" and codex_home_trimmed:
        env["CODEX_HOME"] = codex_home_trimmed
    if cli == "codex" and sqlite_trimmed:
        env["CODEX_SQLITE_HOME"] = sqlite_trimmed
    if cli == "codex":
        env.update(_provider_env(effective_env, host.codex_home, provider_override))
    for key, value in extra_env.items():
        if js_trim(value) != "":
            env[key] = value
    for key in HUD_OWNERSHIP_ENV:
        env.pop(key, None)

    argv = list(cli_args)
    if cli == "codex" and not _mcp_compat(effective_env):
        for server in DISABLED_OMX_MCP_SERVERS:
            key = f"mcp_servers.{server}.enabled"
            if not _toml_declares_mcp_server(host.codex_home.config_toml, server) or _has_config_key(argv, key):
                continue
            argv = _insert_before_eoo(argv, [CONFIG_FLAG, f"{key}=false"])

    startup_env: dict[str, str] = {
        k: v for k in AMBIENT_ENV_ALLOWLIST if (v := host.process_env.get(k)) is not None and js_trim(v) != ""
    }
    startup_env.update(env)
    spec_node = js_trim(env.get("OMX_LEADER_NODE_PATH", ""))
    return Success(
        LaunchPlan(
            worker_cli=cli,
            command=command,
            argv=tuple(argv),
            env=tuple(env.items()),
            startup_env=tuple(startup_env.items()),
            leader_node_path=spec_node or leader_node,
        )
    )


def plan_worker_launch(
    request: ScaleUpLaunchRequest,
    position: int,
    *,
    team_name: str,
    worker_cwd: str,
    extra_env: Mapping[str, str],
    host: LaunchHost,
) -> Result[LaunchPlan, str]:
    """Convenience: stage 1 for the whole call, then stage 2 for the worker at 0-based ``position``."""
    def build(plans: tuple[WorkerLaunchPolicy, ...]) -> Result[LaunchPlan, str]:
        if not 0 <= position < len(plans):
            return Failure(f"worker position {position} outside 0..{len(plans) - 1}")
        return build_worker_launch(
            plans[position], team_name=team_name, worker_cwd=worker_cwd, extra_env=extra_env, host=host
        )

    return plan_scale_up_launches(request).bind(build)
