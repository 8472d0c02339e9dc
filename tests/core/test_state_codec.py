"""Team state codec against files written by oh-my-codex 0.20.3 itself (tests/fixtures/omx)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from returns.result import Failure, Success

from pure.omx import codec
from pure.omx import state as st
from pure.omx.records import to_json

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "omx"
PATHS = st.TeamPaths("/w/.omx/state", "alpha")


def _text(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def test_reads_what_oh_my_codex_writes_exactly_as_it_reads_it() -> None:
    loaded = st.read_team_state(PATHS, _text("config.json"), _text("manifest.v2.json"))
    assert isinstance(loaded, Success)
    expected = json.loads(_text("read-config.expected.json"))
    assert json.dumps(to_json(loaded.unwrap().config), sort_keys=True) == json.dumps(expected, sort_keys=True)


@pytest.mark.parametrize("name", ["config.json", "manifest.v2.json"])
def test_rendering_preserves_oh_my_codex_bytes(name: str) -> None:
    text = _text(name)
    assert codec.render_json(json.loads(text)) == text


def test_manifest_wins_and_generation_comes_from_config() -> None:
    config = json.loads(_text("config.json"))
    config["max_workers"] = 5
    config["config_generation"] = 7
    manifest = json.loads(_text("manifest.v2.json"))
    manifest["workers"][0]["pane_id"] = "%99"
    view = st.read_team_state(PATHS, json.dumps(config), json.dumps(manifest)).unwrap().config
    assert view.max_workers == 20 and view.config_generation == 7
    assert view.workers[0].pane_id == "%99"


def test_invalid_manifest_is_ignored_like_oh_my_codex() -> None:
    manifest = json.loads(_text("manifest.v2.json"))
    manifest["schema_version"] = 3
    view = st.read_team_state(PATHS, _text("config.json"), json.dumps(manifest)).unwrap()
    assert view.raw_manifest is None and view.config.workers[0].pane_id == "%21"
    broken = st.read_team_state(PATHS, _text("config.json"), "{not json").unwrap()
    assert broken.raw_manifest is None


@pytest.mark.parametrize(("value", "field", "message"), [
    ("1e400", "worker_count", "out of range"),
    ("NaN", "worker_count", "NaN is not a JSON number"),
    ("9" * 5000, "worker_count", "5000 digits"),
    ('"\\ud800"', "task", "lone surrogate"),
    ("[" * 100 + "]" * 100, "policy", "nested deeper than 64 levels"),
])
def test_manifest_holding_what_json_cannot_carry_is_refused_not_ignored(value: str, field: str,
                                                                         message: str) -> None:
    """oh-my-codex would read some of these as its manifest (1e400 is Infinity to JSON.parse), so
    ignoring one would let the two tools disagree about the team: it is refused, named."""
    manifest = json.loads(_text("manifest.v2.json"))
    manifest[field] = "\u0001mark\u0001"
    text = json.dumps(manifest, indent=2).replace(json.dumps("\u0001mark\u0001"), value)
    result = st.read_team_state(PATHS, _text("config.json"), text)
    assert isinstance(result, Failure)
    error = result.failure()
    assert error.file == PATHS.manifest and error.field.startswith(field) and message in error.message
    assert error.syntax is None


@pytest.mark.parametrize(("text", "field", "message"), [
    ("garbage", "", "malformed JSON"),
    ("null", "", "expected a JSON object"),
    ("{}", "name", "must be a string"),
    ('{"worker": "worker-2"}', "name", "must be a string"),
    ('{"name": "worker-2", "index": "2"}', "index", "positive integer"),
    ('{"name": "worker-2", "index": 2, "pane_id": 13}', "pane_id", "string"),
    ('{"name": "worker-2", "index": 2, "pid": 1.5}', "pid", "integer"),
    ('{"name": "worker-2", "index": 2, "pid": 1e400}', "pid", "out of range"),
])
def test_malformed_identity_names_file_and_field(text: str, field: str, message: str) -> None:
    result = st.check_identity(text, "identity.json")
    assert isinstance(result, Failure)
    error = result.failure()
    assert error.file == "identity.json" and error.field == field and message in error.message


def test_identity_of_another_pane_is_not_malformed() -> None:
    assert st.check_identity(None, "identity.json") == Success(None)
    other = '{"name": "worker-9", "index": 9, "pane_id": "%99", "pid": null, "role": 5}'
    identity = st.check_identity(other, "identity.json").unwrap()
    assert (identity.name, identity.index, identity.pane_id, identity.pid) == ("worker-9", 9, "%99", None)
    assert to_json(identity) == json.loads(other)  # every key kept, "role" too


def test_syntax_errors_keep_the_parser_words() -> None:
    error = codec.parse_json("{", "f.json").failure()
    assert error.syntax == "Expecting property name enclosed in double quotes"
    assert codec.parse_json("[" * 5000, "f.json").failure().syntax is None  # refused for depth, not grammar


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("{", "", "malformed JSON"),
        ("[]", "", "expected a JSON object"),
        ('{"workers": []}', "name", "must be a string"),
        ('{"name": "alpha"}', "workers", "must be an array"),
        ('{"name": "alpha", "workers": [{"name": "Worker 1", "index": 1}]}', "workers[0].name", "must match"),
        ('{"name": "alpha", "workers": [{"name": "worker-1", "index": "1"}]}', "workers[0].index", "positive integer"),
        ('{"name": "alpha", "workers": [{"name": "worker-1", "index": 1, "pid": "42"}]}', "workers[0].pid", "integer"),
        ('{"name": "alpha", "workers": [{"name": "worker-1", "index": 1, "pane_id": 21}]}', "workers[0].pane_id",
         "string"),
        ('{"name": "alpha", "workers": [], "worker_count": "2"}', "worker_count", "integer"),
        ('{"name": "alpha", "workers": [], "leader_pane_id": 11}', "leader_pane_id", "string"),
    ],
)
def test_malformed_config_names_file_and_field(text: str, field: str, message: str) -> None:
    result = st.read_team_state(PATHS, text, None)
    assert isinstance(result, Failure)
    error = result.failure()
    assert error.file == PATHS.config and error.field == field and message in error.message
    assert PATHS.config in str(error)


def test_missing_config_is_a_typed_error() -> None:
    result = st.read_team_state(PATHS, None, _text("manifest.v2.json"))
    assert isinstance(result, Failure) and result.failure().message == "missing"


@pytest.mark.parametrize(
    ("env", "root"),
    [
        ({}, "/w/.omx/state"),
        ({"OMX_TEAM_STATE_ROOT": "shared/state"}, "/w/shared/state"),
        ({"OMX_TEAM_STATE_ROOT": "  /abs/state  "}, "/abs/state"),
        ({"OMX_ROOT": "/box"}, "/box/.omx/state"),
        ({"OMX_STATE_ROOT": "../box"}, "/box/.omx/state"),
        ({"OMX_TEAM_STATE_ROOT": " ", "OMX_ROOT": "/b"}, "/b/.omx/state"),
    ],
)
def test_state_root_resolution(env: dict[str, str], root: str) -> None:
    assert st.resolve_state_root("/w", env) == root


def test_worker_state_defaults_to_unknown() -> None:
    assert st.worker_state(None) == "unknown"
    assert st.worker_state("{") == "unknown"
    assert st.worker_state('{"state": "sleepy", "updated_at": "x"}') == "unknown"
    assert st.worker_state('{"state": "idle"}') == "unknown"  # no updated_at: not a status oh-my-codex reads
    assert st.worker_state('{"state": "idle", "updated_at": "t"}') == "idle"
