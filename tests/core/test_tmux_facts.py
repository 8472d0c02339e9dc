"""The tmux fact table (pure/tmux/facts.py): each query's format is built from its field list and an
answer is cut back along the same list; no other module writes a tmux format or cuts an answer at tabs."""

from __future__ import annotations

import ast
import re

import pytest

from pure.tmux import facts
from tests.core.source_calls import ROOT, call_name, project_sources

QUERIES = {name: value for name, value in vars(facts).items() if isinstance(value, facts.Query)}
FORMAT_ONLY = re.compile(r"(?:#\{[a-z_-]+\}\t?)+")


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_a_row_tmux_prints_for_a_query_is_cut_into_its_fields(name: str) -> None:
    query = QUERIES[name]
    assert query.format == "\t".join("#{" + field + "}" for field in query.fields)
    # tmux prints the format with each variable replaced: here by the variable's own name
    printed = query.format.replace("#{", "").replace("}", "")
    assert query.rows(printed + "\r\n" + printed + "\n") == [list(query.fields)] * 2


def test_the_last_field_of_a_rest_query_keeps_its_tabs_and_others_are_cut_at_each() -> None:
    assert facts.PANES_STARTED.cut("%1\t0\t42\t7\t99\tsh -c 'a\tb'") == ["%1", "0", "42", "7", "99", "sh -c 'a\tb'"]
    # refused by the parser of the server's start
    assert facts.NEW_PANE.cut("%1\t42\t7\t99\textra") == ["%1", "42", "7", "99\textra"]
    assert facts.PANES.cut("%1\t0\t42\textra") == ["%1", "0", "42", "extra"]  # refused for its count
    assert facts.PANES.rows("") == []
    assert facts.PANES.rows("\n") == [[""]]


def _offences(path: str, tree: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node.func) in ("split", "rsplit", "partition") and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "\t":
            found.append(f"{path}:{node.lineno} cuts an answer at tabs")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and FORMAT_ONLY.fullmatch(node.value):
            found.append(f"{path}:{node.lineno} writes the tmux format {node.value!r}")
    return found


def test_no_other_module_writes_a_tmux_format_or_cuts_an_answer_at_tabs() -> None:
    offences: list[str] = []
    for source in project_sources():
        relative = str(source.relative_to(ROOT))
        if relative != "pure/tmux/facts.py":
            offences += _offences(relative, ast.parse(source.read_text(encoding="utf-8")))
    assert offences == []


def test_the_check_finds_a_format_and_a_cut() -> None:
    tree = ast.parse('x = "#{pane_id}\\t#{pane_pid}"\ny = line.split("\\t")\n')
    assert len(_offences("m.py", tree)) == 2
