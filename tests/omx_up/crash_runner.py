"""Run a scale-up (watched, or oh-my-codex's mode when ``OMX_TEAM_SKIP_READY_WAIT=1`` is set), a
respawn or a forced scale-down of one worker as a real process and SIGKILL it right after its Nth file write or tmux mutation (split, tag,
``remain-on-exit``, keystrokes, kills), or right after its first such tmux command when N names one (``split-window``).

Usage: python -m tests.omx_up.crash_runner scale-up CWD TEAM COUNT N TMUX_SOCKET
       python -m tests.omx_up.crash_runner respawn|scale-down CWD TEAM WORKER N TMUX_SOCKET
Prints the number of such steps when the run finishes before reaching N.
"""

from __future__ import annotations

import os
import sys

from shell.cli.scale_up import PLACEHOLDER_AGENT
from shell.run.loop import run_operation
from tests.omx_down.crash_runner import CrashingExecutor


def main() -> None:
    op, cwd, team, what, n, socket = sys.argv[1:]
    from pure.omx.respawn import RespawnRequest
    from pure.omx.scale_down import ScaleDownRequest
    from pure.omx.scale_up import ScaleUpRequest

    at = int(n) if n.isdigit() else 0  # or a tmux command to die right after (``split-window``)
    executor = CrashingExecutor(at, tmux=True, crash_on=None if n.isdigit() else n, env=dict(os.environ),
                                tmux_socket=socket)
    mode = {k: v for k, v in os.environ.items() if k == "OMX_TEAM_SKIP_READY_WAIT"}  # the mode under test
    env = {"OMX_TEAM_SCALING_ENABLED": "1", "HOME": cwd, **mode}
    if op == "scale-down":
        done, _, _ = run_operation("team.scale_down", ScaleDownRequest(team=team, cwd=cwd, env=env,
                                                                       worker_names=(what,), force=True),
                                   executor, env=dict(os.environ), audit=False)
    elif op == "respawn":
        done, _, _ = run_operation("team.respawn", RespawnRequest(team=team, worker=what, cwd=cwd, env=env),
                                   executor, env=dict(os.environ), audit=False)
    else:
        request = ScaleUpRequest(team=team, cwd=cwd, count=int(what), env=env,
                                 cli_paths={"placeholder": str(PLACEHOLDER_AGENT)}, existing_shells=("/bin/bash",))
        done, _, _ = run_operation("team.scale_up", request, executor, env=dict(os.environ), audit=False)
    print(executor.writes, done.outcome.status)


if __name__ == "__main__":
    main()
