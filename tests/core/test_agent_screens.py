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
    return sorted(SCREENS.glob("*/*.json")) + sorted(SCREENS.glob("*/*-columns/*.json"))


def _narrow() -> list[Path]:
    return sorted(SCREENS.glob("*/54-columns/*.json"))


# What the start-up and delivery models rest on, recorded for every pinned CLI (tests/agents/sandbox.py
# PINNED): its prompts, a ready screen, the same with typed text and after an answer, busy, and a
# start-up that ended with the CLI's own error.
RECORDED = {
    "codex": {"trust_prompt": "trust_prompt", "trust_prompt_option2": "trust_prompt", "ready": "ready",
              "typed": "ready", "answered": "idle", "busy": "busy", "broken_config": "exited"},
    "claude": {"trust_prompt": "trust_prompt", "trust_prompt_yes_highlighted": "trust_prompt",
               "bypass_prompt": "bypass_prompt", "api_key_prompt": "api_key_prompt", "ready": "ready",
               "typed": "ready", "answered": "idle", "busy": "busy", "no_onboarding": "exited"},
    # Gemini: its input line drawn before the trust dialog (text typed there is lost) and again before its
    # interface is up after the restart that trusting causes; ready with --approval-mode yolo and without
    "gemini": {"input_line_before_trust": "starting", "trust_prompt": "trust_prompt",
               "trust_prompt_option2": "trust_prompt", "trust_restarting": "starting",
               "initializing_after_restart": "starting", "ready": "ready", "ready_default_mode": "ready",
               "typed": "ready", "busy": "busy", "answered": "idle", "answered_default_mode": "idle",
               "broken_settings": "exited", "no_auth_type": "login_required", "no_api_key": "login_required"},
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


def test_every_recorded_screen_is_recorded_narrow_too() -> None:
    """tests/agents/record_screens.py records every screen 200 and 54 columns wide."""
    wide = {(p.parent.name, p.stem) for p in sorted(SCREENS.glob("*/*.json"))}
    narrow = {(p.parent.parent.name, p.stem) for p in _narrow()}
    assert wide == narrow


@pytest.mark.parametrize("path", _narrow(), ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_a_screen_classifies_the_same_at_54_and_200_columns(path: Path) -> None:
    narrow: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    wide: dict[str, Any] = json.loads((path.parent.parent / path.name).read_text(encoding="utf-8"))
    assert (narrow["columns"], wide["columns"]) == (54, 200)
    # rows as the pane shows them: a line longer than the pane is wrapped over rows, never joined
    assert max(len(line) for line in narrow["capture"].splitlines()) <= 54
    seen = [sc.classify(g["cli"], g["capture"], dead=bool(g.get("pane_dead", False))) for g in (narrow, wide)]
    assert seen[0].state == seen[1].state == wide["expected_state"] == narrow["expected_state"], seen
    assert (seen[0].choice and seen[0].choice.accept) == (seen[1].choice and seen[1].choice.accept)
    assert sc.squash(seen[0].input_text) == sc.squash(seen[1].input_text)


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


def _narrow_codex_ready() -> str:
    return str(json.loads((SCREENS / "codex" / "54-columns" / "ready.json").read_text(encoding="utf-8"))["capture"])


BACKFILL = ("state db backfill is running at /root/.codex-home; waiting up to 30s before retrying startup "
            "initialization")


def _wrapped(text: str, width: int) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


@pytest.mark.parametrize("width", [54, 80, 200])
def test_codex_waiting_for_its_state_db_is_starting_with_that_reason_at_any_width(width: int) -> None:
    """Six Codex processes on one fresh CODEX_HOME: one may wait for another's state db backfill
    (docs/scale-up.md, "Watched start-up"); its screen, rows as tmux shows them at ``width`` columns,
    is still starting — not ready, even with the model status line under it."""
    screen = _narrow_codex_ready().replace("› Ask Codex to do anything", _wrapped("› " + BACKFILL, width))
    seen = sc.classify("codex", screen)
    assert seen.state == "starting", seen
    assert sc.squash(BACKFILL) in sc.squash("".join(seen.evidence)), seen.evidence
    # once Codex has initialised, the same screen without the wait is ready again
    assert sc.classify("codex", _narrow_codex_ready()).state == "ready"


def test_wrapped_rows_of_a_narrow_pane_are_read_as_they_are_shown() -> None:
    """Rows are never joined (pure/tmux/owned.py ``capture_step``): the model status line stays a
    row of its own under a wrapped input line, so a narrow ready screen is ready."""
    typed = "Read .omx/state/team/alpha/workers/worker-1/inbox.md, start work now, report concrete progress"
    screen = _narrow_codex_ready().replace("› Ask Codex to do anything", _wrapped("› " + typed, 54))
    seen = sc.classify("codex", screen)
    assert seen.state == "ready" and sc.squash(seen.input_text) == sc.squash(typed)
    assert sc.shows_typed("codex", screen, "worker-1/inbox.md") and not sc.shows_submitted("codex", screen,
                                                                                          "worker-1/inbox.md")
