"""The agent table, the files of the effective ``CODEX_HOME``, and the default models and reasoning
efforts a worker's role resolves to."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pure.omx.launch.flags import (
    DEFAULT_FRONTIER_MODEL,
    DEFAULT_SPARK_MODEL,
    DEFAULT_STANDARD_MODEL,
    REASONING_EFFORTS,
    js_lower,
    js_trim,
)

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


def configured_text(value: object) -> str | None:
    """``normalizeConfiguredValue``: a non-blank string, trimmed."""
    if not isinstance(value, str):
        return None
    trimmed = js_trim(value)
    return trimmed or None


_AGENT_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]*")


def _agent_name(value: object) -> str | None:
    configured = configured_text(value)
    if configured is None:
        return None
    lowered = js_lower(configured)
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
        return configured_text((_sub_object(self.omx_config(), "env") or {}).get(key))

    def agent_overrides(self, block: str, *, reasoning: bool) -> dict[str, str]:
        raw = _sub_object(self.omx_config(), block)
        resolved: dict[str, str] = {}
        for key, value in (raw or {}).items():
            role = _agent_name(key)
            if reasoning:
                configured = configured_text(value)
                lowered = js_lower(configured) if configured else None
                chosen = lowered if lowered in REASONING_EFFORTS else None
            else:
                chosen = configured_text(value)
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


def normalized_reasoning(value: str | None) -> str | None:
    if value is None:
        return None
    normalized = js_lower(js_trim(value))
    return normalized if normalized in REASONING_EFFORTS else None


def main_default_model(process_env: Mapping[str, str], home: CodexHome) -> str:
    return (
        configured_text(process_env.get("OMX_DEFAULT_FRONTIER_MODEL"))
        or home.config_env("OMX_DEFAULT_FRONTIER_MODEL")
        or configured_text((home.toml() or {}).get("model"))
        or DEFAULT_FRONTIER_MODEL
    )


def standard_default_model(process_env: Mapping[str, str], home: CodexHome) -> str:
    return (
        configured_text(process_env.get("OMX_DEFAULT_STANDARD_MODEL"))
        or home.config_env("OMX_DEFAULT_STANDARD_MODEL")
        or main_default_model(process_env, home)
    )


def spark_default_model(process_env: Mapping[str, str], home: CodexHome) -> str:
    models = _sub_object(home.omx_config(), "models") or {}
    low = next(
        (v for k in ("team_low_complexity", "team-low-complexity", "teamLowComplexity") if (v := configured_text(models.get(k)))),
        None,
    )
    return (
        configured_text(process_env.get("OMX_DEFAULT_SPARK_MODEL"))
        or configured_text(process_env.get("OMX_SPARK_MODEL"))
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
    return normalized_reasoning(override) or normalized_reasoning(agent.reasoning_effort if agent else None)


def honors_exact_model(role: str | None, home: CodexHome) -> bool:
    """``shouldHonorAgentExactModel``."""
    if role is None or js_trim(role) == "":
        return False
    normalized = js_lower(js_trim(role))
    key = _agent_name(normalized)
    if key and home.agent_overrides("agentModels", reasoning=False).get(key):
        return True
    agent = get_agent(normalized)
    return bool(agent and agent.exact_model)


def agent_default_model(role: str | None, process_env: Mapping[str, str], home: CodexHome) -> str | None:
    """``resolveAgentDefaultModel``: per-role fallback model."""
    if role is None or js_trim(role) == "":
        return None
    normalized = js_lower(js_trim(role))
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
