"""A program of a team that lives on another machine: every step it asks for that can name a host names that
host (``host`` of a step, pure/model.py), so its tmux server, files, locks and tools are that machine's, and
the program itself is unchanged. The executor does such a step there and never here (``shell/run/remote.py``).

What stays here: the clock, fresh ids, sleeping, and panefleet's own store. Ahead-of-time reads are placed
the same way, so an announced read is the step that is later asked for (``pure/program.py`` ``Ahead``); an
interrupt thrown into the placed program reaches the program itself.
"""

from __future__ import annotations

import attrs

from pure import model as m
from pure.model import Done, Step
from pure.program import Ahead, Hold, Program

PLACEABLE = (m.Run, m.ReadFile, m.WriteFile, m.AppendFile, m.RemovePath, m.MakeDir, m.ListDir, m.Stat, m.RealPath,
             m.AcquireLock, m.ReleaseLock)


def placed_step(step: m.Step, host: str) -> m.Step:
    """``step`` naming ``host``, when it is a step that can name one and names none yet."""
    if isinstance(step, PLACEABLE) and step.host is None:
        return attrs.evolve(step, host=host)
    return step


def placed(item: Step | Ahead | Hold, host: str) -> Step | Ahead | Hold:
    """What a program yields (a step, an ``Ahead`` or a ``Hold``) with its steps naming ``host``."""
    if isinstance(item, Ahead):
        return Ahead(steps=tuple(placed_step(step, host) for step in item.steps))
    if isinstance(item, Hold):
        return item
    return placed_step(item, host)


def on_host(program: Program, host: str) -> Program:
    """``program`` with every step placed on ``host`` (:func:`placed`); what it is sent, what is thrown into
    it and what it returns pass through unchanged."""
    try:
        item = next(program)
    except StopIteration as done:
        result: Done = done.value
        return result
    while True:
        try:
            answer = yield placed(item, host)
        except GeneratorExit:
            program.close()
            raise
        except BaseException as thrown:  # an interrupt (pure/program.py ``Interrupted``) or any other
            try:
                item = program.throw(thrown)
            except StopIteration as done:
                result = done.value
                return result
            continue
        try:
            item = program.send(answer)
        except StopIteration as done:
            result = done.value
            return result
