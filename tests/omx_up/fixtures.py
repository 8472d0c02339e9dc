"""Scale-up scenario fixtures: the seed's F-UP team, its stub tmux, and the scenario runner.

``StubTmux`` mirrors ``writeSuccessfulScaleUpTmuxStub`` of the seed test file and its per-test
variants: ``-V`` answers ``tmux 3.2a``; ``show-option`` answers the owner; ``split-window``
answers the next pane id; ``list-panes`` answers rows chosen by the call number; ``kill-pane``
removes the pane from later snapshots (unless it is told the pane stays); ``send-keys`` and
``set-option`` succeed unless told otherwise; ``capture-pane`` prints an empty line.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pure import model as m
from pure import wire
from pure.omx.codec import render_json
from pure.omx.layout import GEOMETRY_FORMAT
from pure.omx.scale_up import ScaleUpRequest, TaskSpec, scale_up
from pure.omx.state import TeamPaths
from tests.fixtures.omx_team import init_team_config
from tests.harness import Goldens, ScenarioExecutor, journal_json, normalize, run_scenario, snapshot_files

CREATED = "2026-07-14T00:00:00.000Z"
E_UP = {"OMX_TEAM_SCALING_ENABLED": "1", "OMX_TEAM_SKIP_READY_WAIT": "1", "HOME": "/nonexistent-home",
        "OMX_BYPASS_DEFAULT_SYSTEM_PROMPT": "0"}
ROW = tuple[str, int, int | str]
VERB = {"-V": "V", "list-panes": "L", "show-option": "S", "split-window": "SPLIT", "set-option": "TAG",
        "kill-pane": "K", "send-keys": "SEND", "capture-pane": "CAP"}


def rows(*items: ROW) -> str:
    return "".join(f"{pane}\t{dead}\t{pid}\n" for pane, dead, pid in items)


class StubTmux:
    """A scripted tmux. ``snapshot(call_number, killed)`` decides each ``list-panes`` answer."""

    def __init__(
        self,
        *,
        owner: str = "team:scale-up",
        splits: tuple[str, ...] = ("%31",),
        snapshot: Callable[[int, set[str]], m.Proc] | None = None,
        tag_fails: bool = False,
        send_fails: bool = False,
        kill_keeps: bool = False,
        owner_answer: m.Proc | None = None,
        split_answer: m.Proc | None = None,
        on_split: Callable[[], m.Proc | None] | None = None,
    ) -> None:
        self.on_split = on_split
        self.owner = owner
        self.splits = list(splits)
        self.snapshot = snapshot or default_snapshot
        self.tag_fails = tag_fails
        self.send_fails = send_fails
        self.kill_keeps = kill_keeps
        self.owner_answer = owner_answer
        self.split_answer = split_answer
        self.killed: set[str] = set()
        self.list_calls = 0
        self.split_calls = 0

    def geometry(self) -> m.Proc:
        """The pane geometry of the watched start-up's placement (pure/omx/layout.py) for the panes of the
        current snapshot (without counting it as a proof)."""
        listed = self.snapshot(self.list_calls or 1, self.killed)
        panes = [line.split("\t")[0] for line in listed.stdout.splitlines() if line.startswith("%")]
        return m.Proc(exit_code=0, stdout=_geometry_rows(panes))

    def __call__(self, args: tuple[str, ...]) -> m.Proc:
        verb = args[0]
        if verb == "-V":
            return m.Proc(exit_code=0, stdout="tmux 3.2a\n")
        if verb == "show-option":
            return self.owner_answer or m.Proc(exit_code=0, stdout=f"{self.owner}\n")
        if verb == "split-window":
            if self.on_split is not None:
                refused = self.on_split()
                if refused is not None:
                    return refused
            if self.split_answer is not None:
                return self.split_answer
            pane = self.splits[min(self.split_calls, len(self.splits) - 1)]
            self.split_calls += 1
            return m.Proc(exit_code=0, stdout=f"{pane}\n")
        if verb == "list-panes" and args[-1] == GEOMETRY_FORMAT:
            return self.geometry()
        if verb == "list-panes":
            self.list_calls += 1
            return self.snapshot(self.list_calls, self.killed)
        if verb == "set-option":
            return m.Proc(exit_code=1, stderr="owner tag failed\n") if self.tag_fails else m.Proc(exit_code=0)
        if verb == "kill-pane":
            if not self.kill_keeps:
                self.killed.add(args[-1])
            return m.Proc(exit_code=0)
        if verb == "send-keys":
            return m.Proc(exit_code=1) if self.send_fails else m.Proc(exit_code=0)
        if verb == "capture-pane":
            return m.Proc(exit_code=0, stdout="\n")
        return m.Proc(exit_code=0)


def _geometry_rows(panes: list[str]) -> str:
    """Each pane alone in a 200x50 window of session $0 (room for every split)."""
    return "".join(f"{pane}\t$0\t@{n}\t0\toff\t0\t0\t200\t50\t200\t50\n" for n, pane in enumerate(panes))


def default_snapshot(_call: int, killed: set[str]) -> m.Proc:
    """STUB-OK: ``%11``, ``%21`` and ``%31`` until ``%31`` was killed."""
    listed: list[ROW] = [("%11", 0, 42411), ("%21", 0, 42421)]
    if "%31" not in killed:
        listed.append(("%31", 0, 42424))
    return m.Proc(exit_code=0, stdout=rows(*listed))


def fixed(text: str, code: int = 0) -> Callable[[int, set[str]], m.Proc]:
    return lambda _call, _killed: m.Proc(exit_code=code, stdout=text if code == 0 else "",
                                         stderr="" if code == 0 else "list failed\n")


# ------------------------------------------------------------------------------------- team state


def base_config(team: str, workers: int = 1) -> dict[str, Any]:
    """The config oh-my-codex's initTeamState writes, after one save (generation 1)."""
    return {**init_team_config(team, workers), "config_generation": 1}


