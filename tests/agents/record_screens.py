"""Record the screens of the real agent CLIs as golden captures, and measure how to drive them.

``.venv/bin/python -m tests.agents.record_screens [--cli codex|claude|gemini] [--columns N] [--flow start|approval]
[--version V] [--dry]`` starts each pinned CLI (``./dev test`` installs them) in a tmux pane inside the sandbox
(``tests/agents/sandbox.py``: no network but the mock model on 127.0.0.1), walks it through its
start-up prompts to a ready screen, types, submits and gets answered (``--flow start``), or has the mock
model ask for a command that the CLI puts to the user for approval, approved with Enter (``--flow
approval``, ``record_approval``), and saves the exact
``capture-pane -p`` text (rows as shown, never joined) of every screen it passed through as
``tests/goldens/screens/<cli>/<name>.json`` (panes 200 columns wide) and
``tests/goldens/screens/<cli>/54-columns/<name>.json`` (54, the width of a pane in a team of six)::

    {"format_version": "1.0", "kind": "screen", "cli": "codex", "columns": 200, "description": "...",
     "capture": "<exact text>", "expected_state": "trust_prompt", "pane_dead": false}

``pane_dead`` is tmux's ``#{pane_dead}`` when the capture was taken (panes are kept with
``remain-on-exit``). A dead pane's golden also has ``capture_with_history``
(``capture-pane -p -S -100``): the error line a CLI prints as it dies often scrolls off the visible
screen, leaving only tmux's "Pane is dead" line in ``capture``.

``expected_state`` is what the screen *is* (one of ``pure/agents/screen.py``'s states), decided here
from how the screen was reached, never by the classifier under test. The measured facts (which key
accepts each prompt, how a typed line is submitted, start-up times) are printed and written to
``tests/goldens/screens/README.md``. ``--dry`` prints them without writing anything. Every screen the
screen model misreads is printed (``MISREAD``, exit 1): ``--cli C --version V --dry`` checks a new
release of a CLI in one command.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pure.tmux import SUBMIT_KEY
from tests.agents.sandbox import (
    GEMINI_SETTINGS,
    ROOT,
    Sandbox,
    agent_cache,
    log,
    missing_prerequisites,
    run_scenario,
    scenario,
)

SCREENS = ROOT / "tests" / "goldens" / "screens"
STATES = ("starting", "trust_prompt", "bypass_prompt", "api_key_prompt", "model_prompt", "login_required",
          "needs_input", "ready", "idle", "busy", "exited", "unknown")
ANSWER = "Mock model answer: the assignment is understood."
LONG_LINE = ("Read .omx/state/team/alpha/workers/worker-1/inbox.md, start work now, report concrete progress, "
             "then continue assigned work or next feasible task. This line is long on purpose so that it wraps "
             "in the input box of a 200-column pane: ") + "x" * 60
WIDE, NARROW = 200, 54  # the widths every screen is recorded at (54: a pane of a 6-worker team)
SUBMIT_WAIT_S = 4.0  # how long a submitted line may take to reach the mock before it counts as not submitted


class Recorder:
    """The captures and facts of one CLI, gathered inside the sandbox."""

    def __init__(self, box: Sandbox, cli: str) -> None:
        self.box = box
        self.cli = cli
        self.captures: dict[str, dict[str, Any]] = {}
        self.facts: dict[str, Any] = {}
        self.probe = 0

    def save(self, name: str, pane: str, screen: str, description: str, state: str) -> None:
        """Keep ``screen`` (a capture of ``pane``) as golden ``name``, with tmux's ``#{pane_dead}``."""
        assert state in STATES, state
        dead = _dead(self.box, pane)
        self.captures[name] = {"description": description, "capture": screen, "expected_state": state,
                               "pane_dead": dead}
        if dead:  # what scrolled off the screen: a dying CLI's error line often did
            history = self.box.tmux("capture-pane", "-p", "-S", "-100", "-t", pane, check=False).stdout
            self.captures[name]["capture_with_history"] = history
        log(f"{self.cli}/{name} ({state}) recorded")

    def wait(self, pane: str, predicate: Callable[[str], bool], timeout_s: float, what: str) -> tuple[str, float]:
        screen, took = self.box.wait_screen(pane, predicate, timeout_s)
        if took is None:
            marked = [repr(line) for line in screen.splitlines() if line[:1] in "›❯"]
            raise AssertionError(f"{self.cli}: no {what} screen within {timeout_s} s; last screen:\n{screen}\n"
                                 f"input lines: {marked}")
        return screen, took

    def stays(self, pane: str, predicate: Callable[[str], bool], seconds: float) -> bool:
        """Whether ``predicate`` holds on every screen for ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not predicate(self.box.capture(pane)):
                return False
            time.sleep(0.1)
        return True

    def keys(self, pane: str, *keys: str, literal: bool = False) -> None:
        self.box.tmux("send-keys", "-t", pane, *(["-l"] if literal else []), *keys)

    def next_probe(self) -> str:
        self.probe += 1
        return f"probe-{self.cli}-{self.probe}"

    def submitted(self, marker: str, timeout_s: float = SUBMIT_WAIT_S) -> bool:
        return bool(self.box.mock.wait_for(marker, timeout_s, prompt_only=True))

    def submit_trial(self, pane: str, method: str, pause_s: float, ready: Callable[[str], bool],
                     key: str = SUBMIT_KEY) -> dict[str, Any]:
        """Type one line by ``method`` and press ``key`` ``pause_s`` after it; count the presses it took.

        ``keys``: ``send-keys -l TEXT`` (then Enter from a second tmux call); ``one_command``: text and
        Enter in one tmux call; ``keys_visible``: Enter once the typed line shows on screen;
        ``paste``: ``load-buffer`` + ``paste-buffer -p`` (a bracketed paste)."""
        marker = self.next_probe()
        text = f"{marker} please read your inbox file and start on the task now, then report back to the leader"
        started = time.time()
        if method == "paste":
            buffer = self.box.work / f"{marker}.txt"
            buffer.write_text(text, encoding="utf-8")
            self.box.tmux("load-buffer", "-b", marker, str(buffer))
            self.box.tmux("paste-buffer", "-p", "-d", "-b", marker, "-t", pane)
        elif method == "one_command":  # the text and Enter in one tmux invocation: no gap at all
            self.box.tmux("send-keys", "-t", pane, "-l", text, ";", "send-keys", "-t", pane, key)
        else:
            self.keys(pane, text, literal=True)
        visible_after = None
        if method == "keys_visible":
            _, visible_after = self.box.wait_screen(pane, lambda s: marker in s, 5, poll_s=0.02)
        if pause_s:
            time.sleep(pause_s)
        trial: dict[str, Any] = {"method": method, "pause_s": pause_s, "visible_after_s": visible_after}
        if key != SUBMIT_KEY:
            trial["key"] = key
        if method != "one_command":
            self.keys(pane, key)
        enters = 1
        while not self.submitted(marker):
            if enters == 1:
                trial["screen_after_unsubmitted_enter"] = _tail(self.box.capture(pane), 8)
            if enters == 3:
                break
            self.keys(pane, key)
            enters += 1
        found = self.box.mock.requests_containing(marker, prompt_only=True)
        trial["enters_needed"] = enters if found else None
        if found:
            trial["submitted_text_has_newline"] = "\n" in found[0].prompt_text().strip()
            trial["seconds_to_request"] = round(found[0].at - started, 2)
        self.wait(pane, ready, 30, "ready-after-answer")
        return trial


def _changes_while_idle(box: Sandbox, pane: str, seconds: float = 3.0) -> dict[str, Any]:
    """Whether a screen that waits for input still changes by itself, and which lines do."""
    first = box.capture(pane)
    screens = {first}
    changed: set[int] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        screen = box.capture(pane)
        if screen not in screens:
            screens.add(screen)
            old, new = first.splitlines(), screen.splitlines()
            changed.update(i for i in range(max(len(old), len(new)))
                           if (old[i] if i < len(old) else None) != (new[i] if i < len(new) else None))
        time.sleep(0.05)
    lines = first.splitlines()
    return {"distinct_screens": len(screens),
            "changing_lines": [lines[i] if i < len(lines) else "" for i in sorted(changed)][:6]}


def _highlight_timeline(box: Sandbox, pane: str, seconds: float, t0: float) -> list[tuple[float, str]]:
    """(seconds since t0, the highlighted ❯ option) each time it changes."""
    out: list[tuple[float, str]] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        marked = [line.strip() for line in box.capture(pane).splitlines() if line.strip().startswith("❯")]
        current = marked[-1] if marked else ""
        if not out or out[-1][1] != current:
            out.append((round(time.monotonic() - t0, 2), current))
        time.sleep(0.02)
    return out


def _tail(screen: str, count: int) -> list[str]:
    lines = [line.rstrip() for line in screen.splitlines() if line.strip()]
    return lines[-count:]


def _launch(box: Sandbox, command: str, *, cwd: Path | None = None, env: dict[str, str] | None = None
            ) -> tuple[str, float]:
    return box.new_pane(command, cwd=cwd, env=env), time.monotonic()


def _keep_dead_panes(box: Sandbox) -> None:
    """A pane whose CLI exits stays, dead, with its last screen (as panefleet keeps a starting
    worker's pane). Set once for the whole server: a pane that dies between its creation and a
    per-pane ``set-option`` would be gone, or keep no "Pane is dead" line."""
    box.tmux("set-option", "-g", "remain-on-exit", "on")


def _fresh_repo(box: Sandbox, name: str) -> Path:
    repo = box.work / name
    repo.mkdir()
    box.run(["git", "init", "-q"], cwd=repo)
    (repo / "README.md").write_text("scratch\n", encoding="utf-8")
    box.run(["git", "add", "README.md"], cwd=repo)
    box.run(["git", "commit", "-q", "-m", "initial commit"], cwd=repo)
    return repo


def _dead(box: Sandbox, pane: str) -> bool:
    out = box.tmux("display-message", "-p", "-t", pane, "#{pane_dead}", check=False).stdout.strip()
    return out == "1"


TRIALS = (("keys", 0.0), ("keys", 0.0), ("keys", 0.0), ("keys", 0.01), ("keys", 0.02), ("keys", 0.03),
          ("keys", 0.05), ("keys", 0.05), ("keys", 0.1), ("keys", 0.3), ("keys", 1.0), ("one_command", 0.0),
          ("one_command", 0.0), ("keys_visible", 0.0), ("keys_visible", 0.0), ("keys_visible", 0.0),
          ("paste", 0.0), ("paste", 0.0))


def _submit_trials(rec: Recorder, pane: str, ready: Callable[[str], bool]) -> list[dict[str, Any]]:
    trials = []
    for method, pause_s in TRIALS:
        trials.append(rec.submit_trial(pane, method, pause_s, ready))
        log(f"{rec.cli} submit {method} pause {pause_s}: {trials[-1]['enters_needed']} Enter(s)")
    return trials


def _submit_key_trials(rec: Recorder, pane: str, ready: Callable[[str], bool]) -> dict[str, Any]:
    """Which keys submit a typed line (the text shown first, then the key): panefleet's ``Enter``
    (pure/tmux/owned.py ``SUBMIT_KEY``) and oh-my-codex 0.20.3's ``C-m``; presses needed, None if 3 did not."""
    return {key: [rec.submit_trial(pane, "keys_visible", 0.1, ready, key)["enters_needed"] for _ in range(2)]
            for key in (SUBMIT_KEY, "C-m")}


# ------------------------------------------------------------------------------------------ codex


def _record_conversation(rec: Recorder, box: Sandbox, pane: str, facts: dict[str, Any], cli: str,
                         idle: Callable[[str], bool]) -> None:
    """From a ready agent: the screens of a long line typed (then submitted), of a busy agent (the mock
    holds its answer back) and of the answer shown; the submit trials go into ``facts``."""
    name = {"codex": "Codex", "claude": "Claude", "gemini": "Gemini"}[cli]
    rec.keys(pane, LONG_LINE, literal=True)
    screen, _ = rec.wait(pane, lambda s: LONG_LINE[-30:] in s.replace("\n", ""), 10, "typed")
    rec.save("typed", pane, screen, "a long line typed with send-keys -l, not submitted (it wraps in the input box)",
             "ready")
    rec.keys(pane, SUBMIT_KEY)
    if not rec.submitted("wraps in the input box", 2):
        rec.keys(pane, SUBMIT_KEY)
    rec.wait(pane, idle, 30, "ready after the long line")

    facts["submit_trials"] = _submit_trials(rec, pane, idle)
    facts["submit_key_trials"] = _submit_key_trials(rec, pane, idle)

    box.mock.configure(delay_s=8.0)
    marker = rec.next_probe()
    rec.keys(pane, f"{marker} take your time with this one", literal=True)
    rec.wait(pane, lambda s: marker in s, 5, "typed busy probe")
    time.sleep(0.5)
    rec.keys(pane, SUBMIT_KEY)
    if not rec.submitted(marker, 2):
        rec.keys(pane, SUBMIT_KEY)
    if not rec.submitted(marker, 5):
        raise AssertionError(f"{cli}: the busy probe never reached the mock")
    _, busy_after = box.wait_screen(pane, lambda s: "esc to interrupt" in s or "esc to cancel" in s, 5)
    facts["busy_shows_esc_to_interrupt_after_s"] = busy_after
    time.sleep(1.0)
    rec.save("busy", pane, box.capture(pane), "a message submitted, the model still answering (the mock holds the "
             "answer back)", "busy")
    box.mock.configure(delay_s=0.0)
    screen, _ = rec.wait(pane, lambda s: ANSWER in s and idle(s), 30, "answered")
    rec.save("answered", pane, screen, f"the model's answer shown, {name} waiting for the next message", "idle")


def codex_trust(s: str) -> bool:
    return "Trust this folder?" in s


def codex_ready(s: str) -> bool:
    # the status line "mock-model default · <dir>" is what the splash before the trust prompt lacks
    return "mock-model" in s and "Trust this folder?" not in s and "esc to interrupt" not in s and bool(
        re.search(r"^› ", s, re.MULTILINE))


def codex_idle(s: str) -> bool:
    return codex_ready(s) and "Ask Codex to do anything" in s


@scenario("record_codex")
def record_codex(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    rec = None
    with Sandbox(work, answer=ANSWER, columns=int(params.get("columns", WIDE))) as box:
        _keep_dead_panes(box)
        rec = Recorder(box, "codex")
        facts = rec.facts
        pane, t0 = _launch(box, "codex")
        first, took = rec.wait(pane, lambda s: s.strip() != "", 30, "first")
        facts["first_screen_s"] = took
        splash, _ = rec.wait(pane, lambda s: "Ask Codex to do anything" in s or codex_trust(s), 30, "splash")
        if not codex_trust(splash):
            rec.save("splash_before_trust", pane, splash, "the splash Codex draws for a few seconds before it asks about "
                     "trust: an input line is shown but the folder is not trusted yet, no model status line",
                     "starting")
        screen, _ = rec.wait(pane, codex_trust, 60, "trust prompt")
        facts["trust_prompt_s"] = round(time.monotonic() - t0, 2)
        rec.save("trust_prompt", pane, screen, "first start in a never-trusted git repository: the folder trust prompt, "
                 "option 1 (trust) highlighted", "trust_prompt")
        rec.keys(pane, "1")
        facts["trust_digit_1_accepts"] = not rec.stays(pane, codex_trust, 2.0)
        if not facts["trust_digit_1_accepts"]:
            rec.keys(pane, "Down")
            screen, _ = rec.wait(pane, lambda s: "› 2." in s, 5, "trust prompt, option 2 highlighted")
            rec.save("trust_prompt_option2", pane, screen, "the trust prompt after Down: option 2 (back) highlighted",
                     "trust_prompt")
            facts["trust_after_down"] = _tail(screen, 4)
            rec.keys(pane, "Up")
            rec.wait(pane, lambda s: "› 1." in s, 5, "trust prompt, option 1 highlighted again")
            rec.keys(pane, "Enter")  # Enter on the highlighted option 1 trusts
        screen, took = rec.wait(pane, codex_idle, 60, "ready")
        facts["ready_after_trust_accepted_s"] = took
        facts["ready_from_launch_s_including_key_tests"] = round(time.monotonic() - t0, 2)
        facts["trust_written_to_config_toml"] = "trust_level" in (box.codex_home / "config.toml").read_text()
        rec.save("ready", pane, screen, "ready after the folder was trusted: empty input line with its placeholder and "
                 "the model status line", "ready")
        facts["ready_screen_changes_while_idle"] = _changes_while_idle(box, pane)

        _record_conversation(rec, box, pane, facts, "codex", codex_idle)

        # a second start in the now trusted folder: straight to ready
        box.tmux("kill-pane", "-t", pane, check=False)
        pane, _ = _launch(box, "codex")
        screen, took = rec.wait(pane, codex_idle, 60, "ready on a trusted start")
        facts["ready_trusted_start_s"] = took
        box.tmux("kill-pane", "-t", pane, check=False)

        # a -c model_instructions_file=... naming a file that does not exist
        missing = box.work / "nowhere" / "AGENTS.md"
        pane, _ = _launch(box, f"codex -c 'model_instructions_file=\"{missing}\"'")
        screen, took = rec.wait(pane, lambda s: codex_idle(s) or _dead(box, pane) or "rror" in s, 60,
                                "missing instructions file")
        time.sleep(2.0)
        screen = box.capture(pane)
        dead = _dead(box, pane)
        facts["missing_instructions_file"] = {"dead": dead, "seconds": took, "tail": _tail(screen, 12)}
        state = "exited" if dead else ("ready" if codex_idle(screen) else "unknown")
        rec.save("missing_instructions_file", pane, screen, "codex -c model_instructions_file=<a file that does not "
                 "exist>, in a trusted folder", state)
        if not dead and codex_idle(screen):
            marker = rec.next_probe()
            rec.keys(pane, f"{marker} hello", literal=True)
            rec.wait(pane, lambda s: marker in s, 5, "typed")
            time.sleep(0.5)
            rec.keys(pane, SUBMIT_KEY)
            if not rec.submitted(marker, 2):
                rec.keys(pane, SUBMIT_KEY)
            facts["missing_instructions_file"]["message_reached_mock"] = rec.submitted(marker, 5)
            time.sleep(2.0)
            screen = box.capture(pane)
            facts["missing_instructions_file"]["after_message"] = _tail(screen, 12)
            dead = _dead(box, pane)
            rec.save("missing_instructions_file_after_message", pane, screen, "the same Codex after a message was "
                     "submitted", "exited" if dead else ("unknown" if not codex_idle(screen) else
                                                        "idle" if ANSWER in screen else "ready"))
        box.tmux("kill-pane", "-t", pane, check=False)

        # a config.toml that is not TOML
        broken_home = box.work / "codex-home-broken"
        broken_home.mkdir()
        (broken_home / "config.toml").write_text('model = "mock-model\n[[[ this is not toml\n', encoding="utf-8")
        repo = _fresh_repo(box, "repo-broken-config")
        pane, _ = _launch(box, "codex", cwd=repo, env={"CODEX_HOME": str(broken_home)})
        screen, took = rec.wait(pane, lambda s: _dead(box, pane) or codex_trust(s) or codex_idle(s), 30,
                                "broken config")
        time.sleep(0.5)
        screen = box.capture(pane)
        dead = _dead(box, pane)
        status = box.tmux("display-message", "-p", "-t", pane, "#{pane_dead_status}", check=False).stdout.strip()
        facts["broken_config"] = {"dead": dead, "exit_status": status, "seconds": took, "tail": _tail(screen, 12)}
        rec.save("broken_config", pane, screen, "config.toml that is not TOML: Codex prints its error and exits; the pane "
                 "is kept dead (remain-on-exit)", "exited" if dead else "unknown")
        box.tmux("kill-pane", "-t", pane, check=False)
    assert rec is not None
    return {"cli": "codex", "captures": rec.captures, "facts": rec.facts}


# ----------------------------------------------------------------------------------------- claude


def claude_trust(s: str) -> bool:
    return "Quick safety check" in s or "Yes, I trust this folder" in s


def claude_bypass(s: str) -> bool:
    return "Bypass Permissions mode" in s and "Yes, I accept" in s


def claude_api_key(s: str) -> bool:
    return "Do you want to use this API key?" in s


def claude_ready(s: str) -> bool:
    # Claude's input line starts "❯" + U+00A0 (a no-break space), not a plain space
    return ("bypass permissions on" in s and bool(re.search(r"^❯[ \xa0]", s, re.MULTILINE))
            and not claude_trust(s) and not claude_bypass(s) and "esc to interrupt" not in s)


def claude_idle(s: str) -> bool:
    return claude_ready(s) and bool(re.search(r"^❯[ \xa0]*$", s, re.MULTILINE))


def _select_with_down(rec: Recorder, pane: str, option: str) -> str:
    """Press Down until ``❯ <option>`` is highlighted; the screen showing it."""
    for _ in range(4):
        rec.keys(pane, "Down")
        screen, took = rec.box.wait_screen(pane, lambda s: f"❯ {option}" in s, 2)
        if took is not None:
            return screen
    raise AssertionError(f"claude: could not highlight {option!r}:\n{rec.box.capture(pane)}")


@scenario("record_claude")
def record_claude(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    rec = None
    command = "claude --dangerously-skip-permissions"
    with Sandbox(work, answer=ANSWER, columns=int(params.get("columns", WIDE))) as box:
        _keep_dead_panes(box)
        rec = Recorder(box, "claude")
        facts = rec.facts
        pane, t0 = _launch(box, command)
        screen, took = rec.wait(pane, claude_trust, 60, "trust prompt")
        facts["trust_prompt_s"] = took
        rec.save("trust_prompt", pane, screen, "first start in a never-trusted git repository: the safety check, "
                 "'No, exit' highlighted (Enter alone exits)", "trust_prompt")
        rec.keys(pane, "2")
        facts["trust_digit_2_accepts"] = not rec.stays(pane, claude_trust, 2.0)
        screen = _select_with_down(rec, pane, "Yes, I trust this folder")
        rec.save("trust_prompt_yes_highlighted", pane, screen, "the safety check after Down: 'Yes, I trust this folder' "
                 "highlighted", "trust_prompt")
        facts["trust_after_down"] = _tail(screen, 4)
        rec.keys(pane, "Enter")
        screen, took = rec.wait(pane, lambda s: claude_bypass(s) or claude_ready(s), 60, "bypass prompt")
        facts["bypass_prompt_after_trust_s"] = took
        rec.save("bypass_prompt", pane, screen, "after trusting: the Bypass Permissions warning, 'No, exit' highlighted",
                 "bypass_prompt")
        rec.keys(pane, "2")
        facts["bypass_digit_2_accepts"] = not rec.stays(pane, claude_bypass, 2.0)
        screen = _select_with_down(rec, pane, "Yes, I accept")
        rec.save("bypass_prompt_yes_highlighted", pane, screen, "the Bypass Permissions warning after Down: 'Yes, I accept' "
                 "highlighted", "bypass_prompt")
        facts["bypass_after_down"] = _tail(screen, 4)
        rec.keys(pane, "Enter")
        screen, took = rec.wait(pane, claude_idle, 60, "ready")
        facts["ready_after_bypass_accepted_s"] = took
        facts["ready_from_launch_s_including_key_tests"] = round(time.monotonic() - t0, 2)
        settings = box.home / ".claude" / "settings.json"
        facts["settings_json_after_accept"] = settings.read_text() if settings.exists() else None
        rec.save("ready", pane, screen, "ready after trust and bypass were accepted: empty input line, bypass mode on",
                 "ready")
        facts["ready_screen_changes_while_idle"] = _changes_while_idle(box, pane)

        _record_conversation(rec, box, pane, facts, "claude", claude_idle)

        box.tmux("kill-pane", "-t", pane, check=False)
        pane, _ = _launch(box, command)
        screen, took = rec.wait(pane, claude_idle, 60, "ready on a trusted start")
        facts["ready_trusted_start_s"] = took
        box.tmux("kill-pane", "-t", pane, check=False)

        # Down pressed the moment the trust prompt is first seen: does the highlight stay?
        early = []
        for attempt in range(3):
            repo = _fresh_repo(box, f"repo-early-{attempt}")
            pane, t1 = _launch(box, command, cwd=repo)
            box.wait_screen(pane, claude_trust, 60, poll_s=0.02)
            shown = round(time.monotonic() - t1, 2)
            rec.keys(pane, "Down")
            early.append({"prompt_shown_s": shown, "highlight": _highlight_timeline(box, pane, 2.0, t1)})
            box.tmux("kill-pane", "-t", pane, check=False)
        facts["trust_down_at_first_sight"] = early

        # the API key in the environment not approved yet
        home = box.work / "home-key-unapproved"
        home.mkdir()
        (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True}) + "\n", encoding="utf-8")
        repo = _fresh_repo(box, "repo-key")
        pane, _ = _launch(box, command, cwd=repo, env={"HOME": str(home)})
        screen, _ = rec.wait(pane, claude_trust, 60, "trust prompt (key not approved)")
        time.sleep(1.0)  # see trust_down_at_first_sight: a Down in the first moments is undone
        _select_with_down(rec, pane, "Yes, I trust this folder")
        rec.keys(pane, "Enter")
        screen, took = rec.wait(pane, lambda s: claude_api_key(s) or claude_bypass(s) or claude_ready(s), 60,
                                "api key prompt")
        rec.save("api_key_prompt", pane, screen, "ANTHROPIC_API_KEY set but not approved in ~/.claude.json: Claude asks "
                 "whether to use it, 'No (recommended)' highlighted", "api_key_prompt")
        rec.keys(pane, "Up")
        screen, _ = rec.wait(pane, lambda s: "❯ Yes" in s, 5, "api key prompt, Yes highlighted")
        facts["api_key_after_up"] = _tail(screen, 3)
        rec.keys(pane, "Enter")
        screen, _ = rec.wait(pane, lambda s: claude_bypass(s) or claude_ready(s), 30, "after the api key prompt")
        stored = json.loads((home / ".claude.json").read_text()).get("customApiKeyResponses")
        facts["api_key_stored_as"] = stored
        facts["api_key_stored_is_last_20_chars"] = stored == {"approved": [box.env["ANTHROPIC_API_KEY"][-20:]],
                                                              "rejected": []}
        box.tmux("kill-pane", "-t", pane, check=False)

        # onboarding not completed
        home = box.work / "home-no-onboarding"
        home.mkdir()
        (home / ".claude.json").write_text("{}\n", encoding="utf-8")
        pane, _ = _launch(box, command, env={"HOME": str(home)})
        screen, took = rec.wait(pane, lambda s: s.strip() != "", 30, "onboarding")
        screen, _ = box.wait_screen(pane, lambda s: False, 6)  # let it settle on its first question
        dead = _dead(box, pane)
        facts["no_onboarding"] = {"dead": dead, "tail": _tail(screen, 12)}
        rec.save("no_onboarding", pane, screen, "~/.claude.json without hasCompletedOnboarding: the first-run onboarding",
                 "exited" if dead else "login_required")
        box.tmux("kill-pane", "-t", pane, check=False)
    assert rec is not None
    return {"cli": "claude", "captures": rec.captures, "facts": rec.facts}


# ----------------------------------------------------------------------------------------- gemini

# As panefleet launches a Gemini worker of an execution role (pure/omx/launch/process.py, oh-my-codex's argv).
GEMINI = "gemini --approval-mode yolo"
GEMINI_RESTART = "Gemini CLI is restarting"  # "… to apply the trust changes...", wrapped in a narrow pane


def gemini_live(s: str) -> str:
    """The screen below the restart line: Gemini does not clear the screen when it restarts itself
    after the trust prompt, so the old dialog stays above the new interface."""
    return s.rsplit(GEMINI_RESTART, 1)[-1] if GEMINI_RESTART in s else s


def gemini_trust(s: str) -> bool:
    return "Do you trust the files in this folder?" in gemini_live(s)


def gemini_input_line(s: str) -> bool:
    """An input line and its footer are drawn (also for a moment before the trust dialog)."""
    live = gemini_live(s)
    return ("workspace (/directory)" in live and bool(re.search(r"^ [*>] ", live, re.MULTILINE))
            and not gemini_trust(s) and "esc to cancel" not in live)


def gemini_ready(s: str) -> bool:
    """The input line with the interface up: the header drawn, or a turn in the transcript."""
    live = gemini_live(s)
    return gemini_input_line(s) and bool(re.search(r"Gemini CLI v\d|^Tips for getting started|^✦ ", live,
                                                   re.MULTILINE))


def gemini_idle(s: str) -> bool:
    return gemini_ready(s) and "Type your message" in gemini_live(s)


def gemini_first_sight(rec: Recorder, pane: str, t0: float) -> dict[str, Any]:
    """Type a probe the moment an input line first shows, in a fresh start: is it shown, and does it
    reach the model (after the trust dialog, when one comes, has been accepted)?"""
    box = rec.box
    screen, seen = box.wait_screen(pane, lambda s: gemini_input_line(s) or gemini_trust(s), 60, poll_s=0.02)
    if seen is None or gemini_trust(screen):
        return {"input_line_seen_first": False}
    marker = rec.next_probe()
    rec.keys(pane, f"{marker} typed at first sight", literal=True)
    out: dict[str, Any] = {"input_line_seen_first": True, "typed_at_s": round(time.monotonic() - t0, 2)}
    screen, out["shown_after_s"] = box.wait_screen(pane, lambda s: marker in gemini_live(s) or gemini_trust(s), 5,
                                                   poll_s=0.02)
    if gemini_trust(screen) or gemini_trust(box.wait_screen(pane, gemini_trust, 1.0)[0]):
        out["trust_dialog_followed"] = True
        rec.keys(pane, "Enter")
        rec.wait(pane, gemini_ready, 60, "ready after trusting")
        time.sleep(1.0)
    else:
        rec.wait(pane, gemini_ready, 30, "ready after the probe")
    out["still_in_input_line"] = marker in "".join(
        line for line in gemini_live(box.capture(pane)).splitlines() if line.startswith((" *", " >")))
    rec.keys(pane, SUBMIT_KEY)
    out["reached_mock"] = rec.submitted(marker)
    return out


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}/cmdline").exists() and bool(Path(f"/proc/{pid}/cmdline").read_bytes())


