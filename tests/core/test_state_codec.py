"""Team state codec against files written by oh-my-codex 0.20.3 itself (tests/fixtures/omx)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from returns.result import Failure, Success

from pure.omx import state as st

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "omx"
PATHS = st.TeamPaths("/w/.omx/state", "alpha")


def _text(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


def test_reads_what_oh_my_codex_writes_exactly_as_it_reads_it() -> None:
    loaded = st.read_team_state(PATHS, _text("config.json"), _text("manifest.v2.json"))
    assert isinstance(loaded, Success)
    expected = json.loads(_text("read-config.expected.json"))
    assert json.dumps(loaded.unwrap().config, sort_keys=True) == json.dumps(expected, sort_keys=True)


@pytest.mark.parametrize("name", ["config.json", "manifest.v2.json"])
def test_rendering_preserves_oh_my_codex_bytes(name: str) -> None:
    text = _text(name)
    assert st.render_json(json.loads(text)) == text


def test_manifest_wins_and_generation_comes_from_config() -> None:
    config = json.loads(_text("config.json"))
    config["max_workers"] = 5
    config["config_generation"] = 7
    manifest = json.loads(_text("manifest.v2.json"))
    manifest["workers"][0]["pane_id"] = "%99"
    view = st.read_team_state(PATHS, json.dumps(config), json.dumps(manifest)).unwrap().config
    assert view["max_workers"] == 20 and view["config_generation"] == 7
    assert view["workers"][0]["pane_id"] == "%99"


def test_invalid_manifest_is_ignored_like_oh_my_codex() -> None:
    manifest = json.loads(_text("manifest.v2.json"))
    manifest["schema_version"] = 3
    view = st.read_team_state(PATHS, _text("config.json"), json.dumps(manifest)).unwrap()
    assert view.raw_manifest is None and view.config["workers"][0]["pane_id"] == "%21"
    broken = st.read_team_state(PATHS, _text("config.json"), "{not json").unwrap()
    assert broken.raw_manifest is None


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


def test_worker_status_defaults_to_unknown() -> None:
    unknown = {"state": "unknown", "updated_at": "1970-01-01T00:00:00.000Z"}
    assert st.worker_status(None) == unknown
    assert st.worker_status("{") == unknown
    assert st.worker_status('{"state": "sleepy", "updated_at": "x"}') == unknown
    assert st.worker_status('{"state": "idle", "updated_at": "t"}')["state"] == "idle"
