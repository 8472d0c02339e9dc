"""The JSON form of the wire model: one strict cattrs converter, configured once.

Strict means: no silent coercion (``"12"`` is not an int, ``"false"`` is not a bool, a string is
not a tuple of characters), unknown keys are rejected, and tagged unions dispatch on their explicit
``op``/``kind`` field with a clear error for an unknown tag. An integer is what JSON Schema calls one
(a finite number with no fractional part, so ``513.0`` is 513) within ±(2^53-1); anything larger is
malformed, however many digits it has. Strings are Unicode scalar values (no unpaired surrogate).
Canonical JSON (sorted keys, two-space indent, UTF-8) is what goldens and audit logs contain.

A class described by the committed schema (``docs/schema.json``) is checked against it first by
:func:`first_problem`, the language-neutral rule that names the first problem of a document
(``docs/ports.md``, "Decoding"); only a document without problems is structured.
"""

from __future__ import annotations

import functools
import json
import math
import re
import typing
from collections.abc import Callable
from typing import Any, TypeVar, get_args

import attrs
import cattrs
from cattrs.cols import is_sequence
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from returns.result import Failure, Result, Success

from pure import model as m

T = TypeVar("T")
MAX_SAFE_INTEGER = 2**53 - 1
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


def _path_of(exc: BaseException) -> str:
    try:
        messages = cattrs.transform_error(exc)  # type: ignore[arg-type,unused-ignore]
    except Exception:  # noqa: BLE001
        return "$"
    return "; ".join(messages) if messages else "$"


# ------------------------------------------------------------------------ schema-driven first problem

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


@functools.cache
def _schema() -> dict[str, Any]:
    from pure.schema import build_schema

    return build_schema()


def path_key(path: str, key: str) -> str:
    """``$.name`` for a plain name, else ``$["..."]`` (JSON, every character outside U+0020-U+007E escaped)."""
    return f"{path}.{key}" if _NAME_RE.fullmatch(key) else f"{path}[{json.dumps(key, ensure_ascii=True)}]"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if type(value) is bool:
        return "boolean"
    if type(value) in (int, float):
        return "number"
    if type(value) is str:
        return "string"
    if type(value) is list:
        return "array"
    return "object" if type(value) is dict else "other"


def _literal(value: object) -> str:
    return json.dumps(value, ensure_ascii=True)


def _sorted_literals(values: list[Any]) -> str:
    return ", ".join(sorted(_literal(v) for v in values))


_ARTICLE = {"object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
            "number": "a number", "boolean": "a boolean", "null": "null"}


