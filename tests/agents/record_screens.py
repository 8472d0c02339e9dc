"""Record the screens of the real agent CLIs as golden captures, and measure how to drive them.

``.venv/bin/python -m tests.agents.record_screens [--cli codex|claude] [--dry]`` starts each pinned
CLI (``./dev test`` installs them) in a tmux pane inside the sandbox (``tests/agents/sandbox.py``:
no network but the mock model on 127.0.0.1), walks it through its start-up prompts to a ready
screen, types, submits and gets answered, and saves the exact ``capture-pane -p`` text of every
screen it passed through as ``tests/goldens/screens/<cli>/<name>.json``::

    {"format_version": "1.0", "kind": "screen", "cli": "codex", "description": "...",
     "capture": "<exact text>", "expected_state": "trust_prompt", "pane_dead": false}

``pane_dead`` is tmux's ``#{pane_dead}`` when the capture was taken (panes are kept with
``remain-on-exit``). A dead pane's golden also has ``capture_with_history``
(``capture-pane -p -S -100``): the error line a CLI prints as it dies often scrolls off the visible
screen, leaving only tmux's "Pane is dead" line in ``capture``.

``expected_state`` is what the screen *is* (one of ``pure/agents/screen.py``'s states), decided here
from how the screen was reached, never by the classifier under test. The measured facts (which key
accepts each prompt, how a typed line is submitted, start-up times) are printed and written to
``tests/goldens/screens/README.md``. ``--dry`` prints them without writing anything.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agents.sandbox import ROOT, Sandbox, log, missing_prerequisites, run_scenario, scenario

SCREENS = ROOT / "tests" / "goldens" / "screens"
STATES = ("starting", "trust_prompt", "bypass_prompt", "api_key_prompt", "login_required", "ready", "idle", "busy",
          "exited", "unknown")
ANSWER = "Mock model answer: the assignment is understood."
LONG_LINE = ("Read .omx/state/team/alpha/workers/worker-1/inbox.md, start work now, report concrete progress, "
             "then continue assigned work or next feasible task. This line is long on purpose so that it wraps "
             "in the input box of a 200-column pane: ") + "x" * 60
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

    def submit_trial(self, pane: str, method: str, pause_s: float, ready: Callable[[str], bool]) -> dict[str, Any]:
        """Type one line by ``method`` and press Enter ``pause_s`` after it; count the Enters it took.

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
            self.box.tmux("send-keys", "-t", pane, "-l", text, ";", "send-keys", "-t", pane, "C-m")
        else:
            self.keys(pane, text, literal=True)
        visible_after = None
        if method == "keys_visible":
            _, visible_after = self.box.wait_screen(pane, lambda s: marker in s, 5, poll_s=0.02)
        if pause_s:
            time.sleep(pause_s)
        trial: dict[str, Any] = {"method": method, "pause_s": pause_s, "visible_after_s": visible_after}
        if method != "one_command":
            self.keys(pane, "C-m")
        enters = 1
        while not self.submitted(marker):
            if enters == 1:
                trial["screen_after_unsubmitted_enter"] = _tail(self.box.capture(pane), 8)
            if enters == 3:
                break
            self.keys(pane, "C-m")
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


# ------------------------------------------------------------------------------------------ codex


def _record_conversation(rec: Recorder, box: Sandbox, pane: str, facts: dict[str, Any], cli: str,
                         idle: Callable[[str], bool]) -> None:
    """From a ready agent: the screens of a long line typed (then submitted), of a busy agent (the mock
    holds its answer back) and of the answer shown; the submit trials go into ``facts``."""
    name = {"codex": "Codex", "claude": "Claude"}[cli]
    rec.keys(pane, LONG_LINE, literal=True)
    screen, _ = rec.wait(pane, lambda s: LONG_LINE[-30:] in s.replace("\n", ""), 10, "typed")
    rec.save("typed", pane, screen, "a long line typed with send-keys -l, not submitted (it wraps in the input box)",
             "ready")
    rec.keys(pane, "C-m")
    if not rec.submitted("wraps in the input box", 2):
        rec.keys(pane, "C-m")
    rec.wait(pane, idle, 30, "ready after the long line")

    facts["submit_trials"] = _submit_trials(rec, pane, idle)

    box.mock.configure(delay_s=8.0)
    marker = rec.next_probe()
    rec.keys(pane, f"{marker} take your time with this one", literal=True)
    rec.wait(pane, lambda s: marker in s, 5, "typed busy probe")
    time.sleep(0.5)
    rec.keys(pane, "C-m")
    if not rec.submitted(marker, 2):
        rec.keys(pane, "C-m")
    if not rec.submitted(marker, 5):
        raise AssertionError(f"{cli}: the busy probe never reached the mock")
    _, busy_after = box.wait_screen(pane, lambda s: "esc to interrupt" in s, 5)
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
    with Sandbox(work, answer=ANSWER) as box:
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
            rec.keys(pane, "C-m")
            if not rec.submitted(marker, 2):
                rec.keys(pane, "C-m")
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
    with Sandbox(work, answer=ANSWER) as box:
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


# ---------------------------------------------------------------------------------------- outside


def write_goldens(result: dict[str, Any]) -> list[Path]:
    cli = result["cli"]
    folder = SCREENS / cli
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, capture in sorted(result["captures"].items()):
        data = {"format_version": "1.0", "kind": "screen", "cli": cli, **capture}
        path = folder / f"{name}.json"
        path.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written


def render_facts(results: list[dict[str, Any]]) -> str:
    lines = ["# Recorded agent screens", "",
             "Written by `.venv/bin/python -m tests.agents.record_screens` (see its docstring): real captures of",
             "the pinned CLIs in a 200x50 tmux pane, and what was measured while recording them.", ""]
    for result in results:
        lines += [f"## {result['cli']}", "", "```json", json.dumps(result["facts"], indent=2, ensure_ascii=False),
                  "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="record the agent CLIs' screens as goldens")
    parser.add_argument("--cli", choices=("codex", "claude"), action="append", help="default: both")
    parser.add_argument("--dry", action="store_true", help="print the facts, write nothing")
    args = parser.parse_args(argv)
    missing = missing_prerequisites()
    if missing:
        sys.stderr.write("cannot record: " + "; ".join(missing) + "\n")
        return 1
    results = []
    for cli in args.cli or ["codex", "claude"]:
        result = run_scenario(f"record_{cli}", {}, timeout_s=600)
        results.append(result)
        print(f"{cli}: {len(result['captures'])} captures in {result['_seconds']} s")
        if not args.dry:
            for path in write_goldens(result):
                print(f"  wrote {path.relative_to(ROOT)}")
    print(render_facts(results))
    if not args.dry and args.cli is None:
        (SCREENS / "README.md").write_text(render_facts(results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
