"""JSON Schema of the wire format, generated from the attrs classes (committed as docs/schema.json).

Beyond the wire classes (steps, observations, journal entries, decisions) it describes, for the
operations a port implements (``OPERATIONS``), the request, the decision with its result and every
problem code, and the golden files of ``tests/goldens/tmux/``. Optional fields carry their
``default``; integers their safe range; tagged unions a ``discriminator`` (the OpenAPI keyword,
an annotation for validators). The keywords used are listed in ``KEYWORDS`` and explained in
``docs/ports.md``.
"""

from __future__ import annotations

import functools
import json
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import attrs

from pure import model as m
from pure import program as p
from pure import tmux as t
from pure.convert import unstructure
from pure.model import MAX_SAFE_INTEGER

SCHEMA_ID = "https://panefleet.invalid/schema/wire-1.json"

# Tagged unions with a definition of their own: (union, name, tag field).
NAMED_UNIONS: tuple[tuple[Any, str, str], ...] = (
    (m.Step, "Step", "op"),
    (m.Observation, "Observation", "kind"),
    (m.Decision, "Decision", "kind"),
    (t.ProofProblem, "ProofProblem", "code"),
    (t.OwnerProblem, "OwnerProblem", "code"),
    (t.PaneProblem, "PaneProblem", "code"),
    (p.DecideProblem, "DecideProblem", "code"),
)

# Operations described completely (request and decision): what a port implements.
OPERATIONS: dict[str, dict[str, str]] = {
    "tmux.teardown": {"request": "TeardownRequest", "decision": "TeardownDecision"},
}

# Every keyword the schema uses; a port's validator needs exactly these (tests/ports/test_corpus.py).
KEYWORDS = frozenset({
    "$schema", "$id", "$defs", "$ref", "title", "description", "format_version", "operations", "default",
    "type", "const", "enum", "anyOf", "properties", "required", "additionalProperties", "items", "minimum",
    "maximum", "discriminator",
})


def _union_name(tp: Any) -> str | None:
    for union, name, _ in NAMED_UNIONS:
        if tp == union:
            return name
    return None


