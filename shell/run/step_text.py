"""One line a person can read for a step and for an observation (audit replay, plans, errors).

Shared by the run loop, the CLI's dry-run and plan rendering and ``panefleet apply``; it depends on
``pure.model`` only, so every layer of the shell can use it.
"""

from __future__ import annotations

import shlex

from pure import model as m


def describe_step(step: m.Step) -> str:
    """One line a person can read (and paste, for commands)."""
    if isinstance(step, m.Run):
        words = " ".join(shlex.quote(a).replace("\t", "\\t") for a in step.args)
        return f"{step.tool} {words}"
    if isinstance(step, m.WriteFile):
        return f"write {step.path} ({len(step.content.encode())} bytes)"
    if isinstance(step, m.AppendFile):
        return f"append to {step.path} ({len(step.content.encode())} bytes)"
    if isinstance(step, m.RemovePath):
        return f"remove {'tree ' if step.recursive else ''}{step.path}"
    if isinstance(step, m.MakeDir):
        return f"mkdir {step.path}"
    if isinstance(step, m.ReadFile):
        return f"read {step.path}"
    if isinstance(step, m.ListDir):
        return f"list {step.path}"
    if isinstance(step, m.Stat):
        return f"stat {step.path}"
    if isinstance(step, m.RealPath):
        return f"realpath {step.path}"
    if isinstance(step, m.AcquireLock):
        return f"lock {step.path} (timeout {step.timeout_ms} ms)"
    if isinstance(step, m.ReleaseLock):
        return f"unlock {step.path}"
    if isinstance(step, m.Sleep):
        return f"wait {step.ms} ms"
    if isinstance(step, m.Clock):
        return "read the clock"
    if isinstance(step, m.FreshId):
        return "make a fresh id"
    return f"store {step.action}"


def describe_observation(obs: m.Observation) -> str:
    if isinstance(obs, m.Proc):
        if obs.exit_code is None:
            return f"could not start: {obs.stderr.strip()}"
        first = (obs.stdout.strip().splitlines() or [""])[0]
        more = f" (+{len(obs.stdout.strip().splitlines()) - 1} lines)" if len(obs.stdout.strip().splitlines()) > 1 else ""
        tail = f" stderr: {obs.stderr.strip()}" if obs.stderr.strip() else ""
        return f"exit {obs.exit_code}" + (f": {first}{more}" if first else "") + tail
    if isinstance(obs, m.FileData):
        if obs.error:
            return f"unreadable: {obs.error}"
        return "absent" if obs.content is None else f"{len(obs.content.encode())} bytes"
    if isinstance(obs, m.Ack):
        return "ok" if obs.ok else f"failed: {obs.error}"
    if isinstance(obs, m.Listing):
        return "absent" if obs.names is None else f"{len(obs.names)} entries"
    if isinstance(obs, m.Value):
        return obs.value
    return "ok" if obs.ok else f"failed: {obs.error}"
