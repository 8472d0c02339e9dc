"""The agent-screen model: ``capture-pane`` text of a worker pane → what the agent CLI is doing.

``classify(cli, capture, dead=...)`` answers a :class:`Screen`: one of the states below, the lines
that decided it (``evidence``), the selection prompt it shows (``choice``) and the text left in its
input line. The wordings are those of the pinned CLIs (Codex 0.169.0, Claude Code 2.1.328, Gemini CLI
0.61.0; real captures in ``tests/goldens/screens/``) plus the older ones oh-my-codex 0.20.3 recognises.

A CLI that restarts itself (Gemini, after its folder was trusted) leaves the old screen above its
restart line; only what is below that line is read (``_RESTART``).

States, checked in this order (the first that matches wins):

* ``exited``          the pane is dead (tmux ``remain-on-exit``), or shows tmux's "Pane is dead"
* ``trust_prompt``    a folder-trust question with its choices
* ``bypass_prompt``   Claude's "Bypass Permissions mode" warning with its choices
* ``api_key_prompt``  Claude asking whether to use the API key found in the environment
* ``model_prompt``    Codex offering to switch to a newer model ("Meet GPT-6 Luna": Try new model / Use
                      existing model), before its first message
* ``needs_input``     mid-task, the agent asks the user to approve something and waits: Codex's "Would you
                      like to run the following command?", Claude Code's "Do you want to proceed?", Gemini's
                      "Allow execution of [Shell]?" (checked before ``busy``: these dialogs say "esc to cancel")
* ``login_required``  a sign-in, onboarding or authentication screen
* ``busy``            the agent is working on a message (``esc to interrupt``)
* ``idle``            ``ready`` after a finished turn: the line a CLI prints when a turn ends (Codex's
                      ``Worked for 3s • 14:02``, Claude's ``✻ Baked for 3s · done 2:02 PM``) is on screen
* ``ready``           the agent's input line is shown and it waits for a message
* ``starting``        nothing, or only the CLI's launch noise, on screen yet; or a wait the CLI announces
                      while it initialises (Codex's state db backfill), that wait's rows as evidence
* ``unknown``         text that matches none of the above
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Literal

from attrs import frozen

ScreenState = Literal["starting", "trust_prompt", "bypass_prompt", "api_key_prompt", "model_prompt",
                      "login_required", "needs_input", "ready", "idle", "busy", "exited", "unknown"]
SCREEN_STATES: tuple[ScreenState, ...] = ("starting", "trust_prompt", "bypass_prompt", "api_key_prompt",
                                          "model_prompt", "login_required", "needs_input", "ready", "idle", "busy",
                                          "exited", "unknown")
# States in which the agent waits for a message: its input line is live.
WAITING_STATES: frozenset[ScreenState] = frozenset({"ready", "idle"})
# States in which the agent will not start on its own: the worker failed to start.
STUCK_STATES: frozenset[ScreenState] = frozenset({"api_key_prompt", "login_required", "exited"})
# States in which the agent has taken a message and works on it (or asks the user about it, mid-task).
WORKING_STATES: frozenset[ScreenState] = frozenset({"busy", "needs_input"})

TAIL = 40  # prompts and input lines are looked for in the last lines of the screen
POINTERS = "›❯>"  # the marker of a highlighted option or of an input line


@frozen(kw_only=True)
class Choice:
    """A selection prompt: its options top to bottom, which is highlighted, which one accepts."""

    options: tuple[str, ...]
    selected: int | None
    accept: int | None


@frozen(kw_only=True)
class Screen:
    state: ScreenState
    evidence: tuple[str, ...] = ()
    choice: Choice | None = None
    input_text: str = ""  # the input line's text, whitespace collapsed ("" when none is shown)


def screen_lines(capture: str) -> list[str]:
    """The capture as lines: carriage returns dropped, right-trimmed, trailing blank lines removed."""
    lines = [line.replace("\r", "").rstrip() for line in capture.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def last_lines(capture: str, count: int = 5) -> tuple[str, ...]:
    """The last ``count`` non-blank lines (what an error report quotes of a screen)."""
    kept = [line.strip() for line in screen_lines(capture) if line.strip()]
    return tuple(kept[-count:])


def digest(capture: str) -> str:
    """A short fingerprint of a screen (to tell whether it changed since the last look)."""
    return hashlib.sha256("\n".join(screen_lines(capture)).encode("utf-8")).hexdigest()[:16]


def squash(text: str) -> str:
    """``text`` without any whitespace: wrapping by the terminal or by the agent's TUI cannot split it."""
    return re.sub(r"\s+", "", text)


