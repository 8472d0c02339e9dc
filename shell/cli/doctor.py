"""``panefleet doctor [TEAM] [--worker-cli CLI] [--host DEST]``: whether tmux and the agent CLIs a team would
launch can start here, or on another machine over OpenSSH (docs/hosts.md) — the facts gathered here or
there, judged by ``pure/agents/doctor.py`` (and the host by ``pure/hosts.py``). Exit 0 when nothing fails, 1
otherwise."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shell.cli.args import add_output, complete_path, examples

if TYPE_CHECKING:
    from returns.result import Result

    from pure.agents.doctor import Check, CliFacts
    from pure.hosts import HostFault
    from shell.run.hosts import Host

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
        epilog=examples("panefleet doctor", ("panefleet doctor alpha", "the CLIs team alpha's workers run"),
                        ("panefleet doctor --host me@build1", "the same on another machine, over ssh")))
    p.add_argument("team", nargs="?", help="a team whose workers' CLIs to check")
    p.add_argument("--worker-cli", choices=("codex", "claude", "gemini"), help="check this CLI")
    p.add_argument("--host", metavar="DEST", help="check another machine instead, over ssh: an OpenSSH destination "
                   "([user@]host or a ~/.ssh/config alias); first whether it can be reached without a prompt, its "
                   "host key known and its login shell a POSIX one")
    complete_path(p.add_argument("--ssh-config", metavar="FILE", help="the ssh configuration to read instead of "
                                 "~/.ssh/config (ssh -F)"))
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


def gather_on_host(destination: str, config_file: str | None, clis: tuple[str, ...],
                   env: dict[str, str]) -> list[Check]:
    """The same checks on another machine: first the host itself (``shell/run/hosts.py`` ``identify``),
    then tmux and each CLI as its login session there finds them."""
    from returns.result import Failure

    from pure.agents import doctor
    from shell.run import hosts

    opened = hosts.Host.open(destination, config_file=config_file)
    if isinstance(opened, Failure):
        return [_host_failed(opened.failure(), destination)]
    host = opened.unwrap()
    try:
        identity = hosts.identify(host, env)
        if isinstance(identity, Failure):
            return [_host_failed(identity.failure(), destination)]
        found = identity.unwrap()
        keys = ", ".join(found.host_keys) or "as ssh verified it"
        checks = [doctor.Check(level="ok", subject="host", text=f"{destination}: {found.name}, machine "
                               f"{found.machine_id[:12]}, host key {keys}, login shell {found.login_shell}")]
        facts = _remote_facts(host, clis, env)
    finally:
        hosts.close(host, env)
    if isinstance(facts, Failure):
        return [*checks, _host_failed(facts.failure(), destination)]
    home, tmux, cli_facts = facts.unwrap()
    checks.append(doctor.check_tmux(*tmux))
    for each in cli_facts:
        checks.extend(doctor.check_cli(each, home))
    return checks


def _host_failed(fault: HostFault, destination: str) -> Check:
    from pure.agents import doctor
    from pure.hosts import FAULT_FIX

    return doctor.Check(level="fail", subject="host", text=str(fault),
                        fix=FAULT_FIX[fault.kind].replace("HOST", destination))


# On the host: for each tool, where its login session finds it, then what it says its version is; then for
# each set-up file whether it is there and its text (at most $1 bytes). Each field NUL-terminated, so that
# no value can pass for another.
_REMOTE_FACTS = r"""
size=$1; count=$2; shift 2
i=0
while [ "$i" -lt "$count" ]; do
  tool=$1; shift; i=$((i + 1))
  found=$(command -v "$tool" 2>/dev/null) || found=
  printf '%s\0' "$found"
  if [ -z "$found" ]; then printf '\0'
  elif [ "$tool" = tmux ]; then printf '%s\0' "$("$found" -V 2>&1 </dev/null)"
  else printf '%s\0' "$("$found" --version 2>&1 </dev/null)"; fi
done
for file in "$@"; do
  if [ -r "$file" ] && [ -f "$file" ]; then printf '1\0'; head -c "$size" "$file"; printf '\0'; else printf '0\0\0'; fi
done
"""


def _remote_facts(host: Host, clis: tuple[str, ...], env: dict[str, str]) -> Result[
        tuple[str, tuple[str | None, str | None], list[CliFacts]], HostFault]:
    """What the checks read, as the host's login session has it: its home, tmux's path and version, and
    each CLI's facts (path, version, set-up files, environment, user id)."""
    from returns.result import Failure, Success

    from pure.agents import doctor
    from shell.run import hosts

    first = hosts.call(host, ["sh", "-c", 'printf "%s\\0" "$HOME" "$(id -u)"; env -0'], env)
    if isinstance(first, Failure):
        return Failure(first.failure())
    fields = first.unwrap().stdout.split("\0")
    home, euid_text = fields[0], fields[1]
    host_env = dict(item.partition("=")[::2] for item in fields[2:] if "=" in item)
    wanted = [file for cli in clis for file in doctor.setup_files(cli, host_env, home)]
    tools = ("tmux", *clis)
    second = hosts.call(host, ["sh", "-c", _REMOTE_FACTS, "sh", str(MAX_FILE_BYTES), str(len(tools)), *tools, *wanted],
                         env, timeout=VERSION_TIMEOUT_S * (len(tools) + 1))
    if isinstance(second, Failure):
        return Failure(second.failure())
    parts = second.unwrap().stdout.split("\0")
    found = {tool: (parts[2 * i] or None, parts[2 * i + 1] or None) for i, tool in enumerate(tools)}
    rest = parts[2 * len(tools):]
    files = {file: (rest[2 * i + 1] if rest[2 * i] == "1" else None) for i, file in enumerate(wanted)}
    euid = int(euid_text) if euid_text.isdigit() else 1000
    return Success((home, found["tmux"], [
        doctor.CliFacts(cli=cli, path=found[cli][0], version_text=found[cli][1], env=host_env, euid=euid,
                        files={file: files[file] for file in doctor.setup_files(cli, host_env, home)})
        for cli in clis]))


def cmd_doctor(args: argparse.Namespace) -> int:
    from pure.agents.doctor import summary
    from shell.cli.operation import emit_json

    env = dict(os.environ)
    if args.host is not None:
        checks = gather_on_host(args.host, args.ssh_config, clis_to_check(args, env), env)
    else:
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
