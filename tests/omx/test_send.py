"""``team.send`` (pure/omx/send.py) over the simulated tmux server with recorded Codex screens: an agent
at a prompt is ``blocked`` and nothing is typed into it, a message that never shows is
``not_submitted``, the mailbox records only what was typed, and every keystroke is behind its proof."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pure.omx.send import SendRequest, message_problem, send, token_of
from tests.adversary import team as tm
from tests.adversary.sim import SimExecutor, TmuxServer, World, drive

SCREENS = Path(__file__).resolve().parents[1] / "goldens" / "screens" / "codex"


def _screen(name: str) -> str:
    return str(json.loads((SCREENS / f"{name}.json").read_text())["capture"])


def _send(tmp_path: Path, world: World, **kwargs: object) -> dict[str, object]:
    executor = SimExecutor(world, tmp_path, tm.TEAM, state_root=tmp_path / ".omx" / "state", env=tm.ENV)
    request = SendRequest(team=tm.TEAM, cwd=str(tmp_path), env=tm.ENV, **kwargs)  # type: ignore[arg-type]
    done = drive(lambda: send(request), executor)
    assert done is not None
    result = done.outcome.result
    assert isinstance(result, dict)
    return {"status": done.outcome.status, **result}


def test_a_prompt_blocks_and_an_unseen_message_is_not_submitted(tmp_path: Path) -> None:
    world = World(server=TmuxServer())
    root = tm.build(tmp_path, world.server)
    first, second = json.loads((root / "config.json").read_text())["workers"]
    world.server.panes[first["pane_id"]].screen = _screen("trust_prompt")
    world.server.panes[second["pane_id"]].screen = _screen("ready")  # it never shows what is typed
    answer = _send(tmp_path, world, message="look at PR 12", all_workers=True)
    assert answer["status"] == "debt" and answer["ok"] is False
    results = {w["worker"]: w for w in answer["workers"]}  # type: ignore[attr-defined]
    assert results["worker-1"]["result"] == "blocked" and results["worker-1"]["agentState"] == "trust_prompt"
    assert results["worker-2"]["result"] == "not_submitted"
    assert results["worker-2"]["reason"] == "not_delivered:typed_text_never_showed_in_the_input_line"
    assert world.server.panes[first["pane_id"]].keys == []  # nothing typed into the blocked agent
    assert world.server.panes[second["pane_id"]].keys == ["-l -- look at PR 12"]  # literally, once
    assert not (root / "mailbox" / "worker-1.json").exists()
    mailbox = json.loads((root / "mailbox" / "worker-2.json").read_text())
    assert [m["body"] for m in mailbox["messages"]] == ["look at PR 12"]
    assert "notified_at" not in mailbox["messages"][0]  # never confirmed on screen
    events = [json.loads(line) for line in (root / "events" / "events.ndjson").read_text().splitlines()]
    assert events[-1]["type"] == "message_received" and events[-1]["worker"] == "worker-2"
    assert world.violations == []


@pytest.mark.parametrize("name", ["approval_prompt", "model_prompt"])
def test_an_agent_asking_its_user_is_blocked_a_key_would_answer_it(tmp_path: Path, name: str) -> None:
    """Codex asking to run a command mid-task (needs_input), or offering a newer model: a typed "1" or an
    Enter would answer for the user, so nothing is typed (pure/omx/send.py ``BLOCKING``)."""
    world = World(server=TmuxServer())
    root = tm.build(tmp_path, world.server)
    first = json.loads((root / "config.json").read_text())["workers"][0]
    world.server.panes[first["pane_id"]].screen = _screen(name)
    answer = _send(tmp_path, world, message="1", workers=("worker-1",))
    result = answer["workers"][0]  # type: ignore[index]
    state = "needs_input" if name == "approval_prompt" else "model_prompt"
    assert (result["result"], result["agentState"]) == ("blocked", state)
    assert world.server.panes[first["pane_id"]].keys == [] and world.violations == []


def test_a_malformed_mailbox_is_kept_and_nothing_is_typed(tmp_path: Path) -> None:
    world = World(server=TmuxServer())
    root = tm.build(tmp_path, world.server)
    (root / "mailbox" / "worker-1.json").write_text("{not json")
    first = json.loads((root / "config.json").read_text())["workers"][0]
    world.server.panes[first["pane_id"]].screen = _screen("ready")
    answer = _send(tmp_path, world, message="hello", workers=("worker-1",))
    assert answer["status"] == "refused" and str(answer["error"]).startswith("send_mailbox_malformed:")
    assert (root / "mailbox" / "worker-1.json").read_text() == "{not json"
    assert world.server.panes[first["pane_id"]].keys == []


@pytest.mark.parametrize("text, problem", [
    ("", "send_message_empty"), (" \n\t", "send_message_empty"),
    ("a" * 65_536, None), ("a" * 65_537, "send_message_too_long:65537:65536"),
    ("é" * 32_769, "send_message_too_long:65538:65536"),
    ("two\nlines\tand a tab", None), ("bell\x07", "send_message_control_character:U+0007:4"),
    ("\x1b[2J", "send_message_control_character:U+001B:0"), ("del\x7f", "send_message_control_character:U+007F:3"),
    ("c1\x9b", "send_message_control_character:U+009B:2"),
])
def test_message_rules(text: str, problem: str | None) -> None:
    assert message_problem(text) == problem


def test_the_token_is_the_last_line_with_text() -> None:
    assert token_of("first\n  second line  \n\n") == "second line"
    assert token_of("x" * 100) == "x" * 60
