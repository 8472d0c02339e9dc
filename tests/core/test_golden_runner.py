"""The golden runner a port would write, run over every decision golden in the corpus.

For a decision golden ``{operation, request, journal, decision}``: ``decide(request, journal[:i])``
must be ``Next([journal[i].step])`` for every i before the first entry that does not fit (the
decision's ``problem.at`` for an error decision about the journal, else the journal's length), and
``decide(request, journal)`` must be ``decision``. Every entry and decision must also validate
against the committed JSON Schema (for an operation the schema describes, against its own
definitions).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from pure import model as m
from pure import operations, wire
from pure.program import decide

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "tests" / "goldens"
SCHEMA = json.loads((ROOT / "docs" / "schema.json").read_text(encoding="utf-8"))


def _decision_goldens() -> list[Path]:
    found = []
    for path in sorted(GOLDENS.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            found.append(path)  # fails in the test with the parser's message
            continue
        if isinstance(data, dict) and data.get("kind") == "decision" and "journal" in data and "operation" in data:
            found.append(path)
    return found


def _validator(ref: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**SCHEMA, "anyOf": [{"$ref": f"#/$defs/{ref}"}]})


def _first_misfit(decision: dict[str, Any], length: int) -> int:
    result = decision.get("outcome", {}).get("result")
    problem = result.get("problem") if isinstance(result, dict) else None
    if isinstance(problem, dict) and str(problem.get("code", "")).startswith("journal_"):
        return int(problem["at"])
    return length


ENTRY = _validator("Entry")
DECISION = _validator("Decision")


@pytest.mark.parametrize("path", _decision_goldens(), ids=lambda p: str(p.relative_to(GOLDENS)))
def test_decision_golden_replays(path: Path) -> None:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert data["format_version"].split(".")[0] == m.FORMAT_VERSION.split(".")[0]
    op = operations.get(data["operation"])
    assert op is not None, f"unknown operation {data['operation']}"
    request = wire.structure(data["request"], op.request_type).unwrap()
    journal: list[m.Entry] = []
    for raw in data["journal"]:
        ENTRY.validate(raw)
        journal.append(wire.structure(raw, m.Entry).unwrap())
    DECISION.validate(data["decision"])
    described = SCHEMA["operations"].get(data["operation"])
    if described is not None:
        _validator(described["request"]).validate(data["request"])
        _validator(described["decision"]).validate(data["decision"])
    for i, entry in enumerate(journal[:_first_misfit(data["decision"], len(journal))]):
        assert decide(lambda: op.program(request), journal[:i]) == m.Next(steps=(entry.step,)), f"step {i}"
    expected = wire.structure_as(data["decision"], m.Decision).unwrap()
    assert decide(lambda: op.program(request), journal) == expected


def test_the_corpus_is_not_empty() -> None:
    assert len(_decision_goldens()) >= 20
