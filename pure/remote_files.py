"""A run's file steps on another machine: each one POSIX ``sh`` program, run over that host's one
master connection (``shell/run/hosts.py``, ``file_step``), and its answer read back as the observation
the local executor gives for the same step (``shell/run/executor.py``). The path and every other value
arrive as arguments, quoted for the login shell (``pure/hosts.py``, ``remote_command``); a file's
bytes arrive on standard input, so no size limit of a command line applies and nothing is re-parsed.

What a worker's agent reads or runs (its inbox, instructions, startup script) is written on the
worker's host this way; the team's records stay on the machine that runs panefleet (docs/hosts.md).

The same rules as locally:
* a write goes to a new temporary file beside the target (made only if it did not exist), is synced, and
  is renamed over it: a crash leaves the old bytes or the new ones. Missing parents are made. The mode is the step's,
  else the replaced file's, else 0644;
* a read of a path that does not exist (a dangling link included) is ``content`` None; a removal of
  one succeeds; a listing of one is ``names`` None;
* ``Stat`` follows the local kinds: ``symlink``, ``absent``, ``dir``, ``file``, ``other``;
* an append makes missing parents and syncs; ``RealPath`` resolves links as far as the path exists.

Not the same: a local read refuses bytes that are not UTF-8 (``not_utf8``); a remote one decodes them
with U+FFFD, as every answer of a remote call is decoded.
"""

from __future__ import annotations

from typing import Union

from attrs import frozen
from returns.result import Failure, Result, Success

from pure import model as m

FileStep = Union[m.ReadFile, m.WriteFile, m.AppendFile, m.MakeDir, m.RemovePath, m.ListDir, m.Stat, m.RealPath]
FILE_STEPS = (m.ReadFile, m.WriteFile, m.AppendFile, m.MakeDir, m.RemovePath, m.ListDir, m.Stat, m.RealPath)

ABSENT = 3  # the exit status of a read or a listing of a path that does not exist

# ``$1`` is the path throughout. A write's folder is the path up to its last slash (paths are absolute;
# no command substitution, which would drop a trailing newline of the name).
_READ = f'[ -e "$1" ] || exit {ABSENT}; exec cat -- "$1"'
# Processes are what a write costs on the host (a few ms each): the folder is made, the temporary file
# created (``set -C``: only when it does not exist yet; named by this shell's pid, unique while it runs)
# and the mode of a new file set (``umask``) by the shell itself; ``cat``, ``sync`` and ``mv`` always run,
# ``stat`` and ``chmod`` only for a mode given or kept from the file replaced.
_WRITE = (
    'set -e; case $1 in */*) d=${1%/*}; d=${d:-/};; *) d=.;; esac; [ -d "$d" ] || mkdir -p -- "$d"; '
    'umask 022; set -C; n=0; while t="$d/.pf-write.$$.$n"; ! { : >"$t"; } 2>/dev/null; do '
    'n=$((n + 1)); [ "$n" -lt 100 ] || { echo "cannot make a temporary file in $d" >&2; exit 1; }; done; set +C; '
    'trap \'rm -f -- "$t"\' EXIT; cat >|"$t"; '
    'if [ -n "$2" ]; then mode=$2; '
    'elif [ -f "$1" ]; then mode=$(stat -c %a -- "$1" 2>/dev/null || stat -f %Lp -- "$1"); '
    'else mode=644; fi; [ "$mode" = 644 ] || chmod -- "$mode" "$t"; '
    '{ sync -- "$t" 2>/dev/null || sync; }; mv -f -- "$t" "$1"; trap - EXIT'
)
_APPEND = ('set -e; case $1 in */*) d=${1%/*}; d=${d:-/};; *) d=.;; esac; mkdir -p -- "$d"; cat >>"$1"; '
           '{ sync -- "$1" 2>/dev/null || sync; }')
# ``realpath -m`` (GNU, busybox) resolves a path whose end does not exist, as a local one is resolved;
# without it, a folder is resolved by ``cd -P`` and anything else is left as given
_REAL_PATH = ('realpath -m -- "$1" 2>/dev/null || { cd -P -- "$1" 2>/dev/null && pwd -P; } || printf "%s\\n" "$1"')
_MAKE_DIR = ('if [ "$2" = new ] && { [ -e "$1" ] || [ -L "$1" ]; }; then echo "File exists: $1" >&2; exit 1; fi; '
             'exec mkdir -p -- "$1"')
