"""``panefleet doctor``: whether the agent CLIs a team would launch can start here, judged from facts
the shell gathers (``shell/cli/doctor.py``): where each CLI is, the version it prints, the files that
say whether it is set up for this user, the environment and the user id. One :class:`Check` per
question, each with the fix in words (docs/doctor.md); nothing here reads anything.

What each CLI needs to start without stopping at a screen panefleet cannot answer (the facts are
those of the pinned CLIs, observed with them):

* **Codex**: a sign-in (``$CODEX_HOME/auth.json``, written by ``codex login``) or a model provider of
  its own (``model_provider = "NAME"`` in ``$CODEX_HOME/config.toml`` with a ``[model_providers.NAME]``
  table); ``$CODEX_HOME`` is ``~/.codex`` unless set.
* **Claude Code**: its onboarding done (``"hasCompletedOnboarding": true`` in ``~/.claude.json``) and
  either a sign-in (``~/.claude/.credentials.json``) or ``ANTHROPIC_API_KEY`` approved once
  (``customApiKeyResponses.approved`` holds the key, or its last 20 characters); as root it refuses
  ``--dangerously-skip-permissions`` (which panefleet's Claude launch passes) unless ``IS_SANDBOX=1``.
* **Gemini CLI**: an auth type selected (``security.auth.selectedType`` in ``~/.gemini/settings.json``), in
  a file Gemini can read: it parses the file as JSON after removing ``//`` and ``/* */`` comments and exits
  at once (``Error in <path>: …``, exit 52) when that fails.

A version other than the one the agent-screen model was recorded with (``RECORDED``) is a warning:
start-up may misread a screen that changed.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from typing import Literal

from attrs import field, frozen

Level = Literal["ok", "warn", "fail"]
AGENT_CLIS = ("codex", "claude", "gemini")
# The versions whose screens pure/agents/screen.py was recorded from (tests/goldens/screens/).
RECORDED: Mapping[str, str] = {"codex": "0.169.0", "claude": "2.1.328", "gemini": "0.61.0"}
PACKAGES: Mapping[str, str] = {"codex": "@openai/codex", "claude": "@anthropic-ai/claude-code",
                               "gemini": "@google/gemini-cli"}
_VERSION = re.compile(r"\b(\d+\.\d+\.\d+)\b")


@frozen(kw_only=True)
class Check:
    level: Level
    subject: str  # tmux, codex, claude, gemini
    text: str
    fix: str = ""


@frozen(kw_only=True)
class CliFacts:
    """What the shell found for one CLI. ``files``: path → its text (None when absent or unreadable)
    for the paths ``setup_files`` names; ``version_text``: what ``CLI --version`` printed (None when it
    did not answer)."""

    cli: str
    path: str | None
    version_text: str | None = None
    files: Mapping[str, str | None] = field(factory=dict)
    env: Mapping[str, str] = field(factory=dict)
    euid: int = 1000


def version_of(text: str | None) -> str | None:
    found = _VERSION.search(text or "")
    return found.group(1) if found else None


def codex_home(env: Mapping[str, str], home: str) -> str:
    return env.get("CODEX_HOME") or f"{home}/.codex"


def setup_files(cli: str, env: Mapping[str, str], home: str) -> tuple[str, ...]:
    """The files whose text the checks of ``cli`` read."""
    if cli == "codex":
        return f"{codex_home(env, home)}/auth.json", f"{codex_home(env, home)}/config.toml"
    if cli == "claude":
        return f"{home}/.claude.json", f"{home}/.claude/.credentials.json"
    if cli == "gemini":
        return (f"{home}/.gemini/settings.json",)
    return ()


def check_tmux(path: str | None, version_text: str | None) -> Check:
    if path is None:
        return Check(level="fail", subject="tmux", text="tmux is not on PATH",
                     fix="install tmux 3.2 or newer (e.g. apt-get install tmux)")
    version = (version_text or "").strip() or "an unknown version"
    number = re.search(r"(\d+)\.(\d+)", version)
    if number is not None and (int(number.group(1)), int(number.group(2))) < (3, 2):
        return Check(level="fail", subject="tmux", text=f"{version} at {path} is older than 3.2",
                     fix="install tmux 3.2 or newer (panefleet is tested with 3.3a)")
    return Check(level="ok", subject="tmux", text=f"{version} at {path}")


def check_cli(facts: CliFacts, home: str) -> tuple[Check, ...]:
    """Found, its version, and whether it is set up to start (module docstring)."""
    cli = facts.cli
    if facts.path is None:
        return (Check(level="fail", subject=cli, text=f"{cli} is not on PATH",
                      fix=f"install it (npm install -g {PACKAGES.get(cli, cli)}) or put it on PATH"),)
    checks = [_version_check(facts)]
    files = [facts.files.get(path) for path in setup_files(cli, facts.env, home)]
    if cli == "codex":
        checks.append(_codex_signed_in(files[0], files[1], codex_home(facts.env, home)))
    elif cli == "claude":
        checks.extend(_claude_ready(files[0], files[1], facts.env, facts.euid, home))
    elif cli == "gemini":
        checks.append(_gemini_auth(files[0], home))
    return tuple(checks)


def _version_check(facts: CliFacts) -> Check:
    version = version_of(facts.version_text)
    where = f"at {facts.path}"
    if version is None:
        return Check(level="warn", subject=facts.cli, text=f"{facts.cli} {where} printed no version",
                     fix=f"run `{facts.cli} --version` to see why")
    recorded = RECORDED.get(facts.cli)
    if recorded is None:
        return Check(level="warn", subject=facts.cli, text=f"{facts.cli} {version} {where}: panefleet has no "
                     "screens recorded for this CLI, so its start-up may not be read correctly")
    if version != recorded:
        return Check(level="warn", subject=facts.cli, text=f"{facts.cli} {version} {where}: panefleet's screens "
                     f"were recorded with {recorded}; a changed screen may be misread at start-up",
                     fix=f"npm install -g {PACKAGES[facts.cli]}@{recorded} to use the recorded version")
    return Check(level="ok", subject=facts.cli, text=f"{facts.cli} {version} {where}")


def _codex_signed_in(auth: str | None, config: str | None, home: str) -> Check:
    try:
        parsed = tomllib.loads(config or "")
    except tomllib.TOMLDecodeError as error:
        return Check(level="fail", subject="codex", text=f"error loading config.toml ({home}/config.toml): {error}",
                     fix="repair the file: Codex does not start with it")
    if auth is not None:
        return Check(level="ok", subject="codex", text=f"signed in ({home}/auth.json)")
    provider = parsed.get("model_provider")
    providers = parsed.get("model_providers")
    if isinstance(provider, str) and isinstance(providers, dict) and isinstance(providers.get(provider), dict):
        return Check(level="ok", subject="codex", text=f"model provider {provider} ({home}/config.toml)")
    return Check(level="fail", subject="codex", text=f"not signed in and no model provider of its own in {home}",
                 fix="run `codex login` once as this user, or set model_provider and a [model_providers.NAME] "
                     f"table in {home}/config.toml")


def _claude_ready(state: str | None, credentials: str | None, env: Mapping[str, str], euid: int,
                  home: str) -> list[Check]:
    checks: list[Check] = []
    settings = _json_object(state)
    if settings.get("hasCompletedOnboarding") is not True:
        checks.append(Check(level="fail", subject="claude", text=f"onboarding not done ({home}/.claude.json)",
                            fix="run `claude` once as this user and finish its first-run questions"))
    key = env.get("ANTHROPIC_API_KEY", "")
    responses = settings.get("customApiKeyResponses")
    approved = responses.get("approved") if isinstance(responses, dict) else None
    if key and isinstance(approved, list) and (key in approved or key[-20:] in approved):
        checks.append(Check(level="ok", subject="claude", text="ANTHROPIC_API_KEY is approved"))
    elif credentials is not None:
        checks.append(Check(level="ok", subject="claude", text=f"signed in ({home}/.claude/.credentials.json)"))
    elif key:
        checks.append(Check(level="fail", subject="claude", text="ANTHROPIC_API_KEY is set but not approved: Claude "
                            "would stop at 'Do you want to use this API key?'",
                            fix="run `claude` once and answer Yes, or add the key to customApiKeyResponses.approved "
                                f"in {home}/.claude.json"))
    else:
        checks.append(Check(level="fail", subject="claude", text="not signed in and no ANTHROPIC_API_KEY",
                            fix="run `claude` once and sign in, or set ANTHROPIC_API_KEY"))
    if euid == 0 and env.get("IS_SANDBOX") != "1":
        checks.append(Check(level="fail", subject="claude", text="running as root: Claude refuses "
                            "--dangerously-skip-permissions (which its workers are launched with) as root",
                            fix="run panefleet as another user, or set IS_SANDBOX=1 if this machine is a sandbox"))
    return checks


def _gemini_auth(settings_text: str | None, home: str) -> Check:
    path = f"{home}/.gemini/settings.json"
    try:
        parsed = json.loads(strip_json_comments(settings_text)) if settings_text is not None else {}
    except ValueError as error:
        return Check(level="fail", subject="gemini", text=f"error in {path}: {error}",
                     fix="repair the file: Gemini does not start with it")
    if not isinstance(parsed, dict):
        return Check(level="fail", subject="gemini", text=f"error in {path}: not a JSON object",
                     fix="repair the file: Gemini does not start with it")
    settings: dict[str, object] = parsed
    security = settings.get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    selected = auth.get("selectedType") if isinstance(auth, dict) else None
    if isinstance(selected, str) and selected:
        return Check(level="ok", subject="gemini", text=f"auth type {selected} ({home}/.gemini/settings.json)")
    return Check(level="fail", subject="gemini", text=f"no auth type selected ({home}/.gemini/settings.json)",
                 fix="run `gemini` once and choose how to sign in, or set security.auth.selectedType")


def strip_json_comments(text: str) -> str:
    """``text`` with its ``//`` and ``/* */`` comments blanked out (strings left alone), as Gemini CLI
    reads its settings files: line and column numbers stay those of the file."""
    out: list[str] = []
    i, in_string = 0, False
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = len(text) if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _json_object(text: str | None) -> dict[str, object]:
    try:
        value = json.loads(text or "")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def summary(checks: tuple[Check, ...]) -> bool:
    """Whether everything can start: no ``fail``."""
    return all(check.level != "fail" for check in checks)
