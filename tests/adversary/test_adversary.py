"""An adversary that never wins: panefleet's operations against a simulated tmux server that someone
else is using too, with faults, hangs and crashes, checked after every step.

A hypothesis ``RuleBasedStateMachine`` interleaves panefleet's operations — ``team init`` (adopting a
leader pane), ``team scale-up`` (``OMX_TEAM_SKIP_READY_WAIT=1``), ``team scale-down``, ``team debt
reconcile``, ``team status``, ``team respawn`` — for up to three teams sharing one state root, run as pure programs
through ``tests/adversary/sim.py`` over the simulated server and real files, with an adversary:
foreign panes appear, panes are re-tagged (to another team, to nothing, or a foreign pane to this
team), respawned with the same id and a new pid, die (closed, or kept dead by ``remain-on-exit``), the
server restarts and numbering starts again. Inside an operation, chosen tmux queries fail or time out
(observed as failed), chosen mutations are refused, adversary events happen right before a chosen
query, and the process may be killed after k steps (its lock directories are left to a dead pid;
later operations must cope with whatever it left), or interrupted after k steps (Ctrl-C: it undoes
what it created, ``pure/program.py`` ``Driver.interrupt``).

Its power is aimed where the proof's rules are (``Aim``): in the windows of the ``L, S, L`` that guards
each kill, split, keystroke and tag — right before ``S`` and between ``S`` and the final ``L`` — the
pane being proven is respawned, dies, is re-tagged, or the server restarts and hands its id to an
impostor carrying our tag. Most operations are ones that can go ahead (a team whose leader runs, a
scale-down of a team with a worker to spare, a respawn of a worker that needs it), so that their
proofs meet the adversary. A run draws from a printed seed (``PANEFLEET_ADVERSARY_SEED`` replays it).
Planting any of these makes the unit run fail within seconds: the final ``L`` skipped, a changed pid
accepted, the owner tag not compared, a kill before the proof.

Invariants after every step:

* **no mutation on a pane that is not ours at that instant** (``sim.SimExecutor._audit``, against the
  server's truth): every kill, split, keystroke and option write targets a pane whose tag is the team's
  and whose current process is one panefleet started for the team or its records pin for that pane;
  the owner tag is written only onto a pane still running the process this run created (team init:
  the one its pane table showed), never over another tag;
* **membership entirely old or entirely new after a read**: the public read (recovery included)
  succeeds, config and manifest name the same workers with the same panes and pids, a scale-down's
  targets are all members or none, and in the first case their tasks are as they were, in the
  second no open task still names them; a scale-up only adds new workers; nothing else changes
  membership;
* **every live pane panefleet created and did not remove is a member, named in debt or in an
  intent** (``pure/omx/strays.py``: a run killed anywhere between its split and its end leaves the
  worker's intent, which names the pane — or, killed before the split answered, the worker whose
  startup script the pane runs).

Adversary events inside a run never fall between a proof and the mutation it guards: pid changes
(respawn, death, restart, a new pane) happen right before a pane-table or owner-tag query, re-tags
right before an owner-tag query — the window between the last ``list-panes`` and ``kill-pane`` is a
documented limitation shared with oh-my-codex (docs/design-notes.md). Nor between ``split-window``
and the pin of the new pane (see ``test_respawn_between_split_and_pin``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attrs import define, field
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from pure import model as m
from pure.omx import locks, startup_script, txn
from pure.omx.scale_down import DebtRequest, ScaleDownRequest
from pure.omx.scale_up import ScaleUpRequest, TaskSpec
from pure.omx.state import TeamPaths
from pure.program import Program
from pure.team import TeamInitRequest, TeamStatusRequest
from tests.adversary import team as tm
from tests.adversary.sim import OWNER, SimExecutor, TmuxServer, World, drive

TEAMS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
MAX_TEAMS = 3  # teams whose leader still runs, at once: enough for one team's tag on another's pane
ENV = dict(tm.ENV)
TOTALS: Counter[str] = Counter()


# --------------------------------------------------------------------------------------- plans


@define(frozen=True)
class Aim:
    """An adversary event aimed at a proof's window: right before the run's ``nth`` owner read (``S``,
    between the first ``L`` and ``S``) or right after it (between ``S`` and the final ``L``), on the
    pane that ``S`` asks about. Every ``S`` is part of a proof that guards a kill, a split, a
    keystroke or a tag, so these are the instants the proof exists for."""

    event: str
    window: str  # "before_owner_read" | "before_final_read"
    nth: int
    choice: int


@define
class Plan:
    """What goes wrong inside one run."""

    crash_after: int | None = None
    failed_queries: dict[int, str] = field(factory=dict)  # query number → "fail" | "timeout"
    refused_mutations: frozenset[int] = frozenset()
    events: dict[int, tuple[str, int]] = field(factory=dict)  # query number → (event, choice)
    aims: tuple[Aim, ...] = ()
    interrupt_after: int | None = None  # Ctrl-C after this many steps (the run undoes what it created)
    # targeted tests only (never drawn): kill the process right after it splits or tags a new pane, or
    # right after it writes a new worker's identity; respawn the new pane between split-window and the pin
    stop_at_split: bool = False
    stop_at_tag: bool = False
    stop_at_identity: bool = False
    respawn_after_split: bool = False


EVENTS = ("respawn", "die", "die_kept", "retag_foreign", "retag_none", "retag_ours", "foreign_pane", "restart")
# What can happen to the pane a proof is about, in its window: a new process (respawn; the server
# restarted and the pane id reused by another pane carrying our tag), death, another tag.
# A re-tag is aimed only before ``S``: the tag is proven there, and a re-tag after it is the window
# between a proof and its mutation (docs/design-notes.md).
PID_EVENTS = ("respawn", "reuse", "die", "die_kept", "restart")
AIMED_EVENTS = (*PID_EVENTS, "retag_foreign", "retag_none", "retag_ours")
MID_RUN_RESTART_ODDS = 4  # one restart scheduled inside a run in this many actually happens
QUIET = Plan()
# A new process in the pane (respawn, reuse) is what only the pid checks catch: drawn as often as
# all the rest; early owner reads (a scale-down has one or two) more often than late ones.
NTH = st.integers(1, 2) | st.integers(1, 6)
AIMS = st.builds(Aim, event=st.sampled_from(PID_EVENTS[:2]) | st.sampled_from(AIMED_EVENTS),
                 window=st.just("before_owner_read"), nth=NTH, choice=st.integers(0, 10**6)) | \
    st.builds(Aim, event=st.sampled_from(PID_EVENTS[:2]) | st.sampled_from(PID_EVENTS),
              window=st.just("before_final_read"), nth=NTH, choice=st.integers(0, 10**6))
FAULTY = st.builds(
    Plan,
    crash_after=st.none() | st.integers(0, 160),
    failed_queries=st.dictionaries(st.integers(1, 60), st.sampled_from(["fail", "timeout"]), max_size=2),
    refused_mutations=st.frozensets(st.integers(1, 12), max_size=1),
    events=st.dictionaries(st.integers(1, 60), st.tuples(st.sampled_from(EVENTS), st.integers(0, 10**6)),
                           max_size=2),
    aims=st.lists(AIMS, max_size=1).map(tuple),
    interrupt_after=st.none() | st.integers(0, 160),
)
AIMED = st.builds(Plan, aims=st.lists(AIMS, min_size=1, max_size=2).map(tuple))  # nothing else goes wrong
PLANS = st.one_of(st.just(QUIET), FAULTY, AIMED)


@define
class Snapshot:
    """A team as the last public read showed it."""

    members: dict[str, tuple[Any, Any]]  # name → (pane_id, pid)
    leader: tuple[Any, Any]  # (pane_id, pid)
    next_index: int
    open_tasks: dict[str, set[str]]  # task id → worker names it references (non-terminal tasks)
    task_bytes: dict[str, bytes]
    kept: frozenset[str] = frozenset()  # members a rollback kept (pure/omx/kept_workers.py)


# A real Codex 0.169.0 ready screen (tests/goldens/screens/codex/ready.json): what every pane the
# model creates shows, so that ``team respawn`` (always watched) finds its agent ready.
READY_SCREEN = json.loads((Path(__file__).resolve().parents[1] / "goldens" / "screens" / "codex" / "ready.json")
                          .read_text(encoding="utf-8"))["capture"]

class AdversaryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        base = "/dev/shm" if Path("/dev/shm").is_dir() else None
        self.root = Path(tempfile.mkdtemp(prefix="pf-adv-sm-", dir=base)).resolve()
        self.cwd = self.root / "work"
        self.cwd.mkdir()
        self.state_root = self.cwd / ".omx" / "state"
        self.world = World(server=TmuxServer())
        self.world.server.new_pane_screen = READY_SCREEN  # so that a watched respawn can start its agent
        self.teams: dict[str, Snapshot | None] = {}
        self.clock = 0
        TOTALS["machines"] += 1

    def teardown(self) -> None:
        TOTALS.update(self.world.counts)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- running ----------------------------------------------------------------------------------
    def _hook(self, plan: Plan, executor: SimExecutor) -> Callable[[tuple[str, ...], int], m.Proc | None]:
        owner_reads = 0
        after_owner_read: list[tuple[Aim, str]] = []  # aimed at the final L: (aim, the pane S asked about)

        def before_query(args: tuple[str, ...], number: int) -> m.Proc | None:
            nonlocal owner_reads
            just_split = len(executor.tmux_log) >= 2 and executor.tmux_log[-2][0] in ("split-window", "new-window")
            if just_split and plan.respawn_after_split:
                self.world.server.respawn(self._panes()[-1])  # the pane the split just made
            if args[0] == "list-panes" and after_owner_read and not just_split:
                for aim, pane in after_owner_read:
                    self._aimed(aim, pane)
            if args[0] == "list-panes":
                after_owner_read.clear()
            if args[0] == "show-option" and OWNER in args:
                owner_reads += 1
                for aim in plan.aims:
                    if aim.nth == owner_reads and aim.window == "before_owner_read":
                        self._aimed(aim, _focus(args, []) or "")
                    elif aim.nth == owner_reads:
                        after_owner_read.append((aim, _focus(args, []) or ""))
            event = plan.events.get(number)
            if event is not None and not just_split:
                name, choice = event
                if name == "restart" and choice % MID_RUN_RESTART_ODDS:
                    name = "respawn"
                # half the time the event hits the pane this run is working on: the one this owner-tag
                # query is about, or the target of its latest command
                focus = _focus(args, executor.tmux_log) if choice % 2 else None
                if not name.startswith("retag") or args[0] == "show-option":
                    if self._event(name, choice, focus):
                        self.world.count(f"mid-run {name}")
            failure = plan.failed_queries.get(number)
            if failure == "fail":
                self.world.count("query failed")
                return m.Proc(exit_code=1, stderr="server exited unexpectedly\n")
            if failure == "timeout":
                self.world.count("query hung")
                return m.Proc(exit_code=None, stderr="tmux timed out after 10 s")
            return None

        return before_query

    def run(self, team: str, program: Program | Any, plan: Plan, *,
            adopting: bool = False) -> tuple[m.Done | None, SimExecutor]:
        executor = SimExecutor(self.world, self.root, team, state_root=self.state_root, adopting=adopting,
                               fail_mutations=plan.refused_mutations, env=ENV, clock_start=self.clock)
        executor.before_query = self._hook(plan, executor)
        done = drive(lambda: program, executor, stop_after=plan.crash_after,
                     stop_at=_is_split if plan.stop_at_split else _is_tag if plan.stop_at_tag
                     else _is_identity if plan.stop_at_identity else None,
                     interrupt_after=plan.interrupt_after)
        self.clock = executor.ticks + 1000
        TOTALS["program steps"] += executor.steps
        if done is None:
            self.world.count("killed mid-run")
        return done, executor

    def _op(self, team: str, kind: str, program: Any, plan: Plan, *, adopting: bool = False) -> None:
        before = self.teams.get(team)
        done, executor = self.run(team, program, plan, adopting=adopting)
        message = done.outcome.message if done is not None else "killed"
        assert not message.startswith(("internal_error", "journal_", "program_returned")), message
        TOTALS[f"{kind} {done.outcome.status if done is not None else 'killed'}"] += 1
        for args in executor.tmux_log:
            if args[0] in ("split-window", "kill-pane", "send-keys", "set-option"):
                TOTALS[f"tmux {args[0]}"] += 1
        self._check_membership(team, kind, before, executor)
        TOTALS["steps"] += 1
        TOTALS[f"op {kind}"] += 1

    # -- the adversary between runs ------------------------------------------------------------------
    def _panes(self) -> list[str]:
        return sorted(self.world.server.panes, key=lambda p: int(p[1:]))

    def _event(self, name: str, choice: int, focus: str | None = None) -> bool:
        server = self.world.server
        panes = self._panes()
        if name == "foreign_pane":
            tags = [None, "team:other", *(f"team:{t}" for t in self.teams)]
            server.new_pane(command="vim", tag=tags[choice % len(tags)])
            return True
        if name == "restart":
            server.restart()
            return True
        if not panes:
            return False
        pane = focus if focus in server.panes else panes[choice % len(panes)]
        if name == "respawn":
            server.respawn(pane)
        elif name == "die":
            server.die(pane)
        elif name == "die_kept":
            server.panes[pane].options["remain-on-exit"] = "on"
            server.die(pane)
        elif name == "retag_none":
            server.retag(pane, None)
        elif name == "retag_foreign":
            server.retag(pane, "team:other")
        elif name == "retag_ours":
            teams = list(self.teams) or ["alpha"]
            server.retag(pane, f"team:{teams[choice // 7 % len(teams)]}")
        return True

    def _aimed(self, aim: Aim, pane: str) -> None:
        server = self.world.server
        if pane not in server.panes or (pane in self._leaders() and aim.choice % 4):
            return  # a leader hit once can never be split from again: spare it three times in four
        if aim.event == "reuse":  # the server restarts; the pane's id comes back on another pane, our tag on it
            tag = server.panes[pane].options.get(OWNER)
            server.restart()
            while server.new_pane(command="vim").id != pane:
                pass
            server.retag(pane, tag)
        elif aim.event == "restart":
            server.restart()
        else:
            self._event(aim.event, aim.choice, pane)
        self.world.count(f"aimed {aim.event} {aim.window}")

    def _led(self) -> list[str]:
        """The teams whose leader still runs (a team whose leader was hit can never scale up again)."""
        return [t for t, s in sorted(self.teams.items()) if s is not None and self._runs(s.leader)]

    def _leaders(self) -> set[str]:
        return {s.leader[0] for s in self.teams.values() if s is not None}

    def _staffed(self, members: int = 1) -> bool:
        return any(s is not None and len(s.members) >= members for s in self.teams.values())

    def _member_panes(self) -> list[str]:
        """The panes the teams' last reads name as members, that the server still has."""
        return sorted({pane for snapshot in self.teams.values() if snapshot is not None
                       for pane, _pid in snapshot.members.values() if pane in self.world.server.panes})

    @rule(name=st.sampled_from(EVENTS[:-1]), choice=st.integers(0, 10**6), at_a_member=st.booleans() | st.just(True))
    def adversary(self, name: str, choice: int, at_a_member: bool) -> None:
        TOTALS["steps"] += 1
        members = self._member_panes() if at_a_member else []
        if self._event(name, choice, members[choice % len(members)] if members else None):
            self.world.count(name)

    @rule(roll=st.integers(0, 10**6))
    def restart_server(self, roll: int) -> None:
        TOTALS["steps"] += 1
        if roll % 41 == 5:  # rare: most runs keep one server
            self.world.server.restart()
            self.world.count("restart")

    # -- panefleet's operations ------------------------------------------------------------------------
    @precondition(lambda self: len(self.teams) < len(TEAMS) and len(self._led()) < MAX_TEAMS)
    @rule(plan=PLANS)
    def team_init(self, plan: Plan) -> None:
        team = next(t for t in TEAMS if t not in self.teams)
        leader = self.world.server.new_pane(command="bash")
        request = TeamInitRequest(team=team, cwd=str(self.cwd), env=ENV, leader_pane=leader.id)
        from pure.team import team_init

        self._op(team, "init", team_init(request), plan, adopting=True)
        if (self.state_root / "team" / team / "config.json").exists():
            self.teams[team] = None
            self._read(team)

    def _runs(self, pane: tuple[Any, Any]) -> bool:
        """The server has ``pane`` live, still running the pid a read recorded."""
        found = self.world.server.panes.get(pane[0])
        return found is not None and not found.dead and found.pid == pane[1]

    def _team(self, choice: int, members: int = 0) -> str | None:
        """A team, where there is one: whose leader still runs, with at least ``members`` workers
        (the adversary's faults are meant for runs that get as far as their proofs)."""
        def staffed(team: str, at_least: int) -> bool:
            return len(getattr(self.teams[team], "members", ())) >= at_least

        names = ([t for t in self._led() if staffed(t, members)] or [t for t in self.teams if staffed(t, members)]
                 or [t for t in self.teams if staffed(t, min(members, 1))] or sorted(self.teams))
        return names[choice % len(names)] if names else None

    @precondition(lambda self: bool(self.teams))
    @rule(choice=st.integers(0, 5), count=st.integers(1, 3), with_task=st.booleans(), plan=PLANS)
    def scale_up(self, choice: int, count: int, with_task: bool, plan: Plan) -> None:
        from pure.omx.scale_up import scale_up

        team = self._team(choice)
        assert team is not None
        snapshot = self.teams.get(team)
        owner = f"worker-{snapshot.next_index}" if snapshot is not None else None
        tasks = (TaskSpec(subject="s", description="d", owner=owner),) if with_task else ()
        request = ScaleUpRequest(team=team, count=count, cwd=str(self.cwd), env=ENV, tasks=tasks,
                                 node_path="/usr/bin/node")
        self._op(team, "scale-up", scale_up(request), plan)

    @precondition(lambda self: self._staffed(members=2))
    @rule(choice=st.integers(0, 5), by_count=st.booleans(), pick=st.integers(0, 10**6),
          force=st.booleans() | st.just(True), plan=PLANS)
    def scale_down(self, choice: int, by_count: bool, pick: int, force: bool, plan: Plan) -> None:
        """Mostly a scale-down that can go ahead (a team with a worker to spare, ``--force``), so that
        its proofs and kills meet the adversary."""
        from pure.omx.scale_down import scale_down_program

        team = self._team(choice, members=2)
        assert team is not None
        snapshot = self.teams.get(team)
        names = sorted(snapshot.members) if snapshot is not None else []
        workers = () if by_count or not names else (names[pick % len(names)],)
        request = ScaleDownRequest(team=team, cwd=str(self.cwd), env=ENV, worker_names=workers,
                                   count=1 if by_count or not names else None, force=force, drain_timeout_ms=0)
        self._op(team, "scale-down", scale_down_program(request), plan)

    @precondition(lambda self: bool(self.teams))
    @rule(choice=st.integers(0, 5), plan=PLANS)
    def debt_reconcile(self, choice: int, plan: Plan) -> None:
        from pure.omx.scale_down import debt_reconcile_program

        team = self._team(choice)
        assert team is not None
        self._op(team, "reconcile", debt_reconcile_program(DebtRequest(team=team, cwd=str(self.cwd), env=ENV)), plan)

    @precondition(lambda self: self._staffed())
    @rule(choice=st.integers(0, 5), pick=st.integers(0, 10**6), plan=PLANS)
    def respawn(self, choice: int, pick: int, plan: Plan) -> None:
        from pure.omx.respawn import RespawnRequest, respawn

        team = self._team(choice, members=1)
        assert team is not None
        snapshot = self.teams.get(team)
        names = sorted(snapshot.members) if snapshot is not None else []
        server = self.world.server.panes
        gone = [n for n in names if snapshot is not None and (
            snapshot.members[n][0] not in server or server[snapshot.members[n][0]].dead
            or server[snapshot.members[n][0]].pid != snapshot.members[n][1])]
        names = gone if gone and pick % 4 else names  # mostly a worker that needs it
        worker = names[pick % len(names)] if names else "worker-1"
        self._op(team, "respawn", respawn(RespawnRequest(team=team, worker=worker, cwd=str(self.cwd), env=ENV)),
                 plan)

    @precondition(lambda self: bool(self.teams))
    @rule(choice=st.integers(0, 5), plan=PLANS)
    def status(self, choice: int, plan: Plan) -> None:
        from pure.team import team_status

        team = self._team(choice)
        assert team is not None
        self._op(team, "status", team_status(TeamStatusRequest(team=team, cwd=str(self.cwd), env=ENV)), plan)
        self._status_and_debt_show_agree(team)

    def _status_and_debt_show_agree(self, team: str) -> None:
        """``team status`` and ``team debt show``, run now without faults, name the same debt, stray panes,
        leftover workers and kept workers (both read ``strays.survey``, pure/omx/strays.py)."""
        from pure.omx.scale_down import debt_show_program
        from pure.team import team_status

        status, _ = self.run(team, team_status(TeamStatusRequest(team=team, cwd=str(self.cwd), env=ENV,
                                                                 screens=False)), QUIET)
        shown, _ = self.run(team, debt_show_program(DebtRequest(team=team, cwd=str(self.cwd), env=ENV)), QUIET)
        assert status is not None and shown is not None
        if status.outcome.status == "error" or shown.outcome.status != "ok":
            return  # a team state that cannot be read: both refuse (the membership invariant checks the read)
        said: dict[str, Any] = status.outcome.result  # type: ignore[assignment]
        report: dict[str, Any] = shown.outcome.result  # type: ignore[assignment]
        left = report.get("leftovers") or {}
        assert (said["debt"] is None) == (report["debt"] is None), (said["debt"], report)
        assert [p["paneId"] for p in said["strayPanes"]] == [p["paneId"] for p in left.get("strayPanes", [])], \
            (said, report)
        assert said.get("leftoverWorkers", []) == left.get("leftoverWorkers", []), (said, report)
        assert said.get("keptWorkers", []) == left.get("keptWorkers", []), (said, report)
        TOTALS["agreed on kept workers"] += bool(said.get("keptWorkers"))
        TOTALS["agreed on debt"] += said["debt"] is not None
        TOTALS["agreed on strays or leftovers"] += bool(said["strayPanes"] or said.get("leftoverWorkers"))

    # -- reads and invariants -------------------------------------------------------------------------
    def _read(self, team: str) -> Snapshot | None:
        """The public read (recover an interrupted commit, read config + manifest), then the snapshot."""
        paths = TeamPaths(str(self.state_root), team)

        def read() -> Program:
            state = yield from locks.with_barrier(paths, lambda b: txn.load_team(paths, b))
            return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue({"found": state is not None})))

        done, _ = self.run(team, read(), QUIET)
        assert done is not None and done.outcome.status == "ok", done
        team_dir = self.state_root / "team" / team
        config = json.loads((team_dir / "config.json").read_text())
        manifest_path = team_dir / "manifest.v2.json"
        members = {w["name"]: (w.get("pane_id"), w.get("pid")) for w in config["workers"]}
        assert config["worker_count"] == len(config["workers"]), config
        if manifest_path.exists():
            manifest = json.loads(manifest_path.read_text())
            assert {w["name"]: (w.get("pane_id"), w.get("pid")) for w in manifest["workers"]} == members, \
                "config and manifest disagree"
            assert manifest["worker_count"] == len(manifest["workers"])
        open_tasks: dict[str, set[str]] = {}
        task_bytes: dict[str, bytes] = {}
        for path in sorted((team_dir / "tasks").glob("task-*.json")):
            task = json.loads(path.read_text())
            task_bytes[task["id"]] = path.read_bytes()
            if task.get("status") not in ("completed", "failed"):
                claim = task.get("claim") if isinstance(task.get("claim"), dict) else {}
                open_tasks[task["id"]] = {n for n in (task.get("owner"), claim.get("owner")) if isinstance(n, str)}
        kept = frozenset(path.name.removesuffix(".intent") for path in (team_dir / "runtime").glob("*.intent")
                         if '"kind": "kept"' in path.read_text())
        snapshot = Snapshot(members=members, leader=(config.get("leader_pane_id"), config.get("leader_pane_pid")),
                            next_index=int(config.get("next_worker_index") or 1),
                            open_tasks=open_tasks, task_bytes=task_bytes, kept=kept & set(members))
        self.teams[team] = snapshot
        return snapshot

    @staticmethod
    def _targets(executor: SimExecutor) -> set[str]:
        """The workers a scale-down marked ``draining`` (the ones it set out to remove)."""
        return {Path(path).parent.name for path, content in executor.writes
                if path.endswith("/status.json") and '"draining"' in content}

    def _check_membership(self, team: str, kind: str, before: Snapshot | None, executor: SimExecutor) -> None:
        if not (self.state_root / "team" / team / "config.json").exists():
            assert kind == "init", f"{team} lost its config.json in {kind}"
            return
        after = self._read(team)
        assert after is not None
        if before is None:
            assert kind == "init" or not after.members, (kind, after.members)
            return
        old, new = set(before.members), set(after.members)
        if kind == "scale-up":
            assert old <= new, f"scale-up removed members {old - new}"
            assert all(int(n.split("-")[1]) >= before.next_index for n in new - old), (before.next_index, new - old)
        elif kind in ("scale-down", "reconcile"):  # a reconcile scales down the members a rollback kept
            targets = self._targets(executor)
            if kind == "reconcile":
                assert targets <= before.kept, f"reconcile set out to remove {targets - before.kept}, never kept"
            assert new <= old, f"scale-down added members {new - old}"
            assert old - new <= targets, f"removed {old - new}, set out to remove {targets}"
            for name in targets & old:
                if name in new:  # still a member: its tasks are as they were
                    for task_id, refs in before.open_tasks.items():
                        if name in refs:
                            assert after.task_bytes.get(task_id) == before.task_bytes.get(task_id), (name, task_id)
                else:  # removed: no open task still names it
                    assert all(name not in refs for refs in after.open_tasks.values()), (name, after.open_tasks)
        else:
            assert new == old, f"{kind} changed membership {old} -> {new}"

    @invariant()
    def no_mutation_on_a_pane_not_ours(self) -> None:
        assert self.world.violations == [], self.world.violations

    def leaked(self) -> list[str]:
        """Live panes panefleet created that no member, debt record or intent names (a dead pane, kept
        by ``remain-on-exit`` with its tag gone, runs nothing: it is clutter, not a leaked agent)."""
        out = []
        for pane in self.world.server.panes.values():
            team = self.world.created.get(pane.pid)
            if team is None or pane.dead:
                continue
            team_dir = self.state_root / "team" / team
            recorded: set[tuple[Any, Any]] = set()
            for name in ("config.json", ".scale-down-cleanup-debt.json"):
                try:
                    data = json.loads((team_dir / name).read_text())
                except (OSError, ValueError):
                    continue
                for key in ("workers", "unresolved_panes"):
                    for w in data.get(key) or []:
                        if isinstance(w, dict):
                            recorded.add((w.get("pane_id"), w.get("pid")))
            named = set()  # workers whose intent names no pane yet: the pane running their startup script
            for intent in (team_dir / "runtime").glob("*.intent"):
                try:
                    data = json.loads(intent.read_text())
                except (OSError, ValueError):
                    continue
                if data.get("pane_id") is not None:
                    recorded.add((data.get("pane_id"), data.get("pid")))
                else:
                    named.add(f"/{data.get('worker')}-startup.sh'")
            if any(script in pane.start_command for script in named):
                continue
            if (pane.id, pane.pid) not in recorded and (pane.id, None) not in recorded:
                out.append(f"{pane.id} pid {pane.pid} of {team} (tag {pane.options.get(OWNER)!r})")
        return out

    @invariant()
    def every_pane_created_is_a_member_or_debt(self) -> None:
        leaked = self.leaked()
        if leaked:
            raise Leaked(leaked)


