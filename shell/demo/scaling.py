"""Demo steps for ``panefleet demo``: scale the demo team up, with the placeholder agent as worker CLI.

The team was initialised with ``worker_cli: placeholder``, so every new pane runs
``shell/placeholder_agent.sh`` (it prints its argv and echoes the dispatched trigger) and no agent CLI
is needed. First one worker (split from the leader, ``-h``), then three more with a task, each split
from the newest worker behind its ``L, S, L`` proof.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import Any

Step = Callable[[str, str, object, Any], dict[str, Any]]


def scale_up_demo(step: Step, team: str, workdir: str) -> None:
    from pure.omx.scale_up import ScaleUpRequest, TaskSpec
    from shell.cli.scale_up import PLACEHOLDER_AGENT, explain

    env = {"OMX_TEAM_SCALING_ENABLED": "1", "HOME": os.environ.get("HOME", "/root")}
    paths = {"placeholder": str(PLACEHOLDER_AGENT), "node": shutil.which("node") or "node"}

    def request(count: int, tasks: tuple[TaskSpec, ...] = ()) -> ScaleUpRequest:
        return ScaleUpRequest(team=team, count=count, cwd=workdir, tasks=tasks, env=env,
                              cli_paths={"placeholder": paths["placeholder"]}, node_path=paths["node"])

    def render(result: dict[str, Any]) -> str:
        return explain(result, "ok")

    first = step(f"panefleet team scale-up {team} --count 1", "team.scale_up", request(1), render)
    if first.get("ok") is not True:
        return
    task = TaskSpec(subject="say hello", description="print a greeting in your pane", owner="worker-3")
    step(f"panefleet team scale-up {team} --count 3 --task '{{\"subject\": \"say hello\", ...}}'",
         "team.scale_up", request(3, (task,)), render)


DEMO_STEPS = [scale_up_demo]
