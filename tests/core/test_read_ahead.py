"""Announced reads (``pure/program.py`` ``Ahead``) answered ahead by the shell (``shell/run/executor.py``, ``shell/run/read_ahead.py``).

The planner never sees an announcement: decisions, replay and journals are those of the same program
without it. The executor answers announced reads several at once, hands each answer over in the
announced order, never uses an answer read before a change the journal shows before it, and ends
the reads nobody asked for with the run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pure import model as m
from pure.program import Ahead, Program, announce, decide, expect
from shell.run.executor import Executor
from shell.run.loop import AuditLog, run_program
from shell.run.read_ahead import READ_AHEAD_MOST
from tests.core.test_call_deadlines import assert_all_gone, stub

# A herdr that logs "start ARG" and "end ARG" around a short sleep and answers the number of lines
# its log held when it started (so an answer says what it was read after). "--mutate" changes nothing
# but is logged the same way; "--hang" records its pid (and its sleep's) and never answers.
HERDR = """#!/bin/sh
log="{log}"
before=$(wc -l < "$log")
echo "start $1" >> "$log"
case "$1" in
  --hang) echo $$ >> "{pids}"; sleep 3600 & echo $! >> "{pids}"; wait ;;
  *) sleep 0.2 ;;
esac
echo "end $1" >> "$log"
echo "$before"
"""


def read(arg: str) -> m.Run:
    return m.Run(tool="herdr", args=(arg,))


def world(tmp_path: Path) -> tuple[Executor, Path]:
    log = tmp_path / "log"
    log.write_text("")
    stub(tmp_path / "bin", "herdr", HERDR.format(log=log, pids=tmp_path / "pids"))
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    return Executor(env=env), log


def most_at_once(log: Path) -> int:
    running = peak = 0
    for line in log.read_text().splitlines():
        running += 1 if line.startswith("start") else -1
        peak = max(peak, running)
    return peak


def most_running(lines: list[str]) -> int:
    """How many calls the log shows started but not ended at its end."""
    return sum(1 if line.startswith("start") else -1 for line in lines)


def reads_then(names: list[str], *, announced: bool = True, change_after: int | None = None) -> Program:
    if announced:
        yield from announce(read(name) for name in names)
    answers = []
    for index, name in enumerate(names):
        proc = yield from expect(read(name), m.Proc)
        answers.append((name, proc.stdout.strip()))
        if index == change_after:
            yield from expect(m.Run(tool="herdr", args=("--mutate",), mutates=True), m.Proc)
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(answers)))


def test_an_announcement_is_no_step_and_no_decision() -> None:
    journal: list[m.Entry] = []
    for name in ("a", "b", "c"):
        assert decide(lambda: reads_then(["a", "b", "c"]), journal) == m.Next(steps=(read(name),))
        journal.append(m.Entry(step=read(name), observation=m.Proc(exit_code=0, stdout="0\n")))
    done = decide(lambda: reads_then(["a", "b", "c"]), journal)
    assert done == decide(lambda: reads_then(["a", "b", "c"], announced=False), journal)
    assert isinstance(done, m.Done) and done.outcome.status == "ok"


def test_only_reads_can_be_announced() -> None:
    def program() -> Program:
        yield Ahead(steps=(m.Run(tool="herdr", args=("x",), mutates=True),))
        return m.Done(outcome=m.Outcome(status="ok"))

    done = decide(program, [])
    assert isinstance(done, m.Done) and done.outcome.status == "error"
    assert "only reads can be announced" in done.outcome.message


def test_announced_reads_are_answered_together_in_order(tmp_path: Path) -> None:
    executor, log = world(tmp_path)
    names = [f"r{i}" for i in range(12)]
    audit = AuditLog(tmp_path / "audit.jsonl")
    done, journal = run_program(lambda: reads_then(names), executor, audit=audit)
    audit.close()
    assert [e.step for e in journal] == [read(n) for n in names]  # the journal of the reads one by one
    assert decide(lambda: reads_then(names), journal) == done
    assert 2 <= most_at_once(log) <= READ_AHEAD_MOST  # several at once, never more than the most
    assert executor.calls == {"herdr": len(names)} and executor.read_ahead_dropped == 0
    entries = [json.loads(line) for line in audit.path.read_text().splitlines()]
    marked = [e["step"]["args"][0] for e in entries if e.get("read_ahead")]
    assert marked and names[0] not in marked  # the first was read when asked for; later ones before


def test_no_answer_read_before_a_change_is_used(tmp_path: Path) -> None:
    executor, log = world(tmp_path)
    names = [f"r{i}" for i in range(6)]
    done, _ = run_program(lambda: reads_then(names, change_after=1), executor)
    lines = log.read_text().splitlines()
    change_ended = lines.index("end --mutate")
    answers = dict(done.outcome.result)  # type: ignore[arg-type]
    for name in names[2:]:  # asked for after the change: each was read after it ended
        assert int(answers[name]) > change_ended, (name, answers[name], lines)
    at = lines.index("start --mutate")
    assert lines[at + 1] == "end --mutate" and most_running(lines[:at]) == 0  # no read ran across it
    assert 1 <= executor.read_ahead_dropped < READ_AHEAD_MOST  # what had been read ahead was read again
    assert executor.calls == {"herdr": len(names) + 1}


def test_reads_never_asked_for_end_with_the_run(tmp_path: Path) -> None:
    executor, _ = world(tmp_path)

    def program() -> Program:
        yield from announce([read("first"), read("--hang"), read("--hang")])
        yield from expect(read("first"), m.Proc)
        return m.Done(outcome=m.Outcome(status="ok"))

    run_program(program, executor)  # returns: the hanging reads were ended, not waited for
    assert_all_gone(tmp_path / "pids")
    assert executor.read_ahead_dropped == 2


def test_a_read_that_names_a_host_is_never_read_ahead_here(tmp_path: Path) -> None:
    """It is done on that host when it is asked for (shell/run/remote.py), never queued to run on this
    machine (nor left at the head of the queue, where it would hold back the reads after it)."""
    executor, log = world(tmp_path)
    executor.read_ahead(tuple(m.Run(tool="herdr", args=(name,), host="build1") for name in ("a", "b", "c")))
    assert executor._ahead is not None and list(executor._ahead._queue) == []
    executor.end_run()
    assert log.read_text() == ""
