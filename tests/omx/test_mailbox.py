"""``pure/omx/mailbox.py`` against oh-my-codex 0.20.3 itself.

The golden ``tests/goldens/omx/mailbox_oracle.json`` is what 0.20.3's own ``sendDirectMessage``,
``markMessageNotified`` and ``markMessageDelivered`` (runtime bridge off) left on disk, step by step,
with deterministic ids and clock (``tests/omx/oracles/mailbox_driver.mjs`` says how it was made). Each
step is replayed with the pure functions, fed the same ids and timestamps, and must give the same
bytes: the mailbox file, the events line, the delivery-log lines and the files they go to.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from attrs import evolve
from returns.result import Failure, Success

from pure.omx import mailbox as mb
from pure.omx.codec import StateError
from pure.omx.records import to_json
from pure.omx.state import TeamPaths, resolve_state_root
from tests.omx.conftest import load_golden

GOLDEN = load_golden("mailbox_oracle.json")
TEAM, WORKER, LEADER = GOLDEN["team"], GOLDEN["worker"], "leader-fixed"
BASE = "/b"
FILE = "/b/main/.omx/state/team/alpha/mailbox/worker-1.json"
OVERWRITTEN = ("malformed_json", "wrong_worker", "messages_not_array")  # 0.20.3 overwrites; panefleet refuses


def _env(scenario: dict[str, Any]) -> dict[str, str]:
    return {key: posixpath.join(BASE, value) for key, value in scenario.get("env", {}).items()}


def _rel(path: str) -> str:
    return posixpath.relpath(path, BASE)


def _by_id(text: str, message_id: str) -> dict[str, Any]:
    return next(m for m in json.loads(text)["messages"] if m["message_id"] == message_id)


def _check_lines(step: dict[str, Any], cwd: str, env: dict[str, str], paths: TeamPaths,
                 event: dict[str, Any] | None, log: Callable[..., dict[str, Any]] | None) -> None:
    """The step appended ``event`` to the events file and ``log(timestamp)`` to every delivery log it goes
    to, byte for byte (0.20.3 stamps each log copy with its own clock reading: the timestamp is taken
    from each line, the rest must match)."""
    appended = {path: [line + "\n" for line in lines] for path, lines in step["appended"].items()}
    events = appended.pop(_rel(paths.events), None)
    assert events == ([mb.render_line(event)] if event is not None else None)
    if log is None:
        assert appended == {}
        return
    stamps = {path: json.loads(lines[0])["timestamp"] for path, lines in appended.items()}
    first = min(stamps.values())
    assert set(appended) == {_rel(p) for p in mb.delivery_log_paths(cwd, env, first, local_team_state=True)}
    for path, lines in appended.items():
        assert lines == [mb.render_line(log(now=stamps[path]))]


def _replay_send(step: dict[str, Any], text: str | None, cwd: str, env: dict[str, str], paths: TeamPaths,
                 team_created_at: str) -> str | None:
    returned = step["returned"]
    appended = step["appended"]
    created = bool(appended)
    message_id = returned["message_id"] if created else "fresh-id-never-written"
    now = returned["created_at"] if created else "2026-03-04T23:59:59.999Z"
    message = mb.new_message(message_id=message_id, from_worker=LEADER, to_worker=WORKER, body=returned["body"],
                             now=now)
    recorded = mb.with_message(text, paths.mailbox_file(WORKER), WORKER, message,
                               team_created_at=team_created_at).unwrap()
    assert to_json(recorded.message) == returned
    if not created:
        assert recorded.text is None and not recorded.created
        assert step["mailbox_after"] == step["mailbox_before"]
        return text
    assert recorded.created and recorded.text == step["mailbox_after"]
    events_line = appended[_rel(paths.events)][0]
    written = json.loads(events_line)
    event = mb.received_event(team=TEAM, worker=WORKER, message_id=message_id, event_id=written["event_id"],
                              now=written["created_at"])
    _check_lines(step, cwd, env, paths, event, partial(mb.created_log_line, team=TEAM, message_id=message_id,
                                                       from_worker=LEADER, to_worker=WORKER))
    return recorded.text


def _replay_mark(step: dict[str, Any], text: str | None, cwd: str, env: dict[str, str], paths: TeamPaths,
                 message_id: str) -> str | None:
    delivered = step["step"].startswith("mark_delivered")
    key = "delivered_at" if delivered else "notified_at"
    changed = step["mailbox_after"] != step["mailbox_before"]
    now = _by_id(step["mailbox_after"], message_id)[key] if changed else "2026-03-04T23:59:59.999Z"
    mark = mb.mark_delivered if delivered else mb.mark_notified
    result = mark(text, paths.mailbox_file(WORKER), message_id, now, worker=WORKER).unwrap()
    if not changed:
        assert result is None and step["appended"] == {}
        return text
    assert result == step["mailbox_after"]
    log = partial(mb.delivered_log_line, team=TEAM, worker=WORKER, message_id=message_id) if delivered else None
    _check_lines(step, cwd, env, paths, None, log)
    return result


@pytest.mark.parametrize("scenario", [s for s in GOLDEN["scenarios"] if s["scenario"] not in OVERWRITTEN],
                         ids=lambda s: s["scenario"])
def test_replays_oh_my_codex_byte_for_byte(scenario: dict[str, Any]) -> None:
    env = _env(scenario)
    cwd = posixpath.join(BASE, scenario["cwd"])
    paths = TeamPaths(resolve_state_root(cwd, env), TEAM)
    text = scenario["steps"][0]["mailbox_before"]
    first_id = None
    for step in scenario["steps"]:
        assert text == step["mailbox_before"]
        if step["step"].startswith("send"):
            text = _replay_send(step, text, cwd, env, paths, scenario["team_created_at"])
            first_id = first_id or step["returned"]["message_id"]
        else:
            target = "no-such-id" if step["step"].endswith("unknown_id") else first_id
            assert target is not None
            text = _replay_mark(step, text, cwd, env, paths, target)
        assert text == step["mailbox_after"]


def test_the_golden_covers_what_the_module_claims() -> None:
    steps = {s["step"] for sc in GOLDEN["scenarios"] for s in sc["steps"]}
    assert {"send_first", "send_second", "send_duplicate_undelivered", "send_duplicate_of_delivered",
            "mark_notified", "mark_notified_again", "mark_delivered", "mark_delivered_again",
            "send_same_body_as_stale", "send_with_omx_root", "send_unicode"} <= steps
    assert GOLDEN["omx_version"] == "0.20.3"


@pytest.mark.parametrize("scenario", [s for s in GOLDEN["scenarios"] if s["scenario"] in OVERWRITTEN],
                         ids=lambda s: s["scenario"])
def test_refuses_what_omx_overwrites(scenario: dict[str, Any]) -> None:
    step = scenario["steps"][0]
    assert step["mailbox_after"] != step["mailbox_before"]  # 0.20.3 replaced the file, losing its content
    message = mb.new_message(message_id="m", from_worker=LEADER, to_worker=WORKER, body="hi", now="2026-01-01T00:00:00.000Z")
    refused = mb.with_message(step["mailbox_before"], FILE, WORKER, message)
    assert isinstance(refused, Failure)
    assert refused.failure().file == FILE and FILE in str(refused.failure())


# ------------------------------------------------------------------------------- panefleet's own rules

MESSAGE = mb.new_message(message_id="id-1", from_worker=LEADER, to_worker=WORKER, body="hello",
                         now="2026-01-02T03:04:05.678Z")


def test_a_missing_mailbox_starts_fresh() -> None:
    recorded = mb.with_message(None, FILE, WORKER, MESSAGE).unwrap()
    assert recorded.created and recorded.message is MESSAGE
    assert recorded.text == ('{\n  "worker": "worker-1",\n  "messages": [\n    {\n      "message_id": "id-1",\n'
                             '      "from_worker": "leader-fixed",\n      "to_worker": "worker-1",\n'
                             '      "body": "hello",\n      "created_at": "2026-01-02T03:04:05.678Z"\n    }\n  ]\n}')
    assert list(to_json(MESSAGE)) == ["message_id", "from_worker", "to_worker", "body", "created_at"]


@pytest.mark.parametrize(("text", "field"), [
    ('{"worker": "worker-1", "messages": [', ""),
    ("", ""),
    ("[]", ""),
    ("null", ""),
    ('{"messages": []}', "worker"),
    ('{"worker": "worker-2", "messages": []}', "worker"),
    ('{"worker": "worker-1"}', "messages"),
    ('{"worker": "worker-1", "messages": {}}', "messages"),
    ('{"worker": "worker-1", "messages": [null]}', "messages[0]"),
    ('{"worker": "worker-1", "messages": [{"body": 5}]}', "messages[0].body"),
    ('{"worker": "worker-1", "messages": [{}, {"delivered_at": true}]}', "messages[1].delivered_at"),
    ('{"worker": "worker-1", "messages": [NaN]}', "messages[0]"),
])
def test_a_malformed_mailbox_is_refused_naming_the_file(text: str, field: str) -> None:
    for result in (mb.with_message(text, FILE, WORKER, MESSAGE),
                   mb.mark_notified(text, FILE, "id-1", "2026-01-01T00:00:00.000Z", worker=WORKER),
                   mb.mark_delivered(text, FILE, "id-1", "2026-01-01T00:00:00.000Z", worker=WORKER)):
        assert isinstance(result, Failure)
        error = result.failure()
        assert isinstance(error, StateError) and error.file == FILE and str(error).startswith(FILE)
        assert error.field == field


def test_other_top_level_keys_survive_after_worker_and_messages() -> None:
    text = '{\n  "note": "kept",\n  "messages": [],\n  "worker": "worker-1"\n}'
    recorded = mb.with_message(text, FILE, WORKER, MESSAGE).unwrap()
    assert recorded.text is not None
    assert list(json.loads(recorded.text)) == ["worker", "messages", "note"]
    marked = mb.mark_notified(recorded.text, FILE, "id-1", "2026-01-01T00:00:00.000Z").unwrap()
    assert marked is not None and json.loads(marked)["note"] == "kept"


def test_dedupe_needs_the_same_sender_recipient_and_body_undelivered() -> None:
    text = mb.with_message(None, FILE, WORKER, MESSAGE).unwrap().text

    def again(**change: str) -> mb.Recorded:
        return mb.with_message(text, FILE, WORKER, evolve(MESSAGE, message_id="id-2", **change)).unwrap()

    assert again().text is None and again().message.message_id == "id-1"
    assert again(body="other").created
    assert again(from_worker="worker-2").created
    delivered = mb.mark_delivered(text, FILE, "id-1", "2026-01-02T03:04:06.000Z").unwrap()
    assert mb.with_message(delivered, FILE, WORKER, evolve(MESSAGE, message_id="id-2")).unwrap().created


@pytest.mark.parametrize(("team_created_at", "deduped"), [
    (None, True),
    ("not a date", True),  # 0.20.3: Date.parse is NaN, every message counts
    ("2026-01-02T03:04:05.678Z", True),  # created at the same millisecond counts
    ("2026-01-02T03:04:05.679Z", False),
])
def test_dedupe_only_counts_messages_since_the_team_was_created(team_created_at: str | None, deduped: bool) -> None:
    text = mb.with_message(None, FILE, WORKER, MESSAGE).unwrap().text
    recorded = mb.with_message(text, FILE, WORKER, evolve(MESSAGE, message_id="id-2"),
                               team_created_at=team_created_at).unwrap()
    assert recorded.created is not deduped


def test_marks_on_a_missing_file_or_message_write_nothing() -> None:
    text = mb.with_message(None, FILE, WORKER, MESSAGE).unwrap().text
    assert mb.mark_notified(None, FILE, "id-1", "2026-01-01T00:00:00.000Z") == Success(None)
    assert mb.mark_delivered(None, FILE, "id-1", "2026-01-01T00:00:00.000Z") == Success(None)
    assert mb.mark_notified(text, FILE, "nope", "2026-01-01T00:00:00.000Z") == Success(None)
    assert mb.mark_delivered(text, FILE, "nope", "2026-01-01T00:00:00.000Z") == Success(None)


# V8's Date.parse on these (node 20), NaN as None
V8_DATES = [
    ("2026-03-04T05:06:07.000Z", 1772600767000), ("2026-03-04T05:06:07Z", 1772600767000),
    ("2026-03-04T05:06:07.1234Z", 1772600767123), ("2024-02-30T00:00:00.000Z", 1709251200000),
    ("2024-01-01T24:00:00Z", 1704153600000), ("2024-01-01T24:00:00.001Z", None),
    ("2024-01-01T10:00Z", 1704103200000), ("2024", 1704067200000), ("2024-06", 1717200000000),
    ("+002024-01-01T00:00:00Z", 1704067200000), ("-000001-12-31T23:59:59.999Z", -62167219200001),
    ("1969-12-31T23:59:59.999Z", -1), ("2024-01-01T10:00:00+01:00", 1704099600000),
    ("2024-01-01T10:00:00-0530", 1704123000000), ("2024-01-01 10:00:00z", 1704103200000),
    ("2024-01-01T10:00:00.Z", None), ("2024-13-01", None), ("2024-00-10", None), ("2024-01-32", None),
    ("2024-01-00", None), ("2024-01-01T10:60:00Z", None), ("2024-01-01T10:00:60Z", None),
    ("2024-01-01T25:00:00Z", None), ("-000000-01-01T00:00:00Z", None), ("not a date", None), ("", None),
]


@pytest.mark.parametrize(("text", "expected"), V8_DATES)
def test_epoch_ms_reads_iso_dates_as_v8(text: str, expected: int | None) -> None:
    assert mb.epoch_ms(text) == expected


@pytest.mark.parametrize(("env", "local", "expected"), [
    ({}, True, ["/w/.omx/logs/team-delivery-2026-03-04.jsonl"]),
    ({"OMX_ROOT": "/box"}, False, ["/box/.omx/logs/team-delivery-2026-03-04.jsonl"]),
    ({"OMX_ROOT": "/box"}, True, ["/box/.omx/logs/team-delivery-2026-03-04.jsonl",
                                  "/w/.omx/logs/team-delivery-2026-03-04.jsonl"]),
    ({"OMX_ROOT": "  ", "OMX_STATE_ROOT": "../s"}, False, ["/s/.omx/logs/team-delivery-2026-03-04.jsonl"]),
    ({"OMX_ROOT": "."}, True, ["/w/.omx/logs/team-delivery-2026-03-04.jsonl"]),
])
def test_delivery_log_paths(env: dict[str, str], local: bool, expected: list[str]) -> None:
    assert list(mb.delivery_log_paths("/w", env, "2026-03-04T23:59:59.999Z", local_team_state=local)) == expected


def test_lines_are_compact_json_with_a_newline() -> None:
    line = mb.dispatch_result_line(team=TEAM, worker=WORKER, message_id="id-1", now="2026-01-01T00:00:00.000Z",
                                   result="confirmed", reason="delivered:typed \ud800")
    assert mb.render_line(line) == (
        '{"timestamp":"2026-01-01T00:00:00.000Z","kind":"team_delivery","event":"dispatch_result",'
        '"source":"panefleet.send","team":"alpha","message_id":"id-1","to_worker":"worker-1",'
        '"transport":"send-keys","result":"confirmed","reason":"delivered:typed \\ud800"}\n')


def test_mailbox_path_is_the_team_paths_one() -> None:
    paths = TeamPaths("/r/.omx/state", TEAM)
    assert mb.mailbox_path(paths, WORKER) == paths.mailbox_file(WORKER) == "/r/.omx/state/team/alpha/mailbox/worker-1.json"
