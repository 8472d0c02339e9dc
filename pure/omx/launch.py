"""Launch-argument policy for scaled team workers (spec §13), as pure functions.

Two stages, mirroring when oh-my-codex decides things:

1. :func:`plan_scale_up_launches` — before anything is mutated, every worker of one ``scaleUp``
   call gets its *policy argv* (tokenised ``OMX_TEAM_WORKER_LAUNCH_ARGS``, inherited leader model,
   role model/reasoning, canonical order §13.4) and its CLI (``OMX_TEAM_WORKER_CLI`` /
   ``OMX_TEAM_WORKER_CLI_MAP`` / auto). Any refusal here is the whole call's error.
2. :func:`build_worker_launch` — when the worker's startup script is written: the process-launch
   steps 1–5 of §13.4 (bypass placement, ``model_instructions_file``, role bypass, MCP disabling),
   CLI translation for claude/gemini, and the worker's environment.

Nothing here reads a file, the process environment or argv: the shell passes the leader's process
environment and argv, the text of ``<CODEX_HOME>/.omx-config.json`` and ``config.toml`` and of
``.omx/setup-scope.json``, and the resolved CLI/node paths. Errors are oh-my-codex's messages.

JavaScript details reproduced on purpose: ``String.prototype.trim``/``\\s`` whitespace (not
Python's), ``.`` not matching line terminators, ``getAgent`` lookups on a plain object (so
``constructor``/``__proto__`` resolve to a definition without tools, reasoning or model).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from returns.result import Failure, Result, Success

# --------------------------------------------------------------------------- JS string helpers

_JS_WS_CHARS: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WS: Final = "[" + re.escape(_JS_WS_CHARS) + "]"
_JS_LINE_TERMINATORS: Final = "\n\r\u2028\u2029"


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(_JS_WS_CHARS)


def _js_lower(text: str) -> str:
    return text.lower()


class LaunchError(Exception):
    """Internal carrier for an oh-my-codex error message; never escapes this module."""


def _launch_args_error(source: str, reason: str) -> LaunchError:
    return LaunchError(f"Invalid {source}: {reason}")


# --------------------------------------------------------------------------- constants

MADMAX_FLAG: Final = "--madmax"
CODEX_BYPASS_FLAG: Final = "--dangerously-bypass-approvals-and-sandbox"
CLAUDE_SKIP_PERMISSIONS_FLAG: Final = "--dangerously-skip-permissions"
MODEL_FLAG: Final = "--model"
CONFIG_FLAG: Final = "-c"
LONG_CONFIG_FLAG: Final = "--config"
APPROVAL_FLAG: Final = "--ask-for-approval"
SANDBOX_FLAG: Final = "--sandbox"
GEMINI_APPROVAL_ARGS: Final = ("--approval-mode", "yolo")
GEMINI_PROMPT_FLAG: Final = "-i"
REASONING_KEY: Final = "model_reasoning_effort"
MODEL_PROVIDER_KEY: Final = "model_provider"
MODEL_INSTRUCTIONS_FILE_KEY: Final = "model_instructions_file"
ENV_LAUNCH_ARGS_SOURCE: Final = "OMX_TEAM_WORKER_LAUNCH_ARGS"
DISABLED_OMX_MCP_SERVERS: Final = (
    "omx_state",
    "omx_memory",
    "omx_code_intel",
    "omx_trace",
    "omx_wiki",
    "omx_hermes",
)
AMBIENT_ENV_ALLOWLIST: Final = ("HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy")
HUD_OWNERSHIP_ENV: Final = ("OMX_TMUX_HUD_OWNER", "OMX_TMUX_HUD_LEADER_PANE")
REASONING_EFFORTS: Final = ("low", "medium", "high", "xhigh", "max")
DEFAULT_FRONTIER_MODEL: Final = "gpt-5.6-sol"
DEFAULT_STANDARD_MODEL: Final = "gpt-5.6-terra"
DEFAULT_SPARK_MODEL: Final = "gpt-5.6-luna"

WorkerCli = Literal["codex", "claude", "gemini"]
CLI_NAMES: Final = ("codex", "claude", "gemini")
PolicyKind = Literal["none", "bypass", "direct-policy", "mixed-policy"]

# --------------------------------------------------------------------------- agent table


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    reasoning_effort: str | None
    tools: str | None  # "execution" | "analysis" | "read-only"
    model_class: str | None  # "fast" | "standard" | "frontier"
    exact_model: str | None = None


def _agent(name: str, effort: str, tools: str, model_class: str, exact: str | None = None) -> AgentDefinition:
    return AgentDefinition(name, effort, tools, model_class, exact)


#: oh-my-codex 0.20.3 ``agents/definitions.js`` (role -> reasoning effort, tools class, model class,
#: exact model), checked against the package by tests/goldens/omx/agents.json.
AGENTS: Final[Mapping[str, AgentDefinition]] = {
    a.name: a
    for a in (
        _agent("explore", "low", "read-only", "fast"),
        _agent("analyst", "medium", "analysis", "frontier"),
        _agent("planner", "medium", "analysis", "frontier", DEFAULT_FRONTIER_MODEL),
        _agent("architect", "xhigh", "read-only", "frontier", DEFAULT_FRONTIER_MODEL),
        _agent("debugger", "high", "analysis", "standard"),
        _agent("executor", "medium", "execution", "standard"),
        _agent("team-executor", "medium", "execution", "frontier"),
        _agent("verifier", "high", "analysis", "standard"),
        _agent("style-reviewer", "low", "read-only", "fast"),
        _agent("quality-reviewer", "medium", "read-only", "standard"),
        _agent("api-reviewer", "medium", "read-only", "standard"),
        _agent("security-reviewer", "medium", "read-only", "frontier"),
        _agent("performance-reviewer", "medium", "read-only", "standard"),
        _agent("code-reviewer", "high", "read-only", "frontier"),
        _agent("dependency-expert", "high", "analysis", "standard"),
        _agent("test-engineer", "medium", "execution", "frontier"),
        _agent("quality-strategist", "medium", "analysis", "standard"),
        _agent("build-fixer", "high", "execution", "standard"),
        _agent("designer", "high", "execution", "standard"),
        _agent("writer", "high", "execution", "standard"),
        _agent("qa-tester", "low", "execution", "standard"),
        _agent("git-master", "high", "execution", "standard"),
        _agent("code-simplifier", "high", "execution", "frontier"),
        _agent("researcher", "high", "analysis", "standard", DEFAULT_STANDARD_MODEL),
        _agent("product-manager", "medium", "analysis", "standard"),
        _agent("ux-researcher", "medium", "analysis", "standard"),
        _agent("information-architect", "low", "analysis", "standard"),
        _agent("product-analyst", "low", "analysis", "standard"),
        _agent("prometheus-strict-metis", "high", "analysis", "frontier"),
        _agent("prometheus-strict-momus", "high", "analysis", "frontier"),
        _agent("prometheus-strict-oracle", "high", "analysis", "standard"),
        _agent("critic", "high", "read-only", "frontier"),
        _agent("scholastic", "high", "read-only", "frontier"),
        _agent("vision", "low", "read-only", "frontier"),
    )
}

# ``getAgent`` indexes a plain JS object, so inherited Object.prototype members are "found".
_OBJECT_PROTOTYPE_KEYS: Final = frozenset(
    {
        "constructor", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
        "__lookupSetter__", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toString",
        "valueOf", "toLocaleString",
    }
)
_PROTOTYPE_AGENT: Final = AgentDefinition("<Object.prototype member>", None, None, None, None)


def get_agent(name: str) -> AgentDefinition | None:
    """``getAgent(name)``: exact-key lookup, including the prototype-member artefact."""
    if name in AGENTS:
        return AGENTS[name]
    if name in _OBJECT_PROTOTYPE_KEYS:
        return _PROTOTYPE_AGENT
    return None


# --------------------------------------------------------------------------- CODEX_HOME files


def _json_object(text: str | None) -> Mapping[str, object] | None:
    if text is None:
        return None
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None


def _sub_object(obj: Mapping[str, object] | None, key: str) -> Mapping[str, object] | None:
    if obj is None:
        return None
    value = obj.get(key)
    return value if isinstance(value, dict) else None


def _configured(value: object) -> str | None:
    """``normalizeConfiguredValue``: a non-blank string, trimmed."""
    if not isinstance(value, str):
        return None
    trimmed = js_trim(value)
    return trimmed or None


_AGENT_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]*")


def _agent_name(value: object) -> str | None:
    configured = _configured(value)
    if configured is None:
        return None
    lowered = _js_lower(configured)
    return lowered if _AGENT_NAME.fullmatch(lowered) else None


@dataclass(frozen=True)
class CodexHome:
    """What the launch policy reads from the effective CODEX_HOME directory (texts, or None if absent)."""

    omx_config_json: str | None = None
    config_toml: str | None = None

    def omx_config(self) -> Mapping[str, object] | None:
        return _json_object(self.omx_config_json)

    def toml(self) -> Mapping[str, object] | None:
        if self.config_toml is None:
            return None
        try:
            return tomllib.loads(self.config_toml)
        except (tomllib.TOMLDecodeError, ValueError):
            return None

    def config_env(self, key: str) -> str | None:
        return _configured((_sub_object(self.omx_config(), "env") or {}).get(key))

    def agent_overrides(self, block: str, *, reasoning: bool) -> dict[str, str]:
        raw = _sub_object(self.omx_config(), block)
        resolved: dict[str, str] = {}
        for key, value in (raw or {}).items():
            role = _agent_name(key)
            if reasoning:
                configured = _configured(value)
                lowered = _js_lower(configured) if configured else None
                chosen = lowered if lowered in REASONING_EFFORTS else None
            else:
                chosen = _configured(value)
            if role and chosen:
                resolved[role] = chosen
        return resolved


def resolve_codex_home_override(env: Mapping[str, str], leader_cwd: str, setup_scope_json: str | None) -> str | None:
    """``resolveCodexHomeForLaunch``: ``env.CODEX_HOME`` if non-blank, else ``<cwd>/.codex`` for project scope.

    ``setup_scope_json`` is the text of ``<leader_cwd>/.omx/setup-scope.json`` (None when absent).
    """
    codex_home = env.get("CODEX_HOME")
    if codex_home and js_trim(codex_home) != "":
        return codex_home
    parsed = _json_object(setup_scope_json)
    scope = parsed.get("scope") if parsed is not None else None
    if scope in ("project", "project-local"):
        return posix_join(leader_cwd, ".codex")
    return None


def posix_join(*parts: str) -> str:
    """``path.posix.join``: concatenate with ``/`` then normalise lexically (relative stays relative)."""
    joined = "/".join(p for p in parts if p)
    if not joined:
        return "."
    absolute = joined.startswith("/")
    trailing = joined.endswith("/")
    out: list[str] = []
    for comp in joined.split("/"):
        if comp in ("", "."):
            continue
        if comp == "..":
            if out and out[-1] != "..":
                out.pop()
            elif not absolute:
                out.append("..")
            continue
        out.append(comp)
    body = "/".join(out)
    if absolute:
        body = "/" + body
    elif not body:
        body = "."
    if trailing and body not in ("/",) and not body.endswith("/"):
        body += "/"
    return body


# --------------------------------------------------------------------------- models & reasoning


def _reasoning(value: str | None) -> str | None:
    if value is None:
        return None
    normalized = _js_lower(js_trim(value))
    return normalized if normalized in REASONING_EFFORTS else None


def main_default_model(process_env: Mapping[str, str], home: CodexHome) -> str:
    return (
        _configured(process_env.get("OMX_DEFAULT_FRONTIER_MODEL"))
        or home.config_env("OMX_DEFAULT_FRONTIER_MODEL")
        or _configured((home.toml() or {}).get("model"))
        or DEFAULT_FRONTIER_MODEL
    )


def standard_default_model(process_env: Mapping[str, str], home: CodexHome) -> str:
    return (
        _configured(process_env.get("OMX_DEFAULT_STANDARD_MODEL"))
        or home.config_env("OMX_DEFAULT_STANDARD_MODEL")
        or main_default_model(process_env, home)
    )


def spark_default_model(process_env: Mapping[str, str], home: CodexHome) -> str:
    models = _sub_object(home.omx_config(), "models") or {}
    low = next(
        (v for k in ("team_low_complexity", "team-low-complexity", "teamLowComplexity") if (v := _configured(models.get(k)))),
        None,
    )
    return (
        _configured(process_env.get("OMX_DEFAULT_SPARK_MODEL"))
        or _configured(process_env.get("OMX_SPARK_MODEL"))
        or home.config_env("OMX_DEFAULT_SPARK_MODEL")
        or home.config_env("OMX_SPARK_MODEL")
        or low
        or DEFAULT_SPARK_MODEL
    )


def agent_reasoning_effort(role: str | None, home: CodexHome) -> str | None:
    """``resolveAgentReasoningEffort``: ``agentReasoning`` override, else the table (exact-key lookup)."""
    if role is None or js_trim(role) == "":
        return None
    normalized = _agent_name(role)
    override = home.agent_overrides("agentReasoning", reasoning=True).get(normalized) if normalized else None
    agent = get_agent(role)
    return _reasoning(override) or _reasoning(agent.reasoning_effort if agent else None)


def honors_exact_model(role: str | None, home: CodexHome) -> bool:
    """``shouldHonorAgentExactModel``."""
    if role is None or js_trim(role) == "":
        return False
    normalized = _js_lower(js_trim(role))
    key = _agent_name(normalized)
    if key and home.agent_overrides("agentModels", reasoning=False).get(key):
        return True
    agent = get_agent(normalized)
    return bool(agent and agent.exact_model)


def agent_default_model(role: str | None, process_env: Mapping[str, str], home: CodexHome) -> str | None:
    """``resolveAgentDefaultModel``: per-role fallback model."""
    if role is None or js_trim(role) == "":
        return None
    normalized = _js_lower(js_trim(role))
    key = _agent_name(normalized)
    override = home.agent_overrides("agentModels", reasoning=False).get(key) if key else None
    if override:
        return override
    if normalized.endswith("-low"):
        return spark_default_model(process_env, home)
    agent = get_agent(normalized)
    if agent and agent.exact_model:
        return agent.exact_model
    if normalized == "executor":
        return main_default_model(process_env, home)
    model_class = agent.model_class if agent else None
    if model_class == "fast":
        return spark_default_model(process_env, home)
    if model_class == "frontier":
        return main_default_model(process_env, home)
    if model_class == "standard":
        return standard_default_model(process_env, home)
    return None


# --------------------------------------------------------------------------- tokeniser (§13.1)


@dataclass(frozen=True)
class Token:
    value: str
    source: str  # the raw text the token came from, quotes included


def tokenize_launch_args(raw: str | None) -> tuple[Token, ...]:
    """Split ``OMX_TEAM_WORKER_LAUNCH_ARGS``; raises :class:`LaunchError` on an unterminated quote."""
    if not raw:
        return ()
    tokens: list[Token] = []
    value: list[str] = []
    started = False
    start = 0
    quote: str | None = None
    i = 0
    while i < len(raw):
        ch = raw[i]
        if quote == "'":
            if ch == "'":
                quote = None
            else:
                value.append(ch)
        elif quote == '"':
            if ch == '"':
                quote = None
            elif ch == "\\" and raw[i + 1 : i + 2] == '"':
                value.append('"')
                i += 1
            else:
                value.append(ch)
        elif ch in _JS_WS_CHARS:
            if started:
                tokens.append(Token("".join(value), raw[start:i]))
                value, started = [], False
        else:
            if not started:
                start, started = i, True
            if ch in ("'", '"'):
                quote = ch
            else:
                value.append(ch)
        i += 1
    if quote is not None:
        raise _launch_args_error(ENV_LAUNCH_ARGS_SOURCE, "unterminated quote")
    if started:
        tokens.append(Token("".join(value), raw[start:]))
    return tuple(tokens)


def split_launch_args(raw: str | None) -> list[str]:
    return [t.value for t in tokenize_launch_args(raw)]


def _is_config_for(value: str, key: str) -> bool:
    return re.match(key + _WS + "*=", js_trim(value)) is not None


def _exact_env_reasoning(raw: str | None) -> str | None:
    """The last split ``-c model_reasoning_effort=…`` as written (unquoted tokens keep their quotes)."""
    tokens = tokenize_launch_args(raw)
    exact: str | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.value == "--":
            break
        if token.value == CONFIG_FLAG and i + 1 < len(tokens):
            i += 1
            nxt = tokens[i]
            if _is_config_for(nxt.value, REASONING_KEY):
                exact = nxt.value if nxt.source[:1] in ('"', "'") else nxt.source
        i += 1
    return exact


def env_launch_args(raw: str | None) -> list[str]:
    """Tokenised env args with the exact spelling of a split reasoning override restored."""
    args = split_launch_args(raw)
    exact = _exact_env_reasoning(raw)
    if exact is None:
        return args
    target: int | None = None
    i = 0
    while i < len(args):
        if args[i] == "--":
            break
        if args[i] == CONFIG_FLAG and i + 1 < len(args) and _is_config_for(args[i + 1], REASONING_KEY):
            target = i + 1
            i += 1
        i += 1
    if target is not None:
        args[target] = exact
    return args


# --------------------------------------------------------------------------- parser (§13.2)


@dataclass(frozen=True)
class ParsedLaunchArgs:
    passthrough: tuple[str, ...]
    end_of_options_index: int | None
    wants_bypass: bool
    approval: str | None
    sandbox: str | None
    reasoning_override: str | None
    model_provider_override: str | None
    model_override: str | None

    @property
    def policy_kind(self) -> PolicyKind:
        if self.approval is not None or self.sandbox is not None:
            return "direct-policy"
        return "bypass" if self.wants_bypass else "none"

    @property
    def classified(self) -> PolicyKind:
        """``classifyTeamWorkerLaunchPolicy``."""
        if self.wants_bypass and self.policy_kind == "direct-policy":
            return "mixed-policy"
        return self.policy_kind


def _direct_policy_selector(arg: str) -> tuple[str, str, str | None] | None:
    for axis, flag, short in (("approval", APPROVAL_FLAG, "-a"), ("sandbox", SANDBOX_FLAG, "-s")):
        if arg in (flag, short):
            return axis, flag, None
        for prefix in (flag + "=", short + "="):
            if arg.startswith(prefix):
                return axis, flag, arg[len(prefix) :]
    return None


def _config_selector(arg: str) -> tuple[bool, str | None] | None:
    """(split, inline value) for ``-c``/``--config`` forms."""
    if arg in (CONFIG_FLAG, LONG_CONFIG_FLAG):
        return True, None
    for prefix in (CONFIG_FLAG + "=", LONG_CONFIG_FLAG + "="):
        if arg.startswith(prefix):
            return False, arg[len(prefix) :]
    return None


_POLICY_ASSIGNMENT: Final = re.compile(r"(approval_policy|sandbox_mode)" + _WS + r"*=" + _WS + r"*([\s\S]*)")


def _config_policy(value: str) -> tuple[str, str] | None:
    match = _POLICY_ASSIGNMENT.fullmatch(js_trim(value))
    if match is None:
        return None
    raw = js_trim(match.group(2))
    quoted = len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in ('"', "'")
    return ("approval" if match.group(1) == "approval_policy" else "sandbox"), (raw[1:-1] if quoted else raw)


def _policy_value(value: str | None, flag: str, source: str) -> str:
    if value is None or js_trim(value) == "" or js_trim(value).startswith("-"):
        raise _launch_args_error(source, f"missing value for {flag}")
    return value


def _valid_model(value: str) -> bool:
    return js_trim(value) != "" and not value.startswith("-")


def parse_launch_args(
    args: Sequence[str], source: str = "worker launch arguments", *, ignore_direct_policy: bool = False
) -> ParsedLaunchArgs:
    """``parseTeamWorkerLaunchArgs``; raises :class:`LaunchError` with oh-my-codex's message."""
    passthrough: list[str] = []
    eoi: int | None = None
    wants_bypass = False
    policy: dict[str, str | None] = {"approval": None, "sandbox": None}
    reasoning: str | None = None
    provider: str | None = None
    model: str | None = None

    def set_policy(axis: str, value: str) -> None:
        existing = policy[axis]
        if existing is not None and existing != value:
            raise _launch_args_error(source, f"conflicting duplicate {axis} policy")
        policy[axis] = value

    i = 0
    n = len(args)
    while i < n:
        arg = args[i]
        nxt = args[i + 1] if i + 1 < n else None
        if arg == "--":
            eoi = len(passthrough)
            passthrough.extend(args[i:])
            break
        if arg in (CODEX_BYPASS_FLAG, MADMAX_FLAG):
            wants_bypass = True
            i += 1
            continue
        direct = _direct_policy_selector(arg)
        if direct is not None:
            axis, flag, inline = direct
            if ignore_direct_policy:
                if inline is None and nxt is not None and not nxt.startswith("-"):
                    i += 1
                i += 1
                continue
            value = _policy_value(nxt if inline is None else inline, flag, source)
            if inline is None:
                i += 1
            set_policy(axis, value)
            i += 1
            continue
        config = _config_selector(arg)
        if config is not None:
            split, inline = config
            value_or_none = nxt if split else inline
            if value_or_none is None or js_trim(value_or_none) == "" or js_trim(value_or_none).startswith("-"):
                if ignore_direct_policy:
                    i += 1
                    continue
                flag = LONG_CONFIG_FLAG if arg == LONG_CONFIG_FLAG or arg.startswith(LONG_CONFIG_FLAG + "=") else CONFIG_FLAG
                raise _launch_args_error(source, f"missing value for {flag}")
            value = value_or_none
            if split:
                i += 1
            assignment = _config_policy(value)
            if assignment is not None:
                if not ignore_direct_policy:
                    axis, raw_value = assignment
                    flag = APPROVAL_FLAG if axis == "approval" else SANDBOX_FLAG
                    set_policy(axis, _policy_value(raw_value, flag, source))
                i += 1
                continue
            if arg == CONFIG_FLAG and split:
                if _is_config_for(value, REASONING_KEY):
                    reasoning = value
                    i += 1
                    continue
                if _is_config_for(value, MODEL_PROVIDER_KEY):
                    provider = value
                    i += 1
                    continue
            passthrough.append(arg)
            if split:
                passthrough.append(value)
            i += 1
            continue
        if arg == MODEL_FLAG:
            if nxt is not None and _valid_model(nxt):
                model = js_trim(nxt)
                i += 1
            i += 1
            continue
        if arg.startswith(MODEL_FLAG + "="):
            inline_model = js_trim(arg[len(MODEL_FLAG) + 1 :])
            if _valid_model(inline_model):
                model = inline_model
            i += 1
            continue
        passthrough.append(arg)
        i += 1
    return ParsedLaunchArgs(
        passthrough=tuple(passthrough),
        end_of_options_index=eoi,
        wants_bypass=wants_bypass,
        approval=policy["approval"],
        sandbox=policy["sandbox"],
        reasoning_override=reasoning,
        model_provider_override=provider,
        model_override=model,
    )


