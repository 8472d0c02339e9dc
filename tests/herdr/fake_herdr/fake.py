"""A fake herdr 0.8.2 server + CLI, for tests only (no real Herdr can run here).

State persists between invocations in the JSON file named by ``FAKE_HERDR_STATE`` (guarded by an
``flock`` on ``<state>.lock``), so every ``herdr`` call is a separate process like the real CLI.
Modelled on herdr 0.8.2's CLI and server: sessions (``--session`` stripped anywhere before ``--``),
workspaces with labels and tokens, tabs, panes with labels, hook authority, process tables, one-line
sorted-key JSON envelopes, ok-only verbs that print nothing, JSON errors on stderr with exit 1, usage
errors with exit 2, closing a workspace's last pane closes the workspace, ``agent_session`` kept only
for official sources (switchable), ``pane run`` joining argv without quoting, and ``restart``.

Herdr 0.9 mode (``config.version`` "0.9.0"…"0.9.3", or ``FAKE_HERDR_VERSION`` when the state is made;
the CLI's own version apart, ``FAKE_HERDR_CLI_VERSION`` or ``config.cli_version``): protocol 22, and any
CLI/server protocol difference answers ``protocol_mismatch`` before the request is sent; ``workspace
close`` of a group's primary refuses with ``workspace_group_close_required`` unless ``--group``;
``restart(empty=True)`` comes back with only a new default ``w1`` (ids reissued), ``rewrite_cwd`` moves
directories; process-info lists descendants after the foreground process (zombies: pid and name);
a self-reported agent is cleared at an idle shell; the last pane's close either closes the workspace
(``config.last_pane`` "closes") or answers ``confirmation_required`` ("confirm").

A fault ``hang_after`` (``fault(verb, "hang_after", ms=…)``) applies the call, saves the state, then
sleeps before answering: a local call that never finished once its caller's deadline kills it.

Test-side helpers (``FakeHerdr``) plant operator panes and lookalike workspaces, kill followers,
restart the server, inject faults, and read the call log.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs milliseconds on every herdr call
    from collections.abc import Iterator
    from typing import Any

ALPHABET = "123456789ABCDEFGHJKMNPQRSTVWXYZ0"
OFFICIAL = {("herdr:omp", "omp"), ("herdr:claude", "claude"), ("herdr:codex", "codex"), ("herdr:pi", "pi")}
SAFE_SOURCE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789:._-")
SAFE_TOKEN = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
STATES = ("idle", "working", "blocked", "unknown")
# Socket protocol of each herdr version the fake plays (0.8.2: src/protocol/wire.rs; 0.9.x: 22).
PROTOCOLS = {"0.8.2": 20, "0.9.0": 22, "0.9.1": 22, "0.9.2": 22, "0.9.3": 22}
GROUP_CLOSE_MESSAGE = ("workspace has linked worktree workspaces; use --group (close_group=true in the API) to "
                       "close the group")


def protocol_mismatch(state: dict[str, Any], server: Server, req_id: str, session: str) -> Exit | None:
    """herdr's CLI compares its protocol with the server's before every request (src/cli/protocol_guard.rs):
    any difference is ``protocol_mismatch`` on stderr, exit 1, and the request is never sent. The CLI's
    version: ``FAKE_HERDR_CLI_VERSION`` (this executable), else ``config.cli_version``, else the server's."""
    server_version = server.version()
    cli_version = os.environ.get("FAKE_HERDR_CLI_VERSION") or state["config"].get("cli_version") or server_version
    client, theirs = PROTOCOLS[cli_version], PROTOCOLS[server_version]
    if client == theirs:
        return None
    if client > theirs:
        message = (f"client protocol {client} is newer than server protocol {theirs}; restart the Herdr server before "
                   f"using this command. Stop the old server to use the new version.\nStopping exits pane processes.\n"
                   f"Run `herdr session stop {session}`, then run `herdr session attach {session}` again.")
    else:
        message = (f"client protocol {client} is older than server protocol {theirs}; upgrade the Herdr client before "
                   "using this command")
    return api_error(req_id, "protocol_mismatch", message)


def enc(n: int) -> str:
    out = ""
    while n > 0:
        n -= 1
        out = ALPHABET[n % 32] + out
        n //= 32
    return out


def dec(text: str) -> int:
    n = 0
    for ch in text:
        n = n * 32 + ALPHABET.index(ch) + 1
    return n


