"""observe → decide → execute, with an audit log that lets any run be replayed through decide."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from attrs import evolve, frozen

from pure import model as m
from pure import operations, wire
from pure.program import Driver, Program, ProgramFactory
from shell.run.step_text import describe_step

if TYPE_CHECKING:
    from shell.run.interrupts import Interrupts


class StepExecutor(Protocol):
    def execute(self, step: m.Step) -> m.Observation: ...


def state_dir(env: Mapping[str, str]) -> Path:
    """Where panefleet keeps its own state: PANEFLEET_STATE_DIR, else $XDG_STATE_HOME/panefleet."""
    explicit = env.get("PANEFLEET_STATE_DIR")
    if explicit:
        return Path(explicit)
    xdg = env.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path(env.get("HOME", "~")).expanduser() / ".local" / "state"
    return base / "panefleet"


class AuditLog:
    """One JSON Lines file per run: start, every step with its observation, the final decision.

    The log is optional to the run: a log that cannot be made or written (a read-only state folder, a
    full disk) stops being written, and ``problem`` says where and why (``<path>: <reason>``);
    :func:`run_operation` names it on stderr once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem = ""
        self.made = False  # the file was made (one that failed part-way holds the records up to there)
        self._handle: TextIO | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = path.open("a", encoding="utf-8")
            self.made = True
        except OSError as exc:
            self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        self.problem = f"{self.path}: {exc.strerror or exc}"
        handle, self._handle = self._handle, None
        if handle is not None:
            with contextlib.suppress(OSError):
                handle.close()

    @classmethod
    def create(cls, env: Mapping[str, str], operation: str, run_id: str) -> AuditLog:
        from shell.run.process import utc_now

        stamp = utc_now().replace(":", "").replace("-", "")
        name = f"{stamp}-{operation.replace('.', '-')}-{run_id[:8]}.jsonl"
        return cls(state_dir(env) / "audit" / name)

    def write(self, record: Mapping[str, Any]) -> None:
        if self._handle is None:
            return
        try:
            self._handle.write(wire.dumps(dict(record), pretty=False) + "\n")
            self._handle.flush()
        except OSError as exc:
            self._failed(exc)

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError as exc:
                self._failed(exc)


Listener = Callable[[m.Step, m.Observation], None]


def run_program(
    factory: ProgramFactory,
    executor: StepExecutor,
    *,
    audit: AuditLog | None = None,
    listener: Listener | None = None,
) -> tuple[m.Done, list[m.Entry]]:
    """Drive a program to completion against ``executor``; return the decision and the journal. An
    interrupt is delivered at the next step boundary (``shell/run/interrupts.py``); the decision of an
    interrupted run says so (``"interrupted": true`` in its result)."""
    from shell.run.interrupts import Interrupts

    try:
        with Interrupts() as interrupts:
            done, journal = _drive(factory, executor, audit, listener, interrupts)
        return (_marked_interrupted(done) if interrupts.delivered else done), journal
    finally:
        # However the run ends — done, a program that stopped without unlocking (a journal mismatch,
        # an internal error), Ctrl-C, SIGTERM (cli.py makes it an exception), a crash in the shell —
        # no lock it took is left behind for 5 minutes. A normal run has released them all already.
        try:
            release = getattr(executor, "release_all", None)
            if callable(release):
                release()
        finally:
            _end_run(executor)


def _end_run(executor: StepExecutor) -> None:
    """Close the run's tmux control client (``shell/run/tmux_control.py``), also when ``executor`` wraps
    the real one as ``real`` (``shell/run/dryrun.py``)."""
    for candidate in (executor, getattr(executor, "real", None)):
        end = getattr(candidate, "end_run", None)
        if callable(end):
            end()
            return


def _tmux_summary(executor: StepExecutor) -> object:
    summary = getattr(executor, "tmux_summary", None)
    return summary() if callable(summary) else None


