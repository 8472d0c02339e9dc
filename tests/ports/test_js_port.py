"""The JavaScript port (ports/js) replays the whole tmux corpus and answers like ``panefleet decide``."""

from __future__ import annotations

import json
import subprocess

from tests.ports.decide_cli import decide_in_process
from tests.ports.node import PORT, node


def test_run_goldens_passes_the_corpus() -> None:
    done = subprocess.run([node(), str(PORT / "run-goldens.mjs")], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("ok: "), done.stdout


def test_run_goldens_stays_small() -> None:
    assert len((PORT / "run-goldens.mjs").read_text(encoding="utf-8").splitlines()) < 200


def test_decide_mjs_reads_stdin_like_panefleet_decide() -> None:
    question = json.dumps({"operation": "tmux.teardown", "request": {"targets": [{"pane_id": "%13", "pid": 513}]}})
    done = subprocess.run([node(), str(PORT / "decide.mjs")], input=question.encode(), capture_output=True,
                          check=False, timeout=60)
    expected = decide_in_process(question)
    assert (done.returncode, done.stdout.decode(), done.stderr.decode()) == tuple(expected)
    bad = '{"operation": "tmux.teardown", "request": {"targets": 5}}'
    done = subprocess.run([node(), str(PORT / "decide.mjs")], input=bad.encode(), capture_output=True, check=False,
                          timeout=60)
    assert (done.returncode, done.stdout.decode(), done.stderr.decode()) == tuple(decide_in_process(bad))


def test_an_operation_the_port_does_not_implement_is_unknown() -> None:
    question = json.dumps({"operation": "team.status", "request": {}})
    done = subprocess.run([node(), str(PORT / "decide.mjs")], input=question.encode(), capture_output=True,
                          check=False, timeout=60)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode() == "panefleet decide: unknown operation 'team.status' (known: tmux.teardown)\n"