_REMOVE = ('if [ -L "$1" ] || [ -f "$1" ]; then exec rm -f -- "$1"; '
           'elif [ -d "$1" ]; then if [ "$2" = tree ]; then exec rm -rf -- "$1"; else exec rmdir -- "$1"; fi; fi')
_LIST = (f'[ -e "$1" ] || exit {ABSENT}; cd -- "$1" || exit 1; '
         'for f in * .[!.]* ..?*; do if [ -e "$f" ] || [ -L "$f" ]; then printf "%s\\0" "$f"; fi; done')
_STAT = ('if [ -L "$1" ]; then echo symlink; elif [ ! -e "$1" ]; then echo absent; '
         'elif [ -d "$1" ]; then echo dir; elif [ -f "$1" ]; then echo file; else echo other; fi')
STAT_KINDS = frozenset({"symlink", "absent", "dir", "file", "other"})
# The programs the Perl shell on a host does itself, by name (pure/host_shell.py ``PERL_SERVER``), with the
# same answers; every other one it runs as ``sh`` would.
NATIVE = (("read", _READ), ("write", _WRITE), ("append", _APPEND), ("stat", _STAT), ("list", _LIST))


@frozen
class RemoteCall:
    """What runs on the host for one file step: ``argv`` (each word literal there) and the bytes on its
    standard input."""

    argv: tuple[str, ...]
    stdin: bytes | None = None


def _sh(program: str, *args: str) -> tuple[str, ...]:
    return ("sh", "-c", program, "sh", *args)


def call_for(step: FileStep) -> RemoteCall:
    """The program that does ``step`` on the host."""
    if isinstance(step, m.ReadFile):
        return RemoteCall(_sh(_READ, step.path))
    if isinstance(step, m.WriteFile):
        mode = "" if step.mode is None else format(step.mode, "o")
        return RemoteCall(_sh(_WRITE, step.path, mode), step.content.encode("utf-8"))
    if isinstance(step, m.AppendFile):
        return RemoteCall(_sh(_APPEND, step.path), step.content.encode("utf-8"))
    if isinstance(step, m.RealPath):
        return RemoteCall(_sh(_REAL_PATH, step.path))
    if isinstance(step, m.MakeDir):
        return RemoteCall(_sh(_MAKE_DIR, step.path, "ok" if step.exist_ok else "new"))
    if isinstance(step, m.RemovePath):
        return RemoteCall(_sh(_REMOVE, step.path, "tree" if step.recursive else "one"))
    if isinstance(step, m.ListDir):
        return RemoteCall(_sh(_LIST, step.path))
    return RemoteCall(_sh(_STAT, step.path))


def observe(step: FileStep, proc: m.Proc) -> Result[m.Observation, str]:
    """What ``step`` observed, from the answer of its program; why not, when the answer says nothing
    a local step could have said (a ``Stat`` that did not answer with a kind)."""
    code = proc.exit_code
    said = proc.stderr.strip() or f"exit status {code}"
    if isinstance(step, m.ReadFile):
        if code == 0:
            return Success(m.FileData(content=proc.stdout))
        return Success(m.FileData(content=None, error="" if code == ABSENT else said))
    if isinstance(step, m.ListDir):
        if code == 0:
            return Success(m.Listing(names=tuple(sorted(name for name in proc.stdout.split("\0") if name))))
        return Success(m.Listing(names=None, error="" if code == ABSENT else said))
    if isinstance(step, m.RealPath):
        if code == 0 and proc.stdout.endswith("\n"):
            return Success(m.Value(value=proc.stdout[:-1]))
        return Failure(f"realpath {step.path!r} did not answer: {said}")
    if isinstance(step, m.Stat):
        kind = proc.stdout.strip()
        if code == 0 and kind in STAT_KINDS:
            return Success(m.Value(value=kind))
        return Failure(f"stat {step.path!r} did not answer: {said}")
    return Success(m.Ack(ok=True) if code == 0 else m.Ack(ok=False, error=f"{said}: {step.path}"))
