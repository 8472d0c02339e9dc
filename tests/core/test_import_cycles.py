"""No import cycles among the modules of ``pure/``, ``shell/`` and ``cli.py``, not even through an
import that runs later.

The graph is built statically (``ast``). Its load-time edges are the imports that run when a module
is imported: its top-level statements, including those inside top-level ``if``/``try``/``with``
blocks and class bodies. Imports inside a function body run only when the function is called (the
CLI uses them to keep ``panefleet --help`` from loading every command); imports under ``if
TYPE_CHECKING:`` never run.

A cycle among load-time imports is the one that breaks: whichever module Python reaches first sees
the other half-initialised, so whether ``import x`` works depends on what was imported before it.
A cycle through a deferred import works, but it means two modules each lean on the other, so the
layering is checked with deferred imports too: none is allowed either (the wire codec sits below the
schema, ``pure/convert.py``, so that decoding against the schema, ``pure/wire.py``, can sit above it;
the plan file a dry run writes, ``shell/cli/plan_file.py``, sits below the commands that read it).

An edge goes to the module named (``from pure.tmux import prove`` is an edge to ``pure.tmux``,
``from pure import wire`` one to ``pure.wire``), not to its parent packages: a package's
``__init__`` re-exporting its own submodules is not a cycle between modules.

One layering rule is checked on every import, deferred ones included: ``shell/run/`` (the loop and
what it drives) never imports the command-line layer (``cli.py``, ``shell/cli/``) nor the demos, so
the loop can be used without them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOWER_SHELL = "shell.run"


def module_files() -> dict[str, Path]:
    """Module name → file, for every module of ``pure/``, ``shell/`` and ``cli.py``."""
    found = {"cli": ROOT / "cli.py"}
    for top in ("pure", "shell"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(body: Iterable[ast.stmt], deferred: bool) -> Iterable[ast.Import | ast.ImportFrom]:
    """The import statements of ``body``: those that run at load time, or (``deferred``) all."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if deferred:
                yield from _imports(node.body, deferred)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            continue
        else:  # if / try / with / for / while / match / class bodies run at load time
            inner: list[ast.stmt] = []
            for field in ("body", "orelse", "finalbody"):
                value = getattr(node, field, None)
                if isinstance(value, list):
                    inner += value
            for handler in getattr(node, "handlers", None) or []:
                inner += handler.body
            for case in getattr(node, "cases", None) or []:
                inner += case.body
            yield from _imports(inner, deferred)


def _owner(name: str, known: Iterable[str]) -> str | None:
    """The longest module of ``known`` that ``name`` is or lies in."""
    names = set(known)
    while name and name not in names:
        name = name.rpartition(".")[0]
    return name or None


def edges_of(module: str, source: str, *, is_package: bool, known: Iterable[str],
             deferred: bool = False) -> set[str]:
    """The modules of ``known`` that ``module`` imports (at load time; ``deferred``: anywhere)."""
    known = set(known)
    found: set[str] = set()
    for node in _imports(ast.parse(source).body, deferred):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        found |= {owner for target in targets if (owner := _owner(target, known)) is not None}
    found.discard(module)
    return found


def import_graph(*, deferred: bool = False) -> dict[str, set[str]]:
    files = module_files()
    return {name: edges_of(name, path.read_text(encoding="utf-8"), is_package=path.name == "__init__.py",
                           known=files, deferred=deferred)
            for name, path in files.items()}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """One cycle (``[a, b, …, a]``) for every strongly connected group of more than one module."""
    ordered = {node: sorted(set(targets) & set(graph)) for node, targets in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm; the graph is small enough to recurse
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in ordered[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(ordered):
        if node not in index:
            visit(node)
    return [_cycle_in(ordered, group) for group in groups]


def _cycle_in(graph: Mapping[str, list[str]], group: set[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in graph[node]:
                if target == start:
                    return [*paths[node], start]
                if target in group and target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # unreachable for a strongly connected group


def test_no_load_time_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" → ".join(cycle) for cycle in found)


def test_no_import_cycles_through_deferred_imports_either() -> None:
    found = cycles(import_graph(deferred=True))
    assert not found, "import cycles (deferred imports included):\n" + "\n".join(" → ".join(c) for c in found)


def test_the_run_loop_does_not_import_the_command_line_layer() -> None:
    graph = import_graph(deferred=True)
    upper = {name for name in graph if name == "cli" or name.startswith(("shell.cli", "shell.demo"))}
    lower = [name for name in graph if name == LOWER_SHELL or name.startswith(LOWER_SHELL + ".")]
    assert len(lower) > 5, lower
    reached = {(low, target) for low in lower for target in graph[low] & upper}
    assert not reached, f"imports of the command-line layer: {sorted(reached)}"


def test_the_checker_finds_a_cycle_and_names_it() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]


def test_deferred_and_type_only_imports_are_not_load_time_edges() -> None:
    source = (
        "from __future__ import annotations\n"
        "import pure.b\n"
        "from . import c\n"
        "from pure.d import name\n"
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:\n    import pure.e\n"
        "try:\n    import pure.f\nexcept ImportError:\n    import pure.g\n"
        "class K:\n    import pure.h\n"
        "def later():\n    import pure.i\n"
    )
    known = {f"pure.{x}" for x in "abcdefghi"} | {"pure"}
    assert edges_of("pure.a", source, is_package=False, known=known) == {
        "pure.b", "pure.c", "pure.d", "pure.f", "pure.g", "pure.h"}
    assert "pure.i" in edges_of("pure.a", source, is_package=False, known=known, deferred=True)
