"""The tmux control-mode client per run (``shell/run/tmux_control.py``): the same observations as a spawned
``tmux`` per call — for generated arguments, error answers, hooks and screens that look like protocol
markers — its fallbacks (a stub ``tmux``, a client that cannot start, a reply past its deadline, a
destroyed session), that it is closed on every exit path and before ``kill-server``, and the audit
log's record of it (``shell/run/loop.py``), which replay ignores."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pure import model as m
from pure.program import Gen, expect
from pure.team import TeamInitRequest
from shell.run import piped
from shell.run import tmux_control as tc
from shell.run import tmux_protocol as tp
from shell.run.executor import Executor
from shell.run.loop import replay, run_operation, run_program
from tests.conftest import TmuxServer, alive
from tests.core.test_call_deadlines import HANGING, assert_all_gone, stub

# These tests compare the two executors themselves (each Executor gets its own PANEFLEET_TMUX_EXECUTOR).
pytestmark = pytest.mark.tmux_executors("control")

LIST = ("list-panes", "-a", "-F", "#{pane_id}\t#{pane_dead}\t#{pane_pid}")


def run(executor: Executor, *args: str) -> m.Proc:
    observed = executor.execute(m.Run(tool="tmux", args=args))
    assert isinstance(observed, m.Proc)
    return observed


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", tc.ENV_VAR)}
    return {**env, **extra}


def pair(name: str, **extra: str) -> tuple[Executor, Executor]:
    """(control, spawn) executors for the private server ``name``."""
    control = Executor(env=base_env(**extra), tmux_socket=name)
    spawn = Executor(env=base_env(**{tc.ENV_VAR: "spawn"}, **extra), tmux_socket=name)
    return control, spawn


# ------------------------------------------------------------------------------------ stream parsing

NULL_FD = os.open(os.devnull, os.O_RDONLY)


class Fed(tp._Stream):
    """A stream fed ``data`` ``size`` bytes at a time instead of from a client."""

    def __init__(self, data: bytes, size: int) -> None:
        super().__init__(NULL_FD)
        self.data = data
        self.size = size

    def _read(self, deadline: float) -> bytes:
        chunk, self.data = self.data[:self.size], self.data[self.size:]
        return chunk


FAR = float("inf")
# A reply whose body holds lines that only look like its end (another number, other flags, no
# newline after), notifications and %output between blocks, two hook blocks (one failing), and the
# sentinel block (naming the session) that ends the answer.
TRANSCRIPT = (
    b"%sessions-changed\n%output %1 hello\\015\\012\n"
    b"%begin 1796 42 1\n%0\t0\t11\n%end 1796 41 1\n%end 1796 42 0\n%error 1797 42 1\n%begin 1796 43 1\n"
    b" %end 1796 42 1\n%end 1796 42 1x\n\n%end 1796 42 1\n"
    b"%layout-change @0 abc,80x24,0,0,0 abc,80x24,0,0,0 *\n%output %1 x\n"
    b"%begin 1796 43 0\nhooked\n%end 1796 43 0\n"
    b"%begin 1796 44 0\nhook failed\n%error 1796 44 0\n"
    b"%begin 1796 45 1\nmain\n%end 1796 45 1\n"
)
EXPECTED = m.Proc(exit_code=1, stdout=("%0\t0\t11\n%end 1796 41 1\n%end 1796 42 0\n%error 1797 42 1\n%begin 1796 43 1\n"
                                       " %end 1796 42 1\n%end 1796 42 1x\n\nhooked\n"), stderr="hook failed\n")


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 16, 64, len(TRANSCRIPT)])
def test_an_answer_is_read_exactly_at_any_chunking(size: int) -> None:
    stream = Fed(TRANSCRIPT + b"%begin 1 2 1\n%end 1 2 1\n%begin 1 3 1\n\n%end 1 3 1\n", size)
    assert tp.collect(stream, FAR) == (EXPECTED, True)
    assert tp.collect(stream, FAR) == (m.Proc(exit_code=0), False)  # the next answer starts cleanly;
    assert not stream.eof and not stream.exiting  # the client's session was gone


def test_error_reply_and_empty_bodies() -> None:
    end = b"%begin 5 7 1\nmain\n%end 5 7 1\n"
    stream = Fed(b"%begin 5 6 1\ncan't find pane: %9\n%error 5 6 1\n" + end, 4)
    assert tp.collect(stream, FAR) == (m.Proc(exit_code=1, stderr="can't find pane: %9\n"), True)
    stream = Fed(b"%begin 5 6 1\n\n\n%end 5 6 1\n" + end, 3)
    assert tp.collect(stream, FAR) == (m.Proc(exit_code=0, stdout="\n\n"), True)
    stream = Fed(b"%begin 5 6 1\nparse error: command x: unknown flag -0\n%error 5 6 1\n" + end, 3)
    assert tp.collect(stream, FAR) == (m.Proc(exit_code=1, stderr="command x: unknown flag -0\n"), True)
    stream = Fed(b"%begin 5 6 1\n%end 5 6 1\n%begin 5 7 1\nno current client\n%error 5 7 1\n", 3)
    assert tp.collect(stream, FAR) == (m.Proc(exit_code=0), False)


def test_a_reply_then_the_client_leaving_is_still_an_answer() -> None:
    stream = Fed(b"%begin 5 6 1\n%end 5 6 1\n%sessions-changed\n%exit\n", 5)
    assert tp.collect(stream, FAR) == (m.Proc(exit_code=0), False)
    assert stream.eof and stream.exiting


@pytest.mark.parametrize("data", [b"", b"%begin 5 6 1\npartial\n", b"%exit\n", b"%begin 5 6 1\n%end 5 6 1"])
def test_no_reply_is_no_answer(data: bytes) -> None:
    with pytest.raises(tp._Lost):
        tp.collect(Fed(data, 3), FAR)


@pytest.mark.parametrize("data", [b"tmux 3.2a\n", b"%begin x y z\n%end x y z\n"])
def test_anything_but_the_protocol_is_refused(data: bytes) -> None:
    with pytest.raises(tp._Lost):
        tp.collect(Fed(data + b"%begin 5 6 1\n%end 5 6 1\n" * 2, 4), FAR)


def test_a_silent_client_times_out() -> None:
    read, write = os.pipe()
    try:
        stream = tp._Stream(read)
        started = time.monotonic()
        with pytest.raises(tp._TimedOut):
            tp.collect(stream, time.monotonic() + 0.2)
        assert 0.19 < time.monotonic() - started < 1
    finally:
        os.close(read)
        os.close(write)


# ------------------------------------------------------------------------------------- what is sent


def test_quoting_shape() -> None:
    assert tp.quote(b"") == b"''"
    assert tp.quote(b"#{pane_id}\t#{pane_dead}") == b"'#{pane_id}'\"\\011\"'#{pane_dead}'"
    assert tp.quote(b"it's\n") == b"'it'\"\\047\"'s'\"\\012\""
    assert tp.quote("$HOME ~ {a;b} \\ é %1".encode()) == "'$HOME ~ {a;b} \\ é %1'".encode()
    assert b"\n" not in tp.quote(bytes(range(1, 256)))


@pytest.mark.parametrize(("args", "sent"), [
    (LIST, True),
    (("show-option", "-qv", "-p", "-t", "%1", "@omx_team_pane_owner_id"), True),
    (("send-keys", "-t", "%1", "-l", "--", "text; with 'quotes'"), True),
    (("display-message", "-p", "-t", "%1", "#{pane_pid}"), True),
    (("display-message", "-t", "%1", "shown on a client"), False),
    (("-V",), False),
    (("split-window", "-d", "-t", "%1", "-P", "-F", "#{pane_id}", "-c", "/tmp", "sleep 1"), False),
    (("new-window", "-t", "$1:", "-d"), False),
    (("new-session", "-d", "-s", "x"), False),
    (("kill-server",), False),
    (("send-keys", "-t", "%1", "-l", "--", "ends in a semicolon;"), False),
    (("send-keys", "-t", "%1", "-l", "--", "a\\;"), False),
    (("send-keys", "-t", "%1", "-l", "--", "nul\0"), False),
    (("send-keys", "-t", "%1", "-l", "--", "surrogate\udcff"), False),
    (("send-keys", "-t", "%1", "-l", "--", "x" * 9000), False),
])
def test_what_goes_through_the_client(args: tuple[str, ...], sent: bool) -> None:
    assert (tp.control_line(args) is not None) == sent


def test_the_variable() -> None:
    assert tc.mode_from_env({}) == "control"
    assert tc.mode_from_env({tc.ENV_VAR: "spawn"}) == "spawn"
    assert tc.mode_from_env({tc.ENV_VAR: " control "}) == "control"
    with pytest.raises(ValueError, match="PANEFLEET_TMUX_EXECUTOR: 'fast' is not one of control, spawn"):
        Executor(env={tc.ENV_VAR: "fast"})


# ---------------------------------------------------------------------------- against a real server


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[TmuxServer, Executor, Executor]]:
    server = TmuxServer(f"pf-test-{uuid.uuid4().hex[:10]}")
    server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "120", "-y", "40", "sleep 100000")
    control, spawn = pair(server.name)
    try:
        yield server, control, spawn
    finally:
        control.end_run()
        server.kill()


SPECIALS = "'\"\\#;$~{}%\t\n\r \x01\x1b\x7f,:=!@&|<>*?[]()`"
CHARS = st.one_of(st.sampled_from(SPECIALS), st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"))
TEXT = st.text(CHARS, max_size=40)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def through_control(control: Executor, args: tuple[str, ...]) -> None:
    """The step went where :func:`tp.control_line` says it goes."""
    assert control.tmux_via == ("control" if tp.control_line(args) is not None else "spawn"), args


@pytest.mark.tmux
@PROPERTY
@given(value=TEXT)
def test_option_values_round_trip_alike(shared: tuple[TmuxServer, Executor, Executor], value: str) -> None:
    """``set-option`` of a user option with an arbitrary value stores the same value through either
    path, and ``show-option`` reads it back the same way through either path."""
    _, control, spawn = shared
    set_control = ("set-option", "-p", "-t", "%0", "@pf_c", value)
    assert run(control, *set_control) == run(spawn, "set-option", "-p", "-t", "%0", "@pf_s", value)
    through_control(control, set_control)
    stored_c = run(spawn, "show-option", "-qv", "-p", "-t", "%0", "@pf_c")
    assert stored_c == run(spawn, "show-option", "-qv", "-p", "-t", "%0", "@pf_s")
    show = ("show-option", "-qv", "-p", "-t", "%0", "@pf_c")
    assert run(control, *show) == stored_c
    through_control(control, show)
    if not value.endswith(";"):  # tmux's argv path would end the command there (cmd-parse.y)
        assert stored_c.stdout == value + "\n"


@pytest.mark.tmux
@PROPERTY
@given(text=TEXT.filter(lambda s: "%" not in s and "#(" not in s))
def test_display_message_answers_alike(shared: tuple[TmuxServer, Executor, Executor], text: str) -> None:
    """The text is format-expanded by tmux the same way (``#{pane_id}``, ``##``, ``#[…]``); ``%``
    (strftime, which may straddle a second) and ``#(`` (a shell job) are left out."""
    _, control, spawn = shared
    args = ("display-message", "-p", "-t", "%0", text)
    assert run(control, *args) == run(spawn, *args)
    through_control(control, args)


@pytest.mark.tmux
@PROPERTY
@given(target=TEXT, name=TEXT)
def test_error_answers_alike(shared: tuple[TmuxServer, Executor, Executor], target: str, name: str) -> None:
    _, control, spawn = shared
    for args in (("show-option", "-qv", "-p", "-t", target, "@x"), ("kill-pane", "-t", "%9" + target),
                 ("set-option", "-p", "-t", "%0", name, "v"), ("show-option", "-v", "-p", "-t", "%0", "@" + name)):
        assert run(control, *args) == run(spawn, *args), args
        through_control(control, args)


@pytest.mark.tmux
def test_tmux_own_argv_rule_for_a_final_semicolon_is_kept(shared: tuple[TmuxServer, Executor, Executor]) -> None:
    _, control, spawn = shared
    for text, shown in (("x;", "x\n"), ("x\\;", "x;\n"), ("a;b", "a;b\n")):
        args = ("display-message", "-p", "-t", "%0", text)
        assert run(control, *args) == run(spawn, *args) == m.Proc(exit_code=0, stdout=shown)


@pytest.mark.tmux
def test_hooks_answer_alike(tmux_server: TmuxServer) -> None:
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "main", "sleep 100000")
    tmux_server.cmd("set-hook", "-g", "after-set-option", "display-message -p 'hooked #{hook}'")
    control, spawn = pair(tmux_server.name)
    try:
        args = ("set-option", "-p", "-t", "%0", "@a", "1")
        assert run(control, *args) == run(spawn, *args) == m.Proc(exit_code=0, stdout="hooked after-set-option\n")
        assert control.tmux_via == "control"
    finally:
        control.end_run()


