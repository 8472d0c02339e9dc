"""The plan file ``--plan-out FILE`` writes (its format, fingerprint and writing); reading one back and
carrying it out is ``shell/cli/saved_plan.py``."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pure import model as m

PLAN_FORMAT = 1
KIND = "panefleet-plan"


class PlanFileError(Exception):
    """A plan file that cannot be used. ``code`` 2: unreadable input; 4: refused."""

    def __init__(self, message: str, code: int = 4) -> None:
        super().__init__(message)
        self.code = code


# ------------------------------------------------------------------------------------------ write


def version() -> str:
    from shell.run.loop import panefleet_version

    return panefleet_version()


def state_root_of(operation: str, request: object, env: Mapping[str, str]) -> str:
    """What the plan acts on: the team state root for team commands, else panefleet's state dir."""
    if operation.startswith("team."):
        from pure.omx import state as st

        return st.resolve_state_root(str(getattr(request, "cwd", "")), env)
    from shell.store.herdr import state_dir

    return str(state_dir(env))


def fingerprint(data: Mapping[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k != "fingerprint"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _command_line() -> str:
    words = list(sys.argv[1:])
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word == "--plan-out":
            skip = True
            continue
        if word.startswith("--plan-out="):
            continue
        kept.append(word)
    return "panefleet " + shlex.join(kept)


def write_plan(path: str, operation: str, request: object, journal: Sequence[m.Entry], done: m.Done, *,
               env: Mapping[str, str], tmux_socket: str | None) -> None:
    from pure import wire
    from shell.cli.plan_view import changes
    from shell.run.process import utc_now

    request_env = getattr(request, "env", None)
    data: dict[str, Any] = {
        "kind": KIND,
        "format": PLAN_FORMAT,
        "wireFormat": m.FORMAT_VERSION,
        "panefleetVersion": version(),
        "createdAt": utc_now(),
        "command": _command_line(),
        "operation": operation,
        "stateRoot": state_root_of(operation, request, request_env if isinstance(request_env, dict) else env),
        "tmuxSocket": tmux_socket,
        "request": wire.unstructure(request),
        "journal": [wire.unstructure(e) for e in journal],
        "decision": wire.unstructure(done),
        "changes": [c.to_json() for c in changes(journal, done)],
    }
    data["fingerprint"] = fingerprint(data)
    target = Path(path)
    try:
        from shell.run import fs

        fs.atomic_write(target, (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8"), None)
    except OSError as exc:
        raise PlanFileError(f"cannot write the plan to {path}: {exc.strerror or exc}", code=2) from None
