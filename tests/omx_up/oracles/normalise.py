"""Normalisation shared by the scale-up oracle generator and the differential test."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from pure.omx import startup_script
from pure.tmux import NEW_PANE_FORMAT, TRANSCRIPT_NOTE
from tests.omx_down.oracles.normalise import as_oh_my_codex_lists

TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|id-\d{4}(?:0-0000-0000-0000-000000000000)?")
GENERATION = re.compile(r'"config_generation": \d+')
# Not compared: oh-my-codex's logs but its delivery log, its current-task baseline (a planning feature
# outside scaling) and the inbox text (panefleet renders the same header and task list, not the same
# instructions). The delivery log is compared line by line; its file is named by the day it was written.
SKIPPED = (".omx/state/current-task-baseline.json",)
LOGS = ".omx/logs/"
DELIVERY_LOG = re.compile(r"\.omx/logs/team-delivery-\d{4}-\d\d-\d\d\.jsonl$")
# A designed difference: the transcripts panefleet keeps of the worker panes a rollback kills
# (pure/omx/transcripts.py; docs/scale-up.md, "Decisions"). oh-my-codex keeps none.
TRANSCRIPTS = re.compile(r"\.omx/state/team/[^/]+/transcripts/")
# Another: the intent a scale-up writes before each split (pure/omx/strays.py), left by a run whose
# rollback could not finish, so that the next command finds the pane it may have made.
INTENT = re.compile(r"\.omx/state/team/[^/]+/runtime/worker-[0-9]+\.intent$")
SKIPPED_NAMES = ("inbox.md",)


def norm_text(text: str, cwd: Path) -> str:
    return UUID.sub("<ID>", TS.sub("<TS>", text.replace(str(cwd), "$CWD")))


def norm(value: Any, cwd: Path) -> Any:
    return json.loads(norm_text(json.dumps(value), cwd))


def files(cwd: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(cwd.rglob("*")):
        rel = str(path.relative_to(cwd))
        if rel.startswith(SKIPPED) or path.name in SKIPPED_NAMES or not path.is_file() or TRANSCRIPTS.match(rel) \
                or INTENT.match(rel) or rel.startswith(LOGS) and not DELIVERY_LOG.match(rel):
            continue
        if DELIVERY_LOG.match(rel):
            rel = ".omx/logs/team-delivery-<DATE>.jsonl"
        if rel.startswith(".git/") or "/.git" in rel or (rel.startswith(".omx/team/") and path.name == "AGENTS.md"):
            continue  # git internals; the generated worktree-root instructions differ by design
        out[rel] = norm_text(path.read_text(encoding="utf-8"), cwd)
    return out


def tmux_calls_as_oh_my_codex_makes_them(journal: list[Any]) -> list[list[str]]:
    """panefleet's tmux calls from a journal, without the repeated proofs of the after-kill back-off.

    A designed difference: oh-my-codex proves a killed pane once, after a fixed pause; panefleet
    proves it right after the kill and, only while it is still listed with its pinned pid, again
    after each pause of the back-off (pure/tmux/teardown.py ``kill_backoff_ms``). Those extra
    ``list-panes`` calls — each one right after such a pause — are left out here. A second one:
    panefleet submits with ``Enter`` where oh-my-codex 0.20.3 sends ``C-m`` (docs/scale-up.md,
    "Decisions"), so panefleet's ``Enter`` is written here as ``C-m``. A third: before it kills a
    worker's pane, panefleet keeps its transcript (``L, S, L, capture-pane``, each step noted
    ``transcript``: pure/omx/transcripts.py); those calls are left out too. A fourth: a worker pane's
    ``split-window -P -F`` asks for its pid and server too (``pure/tmux/owned.py`` ``NEW_PANE_FORMAT``, pinned from
    the split's own answer), written here as oh-my-codex's ``#{pane_id}``. A fifth: its command pins the
    pane's first process before it runs the startup script (``startup_script.self_pinned_startup_command``),
    written here as oh-my-codex's ``startup_command``. A sixth: its pane table asks for the tmux server too,
    written as oh-my-codex's (``as_oh_my_codex_lists``).
    """
    calls: list[list[str]] = []
    proving_a_kill = paused = False  # inside kill-pane, list-panes, (pause, list-panes)*
    for entry in journal:
        step = entry.step
        if step.op == "run" and step.note == TRANSCRIPT_NOTE:
            continue
        if step.op == "sleep":
            paused = proving_a_kill
            continue
        if step.op != "run" or step.tool != "tmux":
            proving_a_kill = paused = False
            continue
        verb = step.args[0]
        if not (paused and verb == "list-panes"):
            proving_a_kill = verb == "list-panes" and bool(calls) and calls[-1][0] == "kill-pane"
            args = as_oh_my_codex_lists(list(step.args))
            if verb == "send-keys" and args[-1] == "Enter" and "-l" not in args:
                args[-1] = "C-m"
            if verb == "split-window" and "-F" in args and args[args.index("-F") + 1] == NEW_PANE_FORMAT:
                args[args.index("-F") + 1] = "#{pane_id}"
            if verb == "split-window":
                args[-1] = _as_oh_my_codex_starts(args[-1])
            calls.append(args)
        paused = False
    return calls


def _as_oh_my_codex_starts(command: str) -> str:
    """A self-pinned split command as oh-my-codex's plain one; any other command as it is."""
    words = shlex.split(command)
    if len(words) == 6 and command == startup_script.self_pinned_startup_command(words[4], words[5]):
        return startup_script.startup_command(words[4])
    return command


def phases(calls: list[list[str]]) -> dict[str, list[list[str]]]:
    """Split a tmux log around dispatch: everything before the first keystroke/capture, the
    mutations (split/tag/kill with their arguments), and everything after the last one."""
    dispatch = [i for i, c in enumerate(calls) if c and c[0] in ("send-keys", "capture-pane")]
    if not dispatch:
        return {"before": calls, "mutations": [c for c in calls if c[0] in ("split-window", "set-option", "kill-pane")],
                "after": []}
    return {"before": calls[: _proof_start(calls, dispatch[0])],
            "mutations": [c for c in calls if c[0] in ("split-window", "set-option", "kill-pane")],
            "after": calls[dispatch[-1] + 1:]}


def _proof_start(calls: list[list[str]], index: int) -> int:
    """The index of the ``L`` that opens the ``L, S, L`` proof in front of ``calls[index]``."""
    start = index
    while start > 0 and calls[start - 1][0] in ("list-panes", "show-option") and index - start < 3:
        start -= 1
    return start
