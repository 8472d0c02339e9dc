"""What a plan changes, in the words of the domain: one line per thing, read from the effects its
steps state (``m.Effect``, set where the planner builds each step) and the debt it predicts.

Every change step of the journal belongs to exactly one *thing*, the ``(kind, subject)`` of its effect,
so the list is complete: a change step that states no effect still gets a line of its own
(``~ step …``) rather than being left out. A thing is added (``+``), changed (``~``), removed (``-``)
or kept as debt (``!``): the strongest its steps state (``RANK``: a worker added and then rolled back
was still added), followed by the details they state, each once; a detail ``what a → b`` after
``what x → a`` makes ``what x → b`` (a config rewritten three times reads ``generation 1 → 4``). This
module only groups and prints: it decides nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from attrs import define, field

from pure import model as m
from pure.program import is_mutation

ACTIONS = {"add": "+", "change": "~", "remove": "-", "debt": "!"}
RANK = {"change": 0, "debt": 1, "remove": 2, "add": 3}
_MOVE = re.compile(r"^(?P<what>.+) (?P<was>\S+) → (?P<now>\S+)$")
KIND_ORDER: tuple[str, ...] = ("worker", "session", "pane", "workspace", "run", "team", "config", "task", "dispatch",
                               "events", "debt", "file", "step")
_LABELLED = ("pane", "session", "workspace", "run", "team")  # kinds whose subject reads better after its kind


@define
class Change:
    action: str  # add | change | remove | debt
    kind: str
    subject: str
    detail: str = ""
    steps: list[int] = field(factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "kind": self.kind, "subject": self.subject, "detail": self.detail,
                "steps": list(self.steps)}

    @property
    def label(self) -> str:
        """The subject as a person reads it: ``pane %4``, ``run r1``; workers, files and tasks as they are."""
        if self.kind in _LABELLED and not self.subject.startswith(self.kind + " "):
            return f"{self.kind} {self.subject}"
        return self.subject

    def line(self, width: int) -> str:
        text = f"{ACTIONS.get(self.action, '?')} {self.label:<{width}}"
        return (text + "  " + self.detail).rstrip() if self.detail else text.rstrip()

    def add(self, said: m.Effect, step: int | None = None) -> None:
        """One more step (or predicted debt, without a step) that states ``said`` of this thing."""
        if RANK[said.action] > RANK[self.action]:
            self.action = said.action
        if step is not None:
            self.steps.append(step)
        pieces = _pieces(self.detail)
        for piece in _pieces(said.detail):
            move = _MOVE.match(piece)
            earlier = next((i for i, p in enumerate(pieces) if move and (e := _MOVE.match(p)) and
                            e["what"] == move["what"] and e["now"] == move["was"]), None)
            if earlier is not None and move is not None:
                pieces[earlier] = pieces[earlier].rsplit(" ", 1)[0] + " " + move["now"]
            elif piece not in pieces:
                pieces.append(piece)
        self.detail = ", ".join(pieces)


def _pieces(detail: str) -> list[str]:
    """A detail's parts: what its ``, `` separates outside parentheses (``pid 5, tagged t`` stays whole)."""
    pieces, depth, start = [], 0, 0
    for at, char in enumerate(detail):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and detail.startswith(", ", at):
            pieces.append(detail[start:at])
            start = at + 2
    return [p for p in [*pieces, detail[start:]] if p]


def _observed_to_fail(entry: m.Entry) -> bool:
    """A file or store change the dry run observed to fail (a folder that cannot be written,
    ``shell/run/dryrun.py``) changes nothing; the predicted result says why."""
    return isinstance(entry.step, (m.WriteFile, m.AppendFile, m.MakeDir, m.RemovePath, m.Store)) \
        and isinstance(entry.observation, (m.Ack, m.JsonResult)) and not entry.observation.ok


def _unstated(step: m.Step) -> m.Effect:
    from shell.run.step_text import describe_step

    text = describe_step(step)
    return m.effect("change", "step", text if len(text) <= 60 else text[:57] + "...")


def changes(journal: Sequence[m.Entry], done: m.Done | None = None) -> list[Change]:
    """The plan's changes, one per thing, in KIND_ORDER (then in journal order)."""
    things: dict[tuple[str, str], Change] = {}
    for index, entry in enumerate(journal, start=1):
        if not is_mutation(entry.step) or _observed_to_fail(entry):
            continue
        said = getattr(entry.step, "effect", None) or _unstated(entry.step)
        thing = things.setdefault((said.kind, said.subject), Change(action=said.action, kind=said.kind,
                                                                    subject=said.subject))
        thing.add(said, index)
    for debt in done.debt if done is not None else ():
        what, retry = m.DEBT_WORDS[debt.kind]
        subject = f"{debt.kind} {debt.subject}"
        things.setdefault(("debt", subject), Change(action="debt", kind="debt", subject=subject)).add(
            m.effect("debt", "debt", subject, f"kept as debt: {debt.reason} ({what}; {retry})"))
    return sorted(things.values(), key=lambda c: (KIND_ORDER.index(c.kind), c.steps[:1] or [0]))


def count_line(found: Sequence[Change]) -> str:
    counts = {action: sum(1 for c in found if c.action == action) for action in ACTIONS}
    line = f"Plan: {counts['add']} to add, {counts['change']} to change, {counts['remove']} to remove"
    if counts["debt"]:
        line += f", {counts['debt']} kept as debt"
    return line + "."


def render_changes(found: Sequence[Change]) -> list[str]:
    if not found:
        return ["  (nothing)"]
    width = min(max(len(c.label) for c in found), 24)
    return ["  " + c.line(width) for c in found]
