"""A safety invariant over every journal in the golden corpus (tmux, scale-up, scale-down, …).

An error decision about the journal itself (``journal_divergence`` …) is checked up to the entry
that does not fit: what follows it is not what the planner asked for.

* ``kill-pane``, ``split-window`` and ``send-keys`` on pane P are immediately preceded, among tmux
  calls, by ``L, S(P), L`` — a proof, P's owner tag, a second proof (docs/tmux-proofs.md, "Proofs
  before every mutation");
* an owner-tag ``set-option`` on P is immediately preceded by a proof ``L`` (docs/tmux-proofs.md,
  "The owner tag");
* the ``L`` format is the exact global one, with real tab characters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pure import tmux as t

GOLDENS = Path(__file__).resolve().parents[1] / "goldens"
GUARDED = {"kill-pane", "split-window", "send-keys"}


def _journals() -> list[tuple[str, list[dict[str, Any]]]]:
    found = []
    for path in sorted(GOLDENS.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:  # a broken golden fails its own test, not the collection
            found.append((str(path.relative_to(GOLDENS)), [{"step": {"op": "broken", "error": str(exc)}}]))
            continue
        if isinstance(data, dict) and isinstance(data.get("journal"), list):
            request = data.get("request")
            if isinstance(request, dict) and request.get("authorize") is False:
                continue  # a teardown without owner authorization (no owner id configured): L, L, kill
            found.append((str(path.relative_to(GOLDENS)), data["journal"][:_asked(data)]))
    return found


def _asked(data: dict[str, Any]) -> int:
    """How many entries of the journal the planner asked for (all, unless the decision says otherwise)."""
    decision = data.get("decision")
    result = decision.get("outcome", {}).get("result") if isinstance(decision, dict) else None
    problem = result.get("problem") if isinstance(result, dict) else None
    if isinstance(problem, dict) and str(problem.get("code", "")).startswith("journal_"):
        return int(problem["at"])
    return len(data["journal"])


def _target(args: list[str]) -> str | None:
    return args[args.index("-t") + 1] if "-t" in args else None


def check(journal: list[dict[str, Any]]) -> list[str]:
    broken = [e["step"]["error"] for e in journal if e["step"].get("op") == "broken"]
    if broken:
        return [f"golden is not valid JSON: {broken[0]}"]
    calls = [e["step"]["args"] for e in journal if e["step"].get("op") == "run" and e["step"].get("tool") == "tmux"]
    problems = []
    for i, args in enumerate(calls):
        verb = args[0] if args else ""
        if args[:1] == ["list-panes"] and args != list(t.LIST_PANES):
            problems.append(f"call {i}: list-panes with a non-canonical format {args!r}")
        if verb in GUARDED:
            pane = _target(args)
            before = calls[max(0, i - 3):i]
            ok = (len(before) == 3 and before[0] == list(t.LIST_PANES) and before[2] == list(t.LIST_PANES)
                  and before[1][:1] == ["show-option"] and _target(before[1]) == pane)
            if not ok:
                problems.append(f"call {i}: {verb} on {pane} not preceded by L, S({pane}), L: {before!r}")
        if verb == "set-option" and t.OWNER_OPTION in args:
            if i == 0 or calls[i - 1] != list(t.LIST_PANES):
                problems.append(f"call {i}: owner tag on {_target(args)} without a proof just before")
    return problems


JOURNALS = _journals()


@pytest.mark.parametrize(("name", "journal"), JOURNALS, ids=[n for n, _ in JOURNALS])
def test_every_pane_mutation_is_proven_first(name: str, journal: list[dict[str, Any]]) -> None:
    assert check(journal) == []


def test_the_invariant_catches_an_unproven_kill() -> None:
    bad = [{"step": {"op": "run", "tool": "tmux", "args": ["kill-pane", "-t", "%1"]}}]
    assert check(bad) and "not preceded" in check(bad)[0]
    good = [{"step": {"op": "run", "tool": "tmux", "args": a}} for a in
            (list(t.LIST_PANES), ["show-option", "-qv", "-p", "-t", "%1", t.OWNER_OPTION], list(t.LIST_PANES),
             ["kill-pane", "-t", "%1"])]
    assert check(good) == []
    wrong_pane = [dict(g) for g in good]
    wrong_pane[1] = {"step": {"op": "run", "tool": "tmux", "args": ["show-option", "-qv", "-p", "-t", "%2", t.OWNER_OPTION]}}
    assert check(wrong_pane)


def test_the_corpus_has_pane_mutations() -> None:
    verbs = {a[0] for _, j in JOURNALS for e in j if e["step"].get("tool") == "tmux" for a in [e["step"]["args"]]}
    assert "kill-pane" in verbs
