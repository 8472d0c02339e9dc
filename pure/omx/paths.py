"""Lexical path containment with Node ``path.posix`` / ``path.win32`` semantics (docs/team-state.md,
"Path containment").

oh-my-codex decides whether a path lies under a root by asking Node's ``path.relative(root, path)``
and inspecting the answer. This module reproduces that answer without touching the file system:
normalisation is purely lexical (``..`` and ``.`` are folded, separators unified), and a relative
input is resolved against an explicit ``cwd`` instead of the process working directory.

Win32 rules reproduced here:

* ``/`` and ``\\`` are the same separator; the result always uses ``\\``;
* drive letters, UNC server and share names and every component compare case-insensitively;
* the UNC ``\\\\server\\share`` prefix is compared component by component, so a different share on
  the same server is reached with ``..`` segments while a different drive or server yields the
  target itself (an absolute path);
* a component that merely starts with ``..`` (``..foo``) stays inside.
"""

from __future__ import annotations

from typing import Final, Literal

PathSemantics = Literal["posix", "win32"]

_WIN_SEPS: Final = frozenset("/\\")


# --------------------------------------------------------------------------- posix


def _fold(components: list[str], *, rooted: bool) -> list[str]:
    """Fold ``.`` and ``..`` lexically; above the root ``..`` disappears, otherwise it is kept."""
    out: list[str] = []
    for part in components:
        if part in ("", "."):
            continue
        if part == "..":
            if out and out[-1] != "..":
                out.pop()
            elif not rooted:
                out.append("..")
            continue
        out.append(part)
    return out


def posix_resolve(path: str, cwd: str = "/") -> str:
    """``path.posix.resolve(path)`` with ``cwd`` standing in for ``process.cwd()``."""
    joined = path if path.startswith("/") else f"{cwd}/{path}"
    if not joined.startswith("/"):
        joined = "/" + joined
    return "/" + "/".join(_fold(joined.split("/"), rooted=True))


def _posix_relative(root: str, path: str, cwd: str) -> str:
    src = [c for c in posix_resolve(root, cwd).split("/") if c]
    dst = [c for c in posix_resolve(path, cwd).split("/") if c]
    common = 0
    while common < min(len(src), len(dst)) and src[common] == dst[common]:
        common += 1
    return "/".join([".."] * (len(src) - common) + dst[common:])


# --------------------------------------------------------------------------- win32


def _is_drive(text: str) -> bool:
    return len(text) >= 2 and text[1] == ":" and text[0].isascii() and text[0].isalpha()


def _split_win32(path: str) -> tuple[str, bool, str]:
    """Split into (device, rooted, tail). Device is ``X:`` or ``\\\\server\\share`` (separators unified)."""
    if len(path) >= 2 and path[0] in _WIN_SEPS and path[1] in _WIN_SEPS:
        # Possible UNC: two leading separators, a server, a separator, then a share.
        rest = path[2:]
        server_end = 0
        while server_end < len(rest) and rest[server_end] not in _WIN_SEPS:
            server_end += 1
        if 0 < server_end < len(rest):
            share_start = server_end
            while share_start < len(rest) and rest[share_start] in _WIN_SEPS:
                share_start += 1
            share_end = share_start
            while share_end < len(rest) and rest[share_end] not in _WIN_SEPS:
                share_end += 1
            if share_end > share_start:
                server = rest[:server_end]
                if server in (".", "?"):
                    # Device namespace (``\\\\.\\`` / ``\\\\?\\``): the share is an ordinary component.
                    return f"\\\\{server}", True, rest[server_end:]
                device = f"\\\\{server}\\{rest[share_start:share_end]}"
                return device, True, rest[share_end:]
        return "", True, path
    if _is_drive(path):
        tail = path[2:]
        return path[:2], bool(tail) and tail[0] in _WIN_SEPS, tail
    return "", bool(path) and path[0] in _WIN_SEPS, path


def _win32_components(tail: str) -> list[str]:
    return tail.replace("/", "\\").split("\\")