@pytest.mark.tmux
def test_a_screen_showing_protocol_markers_is_captured_whole(tmux_server: TmuxServer) -> None:
    now = int(time.time())
    lines = [f"%end {now} {n} 1" for n in range(0, 400, 7)] + [f"%begin {now} 9 1", "%exit", f"%error {now} 3 1"]
    script = "printf '%s\\n' " + " ".join(f"'{line}'" for line in lines) + "; sleep 100000"
    pane = tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "s", "-x", "60", "-y", "80", "-P", "-F",
                           "#{pane_id}", script).stdout.strip()
    control, spawn = pair(tmux_server.name)
    try:
        deadline = time.monotonic() + 10
        while "%error" not in run(spawn, "capture-pane", "-p", "-t", pane).stdout:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        args = ("capture-pane", "-p", "-J", "-S", "-100", "-t", pane)
        captured = run(control, *args)
        assert control.tmux_via == "control"
        assert captured == run(spawn, *args)
        assert all(line in captured.stdout.splitlines() for line in lines)
    finally:
        control.end_run()


# -------------------------------------------------------------------------- fallbacks and deadlines


def test_a_stub_tmux_is_spawned_per_call(tmp_path: Path) -> None:
    stub(tmp_path / "bin", "tmux", "#!/bin/sh\necho \"$*\" >> \"%s\"\nprintf '%%%%1\\t0\\t42\\n'\n" % (tmp_path / "log"))
    env = base_env(PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    executor = Executor(env=env)
    for _ in range(3):
        assert run(executor, *LIST) == m.Proc(exit_code=0, stdout="%1\t0\t42\n")
        assert executor.tmux_via == "spawn"
    summary = executor.tmux_summary()
    assert summary is not None and summary["spawned_calls"] == 3 and summary["control_calls"] == 0
    assert str(summary["fallback"]).startswith("control client did not start: unavailable")
    calls = (tmp_path / "log").read_text().splitlines()
    assert calls[0] == "-N -C attach-session -E -f no-output,ignore-size" and calls.count(" ".join(LIST)) == 3


def test_a_tmux_that_never_answers_times_out_like_a_spawned_one(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    stub(tmp_path / "bin", "tmux", HANGING.format(pids=pids))
    env = base_env(PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", PANEFLEET_CALL_TIMEOUT="tmux=0.5")
    executor = Executor(env=env)
    for via in ("control", "spawn"):
        started = time.monotonic()
        assert run(executor, "list-panes", "-a") == m.Proc(exit_code=None,
                                                           stderr="tmux timed out after 0.5 s: list-panes -a")
        assert time.monotonic() - started < 1.5, via
        assert executor.tmux_via == via  # the first timed out starting the client
    assert executor.tmux_summary() == {"requested": "control", "control_calls": 1, "spawned_calls": 1,
                                       "control_clients": 1, "fallback": "control client did not start: timed_out"}
    assert_all_gone(pids)  # the stub started as a client, its sleep, and the spawned call's


def test_no_server_no_tmux(tmp_path: Path) -> None:
    control, spawn = pair(f"pf-test-none-{uuid.uuid4().hex[:8]}")
    assert run(control, *LIST) == run(spawn, *LIST)
    assert run(control, *LIST).exit_code == 1 and control.tmux_via == "spawn"
    (tmp_path / "empty").mkdir()
    lone = Executor(env=base_env(PATH=str(tmp_path / "empty")))
    assert run(lone, *LIST) == m.Proc(exit_code=None, stderr="tmux: command not found on PATH")


@pytest.mark.tmux
def test_a_reply_past_its_deadline_kills_the_client_and_the_run_spawns_on(tmux_server: TmuxServer) -> None:
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "main", "sleep 100000")
    server_pid = int(tmux_server.cmd("display-message", "-p", "#{pid}").stdout)
    control, _ = pair(tmux_server.name, PANEFLEET_CALL_TIMEOUT="tmux=0.5")
    try:
        assert run(control, *LIST).exit_code == 0 and control.tmux_via == "control"
        client = control._client
        assert client is not None
        os.kill(server_pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            timed_out = run(control, *LIST)
            elapsed = time.monotonic() - started
        finally:
            os.kill(server_pid, signal.SIGCONT)
        assert timed_out == m.Proc(exit_code=None, stderr=f"tmux timed out after 0.5 s: -L {tmux_server.name} "
                                                          "list-panes -a -F '#{pane_id}\t#{pane_dead}\t#{pane_pid}'")
        assert elapsed < 0.5 + 0.5 + 0.5, elapsed
        assert not alive(client.pid)
        assert run(control, *LIST).exit_code == 0 and control.tmux_via == "spawn"
        summary = control.tmux_summary()
        assert summary is not None and summary["fallback"] == "control client timed out after 0.5 s"
    finally:
        control.end_run()


@pytest.mark.tmux
def test_a_client_whose_session_is_destroyed_is_replaced(tmux_server: TmuxServer) -> None:
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "a", "sleep 100000")
    tmux_server.cmd("new-session", "-d", "-s", "b", "sleep 100000")
    control, spawn = pair(tmux_server.name)
    try:
        assert run(control, *LIST).exit_code == 0
        attached = tmux_server.cmd("list-clients", "-F", "#{client_session}").stdout.split()
        assert attached == ["b"]  # tmux's choice: the most recently used unattached session
        pane = tmux_server.cmd("list-panes", "-t", "b", "-F", "#{pane_id}").stdout.strip()
        assert run(control, "kill-pane", "-t", pane) == m.Proc(exit_code=0)
        assert control.tmux_via == "control"
        assert run(control, *LIST) == run(spawn, *LIST)
        assert control.tmux_via == "control"
        assert control.tmux_summary() == {"requested": "control", "control_calls": 3, "spawned_calls": 0,
                                          "control_clients": 2, "fallback": ""}
        assert tmux_server.cmd("list-clients", "-F", "#{client_session}").stdout.split() == ["a"]
    finally:
        control.end_run()
    assert tmux_server.cmd("list-clients", "-F", "#{client_name}").stdout == ""


@pytest.mark.tmux
def test_a_client_detached_between_steps_is_replaced_before_the_next(tmux_server: TmuxServer) -> None:
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "a", "sleep 100000")
    control, _ = pair(tmux_server.name)
    try:
        assert run(control, *LIST).exit_code == 0
        tmux_server.cmd("detach-client", "-s", "a")  # someone detaches every client of the session
        deadline = time.monotonic() + 5
        while tmux_server.cmd("list-clients", "-F", "#{client_name}").stdout:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.05)
        assert run(control, "set-option", "-p", "-t", "%0", "@after", "1") == m.Proc(exit_code=0)
        assert control.tmux_via == "control" and control._clients == 2
        assert tmux_server.cmd("show-option", "-qv", "-p", "-t", "%0", "@after").stdout == "1\n"
    finally:
        control.end_run()