def manifest_of(config: dict[str, Any], dispatch_mode: str) -> dict[str, Any]:
    manifest: dict[str, Any] = {
        "schema_version": 2,
        "name": config["name"],
        "task": config["task"],
        "leader": {"session_id": "", "worker_id": "leader-fixed", "role": "coordinator"},
        "policy": {"worker_launch_mode": "interactive", "display_mode": "auto", "dispatch_mode": dispatch_mode,
                   "dispatch_ack_timeout_ms": 2000},
        "governance": {"delegation_only": False, "plan_approval_required": False, "nested_teams_allowed": False,
                       "one_team_per_leader_session": True, "cleanup_requires_all_workers_inactive": True},
        "lifecycle_profile": "default",
        "permissions_snapshot": {"approval_mode": "unknown", "sandbox_mode": "unknown", "network_access": True},
        "tmux_session": config["tmux_session"],
        "worker_count": config["worker_count"],
        "workers": config["workers"],
        "next_task_id": config["next_task_id"],
        "created_at": config["created_at"],
    }
    for key in ("leader_cwd", "team_state_root", "workspace_mode", "worktree_mode"):
        if key in config:
            manifest[key] = config[key]
    for key in ("leader_pane_id", "leader_pane_pid", "hud_pane_pid", "hud_pane_id", "tmux_pane_owner_id",
                "resize_hook_name", "resize_hook_target", "next_worker_index", "config_generation"):
        manifest[key] = config.get(key)
    return manifest


