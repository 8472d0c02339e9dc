from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from pure import model as m
from pure import wire
from pure.schema import build_schema, schema_text

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "raw",
    [
        {"kind": "proc", "exit_code": "0"},  # "0" is not an int
        {"kind": "proc", "exit_code": True},  # a bool is not an int
        {"kind": "ack", "ok": "false"},  # "false" is not a bool
        {"kind": "value", "value": 5},  # 5 is not a string
        {"kind": "value", "value": None},
        {"kind": "listing", "names": "ab"},  # a string is not a list of names
        {"kind": "proc", "exit_code": 0, "extra": 1},  # unknown key
        {"kind": "zap"},  # unknown tag
        {"exit_code": 0},  # no tag
    ],
)
def test_strict_observations_are_rejected(raw: object) -> None:
    assert isinstance(wire.structure_as(raw, m.Observation), Failure)


def test_step_round_trip_and_tags() -> None:
    step = m.Run(tool="tmux", args=("list-panes", "-a"), mutates=False)
    data = wire.unstructure(step)
    assert data["op"] == "run"
    assert wire.structure_as(data, m.Step) == Success(step)


def test_malformed_json_is_a_typed_error() -> None:
    result = wire.from_json('{"step": ', m.Entry)
    assert isinstance(result, Failure)
    assert result.failure().code == "malformed_json"


def test_json_value_rejects_non_json() -> None:
    assert isinstance(wire.structure({"status": "ok", "result": {"x": float("nan")}}, m.Outcome), Failure)


texts = st.text(max_size=30)
runs = st.builds(m.Run, tool=st.sampled_from(["tmux", "git", "herdr", "sh"]), args=st.lists(texts, max_size=5).map(tuple),
                 cwd=st.none() | texts, mutates=st.booleans(), note=texts)
observations = st.one_of(
    st.builds(m.Proc, exit_code=st.none() | st.integers(-300, 300), stdout=texts, stderr=texts),
    st.builds(m.FileData, content=st.none() | texts, error=texts),
    st.builds(m.Ack, ok=st.booleans(), error=texts),
    st.builds(m.Listing, names=st.none() | st.lists(texts, max_size=4).map(tuple)),
    st.builds(m.Value, value=texts),
)
steps = st.one_of(runs, st.builds(m.ReadFile, path=texts), st.builds(m.WriteFile, path=texts, content=texts),
                  st.builds(m.Sleep, ms=st.integers(0, 10**6)), st.builds(m.Clock), st.builds(m.FreshId))


@functools.cache
def _entry_schema() -> jsonschema.Draft202012Validator:
    """The wire schema's ``Entry``, checked once (``jsonschema.validate`` checks the schema on every call)."""
    schema = {**build_schema(), "anyOf": [{"$ref": "#/$defs/Entry"}]}
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@settings(deadline=None)
@given(steps, observations)
def test_entries_round_trip_through_json(step: m.Step, obs: m.Observation) -> None:
    entry = m.Entry(step=step, observation=obs)
    text = wire.to_json(entry)
    assert wire.from_json(text, m.Entry) == Success(entry)
    _entry_schema().validate(json.loads(text))


def test_committed_schema_matches_the_classes() -> None:
    committed = (ROOT / "docs" / "schema.json").read_text(encoding="utf-8")
    assert committed == schema_text(), "docs/schema.json drifted: run `panefleet schema > docs/schema.json`"


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(build_schema())
