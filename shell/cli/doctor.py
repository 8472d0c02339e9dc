"""``panefleet doctor [TEAM] [--worker-cli CLI]``: whether tmux and the agent CLIs a team would launch can
start here — the facts gathered here, judged by ``pure/agents/doctor.py``. Exit 0 when nothing fails, 1
otherwise."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from shell.cli.args import add_output, complete_path, examples

VERSION_TIMEOUT_S = 15.0  # a CLI's --version (Codex's node launcher can take a few seconds on a cold cache)
MAX_FILE_BYTES = 1 << 20
SUMMARY = "whether tmux and the agent CLIs a team would launch can start here, with the fix for each"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "doctor", help=SUMMARY,
        description="Check tmux and every agent CLI a team would launch: found on PATH and which version; "
        "whether panefleet's screens were recorded with that version (another one is a warning); whether it is "
        "set up to start for this user (Codex: signed in or a model provider in $CODEX_HOME/config.toml; Claude: "
        "onboarding done, an API key approved or a sign-in, and not as root without IS_SANDBOX=1; Gemini: an auth "
        "type selected). One line each, with the fix. The CLIs: --worker-cli, else those TEAM's workers run, else "
        "the one OMX_TEAM_WORKER_CLI chooses (codex by default). Exit 0 when nothing fails, else 1.",
        epilog=examples("panefleet doctor", ("panefleet doctor --worker-cli claude", "one CLI"),
                        ("panefleet doctor alpha", "the CLIs team alpha's workers run")))
    p.add_argument("team", nargs="?", help="a team whose workers' CLIs to check")
    p.add_argument("--worker-cli", choices=("codex", "claude", "gemini"), help="check this CLI")
    complete_path(p.add_argument("--cwd", default=".", help="where to look for TEAM (default: .)"), directory=True)
    add_output(p)
    p.set_defaults(handler=cmd_doctor)


def clis_to_check(args: argparse.Namespace, env: dict[str, str]) -> tuple[str, ...]:
    from pure.agents.doctor import AGENT_CLIS

    if args.worker_cli:
        return (args.worker_cli,)
    chosen: list[str] = []
    if args.team:
        from shell.cli.team_home import locate

        config_file = Path(locate(args.team, args.cwd, env).team_dir) / "config.json"
        try:
            config = json.loads(config_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            config = {}
        workers = config.get("workers") if isinstance(config, dict) else None
        chosen = [str(w.get("worker_cli")) for w in workers or [] if isinstance(w, dict)]
    mode = env.get("OMX_TEAM_WORKER_CLI", "").strip().lower()
    if not chosen:
        chosen = [mode if mode in AGENT_CLIS else "codex"]
    return tuple(dict.fromkeys(cli for cli in chosen if cli in AGENT_CLIS))


def _version(path: str, env: dict[str, str], flag: str = "--version") -> str | None:
    try:
        done = subprocess.run([path, flag], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S,
                              env=env, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout or done.stderr).strip() or None


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def gather(clis: tuple[str, ...], env: dict[str, str]) -> list[Any]:
    from pure.agents import doctor

    home = env.get("HOME") or os.path.expanduser("~")
    tmux = shutil.which("tmux", path=env.get("PATH"))
    checks = [doctor.check_tmux(tmux, _version(tmux, env, "-V") if tmux else None)]
    for cli in clis:
        path = shutil.which(cli, path=env.get("PATH"))
        facts, home = setup_facts(cli, path, _version(path, env) if path else None, env)
        checks.extend(doctor.check_cli(facts, home))
    return checks


def setup_facts(cli: str, path: str | None, version_text: str | None, env: dict[str, str]) -> tuple[Any, str]:
    """What the checks of ``cli`` read (its set-up files, the environment, the user id), and the home
    folder they were read from."""
    from pure.agents import doctor

    home = env.get("HOME") or os.path.expanduser("~")
    files = {file: _read(file) for file in doctor.setup_files(cli, env, home)}
    return doctor.CliFacts(cli=cli, path=path, version_text=version_text, files=files, env=env,
                           euid=os.geteuid()), home


def cmd_doctor(args: argparse.Namespace) -> int:
    from pure.agents.doctor import summary
    from shell.cli.operation import emit_json

    env = dict(os.environ)
    checks = gather(clis_to_check(args, env), env)
    ok = summary(tuple(checks))
    if args.output == "json":
        emit_json({"ok": ok, "checks": [{"level": c.level, "subject": c.subject, "text": c.text, "fix": c.fix}
                                        for c in checks]})
    else:
        for check in checks:
            line = f"{check.level:<5} {check.subject:<7} {check.text}"
            sys.stdout.write(line + (f"\n{'':14}fix: {check.fix}" if check.fix else "") + "\n")
        sys.stdout.write("ready: every check passed\n" if ok else "not ready: fix the lines marked fail\n")
    return 0 if ok else 1
