"""Normalisation shared by the oracle generator and the differential test."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def norm_text(text: str, cwd: Path) -> str:
    return UUID.sub("<UUID>", TS.sub("<TS>", text.replace(str(cwd), "$CWD")))


def norm(value: Any, cwd: Path) -> Any:
    if isinstance(value, str):
        return norm_text(value, cwd)
    if isinstance(value, list):
        return [norm(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: norm(v, cwd) for k, v in value.items()}
    return value


def files(cwd: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(cwd.rglob("*")):
        rel = str(path.relative_to(cwd))
        if rel.startswith(("pf", "bin", "stub", ".git")) or "/.git" in rel:
            continue
        if path.is_file():
            out[rel] = norm_text(path.read_text(encoding="utf-8"), cwd)
        elif path.is_dir() and not any(path.iterdir()):
            out[rel + "/"] = ""
    return out
