"""Run an agent scenario inside a fresh network + pid namespace, with only loopback up.

Outside (the test process): :func:`run_scenario` starts
``unshare -n -p -f --mount-proc --kill-child bash -c 'ip link set lo up && <python> -m tests.agents.scenarios NAME PARAMS'``
with a time bound and returns the scenario's JSON result. Nothing inside can reach any address but
127.0.0.1, and when the namespace's first process ends the kernel kills every process left in it
(Codex's ``app-server`` daemon, the tmux server, the agent CLIs), also on a timeout: unshare is
killed, ``--kill-child`` takes its child with it, and the namespace goes with its first process.

Inside (the scenario): :class:`Sandbox` is the world one scenario gets: a temporary ``HOME`` with
``~/.claude.json`` and ``~/.gemini/settings.json`` (Claude Code and Gemini CLI reach the mock through
their base-URL variables), a ``CODEX_HOME`` whose ``config.toml`` points at the mock model server
(``tests/agents/mock_model.py``), a fresh never-trusted git repository, a private tmux server with a
leader pane, and the ``panefleet`` CLI (``cli.py``, as ``tests/omx_up/test_real_tmux.py`` runs it).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agents.mock_model import MockModel

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "cli.py"
# The pinned CLIs `./dev test` installs into the agent cache (see `install_agents` in ./dev).
PINNED = {"codex": "0.169.0", "claude": "2.1.328", "gemini": "0.61.0"}
API_KEY = "sk-ant-api03-panefleet-mock-key-0123456789abcdefghij"
GEMINI_API_KEY = "panefleet-mock-gemini-key"
# Gemini CLI uses GOOGLE_GEMINI_BASE_URL only with this auth type selected and GEMINI_API_KEY set
# (../shared/spec/agents.md); without a selected type it stops at its sign-in dialog.
GEMINI_SETTINGS = '{"security": {"auth": {"selectedType": "gemini-api-key"}}}\n'
WORK_ENV = "PANEFLEET_SANDBOX_WORK"  # the scenario's work directory, made and removed outside


def agent_cache() -> Path:
    default = Path.home() / ".cache" / "panefleet" / "agents"
    return Path(os.environ.get("PANEFLEET_AGENT_CACHE") or default)


def agent_bin() -> Path:
    return agent_cache() / "node_modules" / ".bin"


def missing_prerequisites(clis: Sequence[str] | None = None) -> list[str]:
    """What keeps the agent scenarios (of ``clis``, default all pinned) from running here ([] when they can)."""
    missing = [f"{cli} is not installed in {agent_bin()} (./dev test installs it)"
               for cli in (clis or PINNED) if not os.access(agent_bin() / cli, os.X_OK)]
    for tool in ("tmux", "git", "node", "unshare", "ip"):
        if shutil.which(tool) is None:
            missing.append(f"{tool} is not on PATH")
    if os.geteuid() != 0:
        missing.append("network namespaces (unshare -n) need root")
    return missing


Scenario = Callable[[Path, dict[str, Any]], dict[str, Any]]
SCENARIOS: dict[str, Scenario] = {}  # filled by @scenario in tests/agents/flows.py and record_screens.py


def scenario(name: str) -> Callable[[Scenario], Scenario]:
    """Register a function ``(work_dir, params) -> JSON result`` to run inside the namespace."""
    def register(function: Scenario) -> Scenario:
        SCENARIOS[name] = function
        return function
    return register


# ------------------------------------------------------------------------------------------ outside


class ScenarioError(AssertionError):
    """The scenario did not produce a result: it crashed, or ran out of time."""


def run_scenario(name: str, params: Mapping[str, Any] | None = None, timeout_s: float = 240.0) -> dict[str, Any]:
    """Run scenario ``name`` (see ``tests/agents/scenarios.py``) in a fresh namespace; its JSON result.

    The result always carries ``_log`` (the scenario's stderr tail) for failure messages."""
    # Not under /tmp: Codex refuses to put its helper binaries into a CODEX_HOME below the temporary
    # directory and says so on screen, which a user's ~/.codex never shows.
    base = Path(os.environ.get("PANEFLEET_SANDBOX_ROOT") or Path.home() / ".cache" / "panefleet" / "sandboxes")
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pf-agents-", dir=base))
    try:
        # bash stays the namespace's first process (no exec): it reaps the orphans reparented to it
        # (the tmux server, Codex's app-server daemon); when it exits, the kernel kills the rest.
        inner = (f"ip link set lo up && {shlex.quote(sys.executable)} -m tests.agents.scenarios "
                 f"{shlex.quote(name)} {shlex.quote(json.dumps(dict(params or {})))}; exit $?")
        argv = ["unshare", "-n", "-p", "-f", "--mount-proc", "--kill-child", "bash", "-c", inner]
        env = {**os.environ, WORK_ENV: str(work)}
        started = time.monotonic()
        try:
            done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            log = _text(exc.stderr)
            raise ScenarioError(f"scenario {name} ran out of its {timeout_s:.0f} s (killed with its namespace); "
                                f"last output:\n{log[-4000:]}") from None
        log = done.stderr
        result_path = work / "result.json"
        if not result_path.exists():
            raise ScenarioError(f"scenario {name} exited {done.returncode} without a result:\n"
                                f"stdout: {done.stdout[-2000:]}\nstderr: {log[-6000:]}")
        result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
        result["_log"] = log[-6000:]
        result["_seconds"] = round(time.monotonic() - started, 1)
        if "_error" in result:
            raise ScenarioError(f"scenario {name} failed inside the sandbox: {result['_error']}\n{log[-6000:]}")
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _text(value: str | bytes | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


# ------------------------------------------------------------------------------------------- inside


@dataclass(frozen=True)
class CliResult:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        """The one JSON object a ``-o json`` command prints, or None when stdout is not that."""
        lines = self.stdout.strip().splitlines()
        if len(lines) != 1:
            return None
        try:
            return json.loads(lines[0])
        except json.JSONDecodeError:
            return None

    def as_json(self) -> dict[str, Any]:
        return {"args": list(self.args), "code": self.code, "stdout": self.stdout, "stderr": self.stderr,
                "json": self.json}


def log(message: str) -> None:
    """Progress on stderr: the outside shows its tail when a scenario fails."""
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


class Sandbox:
    """One scenario's private world (see the module docstring). Use as a context manager."""

    def __init__(self, work: Path, *, answer: str = "Acknowledged.", delay_s: float = 0.0, onboarded: bool = True,
                 key_approved: bool = True, codex_config: str | None = None, columns: int = 200) -> None:
        self.work = work
        self.columns = columns  # the width of the leader's window, so of every window and pane made here
        self.home = work / "home"
        self.codex_home = work / "codex-home"
        self.repo = work / "repo"
        self.state_dir = work / "pf-state"
        self.socket = f"pf-agents-{uuid.uuid4().hex[:10]}"
        self.mock = MockModel(answer=answer, delay_s=delay_s, log_path=work / "requests.jsonl")
        self.onboarded = onboarded
        self.key_approved = key_approved
        self.codex_config = codex_config
        self.env: dict[str, str] = {}
        self.leader = ""

    # ------------------------------------------------------------------ set-up

    def __enter__(self) -> Sandbox:
        self.mock.start()
        for path in (self.home, self.codex_home, self.repo, self.state_dir, self.work / "tmux"):
            path.mkdir(parents=True, exist_ok=True)
        self.env = self._environment()
        self.write_claude_json(onboarded=self.onboarded, key_approved=self.key_approved)
        self.write_codex_config(self.codex_config)
        self.write_gemini_settings()
        (self.home / ".gitconfig").write_text("[user]\n\tname = panefleet test\n\temail = test@panefleet.invalid\n"
                                              "[init]\n\tdefaultBranch = main\n", encoding="utf-8")
        self.git("init", "-q")
        (self.repo / "README.md").write_text("# scratch repository for agent tests\n", encoding="utf-8")
        self.git("add", "README.md")
        self.git("commit", "-q", "-m", "initial commit")
        self.leader = self.tmux("new-session", "-d", "-s", "lead", "-x", str(self.columns), "-y", "50", "-c", str(self.repo),
                                "-P", "-F", "#{pane_id}", "sleep 100000").stdout.strip()
        log(f"sandbox ready: mock {self.mock.base_url}, tmux -L {self.socket}, leader {self.leader}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.tmux("kill-server", check=False)
        self.mock.stop()

    def _environment(self) -> dict[str, str]:
        node = shutil.which("node")
        path = [str(agent_bin())]
        if node:
            path.append(str(Path(node).parent))
        path.append(os.environ.get("PATH", os.defpath))
        return {
            "PATH": ":".join(path),
            "HOME": str(self.home),
            "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash",
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "TMUX_TMPDIR": str(self.work / "tmux"),
            "CODEX_HOME": str(self.codex_home),
            "ANTHROPIC_BASE_URL": self.mock.base_url,
            "ANTHROPIC_API_KEY": API_KEY,
            "GOOGLE_GEMINI_BASE_URL": self.mock.base_url,
            "GEMINI_API_KEY": GEMINI_API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "IS_SANDBOX": "1",
            "PANEFLEET_STATE_DIR": str(self.state_dir),
            "OMX_TEAM_SCALING_ENABLED": "1",
            # a loaded 2-core machine can take longer than the 45 s default to start several CLIs
            "OMX_TEAM_READY_TIMEOUT_MS": "150000",
        }

    def write_claude_json(self, *, onboarded: bool = True, key_approved: bool = True) -> None:
        """``~/.claude.json``; Claude Code stores an approved key by its last 20 characters."""
        data: dict[str, Any] = {}
        if onboarded:
            data["hasCompletedOnboarding"] = True
        if key_approved:
            data["customApiKeyResponses"] = {"approved": [API_KEY[-20:]], "rejected": []}
        (self.home / ".claude.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    def mock_codex_config(self) -> str:
        return ('model = "mock-model"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "mock"\n'
                f'base_url = "{self.mock.base_url}/v1"\nwire_api = "responses"\n')

    def write_codex_config(self, text: str | None = None) -> None:
        (self.codex_home / "config.toml").write_text(self.mock_codex_config() if text is None else text,
                                                     encoding="utf-8")

    def write_gemini_settings(self, text: str = GEMINI_SETTINGS) -> None:
        (self.home / ".gemini").mkdir(exist_ok=True)
        (self.home / ".gemini" / "settings.json").write_text(text, encoding="utf-8")

    # ------------------------------------------------------------------ tools

    def run(self, argv: Sequence[str], *, cwd: Path | None = None, check: bool = True, timeout_s: float = 60,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(list(argv), cwd=cwd or self.repo, env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=timeout_s)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
        return done

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(["git", *args], check=check)

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(["tmux", "-L", self.socket, *args], check=check, timeout_s=20)

    def pf(self, *args: str, timeout_s: float = 300, env: Mapping[str, str] | None = None) -> CliResult:
        """``panefleet ARGS --tmux-socket NAME`` run for real; its exit code and output."""
        argv = [sys.executable, str(CLI), *args, "--tmux-socket", self.socket]
        started = time.monotonic()
        try:
            done = self.run(argv, check=False, timeout_s=timeout_s, env=env)
            result = CliResult(tuple(args), done.returncode, done.stdout, done.stderr)
        except subprocess.TimeoutExpired as exc:
            result = CliResult(tuple(args), -9, _text(exc.stdout),
                               _text(exc.stderr) + f"\n(killed after {timeout_s:.0f} s)")
        log(f"panefleet {' '.join(args)} -> {result.code} in {time.monotonic() - started:.1f} s")
        return result

    def capture(self, pane: str, *, check: bool = False) -> str:
        done = self.tmux("capture-pane", "-p", "-t", pane, check=check)
        return done.stdout if done.returncode == 0 else ""

    def panes(self) -> dict[str, dict[str, Any]]:
        """Every pane of the server: pane id -> {dead, pid, command, owner}."""
        out = self.tmux("list-panes", "-a", "-F", "#{pane_id}\t#{pane_dead}\t#{pane_pid}\t#{pane_current_command}",
                        check=False).stdout
        rows: dict[str, dict[str, Any]] = {}
        for line in out.splitlines():
            pane, dead, pid, command = line.split("\t")
            rows[pane] = {"dead": dead == "1", "pid": int(pid), "command": command, "owner": self.owner(pane)}
        return rows

    def owner(self, pane: str) -> str:
        return self.tmux("show-option", "-qv", "-p", "-t", pane, "@omx_team_pane_owner_id", check=False).stdout.strip()

    def new_pane(self, command: str, *, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> str:
        """A new window (``columns`` x 50) running ``command`` through bash; its pane id."""
        args = ["new-window", "-d", "-P", "-F", "#{pane_id}", "-c", str(cwd or self.repo)]
        for key, value in (env or {}).items():
            args += ["-e", f"{key}={value}"]
        return self.tmux(*args, command).stdout.strip()

    def wait_screen(self, pane: str, predicate: Callable[[str], bool], timeout_s: float,
                    poll_s: float = 0.1) -> tuple[str, float | None]:
        """Poll ``capture-pane`` until ``predicate(screen)``; (last screen, seconds taken or None)."""
        started = time.monotonic()
        screen = ""
        while True:
            screen = self.capture(pane)
            if predicate(screen):
                return screen, round(time.monotonic() - started, 2)
            if time.monotonic() - started >= timeout_s:
                return screen, None
            time.sleep(poll_s)

    def agent_processes(self, cli: str) -> list[dict[str, Any]]:
        """The processes of this namespace (``--mount-proc``: its own /proc) running ``cli`` from the
        agent cache, e.g. both node processes of a Gemini CLI: [{pid, sid, argv}]. ``sid``: the session,
        which is the pid of the pane's first process (tmux makes each pane a session)."""
        program = str(agent_bin() / cli)
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
                stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue  # it ended while the list was read
            if program in argv[:3]:
                sid = int(stat.rsplit(")", 1)[1].split()[3])  # after "pid (comm)": state ppid pgrp session
                found.append({"pid": int(entry.name), "sid": sid, "argv": [a for a in argv if a][:6]})
        return found

    def worker_dirs(self, team: str) -> list[str]:
        workers = self.repo / ".omx" / "state" / "team" / team / "workers"
        return sorted(p.name for p in workers.glob("worker-*")) if workers.is_dir() else []

    def team_config(self, team: str) -> Any:
        path = self.repo / ".omx" / "state" / "team" / team / "config.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
