"""The tmux corpus is the whole contract: every file validates, uses only the schema's subset, and no
expected value is Python speaking (a repr, a class or exception name, ``None``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pure.schema import KEYWORDS, OPERATIONS, build_schema
from tests.harness import GOLDEN_ROOT

TMUX = GOLDEN_ROOT / "tmux"
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schema.json").read_text(encoding="utf-8"))
MANIFEST = json.loads((TMUX / "manifest.json").read_text(encoding="utf-8"))


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**SCHEMA, "anyOf": [{"$ref": f"#/$defs/{name}"}]})


def test_the_manifest_lists_exactly_the_files() -> None:
    on_disk = sorted(str(p.relative_to(TMUX)) for p in TMUX.rglob("*.json"))
    assert sorted(f["path"] for f in MANIFEST["files"]) == on_disk
    _validator("Manifest").validate(MANIFEST)


@pytest.mark.parametrize("entry", MANIFEST["files"], ids=lambda e: e["path"])
def test_every_file_validates_against_its_definition(entry: dict[str, str]) -> None:
    data = json.loads((TMUX / entry["path"]).read_text(encoding="utf-8"))
    _validator(entry["schema"]).validate(data)
    if entry["kind"] == "decision":
        described = OPERATIONS[data["operation"]]
        _validator(described["request"]).validate(data["request"])
        assert data["description"]


def _schema_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every schema object inside ``node`` (not the data under const, enum, default or discriminator)."""
    yield node
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from _schema_nodes(node[key])
    for member in node.get("anyOf", []):
        yield from _schema_nodes(member)
    for key in ("properties", "$defs"):
        for member in node.get(key, {}).values():
            yield from _schema_nodes(member)


def test_the_schema_uses_only_the_documented_keywords() -> None:
    used = {key for node in _schema_nodes(build_schema()) for key in node}
    assert used <= KEYWORDS, used - KEYWORDS
    assert {"discriminator", "default", "minimum", "maximum"} <= used


PYTHON_SPEAKING = [
    re.compile(r"\bNone\b"), re.compile(r"\b(True|False)\b"), re.compile(r"\b\w*(Error|Exception)\b"),
    re.compile(r"\b(Proc|FileData|Ack|Listing|Value|JsonResult|Run|Sleep|Entry|PaneRow|Verdict)\("),
    re.compile(r"\bgot (Proc|FileData|Ack|Listing|Value|JsonResult)\b"), re.compile(r"'[^'\n]*\\[rnt][^'\n]*'"),
    re.compile(r"Traceback|Exceeds the limit"),
]


def _expected_strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every string a runner compares: all of a file except what goes in (answers, journals' observations,
    requests, stdin) and what is informative."""
    if key in ("informative", "description", "answer", "stdin", "request", "journal"):
        return
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _expected_strings(v, k)
    elif isinstance(value, list):
        for item in value:
            yield from _expected_strings(item, key)


def test_no_expected_value_is_python_speaking() -> None:
    found = []
    for entry in MANIFEST["files"]:
        data = json.loads((TMUX / entry["path"]).read_text(encoding="utf-8"))
        for key, text in _expected_strings(data):
            if key == "stderr" and entry["kind"] == "parse":
                continue  # tmux's own words, carried as data
            found += [f"{entry['path']} {key}: {text[:80]!r}" for pattern in PYTHON_SPEAKING if pattern.search(text)]
    assert found == []


def test_the_checks_catch_what_they_are_for() -> None:
    for text in ("expected pid None, found 513", "bad pid '513\\r'", "internal_error:ValueError:Exceeds the limit",
                 "step run expects a Proc observation, got Value", "journal_divergence:expected Run(op='run')"):
        assert any(p.search(text) for p in PYTHON_SPEAKING), text
