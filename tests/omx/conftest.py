"""Golden-file helpers for the oh-my-codex conformance tests (``--update-goldens`` is defined in tests/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "goldens" / "omx"


def load_golden(relpath: str) -> Any:
    return json.loads((GOLDEN_DIR / relpath).read_text(encoding="utf-8"))


def dump_golden(relpath: str, doc: Any) -> None:
    path = GOLDEN_DIR / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens", default=False))


@pytest.fixture
def golden_updater(update_goldens: bool) -> Iterator[Callable[[str, Any], None]]:
    """Collect documents to rewrite; they are written at teardown only under ``--update-goldens``."""
    pending: dict[str, Any] = {}

    def stage(relpath: str, doc: Any) -> None:
        pending[relpath] = doc

    yield stage
    if update_goldens:
        for relpath, doc in pending.items():
            dump_golden(relpath, doc)
