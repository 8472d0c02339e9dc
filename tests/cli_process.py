"""``panefleet`` run by a test as a person runs it: a process of its own, with its own arguments,
environment, folder, standard streams and exit status.

By default the process is spawned (``python cli.py …``) and pays the import of the modules every
command needs (about 140 ms). The fast tier (``./dev test fast`` sets ``PANEFLEET_TEST_CLI=fork``)
forks it from the test's own process instead, where those modules are imported already: still a
process of its own (its environment, folder, streams, signals and exit are its own, and nothing it
does reaches the test's process), started in a few milliseconds. The whole run spawns every one.
"""

from __future__ import annotations

import atexit
import io
import os
import selectors
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "cli.py"


def forking() -> bool:
    return os.environ.get("PANEFLEET_TEST_CLI") == "fork"


def run_cli(args: Sequence[str], *, env: Mapping[str, str], cwd: str | Path = ROOT, stdin: str = "",
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``panefleet ARGS`` in ``cwd`` with exactly ``env``; its stdin is ``stdin``; stdout and stderr
    captured as text."""
    argv = [sys.executable, str(CLI), *args]
    if not forking():
        return subprocess.run(argv, env=dict(env), cwd=cwd, input=stdin, capture_output=True, text=True,
                              timeout=timeout, check=False)
    return _forked(argv, env, str(cwd), stdin, timeout)


def _forked(argv: list[str], env: Mapping[str, str], cwd: str, stdin: str,
            timeout: float) -> subprocess.CompletedProcess[str]:
    import cli  # noqa: F401 - imported here, before the fork, so that the child starts warm

    child_in, parent_in = os.pipe()
    parent_out, child_out = os.pipe()
    parent_err, child_err = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: becomes the command's process, and never returns to the test
        code = 70
        try:
            for fd, into in ((child_in, 0), (child_out, 1), (child_err, 2)):
                os.dup2(fd, into)
            for fd in (child_in, parent_in, parent_out, child_out, parent_err, child_err):
                os.close(fd)
            _as_a_fresh_process(argv, env, cwd)
            from tests.herdr.in_process import in_forked_cli

            in_forked_cli()
            code = _main()
        except BaseException:  # noqa: BLE001 - told on its stderr, as an uncaught error would be
            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            os._exit(code)
    for fd in (child_in, child_out, child_err):
        os.close(fd)
    out, err = _talk(pid, parent_in, parent_out, parent_err, stdin.encode(), timeout, argv)
    _, status = os.waitpid(pid, 0)
    return subprocess.CompletedProcess(argv, os.waitstatus_to_exitcode(status), out.decode(), err.decode())


def _as_a_fresh_process(argv: list[str], env: Mapping[str, str], cwd: str) -> None:
    """What a new interpreter would start with: no exit handler or signal handler of the test's, its
    own arguments, environment, folder and standard streams."""
    atexit._clear()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM, signal.SIGCHLD):
        signal.signal(number, signal.SIG_DFL)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.argv = argv[1:]
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", write_through=True)


def _main() -> int:
    import cli

    try:
        return cli.main()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


def _talk(pid: int, stdin_fd: int, out_fd: int, err_fd: int, data: bytes, timeout: float,
          argv: list[str]) -> tuple[bytes, bytes]:
    """Write ``data`` to the child's stdin and read its stdout and stderr to their ends, as
    ``communicate`` does; past ``timeout`` the child is killed and ``TimeoutExpired`` raised."""
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        if data:
            os.set_blocking(stdin_fd, False)
            selector.register(stdin_fd, selectors.EVENT_WRITE)
        else:
            os.close(stdin_fd)
        for fd in (out_fd, err_fd):
            selector.register(fd, selectors.EVENT_READ)
        view = memoryview(data)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                for key in list(selector.get_map().values()):
                    os.close(key.fd)
                raise subprocess.TimeoutExpired(argv, timeout)
            for key, _ in selector.select(left):
                if key.fd == stdin_fd:
                    try:
                        view = view[os.write(stdin_fd, view[:65536]):]
                    except BrokenPipeError:
                        view = view[:0]
                    if not view:
                        selector.unregister(stdin_fd)
                        os.close(stdin_fd)
                    continue
                chunk = os.read(key.fd, 65536)
                if chunk:
                    chunks[key.fd].append(chunk)
                else:
                    selector.unregister(key.fd)
                    os.close(key.fd)
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])