@pytest.mark.tmux
def test_the_client_adds_no_pane_and_changes_no_size(tmux_server: TmuxServer) -> None:
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "a", "-x", "123", "-y", "45", "sleep 100000")
    shape = ("list-panes", "-a", "-F", "#{pane_id} #{window_width}x#{window_height} #{pane_width}x#{pane_height}")
    before = tmux_server.cmd(*shape).stdout
    control, _ = pair(tmux_server.name)
    try:
        assert run(control, *shape) == m.Proc(exit_code=0, stdout=before)
        assert tmux_server.cmd(*shape).stdout == before == "%0 123x45 123x45\n"
        flags = tmux_server.cmd("list-clients", "-F", "#{client_flags}").stdout
        assert "ignore-size" in flags and "no-output" in flags and "control-mode" in flags
    finally:
        control.end_run()


@pytest.mark.tmux
def test_kill_server_closes_the_client_first(tmux_server: TmuxServer) -> None:
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "a", "sleep 100000")
    control, _ = pair(tmux_server.name)
    assert run(control, *LIST).exit_code == 0
    client = control._client
    assert client is not None
    assert run(control, "kill-server") == m.Proc(exit_code=0)
    assert control.tmux_via == "spawn" and not alive(client.pid) and control._client is None
    assert run(control, *LIST).exit_code == 1  # no server: the start fails, the call is spawned
    control.end_run()


