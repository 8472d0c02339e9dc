"""docs/map.md names each rule's file and test: every path it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_path_in_the_map_exists() -> None:
    text = (ROOT / "docs" / "map.md").read_text(encoding="utf-8")
    paths = re.findall(r"`((?:pure|shell|tests|docs)/[^`]*)`", text)
    assert len(paths) > 40
    assert [p for p in paths if not (ROOT / p).exists()] == []