def _config_string_value(value: str, key: str) -> str | None:
    """``extractConfigStringValue``: the value of ``key = v`` with one layer of quotes removed."""
    trimmed = js_trim(value)
    match = re.match(key + _WS + "*=" + _WS + "*([^" + _JS_LINE_TERMINATORS + "]+)$", trimmed)
    if match is None:
        return None
    raw = js_trim(match.group(1))
    if raw == "":
        return None
    quoted = re.fullmatch(r"\"([^\"]*)\"|'([^']*)'", raw)
    inner = raw
    if quoted is not None:
        inner = quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
    return js_trim(inner) or None


def _canonical_config_string(value: str, key: str) -> str:
    extracted = _config_string_value(value, key)
    if not extracted:
        return value
    return f'{key}="' + extracted.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _optional_model(model: str | None) -> str | None:
    if model is None:
        return None
    trimmed = js_trim(model)
    return trimmed or None


def normalize_launch_args(
    args: Sequence[str],
    preferred_model: str | None = None,
    preferred_reasoning: str | None = None,
    preferred_model_provider: str | None = None,
) -> list[str]:
    """Canonical order (§13.4): passthrough, policy, provider, reasoning, model, then ``--`` tail."""
    parsed = parse_launch_args(args)
    eoi = parsed.end_of_options_index if parsed.end_of_options_index is not None else len(parsed.passthrough)
    out = list(parsed.passthrough[:eoi])
    if parsed.policy_kind == "direct-policy":
        if parsed.approval is not None:
            out += [APPROVAL_FLAG, parsed.approval]
        if parsed.sandbox is not None:
            out += [SANDBOX_FLAG, parsed.sandbox]
    elif parsed.wants_bypass:
        out.append(CODEX_BYPASS_FLAG)
    effort = _reasoning(preferred_reasoning)
    reasoning = parsed.reasoning_override
    if reasoning is None and effort:
        reasoning = f'{REASONING_KEY}="{effort}"'
    provider = preferred_model_provider if preferred_model_provider is not None else parsed.model_provider_override
    if provider:
        out += [CONFIG_FLAG, _canonical_config_string(provider, MODEL_PROVIDER_KEY)]
    if reasoning:
        out += [CONFIG_FLAG, reasoning]
    model = _optional_model(preferred_model) or _optional_model(parsed.model_override)
    if model:
        out += [MODEL_FLAG, model]
    out += parsed.passthrough[eoi:]
    return out