def _one_list_then(fail: BaseException | None) -> Gen[m.Done]:
    yield from expect(m.Run(tool="tmux", args=LIST), m.Proc)
    if fail is not None:
        raise fail
    return m.Done(outcome=m.Outcome(status="ok"))


@pytest.mark.tmux
@pytest.mark.parametrize("ending", ["done", "program_error", "interrupted_by_listener"])
def test_every_run_closes_its_client(tmux_server: TmuxServer, ending: str) -> None:
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "a", "sleep 100000")
    control, _ = pair(tmux_server.name)
    pids: list[int] = []

    def listener(step: m.Step, observation: m.Observation) -> None:
        assert control._client is not None
        pids.append(control._client.pid)
        if ending == "interrupted_by_listener":
            raise KeyboardInterrupt

    failure = RuntimeError("boom") if ending == "program_error" else None
    with contextlib.suppress(KeyboardInterrupt):
        run_program(lambda: _one_list_then(failure), control, listener=listener)
    assert pids and not alive(pids[0]) and control._client is None
    assert tmux_server.cmd("list-clients", "-F", "#{client_name}").stdout == ""


@pytest.mark.tmux
def test_a_forked_child_leaves_its_parents_client_alone(tmux_server: TmuxServer) -> None:
    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "a", "sleep 100000")
    control, _ = pair(tmux_server.name)
    try:
        assert run(control, *LIST).exit_code == 0
        child = os.fork()
        if child == 0:  # pragma: no cover - the child
            piped._close_all()  # what its interpreter exit would do
            os._exit(0 if not piped._LIVE else 1)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert run(control, *LIST).exit_code == 0 and control.tmux_via == "control"
        assert control.tmux_summary() is not None and control._clients == 1
    finally:
        control.end_run()


