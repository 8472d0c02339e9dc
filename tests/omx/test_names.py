"""Team/worker/task-id names against goldens produced by the real oh-my-codex."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from pure.omx.names import (
    SANITIZE_EMPTY_ERROR,
    is_safe_task_id,
    is_safe_team_name,
    is_safe_worker_name,
    sanitize_team_name,
    validate_team_name,
)
from tests.omx.conftest import load_golden

GOLDEN = "names.json"
DOC = load_golden(GOLDEN)
CASES: list[dict[str, Any]] = DOC["cases"]


def _actual(name: str) -> dict[str, Any]:
    sanitized = sanitize_team_name(name)
    return {
        "sanitize": {"ok": sanitized.unwrap()} if isinstance(sanitized, Success) else {"error": sanitized.failure()},
        "is_safe_team_name": is_safe_team_name(name),
        "is_safe_worker_name": is_safe_worker_name(name),
        "is_safe_task_id": is_safe_task_id(name),
    }


def test_golden_count() -> None:
    assert len(CASES) >= 150


@pytest.mark.parametrize("case", CASES, ids=lambda c: repr(c["input"]["name"])[:40])
def test_golden(case: dict[str, Any], update_goldens: bool, golden_updater: Callable[[str, Any], None]) -> None:
    got = _actual(case["input"]["name"])
    if update_goldens:
        case["expected"] = got
        golden_updater(GOLDEN, DOC)
        return
    assert got == case["expected"]


def test_messages() -> None:
    assert sanitize_team_name("!!!") == Failure(SANITIZE_EMPTY_ERROR)
    assert validate_team_name("Bad") == Failure(
        'Invalid team name: "Bad". Team name must match /^[a-z0-9][a-z0-9-]{0,29}$/ '
        "(lowercase alphanumeric + hyphens, max 30 chars)."
    )
    assert validate_team_name("alpha") == Success("alpha")


@given(st.text(max_size=80))
def test_sanitized_names_are_safe_and_idempotent(name: str) -> None:
    result = sanitize_team_name(name)
    if isinstance(result, Success):
        slug = result.unwrap()
        assert is_safe_team_name(slug)
        assert sanitize_team_name(slug) == Success(slug)
    else:
        assert result.failure() == SANITIZE_EMPTY_ERROR