def dumps(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


# ------------------------------------------------------------------------------------ state file


def empty_state() -> dict[str, Any]:
    return {
        "config": {"store_custom_sessions": False, "macos": False,
                   "version": os.environ.get("FAKE_HERDR_VERSION") or "0.8.2", "last_pane": "closes"},
        "pid_next": 4000,
        "sessions": {},
        "faults": [],
        "calls": [],
    }


def new_session() -> dict[str, Any]:
    return {"running": True, "ws_counter": 1, "workspaces": [], "focus": None}


@contextmanager
def locked_state(path: str) -> Iterator[dict[str, Any]]:
    with open(path + ".lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            try:
                with open(path, encoding="utf-8") as handle:
                    state = json.load(handle)
            except FileNotFoundError:
                state = empty_state()
            yield state
            tmp = f"{path}.tmp{os.getpid()}"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump(state, handle)
            os.replace(tmp, path)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


class Exit(Exception):
    def __init__(self, code: int, stdout: str = "", stderr: str = "") -> None:
        super().__init__(stderr)
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.hang_ms = 0.0  # the executable sleeps this long after saving the state (fault ``hang_after``)


def usage(message: str) -> Exit:
    return Exit(2, stderr=f"error: {message}\n\nFor more information, try '--help'.\n")


def api_error(req_id: str, code: str, message: str) -> Exit:
    return Exit(1, stderr=dumps({"error": {"code": code, "message": message}, "id": req_id}) + "\n")


# --------------------------------------------------------------------------------------- the model


class Server:
    def __init__(self, state: dict[str, Any], name: str) -> None:
        self.state = state
        self.name = name
        sessions = state.setdefault("sessions", {})
        if name not in sessions:
            sessions[name] = new_session()
        self.s = sessions[name]

    # version (``config.version``, or this server's own ``version``)
    def version(self) -> str:
        return str(self.s.get("version") or self.state["config"].get("version") or "0.8.2")

    def v09(self) -> bool:
        return self.version().startswith("0.9.")

    def linked(self, ws: dict[str, Any]) -> list[dict[str, Any]]:
        """The linked worktree workspaces of a group's primary workspace (none for any other)."""
        tree = ws.get("worktree")
        if not tree or tree.get("is_linked_worktree"):
            return []
        return [w for w in self.workspaces() if w is not ws and (w.get("worktree") or {}).get("repo_key")
                == tree["repo_key"] and w["worktree"].get("is_linked_worktree")]

    # ids and pids
    def new_pid(self) -> int:
        pid = int(self.state["pid_next"])
        self.state["pid_next"] = pid + 1
        return pid

    def new_terminal_id(self) -> str:
        number = int(self.state.get("term_next", 1))
        self.state["term_next"] = number + 1
        return f"term_{(number * 2654435761) % (16 ** 14):014x}"

    def shell(self) -> dict[str, Any]:
        return {"shell_pid": self.new_pid(), "fg": [], "unreadable_fg": False}

    # lookup
    def workspaces(self) -> list[dict[str, Any]]:
        return self.s["workspaces"]  # type: ignore[no-any-return]

    def ws(self, wid: str) -> dict[str, Any] | None:
        for ws in self.workspaces():
            if ws["workspace_id"] == wid:
                return ws
        # legacy: position number
        if wid.isdigit() and 0 < int(wid) <= len(self.workspaces()):
            return self.workspaces()[int(wid) - 1]
        return None

    def pane(self, pid: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None:
        for ws in self.workspaces():
            for tab in ws["tabs"]:
                for pane in tab["panes"]:
                    if pane["pane_id"] == pid:
                        return ws, tab, pane
        return None

    def focused_pane(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None:
        focus = self.s.get("focus")
        return self.pane(focus) if focus else None

    # construction
    def make_pane(self, ws: dict[str, Any], tab: dict[str, Any], cwd: str) -> dict[str, Any]:
        number = ws["next_pane"]
        ws["next_pane"] = number + 1
        pane = {
            "pane_id": f"{ws['workspace_id']}:p{enc(number)}",
            "terminal_id": self.new_terminal_id(),
            "workspace_id": ws["workspace_id"],
            "tab_id": tab["tab_id"],
            "cwd": cwd,
            "label": None,
            "hook": None,
            "session_ref": None,
            "hook_seqs": {},
            "revision": 0,
            **self.shell(),
        }
        return pane

    def make_tab(self, ws: dict[str, Any], cwd: str, label: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        number = ws["next_tab"]
        ws["next_tab"] = number + 1
        tab = {"tab_id": f"{ws['workspace_id']}:t{enc(number)}", "number": number, "label": label, "panes": []}
        pane = self.make_pane(ws, tab, cwd)
        tab["panes"].append(pane)
        ws["tabs"].append(tab)
        ws["active_tab"] = tab["tab_id"]
        return tab, pane

    def create_workspace(self, label: str | None, cwd: str, focus: bool) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        number = self.s["ws_counter"]
        self.s["ws_counter"] = number + 1
        ws = {
            "workspace_id": f"w{enc(number)}",
            "label": label,
            "tokens": {},
            "token_seqs": {},
            "tabs": [],
            "next_pane": 1,
            "next_tab": 1,
            "active_tab": None,
        }
        self.workspaces().append(ws)
        tab, pane = self.make_tab(ws, cwd)
        if focus or self.s.get("focus") is None:
            self.s["focus"] = pane["pane_id"]
        return ws, tab, pane

    def remove_pane(self, pane_id: str) -> None:
        found = self.pane(pane_id)
        if found is None:
            return
        ws, tab, pane = found
        tab["panes"].remove(pane)
        if not tab["panes"]:
            ws["tabs"].remove(tab)
            if ws["tabs"]:
                ws["active_tab"] = ws["tabs"][0]["tab_id"]
        if not ws["tabs"]:
            self.workspaces().remove(ws)
        if self.s.get("focus") == pane_id:
            self.s["focus"] = None
            for other in self.workspaces():
                for t in other["tabs"]:
                    if t["panes"]:
                        self.s["focus"] = t["panes"][0]["pane_id"]
                        break
                if self.s["focus"]:
                    break

    def restart(self, empty: bool = False, rewrite_cwd: bool = False) -> None:
        """``empty`` (herdr 0.9): the session comes back with nothing restored but a new default
        workspace ``w1``. ``rewrite_cwd``: the restore gives every workspace after the first the
        first one's directory (as one 0.9 restore did)."""
        if empty:
            self.s.update({"workspaces": [], "ws_counter": 1, "focus": None, "running": True})
            self.create_workspace(None, "/root", True)
            return
        kept = []
        for ws in self.workspaces():
            ws["tokens"] = {}
            ws["token_seqs"] = {}
            if not ws["tabs"]:
                continue
            for tab in ws["tabs"]:
                for pane in tab["panes"]:
                    pane["hook"] = None
                    pane["hook_seqs"] = {}
                    ref = pane.get("session_ref")
                    if ref is not None and (ref["source"], ref["agent"]) not in OFFICIAL:
                        pane["session_ref"] = None
                    pane.update(self.shell())
            kept.append(ws)
        self.s["workspaces"] = kept
        if rewrite_cwd and kept:
            first = next((p["cwd"] for t in kept[0]["tabs"] for p in t["panes"]), "/tmp")
            for ws in kept[1:]:
                for tab in ws["tabs"]:
                    for pane in tab["panes"]:
                        pane["cwd"] = first
        highest = max((dec(ws["workspace_id"][1:]) for ws in kept), default=0)
        self.s["ws_counter"] = highest + 1
        self.s["running"] = True
        if self.s.get("focus") and self.pane(self.s["focus"]) is None:
            self.s["focus"] = None

    # JSON views
    def pane_info(self, pane: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {
            "agent_status": pane["hook"]["state"] if pane.get("hook") else "unknown",
            "cwd": pane["cwd"],
            "focused": self.s.get("focus") == pane["pane_id"],
            "foreground_cwd": pane["cwd"],
            "pane_id": pane["pane_id"],
            "revision": pane["revision"],
            "scroll": {"max_offset_from_bottom": 0, "offset_from_bottom": 0, "viewport_rows": 24},
            "tab_id": pane["tab_id"],
            "terminal_id": pane["terminal_id"],
            "workspace_id": pane["workspace_id"],
        }
        if pane.get("hook"):
            info["agent"] = pane["hook"]["agent"]
        if pane.get("label"):
            info["label"] = pane["label"]
        if pane.get("session_ref"):
            info["agent_session"] = dict(pane["session_ref"])
        return info

    def tab_info(self, ws: dict[str, Any], tab: dict[str, Any]) -> dict[str, Any]:
        return {
            "agent_status": "unknown",
            "focused": any(self.s.get("focus") == p["pane_id"] for p in tab["panes"]),
            "label": tab["label"] or str(tab["number"]),
            "number": tab["number"],
            "pane_count": len(tab["panes"]),
            "tab_id": tab["tab_id"],
            "workspace_id": ws["workspace_id"],
        }

    def ws_info(self, ws: dict[str, Any]) -> dict[str, Any]:
        panes = [p for t in ws["tabs"] for p in t["panes"]]
        info: dict[str, Any] = {
            "active_tab_id": ws["active_tab"] or "",
            "agent_status": "unknown",
            "focused": any(self.s.get("focus") == p["pane_id"] for p in panes),
            "label": ws["label"] if ws["label"] is not None else f"workspace {ws['workspace_id']}",
            "number": self.workspaces().index(ws) + 1,
            "pane_count": len(panes),
            "tab_count": len(ws["tabs"]),
            "workspace_id": ws["workspace_id"],
        }
        if ws["tokens"]:
            info["tokens"] = dict(ws["tokens"])
        if ws.get("worktree"):
            info["worktree"] = dict(ws["worktree"])
        return info

    def process_info(self, pane: dict[str, Any], mode: str | None) -> dict[str, Any]:
        shell_proc = {"argv": ["bash"], "cmdline": "bash", "cwd": pane["cwd"], "name": "bash", "pid": pane["shell_pid"]}
        procs: list[dict[str, Any]] = []
        for proc in pane["fg"]:
            entry = {
                "argv": list(proc["argv"]),
                "cmdline": " ".join(proc["argv"]),
                "cwd": pane["cwd"],
                "name": proc["name"],
                "pid": proc["pid"],
            }
            if self.state["config"].get("macos"):
                entry["argv0"] = proc["argv"][0] if proc["argv"] else ""
            procs.append(entry)
        group = procs[0]["pid"] if procs else pane["shell_pid"]
        if not procs:
            procs = [shell_proc]
        if self.v09():
            # 0.9 on Linux: the foreground process first, then its descendants; a zombie has only pid and name.
            for child in pane.get("descendants", []):
                procs.append({"pid": child["pid"], "name": child["name"]} if child.get("zombie") else
                             {"argv": list(child["argv"]), "cmdline": " ".join(child["argv"]), "cwd": pane["cwd"],
                              "name": child["name"], "pid": child["pid"]})
        info: dict[str, Any] = {"foreground_process_group_id": group, "pane_id": pane["pane_id"], "shell_pid": pane["shell_pid"]}
        if mode == "pi_blank":
            procs = [{"pid": p["pid"], "name": ""} for p in procs if p["pid"] != pane["shell_pid"]] or [{"pid": 1, "name": ""}]
        if mode == "pi_no_shell":
            del info["shell_pid"]
        if not (pane.get("unreadable_fg") or mode == "pi_no_table"):
            info["foreground_processes"] = procs
        return info


# ----------------------------------------------------------------------------------------- parsing


def strip_global(argv: list[str], option: str, metavar: str) -> tuple[str | None, list[str]]:
    """A global option (``--session``, ``--machine``) taken out of ``argv`` wherever it stands before
    ``--``: its value (the last one given) and the rest."""
    value: str | None = None
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            out.extend(argv[i:])
            break
        if arg == option:
            if i + 1 >= len(argv):
                raise usage(f"a value is required for '{option} <{metavar}>' but none was supplied")
            value = argv[i + 1]
            i += 2
            continue
        if arg.startswith(option + "="):
            value = arg.split("=", 1)[1]
            i += 1
            continue
        out.append(arg)
        i += 1
    return value, out


def strip_session(argv: list[str]) -> tuple[str | None, list[str]]:
    return strip_global(argv, "--session", "NAME")


# ---------------------------------------------------------------------------------- saved machines
#
# The fake's model of herdr 0.9.1's saved machines (``herdr machine list|add``, ``herdr --machine
# <label|id> …``): the config lists them (``config.machines``: ``{"machine_id", "label", "host"}``), and
# each has a server state of its own, kept under ``sessions["machine:<id>"]`` (its own workspace ids).
# ``--machine`` is global like ``--session`` (stripped anywhere before ``--``); both together are a usage
# error (exit 2), an unknown machine ``machine_not_found`` (exit 1). A dropped SSH connection is
# modelled as the answer ``{"error": {"code": "machine_unreachable", …}}`` on stderr with exit 1, which
# says nothing about whether the remote command ran: ``drop_connection`` makes the next ``times``
# calls to a machine (from the first call of ``verb``, when given) answer that, either ``before`` the
# first one reaches the server or ``after`` it was applied (the answer lost; the later ones never get
# there). Nothing falls back to the local server.

UNREACHABLE = "machine_unreachable"


def strip_machine(argv: list[str]) -> tuple[str | None, list[str]]:
    return strip_global(argv, "--machine", "MACHINE")


def find_machine(state: dict[str, Any], name: str) -> dict[str, Any] | None:
    for machine in state["config"].get("machines", []):
        if name in (machine["machine_id"], machine["label"]):
            return machine  # type: ignore[no-any-return]
    return None


def machine_key(machine_id: str) -> str:
    return f"machine:{machine_id}"


def unreachable(req_id: str, machine: dict[str, Any]) -> Exit:
    return api_error(req_id, UNREACHABLE, f"ssh connection to machine {machine['label']} ({machine['host']}) dropped: "
                                          "connection reset by peer")


def take_drop(state: dict[str, Any], machine_id: str, key: str) -> str | None:
    """``before`` / ``after`` when this call to ``machine_id`` meets a dropped connection, else None."""
    for drop in state.get("drops", []):
        if drop["machine_id"] != machine_id or drop["times"] <= 0:
            continue
        if not drop["armed"]:
            if drop.get("verb") not in (None, key):
                continue
            drop["armed"] = True
        drop["times"] -= 1
        when = drop["when"]
        drop["when"] = "before"  # once the connection is down, later calls never reach the server
        drop["hits"] = int(drop.get("hits", 0)) + 1
        return str(when)
    return None


def v_machine(state: dict[str, Any], verb: str, args: list[str]) -> Exit:
    """``machine list`` and ``machine add --label L --host H`` (kept in the fake's config)."""
    machines = state["config"].setdefault("machines", [])
    if verb == "list":
        if args:
            raise usage(f"unexpected argument '{args[0]}' found")
        listed = [dict(m) for m in machines]
        return Exit(0, stdout=dumps({"id": "cli:machine:list", "result": {"machines": listed, "type": "machine_list"}}) + "\n")
    if verb == "add":
        a = Args(args, {"label", "host"}, set())
        label, host = a.required("label"), a.required("host")
        if find_machine(state, label) is not None:
            raise api_error("cli:machine:add", "machine_exists", f"machine {label} already exists")
        machine = {"host": host, "label": label, "machine_id": f"mach_{len(machines) + 1}"}
        machines.append(machine)
        return Exit(0, stdout=dumps({"id": "cli:machine:add", "result": {"machine": machine, "type": "machine_info"}}) + "\n")
    raise usage(f"unrecognized subcommand '{verb}'")


def machine_call(state: dict[str, Any], argv: list[str]) -> Exit | None:
    """A ``--machine`` call whose connection drops (``take_drop``): its answer, after applying it when
    the drop comes ``after``; None for every other call."""
    session_opt, rest = strip_session(argv)
    machine_opt, rest = strip_machine(rest)
    if machine_opt is None or session_opt is not None or len(rest) < 2 or rest[0] == "machine":
        return None
    machine = find_machine(state, machine_opt)
    if machine is None:
        return None
    key = f"{rest[0]} {rest[1]}"
    when = take_drop(state, machine["machine_id"], key)
    if when is None:
        return None
    if when == "after":
        try:
            handle(state, argv, drops=False)  # applied on the remote server (and logged); its answer is lost
        except Exit:
            pass
    elif state["config"].get("log_calls", True):
        state.setdefault("calls", []).append(list(argv))
    return unreachable("cli:request", machine)


class Args:
    """A small clap-like parser: named options with values, flags, positionals."""

    def __init__(self, argv: list[str], options: set[str], flags: set[str]) -> None:
        self.values: dict[str, list[str]] = {}
        self.flags: set[str] = set()
        self.positional: list[str] = []
        i = 0
        rest = False
        while i < len(argv):
            arg = argv[i]
            if rest or not arg.startswith("--") or arg == "--":
                if arg == "--" and not rest:
                    rest = True
                    i += 1
                    continue
                self.positional.append(arg)
                i += 1
                continue
            name, eq, inline = arg[2:].partition("=")
            if name in flags and not eq:
                self.flags.add(name)
                i += 1
                continue
            if name in options:
                if eq:
                    value = inline
                    i += 1
                else:
                    if i + 1 >= len(argv):
                        raise usage(f"a value is required for '--{name}' but none was supplied")
                    value = argv[i + 1]
                    i += 2
                self.values.setdefault(name, []).append(value)
                continue
            raise usage(f"unexpected argument '{arg}' found")

    def one(self, name: str) -> str | None:
        vals = self.values.get(name)
        return vals[-1] if vals else None

    def required(self, name: str) -> str:
        value = self.one(name)
        if value is None:
            raise usage(f"the following required arguments were not provided:\n  --{name} <{name.upper()}>")
        return value


# ------------------------------------------------------------------------------------------- faults


def take_fault(state: dict[str, Any], session: str, verb: str, args: list[str]) -> dict[str, Any] | None:
    for fault in state.get("faults", []):
        if fault.get("verb") != verb:
            continue
        if fault.get("session") not in (None, session):
            continue
        match = fault.get("match")
        if match is not None and match not in args:
            continue
        times = int(fault.get("times", 1))
        if times == 0:
            continue
        skip = int(fault.get("skip", 0))
        if skip > 0:  # let the first ``skip`` matching calls through
            fault["skip"] = skip - 1
            continue
        if times > 0:
            fault["times"] = times - 1
        fault["hits"] = int(fault.get("hits", 0)) + 1
        return fault
    return None


def drop_path(data: dict[str, Any], path: str) -> None:
    parts = path.split(".")
    node: Any = data
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return
    if isinstance(node, dict):
        node.pop(parts[-1], None)


# -------------------------------------------------------------------------------------------- verbs


def respond(req_id: str, result: dict[str, Any], fault: dict[str, Any] | None) -> Exit:
    envelope = {"id": req_id, "result": result}
    mode = fault.get("mode") if fault else None
    if mode == "drop_field":
        drop_path(envelope, str(fault["path"]))  # type: ignore[index]
    text = dumps(envelope)
    if mode == "garble":
        return Exit(0, stdout=text[: max(1, len(text) // 2)] + "\n")
    if mode == "empty":
        return Exit(0, stdout="")
    if mode == "not_json":
        return Exit(0, stdout="herdr: ok\n")
    if mode == "multiline":
        return Exit(0, stdout=text + "\n" + text + "\n")
    return Exit(0, stdout=text + "\n")


def ok_only(fault: dict[str, Any] | None) -> Exit:
    mode = fault.get("mode") if fault else None
    if mode == "garble":
        return Exit(0, stdout="{\"ok\n")
    return Exit(0)


def handle(state: dict[str, Any], argv: list[str], drops: bool = True) -> Exit:
    dropped = machine_call(state, argv) if drops else None
    if dropped is not None:
        return dropped
    session_opt, rest = strip_session(argv)
    session = session_opt or os.environ.get("HERDR_SESSION") or "default"
    machine_opt, rest = strip_machine(rest)
    if state["config"].get("log_calls", True):
        state.setdefault("calls", []).append(list(argv))
    if machine_opt is not None and session_opt is not None:
        raise usage("the argument '--machine <MACHINE>' cannot be used with '--session <NAME>'")
    if len(rest) < 2:
        raise usage("a subcommand is required")
    noun, verb, args = rest[0], rest[1], rest[2:]
    key = f"{noun} {verb}"
    if noun == "machine":
        return v_machine(state, verb, args)
    ok_only_verbs = {
        "workspace report-metadata",
        "pane report-agent",
        "pane report-agent-session",
        "pane release-agent",
        "pane run",
        "pane send-text",
        "pane send-keys",
    }
    req_id = "cli:request" if key in ok_only_verbs else f"cli:{noun}:{verb.replace('-', '_')}"
    if machine_opt is not None:
        machine = find_machine(state, machine_opt)
        if machine is None:
            raise api_error(req_id, "machine_not_found", f"no saved machine {machine_opt} (see `herdr machine list`)")
        session = machine_key(machine["machine_id"])  # the machine's own server, never the local one
    server = Server(state, session)
    fault = take_fault(state, session, key, args)
    mode = fault.get("mode") if fault else None
    if mode == "latency":
        time.sleep(float(fault.get("ms", 100)) / 1000)  # type: ignore[union-attr]
        mode = None
        fault = None
    if not server.s.get("running", True):
        sock = f"/root/.config/herdr/sessions/{session}/herdr.sock"
        raise api_error(
            req_id,
            "server_not_running",
            f"no herdr server is running at {sock}; run `herdr --session {session}` to start or attach it",
        )
    mismatch = protocol_mismatch(state, server, req_id, session)
    if mismatch is not None:
        raise mismatch
    if mode == "error":
        raise api_error(req_id, str(fault.get("code", "injected_failure")), str(fault.get("message", "injected failure")))  # type: ignore[union-attr]
    if mode == "plain":
        raise Exit(1, stderr=str(fault.get("message", "herdr: connection reset by peer")) + "\n")  # type: ignore[union-attr]
    if mode == "usage":
        raise usage("injected usage error")
    if mode == "split_failed" and key == "pane split":
        raise api_error(req_id, "pane_split_failed", "failed to spawn pane: ghostty error -2")
    handler = VERBS.get(key)
    if handler is None:
        raise usage(f"unrecognized subcommand '{verb}'")
    answer = handler(server, args, req_id, fault)
    if mode == "hang_after":  # applied, then the call never finishes: its caller's deadline ends it
        answer.hang_ms = float(fault.get("ms", 60_000))  # type: ignore[union-attr]
    return answer


def v_workspace_list(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    if args:
        raise usage(f"unexpected argument '{args[0]}' found")
    result = {"type": "workspace_list", "workspaces": [server.ws_info(ws) for ws in server.workspaces()]}
    return respond(req_id, result, fault)


def v_workspace_create(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"label", "cwd"}, {"no-focus", "focus"})
    if a.positional:
        raise usage(f"unexpected argument '{a.positional[0]}' found")
    ws, tab, pane = server.create_workspace(a.one("label"), a.one("cwd") or "/tmp", "focus" in a.flags)
    result = {
        "root_pane": server.pane_info(pane),
        "tab": server.tab_info(ws, tab),
        "type": "workspace_created",
        "workspace": server.ws_info(ws),
    }
    return respond(req_id, result, fault)


def v_workspace_report_metadata(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"source", "token", "clear-token", "seq", "ttl-ms"}, set())
    if len(a.positional) != 1:
        raise usage("the following required arguments were not provided:\n  <WORKSPACE>")
    source = a.required("source").strip()
    tokens = a.values.get("token", [])
    clears = a.values.get("clear-token", [])
    if not tokens and not clears:
        raise usage("at least one --token or --clear-token is required")
    parsed: list[tuple[str, str]] = []
    for tok in tokens:
        name, eq, value = tok.partition("=")
        if not eq or name == "":
            raise usage(f"invalid value '{tok}' for '--token <NAME=VALUE>'")
        parsed.append((name, value))
    ws = server.ws(a.positional[0])
    if ws is None:
        raise api_error(req_id, "workspace_not_found", f"workspace {a.positional[0]} not found")
    if not source or len(source) > 80 or any(ch not in SAFE_SOURCE for ch in source):
        raise api_error(req_id, "invalid_metadata_source", f"invalid metadata source {source!r}")
    for name, _ in parsed:
        if len(name) > 32 or any(ch not in SAFE_TOKEN for ch in name):
            raise api_error(req_id, "invalid_metadata_token", f"invalid metadata token {name!r}")
    if len(parsed) + len(clears) > 16:
        raise api_error(req_id, "metadata_token_limit", "too many tokens in one request")
    seq_text = a.one("seq")
    if seq_text is not None:
        seq = int(seq_text)
        last = ws["token_seqs"].get(source)
        if last is not None and seq <= last:
            return ok_only(fault)
        ws["token_seqs"][source] = seq
    elif source in ws["token_seqs"]:
        return ok_only(fault)
    tokens_now = dict(ws["tokens"])
    for name, value in parsed:
        clean = "".join(ch for ch in value.strip() if ch.isprintable())[:80]
        if clean:
            tokens_now[name] = clean
        else:
            tokens_now.pop(name, None)
    for name in clears:
        tokens_now.pop(name, None)
    if len(tokens_now) > 32:
        raise api_error(req_id, "metadata_token_limit", "too many tokens on the workspace")
    ws["tokens"] = tokens_now
    return ok_only(fault)


def v_workspace_close(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, set(), {"group"} if server.v09() else set())
    if len(a.positional) != 1:
        raise usage("the following required arguments were not provided:\n  <WORKSPACE>")
    ws = server.ws(a.positional[0])
    if ws is None:
        raise api_error(req_id, "workspace_not_found", f"workspace {a.positional[0]} not found")
    linked = server.linked(ws)
    if linked and server.v09() and "group" not in a.flags:
        raise api_error(req_id, "workspace_group_close_required", GROUP_CLOSE_MESSAGE)
    for member in [ws, *linked]:  # herdr 0.8.2 closed the whole group, asked or not
        for pane in [p for t in member["tabs"] for p in t["panes"]]:
            server.remove_pane(pane["pane_id"])
        if member in server.workspaces():
            server.workspaces().remove(member)
    return respond(req_id, {"type": "ok"}, fault)


def v_tab_create(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"workspace", "label", "cwd"}, {"no-focus", "focus"})
    target = a.one("workspace")
    if target is None:
        focused = server.focused_pane()
        ws = focused[0] if focused else (server.workspaces()[0] if server.workspaces() else None)
    else:
        ws = server.ws(target)
    if ws is None:
        raise api_error(req_id, "workspace_not_found", f"workspace {target} not found")
    tab, pane = server.make_tab(ws, a.one("cwd") or "/tmp", a.one("label"))
    if "focus" in a.flags:
        server.s["focus"] = pane["pane_id"]
    result = {"root_pane": server.pane_info(pane), "tab": server.tab_info(ws, tab), "type": "tab_created"}
    return respond(req_id, result, fault)


def v_pane_list(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"workspace", "tab"}, set())
    target = a.one("workspace")
    if target is not None:
        ws = server.ws(target)
        if ws is None:
            raise api_error(req_id, "workspace_not_found", f"workspace {target} not found")
        scope = [ws]
    else:
        scope = server.workspaces()
    panes = [server.pane_info(p) for ws in scope for t in ws["tabs"] for p in t["panes"]]
    return respond(req_id, {"panes": panes, "type": "pane_list"}, fault)


def v_pane_split(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"pane", "direction", "ratio", "cwd"}, {"no-focus", "focus", "current"})
    direction = a.required("direction")
    if direction not in ("right", "down"):
        raise usage(f"invalid value '{direction}' for '--direction <DIRECTION>'")
    target = a.one("pane") or (a.positional[0] if a.positional else None)
    found = server.pane(target) if target else server.focused_pane()
    if found is None:
        raise api_error(req_id, "pane_not_found", "pane not found")
    ws, tab, anchor = found
    pane = server.make_pane(ws, tab, anchor["cwd"])
    tab["panes"].insert(tab["panes"].index(anchor) + 1, pane)
    if "focus" in a.flags:
        server.s["focus"] = pane["pane_id"]
    return respond(req_id, {"pane": server.pane_info(pane), "type": "pane_info"}, fault)


def _pane_or_error(server: Server, pane_id: str, req_id: str) -> dict[str, Any]:
    found = server.pane(pane_id)
    if found is None:
        raise api_error(req_id, "pane_not_found", f"pane {pane_id} not found")
    return found[2]


def v_pane_rename(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    if len(args) < 2:
        raise usage("the following required arguments were not provided:\n  <LABEL>...")
    pane = _pane_or_error(server, args[0], req_id)
    words = args[1:]
    pane["label"] = None if words == ["--clear"] else (" ".join(words).strip() or None)
    pane["revision"] += 1
    return respond(req_id, {"pane": server.pane_info(pane), "type": "pane_info"}, fault)


def _hook_seq_ok(pane: dict[str, Any], source: str, seq_text: str | None) -> bool:
    seqs = pane["hook_seqs"]
    if seq_text is None:
        return source not in seqs
    seq = int(seq_text)
    last = seqs.get(source)
    if last is not None and seq <= last:
        return False
    seqs[source] = seq
    return True


def v_pane_report_agent_session(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"source", "agent", "agent-session-id", "agent-session-path", "seq"}, set())
    if len(a.positional) != 1:
        raise usage("the following required arguments were not provided:\n  <PANE>")
    source, agent = a.required("source"), a.required("agent")
    pane = _pane_or_error(server, a.positional[0], req_id)
    if agent.strip() == "":
        raise api_error(req_id, "invalid_agent", "agent must not be empty")
    if not _hook_seq_ok(pane, source, a.one("seq")):
        return ok_only(fault)
    value = a.one("agent-session-id")
    kind = "id"
    if value is None:
        value, kind = a.one("agent-session-path"), "path"
    official = (source, agent) in OFFICIAL
    if value is not None and (official or server.state["config"].get("store_custom_sessions")):
        if not (fault and fault.get("mode") == "drop_session"):
            pane["session_ref"] = {"agent": agent, "kind": kind, "source": source, "value": value}
    return ok_only(fault)


def v_pane_report_agent(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"source", "agent", "state", "seq", "agent-session-id"}, set())
    if len(a.positional) != 1:
        raise usage("the following required arguments were not provided:\n  <PANE>")
    source, agent, st = a.required("source"), a.required("agent"), a.required("state")
    if st not in STATES:
        raise usage(f"invalid value '{st}' for '--state <STATE>'")
    pane = _pane_or_error(server, a.positional[0], req_id)
    if agent.strip() == "":
        raise api_error(req_id, "invalid_agent", "agent must not be empty")
    if _hook_seq_ok(pane, source, a.one("seq")):
        pane["hook"] = {"source": source, "agent": agent, "state": st}
    return ok_only(fault)


def v_pane_release_agent(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"source", "agent", "seq"}, set())
    if len(a.positional) != 1:
        raise usage("the following required arguments were not provided:\n  <PANE>")
    source, agent = a.required("source"), a.required("agent")
    pane = _pane_or_error(server, a.positional[0], req_id)
    if not _hook_seq_ok(pane, source, a.one("seq")):
        return ok_only(fault)
    hook = pane.get("hook")
    if hook and hook["source"] == source and hook["agent"] == agent:
        pane["hook"] = None
    return ok_only(fault)


def v_pane_run(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    if len(args) < 2:
        raise usage("the following required arguments were not provided:\n  <COMMAND>...")
    pane = _pane_or_error(server, args[0], req_id)
    text = " ".join(args[1:])  # joined with single spaces, no quoting: what the shell receives
    pane.setdefault("typed", []).append(text)
    mode = fault.get("mode") if fault else None
    if mode in ("run_no_start", "run_exit"):
        return ok_only(None)
    words = text.split()
    while words and "=" in words[0] and not words[0].startswith("="):
        words.pop(0)  # shell assignments prefix the environment, not the argv
    if mode == "run_as":
        words = list(fault.get("argv", ["sh", "-c", "true"]))  # type: ignore[union-attr]
    if words:
        name = os.path.basename(words[0])[:15]
        pane["fg"] = [{"pid": server.new_pid(), "name": name, "argv": words}]
    return ok_only(fault)


def v_pane_close(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    if len(args) != 1:
        raise usage("the following required arguments were not provided:\n  <PANE>")
    _pane_or_error(server, args[0], req_id)
    found = server.pane(args[0])
    assert found is not None
    ws = found[0]
    if server.v09() and sum(len(t["panes"]) for t in ws["tabs"]) == 1:
        # Closing the last pane closes the workspace: which way 0.9 answers is not known (docs/herdr-fleet.md).
        if server.state["config"].get("last_pane") == "confirm":
            raise api_error(req_id, "confirmation_required",
                            f"closing pane {args[0]} closes workspace {ws['workspace_id']}; confirm it, or close the workspace")
        if server.linked(ws):
            raise api_error(req_id, "workspace_group_close_required", GROUP_CLOSE_MESSAGE)
    server.remove_pane(args[0])
    return respond(req_id, {"type": "ok"}, fault)


def v_pane_process_info(server: Server, args: list[str], req_id: str, fault: dict[str, Any] | None) -> Exit:
    a = Args(args, {"pane"}, set())
    target = a.one("pane") or (a.positional[0] if a.positional else None)
    found = server.pane(target) if target else server.focused_pane()
    if found is None:
        raise api_error(req_id, "pane_not_found", "pane not found")
    mode = fault.get("mode") if fault else None
    info = server.process_info(found[2], mode if isinstance(mode, str) else None)
    return respond(req_id, {"process_info": info, "type": "pane_process_info"}, fault)


VERBS = {
    "workspace list": v_workspace_list,
    "workspace create": v_workspace_create,
    "workspace report-metadata": v_workspace_report_metadata,
    "workspace close": v_workspace_close,
    "tab create": v_tab_create,
    "pane list": v_pane_list,
    "pane split": v_pane_split,
    "pane rename": v_pane_rename,
    "pane report-agent-session": v_pane_report_agent_session,
    "pane report-agent": v_pane_report_agent,
    "pane release-agent": v_pane_release_agent,
    "pane run": v_pane_run,
    "pane close": v_pane_close,
    "pane process-info": v_pane_process_info,
}


def main(argv: list[str]) -> int:
    path = os.environ.get("FAKE_HERDR_STATE")
    if not path:
        sys.stderr.write("fake herdr: FAKE_HERDR_STATE is not set\n")
        return 2
    try:
        with locked_state(path) as state:
            try:
                result = handle(state, argv)
            except Exit as exc:
                result = exc
    except Exit as exc:  # pragma: no cover - raised before the state was loaded
        result = exc
    if result.hang_ms:
        time.sleep(result.hang_ms / 1000)  # the change is saved (and the lock released) first
    if result.stdout:
        sys.stdout.write(result.stdout)
    if result.stderr:
        sys.stderr.write(result.stderr)
    return result.code


# ------------------------------------------------------------------------------ test-side control


class FakeHerdr:
    """Test-side handle on the fake's state file: plant, break, restart, inspect."""

    def __init__(self, path: str | None, session: str = "fleet") -> None:
        """``path`` None keeps the server state in memory (an in-process fake, see ``call``)."""
        self.path = path
        self.session = session
        self.memory: dict[str, Any] = empty_state()

    @contextmanager
    def edit(self) -> Iterator[dict[str, Any]]:
        if self.path is None:
            yield self.memory
            return
        with locked_state(self.path) as state:
            yield state

    def hangs(self) -> bool:
        """Whether a planted fault makes a call sleep (``hang_after``): what only a spawned fake does."""
        with self.edit() as state:
            return any(fault.get("mode") == "hang_after" for fault in state.get("faults", ()))

    def call(self, argv: list[str]) -> tuple[int, str, str]:
        """One herdr invocation without a process: same parser, model and answers as the executable."""
        with self.edit() as state:
            try:
                result = handle(state, list(argv))
            except Exit as exc:
                result = exc
        return result.code, result.stdout, result.stderr

    def read(self) -> dict[str, Any]:
        with self.edit() as state:
            return json.loads(json.dumps(state))  # type: ignore[no-any-return]

    def server(self, state: dict[str, Any]) -> Server:
        return Server(state, self.session)

    def configure(self, **config: Any) -> None:
        with self.edit() as state:
            state["config"].update(config)

    def fault(self, verb: str, mode: str, times: int = 1, **extra: Any) -> None:
        with self.edit() as state:
            state["faults"].append({"verb": verb, "mode": mode, "times": times, **extra})

    def clear_faults(self) -> None:
        with self.edit() as state:
            state["faults"] = []

    def calls(self) -> list[list[str]]:
        return self.read()["calls"]  # type: ignore[no-any-return]

    def reset_calls(self) -> None:
        with self.edit() as state:
            state["calls"] = []

    def restart(self, empty: bool = False, rewrite_cwd: bool = False) -> None:
        with self.edit() as state:
            self.server(state).restart(empty, rewrite_cwd)

    def link_worktree(self, workspace_id: str, label: str = "feature-x") -> str:
        """Someone opens a linked worktree workspace of ``workspace_id`` (which becomes the group's
        primary, as ``herdr worktree create`` from it makes it). Returns the linked workspace's id."""
        with self.edit() as state:
            server = self.server(state)
            primary = server.ws(workspace_id)
            assert primary is not None, workspace_id
            tree = {"checkout_path": "/src/repo", "is_linked_worktree": False, "repo_key": f"repo-{workspace_id}",
                    "repo_name": "repo", "repo_root": "/src/repo"}
            primary["worktree"] = tree
            ws, _tab, _pane = server.create_workspace(label, "/src/repo-" + label, False)
            ws["worktree"] = {**tree, "checkout_path": "/src/repo-" + label, "is_linked_worktree": True}
            return ws["workspace_id"]  # type: ignore[no-any-return]

    def add_descendant(self, pane_id: str, name: str, argv: list[str] | None = None, zombie: bool = False) -> None:
        """A descendant of the pane's foreground process (herdr 0.9 lists them after it)."""
        with self.edit() as state:
            server = self.server(state)
            found = server.pane(pane_id)
            assert found is not None, pane_id
            found[2].setdefault("descendants", []).append(
                {"pid": server.new_pid(), "name": name, "argv": list(argv or [name]), "zombie": zombie})

    def add_machine(self, label: str, host: str = "build.example") -> str:
        """Save a machine (as ``herdr machine add``); returns the key of its server for ``on_machine``."""
        with self.edit() as state:
            answer = v_machine(state, "add", ["--label", label, "--host", host])
        return machine_key(json.loads(answer.stdout)["result"]["machine"]["machine_id"])

    def on_machine(self, label: str) -> FakeHerdr:
        """A handle on the same state that looks at the server of saved machine ``label``."""
        machine = find_machine(self.read(), label)
        assert machine is not None, label
        other = FakeHerdr(self.path, machine_key(machine["machine_id"]))
        other.memory = self.memory
        return other

    def drop_connection(self, label: str, times: int = 1, when: str = "before", verb: str | None = None) -> None:
        """The next ``times`` calls to machine ``label`` (from its first ``verb`` call, when given) meet a
        dropped SSH connection; ``when``: the first of them is applied ``after`` all, or not (``before``)."""
        assert when in ("before", "after")
        with self.edit() as state:
            machine = find_machine(state, label)
            assert machine is not None, label
            state.setdefault("drops", []).append(
                {"machine_id": machine["machine_id"], "times": times, "when": when, "verb": verb, "armed": False})

    def stop(self) -> None:
        with self.edit() as state:
            self.server(state).s["running"] = False

    def workspaces(self) -> list[dict[str, Any]]:
        return self.read()["sessions"].get(self.session, new_session())["workspaces"]  # type: ignore[no-any-return]

    def panes(self) -> list[dict[str, Any]]:
        return [p for ws in self.workspaces() for t in ws["tabs"] for p in t["panes"]]

    def pane(self, pane_id: str) -> dict[str, Any] | None:
        return next((p for p in self.panes() if p["pane_id"] == pane_id), None)

    def plant_workspace(self, label: str, tokens: dict[str, str] | None = None, process: list[str] | None = None) -> tuple[str, str]:
        """Someone else's workspace (operator's, or a lookalike label). Returns (workspace id, root pane id)."""
        with self.edit() as state:
            server = self.server(state)
            ws, _tab, pane = server.create_workspace(label, "/home/operator", False)
            ws["tokens"] = dict(tokens or {})
            if process:
                pane["fg"] = [{"pid": server.new_pid(), "name": os.path.basename(process[0])[:15], "argv": list(process)}]
            return ws["workspace_id"], pane["pane_id"]

    def plant_pane(self, anchor: str, process: list[str] | None = None, label: str | None = None) -> str:
        """A foreign pane split off ``anchor`` (e.g. an operator pane inside a marked workspace)."""
        with self.edit() as state:
            server = self.server(state)
            found = server.pane(anchor)
            assert found is not None, anchor
            ws, tab, at = found
            pane = server.make_pane(ws, tab, at["cwd"])
            pane["label"] = label
            if process:
                pane["fg"] = [{"pid": server.new_pid(), "name": os.path.basename(process[0])[:15], "argv": list(process)}]
            tab["panes"].insert(tab["panes"].index(at) + 1, pane)
            return pane["pane_id"]  # type: ignore[no-any-return]

    def kill_follower(self, pane_id: str) -> None:
        """The follower exits; its shell stays (the pane becomes a bare shell)."""
        with self.edit() as state:
            server = self.server(state)
            found = server.pane(pane_id)
            assert found is not None, pane_id
            found[2]["fg"] = []
            found[2]["descendants"] = []
            if server.v09():
                found[2]["hook"] = None  # 0.9 clears a self-reported agent once its pane is back at an idle shell

    def kill_shell(self, pane_id: str) -> None:
        """The pane's shell exits: herdr removes the pane (and an emptied workspace)."""
        with self.edit() as state:
            self.server(state).remove_pane(pane_id)

    def set_pane(self, pane_id: str, **fields: Any) -> None:
        with self.edit() as state:
            found = self.server(state).pane(pane_id)
            assert found is not None, pane_id
            found[2].update(fields)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
