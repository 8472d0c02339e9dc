"""What every panefleet command shares: output modes, exit codes, executors, dry-run rendering.

Exit codes (also in the README):
  0 ok · 1 runtime error · 2 usage error · 3 finished but debt recorded · 4 refused, nothing done
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from typing import Any

from pure import model as m
from shell.cli_args import add_dry_run, add_output, add_tmux
from shell.executor import Executor, StoreHandler

__all__ = ["add_dry_run", "add_output", "add_tmux", "run_cli_operation"]

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_DEBT, EXIT_REFUSED = 0, 1, 2, 3, 4
EXIT_BY_STATUS = {"ok": EXIT_OK, "error": EXIT_ERROR, "debt": EXIT_DEBT, "refused": EXIT_REFUSED}
TextRenderer = Callable[[dict[str, Any]], str]
RunRenderer = Callable[[dict[str, Any], m.Done, list[m.Entry]], str]
Predictor = Callable[[m.Run], m.Proc]


def tmux_socket(args: argparse.Namespace, env: Mapping[str, str]) -> str | None:
    return getattr(args, "tmux_socket", None) or env.get("PANEFLEET_TMUX_SOCKET") or None


def make_executor(args: argparse.Namespace, env: Mapping[str, str], store: StoreHandler | None = None) -> Executor:
    return Executor(env=env, tmux_socket=tmux_socket(args, env), store=store)


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


def is_change(step: m.Step) -> bool:
    from pure.program import is_mutation

    return is_mutation(step)


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


def emit_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


def generic_text(result: dict[str, Any]) -> str:
    if result.get("ok") is False:
        return f"error: {result.get('error') or result.get('reason')}"
    return "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in result.items() if k != "ok") or "ok"


def debt_lines(done: m.Done) -> str:
    return "".join(f"debt: {debt.kind} {debt.subject}: {debt.reason}\n" for debt in done.debt)


def run_cli_operation(
    name: str,
    request: object,
    args: argparse.Namespace,
    *,
    env: Mapping[str, str] | None = None,
    render: TextRenderer = generic_text,
    render_run: RunRenderer | None = None,
    store: StoreHandler | None = None,
    predictors: Mapping[str, Predictor] | Callable[[Executor], Mapping[str, Predictor]] | None = None,
    predicted_capture: str | None = None,
) -> int:
    """Run a registered operation (or its dry run) and print its outcome; return the exit code.

    ``render`` turns the result into text. ``render_run`` is for operations whose text needs the
    whole run (what the journal shows was changed, killed, cleaned): it owns the text entirely.
    ``predictors`` (or a function of the real executor giving them) and ``predicted_capture`` shape
    the dry run (see ``shell/dryrun.py``)."""
    from shell.loop import run_operation, run_program

    environ = dict(os.environ if env is None else env)
    executor = make_executor(args, environ, store)
    as_json = getattr(args, "output", "text") == "json"
    if getattr(args, "dry_run", False):
        from pure import ops
        from shell.dryrun import DryRunExecutor

        op = ops.get(name)
        assert op is not None, name
        chosen = predictors(executor) if callable(predictors) else predictors
        dry = DryRunExecutor(executor, chosen, predicted_capture=predicted_capture)
        done, journal = run_program(lambda: op.program(request), dry)
        return render_dry_run(done, journal, as_json)
    done, journal, audit = run_operation(name, request, executor, env=environ)
    result = done.outcome.result if isinstance(done.outcome.result, dict) else {"ok": False, "error": done.outcome.message}
    if as_json:
        emit_json(result)
    elif render_run is not None:
        sys.stdout.write(render_run(result, done, journal).rstrip("\n") + "\n")
    else:
        changes = result.get("changesMade")
        if isinstance(changes, list) and changes:
            # A crash in the middle: whatever the renderer says, list exactly what was changed.
            from pure import wire

            sys.stdout.write(f"error: {result.get('error')}\n")
            sys.stdout.write("panefleet stopped after making these changes (check them; run "
                             "`panefleet team status` / `herdr status`):\n")
            for raw in changes:
                step = wire.structure_as(raw, m.Step).value_or(None)
                sys.stdout.write(f"  - {describe_step(step) if step is not None else raw}\n")
        else:
            sys.stdout.write(render(result).rstrip("\n") + "\n")
        sys.stdout.write(debt_lines(done))
    if not as_json and audit is not None and os.environ.get("PANEFLEET_SHOW_AUDIT"):
        sys.stderr.write(f"audit log: {audit}\n")
    return EXIT_BY_STATUS.get(done.outcome.status, EXIT_ERROR)


def render_dry_run(done: m.Done, journal: list[m.Entry], as_json: bool) -> int:
    from pure import wire

    if as_json:
        emit_json({
            "dryRun": True,
            "plan": [
                {"change": is_change(e.step), "step": wire.unstructure(e.step),
                 "predicted": wire.unstructure(e.observation)}
                for e in journal
            ],
            "predicted": done.outcome.result,
        })
    else:
        out = ["Plan (dry run: reads are real, changes are predicted and not made):"]
        for number, entry in enumerate(journal, start=1):
            mark = "+" if is_change(entry.step) else " "
            out.append(f"{mark}{number:4d}. {describe_step(entry.step)}  →  {describe_observation(entry.observation)}")
        changes = sum(1 for e in journal if is_change(e.step))
        out.append(f"{len(journal)} steps, {changes} changes (+). Predicted outcome: "
                   f"{json.dumps(done.outcome.result, ensure_ascii=False)}")
        sys.stdout.write("\n".join(out) + "\n")
    return EXIT_BY_STATUS.get(done.outcome.status, EXIT_ERROR)