# ----------------------------------------------------------------------------------------- the audit


@pytest.mark.tmux
def test_the_audit_log_says_how_each_call_was_answered_and_replays(tmux_server: TmuxServer, tmp_path: Path) -> None:
    leader = tmux_server.new_session("lead")
    env = base_env(PANEFLEET_STATE_DIR=str(tmp_path / "pf"))
    executor = Executor(env=env, tmux_socket=tmux_server.name)
    request = TeamInitRequest(team="alpha", cwd=str(tmp_path), leader_pane=leader)
    done, journal, path = run_operation("team.init", request, executor, env=env)
    assert done.outcome.status == "ok", done
    assert path is not None and executor._client is None
    records = [json.loads(line) for line in path.read_text().splitlines()]
    entries = [r for r in records if r["type"] == "entry"]
    tmux_entries = [r for r in entries if r["step"]["op"] == "run" and r["step"]["tool"] == "tmux"]
    assert [r["tmux_via"] for r in tmux_entries] == ["spawn" if r["step"]["args"] == ["-V"] else "control"
                                                     for r in tmux_entries]
    assert all("tmux_via" not in r for r in entries if r not in tmux_entries)
    assert records[-1]["tmux_executor"] == {"requested": "control", "control_calls": len(tmux_entries) - 1,
                                            "spawned_calls": 1, "control_clients": 1, "fallback": ""}
    assert replay(path).ok
    old = tmp_path / "old.jsonl"  # as written before the executor said how it answered
    old.write_text("".join(json.dumps({k: v for k, v in r.items() if k not in ("tmux_via", "tmux_executor")}) + "\n"
                           for r in records))
    assert replay(old).ok and replay(old).steps == replay(path).steps == len(journal)


