"""The machine a team lives on, checked before a command runs its program there (docs/hosts.md, "A team on
a host"): the host is identified over its master connection (``shell/run/hosts.py`` ``identify``: its machine
id, and the host keys ``known_hosts`` holds for it, one of which ``ssh`` verified), and compared with what the
team's registry entry recorded when ``team init --host`` made it there.

* a host that cannot be reached, refuses the login or shows another key than ``known_hosts`` records: the
  fault ``ssh`` gives, naming the host (and the new key's fingerprint);
* another machine behind the same name (a new machine id), or one whose key was replaced in ``known_hosts``
  since (none of the recorded fingerprints is known now): refused, naming what changed, since the panes,
  processes and files the team's records name are not that machine's.

When a check fails nothing of the team's has been read or changed there; the one call that read the host
may have installed panefleet's placeholder agent in its user's cache (:data:`_LOGIN`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from attrs import frozen
from returns.result import Failure, Result, Success

from shell.cli.environment import is_machine_fact, recorded_env
from shell.run import hosts
from shell.run.remote import SSH_CONFIG_ENV
from shell.store.registry import RegisteredTeam


@frozen
class Login:
    """What one call on a host at a command's start reads there: the host's identity, the machine facts of a
    login there (``shell/cli/environment.py``), and the facts a scale-up needs (:func:`agent_facts`)."""

    identity: hosts.HostIdentity
    env: dict[str, str]
    facts: tuple[str, ...]


# The host's identity, then NUL, the login's environment, NUL, where each agent CLI and node are on its PATH
# (an empty line: not found), where panefleet's placeholder agent now is there, and which of the worker shells
# ($@) exist. The placeholder agent's text comes on standard input and is installed (atomically, when it
# changed) as ~/.cache/panefleet/placeholder_agent.sh, so a team there can run it as one here does.
_LOGIN = (f'{hosts.IDENTIFY_PROGRAM}; printf "\\0"; env; printf "\\0"; '
          'for c in codex claude gemini node; do command -v "$c" || echo; done; '
          'p="$HOME/.cache/panefleet/placeholder_agent.sh"; t=$(cat; printf .); t=${t%.}; '
          'if [ -x "$p" ] && [ "$(cat -- "$p"; printf .)" = "$t." ]; then echo "$p"; '
          'elif mkdir -p -- "${p%/*}" && printf "%s" "$t" >"$p.$$" && chmod 755 "$p.$$" && mv -f -- "$p.$$" "$p"; '
          'then echo "$p"; else rm -f -- "$p.$$"; echo; fi; '
          'for s in "$@"; do [ -f "$s" ] && printf "%s\\n" "$s"; done')


def login(destination: str, env: Mapping[str, str]) -> Result[Login, str]:
    """:class:`Login` on ``destination``, read once per process, or why it could not be read."""
    return _login(destination, tuple(sorted(env.items())))


@functools.cache
def _login(destination: str, environ: tuple[tuple[str, str], ...]) -> Result[Login, str]:
    from pure.omx.startup_script import BASH_CANDIDATES, ZSH_CANDIDATES
    from shell.placeholder import PLACEHOLDER_AGENT

    env = dict(environ)
    opened = hosts.Host.open(destination, hosts.shared_socket_dir(env), config_file=env.get(SSH_CONFIG_ENV) or None)
    if isinstance(opened, Failure):
        return Failure(str(opened.failure()))
    host = opened.unwrap()
    try:
        answer = hosts.call(host, ["sh", "-c", _LOGIN, "sh", *ZSH_CANDIDATES, *BASH_CANDIDATES], env,
                            stdin=PLACEHOLDER_AGENT.read_bytes())
        if isinstance(answer, Failure):
            return Failure(str(answer.failure()))
        who, machine, facts = (answer.unwrap().stdout.split("\0") + ["", ""])[:3]
        identity = hosts.identity_from(host, who, env)
        if isinstance(identity, Failure):
            return Failure(str(identity.failure()))
        lines = dict(line.split("=", 1) for line in machine.splitlines() if "=" in line)
        return Success(Login(identity=identity.unwrap(),
                             env={k: v for k, v in recorded_env(lines).items() if is_machine_fact(k)},
                             facts=tuple(facts.split("\n"))))
    finally:
        if host.owns_socket_dir:
            hosts.close(host, env)


def identify(destination: str, env: Mapping[str, str]) -> Result[hosts.HostIdentity, str]:
    """The host's identity now, or why it could not be read."""
    found = login(destination, env)
    return Failure(found.failure()) if isinstance(found, Failure) else Success(found.unwrap().identity)


def agent_facts(destination: str, env: Mapping[str, str]) -> tuple[dict[str, str], str, tuple[str, ...]]:
    """Where each agent CLI and node are on the host's PATH, where panefleet's placeholder agent is installed
    there ("" when it could not be: a scale-up that would start it is refused, saying so), and which worker
    shells exist there (as ``shell/cli/scale_up.py`` finds them here). Raises ``ValueError`` naming the host's
    fault."""
    found = login(destination, env)
    if isinstance(found, Failure):
        raise ValueError(found.failure())
    lines = list(found.unwrap().facts)
    codex, claude, gemini, node, placeholder = (lines + [""] * 5)[:5]
    shells = tuple(line for line in lines[5:] if line)
    return ({"codex": codex, "claude": claude, "gemini": gemini, "placeholder": placeholder}, node or "node",
            shells)


def check(destination: str, entry: RegisteredTeam | None, env: Mapping[str, str]) -> Result[hosts.HostIdentity, str]:
    """The host's identity, when it is the machine ``entry`` recorded (any reachable host when there is no
    entry yet: a team being made); else why not."""
    found = identify(destination, env)
    if isinstance(found, Failure) or entry is None:
        return found
    now = found.unwrap()
    if entry.machine_id and now.machine_id != entry.machine_id:
        return Failure(f"host_replaced:{destination}: its machine id is {now.machine_id or 'unreadable'}, the team "
                       f"was made on {entry.machine_id}: its panes and files are not there (fix: check the host; "
                       "if the team is gone with the old machine, remove its registry entry)")
    if entry.host_keys and not set(entry.host_keys) & set(now.host_keys):
        return Failure(f"host_key_replaced:{destination}: known_hosts now holds {', '.join(now.host_keys) or 'no key'} "
                       f"for it, the team was made when it held {', '.join(entry.host_keys)} (fix: check the new key "
                       "with the host's owner; if it is the same machine, run `panefleet team init --host` again "
                       "to record it)")
    return Success(now)


def placed_env(recorded: Mapping[str, str], destination: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The recorded environment of a request for a team on ``destination``: the ``OMX_*`` choices made here,
    and what describes the machine (``HOME``, ``SHELL``, ``CODEX_HOME``, the proxies: ``shell/cli/environment.py``)
    as a login there has them, so that a worker's shell, rc file and CLI home are that machine's (none when
    the host is not reached: the run that follows says why)."""
    chosen = {k: v for k, v in recorded.items() if not is_machine_fact(k)}
    found = login(destination, environ)
    machine = found.unwrap().env if not isinstance(found, Failure) else {}
    return dict(sorted({**chosen, **machine}.items()))
