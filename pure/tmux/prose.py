"""Prose for problems: informative sentences derived from a problem's fields, never used to decide."""

from __future__ import annotations

import datetime
from typing import Any

import attrs

from pure.convert import unstructure

_MALFORMED_TEXT: dict[tuple[Any, Any], str] = {
    ("pane_id", "syntax"): "the pane id is not % followed by digits",
    ("pane_id", "duplicate"): "the pane id is listed twice",
    ("pane_dead", "syntax"): "pane_dead is not 0 or 1",
    ("pane_pid", "syntax"): "pane_pid is not digits",
    ("pane_pid", "range"): "pane_pid is not a positive safe integer",
    ("pane_pid", "empty"): "the pane has an empty pane_pid",
    ("tmux_server", "syntax"): "the server's pid or start time is not a positive safe integer",
    ("tmux_server", "differs"): "the row names another tmux server than the first row",
}


def server_words(server: object) -> str:
    """``PID@START`` (``pure/tmux/parse.py`` ``server_of``) as people read it: its pid and its start, UTC."""
    pid, _, start = str(server).partition("@")
    if not start.isdigit():
        return f"tmux server {server}"
    when = datetime.datetime.fromtimestamp(int(start), datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"tmux server pid {pid} started {when}"


def describe(problem: object) -> str:
    """Informative prose for a problem, given as its object or its wire form ("" for none). It is
    derived from the fields alone and never used to decide anything."""
    if problem is None:
        return ""
    if attrs.has(type(problem)):
        problem = unstructure(problem)
    if not isinstance(problem, dict):
        return ""
    p: dict[str, Any] = problem
    code = p.get("code")
    if code == "malformed_snapshot":
        if p.get("rule") == "field_count":
            return f"row {p.get('row')}: expected 3 or 5 tab-separated fields as in row 1, got {p.get('fields')}"
        return f"row {p.get('row')}: {_MALFORMED_TEXT.get((p.get('field'), p.get('rule')), str(p.get('rule')))}"
    if code in ("query_failed", "kill_failed"):
        if p.get("stderr"):
            return str(p["stderr"])
        return "tmux could not be started" if p.get("exit_code") is None else f"tmux exited {p.get('exit_code')}"
    if code == "server_replaced":
        if p.get("found") is None:
            return f"the listing names no tmux server, and the pane was pinned on {server_words(p.get('pinned'))}"
        return (f"the tmux server was replaced: the pane was pinned on {server_words(p.get('pinned'))}, the socket "
                f"now answers for {server_words(p.get('found'))}")
    if code == "invalid_pane_id":
        return "pane id must match %<digits>"
    if code == "pid_unpinned":
        return f"no pid was pinned for the pane (it has pid {p.get('found_pid')})"
    if code == "pid_mismatch":
        return f"expected pid {p.get('pinned_pid')}, found {p.get('found_pid')}"
    if code == "owner_not_authorized":
        return "pane owner authorization changed"
    if code == "still_live":
        return "pane still live after kill-pane"
    return str(code or "")


