"""Normalisation shared by the oracle generator and the differential test."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pure.tmux import PANE_FORMAT, TRANSCRIPT_NOTE

TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def norm_text(text: str, cwd: Path) -> str:
    return UUID.sub("<UUID>", TS.sub("<TS>", text.replace(str(cwd), "$CWD")))


def norm(value: Any, cwd: Path) -> Any:
    if isinstance(value, str):
        return norm_text(value, cwd)
    if isinstance(value, list):
        return [norm(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: norm(v, cwd) for k, v in value.items()}
    return value


def files(cwd: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(cwd.rglob("*")):
        rel = str(path.relative_to(cwd))
        if rel.startswith(("pf", "bin", "stub", ".git")) or "/.git" in rel:
            continue
        if "/transcripts/" in rel or rel.endswith("/transcripts"):
            continue  # a designed difference: panefleet keeps worker transcripts (pure/omx/transcripts.py)
        if path.is_file():
            out[rel] = norm_text(path.read_text(encoding="utf-8"), cwd)
        elif path.is_dir() and not any(path.iterdir()):
            out[rel + "/"] = ""
    return out


# oh-my-codex's pane table: panefleet's asks for the server that answers too (pure/tmux/facts.py ``PANES``)
OMX_PANE_FORMAT = "#{pane_id}\t#{pane_dead}\t#{pane_pid}"


def as_oh_my_codex_lists(args: list[str]) -> list[str]:
    """A designed difference: panefleet's ``list-panes`` asks each row for the tmux server that answers
    (docs/tmux-proofs.md, "The tmux server"), written here as oh-my-codex's pane table."""
    return [OMX_PANE_FORMAT if arg == PANE_FORMAT and args[0] == "list-panes" else arg for arg in args]


def tmux_calls_without_transcripts(journal: list[Any]) -> list[list[str]]:
    """panefleet's tmux calls from a journal, without those that keep worker transcripts.

    A designed difference (docs/scale-down.md, "Deviations (conscious)"): before it kills a worker's
    pane, panefleet proves it and reads its scrollback (``L, S, L, capture-pane``, each step noted
    ``transcript``: pure/omx/transcripts.py); oh-my-codex keeps no transcript. Those calls are left
    out here, and only those. Its pane table is written as oh-my-codex's (``as_oh_my_codex_lists``)."""
    return [as_oh_my_codex_lists(list(e.step.args)) for e in journal if e.step.op == "run" and e.step.tool == "tmux"
            and e.step.note != TRANSCRIPT_NOTE]
