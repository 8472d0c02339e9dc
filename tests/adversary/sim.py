"""A simulated tmux server and an executor that runs panefleet's pure programs against it and against
real files in a temporary directory.

``TmuxServer`` is a Python model of one tmux server: sessions, windows, panes with ids, pids, dead
flags, start commands, screens and user options. It answers the commands panefleet sends exactly in
tmux 3.3a's formats: ``-V``, ``list-panes -a -F <format>`` for every format string of
``pure/tmux/``, ``pure/omx/layout.py`` and ``pure/omx/strays.py`` (any ``#{variable}`` they use),
``show-option -qv -p``, ``set-option -p [-u]``, ``split-window``, ``new-window``, ``kill-pane``,
``send-keys`` and ``capture-pane``; with no pane left the server is gone (``no server running``).
Things that happen to a server without panefleet — a foreign pane appears, a pane is re-tagged,
respawned with a new pid, dies, the server restarts and numbering starts again — are methods the
tests call directly.

``SimExecutor`` is ``tests/harness.py``'s ``ScenarioExecutor`` over that model: real files and lock
directories through ``shell/run/executor.py``, tmux answered by the model, git answered as outside a
repository, a deterministic clock and id source, no sleeping. Before every tmux mutation it checks the
target against the server's truth at that instant (``MutationAudit``); it can fail or time out chosen
queries, refuse chosen mutations, run adversary events right before a chosen query, and stop driving a
program after k steps (a process killed mid-run: its lock directories are left to a dead pid).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from attrs import define, field

from pure import model as m
from pure import tmux as t
from pure.omx import startup_script
from pure.program import Driver, ProgramFactory
from shell.run.executor import Executor

OWNER = t.OWNER_OPTION
NO_SERVER = "no server running on /tmp/tmux-0/panefleet-sim\n"
DEAD_PID = 4_194_305  # above the kernel's largest pid_max (2^22): never a live process
QUERY_VERBS = ("list-panes", "show-option", "capture-pane", "display-message", "-V")
VAR = re.compile(r"#\{([A-Za-z_-]+)\}")


def scratch_dir() -> Iterator[Path]:
    """A temporary directory, in memory when the machine has /dev/shm (fsync is then cheap)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="pf-adv-", dir=base) as name:
        yield Path(name).resolve()


scratch = contextmanager(scratch_dir)


# ------------------------------------------------------------------------------------- tmux model


@define
class Pane:
    number: int
    pid: int
    session: int
    window: int
    start_command: str = ""
    dead: bool = False
    options: dict[str, str] = field(factory=dict)
    screen: str = ""
    keys: list[str] = field(factory=list)

    @property
    def id(self) -> str:
        return f"%{self.number}"