# ------------------------------------------------------------------------------------------ prompts


@frozen(kw_only=True)
class PromptRule:
    state: ScreenState
    question: re.Pattern[str]  # a line of the question
    accept: re.Pattern[str]  # the accepting option's text
    options: re.Pattern[str]  # any option's text (accepting or not)
    pointers: str = POINTERS  # the markers of the highlighted option (Gemini's "●")


_I = re.IGNORECASE
PROMPTS: tuple[PromptRule, ...] = (
    # Codex 0.169.0: "Trust this folder? …" › 1. Trust and continue / 2. Back to Agent Command Center
    PromptRule(state="trust_prompt", question=re.compile(r"Trust this folder\?", _I),
               accept=re.compile(r"Trust and continue", _I),
               options=re.compile(r"Trust and continue|Back to |Quit|Exit", _I)),
    # older Codex, as oh-my-codex 0.20.3 looks for it
    PromptRule(state="trust_prompt", question=re.compile(r"Do you trust the contents of this directory\?", _I),
               accept=re.compile(r"Yes,\s*continue|Press enter to continue", _I),
               options=re.compile(r"Yes,\s*continue|No,\s*quit|Press enter to continue", _I)),
    # Claude Code 2.1.328: "Quick safety check: Is this a project you created or one you trust?"
    PromptRule(state="trust_prompt",
               question=re.compile(r"Quick safety check|Is this a project you created or one you trust", _I),
               accept=re.compile(r"Yes,\s*I trust this folder|Yes,\s*proceed", _I),
               options=re.compile(r"Yes,\s*I trust this folder|Yes,\s*proceed|No,\s*exit", _I)),
    # Gemini CLI 0.61.0: "Do you trust the files in this folder?" ● 1. Trust folder (<name>) / 2. Trust
    # parent folder (<name>) / 3. Don't trust. Its highlight is "●", only here: Claude's answers start "●"
    PromptRule(state="trust_prompt", question=re.compile(r"Do you trust (?:the files in )?this folder\?", _I),
               accept=re.compile(r"^Trust folder", _I),
               options=re.compile(r"^Trust folder|^Trust parent folder|^Don't trust", _I), pointers="●"),
    PromptRule(state="bypass_prompt", question=re.compile(r"Bypass Permissions mode", _I),
               accept=re.compile(r"Yes,\s*I\s*accept", _I),
               options=re.compile(r"Yes,\s*I\s*accept|No,\s*exit", _I)),
    PromptRule(state="api_key_prompt",
               question=re.compile(r"Detected a custom API key|Do you want to use this API key", _I),
               accept=re.compile(r"^Yes\b", _I), options=re.compile(r"^Yes\b|^No\b", _I)),
    # Codex 0.169.0 started with a model it offers a successor of (gpt-5.6-luna, the default of the roles of
    # the fast class): "Meet GPT-6 Luna" › 1. Try new model / 2. Use existing model. The model panefleet
    # launched it with is kept (tests/goldens/screens/codex/model_prompt.json)
    PromptRule(state="model_prompt", question=re.compile(r"^\s*Meet GPT-|^\s*Introducing GPT-", _I),
               accept=re.compile(r"^Use existing model", _I),
               options=re.compile(r"^Try new model|^Use existing model", _I)),
    # mid-task approvals, after the start-up prompts (tests/goldens/screens/<cli>/approval_prompt.json).
    # Codex 0.169.0: "Would you like to run the following command?" › 1. Yes, proceed (y) / 2. Yes, and
    # don't ask again … (p) / 3. No, and tell Codex what to do differently (esc)
    PromptRule(state="needs_input",
               question=re.compile(r"Would you like to (?:run the following command|make the following edits|"
                                   r"grant these permissions)\?|^\s*Allow command\?", _I),
               accept=re.compile(r"^Yes,\s*proceed|^Yes\b", _I),
               options=re.compile(r"^Yes,\s*proceed|^Yes,\s*and\b|^No,\s*and tell|^No\b", _I)),
    # Claude Code 2.1.328: "Do you want to proceed?" ❯ 1. Yes / 2. Yes, and always allow … / 3. Yes, and
    # switch to auto mode … / 4. No (also "Do you want to make this edit to …?", "… create …?")
    PromptRule(state="needs_input",
               question=re.compile(r"Do you want to (?:proceed|make this edit|create|overwrite|delete|allow)\b", _I),
               accept=re.compile(r"^Yes$", _I), options=re.compile(r"^Yes\b|^No\b", _I)),
    # Gemini CLI 0.61.0: "Allow execution of [Shell]?" ● 1. Allow once / 2. Allow for this session / 3. No,
    # suggest changes (esc)
    PromptRule(state="needs_input", question=re.compile(r"Allow execution of|Apply this change\?", _I),
               accept=re.compile(r"^Allow once", _I),
               options=re.compile(r"^Allow once|^Allow for this session|^Allow always|^No,\s*suggest changes|"
                                  r"^Modify with external editor", _I), pointers="●"),
)


