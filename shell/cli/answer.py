"""The JSON answer of a run, as every command prints it with ``-o json`` (and a dry run predicts it)."""

from __future__ import annotations

from typing import Any

from pure import model as m


def answer_of(done: m.Done) -> dict[str, Any]:
    """The JSON answer of a run: the program's result, with a boolean ``ok`` always present (derived
    from the status when the result has none) and, when it failed, its one failure key ``error``:
    the outcome's message. The result itself keeps its source's shape (oh-my-codex answers
    ``error``, the Herdr half ``reason`` as omp-conductor does; docs/design-notes.md, "Outcomes")."""
    result = done.outcome.result
    if not isinstance(result, dict):
        return {"ok": False, "error": done.outcome.message or f"no result ({done.outcome.status})"}
    if isinstance(result.get("ok"), bool):
        answer = dict(result)
    else:
        answer = {"ok": done.outcome.status in ("ok", "debt"), **{k: v for k, v in result.items() if k != "ok"}}
    if answer["ok"] is False and "error" not in answer:
        answer["error"] = done.outcome.message or f"no result ({done.outcome.status})"
    return answer