def _describe(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    if "const" in schema:
        return _literal(schema["const"])
    if "type" in schema:
        return _ARTICLE[schema["type"]]
    if "enum" in schema:
        return "one of " + _sorted_literals(schema["enum"])
    return "an object" if "anyOf" in schema else "a JSON value"


def first_problem(value: object, schema: dict[str, Any], path: str = "$") -> tuple[str, str] | None:
    """The first problem of ``value`` against ``schema`` as ``(path, problem)``, or None.

    The order is part of the contract (``docs/ports.md``): object keys are visited in code-point
    order of the union of the present keys and the schema's properties; array items in order; a
    tagged union (``discriminator``) checks its tag before the chosen member.
    """
    defs: dict[str, Any] = _schema()["$defs"]
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[1]]
    if "discriminator" in schema:
        tag = schema["discriminator"]["propertyName"]
        members = {defs[m["$ref"].rsplit("/", 1)[1]]["properties"][tag]["const"]: m for m in schema["anyOf"]}
        if type(value) is not dict:
            return path, "expected an object"
        where = path_key(path, tag)
        if tag not in value:
            return where, "missing"
        if type(value[tag]) is not str or value[tag] not in members:
            return where, "expected one of " + _sorted_literals(list(members))
        return first_problem(value, members[value[tag]], path)
    if "anyOf" in schema:
        options: list[dict[str, Any]] = schema["anyOf"]
        found = [first_problem(value, option, path) for option in options]
        if any(problem is None for problem in found):
            return None
        kind = _json_type(value)
        for option, problem in zip(options, found, strict=True):
            resolved = option
            while "$ref" in resolved:
                resolved = defs[resolved["$ref"].rsplit("/", 1)[1]]
            wanted = resolved.get("type")
            if wanted == kind or (wanted == "integer" and kind == "number") or (
                    wanted is None and "discriminator" in resolved and kind == "object"):
                return problem
        return path, "expected " + " or ".join(_describe(option, defs) for option in options)
    if "const" in schema:
        ok = _json_type(value) == _json_type(schema["const"]) and value == schema["const"]
        return None if ok else (path, f"expected {_literal(schema['const'])}")
    if "enum" in schema:
        ok = any(_json_type(value) == _json_type(v) and value == v for v in schema["enum"])
        return None if ok else (path, "expected one of " + _sorted_literals(schema["enum"]))
    wanted = schema.get("type")
    kind = _json_type(value)
    if wanted is None:
        return None
    if wanted == "integer":
        number: float = value  # type: ignore[assignment]
        if kind != "number" or (math.isfinite(number) and number != int(number)):
            return path, "expected an integer"
        if not schema.get("minimum", -math.inf) <= number <= schema.get("maximum", math.inf):
            return path, "integer out of range"
        return None
    if wanted == "number":
        ok = kind == "number" and math.isfinite(value)  # type: ignore[arg-type]
        return None if ok else (path, "expected a number")
    if kind != wanted:
        return path, f"expected {_ARTICLE[wanted]}"
    if wanted == "string":
        text: str = value  # type: ignore[assignment]
        if _SURROGATE_RE.search(text) is not None:
            return path, "unpaired surrogate in string"
    elif wanted == "array":
        items = schema.get("items", {})
        elements: list[Any] = value  # type: ignore[assignment]
        for index, item in enumerate(elements):
            problem = first_problem(item, items, f"{path}[{index}]")
            if problem is not None:
                return problem
    elif wanted == "object":
        obj: dict[str, Any] = value  # type: ignore[assignment]
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", ()))
        extra = schema.get("additionalProperties", {})
        for key in sorted(set(obj) | set(props)):
            where = path_key(path, key)
            if key not in props:
                if extra is False:
                    return where, "unknown key"
                problem = first_problem(obj[key], extra, where)
            elif key not in obj:
                problem = (where, "missing") if key in required else None
            else:
                problem = first_problem(obj[key], props[key], where)
            if problem is not None:
                return problem
    return None


def schema_problem(data: object, described: object) -> WireError | None:
    """The first problem of ``data`` against the schema's definition of a class or union, when the
    schema describes it (see ``pure.schema.def_name``)."""
    from pure.schema import def_name

    name = def_name(described)
    if name is None:
        return None
    found = first_problem(data, {"$ref": f"#/$defs/{name}"})
    if found is None:
        return None
    where, what = found
    return WireError("unknown_keys" if what == "unknown key" else "invalid", where, f"{where}: {what}")


def structure(data: object, cls: type[T]) -> Result[T, WireError]:
    """Turn parsed JSON into a model object, strictly."""
    problem = schema_problem(data, cls)
    if problem is not None:
        return Failure(problem)
    try:
        return Success(CONVERTER.structure(data, cls))
    except ForbiddenExtraKeysError as exc:
        return Failure(WireError("unknown_keys", cls.__name__, _path_of(exc)))
    except (ClassValidationError, cattrs.BaseValidationError) as exc:
        return Failure(WireError("invalid", cls.__name__, _path_of(exc)))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        return Failure(WireError("invalid", cls.__name__, str(exc)))


def structure_as(data: object, union: object) -> Result[Any, WireError]:
    """Structure into a tagged union (Step, Observation, Decision)."""
    problem = schema_problem(data, union)
    if problem is not None:
        return Failure(problem)
    try:
        return Success(CONVERTER.structure(data, union))  # type: ignore[arg-type,call-overload,unused-ignore]
    except (ClassValidationError, cattrs.BaseValidationError) as exc:
        return Failure(WireError("invalid", "union", _path_of(exc)))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        return Failure(WireError("invalid", "union", str(exc)))


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


def from_json(text: str, cls: type[T]) -> Result[T, WireError]:
    return loads(text).bind(lambda data: structure(data, cls))
