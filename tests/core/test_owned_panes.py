"""Only ``pure/tmux/`` builds a step that changes a pane, reads its screen or reads its owner tag.

Read from the source (``ast``): outside ``pure/tmux/``, no module of ``pure/``, ``shell/`` or
``cli.py`` calls the raw builder ``tmux(…)`` with one of the guarded verbs (or with a verb it does
not spell out), builds an ``m.Run`` for tmux itself, or makes a proof token. The guarded steps are
built in ``pure/tmux/owned.py`` from the token a proof returns, so each of them is behind the proof
there (docs/tmux-proofs.md, "The proof").
"""

from __future__ import annotations

import ast
from pathlib import Path

from pure import model as m
from pure import tmux as t
from tests.core.source_calls import ROOT, call_name, project_sources

GUARDED = {"kill-pane", "split-window", "new-window", "set-option", "send-keys", "capture-pane", "show-option",
           "respawn-pane", "select-pane", "resize-pane", "swap-pane", "break-pane", "join-pane", "pipe-pane",
           "kill-window", "kill-session", "kill-server"}
TOKENS = {"OwnedPane", "ClaimedPane", "SeenPane"}


def _sources() -> list[Path]:
    return [f for f in project_sources() if not f.is_relative_to(ROOT / "pure" / "tmux")]


def violations(path: Path, root: Path = ROOT) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name, where = call_name(node.func), f"{path.relative_to(root)}:{node.lineno}"
        if name == "tmux":
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                found.append(f"{where}: tmux(…) with a verb it does not spell out")
            elif first.value in GUARDED:
                found.append(f"{where}: tmux({first.value!r}, …) outside pure/tmux/")
        elif name == "Run" and any(k.arg == "tool" and isinstance(k.value, ast.Constant) and k.value.value == "tmux"
                                   for k in node.keywords):
            found.append(f"{where}: a tmux Run built by hand")
        elif name in TOKENS:
            found.append(f"{where}: {name} made outside pure/tmux/owned.py")
    return found


def test_only_pure_tmux_builds_guarded_steps_and_tokens() -> None:
    assert [v for path in _sources() for v in violations(path)] == []


def test_the_check_sees_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("t.tmux('kill-pane', '-t', p)\ntmux(*args)\nm.Run(tool='tmux', args=())\nt.OwnedPane(pane_id='%1', pid=1)\n"
                   "t.tmux('list-panes', '-a')\n")
    found = [v.split(": ", 1)[1] for v in violations(bad, tmp_path)]
    assert found == ["tmux('kill-pane', …) outside pure/tmux/", "tmux(…) with a verb it does not spell out",
                     "a tmux Run built by hand", "OwnedPane made outside pure/tmux/owned.py"]


def test_every_guarded_step_takes_a_token() -> None:
    owned = t.OwnedPane(pane_id="%3", pid=30)
    steps = [t.kill_pane_step(owned), t.send_keys_step(owned, "C-m"), t.capture_step(owned),
             t.scrollback_step(owned, 10), t.remain_on_exit_step(owned, True), t.tag_step(owned, "team:a"),
             t.split_step(owned, "-v", "-d"), t.new_window_step(owned, "$1", "-d")]
    assert all(isinstance(s, m.Run) and s.tool == "tmux" for s in steps)
    assert [s.mutates for s in steps] == [True, True, False, False, True, True, True, True]
    assert all(owned.pane_id in s.args for s in steps[:-1])
