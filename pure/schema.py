"""JSON Schema of the wire format, generated from the attrs classes (committed as schema.json)."""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import attrs

from pure import model as m

SCHEMA_ID = "https://panefleet.invalid/schema/wire-1.json"


def _type_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:  # noqa: PLR0911
    if tp is m.JsonValue:
        return {"description": "any JSON value"}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is type(None):
        return {"type": "null"}
    origin = get_origin(tp)
    if origin is Literal:
        values = list(get_args(tp))
        return {"const": values[0]} if len(values) == 1 else {"enum": values}
    if origin in (Union, types.UnionType):
        return {"anyOf": [_type_schema(a, defs) for a in get_args(tp)]}
    if origin in (tuple, list):
        args = get_args(tp)
        return {"type": "array", "items": _type_schema(args[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(get_args(tp)[1], defs)}
    if attrs.has(tp):
        _class_schema(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    raise TypeError(f"no schema for {tp!r}")


def _class_schema(cls: type[Any], defs: dict[str, Any]) -> None:
    if cls.__name__ in defs:
        return
    defs[cls.__name__] = {}
    hints = typing.get_type_hints(cls, localns=vars(m))
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in attrs.fields(cls):
        props[f.name] = _type_schema(hints[f.name], defs)
        if f.default is attrs.NOTHING or f.name in ("op", "kind"):
            required.append(f.name)
    body: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        body["required"] = required
    if cls.__doc__:
        body["description"] = " ".join(cls.__doc__.split())
    defs[cls.__name__] = body


def build_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    roots = {"Step": m.Step, "Observation": m.Observation, "Decision": m.Decision}
    for name, union in roots.items():
        defs[name] = _type_schema(union, defs)
    _class_schema(m.Entry, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "panefleet wire format",
        "description": f"format_version {m.FORMAT_VERSION}: steps, observations, journal entries and decisions. "
        "Goldens and audit logs are made of these.",
        "format_version": m.FORMAT_VERSION,
        "$defs": dict(sorted(defs.items())),
        "anyOf": [{"$ref": f"#/$defs/{n}"} for n in ("Decision", "Entry", "Step", "Observation")],
    }


def schema_text() -> str:
    return json.dumps(build_schema(), indent=2, sort_keys=True) + "\n"
