"""``panefleet team send`` and ``team attach`` on a real tmux server with the placeholder agent (which
echoes every line it receives): verified delivery, the mailbox record, refusals that type nothing, and
a second tmux client, driven in a pseudo-terminal, brought to a worker's pane."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fleet.conftest import Fleet

pytestmark = [pytest.mark.tmux, pytest.mark.tmux_executors("control"), pytest.mark.timeout(180)]


def _screen(fleet: Fleet, pane: str) -> str:
    return fleet.server.cmd("capture-pane", "-p", "-t", pane).stdout


def _mailbox(fleet: Fleet, worker: str) -> dict[str, object]:
    return json.loads((fleet.project / f".omx/state/team/alpha/mailbox/{worker}.json").read_text())


def test_send_is_delivered_seen_and_recorded(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    code, sent = fleet.json("team", "send", "alpha", "worker-2", "also run the linter; then C-c Enter $(id)")
    assert code == 0, sent
    (only,) = sent["workers"]
    assert (only["worker"], only["result"], only["paneId"]) == ("worker-2", "delivered", fleet.workers()["worker-2"][0])
    code, seen = fleet.json("team", "peek", "alpha", "worker-2")
    # typed literally: no key names read, nothing run by a shell
    assert "received: also run the linter; then C-c Enter $(id)" in seen["lines"], seen
    messages = _mailbox(fleet, "worker-2")["messages"]
    assert isinstance(messages, list) and len(messages) == 1
    assert messages[0]["body"] == "also run the linter; then C-c Enter $(id)"
    assert messages[0]["from_worker"] == "leader-fixed" and messages[0]["message_id"] == only["messageId"]
    assert messages[0].get("notified_at"), messages[0]
    logs = list((fleet.project / ".omx/logs").glob("team-delivery-*.jsonl"))
    assert any(only["messageId"] in log.read_text() for log in logs)
    assert not (fleet.project / ".omx/state/team/alpha/mailbox/worker-1.json").exists()


def test_send_to_all_and_by_role_and_from_stdin(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    everyone = fleet.run("team", "send", "alpha", "--all", "-", stdin="line one\nline two\n")
    assert everyone.returncode == 0, everyone.stdout + everyone.stderr
    assert everyone.stdout.count("delivered") == 2
    for worker in ("worker-1", "worker-2"):
        lines = _screen(fleet, fleet.workers()[worker][0])
        assert "received: line one" in lines and "received: line two" in lines, lines
    code, by_role = fleet.json("team", "send", "alpha", "--role", "executor", "again")
    assert code == 0 and [w["worker"] for w in by_role["workers"]] == ["worker-1", "worker-2"]
    code, no_role = fleet.json("team", "send", "alpha", "--role", "reviewer", "hi")
    assert code == 4 and "roles: executor" in no_role["error"], no_role


@pytest.mark.parametrize("words, code, error_code", [
    (["worker-9", "hello"], 4, "send_worker_not_found"),
    (["worker-1", "   "], 4, "send_message_empty"),
    (["worker-1", "x" * (64 * 1024 + 1)], 4, "send_message_too_long"),
    (["worker-1", "look \x1b[2J here"], 4, "send_message_control_character"),
    (["--all", "worker-1", "hello"], 2, "usage_error"),
])
def test_bad_input_is_refused_and_nothing_is_typed(fleet: Fleet, words: list[str], code: int, error_code: str) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    before = {w: _screen(fleet, pane) for w, (pane, _pid) in fleet.workers().items()}
    got, answer = fleet.json("team", "send", "alpha", *words)
    assert (got, answer.get("error_code")) == (code, error_code), answer
    if error_code == "send_worker_not_found":
        assert "worker-1, worker-2" in answer["error"], answer
    assert {w: _screen(fleet, pane) for w, (pane, _pid) in fleet.workers().items()} == before
    assert not (fleet.project / ".omx/state/team/alpha/mailbox/worker-1.json").exists()


def test_a_pane_not_proven_refuses_the_whole_send(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    before = {w: _screen(fleet, pane) for w, (pane, _pid) in fleet.workers().items()}
    fleet.server.cmd("set-option", "-p", "-t", fleet.workers()["worker-2"][0], "@omx_team_pane_owner_id", "team:x")
    code, answer = fleet.json("team", "send", "alpha", "--all", "hello")
    assert code == 4 and answer["error_code"] == "send_pane_unproven", answer
    assert {w: _screen(fleet, pane) for w, (pane, _pid) in fleet.workers().items()} == before


def _client(fleet: Fleet, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    """``panefleet team attach …`` in a pseudo-terminal of its own (outside tmux): a second client."""
    primary, secondary = pty.openpty()
    env = {k: v for k, v in fleet.env.items() if k != "TMUX"}
    proc = subprocess.Popen([sys.executable, "-m", "cli", "team", "attach", "alpha", *args], cwd=fleet.project,
                            env={**env, "TERM": "xterm"}, stdin=secondary, stdout=secondary, stderr=secondary,
                            start_new_session=True)
    os.close(secondary)
    return proc, primary


def _clients(fleet: Fleet) -> list[tuple[str, str]]:
    """The terminal clients (not the control-mode client a panefleet operation attaches while it runs)."""
    out = fleet.server.cmd("list-clients", "-F", "#{client_control_mode}\t#{pane_id}\t#{client_readonly}",
                           check=False).stdout
    return [tuple(line.split("\t")[1:]) for line in out.splitlines() if line.startswith("0\t")]  # type: ignore[misc]


def _wait(predicate: object, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("read_only", [False, True])
def test_attach_lands_on_the_worker_s_pane(fleet: Fleet, tmp_path: Path, read_only: bool) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    pane = fleet.workers()["worker-2"][0]
    proc, primary = _client(fleet, "worker-2", *(["--read-only"] if read_only else []))
    try:
        assert _wait(lambda: _clients(fleet)), "no client attached"
        assert _clients(fleet) == [(pane, "1" if read_only else "0")]
        before = _screen(fleet, pane)
        os.write(primary, b"typed by the client\r")
        typed = _wait(lambda: "received: typed by the client" in _screen(fleet, pane), 3)
        assert typed is (not read_only), _screen(fleet, pane)
        if read_only:
            assert _screen(fleet, pane) == before
    finally:
        def detached() -> bool:
            for client in fleet.server.cmd("list-clients", "-F", "#{client_name}", check=False).stdout.split():
                fleet.server.cmd("detach-client", "-t", client, check=False)
            return proc.poll() is not None
        ended = _wait(detached)
        if not ended:
            proc.kill()
            proc.wait()
        os.close(primary)
        assert ended, "the attached client did not end when detached"


@pytest.mark.parametrize("read_only", [False, True])
def test_attach_from_inside_tmux_switches_this_client(fleet: Fleet, read_only: bool) -> None:
    """Run in a client of the team's own server, ``team attach`` moves that client to the worker's pane
    (and makes it read-only when asked) and returns at once, rather than nesting a second client."""
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    pane = fleet.workers()["worker-2"][0]
    leader = min(set(fleet.server.panes()) - {p for p, _pid in fleet.workers().values()})
    primary, secondary = pty.openpty()
    client = subprocess.Popen(["tmux", "-L", fleet.server.name, "attach-session", "-t", leader], stdin=secondary, stdout=secondary,
                              stderr=secondary, env={**fleet.env, "TERM": "xterm"}, start_new_session=True)
    os.close(secondary)
    try:
        assert _wait(lambda: _clients(fleet) == [(leader, "0")]), _clients(fleet)
        socket_path, session = fleet.server.cmd("display-message", "-p", "-t", leader,
                                                 "#{socket_path}\t#{session_id}").stdout.strip().split("\t")
        inside = {**fleet.env, "TMUX": f"{socket_path},{client.pid},{session.lstrip('$')}"}
        done = subprocess.run([sys.executable, "-m", "cli", "team", "attach", "alpha", "worker-2",
                               *(["--read-only"] if read_only else [])], cwd=fleet.project, env=inside,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert _clients(fleet) == [(pane, "1" if read_only else "0")]
    finally:
        fleet.server.cmd("detach-client", "-a", check=False)
        for name in fleet.server.cmd("list-clients", "-F", "#{client_name}", check=False).stdout.split():
            fleet.server.cmd("detach-client", "-t", name, check=False)
        try:
            client.wait(timeout=20)
        except subprocess.TimeoutExpired:
            client.kill()
            client.wait()
        os.close(primary)


def test_attach_refuses_a_gone_pane(fleet: Fleet) -> None:
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    fleet.server.cmd("kill-pane", "-t", fleet.workers()["worker-1"][0])
    refused = fleet.run("team", "attach", "alpha", "worker-1")
    assert refused.returncode == 4 and "absent" in refused.stderr, refused.stderr
    assert _clients(fleet) == []


def test_watch_runs_the_exit_hook_once_per_transition(fleet: Fleet, tmp_path: Path) -> None:
    """``team watch``: a worker pane killed from outside runs ``--on-exit`` once, with the worker's name."""
    fleet.write(2)
    assert fleet.run("apply", "--yes").returncode == 0
    fired = tmp_path / "fired"
    hook = f'echo "$PANEFLEET_WORKER $PANEFLEET_STATE $PANEFLEET_PANE" >> {fired}'
    watcher = subprocess.Popen([sys.executable, "-m", "cli", "team", "watch", "alpha", "--interval", "0.3",
                                "--on-exit", hook, "--on-idle", f"echo idle >> {fired}"], cwd=fleet.project,
                               env=fleet.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2)  # a few snapshots: nothing has changed, no hook
        assert not fired.exists()
        pane = fleet.workers()["worker-2"][0]
        fleet.server.cmd("kill-pane", "-t", pane)
        assert _wait(lambda: fired.exists(), 20)
        time.sleep(2)  # more snapshots of the same state: still once
        assert fired.read_text() == f"worker-2 exited {pane}\n"
    finally:
        watcher.send_signal(2)
        out, _err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0 and out.count(" -> ") == 1 and "  worker-2  ready -> exited" in out, out


def test_watch_interrupted_during_a_read_ends_as_between_reads(fleet: Fleet, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C that lands while ``team watch`` reads the team ends it with 0 and says nothing, as one
    between reads does (the read is interrupted at a step boundary, not raised)."""
    import signal

    import cli
    from shell.cli import operation
    from shell.run.executor import Executor

    fleet.write(1)
    assert fleet.run("apply", "--yes").returncode == 0
    real, sent = operation.make_executor, []

    def interrupting(*args: object, **kwargs: object) -> Executor:
        executor = real(*args, **kwargs)  # type: ignore[arg-type]
        execute = executor.execute

        def once(step: object) -> object:
            if not sent:
                sent.append(True)
                os.kill(os.getpid(), signal.SIGINT)
            return execute(step)  # type: ignore[arg-type]
        monkeypatch.setattr(executor, "execute", once)
        return executor
    monkeypatch.setattr(operation, "make_executor", interrupting)
    for key in list(os.environ):
        monkeypatch.delenv(key)
    for key, value in fleet.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(fleet.project)
    assert cli.main(["team", "watch", "alpha", "--interval", "0.2"]) == 0
    out, err = capsys.readouterr()
    assert sent and out == "" and err == "", (out, err)
