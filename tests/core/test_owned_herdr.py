"""Only ``pure/herdr/fleet/owned.py`` builds a herdr step that changes something, or makes an
ownership token (docs/herdr-fleet.md; the tmux side: tests/core/test_owned_panes.py).

Read from the source (``ast``): outside ``owned.py`` no module of ``pure/``, ``shell/`` or
``cli.py`` builds an ``m.Run`` for herdr that is marked as changing something (nor one whose
``mutates`` it does not spell out as False), builds a herdr ``Run`` at all except the read-only
builder in ``pure/herdr/fleet/calls.py``, or makes an ``Owned`` workspace or ``OwnedHerdrPane``. Each
changing step is built there from a token that discovery, a listing of an owned workspace or a
creating call's answer gave.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pure import model as m
from pure.herdr.fleet import owned
from pure.herdr.fleet.vocabulary import Target
from tests.core.source_calls import ROOT, call_name, project_sources

OWNED = ROOT / "pure" / "herdr" / "fleet" / "owned.py"
READS = ROOT / "pure" / "herdr" / "fleet" / "calls.py"
TOKENS = {"Owned", "OwnedHerdrPane"}


def _sources() -> list[Path]:
    return [f for f in project_sources() if f != OWNED]


def violations(path: Path, root: Path = ROOT, reads: Path = READS) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name, where = call_name(node.func), f"{path.relative_to(root)}:{node.lineno}"
        keywords = {k.arg: k.value for k in node.keywords}
        tool = keywords.get("tool")
        if name == "Run" and isinstance(tool, ast.Constant) and tool.value == "herdr":
            mutates = keywords.get("mutates")
            if mutates is not None and not (isinstance(mutates, ast.Constant) and mutates.value is False):
                found.append(f"{where}: a changing herdr Run outside owned.py")
            elif path != reads:
                found.append(f"{where}: a herdr Run built by hand")
        elif name in TOKENS:
            found.append(f"{where}: {name} made outside owned.py")
    return found


def test_only_owned_builds_changing_herdr_steps_and_tokens() -> None:
    assert [v for path in _sources() for v in violations(path)] == []


def test_the_check_sees_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("m.Run(tool='herdr', args=a, mutates=True)\nRun(tool='herdr', args=a, mutates=flag)\n"
                   "Run(tool='herdr', args=a)\nOwned('w1', 'alpha', None)\nfleet.OwnedHerdrPane('w1:p1', 'w1')\n"
                   "Run(tool='tmux', args=a, mutates=True)\n")
    found = [v.split(": ", 1)[1] for v in violations(bad, tmp_path, reads=tmp_path / "calls.py")]
    assert found == ["a changing herdr Run outside owned.py", "a changing herdr Run outside owned.py",
                     "a herdr Run built by hand", "Owned made outside owned.py", "OwnedHerdrPane made outside owned.py"]


def test_every_changing_step_takes_a_token() -> None:
    ws = owned.created_workspace("w1", "alpha")
    pane = owned.created_pane(ws, "w1:p2")
    for where, lead in ((Target("s"), ("--session", "s")), (Target("", "m1"), ("--machine", "m1"))):
        programs = [owned.mark_workspace(where, ws), owned.close_workspace(where, ws), owned.create_tab(where, ws),
                    owned.split_below(where, pane), owned.set_up_pane(where, pane, "rename", "x"),
                    owned.close_pane_answer(where, pane), owned.release_agent(where, pane, "x"),
                    owned.create_workspace(where, "alpha")]
        steps = [next(p) for p in programs]
        assert all(isinstance(s, m.Run) and s.tool == "herdr" and s.mutates for s in steps)
        # a saved machine's calls carry --machine and never --session (herdr 0.9.1 refuses both)
        assert all(s.args[:2] == lead and "--session" not in s.args[2:] for s in steps)
        assert all("w1" in s.args for s in steps[:3]) and all("w1:p2" in s.args for s in steps[3:7])
