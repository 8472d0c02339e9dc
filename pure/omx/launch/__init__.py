r"""Launch-argument policy for scaled team workers (docs/launch-policy.md), as pure functions.

Two stages, mirroring when oh-my-codex decides things:

1. :func:`plan_scale_up_launches` — before anything is mutated, every worker of one ``scaleUp``
   call gets its *policy argv* (tokenised ``OMX_TEAM_WORKER_LAUNCH_ARGS``, inherited leader model,
   role model/reasoning, canonical order) and its CLI (``OMX_TEAM_WORKER_CLI`` /
   ``OMX_TEAM_WORKER_CLI_MAP`` / auto). Any refusal here is the whole call's error.
2. :func:`build_worker_launch` — when the worker's startup script is written: the process-launch
   steps 1–5 (bypass placement, ``model_instructions_file``, role bypass, MCP disabling),
   CLI translation for claude/gemini, and the worker's environment.

Nothing here reads a file, the process environment or argv: the shell passes the leader's process
environment and argv, the text of ``<CODEX_HOME>/.omx-config.json`` and ``config.toml`` and of
``.omx/setup-scope.json``, and the resolved CLI/node paths. Errors are oh-my-codex's messages.

JavaScript details reproduced on purpose: ``String.prototype.trim``/``\s`` whitespace (not
Python's), ``.`` not matching line terminators, ``getAgent`` lookups on a plain object (so
``constructor``/``__proto__`` resolve to a definition without tools, reasoning or model).
"""

from __future__ import annotations

from pure.omx.launch.agents import (
    AGENTS,
    AgentDefinition,
    CodexHome,
    agent_default_model,
    agent_reasoning_effort,
    get_agent,
    honors_exact_model,
    main_default_model,
    posix_join,
    resolve_codex_home_override,
    spark_default_model,
    standard_default_model,
)
from pure.omx.launch.args import (
    ParsedLaunchArgs,
    Token,
    env_launch_args,
    normalize_launch_args,
    parse_launch_args,
    resolve_team_worker_launch_args,
    split_launch_args,
    tokenize_launch_args,
)
from pure.omx.launch.flags import (
    AMBIENT_ENV_ALLOWLIST,
    APPROVAL_FLAG,
    CLAUDE_SKIP_PERMISSIONS_FLAG,
    CLI_NAMES,
    CODEX_BYPASS_FLAG,
    CONFIG_FLAG,
    DEFAULT_FRONTIER_MODEL,
    DEFAULT_SPARK_MODEL,
    DEFAULT_STANDARD_MODEL,
    DISABLED_OMX_MCP_SERVERS,
    ENV_LAUNCH_ARGS_SOURCE,
    GEMINI_APPROVAL_ARGS,
    GEMINI_PROMPT_FLAG,
    HUD_OWNERSHIP_ENV,
    LONG_CONFIG_FLAG,
    MADMAX_FLAG,
    MODEL_FLAG,
    MODEL_INSTRUCTIONS_FILE_KEY,
    MODEL_PROVIDER_KEY,
    REASONING_EFFORTS,
    REASONING_KEY,
    SANDBOX_FLAG,
    LaunchError,
    PolicyKind,
    WorkerCli,
    js_trim,
)
from pure.omx.launch.policy import (
    ScaleUpLaunchRequest,
    TaskRole,
    WorkerLaunchPolicy,
    auto_cli,
    cli_policy_compatibility_error,
    plan_scale_up_launches,
    resolve_worker_cli,
)
from pure.omx.launch.process import (
    LaunchHost,
    LaunchPlan,
    build_worker_launch,
    grants_execution_bypass,
    plan_worker_launch,
    resolve_process_launch_args,
)

__all__ = ["AGENTS", "AMBIENT_ENV_ALLOWLIST", "APPROVAL_FLAG", "AgentDefinition", "CLAUDE_SKIP_PERMISSIONS_FLAG", "CLI_NAMES", "CODEX_BYPASS_FLAG", "CONFIG_FLAG", "CodexHome", "DEFAULT_FRONTIER_MODEL", "DEFAULT_SPARK_MODEL", "DEFAULT_STANDARD_MODEL", "DISABLED_OMX_MCP_SERVERS", "ENV_LAUNCH_ARGS_SOURCE", "GEMINI_APPROVAL_ARGS", "GEMINI_PROMPT_FLAG", "HUD_OWNERSHIP_ENV", "LONG_CONFIG_FLAG", "LaunchError", "LaunchHost", "LaunchPlan", "MADMAX_FLAG", "MODEL_FLAG", "MODEL_INSTRUCTIONS_FILE_KEY", "MODEL_PROVIDER_KEY", "ParsedLaunchArgs", "PolicyKind", "REASONING_EFFORTS", "REASONING_KEY", "SANDBOX_FLAG", "ScaleUpLaunchRequest", "TaskRole", "Token", "WorkerCli", "WorkerLaunchPolicy", "agent_default_model", "agent_reasoning_effort", "auto_cli", "build_worker_launch", "cli_policy_compatibility_error", "env_launch_args", "get_agent", "grants_execution_bypass", "honors_exact_model", "js_trim", "main_default_model", "normalize_launch_args", "parse_launch_args", "plan_scale_up_launches", "plan_worker_launch", "posix_join", "resolve_codex_home_override", "resolve_process_launch_args", "resolve_team_worker_launch_args", "resolve_worker_cli", "spark_default_model", "split_launch_args", "standard_default_model", "tokenize_launch_args"]