def resolve_team_worker_launch_args(
    existing_raw: str | None,
    inherited_args: Sequence[str] = (),
    fallback_model: str | None = None,
    preferred_reasoning: str | None = None,
    honor_exact_role_model: bool = False,
) -> list[str]:
    """``resolveTeamWorkerLaunchArgs`` (§13.3); raises :class:`LaunchError`."""
    env_args = env_launch_args(existing_raw)
    env_parsed = parse_launch_args(env_args, ENV_LAUNCH_ARGS_SOURCE)
    if env_parsed.wants_bypass and env_parsed.policy_kind == "direct-policy":
        raise _launch_args_error(
            ENV_LAUNCH_ARGS_SOURCE, "bypass cannot be combined with direct approval or sandbox policy"
        )
    inherited_parsed = parse_launch_args(inherited_args, "inherited leader worker launch arguments")
    env_model = _optional_model(env_parsed.model_override)
    inherited_model = _optional_model(inherited_parsed.model_override)
    fallback = _optional_model(fallback_model)
    selected: str | None
    if env_model and env_model != inherited_model:
        selected = env_model
    elif honor_exact_role_model and fallback:
        selected = fallback
    else:
        selected = env_model or inherited_model or fallback
    provider = env_parsed.model_provider_override
    if provider is None:
        provider = inherited_parsed.model_provider_override
    if "--" in env_args:
        cut = env_args.index("--")
        combined = [*env_args[:cut], *inherited_args, *env_args[cut:]]
    else:
        combined = [*env_args, *inherited_args]
    return normalize_launch_args(combined, selected, preferred_reasoning, provider)


