"""The machine a team lives on, checked before a command runs its program there (docs/hosts.md, "A team on
a host"): the host is identified over its master connection (``shell/run/hosts.py`` ``identify``: its machine
id, and the host keys ``known_hosts`` holds for it, one of which ``ssh`` verified), and compared with what the
team's registry entry recorded when ``team init --host`` made it there.

* a host that cannot be reached, refuses the login or shows another key than ``known_hosts`` records: the
  fault ``ssh`` gives, naming the host (and the new key's fingerprint);
* another machine behind the same name (a new machine id), or one whose key was replaced in ``known_hosts``
  since (none of the recorded fingerprints is known now): refused, naming what changed, since the panes,
  processes and files the team's records name are not that machine's.

Nothing has run on the host when a check fails.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from returns.result import Failure, Result, Success

from shell.cli.environment import is_machine_fact, recorded_env
from shell.run import hosts
from shell.run.remote import SSH_CONFIG_ENV
from shell.store.registry import RegisteredTeam


def identify(destination: str, env: Mapping[str, str]) -> Result[hosts.HostIdentity, str]:
    """The host's identity now, or why it could not be read."""
    opened = hosts.Host.open(destination, hosts.shared_socket_dir(env), config_file=env.get(SSH_CONFIG_ENV) or None)
    if isinstance(opened, Failure):
        return Failure(str(opened.failure()))
    host = opened.unwrap()
    found = hosts.identify(host, env)
    if host.owns_socket_dir:
        hosts.close(host, env)
    return Failure(str(found.failure())) if isinstance(found, Failure) else Success(found.unwrap())


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
    as a login there has them, so that a worker's shell, rc file and CLI home are that machine's."""
    chosen = {k: v for k, v in recorded.items() if not is_machine_fact(k)}
    return dict(sorted({**chosen, **_machine_env(destination, tuple(sorted(environ.items())))}.items()))


@functools.cache
def _machine_env(destination: str, environ: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The machine facts of a login on ``destination`` (read once per process); none when it is not reached
    (the run that follows says why)."""
    env = dict(environ)
    opened = hosts.Host.open(destination, hosts.shared_socket_dir(env), config_file=env.get(SSH_CONFIG_ENV) or None)
    if isinstance(opened, Failure):
        return {}
    answer = hosts.call(opened.unwrap(), ["env"], env)
    if isinstance(answer, Failure) or answer.unwrap().exit_code != 0:
        return {}
    lines = dict(line.split("=", 1) for line in answer.unwrap().stdout.splitlines() if "=" in line)
    return {k: v for k, v in recorded_env(lines).items() if is_machine_fact(k)}
