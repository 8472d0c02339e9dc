"""Every reference in a comment or docstring resolves to something in this repository.

Scanned: the comments (``tokenize``) and docstrings (module, class, function) of every ``.py`` file
under ``pure/``, ``shell/``, ``bench/``, ``tests/`` and of ``cli.py``, and the text of ``README.md``,
``docs/*.md`` and the READMEs under ``tests/``. String literals that are data (golden descriptions,
messages) are not references and are not scanned.

The rules:

* **A path** starting with a top-level directory of the repository (``docs/``, ``pure/``,
  ``shell/``, ``tests/``, ``bench/``, ``ports/``) must exist, as a file or a directory. A
  placeholder in it (``<name>``, ``{role}``, ``*``) stands for one or more characters and
  ``{a,b}`` for either name, so ``tests/goldens/screens/<cli>/<name>.json`` must match at least one
  file and ``pure/omx/{txn,locks}.py`` both. ``spec/…`` is not a
  directory of this repository, so it never resolves.
* **A section** is cited as ``docs/<name>.md, "<Title>"`` (or ``*<Title>*``; backticks around the
  path are allowed, and more titles may follow, separated by commas): each title must be the start
  of a heading of that file (backticks in headings ignored) or of a bold lead (``**<Title> …**``).
* **No section sign** (U+00A7): numbered sections belong to a specification outside the
  repository; cite the document and its section title as above instead.
* **A bare ``*.md`` name** (no directory) must be a file at the root of the repository or one of
  the files panefleet reads or writes at run time (``RUNTIME_MD``); any other document of the
  repository is cited by its path.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("pure", "shell", "bench", "tests")
TOP_LEVEL = ("docs", "pure", "shell", "tests", "bench", "ports", "spec")
SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
# Files of a team or a worktree that code talks about by name (not documents of this repository).
RUNTIME_MD = frozenset({"AGENTS.md", "inbox.md", "worker-agents.md"})

PATH = re.compile(r"(?<![\w./$<>{}-])((?:" + "|".join(TOP_LEVEL) + r")/(?:\{[\w.,-]*\}|[\w./*<>-])+)")
TITLE = r'(?:"([^"\n]+)"|\*([^*\n]+)\*)'
SECTION = re.compile(r"(docs/[\w.-]+\.md)`{0,2},\s+" + TITLE + r"((?:,\s+" + TITLE + r")*)")
MORE_TITLES = re.compile(r",\s+" + TITLE)
BARE_MD = re.compile(r"(?<![\w./<>{}$*-])([\w-]+\.md)\b")
PLACEHOLDER = re.compile(r"<[^<>/]*>|\{[^{}/]*\}|\*+")


def scanned_files() -> list[Path]:
    found = [ROOT / "cli.py", ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for top in SCANNED:
        found += [p for p in sorted((ROOT / top).rglob("*.py")) if not SKIPPED_DIRS & set(p.parts)]
    found += [p for p in sorted((ROOT / "tests").rglob("README.md")) if "goldens" not in p.parts]
    return found


def paragraphs(path: Path) -> Iterator[tuple[int, str]]:
    """(first line, text) of every paragraph of a markdown file."""
    start, lines = 1, list[str]()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            start = start if lines else number
            lines.append(line)
        elif lines:
            yield start, "\n".join(lines)
            lines = []
    if lines:
        yield start, "\n".join(lines)


def comments_and_docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring of one file (every paragraph of a markdown file)."""
    if path.suffix == ".md":
        yield from paragraphs(path)
        return
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                # a docstring's lines are counted from its first line, so problems name the real line
                yield first.lineno, first.value.value


@cache
def repo_paths() -> frozenset[str]:
    """Every file and directory of the working tree, relative to the root (``/``-separated)."""
    out: set[str] = set()
    for top in TOP_LEVEL:
        base = ROOT / top
        if not base.exists():
            continue
        out.add(top)
        for path in base.rglob("*"):
            if not SKIPPED_DIRS & set(path.relative_to(ROOT).parts):
                out.add(path.relative_to(ROOT).as_posix())
    return frozenset(out)


