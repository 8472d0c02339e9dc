"""pure/hosts.py: destinations ssh reads only as hosts, quoting a POSIX login shell reads back literally (run
through the real sh, dash, bash and zsh here; through sshd in tests/hosts/test_ssh.py), and ssh's failures typed
from its own words (as OpenSSH 9.2 prints them); a host's tmux control client that ends with its input even when
its output's reader is gone (run here through sh, as a login shell runs it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from pure import hosts
from tests.conftest import TmuxServer

SHELLS = [shell for shell in ("sh", "dash", "bash", "zsh") if shutil.which(shell)]


def _through(shell: str, argv: list[str]) -> list[str]:
    """What ``argv`` becomes when a login shell parses ``remote_command(argv)``, as sshd has it do."""
    command = hosts.remote_command(["printf", "%s\\0", *argv]).unwrap()
    done = subprocess.run([shell, "-c", command], capture_output=True, check=True, timeout=10)
    return done.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


@pytest.mark.parametrize("shell", SHELLS)
def test_hostile_words_read_back_as_themselves(shell: str, tmp_path: object) -> None:
    canary = f"{tmp_path}/ran"
    words = [f"$(touch {canary})", f"`touch {canary}`", f"; touch {canary}", "a'b\"c", "'", "\\", "new\nline",
             "$HOME", "*", "~", "-n", "", " x ", "!1", "#", f"&& touch {canary}", "ünï ✓", "%s"]
    assert _through(shell, words) == words
    assert not shutil.os.path.exists(canary)  # type: ignore[attr-defined]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=12),
                min_size=1, max_size=4))
def test_any_text_reads_back_through_sh(words: list[str]) -> None:
    assert _through("sh", words) == words


def test_plain_words_stay_readable_and_nul_or_nothing_is_refused() -> None:
    assert hosts.remote_command(["tmux", "-L", "pf-1", "list-panes", "-F", "#{pane_id}"]).unwrap() == (
        "tmux -L pf-1 list-panes -F '#{pane_id}'")
    assert hosts.remote_command([]) == Failure("remote_command_empty")
    assert hosts.remote_command(["a\0b"]) == Failure("remote_argument_holds_nul")


@pytest.mark.parametrize("destination", ["build1", "me@build1", "me@build-1.example.org", "10.0.0.7", "[::1]",
                                         "ci_runner@host_alias"])
def test_a_destination_is_taken_as_it_is(destination: str) -> None:
    assert hosts.check_destination(destination) == Success(destination)


@pytest.mark.parametrize("destination", ["", "-oProxyCommand=touch x", "me@-x", "host name", "host\n", "a;b",
                                         "$(x)", "host:22", "ssh://host", "user@@host", "host\x1b"])
def test_what_ssh_could_read_as_anything_but_a_host_is_refused(destination: str) -> None:
    refused = hosts.check_destination(destination)
    assert isinstance(refused, Failure) and refused.failure().kind == "bad_destination"
    assert "\n" not in str(refused.failure()) and "\x1b" not in str(refused.failure())


def test_every_call_goes_over_the_master_without_prompting_and_ends_ssh_options() -> None:
    args = hosts.ssh_args("build1", "/run/pf", "true", config_file="/etc/pf/ssh_config")
    assert args[:2] == ("-F", "/etc/pf/ssh_config")
    for option in ("BatchMode=yes", "ControlMaster=auto", "ControlPath=/run/pf/%C", "ConnectTimeout=10"):
        assert option in args
    assert args[-3:] == ("build1", "--", "true")
    assert hosts.master_args("check", "build1", "/run/pf") == ("-o", "ControlPath=/run/pf/%C", "-O", "check",
                                                                "build1")


CHANGED = """@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
The fingerprint for the ED25519 key sent by the remote host is
SHA256:2Y9n1pIqkJ3tvTqpNo1I6BuqsXh7ROGvK/Nd6u7rV+c.
Host key verification failed.
"""


@pytest.mark.parametrize(("code", "stderr", "kind", "detail"), [
    (255, CHANGED, "host_key_changed", "SHA256:2Y9n1pIqkJ3tvTqpNo1I6BuqsXh7ROGvK/Nd6u7rV+c"),
    (255, "No ED25519 host key is known for [127.0.0.1]:2203 and you have requested strict checking.\n"
          "Host key verification failed.\n", "host_key_unknown", "Host key verification failed."),
    (255, "root@127.0.0.1: Permission denied (publickey).\n", "auth_refused", "root@127.0.0.1: Permission denied "
                                                                           "(publickey)."),
    (255, "ssh: connect to host 127.0.0.1 port 2201: Connection refused\n", "unreachable",
     "ssh: connect to host 127.0.0.1 port 2201: Connection refused"),
    (255, "ssh: Could not resolve hostname nowhere: Name or service not known\n", "unreachable",
     "ssh: Could not resolve hostname nowhere: Name or service not known"),
    (255, "Connection to 127.0.0.1 closed by remote host.\n", "connection_dropped",
     "Connection to 127.0.0.1 closed by remote host."),
    (255, "kex_exchange_identification: read: odd\n", "ssh_failed", "kex_exchange_identification: read: odd"),
    (None, "", "unreachable", "no answer within the deadline"),
])
def test_ssh_failures_are_typed_from_its_own_words(code: int | None, stderr: str, kind: str, detail: str) -> None:
    fault = hosts.fault_of("build1", code, stderr)
    assert fault is not None and (fault.kind, fault.host, fault.detail) == (kind, "build1", detail)
    assert str(fault).startswith(f"host_{kind}:build1: ")


def test_a_command_that_ran_is_no_fault() -> None:
    assert hosts.fault_of("build1", 0, "") is None
    assert hosts.fault_of("build1", 1, "Permission denied") is None  # the command's own words, not ssh's
    assert hosts.fault_of("build1", 255, "") is None  # ambiguous: shell/run/hosts.py asks the master


@pytest.mark.parametrize(("shell", "ok"), [("/bin/bash", True), ("/usr/bin/zsh", True), ("/bin/sh", True),
                                           ("/usr/bin/fish", False), ("/bin/tcsh", False), ("", False)])
def test_only_a_posix_login_shell_is_used(shell: str, ok: bool) -> None:
    checked = hosts.check_login_shell("build1", shell)
    assert isinstance(checked, Success) is ok
    if not ok:
        assert checked.failure().kind == "login_shell_unsupported"


@pytest.mark.tmux
@pytest.mark.tmux_executors("control")
def test_a_control_client_on_a_host_ends_with_its_input_after_its_reader_went_away(tmux_server: TmuxServer) -> None:
    """The run's ssh session ended (a SIGKILLed run's) while tmux still had output for the client: tmux 3.3a
    would keep that client attached for good; through the relay it ends once its input does."""
    tmux_server.new_session()
    args = ("-u", "-L", tmux_server.name, "-N", "-C", "attach-session", "-E", "-f", "no-output,ignore-size")
    command = hosts.remote_command(hosts.control_client_argv(args)).unwrap()
    read_end, write_end = os.pipe()
    client = subprocess.Popen(["sh", "-c", command], stdin=subprocess.PIPE, stdout=write_end, start_new_session=True)
    os.close(write_end)
    try:
        assert client.stdin is not None
        client.stdin.write(b"display-message -p relayed\n")
        client.stdin.flush()
        answer = b""
        while b"relayed" not in answer:  # the protocol passes through the relay as it is
            chunk = os.read(read_end, 4096)
            assert chunk, answer
            answer += chunk
        client.stdin.write(b"list-keys\n" * 40)  # far more than a pipe holds, and nobody reads it
        client.stdin.flush()
        time.sleep(1)
        os.close(read_end)
        read_end = -1
        client.stdin.close()
        deadline = time.monotonic() + 10
        while client.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.poll() is not None
        assert tmux_server.cmd("list-clients").stdout == ""
    finally:
        if read_end >= 0:
            os.close(read_end)
        if client.poll() is None:
            os.killpg(client.pid, 9)
            client.wait()
