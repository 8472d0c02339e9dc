"""What tasks and roles given on a command line may name, read through steps before the command runs
(``shell/cli/task_input.py`` checks them): the ids of the team's tasks (``tasks/task-<N>.json``, as
``pure/omx/tasks.py`` lists them) and the roles a worker's launch knows besides the agent table of
``pure/omx/launch/agents.py``: a role whose prompt file ``<role>.md`` is in ``<cwd>/.codex/prompts``
or ``<CODEX_HOME>/prompts`` (what ``pure/omx/scale_up/plan.py`` ``role_prompt`` loads), and one
configured under ``agentModels`` or ``agentReasoning`` in ``<CODEX_HOME>/.omx-config.json``."""

from __future__ import annotations

import posixpath

from returns.result import Failure

from pure import model as m
from pure.omx import launch as ln
from pure.omx.names import validate_team_name
from pure.omx.scale_up.plan import ROLE_NAME, codex_home_dir, prompt_dirs
from pure.omx.scale_up.run import read_optional
from pure.omx.state import TeamPaths, resolve_state_root
from pure.omx.tasks import TASK_FILE_RE
from pure.program import Gen, Program, expect


def team_task_ids(paths: TeamPaths) -> Gen[tuple[str, ...] | None]:
    """The ids of the team's task files in ascending order; None when they cannot be known here (the
    tasks folder cannot be listed, or there is no such team: the command itself says so)."""
    listing = yield from expect(m.ListDir(path=paths.tasks_dir), m.Listing)
    if listing.error:
        return None
    if listing.names is None:  # no tasks folder: a team without tasks, or no team at all
        config = yield from expect(m.Stat(path=paths.config), m.Value)
        return None if config.value == "absent" else ()
    return tuple(sorted((mt.group(1) for name in listing.names if (mt := TASK_FILE_RE.fullmatch(name))), key=int))


def configured_roles(cwd: str, env: dict[str, str]) -> Gen[frozenset[str]]:
    """The roles of this project's launch beyond the agent table: prompt files and ``.omx-config.json``
    entries, found where a scale-up's launch plan reads them (``plan_launches``)."""
    setup_scope = yield from read_optional(posixpath.join(cwd, ".omx", "setup-scope.json"))
    _override, home_dir = codex_home_dir(env, cwd, setup_scope)
    home = ln.CodexHome(omx_config_json=(yield from read_optional(posixpath.join(home_dir, ".omx-config.json"))))
    found = {*home.agent_overrides("agentModels", reasoning=False), *home.agent_overrides("agentReasoning", reasoning=True)}
    for folder in prompt_dirs(cwd, home_dir):
        listing = yield from expect(m.ListDir(path=folder), m.Listing)
        found.update(name[:-3] for name in listing.names or () if name.endswith(".md") and ROLE_NAME.fullmatch(name[:-3]))
    return frozenset(found)


def known_program(team: str, cwd: str, env: dict[str, str], *, tasks: bool, roles: bool) -> Program:
    """``{"taskIds": [...] | null, "roles": [...]}``: the team's task ids (with ``tasks``) and the
    configured roles (with ``roles``). It only reads."""
    ids: tuple[str, ...] | None = None
    named = validate_team_name(team)
    if tasks and not isinstance(named, Failure):
        ids = yield from team_task_ids(TeamPaths(resolve_state_root(cwd, env), named.unwrap()))
    found = (yield from configured_roles(cwd, env)) if roles else frozenset()
    result = {"taskIds": None if ids is None else list(ids), "roles": sorted(found)}
    return m.Done(outcome=m.Outcome(status="ok", result=m.JsonValue(result)))
