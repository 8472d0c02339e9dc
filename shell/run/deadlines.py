"""How long one external call (tmux, git, herdr, anything else) may run before it is killed.

``PANEFLEET_CALL_TIMEOUT`` overrides the defaults: a comma-separated list of ``SECONDS`` (every
tool) and ``TOOL=SECONDS`` (one tool) items, e.g. ``5`` or ``tmux=5,git=60`` or ``20,git=300``.
Seconds are positive decimals. Kept free of heavy imports: ``cli.py`` validates the variable
before any command runs, so a bad value is a usage error, not a failure in the middle of a run.

Defaults (see docs/design-notes.md, "Every external call has a deadline"):

* ``tmux`` 10 s — every tmux command panefleet sends is an in-server query or a single pane
  operation answered in milliseconds (≈5 ms per call, ``bench/calls.py``); 10 s is far beyond
  any healthy answer and as long as oh-my-codex waits for the scaling lock.
* ``git`` 120 s — ``git worktree add`` checks a whole tree out and runs the repository's hooks;
  on a large repository and a slow disk that takes tens of seconds.
* ``herdr`` 30 s — a local server answering over a socket; the slack covers a server that is
  busy starting its panes.
* ``herdr-machine`` 120 s — a herdr call to a saved machine (``herdr --machine M …``, herdr 0.9.1)
  goes over SSH: a connection set up again (herdr reconnects a dropped one), a slow link and the
  remote server's own 30 s all fit in it. ``PANEFLEET_CALL_TIMEOUT=herdr-machine=SECONDS`` sets it;
  ``herdr=SECONDS`` leaves it alone (``deadline_key``).
* ``ssh`` 30 s — one call to another machine (``shell/run/hosts.py``): connecting gives up after 10 s
  (``pure/hosts.py``), a call over the open master connection costs about what it costs locally.
* anything else 60 s.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

ENV_VAR = "PANEFLEET_CALL_TIMEOUT"
DEFAULT_SECONDS: Mapping[str, float] = {"tmux": 10.0, "git": 120.0, "herdr": 30.0, "herdr-machine": 120.0,
                                        "ssh": 30.0}
OTHER_SECONDS = 60.0
# SIGTERM first (git removes its index.lock, tmux clients detach cleanly), SIGKILL this much later.
KILL_GRACE_SECONDS = 0.5

_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?|\.[0-9]+")


@dataclass(frozen=True)
class CallDeadlines:
    per_tool: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_SECONDS))
    other: float = OTHER_SECONDS

    def seconds(self, tool: str) -> float:
        return self.per_tool.get(tool, self.other)


def _seconds(text: str, item: str) -> float:
    value = float(text) if _SECONDS.fullmatch(text) else math.nan
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{ENV_VAR}: {item!r} is not a positive number of seconds "
                         "(expected SECONDS or TOOL=SECONDS items, e.g. 5 or tmux=5,git=60)")
    return value


def parse(text: str | None) -> CallDeadlines:
    """The deadlines ``text`` (the variable's value) asks for; ``ValueError`` names what is wrong."""
    if text is None or text.strip() == "":
        return CallDeadlines()
    everything: float | None = None
    named: dict[str, float] = {}
    for raw in text.split(","):
        item = raw.strip()
        tool, equals, value = item.partition("=")
        if not equals:
            everything = _seconds(item, item)
            continue
        tool = tool.strip()
        if tool not in DEFAULT_SECONDS:
            known = ", ".join(sorted(DEFAULT_SECONDS))
            raise ValueError(f"{ENV_VAR}: unknown tool {tool!r} in {item!r} (known: {known})")
        named[tool] = _seconds(value.strip(), item)
    base = dict(DEFAULT_SECONDS) if everything is None else dict.fromkeys(DEFAULT_SECONDS, everything)
    return CallDeadlines(per_tool={**base, **named}, other=OTHER_SECONDS if everything is None else everything)


def deadline_key(tool: str, args: tuple[str, ...]) -> str:
    """Which deadline a call gets: ``herdr-machine`` for herdr on a saved machine, else its tool's."""
    return "herdr-machine" if tool == "herdr" and args[:1] == ("--machine",) else tool


def from_env(env: Mapping[str, str]) -> CallDeadlines:
    return parse(env.get(ENV_VAR))


def describe(seconds: float) -> str:
    """``10`` for 10.0, ``0.5`` for 0.5: how a deadline is shown in messages."""
    return f"{seconds:g}"
