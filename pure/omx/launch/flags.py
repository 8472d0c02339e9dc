"""The words of an agent's command line that the launch policy reads and writes: the agent CLIs'
flags and config keys, the environment names, the model defaults and the CLI names; with
JavaScript's string rules they are parsed by, and the error every part of the policy raises."""

from __future__ import annotations

import re
from typing import Final, Literal

# --------------------------------------------------------------------------- JS string helpers

JS_WS_CHARS: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_WS: Final = "[" + re.escape(JS_WS_CHARS) + "]"
JS_LINE_TERMINATORS: Final = "\n\r\u2028\u2029"


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(JS_WS_CHARS)


def js_lower(text: str) -> str:
    return text.lower()


class LaunchError(Exception):
    """Internal carrier for an oh-my-codex error message; never escapes this module."""


def launch_args_error(source: str, reason: str) -> LaunchError:
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