def _marked_interrupted(done: m.Done) -> m.Done:
    result = done.outcome.result
    if not isinstance(result, dict):
        return done
    return evolve(done, outcome=evolve(done.outcome, result=m.JsonValue({**result, "interrupted": True})))


def _drive(
    factory: ProgramFactory, executor: StepExecutor, audit: AuditLog | None, listener: Listener | None,
    interrupts: Interrupts,
) -> tuple[m.Done, list[m.Entry]]:
    driver = Driver(factory)
    journal: list[m.Entry] = []
    while True:
        if isinstance(driver.decision(), m.Next) and interrupts.due():
            assert interrupts.requested is not None
            if audit is not None:  # where the program was interrupted: replay interrupts it there too
                audit.write({"type": "interrupt", "signal": interrupts.requested.name})
            driver.interrupt()
        decision = driver.decision()
        if isinstance(decision, m.Done):
            if audit is not None:
                record: dict[str, Any] = {"type": "done", "decision": wire.unstructure(decision)}
                tmux = _tmux_summary(executor)
                if tmux is not None:  # how the tmux steps were answered (replay reads only "decision")
                    record["tmux_executor"] = tmux
                audit.write(record)
            return decision, journal
        ahead = driver.take_ahead()
        if ahead:  # reads the program will ask for later (pure/program.py Ahead): never journaled
            read_ahead = getattr(executor, "read_ahead", None)
            if callable(read_ahead):
                read_ahead(ahead)
        for step in decision.steps:
            observation = executor.execute(step)
            journal.append(m.Entry(step=step, observation=observation))
            if audit is not None:
                entry = {"type": "entry", "step": wire.unstructure(step), "observation": wire.unstructure(observation)}
                via = getattr(executor, "tmux_via", None) if isinstance(step, m.Run) and step.tool == "tmux" else None
                if isinstance(via, str):  # "control" or "spawn" (replay reads only step and observation)
                    entry["tmux_via"] = via
                if getattr(executor, "answered_ahead", False) is True:  # read before it was asked for
                    entry["read_ahead"] = True
                audit.write(entry)
            if listener is not None:
                listener(step, observation)
            driver.feed(step, observation)


def run_operation(
    name: str,
    request: object,
    executor: StepExecutor,
    *,
    env: Mapping[str, str],
    audit: bool = True,
    listener: Listener | None = None,
    host: str | None = None,
) -> tuple[m.Done, list[m.Entry], Path | None]:
    """Run the operation ``name`` for ``request`` through ``executor``, placed on ``host`` when one is given
    (``pure/on_host.py``: the team lives there), with its audit log (whose start record names the host, so
    that a replay places it too)."""
    op = operations.get(name)
    if op is None:
        raise KeyError(f"unknown operation {name}")
    log: AuditLog | None = None
    if audit:
        log = AuditLog.create(env, name, os.urandom(8).hex())
        log.write(
            {
                "type": "start",
                "format_version": m.FORMAT_VERSION,
                "panefleet_version": panefleet_version(),
                "operation": name,
                "request": wire.unstructure(request),
                **({"host": host} if host is not None else {}),
            }
        )
    try:
        done, journal = run_program(lambda: placed(op.program(request), host), executor, audit=log,
                                    listener=listener)
    finally:
        if log is not None:
            log.close()
            if log.problem:  # the run went on without it; said once, on stderr (also with -o json)
                sys.stderr.write(f"panefleet: audit log not written: {log.problem}\n")
    return done, journal, (log.path if log is not None and log.made else None)


def placed(program: Program, host: str | None) -> Program:
    """``program`` as it runs: on ``host`` (``pure/on_host.py``), or here."""
    from pure.on_host import on_host

    return program if host is None else on_host(program, host)


