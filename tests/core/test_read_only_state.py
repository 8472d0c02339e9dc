"""Read-only state: a read-only bind mount in a private mount namespace (``unshare -m``), since a
root process writes through any permission bits. Commands that change nothing answer from it; a
changing command's dry run predicts the write failure the real run then observes (the same answer,
exit status and path), and nothing is changed; an audit log that cannot be written is named on stderr.

Without ``unshare -m`` (no CAP_SYS_ADMIN) these tests skip, except under CI (``CI=true``), where
that is a failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TmuxServer

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "cli.py")]
MOUNT_FAILED = 97
# Mounts each of the first $1 arguments read-only over itself, then runs the rest.
READ_ONLY = ('n=$1; shift; while [ "$n" -gt 0 ]; do mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" '
             f'|| exit {MOUNT_FAILED}; shift; n=$((n - 1)); done; exec "$@"')


def read_only(dirs: list[Path], argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``argv`` run with every folder of ``dirs`` mounted read-only, for it alone."""
    done = subprocess.run(["unshare", "-m", "sh", "-c", READ_ONLY, "sh", str(len(dirs)), *map(str, dirs), *argv],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode != MOUNT_FAILED, done.stderr
    return done


@pytest.fixture(scope="module")
def mounts(tmp_path_factory: pytest.TempPathFactory) -> None:
    """That a read-only bind mount can be made here, and is read-only even for root."""
    probe = tmp_path_factory.mktemp("probe")
    try:
        done = subprocess.run(["unshare", "-m", "sh", "-c", READ_ONLY, "sh", "1", str(probe), "sh", "-c",
                               'touch "$1/x" 2>/dev/null && exit 1; exit 0', "sh", str(probe)],
                              capture_output=True, text=True, timeout=30)
        reason = "" if done.returncode == 0 else f"a read-only bind mount cannot be made here " \
                                                 f"(unshare -m: exit {done.returncode}, {done.stderr.strip()!r})"
    except FileNotFoundError:
        reason = "unshare is not installed"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def pf(argv: list[str], env: dict[str, str], dirs: list[Path] | None = None) -> subprocess.CompletedProcess[str]:
    if dirs:
        return read_only(dirs, [*CLI, *argv], env)
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, env=env, timeout=120)


def answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected one JSON line, got {done.stdout!r} (stderr {done.stderr!r})"
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def summary(status: dict[str, Any]) -> tuple[Any, ...]:
    """What a team status says of the team and its panes (not what their screens show at that moment)."""
    return (status["ok"], status["team"], status["workerCount"], status["configGeneration"], status["healthy"],
            status["debt"], [(p["name"], p["paneId"], p["verdict"], p["pid"], p["pidMatch"], p["ownerMatch"])
                             for p in status["panes"]])