class UpTeam:
    """F-UP (``configureScaleUpTeamForDirectDispatch``) on a real temporary directory."""

    def __init__(self, cwd: Path, name: str = "scale-up", *, owner: str = "team:scale-up",
                 dispatch_mode: str = "transport_direct", worker_pid: int | None = 42421,
                 change: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.cwd = cwd
        self.name = name
        self.paths = TeamPaths(str(cwd / ".omx" / "state"), name)
        self.dir = Path(self.paths.team_dir)
        for sub in ("workers/worker-1", "tasks", "claims", "mailbox", "dispatch", "events"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        config = base_config(name)
        config.update({"tmux_pane_owner_id": owner, "leader_pane_id": "%11", "leader_pane_pid": 42411})
        config["workers"][0]["pane_id"] = "%21"
        if worker_pid is not None:
            config["workers"][0]["pid"] = worker_pid
        if change is not None:
            change(config)
        (self.dir / "config.json").write_text(render_json(config))
        (self.dir / "manifest.v2.json").write_text(render_json(manifest_of(config, dispatch_mode)))

    def config(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads((self.dir / "config.json").read_text())
        return value

    def manifest(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads((self.dir / "manifest.v2.json").read_text())
        return value

    def worker_names(self) -> list[str]:
        return [w["name"] for w in self.config()["workers"]]


def init_git_repo(cwd: Path) -> None:
    """``initCommittedGitRepo``: a repository with one commit holding a root ``AGENTS.md``."""
    fixed = {**os.environ, "GIT_AUTHOR_DATE": "2026-07-14T00:00:00Z", "GIT_COMMITTER_DATE": "2026-07-14T00:00:00Z"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=fixed)

    git("init", "-q")
    git("config", "user.name", "OMX Test")
    git("config", "user.email", "omx@example.com")
    (cwd / "AGENTS.md").write_text("# Tracked root instructions\n")
    (cwd / ".gitignore").write_text(".omx/\n")
    git("add", "AGENTS.md", ".gitignore")
    git("commit", "-q", "-m", "init")


# ----------------------------------------------------------------------------------------- runner


def request(team: UpTeam, *, count: int = 1, tasks: tuple[TaskSpec, ...] = (), env: dict[str, str] | None = None,
            agent_type: str = "executor", argv: tuple[str, ...] = ()) -> ScaleUpRequest:
    return ScaleUpRequest(team=team.name, count=count, cwd=str(team.cwd), agent_type=agent_type, tasks=tasks,
                          env={**E_UP, **(env or {})}, process_argv=argv, cli_paths={}, node_path="/usr/bin/node")


class Outcome:
    def __init__(self, done: m.Done, journal: list[m.Entry], executor: ScenarioExecutor) -> None:
        self.done = done
        self.journal = journal
        self.log = executor.tmux_log

    @property
    def result(self) -> dict[str, Any]:
        value: Any = self.done.outcome.result
        assert isinstance(value, dict)
        return value

    @property
    def error(self) -> str:
        return str(self.result.get("error", ""))

    def verbs(self) -> list[str]:
        out = []
        for args in self.log:
            verb = VERB.get(args[0], args[0])
            if verb in ("S", "SPLIT", "TAG", "K", "SEND", "CAP"):
                target = args[args.index("-t") + 1] if "-t" in args else ""
                verb = f"{verb}({target})"
            out.append(verb)
        return out

    def sequence(self) -> str:
        return " ".join(self.verbs())

    def commands(self, verb: str) -> list[tuple[str, ...]]:
        return [a for a in self.log if a[0] == verb]


def run(team: UpTeam, req: ScaleUpRequest, tmux: StubTmux, *, golden: tuple[Goldens, str] | None = None,
        env: dict[str, str] | None = None) -> Outcome:
    root = team.cwd
    before = snapshot_files(root, root / ".omx" / "state")
    executor = ScenarioExecutor(root, tmux, env=env)
    done, journal = run_scenario(lambda: scale_up(req), executor)
    outcome = Outcome(done, journal, executor)
    if golden is not None:
        goldens, name = golden
        after = snapshot_files(root, root / ".omx" / "state")
        goldens.check(f"omx_up/{name}", absolute_root(normalize({
            "kind": "decision",
            "operation": "team.scale_up",
            "request": wire.unstructure(req),
            "initial_files": before,
            "tmux_calls": [" ".join(a) for a in executor.tmux_log],
            "sequence": outcome.sequence(),
            "journal": journal_json(journal, root),
            "decision": wire.unstructure(done),
            "final_files": after,
        }, root)))
    return outcome


def absolute_root(value: Any) -> Any:
    """``$ROOT`` → ``/$ROOT``: replayed journals must keep absolute paths (the transaction journal
    refuses relative ones, so a replay with ``$ROOT/...`` paths would take another branch)."""
    return json.loads(json.dumps(value).replace("$ROOT", "/$ROOT"))


def task(subject: str = "must not persist", owner: str | None = "worker-2", role: str | None = None,
         description: str | None = None) -> TaskSpec:
    return TaskSpec(subject=subject, description=description or f"{subject} description", owner=owner, role=role)


DISPATCH = "L S({p}) L SEND({p}) L S({p}) L SEND({p})"


def dispatch(pane: str) -> str:
    return DISPATCH.format(p=pane)