def _option(pointers: str) -> re.Pattern[str]:
    return re.compile(r"^(?P<pointer>[" + re.escape(pointers) + r"])?\s*(?:\d+[.)]\s*)?(?P<text>\S.*)$")


def _unboxed(line: str) -> str:
    """A line without the borders of the dialog box it is drawn in (Gemini's "│ … │")."""
    return line.strip().strip("│").strip()


def _parse_choice(tail: Sequence[str], rule: PromptRule) -> Choice:
    options: list[str] = []
    selected: int | None = None
    option = _option(rule.pointers)
    for line in tail:
        found = option.match(_unboxed(line))
        if found is None:
            continue
        text = found.group("text").strip()
        if rule.options.search(text) is None:
            continue
        if found.group("pointer"):
            selected = len(options)
        options.append(text)
    accept = next((i for i, text in enumerate(options) if rule.accept.search(text)), None)
    return Choice(options=tuple(options), selected=selected, accept=accept)


def _prompt(tail: Sequence[str]) -> Screen | None:
    for rule in PROMPTS:
        question = [_unboxed(line) for line in tail if rule.question.search(line)]
        if not question:
            continue
        choice = _parse_choice(tail, rule)
        if choice.options:
            evidence = (question[0], *choice.options)
            return Screen(state=rule.state, evidence=evidence, choice=choice)
    return None


# ------------------------------------------------------------------------------- the other screens

_DEAD = re.compile(r"^Pane is dead\b")
# A fatal start-up error the CLI printed before exiting (the pane may not be reported dead yet); Gemini's
# is "Error in <settings.json path>: …" (its path may wrap in a narrow pane).
_FATAL = re.compile(r"^Error loading configuration|^Error: loading config|^Error finding codex home|"
                    r"cannot be used with root/sudo privileges|^Error in /", _I)
_LOGIN = re.compile(r"Sign in with ChatGPT|Provide your own API key|Select login method|Login with Google|"
                    r"Waiting for auth|Please run /login|Invalid API key|Choose the text style|"
                    r"Unable to connect to Anthropic services|Missing environment variable|"
                    r"How would you like to authenticate|Enter Gemini API Key", _I)
