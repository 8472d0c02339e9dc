"""Durable file primitives: atomic writes and mkdir locks compatible with oh-my-codex."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import uuid
from pathlib import Path


def fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def remove_path(path: Path, recursive: bool) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        if recursive:
            shutil.rmtree(path)
        else:
            path.rmdir()
    fsync_dir(path.parent)


class LockTimeout(Exception):
    pass


def acquire_lock(path: Path, *, timeout_ms: int, retry_ms: int, stale_ms: int, token: str) -> None:
    """Acquire an oh-my-codex style lock directory (``owner`` and ``lease`` files inside).

    A lock whose lease (or directory) is older than ``stale_ms`` is considered abandoned and taken
    over. Raises LockTimeout after ``timeout_ms``.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            path.mkdir()
        except FileExistsError:
            if _is_stale(path, stale_ms):
                with contextlib.suppress(OSError):
                    shutil.rmtree(path)
                continue
            if time.monotonic() >= deadline:
                raise LockTimeout(str(path)) from None
            time.sleep(retry_ms / 1000)
            continue
        try:
            (path / "owner").write_text(token)
            (path / "lease").write_text(str(int(time.time() * 1000)))
        except OSError:
            with contextlib.suppress(OSError):
                shutil.rmtree(path)
            raise
        return


def _is_stale(path: Path, stale_ms: int) -> bool:
    try:
        lease = path / "lease"
        mtime = lease.stat().st_mtime if lease.exists() else path.stat().st_mtime
    except OSError:
        return False
    return (time.time() - mtime) * 1000 > stale_ms


def release_lock(path: Path, token: str) -> bool:
    """Delete the lock directory only if ``owner`` still holds ``token``."""
    try:
        owner = (path / "owner").read_text()
    except OSError:
        return False
    if owner != token:
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True
