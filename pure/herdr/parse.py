"""Herdr 0.8.2 CLI answers → typed facts. Pure and total: every input gives a fact or a reason.

Herdr prints one line of sorted-key JSON per answer: ``{"id": "cli:<noun>:<verb>", "result": {...}}``
on stdout (exit 0), or ``{"error": {"code", "message"}, "id"}`` on stderr (exit 1). Usage errors are
plain text on stderr with exit 2. Only the first line of stdout is read; anything that does not fit
is a reason string, never an exception, and never evidence that something is absent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from attrs import frozen
from returns.result import Failure, Result, Success

from pure.model import Proc


def first_line(text: str) -> str:
    return text.split("\n", 1)[0].strip()


def failure_text(proc: Proc) -> str:
    """What a failed herdr call said, for reasons: the error message, the first stderr line, or a code."""
    if proc.exit_code is None:
        return first_line(proc.stderr) or "herdr could not be started"
    code = error_code(proc)
    line = first_line(proc.stderr)
    if code is not None:
        message = _error_message(proc)
        return f"{code}: {message}" if message else code
    return line or f"exit {proc.exit_code}, no output"


def _error_object(proc: Proc) -> Mapping[str, Any] | None:
    line = first_line(proc.stderr)
    if not line.startswith("{"):
        return None
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    err = data.get("error")
    return err if isinstance(err, dict) else None


def error_code(proc: Proc) -> str | None:
    """The herdr error code of a failed call (``workspace_not_found`` …), if it printed one."""
    err = _error_object(proc)
    if err is None:
        return None
    code = err.get("code")
    return code if isinstance(code, str) and code else None


# herdr 0.9.1 ``--machine``: the SSH connection to a saved machine dropped. The remote command may
# have run or not; herdr cannot say, and never falls back to the local server. (The code is the one
# tests/herdr/fake_herdr/fake.py models, "saved machines".)
TRANSPORT_CODES = frozenset({"machine_unreachable"})


def outcome_unknown(proc: Proc) -> bool:
    """A failed call that may have changed something all the same: the connection to its machine
    dropped, or it never finished (``exit_code`` None: timed out or interrupted, or never started).
    Never evidence that a change was not applied; only a fresh listing says what it did."""
    return proc.exit_code is None or error_code(proc) in TRANSPORT_CODES


def _error_message(proc: Proc) -> str:
    err = _error_object(proc)
    message = err.get("message") if err is not None else None
    return message if isinstance(message, str) else ""


def succeeded(proc: Proc) -> bool:
    return proc.exit_code == 0


# ------------------------------------------------------------------------------------ version skew

# herdr's own words (src/cli/protocol_guard.rs, 0.8.2 and 0.9): every CLI command first compares its
# protocol with the running server's and refuses on any difference, before the request is sent.
_MISMATCH = re.compile(r"client protocol (\d+) is (newer|older) than server protocol (\d+)")
# A clap usage error naming a verb or an option this herdr does not know: another herdr version.
_UNKNOWN = re.compile(r"(unrecognized subcommand '[^']*'|unexpected argument '[^']*')")


@frozen
class VersionSkew:
    """The herdr CLI and the running herdr server (or panefleet and the herdr CLI) are different
    versions: nothing herdr answers after that can be trusted, so the pass ends on it."""

    client: str | None  # as herdr's answer gives it ("protocol 22"); None when it gives none
    server: str | None
    remedy: Literal["restart_server", "update_cli", "match_panefleet"]
    said: str  # herdr's own message, first line

    def message(self) -> str:
        todo = {
            "restart_server": "restart the herdr server (stop it, then start it again with the herdr CLI now on "
                              "PATH) so that it runs the CLI's version",
            "update_cli": "update the herdr CLI on PATH to the server's version (or restart the server with the "
                          "CLI now on PATH)",
            "match_panefleet": "use a herdr that panefleet speaks (0.8.2, or 0.9.0 to 0.9.3), CLI and server alike",
        }[self.remedy]
        if self.client is not None and self.server is not None:
            which = f"the herdr CLI speaks {self.client} and the running herdr server {self.server}"
        else:
            which = f"herdr did not understand panefleet's command ({self.said})"
        return f"herdr_version_skew: {which}; {todo}. Nothing more was asked of herdr."

    def to_json(self) -> dict[str, Any]:
        return {"client": self.client, "server": self.server, "remedy": self.remedy, "herdr": self.said}


def version_skew(proc: Proc) -> VersionSkew | None:
    """The one place a herdr answer is read as a version skew: ``protocol_mismatch`` (the versions
    as its message gives them), or a usage error naming a verb or option herdr does not know."""
    if proc.exit_code is None or proc.exit_code == 0:
        return None
    if error_code(proc) == "protocol_mismatch":
        said = first_line(_error_message(proc)) or "protocol_mismatch"
        found = _MISMATCH.search(said)
        if found is None:
            return VersionSkew(None, None, "restart_server", said)
        remedy: Literal["restart_server", "update_cli"] = "restart_server" if found[2] == "newer" else "update_cli"
        return VersionSkew(f"protocol {found[1]}", f"protocol {found[3]}", remedy, said)
    if proc.exit_code == 2:
        unknown = _UNKNOWN.search(proc.stderr)
        if unknown is not None:
            return VersionSkew(None, None, "match_panefleet", unknown[1])
    return None


def envelope(stdout: str, verb: str) -> Result[Mapping[str, Any], str]:
    """The ``result`` object of a success envelope."""
    line = first_line(stdout)
    if line == "":
        return Failure(f"herdr {verb} printed nothing")
    try:
        payload = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        return Failure(f"herdr {verb} was unreadable: {exc}")
    if not isinstance(payload, dict):
        return Failure(f"herdr {verb} answered {type(payload).__name__}, not an object")
    result = payload.get("result")
    if not isinstance(result, dict):
        return Failure(f"herdr {verb} answer carries no result object")
    return Success(result)


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() != "" else None


# ------------------------------------------------------------------------------------------- facts


@frozen
class WorkspaceFact:
    workspace_id: str
    label: str | None
    tokens: tuple[tuple[str, str], ...]

    def token(self, name: str) -> str | None:
        for key, value in self.tokens:
            if key == name:
                return value
        return None


@frozen
class PaneFact:
    """One pane of a ``pane list`` answer, with the fields reconciliation reads.

    ``run_id`` is the session id herdr reports under ``source`` (``""`` when it reports none, which
    herdr 0.8.2 always does for a custom source); ``agent`` the hook-authority label; ``label`` the
    rename label (which survives a herdr restart).
    """

    pane_id: str
    run_id: str
    agent: str | None
    label: str | None
    workspace_id: str | None


@frozen
class CreatedWorkspace:
    workspace_id: str
    root_pane_id: str | None


@frozen
class ProcessEntry:
    pid: int | None
    name: str | None
    argv0: str | None
    argv: tuple[str, ...] | None


@frozen
class ProcessInfo:
    pane_id: str
    shell_pid: int | None
    processes: tuple[ProcessEntry, ...] | None


# ----------------------------------------------------------------------------------------- parsers


def parse_workspace_list(stdout: str) -> Result[tuple[WorkspaceFact, ...], str]:
    def read(result: Mapping[str, Any]) -> Result[tuple[WorkspaceFact, ...], str]:
        raw = result.get("workspaces")
        if not isinstance(raw, list):
            return Failure("herdr workspace list carried no workspaces array")
        out: list[WorkspaceFact] = []
        for entry in raw:
            if not isinstance(entry, dict):
                continue
            wid = _text(entry.get("workspace_id"))
            if wid is None:
                continue
            tokens_raw = entry.get("tokens")
            tokens: list[tuple[str, str]] = []
            if isinstance(tokens_raw, dict):
                tokens = sorted((k, v) for k, v in tokens_raw.items() if isinstance(v, str))
            label = entry.get("label")
            out.append(WorkspaceFact(wid, label if isinstance(label, str) else None, tuple(tokens)))
        return Success(tuple(out))

    return envelope(stdout, "workspace list").bind(read)


def parse_pane_list(stdout: str, source: str) -> Result[tuple[PaneFact, ...], str]:
    """Panes of a ``pane list`` answer; ``run_id`` is read only from an ``agent_session`` of ``source``."""

    def read(result: Mapping[str, Any]) -> Result[tuple[PaneFact, ...], str]:
        raw = result.get("panes")
        if not isinstance(raw, list):
            return Failure("herdr pane list carried no pane array")
        out: list[PaneFact] = []
        for entry in raw:
            if not isinstance(entry, dict):
                continue
            pid = _text(entry.get("pane_id"))
            if pid is None:
                continue
            session = entry.get("agent_session")
            run_id = ""
            if isinstance(session, dict) and session.get("source") == source:
                value = session.get("value")
                run_id = value if isinstance(value, str) else ""
            agent = entry.get("agent")
            label = entry.get("label")
            ws = entry.get("workspace_id")
            out.append(
                PaneFact(
                    pane_id=pid,
                    run_id=run_id,
                    agent=agent if isinstance(agent, str) else None,
                    label=label if isinstance(label, str) else None,
                    workspace_id=ws if isinstance(ws, str) else None,
                )
            )
        return Success(tuple(out))

    return envelope(stdout, "pane list").bind(read)


def parse_created_workspace(stdout: str) -> Result[CreatedWorkspace, str]:
    def read(result: Mapping[str, Any]) -> Result[CreatedWorkspace, str]:
        ws = result.get("workspace")
        wid = _text(ws.get("workspace_id")) if isinstance(ws, dict) else None
        if wid is None:
            return Failure("herdr workspace create reported no workspace id")
        root = result.get("root_pane")
        rid = _text(root.get("pane_id")) if isinstance(root, dict) else None
        return Success(CreatedWorkspace(wid, rid))

    return envelope(stdout, "workspace create").bind(read)


def parse_root_pane(stdout: str) -> Result[str, str]:
    """The root pane id of a ``tab create`` answer."""

    def read(result: Mapping[str, Any]) -> Result[str, str]:
        root = result.get("root_pane")
        rid = _text(root.get("pane_id")) if isinstance(root, dict) else None
        return Success(rid) if rid is not None else Failure("herdr tab create reported no root pane")

    return envelope(stdout, "tab create").bind(read)


def parse_split_pane(stdout: str) -> Result[str, str]:
    """The new pane id of a ``pane split`` answer (``result.pane.pane_id``)."""

    def read(result: Mapping[str, Any]) -> Result[str, str]:
        pane = result.get("pane")
        pid = _text(pane.get("pane_id")) if isinstance(pane, dict) else None
        return Success(pid) if pid is not None else Failure("herdr pane split reported no pane id")

    return envelope(stdout, "pane split").bind(read)


def _int(value: object) -> int | None:
    return value if type(value) is int else None


def parse_process_info(stdout: str, pane_id: str) -> Result[ProcessInfo, str]:
    """``pane process-info``. A missing table stays ``None`` (no evidence), never an empty one."""

    def read(result: Mapping[str, Any]) -> Result[ProcessInfo, str]:
        info = result.get("process_info")
        if not isinstance(info, dict):
            return Failure("herdr pane process-info carried no process_info object")
        listed = info.get("pane_id")
        if isinstance(listed, str) and listed.strip() not in ("", pane_id):
            return Failure(f"herdr pane process-info answered for pane {listed}, not {pane_id}")
        raw = info.get("foreground_processes")
        procs: tuple[ProcessEntry, ...] | None = None
        if isinstance(raw, list):
            entries: list[ProcessEntry] = []
            for item in raw:
                if not isinstance(item, dict):
                    entries.append(ProcessEntry(None, None, None, None))
                    continue
                argv_raw = item.get("argv")
                argv = (
                    tuple(a for a in argv_raw if isinstance(a, str)) if isinstance(argv_raw, list) else None
                )
                name = item.get("name")
                argv0 = item.get("argv0")
                entries.append(
                    ProcessEntry(
                        pid=_int(item.get("pid")),
                        name=name if isinstance(name, str) else None,
                        argv0=argv0 if isinstance(argv0, str) else None,
                        argv=argv,
                    )
                )
            procs = tuple(entries)
        return Success(ProcessInfo(pane_id=pane_id, shell_pid=_int(info.get("shell_pid")), processes=procs))

    return envelope(stdout, "pane process-info").bind(read)
