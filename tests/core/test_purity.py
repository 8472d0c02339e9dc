"""pure/ does no I/O: checked mechanically over every module's syntax tree."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PURE = Path(__file__).resolve().parents[2] / "pure"
BANNED_MODULES = {
    "os", "subprocess", "sh", "time", "random", "socket", "shutil", "tempfile", "shell", "logging", "pathlib",
    "io", "glob", "sqlite3", "threading", "asyncio", "multiprocessing", "urllib", "http", "signal", "secrets",
    "uuid", "fcntl", "select", "sys", "builtins", "importlib.resources", "returns.unsafe",
}
# datetime is allowed for pure parsing and arithmetic; reading the clock is not.
BANNED_ATTRIBUTES = {"environ", "getenv", "system", "popen", "now", "today", "utcnow"}
BANNED_CALLS = {"open", "print", "input", "exec", "eval", "compile", "__import__", "breakpoint"}


def _modules() -> list[Path]:
    return sorted(PURE.rglob("*.py"))


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            for banned in BANNED_MODULES:
                if name == banned or name.startswith(banned + "."):
                    found.append(f"{path.name}:{node.lineno}: imports {name}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BANNED_CALLS:
            found.append(f"{path.name}:{node.lineno}: calls {node.func.id}()")
        if isinstance(node, ast.Attribute) and node.attr in BANNED_ATTRIBUTES:
            found.append(f"{path.name}:{node.lineno}: touches .{node.attr}")
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PURE)))
def test_pure_module_does_no_io(path: Path) -> None:
    assert _violations(path) == []


def test_the_check_catches_io(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom subprocess import run\nimport sh\nx = open('f')\ny = os.environ\n"
                   "import datetime\nz = datetime.datetime.now()\n")
    found = _violations(bad)
    assert any("imports os" in f for f in found)
    assert any("subprocess" in f for f in found)
    assert any("imports sh" in f for f in found)
    assert any("open()" in f for f in found)
    assert any(".environ" in f for f in found)
    assert any(".now" in f for f in found)


def test_every_pure_module_imports_without_side_effects() -> None:
    import importlib

    for path in _modules():
        rel = path.relative_to(PURE.parent).with_suffix("")
        importlib.import_module(".".join(rel.parts).removesuffix(".__init__"))
