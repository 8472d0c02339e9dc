"""Every tmux format panefleet asks for, and the one place an answer is cut into rows and fields.

A query is its field list: the ``-F`` format (or ``display-message -p`` format) is built from the
list, and an answer is cut back along the same list, so a format and its reader cannot drift apart
(libtmux builds its formats from one field list the same way). What a field must hold is checked by
the reader that knows its meaning: the pane table in ``pure/tmux/parse.py``, the geometry in
``pure/omx/layout.py``, a new pane in ``pure/tmux/owned.py``, strays in ``pure/omx/strays.py``.
"""

from __future__ import annotations

from attrs import frozen


def split_rows(stdout: str) -> list[str]:
    """``\\r\\n`` becomes ``\\n``; rows are split on ``\\n``; one final empty row (a trailing newline)
    is dropped. A lone ``\\r`` stays in its field."""
    lines = stdout.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@frozen
class Query:
    """The tmux variables of one query, in order. ``rest``: the last field holds the rest of the row,
    tabs included (a start command may hold tabs); otherwise a row is cut at every tab, and a row
    with another number of fields than ``fields`` is the reader's to refuse."""

    fields: tuple[str, ...]
    rest: bool = False

    @property
    def format(self) -> str:
        return "\t".join("#{" + name + "}" for name in self.fields)

    def cut(self, row: str) -> list[str]:
        """One row's fields."""
        return row.split("\t", len(self.fields) - 1) if self.rest else row.split("\t")

    def rows(self, stdout: str) -> list[list[str]]:
        """Every row of an answer (``split_rows``), cut into fields."""
        return [self.cut(row) for row in split_rows(stdout)]


# the pane table every proof reads (pure/tmux/parse.py), each row naming the server that answered: its
# pid and start time (``pure/tmux/parse.py`` ``server_of``)
PANES = Query(("pane_id", "pane_dead", "pane_pid", "pid", "start_time"))
# the pane table with each pane's start command, read for strays and left-over leaders (pure/omx/strays.py), and
# the server that answered, which a stray's teardown is then judged on
PANES_STARTED = Query(("pane_id", "pane_dead", "pane_pid", "pid", "start_time", "pane_start_command"), rest=True)
# where each pane sits in its window, for the placement of a new worker (pure/omx/layout.py)
GEOMETRY = Query(("pane_id", "session_id", "window_id", "window_zoomed_flag", "pane-border-status",
                  "pane_left", "pane_top", "pane_width", "pane_height", "window_width", "window_height"))
# what a worker pane's split-window/new-window -P answers: the pane, its first process and the server it is
# on (pure/tmux/owned.py)
NEW_PANE = Query(("pane_id", "pane_pid", "pid", "start_time"), rest=True)
# what a new session or a leader's window -P answers: the pane
PANE_ID = Query(("pane_id",))
# where a proven pane is, for `team attach` (pure/omx/peek.py)
LOCATE = Query(("session_id", "window_id", "session_name"))
# the session of a leader pane (pure/team.py)
SESSION_NAME = Query(("session_name",))
# about the client `team attach` and `team watch` speak to (shell/cli/peek.py, shell/cli/watch.py)
SOCKET_PATH = Query(("socket_path",))
CLIENT_READONLY = Query(("client_readonly",))
CLIENT_NAME = Query(("client_name",))


def table(stdout: str) -> list[list[str]]:
    """An answer of a format the reader does not know (a saved plan compares any listing it recorded),
    every row cut at every tab."""
    return [row.split("\t") for row in split_rows(stdout)]
