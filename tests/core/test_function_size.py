"""The scale-up and respawn programs stay readable phase by phase: no function in them over 60 lines
(a longer one is a phase that wants its own name, as in pure/omx/scale_up/program.py)."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

LIMIT = 60
MODULES = sorted((ROOT / "pure/omx/scale_up").glob("*.py")) + [ROOT / "pure/omx/respawn.py"]


def _long_functions(source: str, label: str) -> list[str]:
    return [f"{label}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > LIMIT]


def test_no_function_in_scale_up_or_respawn_is_over_the_limit() -> None:
    assert len(MODULES) > 5  # the glob found the package
    assert [line for path in MODULES
            for line in _long_functions(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))] == []


def test_the_check_sees_a_long_function() -> None:
    lines = [f"        x{i} = {i}" for i in range(LIMIT)]
    def method(body: list[str]) -> str:
        return "class C:\n    def f(self) -> None:\n" + "\n".join(body) + "\n"
    assert _long_functions(method(lines), "m") == ["m:2 f (61 lines)"]
    assert _long_functions(method(lines[1:]), "m") == []
