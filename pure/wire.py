"""The JSON form of the wire model: decoding, strictly, with the schema's first problem named.

A class described by the committed schema (``docs/schema.json``) is checked against it first by
:func:`first_problem`, the language-neutral rule that names the first problem of a document
(``docs/ports.md``, "Decoding"); only a document without problems is structured, by the strict
converter of ``pure/convert.py``, whose names (``unstructure``, ``dumps``, ``loads``, ``to_json`` …)
this module also answers for its callers.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any, TypeVar

import cattrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError
from returns.result import Failure, Result, Success

from pure.convert import (
    CONVERTER,
    MAX_DEPTH,
    WireError,
    _path_of,
    check_json,
    dumps,
    loads,
    to_json,
    unstructure,
)
from pure.model import MAX_SAFE_INTEGER
from pure.schema import build_schema, def_name

__all__ = ["CONVERTER", "MAX_DEPTH", "MAX_SAFE_INTEGER", "WireError", "check_json", "dumps", "first_problem",
           "from_json", "loads", "path_key", "schema_problem", "structure", "structure_as", "to_json", "unstructure"]

T = TypeVar("T")


# ------------------------------------------------------------------------ schema-driven first problem

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


@functools.cache
def _schema() -> dict[str, Any]:
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


def from_json(text: str, cls: type[T]) -> Result[T, WireError]:
    return loads(text).bind(lambda data: structure(data, cls))
