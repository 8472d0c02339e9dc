"""What the scale-down, debt and task commands say when the team itself is the problem, and how
their arguments are checked: the CLI in-process (``cli.main``), exit codes and text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli
from pure import model as m
from pure.omx import locks, txn
from pure.tmux import PANE_FORMAT
from tests.harness import ScenarioExecutor
from tests.omx_down.fixtures import Team, drive, program_of
from tests.omx_down.stub import Stub, run_op


@pytest.fixture
def env(clean_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("OMX_TEAM_SCALING_ENABLED", "1")
    monkeypatch.setenv("PANEFLEET_TMUX_SOCKET", "pf-none-" + tmp_path.name)
    cwd = tmp_path / "work"
    cwd.mkdir()
    return cwd


def run(capsys: pytest.CaptureFixture[str], cwd: Path, *args: str) -> tuple[int, str]:
    """The command's exit status and what it said: with ``-o json``, stdout; in text mode a refusal or
    failure is said on stderr (stdout stays empty), anything else on stdout."""
    code = cli.main(["team", *args, "--cwd", str(cwd)])
    captured = capsys.readouterr()
    if "json" in args:
        return code, captured.out
    if code in (1, 2, 4):
        assert captured.out == "", captured.out
        return code, captured.err
    return code, captured.out + captured.err


def no_tmux(args: tuple[str, ...]) -> m.Proc:
    raise AssertionError(f"unexpected tmux call {args}")


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): (p.read_text() if p.is_file() else "/") for p in sorted(root.rglob("*"))}


# ------------------------------------------------------------------------- 1: corrupt config.json

CORRUPT_COMMANDS = [
    ("scale-down", ("scale-down", "t", "--worker", "worker-1")),
    ("scale-down-count", ("scale-down", "t", "--force")),
    ("debt-reconcile", ("debt", "reconcile", "t")),
    ("debt-show", ("debt", "show", "t")),
    ("task-create", ("task", "create", "t", "--subject", "s", "--description", "d")),
    ("task-claim", ("task", "claim", "t", "1", "--worker", "worker-1")),
]


@pytest.mark.parametrize(("label", "args"), CORRUPT_COMMANDS, ids=[c[0] for c in CORRUPT_COMMANDS])
def test_corrupt_config_is_a_typed_error_not_a_missing_team(env: Path, capsys: pytest.CaptureFixture[str],
                                                            label: str, args: tuple[str, ...]) -> None:
    team = Team(env, "t", 2)
    team.write_task("1", "one")
    (team.dir / "config.json").write_text("{\n")
    before = tree(team.dir)
    code, out = run(capsys, env, *args)
    config = team.dir / "config.json"
    assert out.startswith(f"error: The team's state files cannot be read ({config}: malformed JSON at line 2 column 1"), out
    assert "not found" not in out
    assert code == 1
    assert tree(team.dir) == before  # nothing changed


def test_config_with_a_bad_field_names_the_field(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    team = Team(env, "t", 2)
    team.update(lambda c: c.__setitem__("workers", "nope"))
    (team.dir / "manifest.v2.json").unlink()
    code, out = run(capsys, env, "scale-down", "t", "--worker", "worker-1", "-o", "json")
    assert code == 1
    answer = json.loads(out)
    assert answer["error_code"] == "team_state_malformed"
    assert f"({team.dir / 'config.json'} field workers: must be an array)" in answer["error"]


@pytest.mark.parametrize("args", [("scale-down", "t", "--worker", "worker-1"), ("debt", "reconcile", "t")])
def test_missing_config_is_still_team_not_found(env: Path, capsys: pytest.CaptureFixture[str],
                                                args: tuple[str, ...]) -> None:
    (env / ".omx" / "state" / "team" / "t").mkdir(parents=True)
    code, out = run(capsys, env, *args)
    assert code == 4 and out.startswith("error: Team t was not found (looked in ")


def test_read_state_distinguishes_missing_from_malformed(tmp_path: Path) -> None:
    team = Team(tmp_path, "t", 1)

    def read() -> m.Done:
        body = locks.with_barrier(team.paths, lambda b: txn.load_team(team.paths, b))
        done, _ = drive(lambda: program_of(body), ScenarioExecutor(tmp_path, no_tmux))
        return done

    (team.dir / "config.json").write_text("[]")
    done = read()
    assert done.outcome.status == "error"
    assert done.outcome.message == f"team_state_malformed:{team.dir / 'config.json'}: expected a JSON object, got list"
    (team.dir / "config.json").unlink()
    assert read().outcome.status == "ok"  # None: a missing team is the caller's to report


# ------------------------------------------------------------------ 2: a corrupt debt file is named


@pytest.mark.parametrize(("label", "content", "error", "exit_code"), [
    ("unreadable", "{\n", "scale_down_cleanup_debt_unreadable:SyntaxError: ", 4),
    ("malformed", '{"schema_version": 2}', "scale_down_cleanup_debt_malformed", 4),
    ("beyond-a-double", '{"schema_version": 1e400}', "scale_down_cleanup_debt_malformed", 4),
    ("5000-digits", '{"schema_version": ' + "9" * 5000 + "}", "scale_down_cleanup_debt_malformed", 4),
    ("deep", "[" * 5000, "scale_down_cleanup_debt_malformed", 4),
    ("lone-surrogate", '{"schema_version": 1, "operation": "\\ud800"}', "scale_down_cleanup_debt_malformed", 4),
])
def test_scale_down_with_a_bad_debt_record_says_nothing_was_done(
        env: Path, capsys: pytest.CaptureFixture[str], label: str, content: str, error: str, exit_code: int) -> None:
    team = Team(env, "t", 2)
    team.debt_path().write_text(content)
    before = tree(team.dir)
    code, out = run(capsys, env, "scale-down", "t", "--worker", "worker-1", "--force")
    assert code == exit_code
    lines = out.splitlines()
    assert lines[0].startswith("error: The team's cleanup debt record (.scale-down-cleanup-debt.json) ")
    assert "committed" not in out and "kept as" not in out and "debt:" not in out
    assert "nothing was done" in lines[0] and "no membership change" in lines[0] and "no tmux call" in lines[0]
    assert "`panefleet team debt show t`" in lines[0]
    code, out = run(capsys, env, "scale-down", "t", "--worker", "worker-1", "--force", "-o", "json")
    assert (code, json.loads(out)["error_code"]) == (exit_code, error.split(":")[0])
    assert tree(team.dir) == before


def test_committed_debt_still_says_membership_is_committed() -> None:
    from shell.cli.explain import Scene, explain

    scene = Scene(command="team scale-down", team="t")
    text = explain("scale_down_cleanup_debt:pane_teardown_failed:%13;pane_teardown_unresolved:%13", scene).text
    assert "membership is committed" in text and "`panefleet team debt reconcile t`" in text
    proof = explain("scale_down_pane_proof_unavailable:%13:query_failed", scene).text
    assert "membership is committed" in proof
    prior = explain("scale_down_cleanup_debt_unresolved:%13", scene).text
    assert "membership is committed" not in prior and "could not be settled" in prior


# ------------------------------------------------------------------------- 3: debt show, no team


def test_debt_show_of_an_unknown_team_says_so(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, env, "debt", "show", "nosuch")
    assert code == 4 and out.startswith("error: Team nosuch was not found (looked in ")
    assert "`panefleet team init nosuch --new-session`" in out
    code, out = run(capsys, env, "debt", "show", "nosuch", "-o", "json")
    answer = json.loads(out)
    assert (code, answer["ok"], answer["error_code"]) == (4, False, "team_not_found")


def test_debt_show_without_debt(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Team(env, "t", 2)
    code, out = run(capsys, env, "debt", "show", "t")
    assert (code, out) == (0, "team t: no cleanup debt recorded\n")


# ---------------------------------------------------------------- 4: task commands and team names


def test_task_create_on_an_unknown_team_is_refused(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, env, "task", "create", "nosuch", "--subject", "s", "--description", "d")
    assert code == 4 and out.startswith("error: Team nosuch was not found (looked in ")


def test_task_claim_on_an_unknown_team_names_the_team(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, env, "task", "claim", "nosuch", "1", "--worker", "worker-1")
    assert code == 4 and out.startswith("error: Team nosuch was not found (looked in ")
    assert not (env / ".omx" / "state" / "team" / "nosuch").exists()


INVALID = 'Team name must match /^[a-z0-9][a-z0-9-]{0,29}$/ (lowercase alphanumeric + hyphens, max 30 chars).'


@pytest.mark.parametrize("name", ["../x", "My Team", "t_x", "a" * 31])
@pytest.mark.parametrize("args", [("claim", "{}", "1", "--worker", "worker-1"),
                                  ("create", "{}", "--subject", "s", "--description", "d")])
def test_task_commands_refuse_invalid_team_names(env: Path, capsys: pytest.CaptureFixture[str], name: str,
                                                 args: tuple[str, ...]) -> None:
    Team(env, "x", 2).write_task("1", "one")  # what "../x" would sanitise to must not be touched
    before = tree(env)
    code, out = run(capsys, env, "task", *(a.format(name) for a in args))
    assert (code, out) == (2, f'panefleet: error: Invalid team name: "{name}". {INVALID}\n')  # a usage error
    assert tree(env) == before


# -------------------------------------------------------------- 5: what debt reconcile did, in text


def _debt_team(cwd: Path, status: str = "unresolved") -> Team:
    team = Team(cwd, "t", 3)
    team.set_panes(owner="team:scale-down", worker_2=("%13", 42413), worker_3=("%14", 42414))
    for i, w, p in ((2, "worker-2", "%13"), (3, "worker-3", "%14")):
        team.worker_file(w, "identity.json").write_text(json.dumps({"name": w, "index": i, "pane_id": p,
                                                                     "pid": 42400 + int(p[1:])}))
    panes = [{"name": "worker-2", "index": 2, "pane_id": "%13", "pid": 42413},
             {"name": "worker-3", "index": 3, "pane_id": "%14", "pid": 42414}]
    team.update(lambda c: c.__setitem__("workers", c["workers"][:1]))
    team.debt_path().write_text(json.dumps({
        "schema_version": 1, "operation": "scale_down", "status": status, "created_at": "2026-01-01T00:00:00.000Z",
        "removed_worker_names": ["worker-2", "worker-3"], "workers": panes,
        "resource_workers": [{"name": "worker-2"}, {"name": "worker-3"}], "unresolved_panes": panes}))
    return team


def _reconcile_text(tmp_path: Path, stub: Stub, cwd: Path) -> tuple[m.Done, str]:
    from pure.omx.scale_down import DebtRequest
    from shell.cli.scale_down import render_reconcile

    done, journal = run_op("team.debt_reconcile", DebtRequest(team="t", cwd=str(cwd)),
                           ScenarioExecutor(tmp_path, stub))
    return done, render_reconcile(done.outcome.result, journal)  # type: ignore[arg-type]


def test_reconcile_text_names_killed_gone_and_cleaned(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    team = _debt_team(cwd)
    done, text = _reconcile_text(tmp_path, Stub({"%13": (0, 42413)}), cwd)
    assert done.outcome.result == {"ok": True}  # the JSON stays oh-my-codex's
    workers = team.dir / "workers"
    assert text.splitlines() == [
        "cleanup debt for removed worker(s) worker-2, worker-3 (status unresolved)",
        "  pane %13 (worker worker-2): killed",
        f"    its transcript: {team.dir / 'transcripts' / 'worker-2.20260101T000000.001Z.log'}",
        "  pane %14 (worker worker-3): found gone, no kill needed",
        f"  removed {workers / 'worker-2'}",
        f"  removed {workers / 'worker-3'}",
        "  debt record deleted",
    ]


def test_reconcile_text_names_what_is_kept(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    _debt_team(cwd)
    done, text = _reconcile_text(tmp_path, Stub({"%13": (0, 99999)}), cwd)
    assert done.outcome.status == "debt"
    assert text.splitlines() == [
        "error: scale_down_cleanup_debt_unresolved:%13",
        "cleanup debt for removed worker(s) worker-2, worker-3 (status unresolved)",
        "  pane %13 (worker worker-2): not proven safe to kill: kept as debt",
        "  pane %14 (worker worker-3): found gone, no kill needed",
        "  debt record kept (see `panefleet team debt show`)",
    ]


def test_reconcile_text_of_a_record_json_cannot_carry(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    team = _debt_team(cwd)
    team.debt_path().write_text(team.debt_path().read_text().replace("42413", "9" * 5000, 1))
    before = tree(team.dir)
    stub = Stub({"%13": (0, 42413)})
    done, text = _reconcile_text(tmp_path, stub, cwd)
    assert (done.outcome.status, done.outcome.message) == ("refused", "scale_down_cleanup_debt_malformed")
    assert stub.log == [] and tree(team.dir) == before
    assert text.splitlines() == [
        "error: scale_down_cleanup_debt_malformed",
        f"the cleanup debt record {team.debt_path()} is malformed at workers[0].pid: integer of 5000 digits is "
        "out of range; nothing was done (repair or remove it by hand)"]


@pytest.mark.parametrize("identity", ["garbage", "{}", '{"name": "worker-2", "index": 2, "pid": ' + "9" * 5000 + "}",
                                      '{"name": "worker-2", "index": "2", "pane_id": "%13", "pid": 42413}'])
def test_reconcile_refuses_a_malformed_identity_before_any_kill(tmp_path: Path, identity: str) -> None:
    """A live debt pane whose worker identity is not an identity: that cannot be told from a mismatch,
    so nothing is killed and the record is not rewritten; the file is named."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    team = _debt_team(cwd)
    path = team.worker_file("worker-2", "identity.json")
    path.write_text(identity)
    before = tree(team.dir)
    stub = Stub({"%13": (0, 42413)})
    done, _text = _reconcile_text(tmp_path, stub, cwd)
    assert done.outcome.status == "error"
    assert done.outcome.message.startswith(f"team_state_malformed:{path}")
    assert stub.log == ["list-panes -a -F " + PANE_FORMAT]  # the proof, no kill
    assert tree(team.dir) == before


