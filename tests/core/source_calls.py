"""What the source-reading checks share (tests/core/test_owned_panes.py, tests/core/test_owned_herdr.py):
the project's modules, and the name a call is made by."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def project_sources() -> list[Path]:
    """``cli.py`` and every module of ``pure/`` and ``shell/``."""
    return [ROOT / "cli.py", *sorted((ROOT / "pure").rglob("*.py")), *sorted((ROOT / "shell").rglob("*.py"))]


def call_name(func: ast.expr) -> str:
    """``f`` for ``f(…)`` and for ``x.f(…)``; "" for any other callee."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""