# --------------------------------------------------------------------------- CLI selection


_CLI_MODES: Final = ("auto", "codex", "claude", "gemini")


def _model_before_eoo(args: Sequence[str]) -> str | None:
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
    model = _model_before_eoo(args)
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
        mode = _js_lower(js_trim("auto" if raw is None else raw))
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
    entry = _js_lower(entries[0] if len(entries) == 1 else entries[worker_position - 1])
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
    launch_args: tuple[str, ...]  # policy argv (§13.3/§13.4 canonical order), before process-launch steps
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
        if trimmed.startswith(key) and re.match(_WS + "*=", trimmed[len(key) :]):
            return True
    return False


def grants_execution_bypass(role: str | None) -> bool:
    """``shouldGrantExecutionBypassForRole``: absent/unknown roles and ``tools == "execution"`` roles."""
    normalized = _js_lower(js_trim(role)) if role is not None else ""
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
        rf"^{_WS}*\[{_WS}*mcp_servers{_WS}*\.{_WS}*(?:\"{name}\"|'{name}'|{name}){_WS}*\]{_WS}*$"
    )
    return re.search(pattern, text, re.MULTILINE) is not None


def _mcp_compat(env: Mapping[str, str]) -> bool:
    raw = env.get("OMX_TEAM_WORKER_MCP_COMPAT")
    return raw is not None and _js_lower(js_trim(raw)) in ("1", "true", "on", "compat")