def test_reconcile_text_precommit_debt_is_discarded(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    team = Team(cwd, "t", 2)
    team.debt_path().write_text(json.dumps({
        "schema_version": 1, "operation": "scale_down", "status": "pending_teardown",
        "removed_worker_names": ["worker-2"], "workers": [{"name": "worker-2", "index": 2, "pane_id": "%13",
                                                             "pid": 42413}],
        "resource_workers": [{"name": "worker-2"}]}))
    stub = Stub()
    _, text = _reconcile_text(tmp_path, stub, cwd)
    assert stub.log == []
    assert text.splitlines()[1:] == [
        "  discarded: the removed workers are still members, so the membership commit never happened; "
        "nothing was killed or removed", "  debt record deleted"]


def test_reconcile_cli_text(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    team = Team(env, "t", 2)
    assert run(capsys, env, "debt", "reconcile", "t") == (0, "no cleanup debt\n")
    assert run(capsys, env, "debt", "reconcile", "t", "-o", "json") == (0, '{"ok": true}\n')
    team.debt_path().write_text("{")
    code, out = run(capsys, env, "debt", "reconcile", "t")
    assert code == 4
    lines = out.splitlines()
    assert lines[0].startswith("error: The team's cleanup debt record (.scale-down-cleanup-debt.json) is not valid "
                               "JSON (SyntaxError: Expecting property name enclosed in double quotes)")
    assert lines[1:] == [f"the cleanup debt record {team.debt_path()} is not valid JSON; nothing was done "
                         "(repair or remove it by hand)"]


# ------------------------------------------------------------------------------ 6: argument checks


@pytest.mark.parametrize(("args", "message"), [
    (("--worker", "worker-1", "--count", "1"), "argument --count: not allowed with argument --worker"),
    (("--count", "2", "--worker", "worker-1"), "argument --worker: not allowed with argument --count"),
    (("--drain-timeout-ms", "-5"), "argument --drain-timeout-ms: expected a non-negative integer, got '-5'"),
    (("--drain-timeout-ms", "soon"), "argument --drain-timeout-ms: expected a non-negative integer, got 'soon'"),
])
def test_scale_down_usage_errors(env: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                                 message: str) -> None:
    team = Team(env, "t", 3)
    before = tree(env)
    code = cli.main(["team", "scale-down", "t", *args, "--force", "--cwd", str(env)])
    captured = capsys.readouterr()
    assert code == 2
    assert message in captured.err
    assert tree(env) == before and team.worker_names() == ["worker-1", "worker-2", "worker-3"]


def test_scale_down_zero_drain_timeout_is_accepted(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Team(env, "t", 3)
    code, out = run(capsys, env, "scale-down", "t", "--count", "1", "--drain-timeout-ms", "0", "--dry-run")
    assert code == 0, out
