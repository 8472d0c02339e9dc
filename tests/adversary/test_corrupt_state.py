"""Total on every input: each team state file corrupted in turn, under every operation that reads it.

For the team of ``tests/adversary/team.py`` (workers, tasks, a dispatch request, a cleanup debt
record, optionally a membership journal), hypothesis corrupts one file — the whole file (empty,
``null``, another JSON kind, truncated, not UTF-8, NaN, a number beyond a double, deep nesting, a lone
surrogate) or one field anywhere in it (null, another type, a huge number, NaN/Infinity, a removed
key) — and runs scale-down (by name and by count), scale-up (``OMX_TEAM_SKIP_READY_WAIT=1``),
status, task claim, debt reconcile and debt show against a simulated tmux server. Every run must:

* end in a typed outcome (never ``internal_error``);
* when it names the corrupted file in its error (``team_state_malformed:<file>…``, or the file's own
  oh-my-codex code: ``scale_down_cleanup_debt_{unreadable,malformed}``, the membership journal's
  messages), have changed not one byte of any file and made no tmux mutation;
* when the file is one the operation must refuse (``MUST_REFUSE``) and the corruption leaves it
  unusable, end with that error; when the operation legitimately ignores the file (oh-my-codex
  ignores a manifest that is not a v2 manifest, reads an invalid status as ``unknown``; nobody reads
  the events log), end as it does on the intact team, the file untouched;
* write only valid JSON (no NaN, no Infinity, UTF-8 text), and touch no pane that is not the team's.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pure import model as m
from tests.adversary import team as tm
from tests.adversary.sim import SimExecutor, TmuxServer, World, drive, scratch

STATS: Counter[str] = Counter()

# ------------------------------------------------------------------------------------ corruptions

RAW_VALUES = {  # text that stands for a JSON value json.dumps cannot write
    "nan": "NaN", "infinity": "Infinity", "-infinity": "-Infinity", "1e400": "1e400",
    "digits400": "9" * 400, "digits5000": "9" * 5000, "deep": "[" * 3000 + "]" * 3000, "surrogate": '"\\ud800"',
}
PLAIN_VALUES: list[Any] = [None, True, False, 0, -1, 1.5, 2**53, 2**64, "", "x", "%abc", [], {}, [1], {"a": 1}]
WHOLE = {
    "empty": b"", "null": b"null", "true": b"true", "zero": b"0", "string": b'"text"', "array": b"[]",
    "object": b"{}", "garbage": b"garbage\n", "binary": b"\xff\xfe\x00\x80garbage", "nan": b"NaN",
    "1e400": b"1e400", "digits5000": b"9" * 5000, "deep": b"[" * 5000, "surrogate": b'"\\ud800"',
}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


MARK = "\u0001raw\u0001"


def corrupt_field(text: str, pick: int, replacement: Any, delete: bool) -> tuple[str, str]:
    """One field of the JSON document ``text`` replaced (or removed); returns the text and its kind."""
    lines = text.splitlines(keepends=True)
    ndjson = len(lines) == 1 and text.endswith("\n")
    doc = json.loads(lines[0] if ndjson else text)
    paths = _paths(doc)
    if not paths:
        return text, "none"
    path = paths[pick % len(paths)]
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    raw = replacement if isinstance(replacement, str) and replacement in RAW_VALUES else None
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
        kind = "deleted"
    else:
        parent[path[-1]] = MARK if raw is not None else replacement
        kind = raw or type(replacement).__name__
    rendered = json.dumps(doc, indent=None if ndjson else 2, ensure_ascii=False)
    if raw is not None:
        rendered = rendered.replace(json.dumps(MARK), RAW_VALUES[raw])
    return rendered + ("\n" if ndjson else ""), kind


CORRUPTION = st.one_of(
    st.tuples(st.just("whole"), st.sampled_from(sorted(WHOLE)), st.integers(0, 10**6)),
    st.tuples(st.just("field"), st.integers(0, 10**6),
              st.one_of(st.sampled_from(PLAIN_VALUES), st.sampled_from(sorted(RAW_VALUES))), st.booleans()),
)

# ------------------------------------------------------------------------------------ expectations

MUST_REFUSE: dict[str, set[str]] = {  # file → the operations that must end with its typed error
    "config.json": set(tm.OPERATIONS),
    "manifest.v2.json": {"scale-down", "scale-down-count"},
    "tasks/task-1.json": {"scale-down", "scale-down-count"},
    "tasks/task-2.json": {"scale-down", "scale-down-count", "task-claim"},
    "tasks/task-3.json": {"scale-down", "scale-down-count", "task-claim"},
    ".scale-down-cleanup-debt.json": {"scale-down", "scale-down-count", "debt-reconcile"},
    "dispatch/requests.json": {"scale-up"},  # it appends a request: refused before anything changes
    tm.JOURNAL: set(tm.OPERATIONS) - {"debt-show"},  # debt show is read-only: no lock, no recovery
}
NOT_UTF8_REFUSE: dict[str, set[str]] = {  # bytes that are not text: every operation that reads the file
    "manifest.v2.json": set(tm.OPERATIONS),
    "workers/worker-1/status.json": {"scale-down-count", "status"},
    "workers/worker-2/status.json": {"scale-down", "scale-down-count", "status"},
    ".scale-down-cleanup-debt.json": {"scale-down", "scale-down-count", "debt-reconcile", "status", "debt-show"},
}
def names_file(message: str, root: Path, file: str) -> bool:
    path = str(tm.team_dir(root / "work") / file)
    if message.startswith(("team_state_malformed:", "cannot read ")) and path in message:
        return True
    if file == ".scale-down-cleanup-debt.json":
        return message.startswith(("scale_down_cleanup_debt_unreadable:", "scale_down_cleanup_debt_malformed"))
    if file == tm.JOURNAL:
        return "membership transaction" in message.lower() or path in message
    return False


# ------------------------------------------------------------------------------------------- runs


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _strict_json(text: str) -> None:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")

    def finite(value: Any) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("non-finite number")
        if isinstance(value, dict):
            for item in value.values():
                finite(item)
        if isinstance(value, list):
            for item in value:
                finite(item)

    finite(json.loads(text, parse_constant=refuse))


def written_files_are_valid(before: dict[str, bytes], after: dict[str, bytes]) -> None:
    for name, data in after.items():
        old = before.get(name)
        if old == data:
            continue
        added = data[len(old):] if old is not None and data.startswith(old) else data
        text = added.decode("utf-8")  # panefleet writes UTF-8 text only
        if name.endswith(".json"):
            _strict_json(text)
        elif name.endswith((".ndjson", ".jsonl")):
            for line in text.splitlines():
                _strict_json(line)


def run_case(op_name: str, file: str, corruption: tuple[Any, ...]) -> dict[str, Any]:
    """Build the team, corrupt ``file``, run the operation, return what happened."""
    with scratch() as root:
        cwd = root / "work"
        cwd.mkdir()
        server = TmuxServer()
        world = World(server=server)
        team_root = tm.build(cwd, server, with_journal=file == tm.JOURNAL)
        target = team_root / file
        if corruption[0] == "whole":
            kind = corruption[1]
            data = WHOLE[kind]
            if kind == "garbage" and corruption[2] % 2:
                intact = target.read_bytes()
                data = intact[: 1 + corruption[2] % max(1, len(intact) - 1)]  # truncated
                kind = "truncated"
            target.write_bytes(data)
        else:
            text, kind = corrupt_field(target.read_text(encoding="utf-8"), corruption[1], corruption[2], corruption[3])
            target.write_text(text, encoding="utf-8")
        before = _snapshot(cwd)
        name, request = tm.OPERATIONS[op_name](cwd)
        executor = SimExecutor(world, root, tm.TEAM, state_root=cwd / ".omx" / "state", env=dict(tm.ENV))
        done = drive(tm.program(name, request), executor)
        after = _snapshot(cwd)
        assert done is not None
        return {"done": done, "before": before, "after": after, "kind": kind, "world": world, "root": root,
                "whole": corruption[0] == "whole", "mutations": executor.mutations,
                "file_after": after.get(str(target.relative_to(cwd)))}


_REFERENCE: dict[tuple[str, bool], tuple[str, str]] = {}


def reference(op_name: str, journal: bool) -> tuple[str, str]:
    """The outcome on the intact team."""
    key = (op_name, journal)
    if key not in _REFERENCE:
        with scratch() as root:
            cwd = root / "work"
            cwd.mkdir()
            server = TmuxServer()
            tm.build(cwd, server, with_journal=journal)
            name, request = tm.OPERATIONS[op_name](cwd)
            executor = SimExecutor(World(server=server), root, tm.TEAM, state_root=cwd / ".omx" / "state",
                                   env=dict(tm.ENV))
            done = drive(tm.program(name, request), executor)
            assert done is not None
            _REFERENCE[key] = tm.outcome_of(done)
    return _REFERENCE[key]


USABLE_WHOLE = {("manifest.v2.json", "object"), ("dispatch/requests.json", "array")}  # {} and [] are files too


def unusable(file: str, case: dict[str, Any]) -> bool:
    """The corruption leaves no usable file: not a JSON value of the file's kind, or a value JSON
    cannot carry (those are refused wherever the file is validated)."""
    if case["whole"]:
        return (file, case["kind"]) not in USABLE_WHOLE
    return case["kind"] in RAW_VALUES


def check(op_name: str, file: str, case: dict[str, Any]) -> None:
    done: m.Done = case["done"]
    status, message = tm.outcome_of(done)
    STATS["cases"] += 1
    assert not message.startswith(("internal_error", "journal_", "program_returned")), (op_name, file, message)
    written_files_are_valid(case["before"], case["after"])
    assert case["world"].violations == [], case["world"].violations
    if status in ("error", "refused") and names_file(message, case["root"], file):
        STATS["typed refusals"] += 1
        assert case["after"] == case["before"], f"{op_name}: {message}: files changed"
        assert case["mutations"] == 0, f"{op_name}: {message}: tmux was changed"
        return
    not_utf8 = case["kind"] == "binary"
    must = (op_name in NOT_UTF8_REFUSE.get(file, set()) or op_name in MUST_REFUSE.get(file, set())) if not_utf8 \
        else op_name in MUST_REFUSE.get(file, set()) and unusable(file, case)
    assert not must, f"{op_name} must refuse {file} ({case['kind']}) by name, got {status}: {message}"
    if unusable(file, case) and op_name not in MUST_REFUSE.get(file, set()):
        STATS["ignored as oh-my-codex does"] += 1
        assert (status, message) == reference(op_name, file == tm.JOURNAL), (op_name, file, case["kind"], message)
        if not file.startswith(("workers/", "events/")):  # a removed worker's files go with it
            assert case["file_after"] == case["before"].get(str(Path(".omx/state/team") / tm.TEAM / file)), \
                f"{op_name} rewrote the ignored {file}"
    else:
        STATS["well-defined otherwise"] += 1


def one_case(file: str, op_name: str, corruption: tuple[Any, ...]) -> None:
    check(op_name, file, run_case(op_name, file, corruption))


@pytest.mark.parametrize("file", tm.FILES)
@settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_name=st.sampled_from(sorted(tm.OPERATIONS)), corruption=CORRUPTION)
def test_every_file_corrupted_under_every_operation(file: str, op_name: str, corruption: tuple[Any, ...]) -> None:
    one_case(file, op_name, corruption)


@pytest.mark.slow
@pytest.mark.parametrize("file", tm.FILES)
@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(op_name=st.sampled_from(sorted(tm.OPERATIONS)), corruption=CORRUPTION)
def test_every_file_corrupted_under_every_operation_long(file: str, op_name: str,
                                                         corruption: tuple[Any, ...]) -> None:
    one_case(file, op_name, corruption)
