"""The wire model's plain-JSON form, without the schema: one strict cattrs converter, configured once,
and canonical JSON text (docs/ports.md, "Decoding").

Strict means: no silent coercion (``"12"`` is not an int, ``"false"`` is not a bool, a string is
not a tuple of characters), unknown keys are rejected, and tagged unions dispatch on their explicit
``op``/``kind`` field with a clear error for an unknown tag. An integer is what JSON Schema calls one
(a finite number with no fractional part, so ``513.0`` is 513) within ±(2^53-1); anything larger is
malformed, however many digits it has. Strings are Unicode scalar values (no unpaired surrogate).
Canonical JSON (sorted keys, two-space indent, UTF-8) is what goldens and audit logs contain.

It sits below the modules whose classes the schema describes (``pure/program.py``, ``pure/tmux/``,
``pure/schema.py`` itself), which need only :func:`unstructure`; decoding a document, which checks it
against the schema first, is ``pure/wire.py``.
"""

from __future__ import annotations

import json
import math
import typing
from collections.abc import Callable
from typing import Any, get_args

import attrs
import cattrs
from cattrs.cols import is_sequence
from cattrs.gen import make_dict_unstructure_fn
from returns.result import Failure, Result, Success

from pure import model as m
from pure.model import MAX_SAFE_INTEGER

MAX_DEPTH = 100  # nesting of arrays and objects in one JSON document


@attrs.frozen
class WireError:
    """Input that does not fit the wire model; ``where`` is a JSON path, ``what`` the reason."""

    code: str
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.code}: {self.what} @ {self.where}"


def _exact(kind: type[Any]) -> Callable[[object, object], Any]:
    def hook(value: object, _: object) -> Any:
        if type(value) is not kind:
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return hook


def _int(value: object, _: object) -> int:
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is not int:
        raise TypeError(f"expected int, got {type(value).__name__}")
    if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        raise ValueError("integer out of range")
    return value


def _float(value: object, _: object) -> float:
    if type(value) is int or type(value) is float:
        if isinstance(value, float) and not math.isfinite(value):
            raise TypeError("expected a finite number")
        return float(value)
    raise TypeError(f"expected number, got {type(value).__name__}")


def check_json(value: object, depth: int = 0) -> None:
    """Raise TypeError unless ``value`` is plain JSON (no tuples, sets, NaN, non-string keys)."""
    if depth > 200:
        raise TypeError("JSON nested too deeply")
    if value is None or type(value) in (bool, int, str):
        return
    if type(value) is float:
        if not math.isfinite(value):  # type: ignore[arg-type,unused-ignore]
            raise TypeError("non-finite number")
        return
    if type(value) is list:
        for item in value:  # type: ignore[attr-defined,unused-ignore]
            check_json(item, depth + 1)
        return
    if type(value) is dict:
        for key, item in value.items():  # type: ignore[attr-defined,unused-ignore]
            if type(key) is not str:
                raise TypeError("object keys must be strings")
            check_json(item, depth + 1)
        return
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _json_value(value: object, _: object) -> m.JsonValue:
    check_json(value)
    return m.JsonValue(value)


def _tagged(union: object, tag: str) -> tuple[type[Any], Callable[[object, object], Any]]:
    members: dict[str, type[Any]] = {}
    for cls in get_args(union):
        default = attrs.fields_dict(cls)[tag].default
        members[str(default)] = cls

    def hook(value: object, _: object) -> Any:
        if not isinstance(value, dict):
            raise TypeError(f"expected an object with a {tag!r} field")
        name = value.get(tag)
        if not isinstance(name, str):
            raise TypeError(f"missing or non-string {tag!r} field")
        cls = members.get(name)
        if cls is None:
            raise ValueError(f"unknown {tag} {name!r} (known: {', '.join(sorted(members))})")
        return CONVERTER.structure(value, cls)

    return union, hook  # type: ignore[return-value]


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True, prefer_attrib_converters=False)
    conv.register_structure_hook(str, _exact(str))
    conv.register_structure_hook(int, _int)
    conv.register_structure_hook(bool, _exact(bool))
    conv.register_structure_hook(float, _float)
    conv.register_structure_hook(m.JsonValue, _json_value)
    conv.register_unstructure_hook(m.JsonValue, lambda v: v)

    def sequence_factory(typ: Any, converter: cattrs.Converter) -> Callable[[object, object], Any]:
        args = get_args(typ)
        item = args[0] if args else Any
        origin = typing.get_origin(typ)

        def hook(value: object, _: object) -> Any:
            if not isinstance(value, list):
                raise TypeError(f"expected a JSON array, got {type(value).__name__}")
            items = [converter.structure(v, item) for v in value]
            return tuple(items) if origin is tuple else items

        return hook

    conv.register_structure_hook_factory(is_sequence, sequence_factory)
    return conv


CONVERTER = _make_converter()

for _union, _tag in ((m.Step, "op"), (m.Observation, "kind"), (m.Decision, "kind")):
    CONVERTER.register_structure_hook(*_tagged(_union, _tag))

OMIT_NONE = m.OMIT_NONE  # the Herdr machine of pure/herdr/fleet/vocabulary.py, pure/herdr/records.py; steps' effects


def _omits_none(cls: Any) -> bool:
    return attrs.has(cls) and any(f.metadata.get("wire_omit_none") for f in attrs.fields(cls))


def _omit_none_hook(cls: Any) -> Callable[[Any], Any]:
    names = [f.name for f in attrs.fields(cls) if f.metadata.get("wire_omit_none")]
    base = make_dict_unstructure_fn(cls, CONVERTER)

    def hook(obj: Any) -> Any:
        out = base(obj)
        for name in names:
            if out.get(name) is None:
                out.pop(name, None)
        return out

    return hook


CONVERTER.register_unstructure_hook_factory(_omits_none, _omit_none_hook)


def _path_of(exc: BaseException) -> str:
    try:
        messages = cattrs.transform_error(exc)  # type: ignore[arg-type,unused-ignore]
    except Exception:  # noqa: BLE001
        return "$"
    return "; ".join(messages) if messages else "$"


def unstructure(obj: object) -> Any:
    return CONVERTER.unstructure(obj)


def dumps(data: object, *, pretty: bool = True) -> str:
    """Canonical JSON text of plain data (already unstructured)."""
    if pretty:
        return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_int(text: str) -> int:
    """A JSON integer literal. One beyond the range of a double (as ``float`` rounds it) is malformed,
    like any number literal that is: whatever its digits, it is never an internal error."""
    if math.isinf(float(text)):
        raise ValueError("number out of range")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("number out of range")
    return value


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest (0 for a scalar); stops counting past ``MAX_DEPTH``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, list | dict):
            deepest = max(deepest, level)
            if deepest > MAX_DEPTH:
                break
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def loads(text: str) -> Result[Any, WireError]:
    """Strict JSON (RFC 8259): no ``NaN``/``Infinity``, no number beyond the range of a double, at most
    ``MAX_DEPTH`` levels of nesting."""
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int,
                          parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        return Failure(WireError("malformed_json", f"line {exc.lineno} column {exc.colno}", exc.msg))
    except RecursionError:
        return Failure(WireError("malformed_json", "$", "nested too deeply"))
    except ValueError as exc:
        return Failure(WireError("malformed_json", "$", str(exc)))
    if _depth(data) > MAX_DEPTH:
        return Failure(WireError("malformed_json", "$", "nested too deeply"))
    return Success(data)


def to_json(obj: object, *, pretty: bool = True) -> str:
    return dumps(unstructure(obj), pretty=pretty)