def panefleet_version() -> str:
    """``importlib.metadata.version("panefleet")`` without importing ``importlib.metadata`` (≈17 ms
    of every audited run's start-up): the first ``sys.path`` entry holding panefleet's
    ``*.dist-info`` (``METADATA``) or ``*.egg-info`` (``PKG-INFO``) says it; else ``unknown``."""
    import sys

    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            stem, _, suffix = name.rpartition(".")
            if suffix not in ("dist-info", "egg-info") or stem.split("-")[0].lower() != "panefleet":
                continue
            meta = Path(entry or ".") / name / ("METADATA" if suffix == "dist-info" else "PKG-INFO")
            try:
                with meta.open(encoding="utf-8") as handle:
                    for line in handle:
                        if not line.strip():
                            break  # the end of the headers
                        if line.startswith("Version:"):
                            return line[len("Version:"):].strip()
            except OSError:
                continue
    return "unknown"


# --------------------------------------------------------------------------------------------- replay


@frozen
class ReplayReport:
    operation: str
    steps: int
    divergence: str | None
    incomplete: bool = False
    recorded_version: str = "unknown"

    @property
    def ok(self) -> bool:
        return self.divergence is None and not self.incomplete


class AuditError(Exception):
    pass


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise AuditError(f"{path}:{number}: malformed JSON: {exc.msg}") from None
            if not isinstance(record, dict) or "type" not in record:
                raise AuditError(f"{path}:{number}: not an audit record")
            yield record


def replay(path: Path) -> ReplayReport:
    """Re-derive every decision of a recorded run and compare it with what was recorded."""
    records = list(_records(path))
    if not records or records[0].get("type") != "start":
        raise AuditError(f"{path}: first record is not a start record")
    start = records[0]
    if start.get("format_version", "").split(".")[0] != m.FORMAT_VERSION.split(".")[0]:
        raise AuditError(f"{path}: unsupported format_version {start.get('format_version')!r}")
    name = str(start.get("operation"))
    version = str(start.get("panefleet_version", "unknown"))
    op = operations.get(name)
    if op is None:
        raise AuditError(f"{path}: unknown operation {name!r}")
    request = wire.structure(start.get("request"), op.request_type).value_or(None)
    if request is None:
        raise AuditError(f"{path}: the request does not fit {op.request_type.__name__}")
    host = start.get("host")
    if host is not None and not isinstance(host, str):
        raise AuditError(f"{path}: the start record's host is not a string")
    driver = Driver(lambda: placed(op.program(request), host))
    count = 0
    for index, record in enumerate(records[1:], start=1):
        kind = record.get("type")
        decision = driver.decision()
        if kind == "entry":
            entry = wire.structure({"step": record.get("step"), "observation": record.get("observation")}, m.Entry)
            parsed = entry.value_or(None)
            if parsed is None:
                raise AuditError(f"{path}: record {index} is not a valid entry")
            if not isinstance(decision, m.Next) or parsed.step not in decision.steps:
                return ReplayReport(name, count, f"record {index}: the log has `{_brief(parsed.step)}` but decide "
                                    f"gives {_brief_decision(decision)}", recorded_version=version)
            driver.feed(parsed.step, parsed.observation)
            count += 1
        elif kind == "interrupt":
            driver.interrupt()
        elif kind == "done":
            recorded = wire.structure_as(record.get("decision"), m.Decision).value_or(None)
            if recorded != decision:
                shown = _brief_decision(recorded) if recorded is not None else "an unreadable decision"
                return ReplayReport(name, count, f"record {index}: the log ends with {shown} but decide gives "
                                    f"{_brief_decision(decision)}", recorded_version=version)
            return ReplayReport(name, count, None, recorded_version=version)
        else:
            raise AuditError(f"{path}: record {index} has unknown type {kind!r}")
    return ReplayReport(name, count, None, incomplete=True, recorded_version=version)


def _brief(step: m.Step) -> str:
    text = describe_step(step)
    return text if len(text) <= 160 else text[:157] + "..."


def _brief_decision(decision: m.Next | m.Done) -> str:
    if isinstance(decision, m.Next):
        return "`" + "`, `".join(_brief(s) for s in decision.steps) + "`"
    outcome = decision.outcome
    return f"done ({outcome.status}{': ' + outcome.message if outcome.message else ''})"
