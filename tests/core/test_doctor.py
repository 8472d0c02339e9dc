"""``panefleet doctor``: the rules (pure/agents/doctor.py) on each set-up the agent CLIs can be in, and the
command against stand-in CLIs on PATH and a home folder of the test's own (shell/cli/doctor.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pure.agents.doctor import CliFacts, check_cli, check_tmux

ROOT = Path(__file__).resolve().parents[2]
HOME = "/h"
PROVIDER = 'model_provider = "mock"\n[model_providers.mock]\nbase_url = "http://127.0.0.1:9/v1"\n'
ONBOARDED = json.dumps({"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": ["0123456789abcdefghij"]}})


def _levels(facts: CliFacts) -> list[tuple[str, str]]:
    return [(c.level, c.text) for c in check_cli(facts, HOME)]


@pytest.mark.parametrize("files, env, expected", [
    ({"/h/.codex/auth.json": "{}"}, {}, "ok:signed in"),
    ({"/h/.codex/config.toml": PROVIDER}, {}, "ok:model provider mock"),
    ({"/c/config.toml": PROVIDER}, {"CODEX_HOME": "/c"}, "ok:model provider mock"),
    ({"/h/.codex/config.toml": 'model_provider = "mock"\n'}, {}, "fail:not signed in"),  # no such table
    ({"/h/.codex/config.toml": "[[[ broken", "/h/.codex/auth.json": "{}"}, {}, "fail:error loading config.toml"),
    ({}, {}, "fail:not signed in"),
])
def test_codex_needs_a_sign_in_or_a_provider(files: dict[str, str], env: dict[str, str], expected: str) -> None:
    checks = _levels(CliFacts(cli="codex", path="/bin/codex", version_text="codex-cli 0.169.0", files=files, env=env))
    level, start = expected.split(":")
    assert checks[0] == ("ok", "codex 0.169.0 at /bin/codex")
    assert checks[1][0] == level and checks[1][1].startswith(start), checks


@pytest.mark.parametrize("state, env, euid, failing", [
    (ONBOARDED, {"ANTHROPIC_API_KEY": "sk-ant-0123456789abcdefghij"}, 1000, []),  # approved by its last 20
    (ONBOARDED, {"ANTHROPIC_API_KEY": "another-key"}, 1000, ["ANTHROPIC_API_KEY is set but not approved"]),
    (json.dumps({"hasCompletedOnboarding": False}), {}, 1000,
     ["onboarding not done", "not signed in and no ANTHROPIC_API_KEY"]),
    (None, {}, 1000, ["onboarding not done", "not signed in and no ANTHROPIC_API_KEY"]),
    (ONBOARDED, {"ANTHROPIC_API_KEY": "0123456789abcdefghij"}, 0, ["running as root"]),
    (ONBOARDED, {"ANTHROPIC_API_KEY": "0123456789abcdefghij", "IS_SANDBOX": "1"}, 0, []),
])
def test_claude_needs_onboarding_an_approved_key_or_sign_in_and_not_root(
        state: str | None, env: dict[str, str], euid: int, failing: list[str]) -> None:
    facts = CliFacts(cli="claude", path="/bin/claude", version_text="2.1.328 (Claude Code)",
                     files={"/h/.claude.json": state, "/h/.claude/.credentials.json": None}, env=env, euid=euid)
    assert [text.split(" (")[0].split(":")[0] for level, text in _levels(facts) if level == "fail"] == [
        f.split(":")[0] for f in failing]


def test_claude_signed_in_without_a_key() -> None:
    facts = CliFacts(cli="claude", path="/bin/claude", version_text="2.1.328",
                     files={"/h/.claude.json": ONBOARDED, "/h/.claude/.credentials.json": "{}"})
    assert [level for level, _ in _levels(facts)] == ["ok", "ok"]


def test_versions_missing_cli_and_gemini() -> None:
    newer = _levels(CliFacts(cli="codex", path="/bin/codex", version_text="codex-cli 0.171.0",
                             files={"/h/.codex/auth.json": "{}"}))
    assert newer[0][0] == "warn" and "recorded with 0.169.0" in newer[0][1]
    assert _levels(CliFacts(cli="claude", path=None)) == [("fail", "claude is not on PATH")]
    gemini = _levels(CliFacts(cli="gemini", path="/bin/gemini", version_text="0.61.0", files={
        "/h/.gemini/settings.json": json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})}))
    assert gemini[0] == ("ok", "gemini 0.61.0 at /bin/gemini")
    assert gemini[1] == ("ok", "auth type gemini-api-key (/h/.gemini/settings.json)")
    assert _levels(CliFacts(cli="gemini", path="/bin/gemini", version_text="0.60.1"))[0][0] == "warn"
    assert _levels(CliFacts(cli="gemini", path="/bin/gemini", version_text="0.61.0"))[1][0] == "fail"


def test_gemini_settings_are_read_as_gemini_reads_them() -> None:
    def auth(text: str) -> tuple[str, str]:
        return _levels(CliFacts(cli="gemini", path="/bin/gemini", version_text="0.61.0",
                                files={"/h/.gemini/settings.json": text}))[1]

    # comments are allowed (Gemini strips them before parsing), "//" inside a string is not one
    commented = '// mine\n{"security": {"auth": {/* chosen once */ "selectedType": "gemini-api-key"}}, "x": "a//b"}'
    assert auth(commented) == ("ok", "auth type gemini-api-key (/h/.gemini/settings.json)")
    # not JSON, or not an object: Gemini exits at once ("Error in <path>: …"), so this is its own failure
    broken = auth('{"security": {"auth": ,\n')
    assert broken[0] == "fail" and broken[1].startswith("error in /h/.gemini/settings.json: ")
    assert auth("[]") == ("fail", "error in /h/.gemini/settings.json: not a JSON object")
    assert auth('{"security": {}}') == ("fail", "no auth type selected (/h/.gemini/settings.json)")


def test_tmux_versions() -> None:
    assert check_tmux(None, None).level == "fail"
    assert check_tmux("/t", "tmux 3.1c").level == "fail"
    assert check_tmux("/t", "tmux 3.3a").level == "ok"
    assert check_tmux("/t", "tmux next-3.6").level == "ok"


def test_the_command_against_stand_in_clis(tmp_path: Path) -> None:
    bin_dir, home = tmp_path / "bin", tmp_path / "home"
    bin_dir.mkdir()
    (home / ".codex").mkdir(parents=True)
    for name, version in (("codex", "codex-cli 0.169.0"), ("claude", "2.1.400 (Claude Code)")):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\necho '{version}'\n")
        script.chmod(0o755)
    env = {**os.environ, "HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin", "IS_SANDBOX": "1"}
    env.pop("CODEX_HOME", None)
    env.pop("ANTHROPIC_API_KEY", None)

    def doctor(*args: str) -> tuple[int, dict[str, object]]:
        done = subprocess.run([sys.executable, str(ROOT / "cli.py"), "doctor", *args, "-o", "json"], env=env,
                              capture_output=True, text=True, timeout=60)
        return done.returncode, json.loads(done.stdout)

    code, answer = doctor()
    assert code == 1 and answer["ok"] is False
    assert [(c["level"], c["subject"]) for c in answer["checks"]] == [  # type: ignore[union-attr]
        ("ok", "tmux"), ("ok", "codex"), ("fail", "codex")]
    (home / ".codex" / "config.toml").write_text(PROVIDER)
    assert doctor()[0] == 0
    code, answer = doctor("--worker-cli", "claude")
    assert code == 1 and [c["level"] for c in answer["checks"]] == ["ok", "warn", "fail", "fail"]  # type: ignore[union-attr]
    text = subprocess.run([sys.executable, str(ROOT / "cli.py"), "doctor", "--worker-cli", "gemini"], env=env,
                          capture_output=True, text=True, timeout=60).stdout
    assert "fail  gemini  gemini is not on PATH" in text and "fix: install it (npm install -g @google/gemini-cli)" in text


def test_a_respawn_of_a_worker_whose_cli_cannot_start_is_refused_before_any_change(tmp_path: Path) -> None:
    """``team respawn`` refuses in doctor's words, before anything is changed, when the worker's recorded
    CLI cannot start here (pure/omx/respawn.py); a problem of another CLI does not stop it."""
    from pure.omx.respawn import RespawnRequest, respawn
    from tests.adversary import team as tm
    from tests.adversary.sim import SimExecutor, TmuxServer, World, drive

    world = World(server=TmuxServer())
    root = tm.build(tmp_path, world.server)
    first = json.loads((root / "config.json").read_text())["workers"][0]
    world.server.die(first["pane_id"])
    before = {pane: (p.pid, dict(p.options)) for pane, p in world.server.panes.items()}
    problem = "onboarding not done (/h/.claude.json); fix: run `claude` once"
    executor = SimExecutor(world, tmp_path, tm.TEAM, state_root=tmp_path / ".omx" / "state", env=tm.ENV)
    request = RespawnRequest(team=tm.TEAM, worker="worker-1", cwd=str(tmp_path), env=tm.ENV,
                             cli_problems={"claude": [problem], "codex": [f"codex: {problem}"]})
    done = drive(lambda: respawn(request), executor)
    assert done is not None and done.outcome.status == "refused"
    assert done.outcome.message == f"worker_cli_not_ready:codex:worker-1:codex: {problem}"
    assert {pane: (p.pid, dict(p.options)) for pane, p in world.server.panes.items()} == before
    assert [args[0] for args in executor.tmux_log] == ["-V"] and world.violations == []