def _stop_gemini(box: Sandbox) -> None:
    """SIGTERM what is left of the Gemini CLIs (they outlive their killed panes)."""
    for process in box.agent_processes("gemini"):
        try:
            os.kill(process["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while box.agent_processes("gemini") and time.monotonic() < deadline:
        time.sleep(0.1)


def _gemini_home(box: Sandbox, name: str, settings: str | None) -> Path:
    """Another HOME with ``settings`` as ~/.gemini/settings.json and the sandbox's repository trusted."""
    home = box.work / name
    (home / ".gemini").mkdir(parents=True)
    if settings is not None:
        (home / ".gemini" / "settings.json").write_text(settings, encoding="utf-8")
    trusted = box.home / ".gemini" / "trustedFolders.json"
    if trusted.exists():
        (home / ".gemini" / "trustedFolders.json").write_text(trusted.read_text(), encoding="utf-8")
    return home


def _broken_gemini(rec: Recorder, name: str, home: Path, env: dict[str, str], description: str) -> None:
    box = rec.box
    pane, _ = _launch(box, GEMINI, env={"HOME": str(home), **env})
    screen, took = rec.wait(pane, lambda s: _dead(box, pane) or gemini_ready(s) or "authenticate" in s
                            or "API Key" in s, 30, name)
    time.sleep(2.0)  # let it settle (or die)
    screen = box.capture(pane)
    dead = _dead(box, pane)
    status = box.tmux("display-message", "-p", "-t", pane, "#{pane_dead_status}", check=False).stdout.strip()
    rec.facts[name] = {"dead": dead, "exit_status": status if dead else None, "seconds": took,
                       "tail": _tail(screen, 14)}
    rec.save(name, pane, screen, description, "exited" if dead else "login_required")
    box.tmux("kill-pane", "-t", pane, check=False)
    _stop_gemini(box)


@scenario("record_gemini")
def record_gemini(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    rec = None
    with Sandbox(work, answer=ANSWER, columns=int(params.get("columns", WIDE))) as box:
        _keep_dead_panes(box)
        rec = Recorder(box, "gemini")
        facts = rec.facts
        pane, t0 = _launch(box, GEMINI)
        first, before_trust = None, None
        while True:  # fast looks: does an input line ever show before the trust prompt?
            screen = box.capture(pane)
            if first is None and screen.strip():
                first = round(time.monotonic() - t0, 2)
            if gemini_trust(screen):
                break
            if before_trust is None and gemini_input_line(screen):
                before_trust = screen, round(time.monotonic() - t0, 2)
                rec.save("input_line_before_trust", pane, screen, "the interface Gemini draws for a moment before it "
                         "asks about trust: an input line, but the folder is not trusted yet and the dialog follows",
                         "starting")
            if time.monotonic() - t0 > 60:
                raise AssertionError(f"gemini: no trust prompt within 60 s; last screen:\n{screen}")
            time.sleep(0.05)
        facts["first_screen_s"] = first
        facts["trust_prompt_s"] = round(time.monotonic() - t0, 2)
        facts["input_line_before_trust_prompt_at_s"] = before_trust[1] if before_trust else None
        time.sleep(0.5)
        screen = box.capture(pane)
        rec.save("trust_prompt", pane, screen, "first start in a never-trusted git repository: the folder trust dialog, "
                 "option 1 (Trust folder) highlighted with ●", "trust_prompt")
        rec.keys(pane, "Down")
        screen, _ = rec.wait(pane, lambda s: "● 2." in s, 5, "trust prompt, option 2 highlighted")
        rec.save("trust_prompt_option2", pane, screen, "the trust dialog after Down: option 2 (Trust parent folder) "
                 "highlighted", "trust_prompt")
        facts["trust_after_down"] = [line.strip(" │") for line in _tail(screen, 8) if "." in line]
        rec.keys(pane, "Up")
        rec.wait(pane, lambda s: "● 1." in s, 5, "trust prompt, option 1 highlighted again")
        t1 = time.monotonic()
        rec.keys(pane, "Enter")
        screen, took = rec.wait(pane, lambda s: GEMINI_RESTART in s, 10, "restart line")
        facts["restart_line_after_enter_s"] = took
        rec.save("trust_restarting", pane, screen, "Enter on 'Trust folder': Gemini restarts itself; the old dialog "
                 "stays on screen above the restart line", "starting")
        screen, seen = box.wait_screen(pane, gemini_input_line, 60, poll_s=0.02)
        if seen is None:
            raise AssertionError(f"gemini: no input line after the restart; last screen:\n{screen}")
        facts["input_line_after_trust_enter_s"] = round(time.monotonic() - t1, 2)
        if not gemini_ready(screen):
            rec.save("initializing_after_restart", pane, screen, "the restarted Gemini's input line at first sight, "
                     "its header not drawn yet (it then prints 'Initializing... Prompts will be queued.')", "starting")
        screen, _ = rec.wait(pane, gemini_idle, 60, "ready after the restart")
        facts["ready_after_trust_enter_s"] = round(time.monotonic() - t1, 2)
        rec.save("ready", pane, screen, "ready after the restart (launched with --approval-mode yolo: the input line "
                 "starts '*'); the old trust dialog is still on screen above the restart line", "ready")
        facts["trust_written"] = json.loads((box.home / ".gemini" / "trustedFolders.json").read_text())
        facts["ready_screen_changes_while_idle"] = _changes_while_idle(box, pane)

        _record_conversation(rec, box, pane, facts, "gemini", gemini_idle)
        marker = rec.next_probe()
        rec.keys(pane, f"{marker} count the requests", literal=True)
        rec.wait(pane, lambda s: marker in s, 5, "typed requests probe")
        time.sleep(0.3)
        rec.keys(pane, SUBMIT_KEY)
        rec.wait(pane, lambda s: gemini_idle(s) and marker in s, 30, "requests probe answered")
        facts["requests_per_turn"] = [r.route for r in box.mock.snapshot() if marker in r.raw]

        # SIGHUP: tmux kill-pane leaves the CLI running
        processes = box.agent_processes("gemini")
        box.tmux("kill-pane", "-t", pane, check=False)
        time.sleep(2.0)
        left = [p["pid"] for p in processes if _alive(p["pid"])]
        facts["kill_pane"] = {"processes_before": len(processes), "alive_2s_after": len(left)}
        _stop_gemini(box)

        pane, t2 = _launch(box, GEMINI)
        facts["typed_at_first_sight_trusted"] = gemini_first_sight(rec, pane, t2)
        facts["ready_trusted_start_s"] = round(time.monotonic() - t2, 2)
        box.tmux("kill-pane", "-t", pane, check=False)
        _stop_gemini(box)
        # the same in a never-trusted folder: the input line drawn before the trust dialog
        pane, t2 = _launch(box, GEMINI, cwd=_fresh_repo(box, "repo-first-sight"))
        facts["typed_at_first_sight_untrusted"] = gemini_first_sight(rec, pane, t2)
        box.tmux("kill-pane", "-t", pane, check=False)
        _stop_gemini(box)

        # launched without --approval-mode yolo (a worker of a role without execution tools)
        pane, _ = _launch(box, "gemini")
        screen, took = rec.wait(pane, gemini_idle, 60, "ready in the default approval mode")
        rec.save("ready_default_mode", pane, screen, "ready in the default approval mode: the input line starts '>'",
                 "ready")
        marker = rec.next_probe()
        rec.keys(pane, f"{marker} hello", literal=True)
        rec.wait(pane, lambda s: marker in s, 5, "typed in the default mode")
        time.sleep(0.3)
        rec.keys(pane, SUBMIT_KEY)
        screen, _ = rec.wait(pane, lambda s: ANSWER in s and gemini_idle(s), 30, "answered in the default mode")
        rec.save("answered_default_mode", pane, screen, "the answer shown in the default approval mode: the "
                 "message '> …' above, the input line '>' below", "idle")
        box.tmux("kill-pane", "-t", pane, check=False)
        _stop_gemini(box)

        _broken_gemini(rec, "broken_settings", _gemini_home(box, "home-broken", '{"security": {"auth": ,\n'), {},
                       "~/.gemini/settings.json that is not JSON: Gemini prints its error and exits; the pane is kept "
                       "dead (remain-on-exit)")
        _broken_gemini(rec, "no_auth_type", _gemini_home(box, "home-no-auth", '{"security": {}}\n'), {},
                       "~/.gemini/settings.json without security.auth.selectedType, in a trusted folder: the "
                       "sign-in dialog")
        _broken_gemini(rec, "no_api_key", _gemini_home(box, "home-no-key", GEMINI_SETTINGS), {"GEMINI_API_KEY": ""},
                       "auth type gemini-api-key but GEMINI_API_KEY empty, in a trusted folder: Gemini asks for a key")
    assert rec is not None
    return {"cli": "gemini", "captures": rec.captures, "facts": rec.facts}


# ------------------------------------------------------------------------------------- approvals

# Each CLI as panefleet launches a worker of a role without execution tools (pure/omx/launch/process.py: no
# bypass flag), so that it asks before it runs a command; Claude Code's default is its "auto mode", which
# asks its own classifier instead of the user, so the manual mode is asked for.
APPROVING = {"codex": "codex", "claude": "claude --permission-mode default", "gemini": "gemini"}
# The model of Codex roles of the fast class (explore: pure/omx/launch/agents.py), which Codex 0.169.0 offers
# to replace with a newer one right after start-up. (Started with it, Codex offers the mock no tools.)
CODEX_OFFERED_MODEL = "gpt-5.6-luna"
APPROVAL_MARKER = "approval-probe"
APPROVAL_QUESTION = {"codex": "Would you like to run the following command?", "claude": "Do you want to proceed?",
                     "gemini": "Allow execution of"}


# The line each CLI prints when a turn has ended, a moment after the answer (Gemini prints none: its answer)
TURN_ENDED = {"codex": re.compile(r"Worked for \S+ • "), "claude": re.compile(r"✻ \S+ for \S+ · done"),
              "gemini": re.compile(r"✦ ")}


def _input_waiting(cli: str, s: str) -> bool:
    """The CLI at an empty input line, whatever its permission mode's footer says."""
    if cli == "codex":  # its status line names the model it runs: not the mock's name here (see APPROVING)
        return "Ask Codex to do anything" in s and not codex_trust(s) and "esc to interrupt" not in s
    if cli == "claude":
        return bool(re.search(r"^❯[ \xa0]*$", s, re.MULTILINE)) and not claude_trust(s) and "esc to" not in s
    return gemini_idle(s)


def _trusted(rec: Recorder, pane: str, cli: str) -> str:
    """Past the folder-trust prompt of a never-trusted repository, at a ready screen."""
    trust = {"codex": codex_trust, "claude": claude_trust, "gemini": gemini_trust}[cli]
    rec.wait(pane, trust, 60, "trust prompt")
    time.sleep(1.0)  # a key pressed in the prompt's first moments is undone (trust_down_at_first_sight)
    if cli == "claude":
        _select_with_down(rec, pane, "Yes, I trust this folder")
    rec.keys(pane, "Enter")
    if cli == "gemini":
        rec.wait(pane, lambda s: GEMINI_RESTART in s, 10, "restart line")
    screen, _ = rec.wait(pane, lambda s: _input_waiting(cli, gemini_live(s)), 60, "ready")
    return screen


def _record_model_offer(rec: Recorder, box: Sandbox) -> None:
    """Codex started with a model it offers a successor of, in a trusted folder: the offer, then
    "Use existing model" (Down, Enter), as panefleet's start-up answers it (pure/agents/supervise.py)."""
    pane, t0 = _launch(box, f"codex --model {CODEX_OFFERED_MODEL}")
    screen, took = rec.wait(pane, lambda s: "Use existing model" in s or "esc to interrupt" in s, 30, "model offer")
    rec.facts["model_offer_after_launch_s"] = took
    time.sleep(0.5)
    screen = box.capture(pane)
    rec.save("model_prompt", pane, screen, f"codex --model {CODEX_OFFERED_MODEL} in a trusted folder: Codex offers a "
             "newer model, 'Try new model' highlighted (a '1' typed here picks it)", "model_prompt")
    rec.keys(pane, "Down")
    rec.wait(pane, lambda s: "› 2. Use existing model" in s, 5, "'Use existing model' highlighted")
    rec.keys(pane, "Enter")
    screen, _ = rec.wait(pane, lambda s: _input_waiting("codex", s), 30, "ready after keeping the model")
    rec.facts["after_keeping"] = _tail(screen, 3)
    rec.facts["model_offer_remembered_in_config"] = "[notice.model_migrations]" in (
        box.codex_home / "config.toml").read_text()
    box.tmux("kill-pane", "-t", pane, check=False)


@scenario("record_approval")
def record_approval(work: Path, params: dict[str, Any]) -> dict[str, Any]:
    """Mid-task approval: the mock model answers a message with a call of the CLI's shell tool
    (tests/agents/mock_model.py ``tool_call``); the CLI asks before it runs it (``needs_input``); Enter
    on the highlighted first option approves; the command runs, the tool's result goes back, the
    model's answer ends the turn."""
    cli = str(params["cli"])
    rec = None
    with Sandbox(work, answer=ANSWER, columns=int(params.get("columns", WIDE))) as box:
        rec = Recorder(box, cli)
        facts = rec.facts
        pane, _ = _launch(box, APPROVING[cli])
        _trusted(rec, pane, cli)
        made = box.repo / "approved.txt"
        box.mock.configure(tool_call=(APPROVAL_MARKER, f"touch {made}"))
        rec.keys(pane, f"{APPROVAL_MARKER}: create the file approved.txt", literal=True)
        rec.wait(pane, lambda s: APPROVAL_MARKER in s, 5, "typed approval probe")
        time.sleep(0.3)
        t0 = time.monotonic()
        rec.keys(pane, SUBMIT_KEY)
        question = APPROVAL_QUESTION[cli]
        screen, took = rec.wait(pane, lambda s: question in squash_rows(s, question), 30, "approval prompt")
        facts["approval_prompt_after_submit_s"] = round(time.monotonic() - t0, 2)
        time.sleep(0.5)
        screen = box.capture(pane)
        rec.save("approval_prompt", pane, screen, f"{APPROVING[cli]}: the model asked to run a command; the CLI asks "
                 "the user first, its first option (run it once) highlighted", "needs_input")
        facts["command_ran_before_approval"] = made.exists()
        box.mock.configure(delay_s=5.0)  # the answer after the tool's result is held back: the busy screen shows
        rec.keys(pane, "Enter")
        screen, took = rec.wait(pane, lambda s: question not in squash_rows(s, question) and (
            "esc to interrupt" in s or "esc to cancel" in s), 15, "busy after approval")
        facts["enter_approves"] = True
        facts["busy_after_approval_s"] = took
        time.sleep(1.0)
        rec.save("approved_busy", pane, box.capture(pane), "the command approved with Enter: it ran, and the model is "
                 "answering its result (the mock holds the answer back)", "busy")
        box.mock.configure(delay_s=0.0)
        screen, _ = rec.wait(pane, lambda s: ANSWER in s and _input_waiting(cli, gemini_live(s)) and bool(
            TURN_ENDED[cli].search(s)), 30, "answered after approval")
        facts["command_ran_after_approval"] = made.exists()
        rec.save("approved_answered", pane, screen, "the approved command's turn ended: the answer shown, the CLI "
                 "waiting for the next message", "idle")
        box.tmux("kill-pane", "-t", pane, check=False)
        if cli == "gemini":
            _stop_gemini(box)
        if cli == "codex":
            _record_model_offer(rec, box)
    assert rec is not None
    return {"cli": cli, "captures": rec.captures, "facts": rec.facts}


def squash_rows(screen: str, text: str) -> str:
    """``screen``, with ``text`` found whole even where a narrow pane wrapped it over rows: the screen
    as it is when ``text`` shows on one row, else ``text`` itself when its whitespace-free form does."""
    if text in screen:
        return screen
    return text if re.sub(r"\s+", "", text) in re.sub(r"\s+|│", "", screen) else screen


# ---------------------------------------------------------------------------------------- outside


def golden_folder(cli: str, columns: int, version: str | None = None) -> Path:
    """Where the screens of ``cli`` recorded ``columns`` wide go: ``<cli>/`` for the wide recording,
    ``<cli>/<N>-columns/`` for any other (tests/core/test_agent_screens.py pairs them by name); a
    version other than the pinned one's under ``<cli>@<version>/``."""
    top = SCREENS / (cli if version is None else f"{cli}@{version}")
    return top if columns == WIDE else top / f"{columns}-columns"


def install_version(cli: str, version: str) -> str:
    """Install ``version`` of ``cli`` from npm into a cache of its own, outside the sandbox (which has
    no network), and point the sandbox at it; the exact version installed."""
    from pure.agents.doctor import PACKAGES

    cache = Path(f"{agent_cache()}-{cli}-{version}")
    if not (cache / "node_modules" / ".bin" / cli).exists() or version == "latest":
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(cache),
                        f"{PACKAGES[cli]}@{version}"], check=True, stdout=sys.stderr)
    os.environ["PANEFLEET_AGENT_CACHE"] = str(cache)
    shown = subprocess.run([str(cache / "node_modules" / ".bin" / cli), "--version"], capture_output=True, text=True,
                           timeout=60).stdout
    found = re.search(r"\d+\.\d+\.\d+", shown)
    return found.group(0) if found else version


def write_goldens(result: dict[str, Any], columns: int, version: str | None = None) -> list[Path]:
    cli = result["cli"]
    folder = golden_folder(cli, columns, version)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, capture in sorted(result["captures"].items()):
        data = {"format_version": "1.0", "kind": "screen", "cli": cli, "columns": columns, **capture}
        path = folder / f"{name}.json"
        path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def render_facts(results: list[dict[str, Any]]) -> str:
    lines = ["# Recorded agent screens", "",
             "Written by `.venv/bin/python -m tests.agents.record_screens` (see its docstring): real captures of",
             f"the pinned CLIs in {WIDE}x50 and {NARROW}x50 tmux panes, and what was measured while recording them "
             f"{WIDE} columns wide.", ""]
    for result in results:
        lines += [f"## {result['cli']}", "", "```json", json.dumps(result["facts"], indent=2, ensure_ascii=False),
                  "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="record the agent CLIs' screens as goldens")
    parser.add_argument("--cli", choices=("codex", "claude", "gemini"), action="append", help="default: all")
    parser.add_argument("--columns", type=int, action="append",
                        help=f"the panes' width; repeatable (default: {WIDE} and {NARROW})")
    parser.add_argument("--version", metavar="X.Y.Z|latest",
                        help="record this version of the one --cli named (installed from npm into a cache of its "
                             "own): goldens under tests/goldens/screens/<cli>@<version>/, checked like the pinned")
    parser.add_argument("--flow", choices=("start", "approval"), action="append",
                        help="start: start-up to a conversation (record_<cli>); approval: a command approved mid-task "
                             "(record_approval); default: both")
    parser.add_argument("--dry", action="store_true", help="print the facts, write nothing")
    args = parser.parse_args(argv)
    widths = args.columns or [WIDE, NARROW]
    version = None
    if args.version:
        if len(args.cli or []) != 1:
            parser.error("--version needs exactly one --cli")
        version = install_version(args.cli[0], args.version)
    missing = missing_prerequisites(args.cli if version else None)
    if missing:
        sys.stderr.write("cannot record: " + "; ".join(missing) + "\n")
        return 1
    results = []  # the facts measured in the widest panes go into the README
    misread = 0
    flows = args.flow or ["start", "approval"]
    runs = [(cli, columns, flow) for cli in args.cli or ["codex", "claude", "gemini"] for columns in widths
            for flow in flows]
    for cli, columns, flow in runs:
        name, params = (f"record_{cli}", {"columns": columns}) if flow == "start" else (
            "record_approval", {"cli": cli, "columns": columns})
        result = run_scenario(name, params, timeout_s=600)
        if columns == max(widths):
            results.append({**result, "cli": cli if flow == "start" else f"{cli} ({flow})"})
        print(f"{cli} {flow} at {columns} columns: {len(result['captures'])} captures in {result['_seconds']} s")
        misread += misclassified(result)
        if not args.dry:
            for path in write_goldens(result, columns, version):
                print(f"  wrote {path.relative_to(ROOT)}")
    print(render_facts(results))
    if not args.dry and args.cli is None and args.flow is None and version is None and WIDE in widths:
        (SCREENS / "README.md").write_text(render_facts(results), encoding="utf-8")
    return 1 if misread else 0


def misclassified(result: dict[str, Any]) -> int:
    """Print each recorded screen the screen model (pure/agents/screen.py) reads as another state than
    it is; how many: a new CLI version is checked by recording it."""
    from pure.agents.screen import classify

    wrong = 0
    for name, capture in sorted(result["captures"].items()):
        seen = classify(result["cli"], capture["capture"], dead=bool(capture["pane_dead"]))
        if seen.state != capture["expected_state"]:
            wrong += 1
            print(f"  MISREAD {result['cli']}/{name}: {seen.state}, is {capture['expected_state']}: {seen.evidence}")
    return wrong


if __name__ == "__main__":
    sys.exit(main())
