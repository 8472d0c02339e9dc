"""Registry of operations: name → (request class, program). Used for replay and goldens.

A request carries everything an operation needs that is not observed through steps: the user's
arguments and the facts the shell gathered before planning (cwd, the relevant environment).
Operation modules register themselves here; :func:`load_all` imports every one of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from attrs import frozen

from pure.program import Program


@frozen
class Operation:
    name: str
    request_type: type[Any]
    program: Callable[[Any], Program]


_REGISTRY: dict[str, Operation] = {}

# Modules that define operations (imported by load_all; each calls register()).
OPERATION_MODULES: tuple[str, ...] = (
    "pure.herdr.fleet.programs",
    "pure.team",
    "pure.omx.scale_up",
    "pure.omx.respawn",
    "pure.omx.scale_down",
    "pure.omx.tasks",
    "pure.omx.peek",
    "pure.omx.logs",
    "pure.omx.send",
    "pure.fleet.leader",
    "pure.fleet.stop",
)


def register(name: str, request_type: type[Any], program: Callable[[Any], Program]) -> None:
    _REGISTRY[name] = Operation(name, request_type, program)


def load_all() -> dict[str, Operation]:
    for module in OPERATION_MODULES:
        importlib.import_module(module)
    return dict(_REGISTRY)


def get(name: str) -> Operation | None:
    if name not in _REGISTRY:
        load_all()
    return _REGISTRY.get(name)
