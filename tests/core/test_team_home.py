"""Teams remember where they live (shell/cli/team_home.py, shell/store/team_record.py,
shell/store/registry.py) and ``panefleet list`` (shell/cli/listing.py): a team is found from any folder
inside its project and on the tmux server it was made on, a team panefleet made scales without
``OMX_TEAM_SCALING_ENABLED`` while oh-my-codex's keep the gate, and every team panefleet can find is
listed from anywhere. The real-tmux tests run the CLI as a process, each on its own private server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shell.store.registry import RegistryError, prune_registry, register_team, registered_teams, registry_path
from shell.store.team_record import TeamRecordError, read_team_record, write_team_record
from tests.conftest import TmuxServer

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "cli.py")]


@pytest.fixture
def env(clean_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The test's process environment with panefleet's state (the registry) under a private
    ``XDG_STATE_HOME``, and no ``OMX_TEAM_SCALING_ENABLED``."""
    monkeypatch.delenv("PANEFLEET_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return dict(os.environ)


@pytest.fixture
def other_server(tmp_path: Path) -> Iterator[TmuxServer]:
    """A second private tmux server (started by the test's ``team init``), killed in teardown."""
    server = TmuxServer(f"pf-test-{uuid.uuid4().hex[:10]}")
    try:
        yield server
    finally:
        server.kill()
        sock = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / server.name
        if sock.exists():
            sock.unlink()


def pf(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
                          stdin=subprocess.DEVNULL)


def answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = done.stdout.splitlines()
    assert len(lines) == 1, (done.stdout, done.stderr)
    value: dict[str, Any] = json.loads(lines[0])
    return value


def made_team(tmp_path: Path, env: dict[str, str], server: TmuxServer, name: str, project: str,
              workers: int = 1) -> Path:
    """A team made by panefleet in ``tmp_path/project`` on ``server`` (named on the command line only),
    with ``workers`` placeholder workers added without ``OMX_TEAM_SCALING_ENABLED``."""
    work = tmp_path / project
    work.mkdir(exist_ok=True)
    done = pf("team", "init", name, "--new-session", "--session", f"s-{name}", "--worker-cli", "placeholder",
              "--tmux-socket", server.name, env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    if workers:
        done = pf("team", "scale-up", name, "--count", str(workers), "-o", "json", env=env, cwd=work)
        assert done.returncode == 0 and answer(done)["ok"] is True, (done.stdout, done.stderr)
    return work


# ----------------------------------------------------------------------------- found, remembered


@pytest.mark.tmux
def test_a_team_is_found_from_a_subfolder_on_its_recorded_server(tmux_server: TmuxServer, tmp_path: Path,
                                                                 env: dict[str, str]) -> None:
    work = made_team(tmp_path, env, tmux_server, "alpha", "proj", workers=2)
    record = json.loads((work / ".omx/state/team/alpha/panefleet.json").read_text())
    assert record["created_by"] == "panefleet" and record["tmux_socket"] == tmux_server.name
    assert record["project"] == str(work) and record["stopped"] is False
    deep = work / "src" / "pkg"
    deep.mkdir(parents=True)
    # no --cwd, no --tmux-socket, no PANEFLEET_TMUX_SOCKET: the folder above and the recorded server
    done = pf("team", "status", "alpha", "-o", "json", env=env, cwd=deep)
    status = answer(done)
    assert done.returncode == 0 and status["healthy"] is True, done.stdout
    assert status["stateRoot"] == str(work / ".omx/state")
    assert [p["verdict"] for p in status["panes"]] == ["live", "live", "live"]
    assert done.stderr == ""
    # the scale-down plan reads the recorded server: the pane is proven and killed, not kept as debt (exit 3)
    done = pf("team", "scale-down", "alpha", "--count", "1", "--dry-run", "-o", "json", env=env, cwd=deep)
    plan = answer(done)
    assert done.returncode == 0 and plan["predicted"]["ok"] is True, plan
    assert [c for c in plan["changes"] if "debt" in json.dumps(c)] == [], plan["changes"]
    done = pf("team", "scale-up", "alpha", "--count", "1", "--dry-run", "-o", "json", env=env, cwd=deep)
    assert done.returncode == 0 and answer(done)["predicted"]["ok"] is True, done.stdout


@pytest.mark.tmux
def test_an_explicit_server_wins_and_a_mismatch_is_named(tmux_server: TmuxServer, tmp_path: Path,
                                                         env: dict[str, str]) -> None:
    work = made_team(tmp_path, env, tmux_server, "alpha", "proj", workers=0)
    other = f"pf-none-{uuid.uuid4().hex[:8]}"
    done = pf("team", "status", "alpha", "--tmux-socket", other, env=env, cwd=work)
    first = done.stderr.splitlines()[0]
    assert first == (f"note: team alpha was recorded on tmux -L {tmux_server.name} "
                     f"({work / '.omx/state/team/alpha/panefleet.json'}); using --tmux-socket {other} as given"), \
        done.stderr
    assert done.returncode == 1 and f"tmux -L {other}" in done.stderr  # the server given was asked, not the record's
    done = pf("team", "status", "alpha", env={**env, "PANEFLEET_TMUX_SOCKET": other}, cwd=work)
    assert f"using PANEFLEET_TMUX_SOCKET={other} as given" in done.stderr.splitlines()[0]
    done = pf("team", "status", "alpha", "--tmux-socket", other, "-o", "json", env=env, cwd=work)
    assert answer(done)["ok"] is False and "note:" not in done.stdout + done.stderr
    # the same server named explicitly: no note
    done = pf("team", "status", "alpha", "--tmux-socket", tmux_server.name, env=env, cwd=work)
    assert done.returncode == 0 and "note:" not in done.stderr


@pytest.mark.tmux
def test_only_an_oh_my_codex_team_keeps_the_scaling_gate(tmux_server: TmuxServer, tmp_path: Path,
                                                         env: dict[str, str]) -> None:
    ours = made_team(tmp_path, env, tmux_server, "ours", "a", workers=1)  # scaled up without the variable
    assert json.loads((ours / ".omx/state/team/ours/config.json").read_text())["worker_count"] == 1
    theirs = made_team(tmp_path, env, tmux_server, "theirs", "b", workers=0)
    (theirs / ".omx/state/team/theirs/panefleet.json").unlink()  # as oh-my-codex leaves a team: no record
    env_socket = {**env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    for command in (["scale-up", "theirs", "--count", "1"], ["scale-down", "theirs", "--count", "1", "--dry-run"]):
        done = pf("team", *command, "-o", "json", env=env_socket, cwd=theirs)
        refused = answer(done)
        refused = refused.get("predicted", refused)
        assert done.returncode == 4 and refused["error_code"] == "scaling_disabled", done.stdout
        assert "A team panefleet made scales without it" in refused["error"]
    done = pf("team", "scale-up", "theirs", "--count", "1", "-o", "json",
              env={**env_socket, "OMX_TEAM_SCALING_ENABLED": "1"}, cwd=theirs)
    assert done.returncode == 0, done.stdout
    # a value set for panefleet's own team is kept, even 0
    done = pf("team", "scale-up", "ours", "--count", "1", "--dry-run", "-o", "json",
              env={**env, "OMX_TEAM_SCALING_ENABLED": "0"}, cwd=ours)
    predicted = answer(done)["predicted"]
    assert done.returncode == 4 and predicted["error_code"] == "scaling_disabled"
    assert predicted["error"].startswith("Scaling is turned off by OMX_TEAM_SCALING_ENABLED=0: a team panefleet made")
    # the help says so
    help_text = " ".join(pf("team", "scale-up", "--help", env=env, cwd=ours).stdout.split())
    assert "A team panefleet made (`team init`) scales as it is" in help_text
    assert "OMX_TEAM_SCALING_ENABLED=1" in help_text


@pytest.mark.tmux
def test_a_saved_init_plan_applied_remembers_its_team(tmux_server: TmuxServer, tmp_path: Path,
                                                     env: dict[str, str]) -> None:
    work = tmp_path / "proj"
    work.mkdir()
    tmux_server.new_session("main")  # a dry run of --new-session reads the server: it must be running
    plan = tmp_path / "init.json"
    done = pf("team", "init", "alpha", "--new-session", "--worker-cli", "placeholder", "--tmux-socket",
              tmux_server.name, "--plan-out", str(plan), env=env, cwd=work)
    assert done.returncode == 0 and not (work / ".omx").exists(), done.stderr
    assert registered_teams() == []  # a plan remembers nothing
    done = pf("apply", str(plan), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    record = read_team_record(work / ".omx/state/team/alpha")
    assert record is not None and (record.made_by_panefleet, record.tmux_socket) == (True, tmux_server.name)
    assert [(t.team, t.project, t.tmux_socket) for t in registered_teams()] == [("alpha", str(work), tmux_server.name)]


def test_a_team_found_nowhere_names_the_folders_searched(tmp_path: Path, env: dict[str, str]) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    done = pf("team", "status", "nosuch", env=env, cwd=deep)
    assert done.returncode == 4
    assert f"looked in {deep}/.omx/state/team, {tmp_path / 'a'}/.omx/state/team, " in done.stderr, done.stderr
    assert "/.omx/state/team)" in done.stderr and "`panefleet list`" in done.stderr
    # with the state root named by the environment, nothing is searched
    done = pf("team", "status", "nosuch", "-o", "json", env={**env, "OMX_TEAM_STATE_ROOT": "st"}, cwd=deep)
    assert f"(looked in {deep}/st/team)" in answer(done)["error"]


# ------------------------------------------------------------------------------------------ list


@pytest.mark.tmux
def test_list_from_an_unrelated_folder_shows_the_teams_of_two_projects(
        tmux_server: TmuxServer, other_server: TmuxServer, tmp_path: Path, env: dict[str, str]) -> None:
    one = made_team(tmp_path, env, tmux_server, "alpha", "one", workers=2)
    two = made_team(tmp_path, env, other_server, "beta", "two", workers=1)
    unrelated = tmp_path / "unrelated"
    unrelated.mkdir()
    done = pf("list", "-o", "json", env=env, cwd=unrelated)
    listed = answer(done)
    assert done.returncode == 0 and listed["ok"] is True
    rows = {row["team"]: row for row in listed["teams"]}
    assert set(rows) == {"alpha", "beta"}
    assert (rows["alpha"]["project"], rows["alpha"]["tmuxServer"]) == (str(one), tmux_server.name)
    assert (rows["beta"]["project"], rows["beta"]["tmuxServer"]) == (str(two), other_server.name)
    assert (rows["alpha"]["workersLive"], rows["alpha"]["workersDeclared"]) == (2, 2)
    assert (rows["beta"]["workersLive"], rows["beta"]["workersDeclared"]) == (1, 1)
    assert rows["alpha"]["agents"] == {"ready": 2, "busy": 0, "stuck": 0}
    assert all(row["state"] == "ok" and row["debt"] == 0 and row["stopped"] is False for row in rows.values())
    text = pf("list", env=env, cwd=unrelated)
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["TEAM", "PROJECT", "TMUX", "WORKERS", "READY/BUSY/STUCK", "DEBT", "STATE"]
    assert lines[1].split() == ["alpha", str(one), tmux_server.name, "2/2", "2/0/0", "0", "ok"]
    assert lines[2].split() == ["beta", str(two), other_server.name, "1/1", "1/0/0", "0", "ok"]
    # `team list` is the same command; from inside a project its own teams come first
    inside = pf("team", "list", "-o", "json", env=env, cwd=two)
    assert [row["team"] for row in answer(inside)["teams"]] == ["beta", "alpha"]


@pytest.mark.tmux
def test_list_with_one_server_down_says_so_in_that_row(
        tmux_server: TmuxServer, other_server: TmuxServer, tmp_path: Path, env: dict[str, str]) -> None:
    made_team(tmp_path, env, tmux_server, "alpha", "one", workers=1)
    made_team(tmp_path, env, other_server, "beta", "two", workers=1)
    other_server.kill()
    done = pf("list", "-o", "json", env=env, cwd=tmp_path)
    rows = {row["team"]: row for row in answer(done)["teams"]}
    assert done.returncode == 0
    assert rows["alpha"]["state"] == "ok" and rows["alpha"]["workersLive"] == 1
    assert rows["beta"]["state"] == "server down" and rows["beta"]["workersLive"] is None
    assert rows["beta"]["workersDeclared"] == 1 and f"tmux -L {other_server.name}" in rows["beta"]["error"]
    text = pf("list", env=env, cwd=tmp_path).stdout
    assert "server down" in text and f"beta ({tmp_path / 'two'}): tmux -L {other_server.name}" in text


def test_list_shows_gone_and_stopped_teams_and_prunes_the_gone(tmp_path: Path, env: dict[str, str]) -> None:
    here = tmp_path / "here"
    (here / ".omx/state/team/kept").mkdir(parents=True)
    write_team_record(here / ".omx/state/team/kept", created_by="panefleet", tmux_socket=None, project=str(here),
                      stopped=True)
    register_team("kept", project=str(here), state_root=str(here / ".omx/state"), tmux_socket=None)
    register_team("lost", project=str(tmp_path / "lost"), state_root=str(tmp_path / "lost/.omx/state"),
                  tmux_socket="pf-gone")
    done = pf("list", "-o", "json", "--tmux-socket", f"pf-none-{uuid.uuid4().hex[:8]}", env=env, cwd=tmp_path)
    rows = {row["team"]: row for row in answer(done)["teams"]}
    assert rows["lost"]["state"] == "gone" and rows["lost"]["tmuxServer"] == "pf-gone"
    assert rows["kept"]["state"] == "stopped" and rows["kept"]["stopped"] is True
    assert rows["kept"]["tmuxServer"] == "default"  # its record, not --tmux-socket
    done = pf("list", "--prune", "-o", "json", env=env, cwd=tmp_path)
    pruned = answer(done)
    assert pruned["pruned"] == [{"team": "lost", "stateRoot": str(tmp_path / "lost/.omx/state")}]
    assert [row["team"] for row in pruned["teams"]] == ["kept"]
    assert [entry.team for entry in registered_teams()] == ["kept"]


def test_list_of_nothing_says_where_it_looked(tmp_path: Path, env: dict[str, str]) -> None:
    done = pf("list", env=env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(f"No teams found: none under {tmp_path} or a folder above")
    assert str(tmp_path / "xdg/panefleet/teams.json") in done.stdout


# --------------------------------------------------------------------------- the record itself


def test_the_record_keeps_unknown_keys_and_stamps_times(tmp_path: Path) -> None:
    team_dir = tmp_path / "team" / "alpha"
    team_dir.mkdir(parents=True)
    assert read_team_record(team_dir) is None
    made = write_team_record(team_dir, created_by="panefleet", tmux_socket="work", project="/p")
    assert (made.made_by_panefleet, made.tmux_socket, made.stopped, made.stopped_at) == (True, "work", False, None)
    raw = json.loads((team_dir / "panefleet.json").read_text())
    assert list(raw) == ["created_by", "tmux_socket", "project", "stopped", "stopped_at", "updated_at"]
    (team_dir / "panefleet.json").write_text(json.dumps({**raw, "fleet_file": "/p/panefleet.toml"}))
    stopped = write_team_record(team_dir, stopped=True)
    assert stopped.stopped and stopped.stopped_at and stopped.tmux_socket == "work"
    again = write_team_record(team_dir, stopped=True)
    assert again.stopped_at == stopped.stopped_at  # stopped once: when it was first stopped
    raw = json.loads((team_dir / "panefleet.json").read_text())
    assert raw["fleet_file"] == "/p/panefleet.toml"
    started = write_team_record(team_dir, stopped=False)
    assert (started.stopped, started.stopped_at) == (False, None)
    with pytest.raises(TeamRecordError, match="team'?s folder does not exist"):
        write_team_record(tmp_path / "team" / "nosuch", stopped=True)
    assert not (tmp_path / "team" / "nosuch").exists()


@pytest.mark.parametrize(("text", "problem"), [
    ("{", "not valid JSON"),
    ("[]", "must be a JSON object"),
    ('{"tmux_socket": "../x"}', "field tmux_socket"),
    ('{"stopped": "yes"}', "field stopped"),
    ('{"created_by": 1}', "field created_by"),
])
def test_a_malformed_record_is_a_typed_error_naming_the_file(tmp_path: Path, text: str, problem: str) -> None:
    team_dir = tmp_path / "alpha"
    team_dir.mkdir()
    (team_dir / "panefleet.json").write_text(text)
    with pytest.raises(TeamRecordError) as caught:
        read_team_record(team_dir)
    assert str(caught.value).startswith(f"{team_dir / 'panefleet.json'}: ") and problem in str(caught.value)
    with pytest.raises(TeamRecordError):
        write_team_record(team_dir, stopped=True)  # never written over
    assert (team_dir / "panefleet.json").read_text() == text


def test_team_commands_and_list_name_a_malformed_record(tmp_path: Path, env: dict[str, str]) -> None:
    team_dir = tmp_path / ".omx/state/team/alpha"
    team_dir.mkdir(parents=True)
    (team_dir / "panefleet.json").write_text("{")
    done = pf("team", "status", "alpha", env=env, cwd=tmp_path)
    assert done.returncode == 1 and f"{team_dir / 'panefleet.json'}: not valid JSON" in done.stderr
    done = pf("team", "scale-up", "alpha", "--count", "1", "-o", "json", env=env, cwd=tmp_path)
    refused = answer(done)
    assert done.returncode == 1 and refused["error_code"] == "team_record_malformed"
    assert str(team_dir / "panefleet.json") in refused["error"]
    rows = answer(pf("list", "-o", "json", env=env, cwd=tmp_path))["teams"]
    assert rows[0]["state"] == "error" and "not valid JSON" in rows[0]["error"]


# ------------------------------------------------------------------------------------- the registry


def test_the_registry_lives_in_xdg_state_home_and_a_malformed_one_is_named(tmp_path: Path,
                                                                           env: dict[str, str]) -> None:
    assert registry_path() == tmp_path / "xdg" / "panefleet" / "teams.json"
    assert registered_teams() == [] and prune_registry() == []
    first = register_team("alpha", project="/p", state_root="/p/.omx/state", tmux_socket="work")
    again = register_team("alpha", project="/p", state_root="/p/.omx/state", tmux_socket=None)
    assert [(t.team, t.tmux_socket) for t in registered_teams()] == [("alpha", None)]
    assert first.key == again.key
    registry_path().write_text('{"teams": [{"team": "alpha"}]}')
    with pytest.raises(RegistryError, match=r"teams\.json: teams\[0\]\.project: must be a non-empty string"):
        registered_teams()
    with pytest.raises(RegistryError):
        register_team("beta", project="/q", state_root="/q/.omx/state", tmux_socket=None)
    registry_path().write_text("not json")
    done = pf("list", "-o", "json", env=env, cwd=tmp_path)
    refused = answer(done)
    assert done.returncode == 1 and refused["error_code"] == "registry_malformed"
    assert refused["error"].startswith(f"{registry_path()}: not valid JSON")
    assert registry_path().read_text() == "not json"


REGISTER = """
import sys
sys.path.insert(0, {root!r})
from shell.store.registry import register_team
for n in range(5):
    register_team(f"t{{sys.argv[1]}}-{{n}}", project="/p", state_root="/p/.omx/state", tmux_socket=None)
"""


def test_several_processes_register_at_once(tmp_path: Path, env: dict[str, str]) -> None:
    script = REGISTER.format(root=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", script, str(k)], env=env) for k in range(6)]
    assert [proc.wait(timeout=120) for proc in procs] == [0] * 6
    names = sorted(entry.team for entry in registered_teams())
    assert names == sorted(f"t{k}-{n}" for k in range(6) for n in range(5))
    assert not (registry_path().parent / "teams.json.lock").exists()


def test_names_complete_from_a_subfolder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shell.cli.complete_names import names

    folder = tmp_path / "proj" / ".omx" / "state" / "team" / "alpha"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"workers": [{"name": "worker-1"}]}))
    deep = tmp_path / "proj" / "src"
    deep.mkdir()
    monkeypatch.chdir(deep)
    assert names("teams", ["panefleet", "team", "status", ""], {}) == ["alpha"]
    assert names("workers", ["panefleet", "team", "respawn", "alpha", ""], {}) == ["worker-1"]
    assert names("teams", ["panefleet", "team", "status", ""], {"OMX_TEAM_STATE_ROOT": "st"}) == []