_BUSY = re.compile(r"esc to interrupt|esc to cancel|\(\d+s\s*•\s*esc", _I)
# A line that tells the CLI's input line is live: footers and headers of the pinned versions.
_READY = {
    # the model status line under the input box ("mock-model default · /repo"): the splash Codex
    # draws before its trust prompt has an input line and the shortcuts hint, but not this line
    "codex": re.compile(r"^\S+(?: \S+)? · \S"),
    "claude": re.compile(r"\? for shortcuts|bypass permissions on|Claude Code v\d|auto-accept edits", _I),
    # the placeholder of its empty input line, or the footer under it ("workspace (/directory) … sandbox")
    "gemini": re.compile(r"Type your message|@path/to/file|^workspace \(/directory\)", _I),
    "placeholder": re.compile(r"^panefleet placeholder agent \S+ ready$|^received: "),
}
# The line a CLI prints under its answer when a turn has ended (the pinned versions' wordings).
_TURN_DONE = {
    "codex": re.compile(r"^Worked for \S+ • "),
    "claude": re.compile(r"^✻ \S+ for \S+ · done\b"),
    # Gemini prints no turn-done line: its answer ("✦ …") above a live input line, not busy, is a turn ended
    "gemini": re.compile(r"^✦ "),
}
# The line a CLI prints as it restarts itself in the same pane (Gemini, after its folder was trusted,
# without clearing the screen): what is above it is the old process's screen, e.g. the answered dialog.
_RESTART = {
    "gemini": re.compile(r"^Gemini CLI is restarting\b"),
}
# A line that shows the CLI's interface is up, for a CLI that draws its input line and footer before:
# Gemini shows them for a moment before its trust dialog in a never-trusted folder (text typed then is
# lost); its header ("Gemini CLI v0.61.0", "Tips for getting started:") or a turn in the transcript
# ("> message", "✦ answer") comes with the interface (tests/goldens/screens/gemini/input_line_before_trust.json).
_UP = {
    "gemini": re.compile(r"Gemini CLI v\d|^Tips for getting started|^✦ |^> \S"),
}
# A wait the CLI announces while it initialises (Codex: "state db backfill is running at …; waiting up to
# 30s before retrying startup initialization"): still starting, for the reason shown. Matched across
# rows with whitespace removed, so that wrapping at any width cannot split it.
_INIT_WAIT = {
    "codex": re.compile(r"(?:backfillisrunning|waitingupto\d+s?beforeretrying)(?:.*?startupinitiali[sz]ation)?", _I),
}
# The CLI's own banner: seen with no ready line, the CLI is still starting (e.g. Codex's splash).
_BANNER = {
    "codex": re.compile(r">_ OpenAI Codex"),
    "claude": re.compile(r"Claude Code v\d"),
    "gemini": re.compile(r"Gemini CLI|GEMINI", _I),
}
_INPUT = {
    "codex": "›",
    "claude": "❯>",
    "gemini": "*>",  # "*" with --approval-mode yolo, ">" in the default mode
    "placeholder": ">",
}
# Lines below an input line that are not part of it: footers, separators, status lines.
_FOOTER = re.compile(r"^[─━═—-]{3,}|\? for shortcuts|for agents|bypass permissions|· /|context left|"
                     r"send\s*·|esc to|shift\+tab|⚠|^workspace \(/directory\)", _I)


def _input_text(cli: str, lines: Sequence[str]) -> tuple[str, int | None]:
    """The text of the last input line (and its index), continuation lines included."""
    markers = _INPUT.get(cli, "")
    if not markers:
        return "", None
    start = None
    for index in range(len(lines) - 1, max(-1, len(lines) - 1 - TAIL), -1):
        stripped = lines[index].strip().strip("│").strip()
        if stripped[:1] and stripped[:1] in markers:
            start = index
            break
    if start is None:
        return "", None
    first = lines[start].strip().strip("│").strip()[1:].strip()
    parts = [first]
    for line in lines[start + 1:]:
        stripped = line.strip().strip("│").strip()
        if not stripped or _FOOTER.search(stripped):
            break
        parts.append(stripped)
    return " ".join(p for p in parts if p), start


