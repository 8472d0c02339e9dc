"""A program placed on a host (pure/on_host.py) asks for the same steps, each naming the host, and decides
the same: replayed over every decision golden with its journal's steps placed, and interrupted midway."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pure import model as m
from pure import operations, wire
from pure.convert import unstructure
from pure.on_host import PLACEABLE, on_host, placed_step
from pure.program import Ahead, Driver, decide
from tests.core.test_golden_runner import _decision_goldens, _first_misfit

HOST = "build1"


def _golden(path: Path) -> tuple[Any, Any, list[m.Entry], dict[str, Any]]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    op = operations.get(data["operation"])
    assert op is not None
    request = wire.structure(data["request"], op.request_type).unwrap()
    journal = [wire.structure(raw, m.Entry).unwrap() for raw in data["journal"]]
    return op, request, journal, data


def _hostless(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _hostless(item) for key, item in value.items() if not (key == "host" and item == HOST)}
    if isinstance(value, list):
        return [_hostless(item) for item in value]
    return value


def _placed(journal: list[m.Entry]) -> list[m.Entry]:
    return [m.Entry(step=placed_step(entry.step, HOST), observation=entry.observation) for entry in journal]


@pytest.mark.parametrize("path", _decision_goldens(), ids=lambda p: p.stem)
def test_a_placed_program_asks_for_the_same_steps_on_the_host_and_decides_the_same(path: Path) -> None:
    op, request, journal, data = _golden(path)
    placed = _placed(journal)
    fits = _first_misfit(data["decision"], len(journal))
    for i in sorted({0, fits // 2, max(fits - 1, 0)}):
        if i < fits:
            assert decide(lambda: on_host(op.program(request), HOST), placed[:i]) == m.Next(steps=(placed[i].step,))
    got, expected = decide(lambda: on_host(op.program(request), HOST), placed), decide(lambda: op.program(request), journal)
    assert _hostless(unstructure(got)) == unstructure(expected)  # changes it lists name the host as well
    for entry in placed:
        assert not isinstance(entry.step, PLACEABLE) or entry.step.host == HOST


def test_an_interrupt_reaches_the_placed_program_and_it_undoes_what_it_made() -> None:
    scale_ups = [path for path in _decision_goldens() if path.parent.name == "omx_up"]
    tried = 0
    for path in scale_ups:
        op, request, journal, data = _golden(path)
        if len(journal) < 20 or data["decision"]["outcome"]["status"] != "ok":
            continue
        at = len(journal) * 2 // 3
        here = Driver(lambda op=op, request=request: op.program(request))
        there = Driver(lambda op=op, request=request: on_host(op.program(request), HOST))
        for entry, placed in zip(journal[:at], _placed(journal[:at]), strict=True):
            here.feed(entry.step, entry.observation)
            there.feed(placed.step, placed.observation)
        here.interrupt()
        there.interrupt()
        expected, got = here.decision(), there.decision()
        if isinstance(expected, m.Next):
            assert isinstance(got, m.Next) and got.steps == tuple(placed_step(s, HOST) for s in expected.steps)
        else:
            assert _hostless(unstructure(got)) == unstructure(expected)
        tried += 1
    assert tried >= 3


def test_ahead_reads_are_placed_and_the_clock_stays_here() -> None:
    read = m.ReadFile(path="/p/config.json")
    assert Ahead(steps=(placed_step(read, HOST),)).steps[0] == m.ReadFile(path="/p/config.json", host=HOST)
    assert placed_step(m.Clock(), HOST) == m.Clock() and placed_step(m.Sleep(ms=5), HOST) == m.Sleep(ms=5)
    assert placed_step(m.Stat(path="/x", host="other"), HOST) == m.Stat(path="/x", host="other")  # named already
