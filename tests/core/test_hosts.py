"""pure/hosts.py: destinations ssh reads only as hosts, quoting a POSIX login shell reads back literally (run
through the real sh, dash, bash and zsh here; through sshd in tests/hosts/test_ssh.py), and ssh's failures typed
from its own words (as OpenSSH 9.2 prints them)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from pure import hosts

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
