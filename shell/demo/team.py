"""``panefleet demo``: the whole job on a private tmux server, no agent CLI required."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import sys
import tempfile
import uuid
from typing import Any

from pure import ops
from shell.run.executor import Executor
from shell.run.loop import run_operation
from shell.run.process import run_process


def _say(text: str, as_json: bool) -> None:
    if not as_json:
        sys.stdout.write(text.rstrip("\n") + "\n")
        sys.stdout.flush()


def run_demo(*, keep: bool, socket: str | None, as_json: bool) -> int:
    from pure.team_ops import TeamInitRequest, TeamStatusRequest
    from shell.cli.render import render_init, render_status

    if shutil.which("tmux") is None:
        sys.stderr.write("panefleet demo: tmux is not installed (apt-get install tmux)\n")
        return 1
    name = socket or os.environ.get("PANEFLEET_TMUX_SOCKET") or f"panefleet-demo-{uuid.uuid4().hex[:8]}"
    probe_env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    if run_process("tmux", ("-L", name, "list-sessions"), env=probe_env).exit_code == 0:
        # The demo stops its server when it is done: it must never adopt one that holds other work.
        sys.stderr.write(f"panefleet demo: a tmux server is already running on `tmux -L {name}`; the demo needs "
                         "a server of its own (it stops the server when it finishes). Pick another --tmux-socket.\n")
        return 4
    workdir = tempfile.mkdtemp(prefix="panefleet-demo-")
    env = dict(os.environ)
    env.pop("TMUX", None)
    env.pop("TMUX_PANE", None)
    for key in [k for k in env if k.startswith("OMX_")]:
        env.pop(key)
    env.setdefault("PANEFLEET_STATE_DIR", os.path.join(workdir, ".panefleet-state"))
    executor = Executor(env=env, tmux_socket=name)
    transcript: list[dict[str, Any]] = []
    team = "demo"
    code = 0

    def step(title: str, op: str, request: object, render: Any) -> dict[str, Any]:
        _say(f"\n$ {title}", as_json)
        done, journal, _ = run_operation(op, request, executor, env=env)
        result = done.outcome.result if isinstance(done.outcome.result, dict) else {}
        tmux_calls = sum(1 for e in journal if getattr(e.step, "tool", None) == "tmux")
        transcript.append({"command": title, "status": done.outcome.status, "tmuxCalls": tmux_calls,
                           "result": result})
        _say(render(result), as_json)
        _say(f"({done.outcome.status}; {len(journal)} steps, {tmux_calls} tmux calls)", as_json)
        return result

    try:
        _say(f"panefleet demo: private tmux server `tmux -L {name}`, team state in {workdir}", as_json)
        init = step(f"panefleet team init {team} --new-session", "team.init",
                    TeamInitRequest(team=team, cwd=workdir, env={}, task="demo task", new_session=True,
                                    session_name="panefleet-demo", worker_cli="placeholder"), render_init)
        if init.get("ok") is not True:
            code = 1
            return code
        status_request = TeamStatusRequest(team=team, cwd=workdir, env={})
        step(f"panefleet team status {team}", "team.status", status_request, render_status)
        for extra in _demo_extensions():
            extra(step, team, workdir)
            step(f"panefleet team status {team}", "team.status", status_request, render_status)
        return code
    finally:
        if as_json:
            sys.stdout.write(json.dumps({"ok": code == 0, "socket": name, "workdir": workdir,
                                         "kept": keep, "steps": transcript}) + "\n")
        if keep:
            _say(f"\nThe demo is still running: tmux -L {name} attach   (stop it: tmux -L {name} kill-server)", as_json)
        else:
            run_process("tmux", ("-L", name, "kill-server"), env=env)
            _remove_socket(name, env)
            shutil.rmtree(workdir, ignore_errors=True)
            _say("\ndemo server stopped and state removed (use --keep to look around)", as_json)


def _remove_socket(name: str, env: dict[str, str]) -> None:
    """tmux leaves a stopped server's socket file behind (``$TMUX_TMPDIR``/tmux-UID/NAME): remove it,
    so that a demo leaves nothing on the machine."""
    path = os.path.join(env.get("TMUX_TMPDIR") or "/tmp", f"tmux-{os.getuid()}", name)
    with contextlib.suppress(OSError):
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)


def _demo_extensions() -> list[Any]:
    """Later operations (scale-up, scale-down, debt) add their demo steps here when present."""
    extensions: list[Any] = []
    for module_name in ("shell.demo.scaling", "shell.demo.scale_down"):
        try:
            module = __import__(module_name, fromlist=["DEMO_STEPS"])
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        extensions.extend(module.DEMO_STEPS)
    ops.load_all()
    return extensions