class TmuxServer:
    """One tmux server. Pids come from one counter for the whole life of the model (a restarted
    server gets new ones); pane, window and session numbers start again at 0 after a restart."""

    def __init__(self, first_pid: int = 40_000) -> None:
        self.next_pid = first_pid
        self.epoch = 0
        self.identity = self._started()  # what ``#{pid}`` and ``#{start_time}`` answer: another after a restart
        self.panes: dict[str, Pane] = {}
        self._numbers = [0, 0, 0]  # pane, window, session
        self.new_pane_screen = ""  # what a pane created by split-window/new-window shows

    # -- world changes (not through tmux commands) ------------------------------------------
    def _started(self) -> dict[str, str]:
        return {"pid": str(self._pid()), "start_time": str(1_790_000_000 + 60 * self.epoch)}

    def _pid(self) -> int:
        self.next_pid += 1
        return self.next_pid

    def _next(self, which: int) -> int:
        value = self._numbers[which]
        self._numbers[which] += 1
        return value

    def new_pane(self, *, command: str = "", session: int | None = None, window: int | None = None,
                 tag: str | None = None) -> Pane:
        """A pane that appears without panefleet (a user's shell, another tool's agent)."""
        if session is None:
            session = self._next(2)
        if window is None:
            window = self._next(1)
        pane = Pane(number=self._next(0), pid=self._pid(), session=session, window=window, start_command=command)
        if tag is not None:
            pane.options[OWNER] = tag
        self.panes[pane.id] = pane
        return pane

    def retag(self, pane_id: str, tag: str | None) -> None:
        pane = self.panes[pane_id]
        if tag is None:
            pane.options.pop(OWNER, None)
        else:
            pane.options[OWNER] = tag

    def respawn(self, pane_id: str) -> None:
        """``respawn-pane -k``: the same pane id, its options and start command, a new process."""
        pane = self.panes[pane_id]
        pane.pid = self._pid()
        pane.dead = False
        pane.screen = ""
        _started(pane)

    def die(self, pane_id: str) -> None:
        """The pane's process exits: with ``remain-on-exit`` the pane stays, dead; else it closes."""
        pane = self.panes[pane_id]
        if pane.options.get("remain-on-exit") == "on":
            pane.dead = True
        else:
            del self.panes[pane_id]

    def restart(self) -> None:
        """The server exits (every pane with it); the next one numbers from 0 again."""
        self.panes.clear()
        self._numbers = [0, 0, 0]
        self.epoch += 1
        self.identity = self._started()

    # -- tmux commands ------------------------------------------------------------------------
    def __call__(self, args: tuple[str, ...]) -> m.Proc:
        verb = args[0] if args else ""
        if verb == "-V":
            return m.Proc(exit_code=0, stdout="tmux 3.3a\n")
        if not self.panes:
            return m.Proc(exit_code=1, stderr=NO_SERVER)
        if verb == "list-panes":
            fmt = args[args.index("-F") + 1]
            return m.Proc(exit_code=0, stdout="".join(_render(fmt, p, self.identity) + "\n" for p in self.panes.values()))
        if verb in ("new-session",):
            return m.Proc(exit_code=1, stderr="sessions are made by the test world\n")
        target = _target(args)
        if verb == "new-window":
            session = int(target.lstrip("$").rstrip(":")) if target.lstrip("$").rstrip(":").isdigit() else -1
            if not any(p.session == session for p in self.panes.values()):
                return m.Proc(exit_code=1, stderr=f"can't find session: {target}\n")
            pane = self._create(args, session, self._next(1))
            return m.Proc(exit_code=0, stdout=_render(args[args.index("-F") + 1], pane, self.identity) + "\n")
        pane_obj = self.panes.get(target)
        if pane_obj is None:
            return m.Proc(exit_code=1, stderr=f"can't find pane: {target}\n")
        if verb == "show-option":
            value = pane_obj.options.get(args[-1])
            return m.Proc(exit_code=0, stdout="" if value is None else value + "\n")
        if verb == "set-option":
            if "-u" in args:
                pane_obj.options.pop(args[-1], None)
            else:
                pane_obj.options[args[-2]] = args[-1]
            return m.Proc(exit_code=0)
        if verb == "split-window":
            pane = self._create(args, pane_obj.session, pane_obj.window)
            return m.Proc(exit_code=0, stdout=_render(args[args.index("-F") + 1], pane, self.identity) + "\n")
        if verb == "kill-pane":
            del self.panes[target]
            return m.Proc(exit_code=0)
        if verb == "send-keys":
            pane_obj.keys.append(" ".join(args[args.index(target) + 1:]))
            return m.Proc(exit_code=0)
        if verb == "capture-pane":
            return m.Proc(exit_code=0, stdout=pane_obj.screen + "\n")
        return m.Proc(exit_code=1, stderr=f"unknown command: {verb}\n")

    def _create(self, args: tuple[str, ...], session: int, window: int) -> Pane:
        pane = Pane(number=self._next(0), pid=self._pid(), session=session, window=window, start_command=args[-1],
                    screen=self.new_pane_screen)
        self.panes[pane.id] = pane
        _started(pane)
        return pane


def _started(pane: Pane) -> None:
    """What a pane's new process does at once: the gated start command (pure/omx/startup_script.py,
    ``gated_startup_command``) writes its pid into the worker's folder, unless a file is there."""
    try:
        words = shlex.split(pane.start_command)
    except ValueError:
        return
    if len(words) == 6 and words[:3] == ["exec", "/bin/sh", "-c"] and "TMUX_PANE" in words[3]:
        own = Path(startup_script.self_pin_path(words[5], pane.id))
        if own.parent.is_dir() and not own.exists():
            own.write_text(f"{pane.pid}\n")


def _target(args: tuple[str, ...]) -> str:
    return args[args.index("-t") + 1] if "-t" in args else ""


def _render(fmt: str, pane: Pane, server: dict[str, str]) -> str:
    values = {**server,
        "pane_id": pane.id, "pane_dead": "1" if pane.dead else "0", "pane_pid": str(pane.pid),
        "pane_start_command": pane.start_command, "session_id": f"${pane.session}",
        "window_id": f"@{pane.window}", "window_zoomed_flag": "0", "pane-border-status": "off",
        "pane_left": "0", "pane_top": "0", "pane_width": "200", "pane_height": "50", "window_width": "200",
        "window_height": "50",
    }
    return VAR.sub(lambda found: values.get(found.group(1), ""), fmt)


def is_mutation(args: tuple[str, ...]) -> bool:
    return bool(args) and args[0] not in QUERY_VERBS


# ---------------------------------------------------------------------------------- team records


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _pins(entries: object, into: dict[str, set[int]]) -> None:
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("pane_id"), str) and t.is_positive_pid(entry.get("pid")):
            into.setdefault(entry["pane_id"], set()).add(entry["pid"])


