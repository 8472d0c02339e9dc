"""The scale-up's request, what one run has created so far (``ScaleUpRun``), and the failures that end it."""

from __future__ import annotations

import posixpath
from typing import TypeVar

from attrs import field, frozen

from pure import model as m
from pure import tmux as t
from pure.convert import OMIT_NONE
from pure.omx import layout
from pure.omx import worktree as wt
from pure.omx.records import TeamConfig
from pure.omx.scale_up.undo import UndoLog
from pure.omx.state import TeamPaths, TeamState
from pure.program import Gen, expect

T = TypeVar("T")

INJECT_ENV = "OMX_TEAM_SCALE_UP_INJECT_FAILURE"
PLACEHOLDER = "placeholder"


@frozen(kw_only=True)
class TaskSpec:
    subject: str
    description: str
    owner: str | None = None
    role: str | None = None
    blocked_by: tuple[str, ...] | None = None


@frozen(kw_only=True)
class ScaleUpRequest:
    """``panefleet team scale-up``. ``env`` is the relevant environment (listed in docs/scale-up.md)
    gathered by the shell (it serves as both oh-my-codex's ``env`` argument and the process
    environment); ``process_argv`` is the leader process argv (ambient bypass detection,
    docs/launch-policy.md, "Process launch");
    ``cli_paths`` maps ``codex``/``claude``/``gemini`` to where they were found on PATH, and a CLI
    the shell looked for but did not find to ``""`` (a selected worker CLI mapped to ``""`` refuses
    the scale-up before anything is created; a CLI not in the map at all is launched by its bare
    name, for callers that do not resolve CLIs);
    ``node_path`` is exported to workers as ``OMX_LEADER_NODE_PATH`` (oh-my-codex's CLI runtime);
    ``existing_shells`` lists which zsh/bash candidates (and ``$SHELL``) exist, for the worker shell;
    ``worker_env`` is set in every new worker's environment (a fleet file group's ``env``), and
    ``worktree`` gives each new worker a detached git worktree when the team has no worktree mode
    (a group's ``worktree = true``, ``pure/fleet/spec.py``); both are omitted from plans when unset;
    ``cli_problems``: by CLI, what keeps it from starting here as ``panefleet doctor`` says it
    (``pure/agents/doctor.py``): a worker that would launch such a CLI refuses the scale-up before
    anything is created;
    ``all_or_nothing``: in a watched start-up, one worker that does not start rolls the whole
    scale-up back (oh-my-codex's rule) instead of being retried and removed alone (docs/scale-up.md,
    "One slow worker")."""

    team: str
    count: int
    cwd: str
    agent_type: str | None = "executor"
    tasks: tuple[TaskSpec, ...] = ()
    env: dict[str, str] = field(factory=dict)
    process_argv: tuple[str, ...] = ()
    cli_paths: dict[str, str] = field(factory=dict)
    node_path: str = "node"
    existing_shells: tuple[str, ...] = ()
    worker_env: dict[str, str] | None = field(default=None, metadata=OMIT_NONE)
    worktree: bool | None = field(default=None, metadata=OMIT_NONE)
    cli_problems: dict[str, list[str]] | None = field(default=None, metadata=OMIT_NONE)
    all_or_nothing: bool | None = field(default=None, metadata=OMIT_NONE)


def injections(env: dict[str, str]) -> frozenset[str]:
    return frozenset(p.strip() for p in env.get(INJECT_ENV, "").split(",") if p.strip())


# ---------------------------------------------------------------------------------------- the run


class Abort(Exception):
    """A scale-up failure that requires the rollback (docs/scale-up.md, "Rollback"), which undoes
    what the run's undo log holds (pure/omx/scale_up/undo.py)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StepFailure(Exception):
    """A failed file step inside preparation/materialization (message as oh-my-codex words it)."""


class ScaleUpRun:
    """One scale-up's working state: the request, the config as it grows, and in ``undo`` everything
    this call created, so that a rollback can undo exactly that."""

    def __init__(self, req: ScaleUpRequest, paths: TeamPaths, state: TeamState, owner: str) -> None:
        self.req = req
        self.paths = paths
        self.owner = owner
        self.inject = injections(req.env)
        self.config: TeamConfig = state.config  # grows a member at each worker's commit
        self.generation: int = state.config.generation
        self.base_state = state
        self.base_config_text = state.config_text
        self.base_manifest_text = state.manifest_text
        self.manifest = state.raw_manifest
        self.approved_section: str | None = None  # the approved handoff context for every inbox
        self.undo = UndoLog()
        self.deliveries: list[m.Answer] = []  # each worker's start-up and delivery, for the answer
        self.supervised = req.env.get("OMX_TEAM_SKIP_READY_WAIT") != "1"
        self.placements: list[layout.Placement] = []  # where each new worker goes (watched start-up)
        self.runtime_existed = True
        self.worktree_mode: wt.WorktreeMode | None = None
        self.worktree_mode_derived = False

    def maybe_inject(self, phase: str) -> None:
        if phase in self.inject:
            raise StepFailure(f"injected_scale_up_failure:{phase}")


# ---------------------------------------------------------------------------------------- helpers


def acked(step: m.Step) -> Gen[None]:
    ack = yield from expect(step, m.Ack)
    if not ack.ok:
        raise StepFailure(ack.error)


def positive_or(value: object, default: int) -> int:
    return value if type(value) is int and t.is_positive_pid(value) else default


def ok_done(result: m.Answer) -> m.Done:
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))


def team_state_file(paths: TeamPaths, config: TeamConfig, cwd: str, name: str) -> str:
    """A file of the team directory under the config's ``team_state_root`` (else the state root)."""
    root = config.team_state_root or paths.state_root
    return posixpath.join(posixpath.normpath(posixpath.join(cwd, root)), "team", paths.team, name)


def read_optional(path: str) -> Gen[str | None]:
    data = yield from expect(m.ReadFile(path=path), m.FileData)
    return data.content


def error_done(message: str) -> m.Done:
    return m.Done(outcome=m.Outcome(status="error", result=m.JsonValue({"ok": False, "error": message}),
                                    message=message))
