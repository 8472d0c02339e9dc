"""Ids as oh-my-codex writes them: ``randomUUID()`` (dashed UUID text) from a fresh hex id."""

from __future__ import annotations

from pure import model as m
from pure.program import Gen, expect


def uuid_text(hex_id: str) -> str:
    """A fresh hex id (``FreshId``) formatted as a dashed UUID, as oh-my-codex's ``randomUUID()``."""
    h = (hex_id + "0" * 32)[:32]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def fresh_uuid() -> Gen[str]:
    """A fresh id, dashed like ``randomUUID()``: request ids, event ids, claim tokens."""
    value = yield from expect(m.FreshId(), m.Value)
    return uuid_text(value.value)
