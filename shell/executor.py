"""Execute one step of a plan and report what was observed. The only place effects happen."""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from returns.io import IOResult, IOSuccess, impure_safe
from returns.unsafe import unsafe_perform_io

from pure import model as m
from shell import fs

T = TypeVar("T")

StoreHandler = Callable[[m.Store], m.JsonResult]


def which(tool: str, env: Mapping[str, str]) -> str | None:
    """Resolve ``tool`` on the PATH of ``env`` at call time (so tests can plant stubs)."""
    return shutil.which(tool, path=env.get("PATH", os.defpath))


def utc_now() -> str:
    now = _dt.datetime.now(_dt.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def run_process(
    tool: str, args: tuple[str, ...], *, env: Mapping[str, str], cwd: str | None = None
) -> m.Proc:
    path = which(tool, env)
    if path is None:
        return m.Proc(exit_code=None, stderr=f"{tool}: command not found on PATH")
    import sh  # imported lazily: it costs tens of milliseconds of start-up

    try:
        cmd = sh.Command(path)
        done = cmd(
            *args,
            _ok_code=list(range(256)),
            _tty_out=False,
            _return_cmd=True,
            _env=dict(env),
            _cwd=cwd,
            _in=None,
            _truncate_exc=False,
        )
    except sh.SignalException as exc:
        return m.Proc(
            exit_code=128 + abs(exc.exit_code),
            stdout=exc.stdout.decode("utf-8", "replace"),
            stderr=exc.stderr.decode("utf-8", "replace"),
        )
    except OSError as exc:
        return m.Proc(exit_code=None, stderr=f"{tool}: {exc.strerror or exc}")
    except sh.ForkException as exc:  # e.g. the working directory does not exist
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else "could not start"
        return m.Proc(exit_code=None, stderr=f"{tool}: {reason}")
    return m.Proc(
        exit_code=done.exit_code,
        stdout=done.stdout.decode("utf-8", "replace"),
        stderr=done.stderr.decode("utf-8", "replace"),
    )


class Executor:
    """Runs steps against the real world.

    ``tmux_socket`` selects a private tmux server (``tmux -L NAME``) for every tmux step.
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        tmux_socket: str | None = None,
        store: StoreHandler | None = None,
    ) -> None:
        self.env: dict[str, str] = dict(os.environ if env is None else env)
        self.tmux_socket = tmux_socket
        self.store = store
        self._locks: dict[str, str] = {}
        self.calls: dict[str, int] = {}

    def tool_args(self, tool: str, args: tuple[str, ...]) -> tuple[str, ...]:
        if tool == "tmux" and self.tmux_socket:
            return ("-L", self.tmux_socket, *args)
        return args

    def execute(self, step: m.Step) -> m.Observation:  # noqa: PLR0911,PLR0912
        if isinstance(step, m.Run):
            self.calls[step.tool] = self.calls.get(step.tool, 0) + 1
            return run_process(step.tool, self.tool_args(step.tool, step.args), env=self.env, cwd=step.cwd)
        if isinstance(step, m.ReadFile):
            try:
                data = Path(step.path).read_bytes()
            except FileNotFoundError:
                return m.FileData(content=None)
            except OSError as exc:
                return m.FileData(content=None, error=os_error(exc))
            try:
                return m.FileData(content=data.decode("utf-8"))
            except UnicodeDecodeError:
                return m.FileData(content=None, error="not_utf8")
        if isinstance(step, m.WriteFile):
            return _ack(lambda: fs.atomic_write(Path(step.path), step.content.encode("utf-8"), step.mode))
        if isinstance(step, m.AppendFile):
            return _ack(lambda: _append(Path(step.path), step.content))
        if isinstance(step, m.RemovePath):
            return _ack(lambda: fs.remove_path(Path(step.path), step.recursive))
        if isinstance(step, m.MakeDir):
            return _ack(lambda: Path(step.path).mkdir(parents=True, exist_ok=step.exist_ok))
        if isinstance(step, m.ListDir):
            try:
                return m.Listing(names=tuple(sorted(os.listdir(step.path))))
            except FileNotFoundError:
                return m.Listing(names=None)
            except OSError as exc:
                return m.Listing(names=None, error=os_error(exc))
        if isinstance(step, m.Stat):
            return m.Value(value=_stat(Path(step.path)))
        if isinstance(step, m.RealPath):
            return m.Value(value=os.path.realpath(step.path))
        if isinstance(step, m.AcquireLock):
            token = f"{os.getpid()}:{uuid.uuid4().hex}"
            try:
                fs.acquire_lock(
                    Path(step.path),
                    timeout_ms=step.timeout_ms,
                    retry_ms=step.retry_ms,
                    stale_ms=step.stale_ms,
                    token=token,
                )
            except fs.LockTimeout:
                return m.Ack(ok=False, error="timeout")
            except OSError as exc:
                return m.Ack(ok=False, error=f"{type(exc).__name__}: {exc.strerror or exc}")
            self._locks[step.path] = token
            return m.Ack(ok=True)
        if isinstance(step, m.ReleaseLock):
            token = self._locks.pop(step.path, "")
            released = fs.release_lock(Path(step.path), token) if token else False
            return m.Ack(ok=released, error="" if released else "not_held")
        if isinstance(step, m.Sleep):
            time.sleep(max(0, step.ms) / 1000)
            return m.Ack(ok=True)
        if isinstance(step, m.Clock):
            return m.Value(value=utc_now())
        if isinstance(step, m.FreshId):
            return m.Value(value=uuid.uuid4().hex)
        if isinstance(step, m.Store):
            if self.store is None:
                return m.JsonResult(ok=False, error="no store configured")
            return self.store(step)
        raise TypeError(f"unknown step {step!r}")  # pragma: no cover - the union is closed

    def release_all(self) -> None:
        """Release every lock still held (used when a run is interrupted)."""
        for path, token in list(self._locks.items()):
            fs.release_lock(Path(path), token)
        self._locks.clear()


def _append(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())


def _stat(path: Path) -> str:
    if path.is_symlink():
        return "symlink"
    if not path.exists():
        return "absent"
    if path.is_dir():
        return "dir"
    if path.is_file():
        return "file"
    return "other"


def os_error(exc: OSError) -> str:
    """``ErrorName: reason: path`` — stable, and names what was wrong."""
    where = f": {exc.filename}" if exc.filename else ""
    return f"{type(exc).__name__}: {exc.strerror or exc}{where}"


def attempt(action: Callable[[], T]) -> IOResult[T, OSError]:
    """Run one filesystem effect; an OSError becomes the failure side instead of an exception."""
    return impure_safe(exceptions=(OSError,))(action)()


def observe(io: IOResult[T, OSError], on_error: Callable[[OSError], T]) -> T:
    """Turn an effect's result into the observation the planner sees.

    The only place where panefleet opens an IO container (``unsafe_perform_io``): the observation
    leaves the shell as plain data and goes into the journal.
    """
    return unsafe_perform_io(io.lash(lambda exc: IOSuccess(on_error(exc))).unwrap())


def _ack(action: Callable[[], object]) -> m.Ack:
    return observe(attempt(action).map(lambda _: m.Ack(ok=True)), lambda exc: m.Ack(ok=False, error=os_error(exc)))
