"""Worker launch arguments: the tokeniser, the parser and its policy classification, normalisation
and the team worker's resolved argv (docs/launch-policy.md)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pure.omx.launch.agents import normalized_reasoning
from pure.omx.launch.flags import (
    APPROVAL_FLAG,
    CODEX_BYPASS_FLAG,
    CONFIG_FLAG,
    ENV_LAUNCH_ARGS_SOURCE,
    JS_LINE_TERMINATORS,
    JS_WS,
    JS_WS_CHARS,
    LONG_CONFIG_FLAG,
    MADMAX_FLAG,
    MODEL_FLAG,
    MODEL_PROVIDER_KEY,
    REASONING_KEY,
    SANDBOX_FLAG,
    PolicyKind,
    js_trim,
    launch_args_error,
)

# ----------------------------------------------------------------------------------- tokeniser


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
        elif ch in JS_WS_CHARS:
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
        raise launch_args_error(ENV_LAUNCH_ARGS_SOURCE, "unterminated quote")
    if started:
        tokens.append(Token("".join(value), raw[start:]))
    return tuple(tokens)


def split_launch_args(raw: str | None) -> list[str]:
    return [t.value for t in tokenize_launch_args(raw)]


def is_config_for(value: str, key: str) -> bool:
    return re.match(key + JS_WS + "*=", js_trim(value)) is not None


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
            if is_config_for(nxt.value, REASONING_KEY):
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
        if args[i] == CONFIG_FLAG and i + 1 < len(args) and is_config_for(args[i + 1], REASONING_KEY):
            target = i + 1
            i += 1
        i += 1
    if target is not None:
        args[target] = exact
    return args


# ----------------------------------------------------------------------------------- parser


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


_POLICY_ASSIGNMENT: Final = re.compile(r"(approval_policy|sandbox_mode)" + JS_WS + r"*=" + JS_WS + r"*([\s\S]*)")


def _config_policy(value: str) -> tuple[str, str] | None:
    match = _POLICY_ASSIGNMENT.fullmatch(js_trim(value))
    if match is None:
        return None
    raw = js_trim(match.group(2))
    quoted = len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in ('"', "'")
    return ("approval" if match.group(1) == "approval_policy" else "sandbox"), (raw[1:-1] if quoted else raw)


def _policy_value(value: str | None, flag: str, source: str) -> str:
    if value is None or js_trim(value) == "" or js_trim(value).startswith("-"):
        raise launch_args_error(source, f"missing value for {flag}")
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
            raise launch_args_error(source, f"conflicting duplicate {axis} policy")
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
                raise launch_args_error(source, f"missing value for {flag}")
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
                if is_config_for(value, REASONING_KEY):
                    reasoning = value
                    i += 1
                    continue
                if is_config_for(value, MODEL_PROVIDER_KEY):
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


def config_string_value(value: str, key: str) -> str | None:
    """``extractConfigStringValue``: the value of ``key = v`` with one layer of quotes removed."""
    trimmed = js_trim(value)
    match = re.match(key + JS_WS + "*=" + JS_WS + "*([^" + JS_LINE_TERMINATORS + "]+)$", trimmed)
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
    extracted = config_string_value(value, key)
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
    """Canonical order (docs/launch-policy.md): passthrough, policy, provider, reasoning, model, then
    ``--`` tail."""
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
    effort = normalized_reasoning(preferred_reasoning)
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
    """``resolveTeamWorkerLaunchArgs`` (docs/launch-policy.md, "Model and reasoning"); raises
    :class:`LaunchError`."""
    env_args = env_launch_args(existing_raw)
    env_parsed = parse_launch_args(env_args, ENV_LAUNCH_ARGS_SOURCE)
    if env_parsed.wants_bypass and env_parsed.policy_kind == "direct-policy":
        raise launch_args_error(
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