def _provider_env(effective_env: Mapping[str, str], home: CodexHome, provider_override: str | None) -> dict[str, str]:
    """``readActiveProviderEnvOverrides``: ``{env_key: value}`` of the active model provider."""
    config = home.toml()
    if config is None:
        return {}
    active = _configured(provider_override) or _configured(config.get("model_provider"))
    providers = config.get("model_providers")
    if not active or not isinstance(providers, dict):
        return {}
    provider = providers.get(active)
    if not isinstance(provider, dict):
        return {}
    env_key = _configured(provider.get("env_key"))
    if not env_key:
        return {}
    value = _configured(effective_env.get(env_key))
    return {env_key: value} if value else {}


def _translate_for_cli(cli: WorkerCli, args: Sequence[str], role: str | None, initial_prompt: str | None) -> list[str]:
    if cli == "codex":
        return list(args)
    if cli == "gemini":
        model = _model_before_eoo(args)
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
    """Steps 1–3 of §13.4 (``resolveWorkerLaunchArgs``); raises :class:`LaunchError`."""
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
    return any(_is_config_for(v, key) for v in _config_values_before_eoo(args))


def build_worker_launch(
    policy: WorkerLaunchPolicy,
    *,
    team_name: str,
    worker_cwd: str,
    extra_env: Mapping[str, str],
    host: LaunchHost,
    initial_prompt: str | None = None,
) -> Result[LaunchPlan, str]:
    """The worker's final command, argv and environment (startup-script mode, §13.4 steps 1–5)."""
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
            provider_override = _config_string_value(override, MODEL_PROVIDER_KEY) if override else None
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
