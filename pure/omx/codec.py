"""JSON as panefleet reads and writes team state (docs/team-state.md).

Reading is strict where oh-my-codex's ``JSON.parse`` would silently change a value: NaN and
Infinity, numbers beyond a double, lone surrogates and nesting deeper than ``MAX_DEPTH`` are refused
with a :class:`StateError` naming the file and the field, never raised. Writing renders the way
oh-my-codex renders (``JSON.stringify(x, null, 2)``: two spaces, no trailing newline, non-ASCII
kept), and never writes what JSON cannot carry.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from attrs import frozen
from returns.result import Failure, Result, Success

from pure.model import MAX_SAFE_INTEGER

# A JSON object as ``parse_object`` gives it, before it is typed: read only by the checks and readers that
# turn one file into records (pure/omx/records.py; docs/team-state.md, "Typed records").
Parsed = dict[str, Any]


@frozen
class StateError:
    """Malformed team state: which file, which field, what is wrong."""

    file: str
    field: str
    message: str
    syntax: str | None = None  # the parser's own words when the text is not JSON by its grammar at all

    def __str__(self) -> str:
        where = f"{self.file}" + (f" field {self.field}" if self.field else "")
        return f"{where}: {self.message}"


MAX_DEPTH = 64  # team state is a few levels deep; deeper input is refused, never recursed into
MAX_NUMBER_DIGITS = 308  # an integer literal longer than this is beyond any double (JSON.parse: Infinity)
_SURROGATE = re.compile("[\ud800-\udfff]")


class _NotJson:
    """A number ``json`` accepts but JSON does not carry (NaN, Infinity, 1e400, a 5000-digit integer)."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what


def _constant(name: str) -> _NotJson:
    return _NotJson(f"{name} is not a JSON number")


def _float(text: str) -> float | _NotJson:
    value = float(text)
    return value if math.isfinite(value) else _NotJson(f"number {text[:24]} is out of range")


def _int(text: str) -> int | _NotJson:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        return _NotJson(f"integer of {len(text.lstrip('-'))} digits is out of range")
    return int(text)


def _where(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _first_problem(value: object) -> tuple[str, str] | None:
    """The first value JSON cannot carry, as ``(field, what)``: a non-finite or out-of-range number,
    a string with a lone surrogate (not Unicode text), or nesting deeper than ``MAX_DEPTH``. Iterative,
    so that a deep document cannot exhaust the interpreter's stack."""
    stack: list[tuple[str, object, int]] = [("", value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if isinstance(item, _NotJson):
            return path, item.what
        if isinstance(item, float) and not math.isfinite(item):
            return path, "number is not finite"
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return path, "string is not Unicode text (lone surrogate)"
            continue
        if isinstance(item, (dict, list)):
            if depth >= MAX_DEPTH:
                return path, f"nested deeper than {MAX_DEPTH} levels"
            if isinstance(item, dict):
                for key, child in reversed(list(item.items())):
                    if _SURROGATE.search(key):
                        return path, "key is not Unicode text (lone surrogate)"
                    stack.append((_where(path, key), child, depth + 1))
            else:
                for position in range(len(item) - 1, -1, -1):
                    stack.append((_where(path, position), item[position], depth + 1))
    return None


def parse_json(text: str, file: str) -> Result[object, StateError]:
    """``text`` as JSON, strictly: what ``JSON.parse`` accepts, and only values panefleet can write back
    unchanged (no NaN/Infinity, no number beyond a double, no lone surrogate, bounded nesting)."""
    try:
        value = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as exc:
        return Failure(StateError(file, "", f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
                                  syntax=exc.msg))
    except RecursionError:
        return Failure(StateError(file, "", "malformed JSON: nested too deeply"))
    except ValueError as exc:  # pragma: no cover - the hooks above leave json nothing else to refuse
        return Failure(StateError(file, "", f"malformed JSON: {exc}"))
    problem = _first_problem(value)
    if problem is not None:
        return Failure(StateError(file, problem[0], problem[1]))
    return Success(value)


def _json_safe(value: object) -> object:
    """``value`` with every non-finite number replaced by null, as ``JSON.stringify`` writes it."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    return value


def render_json(value: object) -> str:
    """``JSON.stringify(value, null, 2)``: never anything but valid JSON in UTF-8 text — a non-finite
    number is written as ``null`` and a lone surrogate as its ``\\uXXXX`` escape, as ``JSON.stringify``
    does."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(_json_safe(value), indent=2, ensure_ascii=False, allow_nan=False)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return text


def parse_object(text: str | None, file: str) -> Result[Parsed, StateError]:
    if text is None:
        return Failure(StateError(file, "", "missing"))
    parsed = parse_json(text, file)
    if isinstance(parsed, Failure):
        return Failure(parsed.failure())
    value = parsed.unwrap()
    if not isinstance(value, dict):
        return Failure(StateError(file, "", f"expected a JSON object, got {type(value).__name__}"))
    return Success(value)


def is_safe_int(value: object) -> bool:
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def is_positive_int(value: object) -> bool:
    return type(value) is int and 0 < value <= MAX_SAFE_INTEGER