def classify(cli: str, capture: str, *, dead: bool = False) -> Screen:
    """What ``capture`` (``capture-pane -p`` of a pane running ``cli``) shows."""
    lines = _since_restart(cli, screen_lines(capture))
    tail = lines[-TAIL:]
    nonblank = [line.strip() for line in tail if line.strip()]
    dead_lines = [line for line in nonblank if _DEAD.search(line)]
    if dead or dead_lines:
        return _exited(lines)
    if not nonblank:
        return Screen(state="starting")
    prompt = _prompt(tail)
    if prompt is not None:
        return prompt
    login = [_unboxed(line) for line in nonblank if _LOGIN.search(line)]
    if login:
        return Screen(state="login_required", evidence=tuple(login[:3]))
    typed, _ = _input_text(cli, tail)
    ready_rule = _READY.get(cli)
    ready = [line for line in nonblank if ready_rule is not None and ready_rule.search(line)]
    busy = [line for line in nonblank if _BUSY.search(line)]
    if not ready and not busy and any(_FATAL.search(line) for line in nonblank):
        return _exited(lines)  # the CLI printed its fatal error; tmux has not reported it dead yet
    waiting = _wrapped_match(_INIT_WAIT.get(cli), nonblank)
    if waiting:
        return Screen(state="starting", evidence=waiting)
    if busy:
        return Screen(state="busy", evidence=(busy[-1],), input_text=typed)
    if ready and (not _INPUT.get(cli, "") or _has_input_line(cli, tail)):
        up = _UP.get(cli)
        if up is not None and not any(up.search(line) for line in nonblank):
            return Screen(state="starting", evidence=tuple(ready[-2:]))
        turn_done = _TURN_DONE.get(cli)
        done = [line for line in nonblank if turn_done is not None and turn_done.search(line)]
        if done:
            return Screen(state="idle", evidence=(done[-1], *ready[-1:]), input_text=typed)
        return Screen(state="ready", evidence=tuple(ready[-2:]), input_text=typed)
    banner = _BANNER.get(cli)
    if (len(nonblank) <= 2 or banner is not None and any(banner.search(line) for line in lines)) and not ready:
        return Screen(state="starting", evidence=tuple(nonblank))
    return Screen(state="unknown", evidence=tuple(nonblank[-3:]))


def _since_restart(cli: str, lines: list[str]) -> list[str]:
    """``lines`` from the CLI's last restart line on (all of them when it shows none)."""
    rule = _RESTART.get(cli)
    cuts = [i for i, line in enumerate(lines) if rule is not None and rule.search(line.strip())]
    return lines[cuts[-1]:] if cuts else lines


def _wrapped_match(rule: re.Pattern[str] | None, rows: Sequence[str]) -> tuple[str, ...]:
    """The rows (stripped) that a match of ``rule`` spans in ``rows`` read as one text without
    whitespace, or ``()``: a message wrapped over rows at any width is found whole."""
    if rule is None:
        return ()
    squashed = [squash(row) for row in rows]
    found = rule.search("".join(squashed))
    if found is None:
        return ()
    spanned, offset = [], 0
    for row, text in zip(rows, squashed, strict=True):
        if offset < found.end() and offset + len(text) > found.start():
            spanned.append(row.strip())
        offset += len(text)
    return tuple(spanned)


def _exited(lines: Sequence[str]) -> Screen:
    """An exited CLI: its own fatal error and the lines right after it, else its last lines."""
    kept = [line.strip() for line in lines if line.strip() and not _DEAD.search(line)]
    fatal = [i for i, line in enumerate(kept) if _FATAL.search(line)]
    if fatal:
        kept = kept[fatal[-1]:fatal[-1] + 4]
    dead = [line.strip() for line in lines if _DEAD.search(line.strip())]
    return Screen(state="exited", evidence=tuple(kept[-5:]) or tuple(dead[-1:]))


def _has_input_line(cli: str, tail: Sequence[str]) -> bool:
    return _input_text(cli, tail)[1] is not None


def shows_submitted(cli: str, capture: str, token: str) -> bool:
    """Whether ``token`` (a distinctive part of a typed message) shows as submitted: it appears on the
    screen outside the input line (in the transcript, or echoed by the placeholder agent)."""
    lines = screen_lines(capture)
    _, start = _input_text(cli, lines)
    above = lines if start is None else lines[:start]
    return squash(token) in squash("\n".join(above))


def shows_typed(cli: str, capture: str, token: str) -> bool:
    """Whether ``token`` is still waiting in the input line (typed, not submitted)."""
    return squash(token) in squash(classify(cli, capture).input_text)
