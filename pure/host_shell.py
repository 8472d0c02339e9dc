"""The shell a run keeps on a host (``shell/run/host_shell.py``): one POSIX ``sh`` on the far end of one ssh
session that runs a whole stream of commands, each as a call over ssh would, without a session and a
login shell per command (about 110 ms each, ``bench/ssh_calls.py``).

The wire, in bytes, both ways; nothing sent is ever parsed as shell text on the host:

* the shell first writes :data:`READY`, a space, its process id on the host and a newline;
* a request is a line ``N C`` (the number of arguments, the length of standard input), then each argument:
  ``=`` and the argument on one line when it holds no newline, else its length in bytes on a line and then
  exactly those bytes; then ``C`` bytes of standard input;
* the shell runs the arguments as one command (``exec "$@"`` in a subshell, the first argument found on
  ``PATH`` as any command's; standard input from the bytes given, standard output and error each to a
  file of a private folder), then answers with three lines, the exit status and the lengths of standard
  output and standard error, followed by exactly those bytes. ``sh -c PROGRAM NAME ARG…`` is run as
  ``sh`` would run it, but in a subshell of this shell (a process less: most of what a run does on a
  host is such a program, ``pure/remote_files.py``), ``PROGRAM`` given the arguments as ``$1``… (``$0`` is the shell's own).

Arguments arrive through ``read -r`` and ``head -c`` (or ``dd``) into variables and out through ``"$@"``;
only the text of a ``sh -c`` program, which panefleet writes, is parsed as shell (as ``sh -c`` parses it):
``$(…)``, quotes and newlines in arguments stay literal (``tests/core/test_host_shell.py``,
``tests/hosts/test_ssh.py``). The folder is removed
when the shell ends, which it does when its input ends (the session closed, panefleet gone).
"""

from __future__ import annotations

from collections.abc import Sequence

READY = b"panefleet-host-shell-ready"

SERVER = (
    "d=$(mktemp -d) || exit 1; trap 'rm -rf -- \"$d\"' EXIT; trap 'exit 1' HUP INT TERM; "
    # ``take N`` copies exactly N bytes of input: ``head -c`` when it reads no further than it copies
    # (tried on a pipe that holds more), else ``dd`` a byte at a time
    "if [ \"$(printf abc | { head -c 1 >/dev/null 2>&1; cat; })\" = bc ]; then take() { head -c \"$1\"; }; "
    "else take() { dd bs=1 count=\"$1\" 2>/dev/null; }; fi; "
    "size() { if [ -s \"$1\" ]; then wc -c <\"$1\"; else echo 0; fi; }; "
    f"printf '%s %s\\n' {READY.decode()} \"$$\"; "
    "while IFS=' ' read -r n c; do "
    "set --; "
    "while [ \"$n\" -gt 0 ]; do "
    "IFS= read -r a || exit 1; "
    "case $a in =*) set -- \"$@\" \"${a#=}\";; "
    "*) a=$(take \"$a\"; printf .); set -- \"$@\" \"${a%.}\";; esac; "
    "n=$((n - 1)); done; "
    "if [ \"$c\" -gt 0 ]; then take \"$c\"; fi >\"$d/i\"; "
    "if [ \"$1\" = sh ] && [ \"$2\" = -c ] && [ \"$#\" -ge 4 ]; then p=$3; shift 4; "
    "(eval \"$p\") <\"$d/i\" >\"$d/o\" 2>\"$d/e\"; else (exec \"$@\") <\"$d/i\" >\"$d/o\" 2>\"$d/e\"; fi; r=$?; "
    "printf '%s\\n' \"$r\"; size \"$d/o\"; size \"$d/e\"; "
    "if [ -s \"$d/o\" ] || [ -s \"$d/e\" ]; then cat -- \"$d/o\" \"$d/e\"; fi; "
    "done"
)


def request(argv: Sequence[str], stdin: bytes | None = None) -> bytes:
    """The bytes that ask the shell to run ``argv`` with ``stdin``. ``argv`` is not empty and holds no NUL
    (``pure/hosts.py`` ``remote_command`` refuses both before anything is sent)."""
    data = stdin or b""
    parts = [f"{len(argv)} {len(data)}\n".encode()]
    for word in argv:
        encoded = word.encode("utf-8")
        if b"\n" in encoded:
            parts.append(f"{len(encoded)}\n".encode() + encoded)
        else:
            parts.append(b"=" + encoded + b"\n")
    parts.append(data)
    return b"".join(parts)


def ready_pid(line: bytes) -> int | None:
    """The shell's process id on the host from its first line; None when the line is not that."""
    words = line.split()
    if len(words) != 2 or words[0] != READY or not words[1].isdigit():
        return None
    return int(words[1])


def answer_head(lines: Sequence[bytes]) -> tuple[int, int, int] | None:
    """The exit status and the two lengths from the answer's first three lines; None when they are not
    numbers (``wc`` may pad its count with blanks)."""
    try:
        code, out, err = (int(line.strip()) for line in lines)
    except ValueError:
        return None
    return (code, out, err) if out >= 0 and err >= 0 else None