class Leaked(AssertionError):
    """A live pane panefleet created and did not remove, which no config, debt record or intent names."""


def _focus(args: tuple[str, ...], log: list[tuple[str, ...]]) -> str | None:
    for command in [args, *reversed(log)]:
        if "-t" in command:
            return command[command.index("-t") + 1]
    return None


def _is_split(step: m.Step) -> bool:
    return isinstance(step, m.Run) and step.args[:1] == ("split-window",)


def _is_tag(step: m.Step) -> bool:
    return isinstance(step, m.Run) and step.args[:1] == ("set-option",) and OWNER in step.args


def _is_identity(step: m.Step) -> bool:
    return isinstance(step, m.WriteFile) and step.path.endswith("/identity.json")


# ------------------------------------------------------------------------------------------- runs


SEED = "PANEFLEET_ADVERSARY_SEED"  # replays a failed run: its rounds draw from this seed on


def exercise(machine: type[AdversaryMachine], *, budget_s: float, target_steps: int, examples: int,
             steps: int, shrink: bool = False) -> Counter[str]:
    """Run the machine in rounds of ``examples`` × ``stateful_step_count`` until ``target_steps``
    steps ran or ``budget_s`` passed (hypothesis has no time budget of its own). Round ``r`` draws
    from seed ``base + r``; ``base`` is ``$PANEFLEET_ADVERSARY_SEED`` or a new one, and a failure
    names it, so the same rounds can be run again. Without ``shrink`` a failure is reported at once
    with every step that led to it (shrinking a long run can take minutes)."""
    start = time.monotonic()
    before = Counter(TOTALS)
    base = int(os.environ.get(SEED, "") or random.randrange(2**32))
    phases = tuple(Phase) if shrink else (Phase.generate,)
    round_ = 0
    while time.monotonic() - start < budget_s and TOTALS["steps"] - before["steps"] < target_steps:
        seeded = seed(base + round_)(type(machine.__name__, (machine,), {}))
        round_ += 1
        try:
            run_state_machine_as_test(seeded, settings=settings(
                max_examples=examples, stateful_step_count=steps, deadline=None, database=None, phases=phases,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
        except BaseException as failure:
            failure.add_note(f"replay: {SEED}={base} (failed in round {round_} of this run)")
            raise
    TOTALS[f"seed {base}"] += 1
    return TOTALS - before


def report(ran: Counter[str]) -> str:
    faults = sum(n for k, n in ran.items() if k in EVENTS or k.startswith("mid-run") or k in (
        "query failed", "query hung", "mutation refused", "killed mid-run"))
    return (f"{ran['steps']} steps ({ran['program steps']} program steps) in {ran['machines']} runs, "
            f"{faults} faults injected; {dict(sorted(ran.items()))}")


@pytest.mark.timeout(150)
def test_adversary_never_wins() -> None:
    ran = exercise(AdversaryMachine, budget_s=45, target_steps=10_000, examples=10, steps=40)
    print(report(ran))
    assert ran["steps"] > 0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_adversary_never_wins_long() -> None:
    ran = exercise(AdversaryMachine, budget_s=170, target_steps=150_000, examples=50, steps=50)
    print(report(ran))
    assert ran["steps"] >= 10_000, report(ran)


# --------------------------------------------------------------------------------- targeted cases


@pytest.fixture
def machine() -> Any:
    state = AdversaryMachine()
    yield state
    state.teardown()


CRASHES = {"split": Plan(stop_at_split=True), "tag": Plan(stop_at_tag=True), "identity": Plan(stop_at_identity=True)}


def _crash_in_a_scale_up(state: AdversaryMachine, crash: str) -> str:
    """alpha with one worker, then a scale-up killed right after it split worker-2's new pane (its
    intent names the worker, not yet the pane), tagged it (the intent names the pane and the pid the
    split answered) or wrote worker-2's identity (which pins it too)."""
    state.team_init(plan=QUIET)
    state.scale_up(choice=0, count=1, with_task=False, plan=QUIET)
    before = set(state.world.server.panes)
    state.scale_up(choice=0, count=1, with_task=False, plan=CRASHES[crash])
    (stray,) = set(state.world.server.panes) - before
    return stray


def _stray_sweep(state: AdversaryMachine) -> dict[str, Any]:
    """``team debt reconcile alpha``, whose stray sweep runs after the (empty) debt reconcile."""
    from pure.omx.scale_down import debt_reconcile_program

    done, _executor = state.run("alpha", debt_reconcile_program(DebtRequest(team="alpha", cwd=str(state.cwd),
                                                                            env=ENV)), QUIET)
    assert done is not None
    result: dict[str, Any] = done.outcome.result  # type: ignore[assignment]
    return result["strayPanes"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("crash", sorted(CRASHES))
def test_crash_between_split_and_record_leaves_no_unrecorded_pane(machine: AdversaryMachine, crash: str) -> None:
    stray = _crash_in_a_scale_up(machine, crash)
    assert (machine.state_root / "team" / "alpha" / "runtime" / "worker-2.intent").exists()
    assert machine.leaked() == []
    assert stray in machine.world.server.panes


@pytest.mark.parametrize("crash", ["split", "tag", "identity"])
def test_a_stray_the_crash_left_pinned_is_removed(machine: AdversaryMachine, crash: str) -> None:
    stray = _crash_in_a_scale_up(machine, crash)
    pid = machine.world.server.panes[stray].pid
    team_dir = machine.state_root / "team" / "alpha"
    assert (team_dir / "workers" / "worker-2").is_dir() and (team_dir / "runtime" / "worker-2-startup.sh").exists()
    swept = _stray_sweep(machine)
    assert swept == {"removed": [{"paneId": stray, "pid": pid, "worker": "worker-2"}], "kept": [],
                     "cleanedWorkers": ["worker-2"]}
    assert stray not in machine.world.server.panes
    assert not (team_dir / "workers" / "worker-2").exists()  # what the crashed run left on disk went too
    assert not (team_dir / "runtime" / "worker-2-startup.sh").exists()
    assert not (team_dir / "runtime" / "worker-2.intent").exists()
    assert machine.world.violations == []


def test_a_stray_respawned_after_the_crash_is_not_killed(machine: AdversaryMachine) -> None:
    """Its identity pins the process the scale-up started; the respawn (same id, start command and
    tag) runs another one, so the sweep keeps it and says why."""
    stray = _crash_in_a_scale_up(machine, "identity")
    pinned = machine.world.server.panes[stray].pid
    machine.world.server.respawn(stray)
    now = machine.world.server.panes[stray].pid
    swept = _stray_sweep(machine)
    assert swept["removed"] == []
    assert swept["kept"] == [{"paneId": stray, "pid": now, "worker": "worker-2",
                              "reason": f"stray_pid_changed:{stray}:{pinned}:{now}"}]
    assert stray in machine.world.server.panes
    assert machine.world.violations == []


def test_an_older_pane_respawned_into_a_new_folder_is_not_pinned_by_itself(machine: AdversaryMachine) -> None:
    """worker-1's first pane died kept by ``remain-on-exit`` and its scale-up rolled back (the folder
    went, the dead pane stayed); a second scale-up made worker-1 again in another pane. Then someone
    respawned the old pane: its new process found no pin in the new folder and wrote its own. That pin
    does not speak for it — the pane is older than the split the intent announced (pure/omx/strays.py,
    ``pin_of``) — so the sweep keeps it (a run of the long adversary found this kill)."""
    machine.team_init(plan=QUIET)
    machine.scale_up(choice=0, count=1, with_task=False,
                     plan=Plan(aims=(Aim(event="die_kept", window="before_owner_read", nth=2, choice=0),)))
    (old,) = set(machine.world.server.panes) - {"%0"}
    assert machine.world.server.panes[old].dead
    machine.scale_up(choice=0, count=1, with_task=False,
                     plan=Plan(aims=(Aim(event="respawn", window="before_owner_read", nth=2, choice=0),)))
    machine.world.server.respawn(old)
    now = machine.world.server.panes[old].pid
    own_pin = machine.state_root / "team" / "alpha" / "workers" / "worker-1" / f"pane-{old[1:]}.pid"
    assert own_pin.read_text().strip() == str(now)  # the respawned process pinned itself
    swept = _stray_sweep(machine)
    assert swept["removed"] == []
    assert swept["kept"] == [{"paneId": old, "pid": now, "worker": "worker-1",
                              "reason": f"stray_pid_unrecorded:{old}"}]
    assert machine.world.violations == []
    assert old in machine.world.server.panes


def _crash_in_a_respawn(state: AdversaryMachine, plan: Plan) -> str:
    """alpha's worker-1 died; ``team respawn`` was killed right after it split (or tagged) the new pane:
    its intent names the worker (after the tag, that pane and the pinned pid too); the membership
    still names the dead one; the pane's own process pinned itself (pure/omx/startup_script.py)."""
    from pure.omx.respawn import RespawnRequest, respawn

    state.team_init(plan=QUIET)
    state.scale_up(choice=0, count=1, with_task=False, plan=QUIET)
    config = json.loads((state.state_root / "team" / "alpha" / "config.json").read_text())
    state.world.server.die(config["workers"][0]["pane_id"])
    before = set(state.world.server.panes)
    done, _executor = state.run("alpha", respawn(RespawnRequest(team="alpha", worker="worker-1", cwd=str(state.cwd),
                                                                env=ENV)), plan)
    assert done is None
    (stray,) = set(state.world.server.panes) - before
    return stray


@pytest.mark.parametrize("respawned", [False, True])
@pytest.mark.parametrize("crash", ["split", "tag"])
def test_a_respawn_s_stray_goes_only_while_it_runs_the_pinned_process(machine: AdversaryMachine, crash: str,
                                                                      respawned: bool) -> None:
    stray = _crash_in_a_respawn(machine, Plan(stop_at_split=True) if crash == "split" else Plan(stop_at_tag=True))
    intent_file = machine.state_root / "team" / "alpha" / "runtime" / "worker-1.intent"
    intent = json.loads(intent_file.read_text())
    pinned = machine.world.server.panes[stray].pid
    assert (intent.get("pane_id"), intent.get("pid")) == ((None, None) if crash == "split" else (stray, pinned))
    assert OWNER not in machine.world.server.panes[stray].options or crash == "tag"
    if respawned:
        machine.world.server.respawn(stray)
    swept = _stray_sweep(machine)
    now = machine.world.server.panes[stray].pid if respawned else pinned
    if respawned:
        assert swept["kept"] == [{"paneId": stray, "pid": now, "worker": "worker-1",
                                  "reason": f"stray_pid_changed:{stray}:{pinned}:{now}"}]
        assert stray in machine.world.server.panes
        assert intent_file.exists()  # it still names the kept pane's worker
    else:
        assert swept == {"removed": [{"paneId": stray, "pid": pinned, "worker": "worker-1"}], "kept": []}
        assert stray not in machine.world.server.panes
        assert not intent_file.exists()  # its work is done: later runs need not look for strays
    assert machine.world.violations == []


def test_a_stray_no_record_pins_is_kept(machine: AdversaryMachine) -> None:
    """A crash between the split and the intent's pin, and a pane whose first process could not pin
    itself (its pin file is gone): nothing names the pane's process, and a respawn could have
    replaced it unseen, so it is reported, never killed."""
    stray = _crash_in_a_scale_up(machine, "split")
    pin = Path(startup_script.self_pin_path(str(machine.state_root / "team" / "alpha" / "workers" / "worker-2"), stray))
    pin.unlink()
    swept = _stray_sweep(machine)
    assert [(k["paneId"], k["reason"]) for k in swept["kept"]] == [(stray, f"stray_pid_unrecorded:{stray}")]
    assert swept["removed"] == [] and stray in machine.world.server.panes
    assert machine.world.violations == []


def test_respawn_between_split_and_pin(machine: AdversaryMachine) -> None:
    """The pin comes from the split's own answer (pure/tmux/owned.py, ``pin_new_pane``): a respawn
    before the next listing is seen as a changed pid, so the pane is neither tagged nor killed."""
    machine.team_init(plan=QUIET)
    before = set(machine.world.server.panes)
    machine.scale_up(choice=0, count=1, with_task=False, plan=Plan(respawn_after_split=True))
    assert machine.world.violations == []
    (respawned,) = set(machine.world.server.panes) - before
    assert OWNER not in machine.world.server.panes[respawned].options  # never claimed as ours
    snapshot = machine.teams["alpha"]  # kept as oh-my-codex keeps a pane its rollback could not remove
    assert snapshot is not None
    pane, pinned = snapshot.members["worker-1"]  # with the process the split started, not the respawned one
    assert pane == respawned and pinned in machine.world.created and pinned != machine.world.server.panes[pane].pid


def test_the_adversary_is_noticed(machine: AdversaryMachine) -> None:
    """The audit itself: a kill of a respawned worker pane is a violation (the proofs prevent it)."""
    machine.team_init(plan=QUIET)
    machine.scale_up(choice=0, count=2, with_task=False, plan=QUIET)
    snapshot = machine.teams["alpha"]
    assert snapshot is not None and len(snapshot.members) == 2
    pane = snapshot.members["worker-1"][0]
    machine.world.server.respawn(pane)
    machine.scale_down(choice=0, by_count=False, pick=0, force=True, plan=QUIET)
    assert machine.world.violations == []
    assert pane in machine.world.server.panes  # not killed: kept as debt
    executor = SimExecutor(machine.world, machine.root, "alpha", state_root=machine.state_root)
    executor._audit(("kill-pane", "-t", pane))  # what a kill without the proofs would have done
    assert [v.pane for v in machine.world.violations] == [pane]


def test_status_reports_a_pane_kept_as_debt_once(machine: AdversaryMachine) -> None:
    """A removed worker's pane kept as cleanup debt (its pid changed) still runs that worker's
    startup script: ``team status`` names it in the debt, not a second time as a stray."""
    from pure.omx.scale_down import scale_down_program
    from pure.team import team_status

    machine.team_init(plan=QUIET)
    machine.scale_up(choice=0, count=2, with_task=False, plan=QUIET)
    config = json.loads((machine.state_root / "team" / "alpha" / "config.json").read_text())
    kept = config["workers"][1]["pane_id"]
    machine.world.server.respawn(kept)
    request = ScaleDownRequest(team="alpha", cwd=str(machine.cwd), env=ENV, worker_names=("worker-2",), force=True,
                               drain_timeout_ms=0)
    done, _ = machine.run("alpha", scale_down_program(request), QUIET)
    assert done is not None and done.outcome.status == "debt"
    done, _ = machine.run("alpha", team_status(TeamStatusRequest(team="alpha", cwd=str(machine.cwd), env=ENV)), QUIET)
    assert done is not None
    result: dict[str, Any] = done.outcome.result  # type: ignore[assignment]
    assert [p["pane_id"] for p in result["debt"]["unresolved_panes"]] == [kept]
    assert result["strayPanes"] == []
    assert kept in machine.world.server.panes and machine.world.violations == []
