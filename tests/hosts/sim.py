"""Simulated hosts: OpenSSH's real ``sshd``, each on its own port of 127.0.0.1 in mount and UTS namespaces of
its own (its own ``/run``, ``/tmp`` and so tmux server, host name, ``/etc/machine-id`` and login shell), all
inside one network namespace
with only loopback up, made for one scenario and gone with it.

Outside (the test): :func:`run_scenario` starts ``unshare -n -p -f --mount-proc --kill-child`` around
``python -m tests.hosts.scenarios NAME PARAMS`` with a time bound and returns the scenario's JSON result. Inside,
a scenario gets a :class:`World`: a ``HOME`` whose ``~/.ssh/config`` names each host by an alias (its port,
the key the world generated, a ``known_hosts`` of its own), and :meth:`World.host` to start one. When the
namespace's first process ends, the kernel ends every process left in it (sshd, ssh masters).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULT_ENV = "PANEFLEET_HOSTS_RESULT"

Scenario = Callable[["World", dict[str, Any]], dict[str, Any]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str) -> Callable[[Scenario], Scenario]:
    def register(function: Scenario) -> Scenario:
        SCENARIOS[name] = function
        return function
    return register


def missing_prerequisites() -> list[str]:
    """What keeps simulated hosts from running here ([] when they can)."""
    missing = [f"{tool} is not installed" for tool in ("ssh", "ssh-keygen", "unshare", "ip")
               if shutil.which(tool) is None]
    if not Path("/usr/sbin/sshd").exists():
        missing.append("/usr/sbin/sshd is not installed (openssh-server; ./dev test installs it)")
    if os.geteuid() != 0:
        missing.append("network and mount namespaces (unshare -n -m) need root")
    return missing


# ------------------------------------------------------------------------------------------ outside


def run_scenario(name: str, params: Mapping[str, Any] | None = None, timeout_s: float = 90.0) -> dict[str, Any]:
    # not under /tmp: each simulated host has a /tmp of its own bound over it, which would hide the world
    work = Path(tempfile.mkdtemp(prefix="pf-hosts-", dir=os.environ.get("PANEFLEET_SANDBOX_ROOT") or "/var/tmp"))
    result = work / "result.json"
    try:
        inner = (f"ip link set lo up && {shlex.quote(sys.executable)} -m tests.hosts.scenarios {shlex.quote(name)} "
                 f"{shlex.quote(json.dumps(dict(params or {})))}; exit $?")
        argv = ["unshare", "-n", "-p", "-f", "--mount-proc", "--kill-child", "bash", "-c", inner]
        env = {**os.environ, RESULT_ENV: str(result), "TMPDIR": str(work)}
        try:
            done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"hosts scenario {name} ran out of its {timeout_s:.0f} s") from None
        if not result.exists():
            raise AssertionError(f"hosts scenario {name} exited {done.returncode} without a result:\n"
                                 f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
        answer: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
        if "_error" in answer:
            raise AssertionError(f"hosts scenario {name} failed inside:\n{answer['_error']}\n{done.stderr[-3000:]}")
        return answer
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------------------------- inside


class SimHost:
    """One simulated host: its alias in ``~/.ssh/config``, its port, its sshd."""

    def __init__(self, world: World, alias: str, port: int, login_shell: str, authorized: bool,
                 session_env: dict[str, str] | None = None) -> None:
        self.world, self.alias, self.port, self.login_shell = world, alias, port, login_shell
        self.session_env = session_env or {}  # set in every session (sshd's SetEnv), as a login's profile would
        self.accepted = world.user_key if authorized else world.other_key
        self.dir = world.dir / alias
        self.dir.mkdir()
        self.host_key = self.dir / "host_key"
        world.keygen(self.host_key)
        self.machine_id = os.urandom(16).hex()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> SimHost:
        config = self.dir / "sshd_config"
        config.write_text("\n".join([
            "ListenAddress 127.0.0.1", f"Port {self.port}", f"HostKey {self.host_key}",
            f"AuthorizedKeysFile {self.accepted}.pub", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password", "StrictModes no", "UsePAM no",
            f"PidFile {self.dir / 'sshd.pid'}", "LogLevel ERROR", "MaxStartups 100",
            *(["SetEnv " + " ".join(f'{name}="{value}"' for name, value in self.session_env.items())]
              if self.session_env else []), ""]))  # one line: sshd takes the first SetEnv only
        (self.dir / "machine-id").write_text(self.machine_id + "\n")
        passwd = self.dir / "passwd"
        lines = Path("/etc/passwd").read_text().splitlines()
        (self.dir / "home").mkdir(exist_ok=True)  # the login's own home: none of this machine's start-up files
        passwd.write_text("\n".join(_with_login(line, self.login_shell, str(self.dir / "home")) for line in lines)
                          + "\n")
        (self.dir / "tmp").mkdir(exist_ok=True)
        (self.dir / "tmp").chmod(0o1777)
        setup = (f"mount -t tmpfs tmpfs /run && mkdir -p /run/sshd && hostname {shlex.quote(self.alias)}"
                 f" && mount --bind {shlex.quote(str(self.dir / 'tmp'))} /tmp"
                 f" && mount --bind {shlex.quote(str(passwd))} /etc/passwd"
                 f" && mount --bind {shlex.quote(str(self.dir / 'machine-id'))} /etc/machine-id"
                 f" && exec /usr/sbin/sshd -D -e -f {shlex.quote(str(config))}")
        log = open(self.dir / "sshd.log", "ab")  # noqa: SIM115 - the child keeps it
        self.process = subprocess.Popen(["unshare", "-m", "-u", "--propagation", "private", "sh", "-c", setup],
                                        stdout=log, stderr=log)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"sshd for {self.alias} did not start: {(self.dir / 'sshd.log').read_text()[-2000:]}")

    def stop(self) -> None:
        """The host down: its listening sshd and every session it serves (as a machine switched off)."""
        if self.process is not None and self.process.poll() is None:
            for pid in [*_descendants(self.process.pid), self.process.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None

    def fingerprint(self) -> str:
        listed = subprocess.run(["ssh-keygen", "-l", "-f", f"{self.host_key}.pub"], capture_output=True, text=True,
                                check=True)
        return listed.stdout.split()[1]

    def replace_host_key(self) -> None:
        """A reinstalled machine: a new host key (``known_hosts`` still names the old one)."""
        self.stop()
        self.host_key.unlink()
        Path(f"{self.host_key}.pub").unlink()
        self.world.keygen(self.host_key)
        self.start()


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (the sessions a listening sshd serves), deepest last."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _with_login(line: str, shell: str, home: str) -> str:
    fields = line.split(":")
    return ":".join([*fields[:5], home, shell]) if fields[0] == "root" and len(fields) == 7 else line


class World:
    """The scenario's client side: ``HOME`` with ``~/.ssh/config``, a user key, a known_hosts."""

    def __init__(self, work: Path) -> None:
        self.dir = work
        self.home = work / "home"
        (self.home / ".ssh").mkdir(parents=True, mode=0o700)
        self.user_key, self.other_key = work / "user_key", work / "other_key"
        self.keygen(self.user_key)
        self.keygen(self.other_key)
        self.known_hosts = self.home / ".ssh" / "known_hosts"
        self.known_hosts.write_text("")
        # ssh finds ~ in the password file, not in $HOME: the world's configuration is named with -F
        self.ssh_config = self.home / ".ssh" / "config"
        self.ssh_config.write_text(f"Host *\n  UserKnownHostsFile {self.known_hosts}\n"
                                   f"  GlobalKnownHostsFile /dev/null\n\n")
        self.hosts: list[SimHost] = []
        self.env = {**os.environ, "HOME": str(self.home), "XDG_RUNTIME_DIR": str(self.dir)}  # its own masters

    def keygen(self, path: Path) -> None:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)

    def host(self, alias: str, *, login_shell: str = "/bin/bash", trusted: bool = True,
             authorized: bool = True, session_env: dict[str, str] | None = None) -> SimHost:
        """A started host named ``alias`` in ``~/.ssh/config``: its key in known_hosts when ``trusted``, the
        world's user key accepted when ``authorized``, ``session_env`` in each session's environment."""
        port = 2200 + len(self.hosts) + 1
        sim = SimHost(self, alias, port, login_shell, authorized, session_env)
        self.hosts.append(sim)
        with self.ssh_config.open("a") as config:
            config.write(f"Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
                         f"  IdentityFile {self.user_key}\n  IdentitiesOnly yes\n\n")
        if trusted:
            public = Path(f"{sim.host_key}.pub").read_text().split()
            with self.known_hosts.open("a") as known:
                known.write(f"[127.0.0.1]:{port} {public[0]} {public[1]}\n")
        return sim.start()


def main(name: str, params: dict[str, Any]) -> None:
    result_path = Path(os.environ[RESULT_ENV])
    work = Path(tempfile.mkdtemp(prefix="world-", dir=result_path.parent))
    world = World(work)
    try:
        result = SCENARIOS[name](world, params)
    except BaseException:  # noqa: BLE001 - reported to the test, which fails with it
        result = {"_error": traceback.format_exc()}
    finally:
        for sim in world.hosts:
            sim.stop()
    result_path.write_text(json.dumps(result), encoding="utf-8")