def pinned(team_dir: Path) -> dict[str, set[int]]:
    """Every pane id → pids panefleet's records pin for a team: config and manifest (leader, HUD,
    workers), each worker's identity.json, the cleanup debt record and a membership journal."""
    out: dict[str, set[int]] = {}
    configs = [_load(team_dir / "config.json"), _load(team_dir / "manifest.v2.json")]
    journal = _load(team_dir / ".membership-task-transaction.json")
    for entry in journal.get("files", []) if isinstance(journal, dict) else []:
        for side in ("oldBytes", "newBytes"):
            text = entry.get(side) if isinstance(entry, dict) else None
            if isinstance(text, str):
                try:
                    configs.append(json.loads(text))
                except (ValueError, RecursionError):
                    pass
    for config in configs:
        if not isinstance(config, dict):
            continue
        for role in ("leader", "hud"):
            pane, pid = config.get(f"{role}_pane_id"), config.get(f"{role}_pane_pid")
            if isinstance(pane, str) and isinstance(pid, int) and t.is_positive_pid(pid):
                out.setdefault(pane, set()).add(pid)
        _pins(config.get("workers"), out)
    for identity in sorted((team_dir / "workers").glob("*/identity.json")):
        _pins([_load(identity)], out)
    debt = _load(team_dir / ".scale-down-cleanup-debt.json")
    if isinstance(debt, dict):
        _pins(debt.get("workers"), out)
        _pins(debt.get("unresolved_panes"), out)
    return out


# ------------------------------------------------------------------------------------- executor


@define
class Violation:
    command: str
    pane: str
    why: str
    sweep: bool = False  # the run had listed panes by start command (a stray sweep, pure/omx/strays.py)
    start_command: str = ""


@define
class World:
    """What outlives one run: the server, which processes panefleet started for which team, what the
    audit found, and the fault counters."""

    server: TmuxServer
    created: dict[int, str] = field(factory=dict)  # pid of a pane a panefleet split made → its team
    violations: list[Violation] = field(factory=list)
    counts: dict[str, int] = field(factory=dict)

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n


QueryHook = Callable[[tuple[str, ...], int], m.Proc | None]  # (the query's args, its number in the run)