def expansions(reference: str) -> list[str]:
    """``pure/omx/{txn,locks}.py`` → ``pure/omx/txn.py``, ``pure/omx/locks.py``."""
    group = re.search(r"\{([^{}/]*,[^{}/]*)\}", reference)
    if group is None:
        return [reference]
    return [expanded for name in group.group(1).split(",")
            for expanded in expansions(reference[:group.start()] + name + reference[group.end():])]


def path_exists(reference: str) -> bool:
    return all(_exists(expanded) for expanded in expansions(reference.rstrip("/.-")))


def _exists(reference: str) -> bool:
    if not PLACEHOLDER.search(reference):
        return reference in repo_paths()
    pattern = re.compile(".+".join(re.escape(piece) for piece in PLACEHOLDER.split(reference)))
    return any(pattern.fullmatch(candidate) for candidate in repo_paths())


@cache
def section_titles(doc: str) -> tuple[str, ...]:
    """The headings and bold leads of one document, without markdown markup."""
    titles: list[str] = []
    for line in (ROOT / doc).read_text(encoding="utf-8").splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading:
            titles.append(heading.group(1).replace("`", "").strip())
        titles += [bold.replace("`", "").strip() for bold in re.findall(r"\*\*([^*]+)\*\*", line)]
    return tuple(titles)


def has_section(doc: str, title: str) -> bool:
    wanted = " ".join(title.replace("`", "").split())
    return any(t == wanted or t.startswith(wanted) and not t[len(wanted)].isalnum() for t in section_titles(doc))


def problems_in(text: str) -> list[str]:
    found: list[str] = []
    flat = " ".join(text.split())  # a citation may be wrapped over two lines
    if "§" in text:
        found.append('a § citation: cite docs/<name>.md, "<Section title>" instead')
    for match in PATH.finditer(text):
        if not path_exists(match.group(1)):
            found.append(f"{match.group(1)} does not exist in the repository")
    for match in SECTION.finditer(flat):
        doc = match.group(1)
        if not path_exists(doc):
            continue  # already reported as a missing path
        titles = [match.group(2) or match.group(3)]
        titles += [m.group(1) or m.group(2) for m in MORE_TITLES.finditer(match.group(4))]
        found += [f'{doc} has no section "{title}"' for title in titles if not has_section(doc, title)]
    for match in BARE_MD.finditer(text):
        if match.group(1) not in RUNTIME_MD and not (ROOT / match.group(1)).is_file():
            found.append(f"{match.group(1)}: cite a document by its path in the repository")
    return found


def all_problems() -> list[str]:
    return [f"{path.relative_to(ROOT)}:{line}: {problem}"
            for path in scanned_files()
            for line, text in comments_and_docstrings(path)
            for problem in problems_in(text)]


def test_every_reference_in_comments_and_docstrings_resolves() -> None:
    problems = all_problems()
    assert not problems, "references that do not resolve:\n" + "\n".join(problems)


@pytest.mark.parametrize(("text", "problem"), [
    ("the teardown (spec §4.5)", "§"),
    ("see spec/omx-scaling-spec.md", "spec/omx-scaling-spec.md does not exist"),
    ("(``tests/test_purity.py``)", "tests/test_purity.py does not exist"),
    ('(docs/scale-up.md, "No such section")', 'has no section "No such section"'),
    ('(``docs/ports.md``, "Owner tag", "Nothing like it")', 'has no section "Nothing like it"'),
    ("catalogue ids of omx-scenarios.md", "omx-scenarios.md: cite a document"),
    ("``pure/omx/{txn,nothing}.py``", "pure/omx/{txn,nothing}.py does not exist"),
])
def test_the_checks_catch_what_they_are_for(text: str, problem: str) -> None:
    assert any(problem in p for p in problems_in(text)), problems_in(text)


@pytest.mark.parametrize("text", [
    '(docs/scale-up.md, "Watched start-up")',  # a bold lead
    '(``docs/ports.md``, "Pane table", "Owner tag")',  # headings, one with markup after the title
    "(also in ``docs/scale-up.md``, *Pane placement*)",
    "``tests/goldens/screens/<cli>/<name>.json``",
    "``pure/omx/{scale_down,debt,tasks,txn,locks}.py``",
    "the worktree-root ``AGENTS.md`` and ``workers/<w>/inbox.md``",
])
def test_the_allowed_forms_pass(text: str) -> None:
    assert problems_in(text) == []