def _type_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:  # noqa: PLR0911
    if tp is m.JsonValue:
        return {"description": "any JSON value"}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer", "minimum": -MAX_SAFE_INTEGER, "maximum": MAX_SAFE_INTEGER}
    if tp is float:
        return {"type": "number"}
    if tp is type(None):
        return {"type": "null"}
    origin = get_origin(tp)
    if origin is Literal:
        values = list(get_args(tp))
        return {"const": values[0]} if len(values) == 1 else {"enum": values}
    if origin in (Union, types.UnionType):
        name = _union_name(tp)
        if name is not None:
            _union_schema(tp, name, defs)
            return {"$ref": f"#/$defs/{name}"}
        args = get_args(tp)
        rest = tuple(a for a in args if a is not type(None))
        if len(rest) > 1 and len(rest) < len(args) and _union_name(Union[rest]) is not None:  # noqa: UP007
            return {"anyOf": [_type_schema(Union[rest], defs), {"type": "null"}]}  # noqa: UP007
        return {"anyOf": [_type_schema(a, defs) for a in args]}
    if origin in (tuple, list):
        args = get_args(tp)
        return {"type": "array", "items": _type_schema(args[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(get_args(tp)[1], defs)}
    if attrs.has(tp):
        _class_schema(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    raise TypeError(f"no schema for {tp!r}")


def _union_schema(union: Any, name: str, defs: dict[str, Any]) -> None:
    if name in defs:
        return
    defs[name] = {}
    tag = next(tag for u, n, tag in NAMED_UNIONS if n == name)
    defs[name] = {"anyOf": [_type_schema(a, defs) for a in get_args(union)], "discriminator": {"propertyName": tag}}


def _default(f: attrs.Attribute[Any]) -> Any:
    default: Any = f.default
    value = default.factory() if isinstance(default, attrs.Factory) else default  # type: ignore[arg-type]
    return unstructure(value)


def _class_schema(cls: type[Any], defs: dict[str, Any]) -> None:
    if cls.__name__ in defs:
        return
    defs[cls.__name__] = {}
    hints = typing.get_type_hints(cls, localns={**vars(m), **vars(t), **vars(p)})
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in attrs.fields(cls):
        props[f.name] = _type_schema(hints[f.name], defs)
        if f.default is attrs.NOTHING or f.name in ("op", "kind", "code"):
            required.append(f.name)
        else:
            props[f.name]["default"] = _default(f)
    body: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        body["required"] = required
    if cls.__doc__:
        body["description"] = " ".join(cls.__doc__.split())
    defs[cls.__name__] = body


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _object(props: dict[str, Any], required: list[str], description: str) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False,
            "description": description}


def _array(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


STRING = {"type": "string"}
INFORMATIVE = {"description": "informative prose derived from the normative fields; never compared"}


def _composites(defs: dict[str, Any]) -> None:
    """What the classes alone do not say: the error decision, the teardown decision, the goldens."""
    steps = _array(_ref("Step"))
    defs["ErrorResult"] = _object(
        {"ok": {"const": False}, "error": STRING, "problem": _ref("DecideProblem"), "changesMade": steps},
        ["ok", "error", "problem"],
        "The result of a program that could not finish (pure/program.py): `error` is the problem's code "
        "(for internal_error, a message naming the bug); `changesMade` lists the mutating steps already "
        "done, present only when there are any.")
    defs["PaneDebt"] = _object(
        {"kind": {"const": "pane"}, "subject": STRING,
         "reason": {"enum": [*[r for r in get_args(t.PaneReason) if r not in ("", "absent", "dead")], "not_attempted"]},
         "detail": {"enum": ["", *sorted(str(attrs.fields_dict(c)["code"].default) for c in get_args(t.PaneProblem))]}},
        ["kind", "subject", "reason", "detail"],
        "A pane tmux.teardown did not resolve: `subject` its id, `reason` the result's reason (or "
        "`not_attempted`), `detail` the code of its problem (empty when it has none).")
    defs["TeardownOutcome"] = _object(
        {"status": {"enum": ["ok", "debt", "error"]},
         "result": {"anyOf": [_ref("TeardownResult"), _ref("ErrorResult")]}, "message": STRING},
        ["status", "result", "message"],
        "`ok` (every pane resolved) or `debt` with a TeardownResult and an empty message; `error` with an "
        "ErrorResult whose `error` is also the message.")
    defs["TeardownDone"] = _object(
        {"kind": {"const": "done"}, "outcome": _ref("TeardownOutcome"), "debt": _array(_ref("PaneDebt"))},
        ["kind", "outcome", "debt"], "How tmux.teardown ends.")
    defs["TeardownDecision"] = {"anyOf": [_ref("Next"), _ref("TeardownDone")], "discriminator": {"propertyName": "kind"}}
    defs["Question"] = _object(
        {"operation": STRING, "request": {"description": "the operation's request"},
         "journal": {**_array({"description": "an Entry"}), "default": []}},
        ["operation"],
        "What `panefleet decide` reads on stdin (see docs/ports.md for its checks and messages).")
    proc = _ref("Proc")
    defs["VerdictCase"] = _object(
        {"name": STRING, "description": STRING, "target": STRING, "answer": proc, "verdict": _ref("Verdict"),
         "informative": INFORMATIVE},
        ["name", "description", "target", "answer", "verdict"],
        "`answer` is tmux's answer to list-panes -a -F '#{pane_id}<TAB>#{pane_dead}<TAB>#{pane_pid}'.")
    defs["OwnerCase"] = _object(
        {"name": STRING, "description": STRING, "answer": proc, "owner": _ref("OwnerAnswer"),
         "informative": INFORMATIVE},
        ["name", "description", "answer", "owner"],
        "`answer` is tmux's answer to show-option -qv -p -t PANE @omx_team_pane_owner_id.")
    version = {"const": m.FORMAT_VERSION}
    for name, case in (("VerdictGolden", "VerdictCase"), ("OwnerGolden", "OwnerCase")):
        defs[name] = _object({"format_version": version, "kind": {"const": "parse"}, "description": STRING,
                              "cases": _array(_ref(case))},
                             ["format_version", "kind", "description", "cases"], "A parse golden.")
    defs["TeardownGolden"] = _object(
        {"format_version": version, "kind": {"const": "decision"}, "operation": {"const": "tmux.teardown"},
         "description": STRING, "request": {"description": "a TeardownRequest, as written (defaults may be omitted)"},
         "journal": _array(_ref("Entry")), "decision": _ref("TeardownDecision"), "informative": INFORMATIVE},
        ["format_version", "kind", "operation", "description", "request", "journal", "decision"],
        "A decision golden of tmux.teardown (replayed as docs/goldens.md describes).")
    defs["DecideCase"] = _object(
        {"name": STRING, "description": STRING, "stdin": STRING, "exit_code": {"enum": [0, 2]},
         "stdout": STRING, "stderr": STRING},
        ["name", "description", "stdin", "exit_code", "stdout", "stderr"],
        "One run of `panefleet decide`: exactly what it reads and what it answers.")
    defs["DecideGolden"] = _object(
        {"format_version": version, "kind": {"const": "decide"}, "description": STRING,
         "cases": _array(_ref("DecideCase"))},
        ["format_version", "kind", "description", "cases"], "Runs of `panefleet decide`.")
    defs["ManifestEntry"] = _object(
        {"path": STRING, "kind": {"enum": ["parse", "decision", "decide", "manifest"]}, "schema": STRING,
         "description": STRING},
        ["path", "kind", "schema", "description"],
        "One file of the corpus: its path (relative to the manifest), kind, and the $defs entry it validates against.")
    defs["Manifest"] = _object(
        {"format_version": version, "kind": {"const": "manifest"}, "description": STRING,
         "files": _array(_ref("ManifestEntry"))},
        ["format_version", "kind", "description", "files"], "Every file of the corpus and its kind.")


@functools.cache
def _built() -> tuple[dict[str, Any], dict[int, str]]:
    defs: dict[str, Any] = {}
    for union, name, _ in NAMED_UNIONS:
        _union_schema(union, name, defs)
    for cls in (m.Entry, t.TeardownRequest, t.TeardownResult, t.Verdict, t.OwnerAnswer):
        _class_schema(cls, defs)
    _composites(defs)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "panefleet wire format",
        "description": f"format_version {m.FORMAT_VERSION}: steps, observations, journal entries and decisions, "
        "and for the operations listed under `operations` their requests, decisions and goldens. "
        "Goldens and audit logs are made of these; docs/ports.md says how to read it.",
        "format_version": m.FORMAT_VERSION,
        "operations": OPERATIONS,
        "$defs": dict(sorted(defs.items())),
        "anyOf": [{"$ref": f"#/$defs/{n}"} for n in ("Decision", "Entry", "Step", "Observation")],
    }
    names: dict[int, str] = {id(union): name for union, name, _ in NAMED_UNIONS}
    for module in (m, t, p):
        for value in vars(module).values():
            if (isinstance(value, type) and attrs.has(value) and value.__name__ in defs
                    and value.__module__.split(".")[:len(module.__name__.split("."))] == module.__name__.split(".")):
                names[id(value)] = value.__name__
    return schema, names


def build_schema() -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(_built()[0]))  # a copy: callers may change it
    return copy


def def_name(described: object) -> str | None:
    """The ``$defs`` name of a class or named union the schema describes, else None."""
    return _built()[1].get(id(described))


def schema_text() -> str:
    return json.dumps(build_schema(), indent=2, sort_keys=True) + "\n"
