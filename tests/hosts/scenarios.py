"""What runs inside a simulated hosts' namespace (tests/hosts/sim.py): each scenario drives
``shell/run/hosts.py`` against real sshd hosts and returns what it saw, for tests/hosts/test_ssh.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from returns.result import Failure

from pure import hosts as pure_hosts
from pure import model as m
from shell.run import hosts, tmux_control, tmux_protocol
from shell.run.executor import Executor
from shell.run.host_shell import HostShell, shell_command
from shell.run.process import run_process
from tests.hosts.sim import World, main, scenario

# Each holds what a shell would run or expand if it re-parsed the argument; ``{canary}`` is a file that
# must never come to exist.
HOSTILE = (
    "$(touch {canary})", "`touch {canary}`", "; touch {canary}", "a'b\"c", "'", '"', "\\", "new\nline",
    "$HOME ${HOME} $((1+1))", "*", "~", "-n", "", " lead and trail ", "tab\there", "!event", "#comment",
    "&& touch {canary} ||", "| touch {canary}", "> {canary}", "ünïcødé ✓", "\x1b[31mred",
)


def _ok(result: Any) -> Any:
    """The value of a call that must succeed; its fault, named, when it did not."""
    if isinstance(result, Failure):
        raise AssertionError(str(result.failure()))
    return result.unwrap()


def _open(world: World, alias: str) -> hosts.Host:
    return hosts.Host.open(alias, str(world.dir / "sockets"), str(world.ssh_config)).unwrap()


@scenario("literal_arguments")
def literal_arguments(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """Every hostile argument arrives as itself through each login shell, and nothing else ran."""
    (world.dir / "sockets").mkdir(mode=0o700)
    canary = world.dir / "ran-what-it-should-not"
    words = [word.replace("{canary}", str(canary)) for word in HOSTILE]
    seen: dict[str, Any] = {}
    for alias, shell in (("bash-host", "/bin/bash"), ("zsh-host", "/usr/bin/zsh"), ("dash-host", "/bin/sh")):
        world.host(alias, login_shell=shell)
        host = _open(world, alias)
        shell = _ok(hosts.start_shell(host, world.env))  # started through the login shell, then none
        for via in ("session", "shell"):
            answer = _ok(hosts.call(host, ["printf", "%s\\0", *words], world.env,
                                    shell=shell if via == "shell" else None))
            seen[f"{alias} {via}"] = {"arrived": answer.stdout.split("\0")[:-1] == words, "code": answer.exit_code,
                                      "stderr": answer.stderr}
        shell.close()
        hosts.close(host, world.env)
    return {"seen": seen, "canary": canary.exists()}


@scenario("identity_and_master")
def identity_and_master(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """A host's identity, and every call after the first over the one master connection."""
    (world.dir / "sockets").mkdir(mode=0o700)
    sim = world.host("build1", login_shell="/usr/bin/zsh")
    host = _open(world, "build1")
    started = time.monotonic()
    identity = _ok(hosts.identify(host, world.env))
    first_ms = (time.monotonic() - started) * 1000
    control = ["ssh", "-F", str(world.ssh_config), "-o", f"ControlPath={world.dir}/sockets/%C", "-O", "check",
               "build1"]
    master = subprocess.run(control, env=world.env, capture_output=True, text=True)
    timings = []
    for _ in range(5):
        started = time.monotonic()
        _ok(hosts.call(host, ["true"], world.env))
        timings.append((time.monotonic() - started) * 1000)
    hosts.close(host, world.env)
    closed = subprocess.run(control, env=world.env, capture_output=True, text=True)
    return {"identity": {"host_keys": list(identity.host_keys), "machine_id": identity.machine_id,
                         "name": identity.name, "login_shell": identity.login_shell},
            "expected": {"fingerprint": sim.fingerprint(), "machine_id": sim.machine_id},
            "master_running": master.returncode == 0, "master_after_close": closed.returncode == 0,
            "first_ms": first_ms, "next_ms": sorted(timings)[len(timings) // 2]}


@scenario("call_cost")
def call_cost(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """What one call costs: the first (it connects), the next ones over the master, and a local process
    run the same way; and a file written on the host against one written locally (bench/ssh_calls.py)."""
    (world.dir / "sockets").mkdir(mode=0o700)
    world.host("build1")
    host = _open(world, "build1")
    started = time.monotonic()
    _ok(hosts.call(host, ["true"], world.env))
    first_ms = (time.monotonic() - started) * 1000
    shell = _ok(hosts.start_shell(host, world.env))
    remote, through_shell, local = [], [], []
    for _ in range(int(params.get("calls", 50))):
        started = time.monotonic()
        _ok(hosts.call(host, ["true"], world.env))
        remote.append((time.monotonic() - started) * 1000)
        started = time.monotonic()
        _ok(hosts.call(host, ["true"], world.env, shell=shell))
        through_shell.append((time.monotonic() - started) * 1000)
        started = time.monotonic()
        run_process("true", (), env=world.env)
        local.append((time.monotonic() - started) * 1000)
    writes: dict[str, list[float]] = {"remote": [], "shell": [], "local": []}
    executor, text = Executor(env=world.env), "inbox line ünï ✓\n" * 256  # 4.6 KB, an inbox's size
    for n in range(int(params.get("calls", 50))):
        started = time.monotonic()
        _ok(hosts.file_step(host, m.WriteFile(path=f"/tmp/bench/inbox-{n}.md", content=text), world.env))
        writes["remote"].append((time.monotonic() - started) * 1000)
        started = time.monotonic()
        _ok(hosts.file_step(host, m.WriteFile(path=f"/tmp/bench/shell-{n}.md", content=text), world.env, shell=shell))
        writes["shell"].append((time.monotonic() - started) * 1000)
        started = time.monotonic()
        executor.execute(m.WriteFile(path=str(world.dir / "bench" / f"inbox-{n}.md"), content=text))
        writes["local"].append((time.monotonic() - started) * 1000)
    shell.close()
    hosts.close(host, world.env)
    return {"first_ms": first_ms, "remote_ms": remote, "shell_ms": through_shell, "local_ms": local,
            "write_remote_ms": writes["remote"], "write_shell_ms": writes["shell"], "write_local_ms": writes["local"]}


@scenario("remote_tmux")
def remote_tmux(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """Each host has its own tmux server; a control-mode client through the master answers as ``tmux``
    run over ssh per call does, at a fraction of its cost."""
    (world.dir / "sockets").mkdir(mode=0o700)
    calls = int(params.get("calls", 20))
    fmt = "#{pid} #{pane_id} #{pane_pid}"
    out: dict[str, Any] = {"servers": {}}
    for alias in ("build1", "build2"):
        world.host(alias)
        host = _open(world, alias)
        _ok(hosts.call(host, ["tmux", "-L", "pf", "new-session", "-d", "-s", "work", "sleep 600"], world.env))
        per_call = _ok(hosts.call(host, ["tmux", "-L", "pf", "list-panes", "-a", "-F", fmt], world.env)).stdout
        client = hosts.tmux_client(host, ("-L", "pf"), world.env, time.monotonic() + 20)
        assert not isinstance(client, tmux_control.StartFailure), str(client)
        line = tmux_protocol.control_line(("list-panes", "-a", "-F", fmt))
        assert line is not None
        answered = client.call(line, time.monotonic() + 10)
        assert answered is not None
        timings: dict[str, list[float]] = {"control": [], "per_call": []}
        for _ in range(calls):
            started = time.monotonic()
            client.call(line, time.monotonic() + 10)
            timings["control"].append((time.monotonic() - started) * 1000)
            started = time.monotonic()
            _ok(hosts.call(host, ["tmux", "-L", "pf", "list-panes", "-a", "-F", fmt], world.env))
            timings["per_call"].append((time.monotonic() - started) * 1000)
        client.close()
        _ok(hosts.call(host, ["tmux", "-L", "pf", "kill-server"], world.env))
        hosts.close(host, world.env)
        out["servers"][alias] = {"per_call": per_call, "control": answered.stdout, "code": answered.exit_code,
                                 "control_ms": sorted(timings["control"])[calls // 2],
                                 "per_call_ms": sorted(timings["per_call"])[calls // 2]}
    local = subprocess.run(["tmux", "-L", "pf", "list-panes", "-a"], capture_output=True, text=True)
    out["local_server_found"] = local.returncode == 0
    return out


@scenario("doctor")
def doctor(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """``panefleet doctor --host`` on a host that can be used, and on one that is down."""
    world.host("build1", login_shell="/usr/bin/zsh")
    world.host("down").stop()
    out: dict[str, Any] = {}
    for alias in ("build1", "down", "-oProxyCommand=x"):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "cli.py", "doctor", "--host", alias, "--ssh-config",
                               str(world.ssh_config), "--worker-cli", "claude", "-o", "json"],
                              env=world.env, capture_output=True, text=True, timeout=120)
        text = subprocess.run([sys.executable, "cli.py", "doctor", f"--host={alias}", "--ssh-config",
                               str(world.ssh_config), "--worker-cli", "claude"],
                              env=world.env, capture_output=True, text=True, timeout=120)
        out[alias] = {"code": done.returncode, "json": json.loads(done.stdout or "null"), "text": text.stdout,
                      "stderr": done.stderr, "seconds": time.monotonic() - started}
    return out


def _fault(result: Any) -> dict[str, str] | None:
    if not isinstance(result, Failure):
        return None
    fault = result.failure()
    return {"kind": fault.kind, "host": fault.host, "detail": fault.detail, "text": str(fault)}


@scenario("faults")
def faults(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """Each way of not getting there, typed, within the deadline."""
    (world.dir / "sockets").mkdir(mode=0o700)
    out: dict[str, Any] = {}
    down = world.host("down")
    down.stop()
    started = time.monotonic()
    out["unreachable"] = _fault(hosts.call(_open(world, "down"), ["true"], world.env))
    out["unreachable_s"] = time.monotonic() - started
    world.host("stranger", trusted=False)
    out["host_key_unknown"] = _fault(hosts.call(_open(world, "stranger"), ["true"], world.env))
    world.host("locked", authorized=False)
    out["auth_refused"] = _fault(hosts.call(_open(world, "locked"), ["true"], world.env))
    moved = world.host("moved")
    moved.replace_host_key()
    out["host_key_changed"] = _fault(hosts.call(_open(world, "moved"), ["true"], world.env))
    out["new_fingerprint"] = moved.fingerprint()
    for alias in ("down", "stranger", "locked", "moved"):  # the shell a run keeps there: the same faults
        out[f"shell {alias}"] = _fault(hosts.start_shell(_open(world, alias), world.env))
    for via in ("session", "shell"):
        gone = world.host(f"gone-{via}")
        host = _open(world, f"gone-{via}")
        _ok(hosts.call(host, ["true"], world.env))  # the master is up
        runner = subprocess.Popen([sys.executable, "-c", _CALL_SLEEP,
                                   json.dumps([host.destination, host.socket_dir, host.config_file, via])],
                                  env=world.env, stdout=subprocess.PIPE, text=True)
        assert runner.stdout is not None and runner.stdout.readline() == "calling\n"
        time.sleep(1.0)
        gone.stop()  # the machine goes away mid-call
        started = time.monotonic()
        out[f"dropped {via}"] = json.loads(runner.communicate(timeout=60)[0])
        out[f"dropped_s {via}"] = time.monotonic() - started
    out["bad_destination"] = _fault(hosts.Host.open("-oProxyCommand=touch /tmp/x"))
    own = hosts.Host.open("gone").unwrap()  # a socket folder of its own, gone with the host's close
    out["own_socket_dir"] = [Path(own.socket_dir).is_dir()]
    hosts.close(own, world.env)
    out["own_socket_dir"].append(Path(own.socket_dir).exists())
    return out


@scenario("remote_files")
def remote_files(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """The same file steps done on a host (pure/remote_files.py) and by the local executor, in a folder
    each: the same observations, with names and contents a shell would re-parse; the bytes land on the
    host (its own /tmp), and nothing ran there that was not meant to."""
    (world.dir / "sockets").mkdir(mode=0o700)
    world.host("build1", login_shell="/usr/bin/zsh")
    host = _open(world, "build1")
    local = Executor(env=world.env)
    canary = world.dir / "ran-what-it-should-not"
    remote_base, local_base = "/tmp/pf-remote-files", str(world.dir / "local-files")
    names = [word.replace("{canary}", str(canary)) for word in HOSTILE if word not in ("", "~", "*")] + ["-n x"]
    big = "".join(f"line {i} ünï ✓ $(touch {canary})\n" for i in range(8000))  # 300 KB: no command line holds it
    contents = ["", "no newline", "two\nlines\n", "\n\n", big, "nul\x00inside"]

    shell = _ok(hosts.start_shell(host, world.env))  # Perl's (pure/host_shell.py PERL_SERVER): the host has perl
    posix = _ok(HostShell.start("build1", "ssh", pure_hosts.ssh_args(host.destination, host.socket_dir,
                                                                     shell_command(posix_only=True),
                                                                     config_file=host.config_file),
                                world.env, time.monotonic() + 30))
    shell_base, posix_base = "/tmp/pf-shell-files", "/tmp/pf-posix-files"
    programs = [_ok(hosts.call(host, ["cat", f"/proc/{kept.pid_on_host}/comm"], world.env)).stdout.strip()
                for kept in (shell, posix)]

    def both(make: Any) -> list[Any]:
        remote_step, local_step = make(remote_base), make(local_base)
        there = _ok(hosts.file_step(host, remote_step, world.env))
        through_shell = _ok(hosts.file_step(host, make(shell_base), world.env, shell=shell))
        through_posix = _ok(hosts.file_step(host, make(posix_base), world.env, shell=posix))
        here = local.execute(local_step)
        return [_plain(there, remote_base), _plain(here, local_base), _plain(through_shell, shell_base),
                _plain(through_posix, posix_base)]

    seen: list[dict[str, Any]] = []
    for i, name in enumerate(names):
        folder, content = f"d{i} {name}", contents[i % len(contents)]
        for label, make in _file_steps(folder, name, content, 0o600 if i % 2 else None):
            there, here, through_shell, through_posix = both(make)
            seen.append({"name": name, "step": label, "remote": there, "local": here, "shell": through_shell,
                         "posix": through_posix})
            if label in ("write", "rewrite"):  # the mode given, or the one the file had, or 0644
                remote_mode, shell_mode, posix_mode = (
                    _ok(hosts.call(host, ["stat", "-c", "%a", f"{base}/{folder}/{name}"], world.env,
                                   shell=shell)).stdout.strip() for base in (remote_base, shell_base, posix_base))
                seen.append({"name": name, "step": f"{label} mode", "remote": remote_mode, "shell": shell_mode,
                             "posix": posix_mode,
                             "local": format(os.stat(f"{local_base}/{folder}/{name}").st_mode & 0o7777, "o")})
    mode_path = f"{remote_base}/mode/file"
    _ok(hosts.file_step(host, m.WriteFile(path=mode_path, content="x", mode=0o640), world.env))
    _ok(hosts.file_step(host, m.WriteFile(path=mode_path, content="y"), world.env))
    kept_mode = _ok(hosts.call(host, ["stat", "-c", "%a", mode_path], world.env)).stdout.strip()
    _ok(hosts.call(host, ["ln", "-s", "nowhere", f"{remote_base}/link"], world.env))
    Path(local_base).mkdir(exist_ok=True)
    (Path(local_base) / "link").symlink_to("nowhere")
    _ok(hosts.call(host, ["ln", "-s", "nowhere", f"{shell_base}/link"], world.env))
    _ok(hosts.call(host, ["ln", "-s", "nowhere", f"{posix_base}/link"], world.env))
    links = both(lambda b: m.Stat(path=f"{b}/link")) + both(lambda b: m.ReadFile(path=f"{b}/link"))
    leftovers = _ok(hosts.call(host, ["find", remote_base, shell_base, posix_base, "-name", ".pf-write.*"],
                               world.env)).stdout
    shell_dirs = _ok(hosts.call(host, ["sh", "-c", "ls -d /tmp/tmp.* 2>/dev/null || true"], world.env)).stdout
    shell.close()
    posix.close()
    shell_dirs_after = _ok(hosts.call(host, ["sh", "-c", "ls -d /tmp/tmp.* 2>/dev/null || true"], world.env)).stdout
    hosts.close(host, world.env)
    return {"seen": seen, "kept_mode": kept_mode, "links": links, "temporary_files_left": leftovers,
            "programs": programs,
            "shell_dirs": [shell_dirs.split(), shell_dirs_after.split()],
            "on_this_machine": Path(remote_base).exists(), "canary": canary.exists()}


@scenario("routed_steps")
def routed_steps(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """The executor does a step that names a host on that host (shell/run/remote.py): the pure teardown,
    unchanged, proves and kills a pane of the host's tmux server through its control client, refuses
    one whose process changed, and a host that is down answers every step with its fault."""
    import attrs

    from pure import tmux as t

    world.host("build1", login_shell="/bin/bash")
    executor = Executor(env={**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config)}, tmux_socket="pf")

    def on(host: str, program: Any) -> Any:
        return _drive(program, lambda step: executor.execute(attrs.evolve(step, host=host)))

    def tmux(*args: str) -> m.Proc:
        answer = executor.execute(m.Run(tool="tmux", args=args, host="build1"))
        assert isinstance(answer, m.Proc)
        return answer

    made = tmux("new-session", "-d", "-s", "work", "-P", "-F", "#{pane_id}\t#{pane_pid}", "sleep 600")
    assert made.exit_code == 0 and "\t" in made.stdout, repr(made)
    first, first_pid = made.stdout.strip().split("\t")
    split = tmux("split-window", "-d", "-t", first, "-P", "-F", "#{pane_id}\t#{pane_pid}", "sleep 600")
    second, second_pid = split.stdout.strip().split("\t")
    for pane in (first, second):
        tmux("set-option", "-p", "-t", pane, t.OWNER_OPTION, "team:remote")
    wrote = executor.execute(m.WriteFile(path="/tmp/worker-1/inbox.md", content="task: $(whoami)\n", host="build1"))
    read = executor.execute(m.ReadFile(path="/tmp/worker-1/inbox.md", host="build1"))
    clients = len(executor._remote._clients) if executor._remote is not None else 0
    refused = on("build1", t.teardown([t.TeardownTarget(pane_id=first, pid=int(first_pid) + 1)],
                                      owner_id="team:remote", authorize=True))
    killed = on("build1", t.teardown([t.TeardownTarget(pane_id=second, pid=int(second_pid))],
                                     owner_id="team:remote", authorize=True))
    left = tmux("list-panes", "-a", "-F", "#{pane_id}").stdout.split()
    down = {"run": executor.execute(m.Run(tool="tmux", args=("list-panes", "-a"), host="down")),
            "stat": executor.execute(m.Stat(path="/", host="down")),
            "write": executor.execute(m.WriteFile(path=str(world.dir / "never"), content="x", host="down"))}
    executor.end_run()
    local = run_process("tmux", ("-L", "pf", "list-sessions"), env=world.env)
    return {"wrote": _plain(wrote), "read": _plain(read), "control_clients": clients,
            "refused": [r.fate + ":" + (r.reason or "") for r in refused.results],
            "killed": [r.fate for r in killed.results], "panes": [first, second], "left": left,
            "down": {key: _plain(value) for key, value in down.items()},
            "down_error": str(getattr(down["run"], "stderr", "")), "never_written_here": not (world.dir / "never").exists(),
            "inbox_here": Path("/tmp/worker-1/inbox.md").exists(), "local_server": local.exit_code == 0}


@scenario("routed_cost")
def routed_cost(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """What the pure teardown of one pane costs when its steps name a host (through that host's control
    client) against the same teardown on this machine's own tmux server (bench/ssh_calls.py)."""
    import attrs

    from pure import tmux as t

    world.host("build1")
    panes = int(params.get("panes", 20))
    timings: dict[str, list[float]] = {}
    for where in ("build1", None):
        executor = Executor(env={**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config)}, tmux_socket="pfb")

        def run(step: Any, where: str | None = where, executor: Executor = executor) -> Any:
            return executor.execute(attrs.evolve(step, host=where))

        made = run(m.Run(tool="tmux", args=("new-session", "-d", "-s", "b", "-P", "-F", "#{pane_id}", "sleep 600")))
        assert made.exit_code == 0, made
        targets = []
        for _ in range(panes):  # a window each: a window has room for only so many splits
            window = run(m.Run(tool="tmux", args=("new-window", "-d", "-t", "b:", "-P", "-F",
                                                  "#{pane_id}\t#{pane_pid}", "sleep 600")))
            assert window.exit_code == 0, (where, window)
            pane, pid = window.stdout.strip().split("\t")
            targets.append(t.TeardownTarget(pane_id=pane, pid=int(pid)))
        times = timings[where or "local"] = []
        for target in targets:
            started = time.monotonic()
            report = _drive(t.teardown([target], owner_id=None, authorize=False), run)
            assert report.results[0].fate == "killed", report
            times.append((time.monotonic() - started) * 1000)
        run(m.Run(tool="tmux", args=("kill-server",)))
        executor.end_run()
    return timings


def _drive(program: Any, execute: Any) -> Any:
    """Run a pure program to its end, each step it asks for done by ``execute``; what it returns."""
    answer: Any = None
    try:
        while True:
            answer = execute(program.send(answer))
    except StopIteration as stop:
        return stop.value


def _file_steps(folder: str, name: str, content: str, mode: int | None) -> list[tuple[str, Any]]:
    """Each file step of one name's round, as a function of the folder it is done in (a host's or this
    machine's)."""
    def at(base: str, *parts: str) -> str:
        return "/".join((base, *parts))

    return [
        ("stat absent", lambda b: m.Stat(path=at(b, folder, name))),
        ("read absent", lambda b: m.ReadFile(path=at(b, folder, name))),
        ("list absent", lambda b: m.ListDir(path=at(b, folder))),
        ("write", lambda b: m.WriteFile(path=at(b, folder, name), content=content, mode=mode)),
        ("stat file", lambda b: m.Stat(path=at(b, folder, name))),
        ("read", lambda b: m.ReadFile(path=at(b, folder, name))),
        ("rewrite", lambda b: m.WriteFile(path=at(b, folder, name), content=content + "again")),
        ("read again", lambda b: m.ReadFile(path=at(b, folder, name))),
        ("list", lambda b: m.ListDir(path=at(b, folder))),
        ("stat dir", lambda b: m.Stat(path=at(b, folder))),
        ("mkdir existing", lambda b: m.MakeDir(path=at(b, folder), exist_ok=False)),
        ("mkdir ok", lambda b: m.MakeDir(path=at(b, folder, "sub", "deeper"))),
        ("rmdir full", lambda b: m.RemovePath(path=at(b, folder))),
        ("rm file", lambda b: m.RemovePath(path=at(b, folder, name))),
        ("rm tree", lambda b: m.RemovePath(path=at(b, folder), recursive=True)),
        ("rm absent", lambda b: m.RemovePath(path=at(b, folder))),
        ("stat gone", lambda b: m.Stat(path=at(b, folder))),
    ]


def _plain(observation: Any, base: str = "") -> dict[str, Any]:
    """An observation as JSON, its folder (``base``) named the same on both sides; an error only as there
    or not (the words of a remote error are the host's tools', not Python's)."""
    from pure import wire

    text = json.dumps(wire.unstructure(observation))
    plain: dict[str, Any] = json.loads(text.replace(base, "<base>") if base else text)
    if plain.get("error"):
        plain["error"] = "<error>"
    return plain


@scenario("team_on_host")
def team_on_host(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """A team whose programs are placed on a host (pure/on_host.py), unchanged: ``team init`` makes its
    session there, a scale-up starts placeholder workers there behind their proofs, status sees them, and a
    scale-down removes them; its files, locks and tmux server are the host's, and nothing is made here."""
    from pure.omx.scale_down import ScaleDownRequest
    from pure.omx.scale_up import ScaleUpRequest
    from pure.on_host import on_host
    from pure.team import TeamInitRequest, TeamStatusRequest
    from shell.cli.team_host import agent_facts
    from shell.run.loop import run_program

    (world.dir / "sockets").mkdir(mode=0o700)
    world.host("build1", login_shell="/bin/bash")
    env = {**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config)}
    project, count = "/tmp/project", int(params.get("workers", 2))
    request_env = {"OMX_TEAM_SCALING_ENABLED": "1", "PATH": env["PATH"], "HOME": env.get("HOME", "/root")}

    def run(name: str, request: Any) -> dict[str, Any]:
        from pure import operations

        op = operations.get(name)
        assert op is not None
        executor = Executor(env=env, tmux_socket="pf")
        started = time.monotonic()
        done, journal = run_program(lambda: on_host(op.program(request), "build1"), executor)
        return {"status": done.outcome.status, "result": done.outcome.result, "seconds": time.monotonic() - started,
                "steps": len(journal), "here": [entry.step.op for entry in journal
                                                if getattr(entry.step, "host", "build1") is None]}

    def on_build1(*argv: str) -> str:
        host = _open(world, "build1")
        answer = _ok(hosts.call(host, list(argv), world.env)).stdout
        hosts.close(host, world.env)
        return answer

    on_build1("mkdir", "-p", project)
    out: dict[str, Any] = {}
    out["init"] = run("team.init", TeamInitRequest(team="alpha", cwd=project, env=request_env, task="remote work",
                                                   new_session=True, session_name="alpha", worker_cli="placeholder"))
    cli_paths, _node, shells = agent_facts("build1", env)  # the placeholder agent installed there
    out["installed"] = cli_paths["placeholder"]
    out["up"] = run("team.scale_up", ScaleUpRequest(team="alpha", count=count, cwd=project, env=request_env,
                                                    cli_paths=cli_paths, existing_shells=shells))
    out["panes_after_up"] = on_build1("tmux", "-L", "pf", "list-panes", "-a", "-F",
                                      "#{pane_id} #{@omx_team_pane_owner_id} #{pane_dead}")
    out["status"] = run("team.status", TeamStatusRequest(team="alpha", cwd=project, env=request_env))
    out["down"] = run("team.scale_down", ScaleDownRequest(team="alpha", cwd=project, env=request_env, count=1))
    out["panes_after_down"] = on_build1("tmux", "-L", "pf", "list-panes", "-a", "-F",
                                        "#{pane_id} #{@omx_team_pane_owner_id} #{pane_dead}")
    out["files_on_host"] = on_build1("find", f"{project}/.omx/state/team/alpha", "-maxdepth", "2").split()
    out["locks_left"] = on_build1("sh", "-c", f"find {project}/.omx -name '*.lock' -o -name '*lock' | sort")
    out["here"] = {"project": Path(project).exists(),
                   "tmux": run_process("tmux", ("-L", "pf", "list-sessions"), env=world.env).exit_code == 0}
    on_build1("tmux", "-L", "pf", "kill-server")
    return out


@scenario("remote_locks")
def remote_locks_scenario(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """A lock directory on a host (shell/run/remote_locks.py): held in the name of the run's shell there, so a
    second run waits and names the holder alive; once the first run's session is gone its holder is dead
    there, and the lock is taken over; a release removes only a lock still held with its token."""
    (world.dir / "sockets").mkdir(mode=0o700)
    world.host("build1", login_shell="/bin/bash")
    env = {**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config)}
    lock = "/tmp/project/.omx/state/team/alpha/.lock.scaling"
    take = m.AcquireLock(path=lock, timeout_ms=600, retry_ms=50, host="build1")
    first, second = Executor(env=env), Executor(env=env)
    out: dict[str, Any] = {"first": _plain(first.execute(take))}
    host = _open(world, "build1")
    token = _ok(hosts.call(host, ["cat", f"{lock}/owner"], world.env)).stdout
    mark = _ok(hosts.call(host, ["cat", f"{lock}/host"], world.env)).stdout
    shell_pid = first._remote._shells["build1"].pid_on_host if first._remote is not None else 0
    out["token_pid_is_the_shell"] = token.split(".")[0] == str(shell_pid)
    out["mark"] = mark
    started = time.monotonic()
    waited = second.execute(take)
    out["second_waits"] = {"ok": getattr(waited, "ok", None), "error": getattr(waited, "error", "")}
    out["waited_s"] = time.monotonic() - started
    assert first._remote is not None
    first._remote._shells["build1"].kill()  # the first run is gone: its shell on the host with it
    time.sleep(0.5)
    out["second_takes_over"] = _plain(second.execute(take))
    stale = first.execute(m.ReleaseLock(path=lock, host="build1"))
    out["stale_release"] = {"ok": getattr(stale, "ok", None), "error": getattr(stale, "error", "")}
    out["release"] = _plain(second.execute(m.ReleaseLock(path=lock, host="build1")))
    out["left"] = _ok(hosts.call(host, ["sh", "-c", f"ls -a {lock}* 2>/dev/null || true"], world.env)).stdout
    for executor in (first, second):
        executor.end_run()
    hosts.close(host, world.env)
    return out


@scenario("team_cost")
def team_cost(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """What a team's runs cost on a host against the same on this machine (bench/remote_team.py): ``team init``
    and a scale-up of ``workers`` placeholder workers, then ``status`` ``statuses`` times, each with its own
    project folder and tmux server; the programs are the same, placed on the host or not (pure/on_host.py);
    and where the time went, by kind of step."""
    (world.dir / "sockets").mkdir(mode=0o700)
    world.host("build1", login_shell="/bin/bash")
    out: dict[str, Any] = {}
    for where, project in (("host", "/tmp/project-remote"), ("here", str(world.dir / "project-here"))):
        out[where] = _team_runs(world, where == "host", project, int(params.get("workers", 10)),
                                int(params.get("statuses", 5)))
    return out


def _team_runs(world: World, on_build1: bool, project: str, workers: int, statuses: int) -> dict[str, Any]:
    from pure import operations
    from pure.omx.scale_up import ScaleUpRequest
    from pure.on_host import on_host
    from pure.team import TeamInitRequest, TeamStatusRequest
    from shell.cli.team_host import agent_facts
    from shell.placeholder import PLACEHOLDER_AGENT
    from shell.run.loop import run_program

    env = {**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config)}
    request_env = {"OMX_TEAM_SCALING_ENABLED": "1", "PATH": env["PATH"], "HOME": env["HOME"]}
    socket = "pf-host" if on_build1 else "pf-here"
    spent: dict[str, list[float]] = {}

    def run(name: str, request: Any) -> tuple[str, float]:
        op = operations.get(name)
        assert op is not None
        executor = Executor(env=env, tmux_socket=socket)
        execute = executor.execute

        def timed(step: Any) -> Any:  # where the time goes, by kind of step
            started = time.monotonic()
            try:
                return execute(step)
            finally:
                kind = f"{step.op}:{step.tool}:{step.args[0] if step.args else ''}" if isinstance(step, m.Run) else step.op
                spent.setdefault(f"{name} {kind}", []).append(time.monotonic() - started)

        executor.execute = timed  # type: ignore[method-assign]
        started = time.monotonic()
        done, _ = run_program(lambda: on_host(op.program(request), "build1") if on_build1 else op.program(request),
                              executor)
        return done.outcome.status, time.monotonic() - started

    if on_build1:
        _ok(hosts.call(_open(world, "build1"), ["mkdir", "-p", project], world.env))
    else:
        Path(project).mkdir()
    init = run("team.init", TeamInitRequest(team="alpha", cwd=project, env=request_env, task="work",
                                            new_session=True, session_name="alpha", worker_cli="placeholder"))
    cli_paths = agent_facts("build1", env)[0] if on_build1 else {"placeholder": str(PLACEHOLDER_AGENT)}
    up = run("team.scale_up", ScaleUpRequest(team="alpha", count=workers, cwd=project, env=request_env,
                                             cli_paths=cli_paths, existing_shells=("/bin/bash",)))
    status = [run("team.status", TeamStatusRequest(team="alpha", cwd=project, env=request_env))
              for _ in range(statuses)]
    kill = ("tmux", "-L", socket, "kill-server")
    if on_build1:
        hosts.call(_open(world, "build1"), list(kill), world.env)
    else:
        run_process("tmux", kill[1:], env=world.env)
    return {"init": init, "scale_up": up, "status": status,
            "spent": {kind: [len(times), sum(times)] for kind, times in spent.items()}}

@scenario("team_cli_on_host")
def team_cli_on_host(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """``panefleet team init --host`` makes a team on a host; its other commands find it there by its registry
    entry (no --host); a host whose machine id changed, whose key changed, or that is down is refused before
    anything runs there."""
    (world.dir / "sockets").mkdir(mode=0o700)
    sim = world.host("build1", login_shell="/bin/bash")
    env = {**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config), "PANEFLEET_STATE_DIR": str(world.dir / "state"),
           "PANEFLEET_CALL_TIMEOUT": "ssh=15"}

    def cli(*args: str) -> dict[str, Any]:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "cli.py", *args, "-o", "json"], env=env, capture_output=True,
                              text=True, timeout=120)
        try:
            answer = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
        except json.JSONDecodeError:
            answer = {"unparsed": done.stdout[-2000:]}
        return {"code": done.returncode, "answer": answer, "stderr": done.stderr[-2000:],
                "seconds": time.monotonic() - started}

    host = _open(world, "build1")
    _ok(hosts.call(host, ["mkdir", "-p", "/tmp/project"], world.env))
    out: dict[str, Any] = {}
    out["init_relative"] = cli("team", "init", "alpha", "--host", "build1", "--new-session")
    out["init"] = cli("team", "init", "alpha", "--host", "build1", "--cwd", "/tmp/project", "--new-session",
                      "--session", "alpha", "--worker-cli", "placeholder", "--tmux-socket", "pf")
    out["registry"] = json.loads((world.dir / "state" / "teams.json").read_text())
    out["up"] = cli("team", "scale-up", "alpha", "--count", "2")
    out["status"] = cli("team", "status", "alpha")
    out["down"] = cli("team", "scale-down", "alpha", "--count", "1")
    out["list"] = cli("list")
    out["attach"] = cli("team", "attach", "alpha", "worker-2")  # works on this machine only: refused
    out["panes"] = _ok(hosts.call(host, ["tmux", "-L", "pf", "list-panes", "-a", "-F",
                                         "#{pane_id} #{@omx_team_pane_owner_id}"], world.env)).stdout
    out["here"] = {"project": Path("/tmp/project/.omx").exists(),
                   "tmux": run_process("tmux", ("-L", "pf", "list-sessions"), env=world.env).exit_code == 0}
    hosts.close(host, world.env)
    (sim.dir / "machine-id").write_text("0" * 32 + "\n")  # another machine answers to the name
    out["replaced"] = cli("team", "status", "alpha")
    (sim.dir / "machine-id").write_text(sim.machine_id + "\n")
    sim.replace_host_key()
    out["new_key"] = cli("team", "status", "alpha")
    out["new_fingerprint"] = sim.fingerprint()
    sim.stop()
    out["down_host"] = cli("team", "status", "alpha")
    out["list_down"] = cli("list")
    return out


@scenario("killed_on_host")
def killed_on_host(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """A scale-up of a team on a host, SIGKILLed at moments drawn from its own progress (no undo at all): the
    next command on the team (``team debt reconcile``, or a scale-up) leaves nothing on the host that no member
    names, as tests/omx_up/test_interrupted_scale_up.py checks here."""
    import random

    (world.dir / "sockets").mkdir(mode=0o700)
    world.host("build1", login_shell="/bin/bash")
    state = world.dir / "state"
    env = {**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config), "PANEFLEET_STATE_DIR": str(state)}
    host = _open(world, "build1")
    count = int(params.get("workers", 4))

    def cli(*args: str) -> tuple[int, Any]:
        done = subprocess.run([sys.executable, "cli.py", *args, "-o", "json"], env=env, capture_output=True,
                              text=True, timeout=180)
        lines = done.stdout.strip().splitlines()
        return done.returncode, json.loads(lines[-1]) if lines else {"stderr": done.stderr[-1500:]}

    def steps_so_far(team: str) -> int:
        logs = list((state / "audit").glob("*team-scale_up*.jsonl")) if (state / "audit").is_dir() else []
        logs = [log for log in logs if f'"team":"{team}"' in log.read_text(encoding="utf-8").split("\n", 1)[0]
                or f'"team": "{team}"' in log.read_text(encoding="utf-8").split("\n", 1)[0]]
        return sum(line.count('"type":"entry"') + line.count('"type": "entry"')
                   for log in logs for line in log.read_text(encoding="utf-8").splitlines())

    def init(team: str) -> None:
        folder = f"/tmp/{team}"
        _ok(hosts.call(host, ["mkdir", "-p", folder], world.env))
        code, answer = cli("team", "init", team, "--host", "build1", "--cwd", folder, "--new-session", "--session",
                           team, "--worker-cli", "placeholder", "--tmux-socket", "pf")
        assert code == 0, answer

    def scale_up(team: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "cli.py", "team", "scale-up", team, "--count", str(count)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def leftovers(team: str) -> list[str]:
        folder = f"/tmp/{team}/.omx/state/team/{team}"
        config = json.loads(_ok(hosts.call(host, ["cat", f"{folder}/config.json"], world.env)).stdout)
        members = {w["name"]: w["pane_id"] for w in config["workers"]}
        ours = {config["leader_pane_id"], *members.values()}
        listing = _ok(hosts.call(host, ["tmux", "-u", "-L", "pf", "list-panes", "-a", "-F",
                                        "#{pane_id}\t#{@omx_team_pane_owner_id}\t#{pane_start_command}"], world.env))
        out = []
        for line in listing.stdout.splitlines():
            pane, owner, command = line.split("\t", 2)
            if pane not in ours and (owner == f"team:{team}" or f"/team/{team}/runtime/" in command):
                out.append(f"pane {pane} ({owner or 'untagged'})")
        found = _ok(hosts.call(host, ["sh", "-c", 'ls "$1/workers" 2>/dev/null; ls "$1/runtime" 2>/dev/null', "sh",
                                      folder], world.env)).stdout.split()
        out += [f"left {name}" for name in found
                if name.removesuffix("-startup.sh") not in members and name.startswith("worker-")]
        return out

    def panefleets_on_host() -> list[str]:
        """The run's shell and tmux control client on the host, while they live (a pattern that does not
        match itself)."""
        found = hosts.call(host, ["sh", "-c", "pgrep -af 'panefleet-host-shell-read[y]|[-]C attach-session' || true"],
                           world.env)
        return _ok(found).stdout.splitlines()

    init("probe")
    whole = scale_up("probe")
    assert whole.wait(timeout=180) == 0, whole.communicate()
    total = steps_so_far("probe")
    moments = sorted(random.Random(int(params.get("seed", 26))).sample(range(5, total - 20), int(params.get("kills", 4))))
    out: dict[str, Any] = {"total_steps": total, "moments": moments, "runs": []}
    for number, moment in enumerate(moments):
        team = f"k{number}"
        init(team)
        run = scale_up(team)
        deadline = time.monotonic() + 120
        while steps_so_far(team) < moment and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        run.kill()
        run.communicate(timeout=60)
        deadline = time.monotonic() + 20  # sshd notices the session gone once the master has closed it
        while (alive := panefleets_on_host()) and time.monotonic() < deadline:
            time.sleep(0.2)  # its shell and control client there end with its session
        left = leftovers(team)
        command = ("team", "debt", "reconcile", team) if number % 2 else ("team", "scale-up", team, "--count", "1")
        give_up = time.monotonic() + 30
        code, after = cli(*command)
        while "unless an owner is written" in str(after.get("error")) and time.monotonic() < give_up:
            time.sleep(1)  # killed inside a lock's making: taken over once its owner is overdue
            code, after = cli(*command)
        kept = [k["paneId"] for k in after.get("strayPanes", {}).get("kept", [])] if isinstance(
            after.get("strayPanes"), dict) else []
        out["runs"].append({"moment": moment, "left": left, "host_processes": alive,
                            "command": command[1], "code": code,
                            "ok": after.get("ok"), "error": after.get("error"), "still": leftovers(team),
                            "kept": kept})
    hosts.close(host, world.env)
    return out


@scenario("fleet_on_hosts")
def fleet_on_hosts(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """A fleet file with a team here and a team on a host (``host =``): ``apply`` makes both, ``plan`` after
    it has nothing to do, removing the host's second group kills exactly its panes there; the host's tmux
    server restarted (another session on it, its first pane %0 as the old leader's), ``team status`` shows
    the team absent with the new server named, ``apply`` brings the team back and leaves that session; its sshd stopped, ``plan`` still shows the team here and
    names the host unreachable, its workers unknown, ``apply`` refuses, and nothing changes."""
    (world.dir / "sockets").mkdir(mode=0o700)
    sim = world.host("build1", login_shell="/bin/bash")
    project = world.dir / "fleet"
    project.mkdir()
    env = {**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config), "PANEFLEET_STATE_DIR": str(world.dir / "state"),
           "PANEFLEET_CALL_TIMEOUT": "ssh=15"}
    host = _open(world, "build1")
    _ok(hosts.call(host, ["mkdir", "-p", "/tmp/proj"], world.env))
    here_group = '[[team.here.workers]]\ncli = "placeholder"\ncount = 2\n'
    there = ('[team.there]\nhost = "build1"\ncwd = "/tmp/proj"\ntmux_socket = "pf"\n'
             '[[team.there.workers]]\ncli = "placeholder"\ncount = 1\n')
    second = '[[team.there.workers]]\ncli = "placeholder"\nrole = "test-engineer"\ncount = 2\n'
    fleet_file = project / "panefleet.toml"

    def write(with_second: bool) -> None:
        fleet_file.write_text(f'[team.here]\ntmux_socket = "pf-here"\n{here_group}{there}{second if with_second else ""}')

    def cli(*args: str, output: str = "json") -> dict[str, Any]:
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(Path.cwd() / "cli.py"), *args, "-f", str(fleet_file), "-o", output],
                              env=env, capture_output=True, text=True, timeout=240, cwd=project)
        if output == "text":
            return {"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
        lines = done.stdout.strip().splitlines()
        try:
            answer = json.loads(lines[-1]) if lines else None
        except json.JSONDecodeError:
            answer = {"unparsed": done.stdout[-1500:]}
        return {"code": done.returncode, "answer": answer, "stderr": done.stderr[-1500:],
                "seconds": time.monotonic() - started}

    def panes_there() -> list[str]:
        listed = _ok(hosts.call(host, ["tmux", "-u", "-L", "pf", "list-panes", "-a", "-F",
                                       "#{pane_id} #{@omx_team_pane_owner_id}"], world.env))
        return sorted(listed.stdout.split("\n")[:-1]) if listed.exit_code == 0 else []

    def panes_here() -> list[str]:
        listed = run_process("tmux", ("-L", "pf-here", "list-panes", "-a", "-F", "#{pane_id} #{@omx_team_pane_owner_id}"),
                             env=world.env)
        return sorted(listed.stdout.split("\n")[:-1]) if listed.exit_code == 0 else []

    out: dict[str, Any] = {}
    write(with_second=True)
    out["apply"] = cli("apply", "--yes")
    out["panes_there"], out["panes_here"] = panes_there(), panes_here()
    out["plan_after"] = cli("plan")
    write(with_second=False)
    out["plan_remove"] = cli("plan")
    out["apply_remove"] = cli("apply", "--yes")
    out["panes_there_after"], out["panes_here_after"] = panes_there(), panes_here()
    server_before = _ok(hosts.call(host, ["tmux", "-L", "pf", "display-message", "-p", "#{pid}@#{start_time}"],
                                   world.env)).stdout.strip()
    _ok(hosts.call(host, ["tmux", "-L", "pf", "kill-server"], world.env))
    # a new server on the team's socket there, whose first pane has the old leader's id (%0)
    for _ in range(50):
        if _ok(hosts.call(host, ["tmux", "-L", "pf", "new-session", "-d", "-s", "other", "sleep 600"],
                          world.env)).exit_code == 0:
            break
        time.sleep(0.1)
    out["servers"] = [server_before, _ok(hosts.call(
        host, ["tmux", "-L", "pf", "display-message", "-p", "#{pid}@#{start_time}"], world.env)).stdout.strip()]
    out["panes_other"] = panes_there()
    status = subprocess.run([sys.executable, str(Path.cwd() / "cli.py"), "team", "status", "there", "-o", "json"],
                            env=env, capture_output=True, text=True, timeout=240, cwd=project)
    out["status_restarted"] = {"code": status.returncode, "answer": json.loads(status.stdout.strip().splitlines()[-1])}
    out["plan_restarted"] = cli("plan")
    out["apply_restarted"] = cli("apply", "--yes")
    out["panes_there_restarted"] = panes_there()
    out["other_still_there"] = _ok(hosts.call(host, ["tmux", "-L", "pf", "has-session", "-t", "=other"],
                                              world.env)).exit_code == 0
    out["plan_restored"] = cli("plan")
    hosts.close(host, world.env)
    sim.stop()
    out["plan_down"] = cli("plan")
    out["plan_down_text"] = cli("plan", output="text")
    out["apply_down"] = cli("apply", "--yes")
    out["panes_here_down"] = panes_here()
    run_process("tmux", ("-L", "pf-here", "kill-server"), env=world.env)
    return out


@scenario("cli_cost")
def cli_cost(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """What the command line costs with a team on a host against the same here (bench/remote_cli.py): a
    ``team scale-up`` of ``workers`` placeholder workers, and ``plan`` of a fleet of two teams of half as many
    each, both here or one here and one on the host, after its ``apply``; every command a process of its own,
    as a user runs it."""
    import statistics

    (world.dir / "sockets").mkdir(mode=0o700)
    world.host("build1", login_shell="/bin/bash")
    workers, plans = int(params.get("workers", 10)), int(params.get("plans", 3))
    env = {**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config), "PANEFLEET_STATE_DIR": str(world.dir / "state")}
    host = _open(world, "build1")

    def timed(*args: str, cwd: Path | None = None) -> float:
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(Path.cwd() / "cli.py"), *args, "-o", "json"], env=env,
                              capture_output=True, text=True, timeout=300, cwd=cwd)
        assert done.returncode == 0, (args, done.stdout[-1500:], done.stderr[-1500:])
        return time.monotonic() - started

    out: dict[str, Any] = {}
    (world.dir / "here").mkdir()
    _ok(hosts.call(host, ["mkdir", "-p", "/tmp/there"], world.env))
    timed("team", "init", "here", "--cwd", str(world.dir / "here"), "--new-session", "--worker-cli", "placeholder",
          "--tmux-socket", "pf-here")
    timed("team", "init", "there", "--host", "build1", "--cwd", "/tmp/there", "--new-session", "--worker-cli",
          "placeholder", "--tmux-socket", "pf")
    out["scale_up_here_s"] = timed("team", "scale-up", "here", "--count", str(workers), "--cwd", str(world.dir / "here"))
    out["scale_up_host_s"] = timed("team", "scale-up", "there", "--count", str(workers))
    half = max(1, workers // 2)
    for label, second in (("here", None), ("two_hosts", "build1")):
        folder = world.dir / f"fleet-{label}"
        folder.mkdir()
        there = f'host = "{second}"\ncwd = "/tmp/fleet-{label}"\n' if second else ""
        if second:
            _ok(hosts.call(host, ["mkdir", "-p", f"/tmp/fleet-{label}"], world.env))
        (folder / "panefleet.toml").write_text(
            f'[team.a{label[0]}]\ntmux_socket = "pf-{label}-a"\n[[team.a{label[0]}.workers]]\ncli = "placeholder"\n'
            f'count = {half}\n[team.b{label[0]}]\n{there}tmux_socket = "pf-{label}-b"\n[[team.b{label[0]}.workers]]\n'
            f'cli = "placeholder"\ncount = {half}\n')
        out[f"apply_{label}_s"] = timed("apply", "--yes", cwd=folder)
        out[f"plan_{label}_s"] = statistics.median(timed("plan", cwd=folder) for _ in range(plans))
    for socket in ("pf-here", "pf-here-a", "pf-here-b", "pf-two_hosts-a"):
        run_process("tmux", ("-L", socket, "kill-server"), env=world.env)
    hosts.close(host, world.env)
    return out


@scenario("codex_on_host")
def codex_on_host(world: World, params: dict[str, Any]) -> dict[str, Any]:
    """Real Codex workers (the pinned CLI, tests/agents/sandbox.py) of a team on a host, talking to the mock
    model server on 127.0.0.1 of the test's own network namespace: ``team init --host`` and a scale-up through
    the command line; each worker starts there, gets its trigger, and its turn reaches the mock."""
    import shutil

    from tests.agents.mock_model import MockModel
    from tests.agents.sandbox import agent_bin

    count = int(params.get("workers", 1))
    repo, codex_home, state = world.dir / "repo", world.dir / "codex-home", world.dir / "state"
    for folder in (repo, codex_home):
        folder.mkdir()
    out: dict[str, Any] = {}
    with MockModel(log_path=world.dir / "requests.jsonl") as mock:
        (codex_home / "config.toml").write_text(
            f'model = "mock-model"\nmodel_provider = "mock"\n\n[model_providers.mock]\nname = "mock"\n'
            f'base_url = "{mock.base_url}/v1"\nwire_api = "responses"\n', encoding="utf-8")
        node = shutil.which("node")
        path = ":".join([str(agent_bin()), *([str(Path(node).parent)] if node else []), "/usr/local/bin:/usr/bin:/bin"])
        (world.dir / "sockets").mkdir(mode=0o700)
        world.host("build1", login_shell="/bin/bash", session_env={
            "PATH": path, "CODEX_HOME": str(codex_home), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"})
        host = _open(world, "build1")
        _ok(hosts.call(host, ["sh", "-c", 'cd "$1" && git init -q && git -c user.name=t -c user.email=t@t.invalid '
                                    'commit -q --allow-empty -m initial', "sh", str(repo)], world.env))
        env = {**world.env, "PANEFLEET_SSH_CONFIG": str(world.ssh_config), "PANEFLEET_STATE_DIR": str(state),
               "OMX_TEAM_READY_TIMEOUT_MS": "150000"}

        def cli(*args: str, timeout_s: float = 60) -> dict[str, Any]:
            done = subprocess.run([sys.executable, str(Path.cwd() / "cli.py"), *args, "-o", "json"], env=env,
                                  capture_output=True, text=True, timeout=timeout_s)
            lines = done.stdout.strip().splitlines()
            try:
                answer = json.loads(lines[-1]) if lines else None
            except json.JSONDecodeError:
                answer = {"unparsed": done.stdout[-1500:]}
            return {"code": done.returncode, "answer": answer, "stderr": done.stderr[-1500:]}

        out["init"] = cli("team", "init", "alpha", "--host", "build1", "--cwd", str(repo), "--new-session",
                          "--worker-cli", "codex", "--tmux-socket", "pf")
        started = time.monotonic()
        out["up"] = cli("team", "scale-up", "alpha", "--count", str(count), timeout_s=240)
        out["up_s"] = time.monotonic() - started
        workers = [f"worker-{n}" for n in range(1, count + 1)]
        deadline = time.monotonic() + 120
        reached: dict[str, bool] = {}
        while time.monotonic() < deadline:
            reached = {w: bool(mock.requests_containing(f"workers/{w}/inbox.md", prompt_only=True)) for w in workers}
            if all(reached.values()):
                break
            time.sleep(0.5)
        out["turns_reached_mock"] = reached
        start = json.loads(sorted((state / "audit").glob("*scale_up*.jsonl"))[-1].read_text().splitlines()[0])
        out["recorded_env"] = start["request"]["env"]  # the machine's facts as the host has them
        out["host_home"] = _ok(hosts.call(host, ["sh", "-c", 'printf "%s" "$HOME"'], world.env)).stdout
        out["status"] = cli("team", "status", "alpha")
        out["commands"] = _ok(hosts.call(host, ["tmux", "-u", "-L", "pf", "list-panes", "-a", "-F",
                                                "#{pane_id} #{pane_current_command}"], world.env)).stdout
        out["here"] = run_process("tmux", ("-L", "pf", "list-sessions"), env=world.env).exit_code == 0
        _ok(hosts.call(host, ["tmux", "-L", "pf", "kill-server"], world.env))
        hosts.close(host, world.env)
    return out


_CALL_SLEEP = """
import json, sys
from returns.result import Failure
from pure import hosts as pure_hosts
from shell.run import hosts, tmux_control, tmux_protocol
from shell.run.host_shell import HostShell, shell_command
from shell.run.process import run_process
destination, sockets, config, via = json.loads(sys.argv[1])
host, env = hosts.Host(destination, sockets, config), __import__("os").environ
shell = hosts.start_shell(host, env).unwrap() if via == "shell" else None
print("calling", flush=True)
answer = hosts.call(host, ["sleep", "30"], env, shell=shell)
fault = answer.failure() if isinstance(answer, Failure) else None
print(json.dumps({"code": answer.unwrap().exit_code, "stderr": answer.unwrap().stderr} if fault is None
                 else {"kind": fault.kind, "detail": fault.detail}))
"""


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))
