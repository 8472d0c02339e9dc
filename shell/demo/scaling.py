"""Demo steps for ``panefleet demo``: scale the demo team up, with the placeholder agent as worker CLI.

The team was initialised with ``--worker-cli placeholder``, so every new pane runs
``shell/placeholder_agent.sh`` (it prints its argv and echoes the dispatched trigger) and no agent CLI
is needed. First one worker, then three more with a task, each placed behind its ``L, S, L`` proof.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shell.demo.team import Transcript

# scale-up is refused unless scaling is enabled, as in oh-my-codex (docs/scale-up.md).
SCALING = {"OMX_TEAM_SCALING_ENABLED": "1"}


def scale_up_demo(run: Transcript, team: str) -> None:
    run.panefleet("team", "scale-up", team, "--count", "1", env=SCALING)
    task = {"subject": "say hello", "description": "print a greeting in your pane", "owner": "worker-3"}
    run.panefleet("team", "scale-up", team, "--count", "3", "--task", json.dumps(task), env=SCALING)


DEMO_STEPS = [scale_up_demo]