def win32_resolve(path: str, cwd: str = "\\") -> str:
    """``path.win32.resolve(path)`` with ``cwd`` standing in for ``process.cwd()``.

    A rooted path without a device takes the device of ``cwd``; a drive-relative path (``C:foo``)
    continues from ``cwd`` when ``cwd`` is on that drive or carries no device, else from the drive
    root; a plain relative path continues from ``cwd``.
    """
    device, rooted, tail = _split_win32(path)
    if not (device and rooted):
        cwd_device, _cwd_rooted, cwd_tail = _split_win32(cwd)
        if rooted:
            device = cwd_device
        elif device:
            if not cwd_device or cwd_device.lower() == device.lower():
                tail = cwd_tail + "\\" + tail
            rooted = True
        else:
            device = cwd_device
            tail = cwd_tail + "\\" + tail
            rooted = True
    parts = _fold(_win32_components(tail), rooted=rooted)
    body = "\\".join(parts)
    if rooted:
        return f"{device}\\{body}"
    return f"{device}{body}" if device or body else "."


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _win32_relative(root: str, path: str, cwd: str) -> str:
    src_orig = win32_resolve(root, cwd)
    dst_orig = win32_resolve(path, cwd)
    if src_orig == dst_orig or src_orig.lower() == dst_orig.lower():
        return ""
    if _utf16_len(src_orig) != _utf16_len(src_orig.lower()) or _utf16_len(dst_orig) != _utf16_len(
        dst_orig.lower()
    ):
        return _win32_relative_case_expanding(src_orig, dst_orig)
    # Leading separators are not components: ``\\server\share`` compares as ``server``, ``share``.
    src = [c.lower() for c in src_orig.split("\\") if c]
    dst_keep = [c for c in dst_orig.split("\\") if c]
    dst = [c.lower() for c in dst_keep]
    common = 0
    while common < min(len(src), len(dst)) and src[common] == dst[common]:
        common += 1
    if src == dst:
        # Same components under different roots (``\\\\a\\repo`` vs ``\\a\\repo``): Node steps out
        # of the last component and back into the target's.
        return "..\\" + dst_keep[-1]
    if common == 0 and src and dst:
        # Different drive, server or (for device-less rooted paths) first component: the target itself.
        return dst_orig
    rel = "\\".join([".."] * (len(src) - common) + dst_keep[common:])
    if src and common == len(src) and len(dst) > common and dst_orig.endswith("\\"):
        # Node slices the target verbatim here, keeping a UNC root's trailing separator.
        rel += "\\"
    return rel


def _win32_relative_case_expanding(src_orig: str, dst_orig: str) -> str:
    """Node's variant for paths whose lower-casing changes their UTF-16 length (e.g. ``İ``).

    Components are the raw ``\\``-split pieces (leading empty pieces included, one trailing empty
    piece dropped) compared case-insensitively.
    """
    src = src_orig.split("\\")
    dst = dst_orig.split("\\")
    if src[-1] == "":
        src.pop()
    if dst[-1] == "":
        dst.pop()
    length = min(len(src), len(dst))
    common = 0
    while common < length and src[common].lower() == dst[common].lower():
        common += 1
    if common == 0:
        return dst_orig
    if common == length:
        if len(dst) > length:
            return "\\".join(dst[common:])
        if len(src) > length:
            return "..\\" * (len(src) - 1 - common) + ".."
        return ""
    return "..\\" * (len(src) - common) + "\\".join(dst[common:])


# --------------------------------------------------------------------------- public


def node_relative(root: str, path: str, semantics: PathSemantics, *, cwd: str | None = None) -> str:
    """What Node's ``path.<semantics>.relative(root, path)`` returns (``cwd`` replaces ``process.cwd()``).

    One deliberate difference: for win32 device-less rooted paths where one path's first component
    is a string prefix of the other's (``\\ab`` vs ``\\a``), Node mis-slices and answers things like
    ``..a``, ``c`` or ``""``; here the components are compared whole and the answer is the target
    itself (an absolute path), so containment fails closed.
    """
    if semantics == "posix":
        return _posix_relative(root, path, "/" if cwd is None else cwd)
    return _win32_relative(root, path, "\\" if cwd is None else cwd)


def node_is_absolute(path: str, semantics: PathSemantics) -> bool:
    """``path.<semantics>.isAbsolute(path)``."""
    if semantics == "posix":
        return path.startswith("/")
    if path and path[0] in _WIN_SEPS:
        return True
    return _is_drive(path) and len(path) > 2 and path[2] in _WIN_SEPS


def is_same_or_inside_path(
    path: str, root: str, semantics: PathSemantics, *, cwd: str | None = None
) -> bool:
    """True iff ``path`` is ``root`` or lies lexically beneath it.

    ``rel = relative(root, path)``; inside iff ``rel == ""`` or ``rel`` is not absolute, not ``..`` and
    does not start with ``..<sep>`` (so ``..foo`` is inside). Equal to oh-my-codex's answer except
    for the Node prefix mis-slice described in :func:`node_relative`, where this returns False.
    """
    rel = node_relative(root, path, semantics, cwd=cwd)
    if rel == "":
        return True
    sep = "/" if semantics == "posix" else "\\"
    return not node_is_absolute(rel, semantics) and rel != ".." and not rel.startswith(".." + sep)