OWNER_THEN_HANG = """
import sys, time
sys.path.insert(0, {root!r})
from pure import model as m
from shell.run.executor import Executor
executor = Executor(env={env!r}, tmux_socket={socket!r})
answer = executor.execute(m.Run(tool="tmux", args=("list-panes", "-a", "-F", "#{{pane_id}}")))
print(executor.tmux_via, executor._client.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.tmux
def test_a_killed_owner_leaves_no_client_attached(tmux_server: TmuxServer, tmp_path: Path) -> None:
    """However panefleet ends — a SIGKILL included — its control client ends with it: no client is
    left attached, and ``kill-server`` returns at once (a client left attached keeps the server
    waiting)."""
    import subprocess
    import sys

    tmux_server.cmd("-f", "/dev/null", "new-session", "-d", "-s", "a", "sleep 100000")
    script = tmp_path / "owner.py"
    script.write_text(OWNER_THEN_HANG.format(root=str(Path(__file__).resolve().parents[2]), env=base_env(),
                                             socket=tmux_server.name))
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    via, client = owner.stdout.readline().split()
    assert via == "control" and alive(int(client))
    assert "1" in tmux_server.cmd("list-clients", "-F", "#{client_control_mode}").stdout
    owner.kill()
    owner.wait(timeout=10)
    deadline = time.monotonic() + 2
    while alive(int(client)) or tmux_server.cmd("list-clients", "-F", "#{client_pid}").stdout:
        assert time.monotonic() < deadline, "the control client outlived its owner"
        time.sleep(0.02)
    started = time.monotonic()
    tmux_server.cmd("kill-server")
    assert time.monotonic() - started < 1
