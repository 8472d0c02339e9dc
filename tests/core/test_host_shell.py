"""The shell a run keeps on a host (pure/host_shell.py, shell/run/host_shell.py), driven here through local
POSIX shells and Perl: every argument and byte of input arrives as itself, answers come back whole, a deadline
ends it, and its private folder goes with it; without perl, the POSIX shell serves. The same over real sshd
hosts: tests/hosts/test_ssh.py."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pure.host_shell import SERVER, request, server_argv
from shell.run.host_shell import HostShell, ShellTimedOut

HOSTILE = ["$(touch CANARY)", "`touch CANARY`", "; touch CANARY", "a'b\"c", "new\nline", "\n", "trail\n\n",
           "=leading equals", "", " lead and trail ", "tab\there", "back\\slash", "-n", "ünï ✓", "\r\n", "%s %d"]
# each POSIX shell serving the wire (pure/host_shell.py SERVER), and the Perl one (PERL_SERVER)
SHELLS = [shell for shell in ("/bin/sh", "/bin/dash", "/bin/bash") if os.path.exists(shell)] + ["perl"]


def _argv(shell: str) -> tuple[str, ...]:
    return server_argv() if shell == "perl" else (shell, "-c", SERVER)


def _start(tmp_path: Path, shell: str, env: dict[str, str] | None = None) -> HostShell:
    argv = _argv(shell)
    started = HostShell.start("here", argv[0], argv[1:], env or dict(os.environ), time.monotonic() + 10)
    assert _server_program(started.unwrap()) == ("perl" if shell == "perl" else Path(shell).name)
    return started.unwrap()


def _server_program(host_shell: HostShell) -> str:
    """The program serving the wire: the launcher's ``sh`` exec'd perl, or the POSIX shell."""
    return Path(f"/proc/{host_shell.pid_on_host}/comm").read_text(encoding="utf-8").strip()


def _over_reading_head(tmp_path: Path) -> dict[str, str]:
    """A PATH whose ``head`` takes all the input there is, as a buffering one may: the shell must not
    use it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "head").write_text("#!/bin/sh\ncat\n")
    (bin_dir / "head").chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("head", ["real", "over-reading"])
def test_every_argument_and_byte_arrives_as_itself(tmp_path: Path, shell: str, head: str) -> None:
    env = _over_reading_head(tmp_path) if head == "over-reading" else None
    words = [word.replace("CANARY", str(tmp_path / "canary")) for word in HOSTILE]
    host_shell = _start(tmp_path, shell, env)
    try:
        for _ in range(3):  # one after another through the same shell
            answer = host_shell.call(["printf", "%s\\0", *words], None, time.monotonic() + 10)
            assert answer.exit_code == 0 and answer.stdout.split("\0")[:-1] == words
        data = bytes(range(256)) * 40 + b"\n\n"
        echoed = host_shell.call(["od", "-An", "-v", "-tx1"], data, time.monotonic() + 10)
        assert bytes.fromhex(echoed.stdout.replace("\n", " ")) == data  # NUL and all, through standard input
        failed = host_shell.call(["sh", "-c", 'printf out; printf "err\\n" >&2; exit 7'], None, time.monotonic() + 10)
        assert (failed.exit_code, failed.stdout, failed.stderr) == (7, "out", "err\n")
        ended = host_shell.call(["sh", "-c", 'trap "echo trapped" EXIT; exit 9', "sh"], None, time.monotonic() + 10)
        assert (ended.exit_code, ended.stdout) == (9, "trapped\n")  # its exit ends its subshell, not the shell
        bare = host_shell.call(["sh", "-c", 'echo "$#"'], b"", time.monotonic() + 10)
        assert (bare.exit_code, bare.stdout) == (0, "0\n")
        missing = host_shell.call(["no-such-command-here"], None, time.monotonic() + 10)
        assert missing.exit_code == 127 and "no-such-command-here" in missing.stderr
        assert host_shell.usable()
    finally:
        host_shell.close()
    assert not (tmp_path / "canary").exists()


@settings(max_examples=40, deadline=None)
@given(words=st.lists(st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",))), min_size=1,
                      max_size=6),
       data=st.binary(max_size=3000))
@pytest.mark.parametrize("shell", ["/bin/sh", "perl"])
def test_generated_arguments_and_input_arrive_as_themselves(shell: str, words: list[str], data: bytes) -> None:
    argv = _argv(shell)
    host_shell = HostShell.start("here", argv[0], argv[1:], dict(os.environ), time.monotonic() + 10).unwrap()
    try:
        answer = host_shell.call(["sh", "-c", 'printf "%s\\0" "$@"; cat', "sh", *words], data, time.monotonic() + 10)
        assert answer.exit_code == 0
        assert answer.stdout == "".join(f"{word}\0" for word in words) + data.decode("utf-8", "replace")
    finally:
        host_shell.close()


@pytest.mark.parametrize("shell", ["/bin/sh", "perl"])
def test_a_call_past_its_deadline_ends_the_shell_and_its_folder_goes_with_it(tmp_path: Path, shell: str) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    host_shell = _start(tmp_path, shell, env)
    assert len(list(tmp_path.iterdir())) == 1  # its private folder
    started = time.monotonic()
    with pytest.raises(ShellTimedOut):
        host_shell.call(["sleep", "30"], None, time.monotonic() + 0.5)
    assert time.monotonic() - started < 5 and not host_shell.usable()
    host_shell = _start(tmp_path, shell, env)
    assert host_shell.call(["true"], None, time.monotonic() + 10).exit_code == 0
    host_shell.close()
    deadline = time.monotonic() + 5
    while list(tmp_path.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.iterdir()) == []  # both shells removed their folders as they ended


def test_the_request_names_each_argument_exactly() -> None:
    assert request(["a b", "x\ny", ""], b"in") == b"3 2\n=a b\n3\nx\ny=\nin"


def test_a_host_without_perl_gets_the_posix_shell(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # every tool the POSIX shell uses, and no perl
    bin_dir.mkdir()
    for tool in ("sh", "mktemp", "head", "cat", "wc", "rm", "dd", "printf"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(bin_dir)}
    argv = server_argv()
    host_shell = HostShell.start("here", "/bin/sh", argv[1:], env, time.monotonic() + 10).unwrap()
    try:
        assert _server_program(host_shell) == "sh"
        assert host_shell.call(["printf", "%s", "a b"], None, time.monotonic() + 10).stdout == "a b"
    finally:
        host_shell.close()