class SimExecutor:
    """Run one operation of ``team`` against the world's server and real files under ``root``."""

    def __init__(self, world: World, root: Path, team: str, *, state_root: Path, adopting: bool = False,
                 before_query: QueryHook | None = None, fail_mutations: frozenset[int] = frozenset(),
                 env: dict[str, str] | None = None, clock_start: int = 0) -> None:
        self.world = world
        self.server = world.server
        self.root = root
        self.team = team
        self.team_dir = state_root / "team" / team
        self.adopting = adopting  # team init: the leader pane is tagged by adoption, not creation
        self.before_query = before_query
        self.fail_mutations = fail_mutations
        self.real = Executor(env=dict(env or {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}))
        self.tmux_log: list[tuple[str, ...]] = []
        self.steps = 0
        self.queries = 0
        self.mutations = 0
        self.ticks = clock_start
        self.ids = 0
        self.seen_pid: dict[str, int] = {}  # the pid of each pane in this run's latest pane table
        self.writes: list[tuple[str, str]] = []  # (path, content) of every file this run wrote
        self.made: set[int] = set()  # pids of the panes this run's splits created

    # -- steps ----------------------------------------------------------------------------------
    def execute(self, step: m.Step) -> m.Observation:
        self.steps += 1
        if isinstance(step, m.Run) and step.tool == "tmux":
            return self._tmux(step.args)
        if isinstance(step, m.Run):
            return m.Proc(exit_code=128, stderr="fatal: not a git repository (or any of the parent directories)\n")
        if isinstance(step, m.Sleep):
            return m.Ack(ok=True)
        if isinstance(step, m.Clock):
            self.ticks += 1
            seconds, ms = divmod(self.ticks, 1000)
            minutes, seconds = divmod(seconds, 60)
            return m.Value(value=f"2026-01-01T{minutes // 60 % 24:02d}:{minutes % 60:02d}:{seconds:02d}.{ms:03d}Z")
        if isinstance(step, m.WriteFile):
            self.writes.append((step.path, step.content))
        if isinstance(step, m.FreshId):
            self.ids += 1
            return m.Value(value=f"{self.ticks:016x}{self.ids:016x}")
        observed = self.real.execute(step)
        if isinstance(step, m.AcquireLock) and isinstance(observed, m.Ack) and observed.error.startswith("timeout:"):
            return m.Ack(ok=False, error="timeout")
        return observed

    def _tmux(self, args: tuple[str, ...]) -> m.Proc:
        self.tmux_log.append(args)
        if not is_mutation(args):
            self.queries += 1
            if self.before_query is not None:
                injected = self.before_query(args, self.queries)
                if injected is not None:
                    return injected
            answer = self.server(args)
            if args[0] == "list-panes" and answer.exit_code == 0 and args[-1] == t.PANE_FORMAT:
                self.seen_pid = {p.id: p.pid for p in self.server.panes.values()}
            return answer
        self.mutations += 1
        self._audit(args)
        if self.mutations in self.fail_mutations:
            self.world.count("mutation refused")
            return m.Proc(exit_code=1, stderr="no space for new pane\n" if args[0] == "split-window"
                          else "server exited unexpectedly\n")
        answer = self.server(args)
        if args[0] in ("split-window", "new-window") and answer.exit_code == 0:
            pane = self.server.panes.get(t.answered_pane(answer)[0])
            if pane is not None:
                self.made.add(pane.pid)
                self.world.created[pane.pid] = self.team
        return answer

    # -- the audit --------------------------------------------------------------------------------
    def _audit(self, args: tuple[str, ...]) -> None:
        """A mutation may only touch a pane that is ours at this instant: its tag is the team's and its
        current process is one panefleet started for the team or one its records pin for that pane
        (a kill also when the pane has no tag yet but runs a process panefleet started for the team).
        The owner tag itself may only be written onto a pane still running the process this run
        created (or, for team init, the process its last pane table showed), and never over
        another tag."""
        target = _target(args)
        pane = self.server.panes.get(target)
        if pane is None:
            return  # tmux refuses a target that does not exist: nothing is touched
        owner = f"team:{self.team}"
        tag = pane.options.get(OWNER)
        command = " ".join(args)[:160]
        if args[0] == "set-option" and OWNER in args:
            created_here = pane.pid in self.made
            adopted = self.adopting and self.seen_pid.get(target) == pane.pid
            if tag not in (None, owner):
                self._violate(command, target, f"tag written over another owner's tag {tag!r}")
            elif not (created_here or adopted):
                self._violate(command, target, f"tag written onto pid {pane.pid}, a process this run did not "
                                               "create or prove")
            return
        pins = pinned(self.team_dir).get(target, set())
        started_here = self.world.created.get(pane.pid) == self.team
        if tag is None and args[0] == "kill-pane" and started_here:
            return  # a pane the crashed run split and did not tag yet, still running what it started
        if tag != owner:
            self._violate(command, target, f"pane tagged {tag!r}, not {owner!r}")
        elif pane.pid not in pins and not started_here:
            self._violate(command, target, f"pane runs pid {pane.pid}, which panefleet neither started for "
                                           f"{self.team} nor pinned (records pin {sorted(pins)})")

    def _violate(self, command: str, pane: str, why: str) -> None:
        sweep = any(args[0] == "list-panes" and "pane_start_command" in args[-1] for args in self.tmux_log)
        found = self.server.panes.get(pane)
        self.world.violations.append(Violation(command=command, pane=pane, why=why, sweep=sweep,
                                               start_command=found.start_command if found else ""))

    # -- a process killed mid-run ------------------------------------------------------------------
    def abandon(self) -> None:
        """The process is gone: its lock directories stay behind, held by a pid that no longer
        exists (the next holder takes them over at once, ``shell/run/fs.py``)."""
        locks = getattr(self.real, "_locks")  # noqa: B009 - the executor's own record of what it holds
        for path, token in list(locks.items()):
            lock = Path(path)
            dead = f"{DEAD_PID}." + token.split(".", 1)[1] if "." in token else f"{DEAD_PID}.0.dead"
            for name in ("owner", "lease"):
                if (lock / name).exists():
                    (lock / name).write_text(dead)
        locks.clear()
        getattr(self.real, "_stale").clear()  # noqa: B009

    def release_all(self) -> None:
        self.real.release_all()


def drive(factory: ProgramFactory, executor: SimExecutor, stop_after: int | None = None,
          stop_at: Callable[[m.Step], bool] | None = None, interrupt_after: int | None = None) -> m.Done | None:
    """Run a program; stop driving it (the process is killed: None) after ``stop_after`` steps, or
    right after the first step for which ``stop_at`` holds; interrupt it (Ctrl-C: ``Driver.interrupt``,
    as ``shell/run/loop.py`` does) after ``interrupt_after`` steps."""
    driver = Driver(factory)
    steps = 0
    interrupted = False
    while True:
        decision = driver.decision()
        if isinstance(decision, m.Done):
            executor.release_all()
            return decision
        if interrupt_after is not None and steps >= interrupt_after and not interrupted:
            interrupted = True
            executor.world.count("interrupted")
            driver.interrupt()
            continue
        for step in decision.steps:
            if stop_after is not None and steps >= stop_after:
                executor.abandon()
                return None
            observation = executor.execute(step)
            steps += 1
            if stop_at is not None and stop_at(step):
                executor.abandon()
                return None
            driver.feed(step, observation)
