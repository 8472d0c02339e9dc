"""Team, worker and task-id names (docs/team-state.md, "Names"): sanitisation and the state-layer validators.

The patterns are anchored on the whole string (JavaScript ``$`` without the ``m`` flag does not
accept a trailing newline, so :func:`re.fullmatch` is used) and ``\\d`` means ASCII digits only.
Error strings are oh-my-codex's, byte for byte.
"""

from __future__ import annotations

import re
from typing import Final

from returns.result import Failure, Result, Success

TEAM_NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,29}")
WORKER_NAME_PATTERN: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
TASK_ID_PATTERN: Final = re.compile(r"[0-9]{1,20}")

SANITIZE_EMPTY_ERROR: Final = "sanitizeTeamName: empty after sanitization"
_NOT_ALNUM: Final = re.compile(r"[^a-z0-9]+")
_MAX_TEAM_NAME: Final = 30


def sanitize_team_name(name: str) -> Result[str, str]:
    """Lower-case, turn every run outside ``[a-z0-9]`` into one ``-``, trim ``-``, cap at 30 chars."""
    slug = _NOT_ALNUM.sub("-", name.lower())
    slug = slug.removeprefix("-").removesuffix("-")
    slug = slug[:_MAX_TEAM_NAME].removesuffix("-")
    if slug.strip() == "":
        return Failure(SANITIZE_EMPTY_ERROR)
    return Success(slug)


UNCHANGED_TEAM_NAME_RULE: Final = (
    "a team name is 1-30 characters of a-z and 0-9 joined by single '-', exactly as oh-my-codex's "
    "sanitizeTeamName leaves it")


def rewritten_team_name(name: str) -> str | None:
    """None when oh-my-codex's ``sanitizeTeamName`` keeps ``name``; else ``invalid_team_name:…``
    naming the rule and what oh-my-codex would have made of it (``../ALPHA`` → ``alpha``)."""
    sanitized = sanitize_team_name(name)
    if isinstance(sanitized, Success) and sanitized.unwrap() == name:
        return None
    became = f"oh-my-codex would act on team '{sanitized.unwrap()}'" if isinstance(sanitized, Success) else (
        "nothing is left of it after oh-my-codex's sanitization")
    return f"invalid_team_name:{name} ({UNCHANGED_TEAM_NAME_RULE}; {became})"


def is_safe_team_name(name: str) -> bool:
    return TEAM_NAME_PATTERN.fullmatch(name) is not None


def is_safe_worker_name(name: str) -> bool:
    return WORKER_NAME_PATTERN.fullmatch(name) is not None


def is_safe_task_id(task_id: str) -> bool:
    return TASK_ID_PATTERN.fullmatch(task_id) is not None


def validate_team_name(name: str) -> Result[str, str]:
    """The state layer's team-name check (``Invalid team name: …``)."""
    if is_safe_team_name(name):
        return Success(name)
    return Failure(
        f'Invalid team name: "{name}". Team name must match /^[a-z0-9][a-z0-9-]{{0,29}}$/ '
        "(lowercase alphanumeric + hyphens, max 30 chars)."
    )
