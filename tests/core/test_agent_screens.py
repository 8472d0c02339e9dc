"""The agent-screen model over recorded screens of the pinned CLIs (``tests/goldens/screens/``,
recorded by ``tests/agents/record_screens.py``) and the older wordings oh-my-codex recognises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pure.agents import screen as sc

SCREENS = Path(__file__).resolve().parents[1] / "goldens" / "screens"


def _goldens() -> list[Path]:
    return sorted(SCREENS.glob("*/*.json"))


# What the start-up and delivery models rest on, recorded for every pinned CLI (tests/agents/sandbox.py
# PINNED): its prompts, a ready screen, the same with typed text and after an answer, busy, and a
# start-up that ended with the CLI's own error.
RECORDED = {
    "codex": {"trust_prompt": "trust_prompt", "trust_prompt_option2": "trust_prompt", "ready": "ready",
              "typed": "ready", "answered": "idle", "busy": "busy", "broken_config": "exited"},
    "claude": {"trust_prompt": "trust_prompt", "trust_prompt_yes_highlighted": "trust_prompt",
               "bypass_prompt": "bypass_prompt", "api_key_prompt": "api_key_prompt", "ready": "ready",
               "typed": "ready", "answered": "idle", "busy": "busy", "no_onboarding": "exited"},
}


def test_there_are_recorded_screens_of_each_pinned_cli() -> None:
    from tests.agents.sandbox import PINNED

    assert set(RECORDED) == set(PINNED)
    for cli, screens in RECORDED.items():
        for name, state in screens.items():
            path = SCREENS / cli / f"{name}.json"
            assert path.is_file(), f"{cli} has no recorded {name} screen ({path})"
            golden = json.loads(path.read_text(encoding="utf-8"))
            assert (golden["cli"], golden["expected_state"]) == (cli, state), path


@pytest.mark.parametrize("path", _goldens(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_recorded_screen_is_classified(path: Path) -> None:
    golden: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert golden["format_version"] == "1.0" and golden["expected_state"] in sc.SCREEN_STATES
    # pane_dead: tmux's #{pane_dead} at capture time (a CLI dying in its alternate screen leaves no
    # "Pane is dead" line), as the shell passes it to classify for a watched pane
    found = sc.classify(golden["cli"], golden["capture"], dead=bool(golden.get("pane_dead", False)))
    assert found.state == golden["expected_state"], (golden["description"], found)
    if found.state in ("trust_prompt", "bypass_prompt"):
        assert found.choice is not None and found.choice.accept is not None and found.choice.selected is not None


OLD_CODEX_TRUST = """
  Do you trust the contents of this directory? Working with untrusted contents comes with higher risk.
› 1. Yes, continue
  2. No, quit
  Press enter to continue
"""

CLAUDE_TRUST = """
 Accessing workspace:
 /path/to/repo
 Quick safety check: Is this a project you created or one you trust?
 ❯ 1. No, exit
   2. Yes, I trust this folder
 Enter to confirm · Esc to cancel
"""

CLAUDE_BYPASS = """
  WARNING: Claude Code running in Bypass Permissions mode
  In Bypass Permissions mode, Claude Code will not ask for your approval before running potentially dangerous commands.
  ❯ 1. No, exit
    2. Yes, I accept
  Enter to confirm · Esc to cancel
"""


@pytest.mark.parametrize(("cli", "text", "state", "selected", "accept"), [
    ("codex", OLD_CODEX_TRUST, "trust_prompt", 0, 0),
    ("claude", CLAUDE_TRUST, "trust_prompt", 0, 1),
    ("claude", CLAUDE_BYPASS, "bypass_prompt", 0, 1),
])
def test_prompts_name_the_highlighted_and_the_accepting_option(cli: str, text: str, state: str, selected: int,
                                                               accept: int) -> None:
    found = sc.classify(cli, text)
    assert found.state == state
    assert found.choice is not None
    assert (found.choice.selected, found.choice.accept) == (selected, accept)


def test_a_dead_pane_is_exited_with_the_cli_s_last_lines() -> None:
    found = sc.classify("codex", "Error: loading config.toml:\nbad toml\n\nPane is dead (status 1, now)\n")
    assert found.state == "exited" and "Error: loading config.toml:" in found.evidence


def test_an_empty_screen_is_starting_and_noise_is_unknown() -> None:
    assert sc.classify("codex", "\n\n").state == "starting"
    assert sc.classify("codex", "a\nb\nc\nd\n").state == "unknown"


def test_submitted_and_typed_text_is_found_whatever_the_wrapping() -> None:
    typed = "› Read .omx/state/team/a/workers/worker-1/in\n  box.md now\n\n  mock-model default · /repo\n"
    assert sc.shows_typed("codex", typed, "workers/worker-1/inbox.md")
    assert not sc.shows_submitted("codex", typed, "workers/worker-1/inbox.md")
    sent = ("› Read .omx/state/team/a/workers/worker-1/inbox.md now\n• ok\n› Ask Codex to do anything\n"
            "  mock-model default · /repo\n")
    assert sc.shows_submitted("codex", sent, "workers/worker-1/inbox.md")
    assert not sc.shows_typed("codex", sent, "workers/worker-1/inbox.md")