@pytest.fixture
def team(mounts: None, tmux_server: TmuxServer, tmp_path: Path,
         clean_env: dict[str, str]) -> Iterator[tuple[dict[str, str], Path]]:
    """Team ``alpha``: a proven leader and one placeholder worker (init, then scale-up 1)."""
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name, "OMX_TEAM_SCALING_ENABLED": "1"}
    leader = tmux_server.new_session("lead")
    work = tmp_path / "work dir"  # a space in the path on purpose
    work.mkdir()
    init = pf(["team", "init", "alpha", "--leader-pane", leader, "--worker-cli", "placeholder", "--cwd", str(work),
               "-o", "json"], env)
    assert init.returncode == 0, init.stdout + init.stderr
    first = pf(["team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "-o", "json"], env)
    assert first.returncode == 0, first.stdout + first.stderr
    yield env, work


@pytest.mark.tmux
@pytest.mark.tmux_executors("control")  # what is read-only is the team state, not how tmux is asked
def test_read_only_team_state_status_answers_and_scale_up_fails_as_its_dry_run_predicts(
        tmux_server: TmuxServer, team: tuple[dict[str, str], Path]) -> None:
    env, work = team
    omx = work / ".omx"
    panes, before = tmux_server.panes(), files(omx)
    healthy = pf(["team", "status", "alpha", "--cwd", str(work), "-o", "json"], env)

    # team status changes nothing: it answers the team's status, read without the membership lock
    status = pf(["team", "status", "alpha", "--cwd", str(work), "-o", "json"], env, [omx])
    assert status.returncode == healthy.returncode in (0, 3), status.stdout + status.stderr
    result = answer(status)
    lock = omx / "state/.team-locks/alpha.membership"
    assert result["ok"] is True and result["readUnlocked"] == f"OSError: Read-only file system: {lock}"
    assert "readUnlocked" not in answer(healthy) and summary(result) == summary(answer(healthy))
    assert [(p["name"], p["verdict"], p["pidMatch"], p["ownerMatch"]) for p in result["panes"]] == [
        ("leader", "live", True, True), ("worker-1", "live", True, True)]
    text = pf(["team", "status", "alpha", "--cwd", str(work)], env, [omx])
    assert text.returncode == status.returncode, text.stderr
    assert f"note: read without the membership lock, which cannot be taken (OSError: Read-only file system: {lock})" \
           in text.stdout and "worker-1" in text.stdout
    shown = pf(["team", "debt", "show", "alpha", "--cwd", str(work), "-o", "json"], env, [omx])
    assert shown.returncode == 0 and answer(shown)["ok"] is True, shown.stdout + shown.stderr
    saved = work.parent / "plan.json"  # a plan saved while the state could be written, shown when it cannot
    made = pf(["team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "--plan-out", str(saved)], env)
    assert made.returncode == 0, made.stdout + made.stderr
    plan_shown = pf(["show", str(saved)], env, [omx, Path(env["PANEFLEET_STATE_DIR"]), work.parent])
    assert plan_shown.returncode == 0 and "Plan: 1 to add" in plan_shown.stdout, plan_shown.stdout + plan_shown.stderr

    # the dry run predicts the failure to take the scaling lock; the real run fails just so
    scaling = omx / "state/.team-locks/alpha.scaling"
    why = f"OSError: Read-only file system: {scaling}"
    plan = pf(["team", "scale-up", "alpha", "--count", "1", "--dry-run", "--cwd", str(work), "-o", "json"], env, [omx])
    predicted = answer(plan)
    assert plan.returncode == 1 and predicted["ok"] is False and predicted["predicted"]["error_detail"] == why
    assert predicted["predicted"]["error_code"] == "state_not_writable"
    assert predicted["changes"] == []
    plan_text = pf(["team", "scale-up", "alpha", "--count", "1", "--dry-run", "--cwd", str(work)], env, [omx])
    said = f"scale-up failed: panefleet could not use {scaling}: Read-only file system."
    assert plan_text.returncode == 1 and said in plan_text.stdout, plan_text.stdout
    real = pf(["team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "-o", "json"], env, [omx])
    assert real.returncode == plan.returncode and answer(real) == predicted["predicted"]
    real_text = pf(["team", "scale-up", "alpha", "--count", "1", "--cwd", str(work)], env, [omx])
    assert real_text.returncode == 1 and said in real_text.stderr, real_text.stderr

    # the team itself read-only, its lock folder not: the first write fails, and the rollback's
    assert summary(answer(pf(["team", "status", "alpha", "--cwd", str(work), "-o", "json"], env))) == summary(
        answer(healthy))
    team_dir = omx / "state/team/alpha"
    plan = pf(["team", "scale-up", "alpha", "--count", "1", "--dry-run", "--cwd", str(work), "-o", "json"], env,
              [team_dir])
    predicted = answer(plan)
    failed = [s["observation"]["error"] for s in predicted["steps"] if s["observation"].get("ok") is False]
    assert failed and all(e.startswith(f"OSError: Read-only file system: {team_dir}/") for e in failed), failed
    assert predicted["changes"] == [] and predicted["predicted"]["ok"] is False
    real = pf(["team", "scale-up", "alpha", "--count", "1", "--cwd", str(work), "-o", "json"], env, [team_dir])
    assert real.returncode == plan.returncode == 1 and answer(real) == predicted["predicted"]

    # nothing changed: no pane left behind, every team file as it was, the team as healthy as before
    assert tmux_server.panes() == panes and files(omx) == before
    assert summary(answer(pf(["team", "status", "alpha", "--cwd", str(work), "-o", "json"], env))) == summary(
        answer(healthy))


@pytest.mark.tmux
@pytest.mark.tmux_executors("control")
@pytest.mark.parametrize("where", ["--new-session", "--leader-pane"])
def test_team_init_that_cannot_write_its_state_leaves_no_session_and_no_tag(
        mounts: None, tmux_server: TmuxServer, tmp_path: Path, clean_env: dict[str, str], where: str) -> None:
    """Nothing of a team outlives its failed init: the session it started is killed, the tag it set on
    an adopted leader pane is taken off (each after its proof), and the answer says so."""
    env = {**clean_env, "PANEFLEET_TMUX_SOCKET": tmux_server.name}
    lead = tmux_server.new_session("lead")
    work = tmp_path / "work"
    (work / ".omx").mkdir(parents=True)
    argv = ["team", "init", "alpha", "--cwd", str(work), "-o", "json"]
    argv += ["--new-session"] if where == "--new-session" else ["--leader-pane", lead]
    before = tmux_server.panes()
    done = pf(argv, env, [work / ".omx"])
    failed = answer(done)
    assert done.returncode == 1 and failed["ok"] is False, failed
    assert "Read-only file system" in failed["error"] and "Undone:" in failed["error"]
    said = "undone: killed pane" if where == "--new-session" else f"undone: removed the owner tag it had set on the " \
                                                                 f"leader pane {lead}"
    assert said in failed["error_detail"]
    assert tmux_server.panes() == before  # the session it started is gone again (or none was started)
    assert tmux_server.owner(lead) == ""
    sessions = tmux_server.cmd("list-sessions", "-F", "#{session_name}").stdout.split()
    assert sessions == ["lead"]
    assert not list((work / ".omx").iterdir())


@pytest.mark.tmux
@pytest.mark.tmux_executors("control")
def test_an_audit_log_that_cannot_be_written_is_named_on_stderr_once(
        team: tuple[dict[str, str], Path]) -> None:
    env, work = team
    state = Path(env["PANEFLEET_STATE_DIR"])
    logs = sorted((state / "audit").iterdir())
    for mode in ("text", "json"):
        done = pf(["team", "status", "alpha", "--cwd", str(work), "-v", "-o", mode], env, [state])
        assert done.returncode in (0, 3), done.stdout + done.stderr
        notes = [line for line in done.stderr.splitlines() if line.startswith("panefleet: audit log not written: ")]
        assert len(notes) == 1, done.stderr
        assert notes[0].startswith(f"panefleet: audit log not written: {state}/audit/")
        assert "-team-status-" in notes[0] and notes[0].endswith(".jsonl: Read-only file system"), notes[0]
        assert "audit log: " not in done.stderr  # -v names no log that was not written
        if mode == "json":
            assert answer(done)["team"] == "alpha"
        else:
            assert "team alpha" in done.stdout
    assert sorted((state / "audit").iterdir()) == logs
    written = pf(["team", "status", "alpha", "--cwd", str(work), "-v"], env)
    assert "audit log not written" not in written.stderr and f"audit log: {state}/audit/" in written.stderr


def test_audit_log_note_when_the_state_dir_is_not_a_folder(tmp_path: Path, clean_env: dict[str, str]) -> None:
    """The same note without a mount: a state dir that is a file (no tmux needed: the team is missing)."""
    blocker = tmp_path / "state-file"
    blocker.write_text("")
    env = {**clean_env, "PANEFLEET_STATE_DIR": str(blocker)}
    for mode in ("text", "json"):
        done = pf(["team", "debt", "show", "nope", "--cwd", str(tmp_path), "-o", mode], env)
        assert done.returncode == 4, done.stdout + done.stderr
        notes = [line for line in done.stderr.splitlines() if "audit log not written" in line]
        assert len(notes) == 1 and notes[0].startswith(f"panefleet: audit log not written: {blocker}/audit/")
        assert notes[0].endswith(": Not a directory"), notes[0]


STEPS = textwrap.dedent("""
    import json, sys
    from pure import model as m
    from shell.run.dryrun import DryRunExecutor
    from shell.run.executor import Executor

    ro, rw = sys.argv[1], sys.argv[2]
    steps = [
        m.WriteFile(path=f"{ro}/file", content="new"),
        m.WriteFile(path=f"{ro}/a/b/file", content="new"),
        m.AppendFile(path=f"{ro}/file", content="more"),
        m.MakeDir(path=f"{ro}/x/y"),
        m.MakeDir(path=f"{ro}/dir"),
        m.RemovePath(path=f"{ro}/file"),
        m.RemovePath(path=f"{ro}/dir", recursive=True),
        m.RemovePath(path=f"{ro}/absent"),
        m.AcquireLock(path=f"{ro}/locks/new.lock", timeout_ms=2000, retry_ms=25),
        m.AcquireLock(path=f"{ro}/locks/abandoned.lock", timeout_ms=2000, retry_ms=25),
        m.WriteFile(path=f"{rw}/made/file", content="new"),
    ]
    out = []
    for step in steps:
        dry = DryRunExecutor(Executor()).execute(step)
        real = Executor().execute(step)
        out.append([step.op, step.path, dry.error, real.error])
    print(json.dumps(out))
""")


def test_dry_run_predicts_each_write_as_the_real_executor_observes_it(mounts: None, tmp_path: Path) -> None:
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    (ro / "dir/sub").mkdir(parents=True)
    (ro / "dir/sub/f").write_text("x")
    (ro / "locks/abandoned.lock").mkdir(parents=True)
    (ro / "locks/abandoned.lock/owner").write_text("999999999.1000.ab12")  # no such pid: abandoned
    (ro / "file").write_text("old")
    rw.mkdir()
    done = read_only([ro], [sys.executable, "-c", STEPS, str(ro), str(rw)], dict(os.environ))
    assert done.returncode == 0, done.stderr
    seen = {(op, path): (dry, real) for op, path, dry, real in json.loads(done.stdout)}
    erofs = "OSError: Read-only file system: "
    expected = {
        ("write_file", f"{ro}/file"): erofs + f"{ro}/file",
        ("write_file", f"{ro}/a/b/file"): erofs + f"{ro}/a",  # the first folder that had to be made
        ("append_file", f"{ro}/file"): erofs + f"{ro}/file",
        ("mkdir", f"{ro}/x/y"): erofs + f"{ro}/x",
        ("mkdir", f"{ro}/dir"): "",  # there already
        ("remove", f"{ro}/file"): erofs + f"{ro}/file",
        ("remove", f"{ro}/dir"): erofs + f"{ro}/dir",
        ("remove", f"{ro}/absent"): "",  # nothing to do
        ("lock", f"{ro}/locks/new.lock"): erofs + f"{ro}/locks/new.lock",
        ("lock", f"{ro}/locks/abandoned.lock"): erofs + f"{ro}/locks/abandoned.lock",  # no takeover can be made
        ("write_file", f"{rw}/made/file"): "",  # a folder that can be written
    }
    assert seen == {key: (error, error) for key, error in expected.items()}
    assert (ro / "file").read_text() == "old" and (rw / "made/file").read_text() == "new"


def test_herdr_store_in_a_read_only_folder_answers_reads_and_a_dry_run_predicts_the_refused_change(
        mounts: None, tmp_path: Path, clean_env: dict[str, str]) -> None:
    from shell.store.herdr import HerdrStore

    state = tmp_path / "state"
    env = {**clean_env, "PANEFLEET_STATE_DIR": str(state)}
    store = HerdrStore.open(env)
    store.start_run(run_id="r1", project="alpha", issue=7, attempt=1, pid=None, session_file=None)
    store.close()
    listed = pf(["herdr", "run", "list", "-o", "json"], env, [state])
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert [(r["run_id"], r["issue"]) for r in answer(listed)["runs"]] == [("r1", 7)]
    start = ["herdr", "run", "start", "--run-id", "r2", "--project", "alpha", "--issue", "8", "--attempt", "1",
             "-o", "json"]
    plan = pf([*start, "--dry-run"], env, [state])
    real = pf(start, env, [state])
    refused = f"store {state}/herdr.sqlite3: attempt to write a readonly database"
    assert answer(plan)["predicted"]["error"] == refused and answer(plan)["changes"] == []
    assert real.returncode == plan.returncode != 0 and answer(real) == answer(plan)["predicted"]
    assert [r.run_id for r in HerdrStore.open(env).runs()] == ["r1"]
