"""``panefleet demo``: the whole job on a private tmux server, no agent CLI required.

Every ``$`` line of the transcript is a command the demo ran exactly as printed: a panefleet process of
its own, started from the folder the demo was started in, with the team's folder (``--cwd``), the tmux
server (``--tmux-socket``) and the environment it needs on its command line. Pasted into a shell in that
folder (after ``--keep``, which leaves the team and its server in place), each does the same again.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shell.run.process import run_process

# Exit codes a demo command may end with: ok, and "finished, but needs attention" (the debt steps).
EXPECTED_EXIT = (0, 3)


def _say(text: str, as_json: bool) -> None:
    if not as_json:
        sys.stdout.write(text.rstrip("\n") + "\n")
        sys.stdout.flush()


class StepFailed(Exception):
    """A demo command ended otherwise than the demo shows: the demo stops there."""

    def __init__(self, command: str, stderr: str | None) -> None:
        super().__init__(command)
        self.command = command
        self.stderr = stderr


def executable(cwd: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """The words that run this panefleet from a fresh shell in ``cwd`` (no virtual environment
    activated): ``panefleet`` when that name on PATH is this very script and not there because a
    virtual environment is active; else the script's path, relative when it lies under ``cwd``; else
    this Python with ``cli.py``."""
    candidates = (sys.argv[0], os.path.join(os.path.dirname(sys.executable), "panefleet"))
    script = next((os.path.abspath(c) for c in candidates
                   if os.path.basename(c) == "panefleet" and os.path.isfile(c) and os.access(c, os.X_OK)), None)
    if script is None:
        return (sys.executable, str(Path(__file__).resolve().parents[2] / "cli.py"))
    on_path = shutil.which("panefleet", path=environ.get("PATH", os.defpath))
    venv = environ.get("VIRTUAL_ENV")
    if on_path is not None and os.path.samefile(on_path, script) and not (
            venv and os.path.abspath(on_path).startswith(os.path.join(os.path.abspath(venv), ""))):
        return ("panefleet",)
    relative = os.path.relpath(script, cwd)
    if relative.split(os.sep)[0] == os.pardir:
        return (script,)
    return (relative if os.sep in relative else os.path.join(os.curdir, relative),)


def _audit_summary(path: Path) -> dict[str, Any]:
    """What one run's audit log (``shell/run/loop.py`` AuditLog) says: its operation, steps, tmux calls
    and outcome."""
    summary: dict[str, Any] = {"operation": None, "steps": 0, "tmuxCalls": 0, "status": None, "result": {}}
    with contextlib.suppress(OSError, ValueError), path.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("type") == "start":
                summary["operation"] = record.get("operation")
            elif record.get("type") == "entry":
                summary["steps"] += 1
                summary["tmuxCalls"] += record.get("step", {}).get("tool") == "tmux"
            elif record.get("type") == "done":
                outcome = record.get("decision", {}).get("outcome", {})
                summary["status"] = outcome.get("status")
                result = outcome.get("result")
                summary["result"] = result if isinstance(result, dict) else {}
    return summary


class Transcript:
    """Runs the demo's commands as printed, from ``cwd``, and records each one."""

    def __init__(self, *, words: tuple[str, ...], socket: str, workdir: str, cwd: str, env: dict[str, str],
                 audit_dir: Path, as_json: bool) -> None:
        self.words = words
        self.socket = socket
        self.workdir = workdir
        self.cwd = cwd
        self.env = env
        self.audit_dir = audit_dir
        self.as_json = as_json
        self.steps: list[dict[str, Any]] = []
        self.last_stderr: str | None = None

    def say(self, text: str) -> None:
        _say(text, self.as_json)

    def panefleet(self, *args: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Run ``panefleet ARGS --cwd WORKDIR --tmux-socket NAME`` with ``env`` set on its command line;
        answer its result (from its audit log)."""
        argv = (*self.words, *args, "--cwd", self.workdir, "--tmux-socket", self.socket)
        assigned = dict(env or {})
        line = " ".join([*(f"{k}={shlex.quote(v)}" for k, v in assigned.items()), shlex.join(argv)])
        before = set(self._audit_logs())
        self.say(f"\n$ {line}")
        code = self._run(argv, {**self.env, **assigned})
        runs = [_audit_summary(path) for path in sorted(set(self._audit_logs()) - before)]
        last = runs[-1] if runs else {"operation": None, "status": None, "result": {}}
        steps, tmux_calls = sum(r["steps"] for r in runs), sum(r["tmuxCalls"] for r in runs)
        self.steps.append({"command": line, "exitCode": code, "operation": last["operation"],
                           "status": last["status"], "steps": steps, "tmuxCalls": tmux_calls,
                           "result": last["result"]})
        self.say(f"(exit {code}, {last['status'] or 'no audit log'}; {steps} steps, {tmux_calls} tmux calls)")
        if code not in EXPECTED_EXIT:
            raise StepFailed(line, self.last_stderr)
        return dict(last["result"])

    def outside_change(self, *args: str, why: str) -> None:
        """Run ``tmux -L NAME ARGS``: a change made behind panefleet's back, as another program would make it
        (so not a panefleet step, which only pure/tmux/ builds), said by ``why``."""
        argv = ("tmux", "-L", self.socket, *args)
        self.say(f"\n({why})\n$ {shlex.join(argv)}")
        code = self._run(argv, self.env)
        self.steps.append({"command": shlex.join(argv), "exitCode": code, "operation": None,
                           "status": "ok" if code == 0 else "error", "steps": 1, "tmuxCalls": 1, "result": {}})
        if code != 0:
            raise StepFailed(shlex.join(argv), self.last_stderr)

    def _run(self, argv: tuple[str, ...], env: dict[str, str]) -> int:
        """Run one command: its output goes to the terminal, or with ``-o json`` its stderr is kept for
        the report of a command that fails."""
        out = subprocess.PIPE if self.as_json else None
        process = subprocess.Popen(argv, cwd=self.cwd, env=env, stdout=out, stderr=out, text=True)
        try:
            _, self.last_stderr = process.communicate()
        except KeyboardInterrupt:
            process.communicate()  # it got the same Ctrl-C: it undoes what it created (a second one stops it)
            raise
        return process.returncode

    def _audit_logs(self) -> list[Path]:
        try:
            return list(self.audit_dir.iterdir())
        except OSError:
            return []


def run_demo(*, keep: bool, socket: str | None, as_json: bool) -> int:
    from shell.run.loop import state_dir

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
    cwd = os.getcwd()
    # The commands' environment: the caller's, without what would point them elsewhere (the caller's own
    # tmux pane, oh-my-codex settings); every variable a command needs is on its own line.
    env = {k: v for k, v in os.environ.items()
           if k not in ("TMUX", "TMUX_PANE", "PANEFLEET_TMUX_SOCKET") and not k.startswith("OMX_")}
    own_audit = "PANEFLEET_STATE_DIR" not in env
    if own_audit:
        env["PANEFLEET_STATE_DIR"] = os.path.join(workdir, ".panefleet-state")
    words = executable(cwd, env)
    run = Transcript(words=words, socket=name, workdir=workdir, cwd=cwd, env=env,
                     audit_dir=state_dir(env) / "audit", as_json=as_json)
    team = "demo"
    code = 0
    try:
        _say(f"panefleet demo: private tmux server `tmux -L {name}`, team state in {workdir}", as_json)
        _say(f"Each `$` line below is run exactly as printed, from {cwd}"
             + (f" (the demo only adds PANEFLEET_STATE_DIR={env['PANEFLEET_STATE_DIR']}, so that their audit "
                "logs go with it)" if own_audit else "") + ".", as_json)
        run.panefleet("team", "init", team, "--new-session", "--worker-cli", "placeholder")
        run.panefleet("team", "status", team)
        for extra in _demo_extensions():
            extra(run, team)
            run.panefleet("team", "status", team)
        return code
    except StepFailed as failed:
        said = f":\n{failed.stderr.rstrip()}" if failed.stderr and failed.stderr.strip() else ""
        sys.stderr.write(f"panefleet demo: stopped: `{failed.command}` did not end as the demo expects{said}\n")
        code = 1
        return code
    finally:
        if as_json:
            sys.stdout.write(json.dumps({"ok": code == 0, "socket": name, "workdir": workdir, "cwd": cwd,
                                         "kept": keep, "steps": run.steps}) + "\n")
        if keep:
            server = f"tmux -L {shlex.quote(name)}"
            _say(f"\nThe demo is still running: {server} attach\nPasted into a shell in this folder, the commands "
                 f"above act on its team. Stop it: {server} kill-server; rm -r {shlex.quote(workdir)}", as_json)
        else:
            run_process("tmux", ("-L", name, "kill-server"), env=env)
            _remove_socket(name, env)
            shutil.rmtree(workdir, ignore_errors=True)
            _say(f"\ndemo server stopped and {workdir} removed: to try the commands above yourself, "
                 "run the demo with --keep", as_json)


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
    return extensions
