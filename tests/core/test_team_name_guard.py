"""Every team command refuses a name that oh-my-codex's sanitization changes (exit 2, naming the rule),
so ``scale-down ../ALPHA`` never touches team alpha (the task commands: tests/omx_down/test_cli_errors.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli
from pure.omx.names import UNCHANGED_TEAM_NAME_RULE, rewritten_team_name
from tests.omx_down.fixtures import Team


@pytest.fixture
def work(clean_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("OMX_TEAM_SCALING_ENABLED", "1")
    monkeypatch.setenv("PANEFLEET_TMUX_SOCKET", "pf-none-" + tmp_path.name)
    cwd = tmp_path / "work"
    cwd.mkdir()
    Team(cwd, "alpha", 2).write_task("1", "one", owner="worker-2")
    return cwd


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): (p.read_text() if p.is_file() else "/") for p in sorted(root.rglob("*"))}


def test_the_rule() -> None:
    assert rewritten_team_name("alpha") is None and rewritten_team_name("a-1") is None
    assert rewritten_team_name("../ALPHA") == (
        f"invalid_team_name:../ALPHA ({UNCHANGED_TEAM_NAME_RULE}; oh-my-codex would act on team 'alpha')")
    for name in ("Alpha", "alpha-", "-alpha", "al--pha", "al_pha", "a" * 31):
        assert (rewritten_team_name(name) or "").startswith(f"invalid_team_name:{name} (")
    assert (rewritten_team_name("!!!") or "").endswith("nothing is left of it after oh-my-codex's sanitization)")


COMMANDS = [
    ("scale-down", "{}", "--count", "1"),
    ("scale-down", "{}", "--worker", "worker-2", "--force"),
    ("scale-down", "{}", "--count", "1", "--dry-run"),
    ("scale-up", "{}", "--count", "1"),
    ("debt", "reconcile", "{}"),
    ("debt", "show", "{}"),
    ("init", "{}", "--new-session"),
    ("respawn", "{}", "worker-2"),
    ("status", "{}"),
]


@pytest.mark.parametrize("name", ["../ALPHA", "ALPHA", "alpha-", "al--pha"])
@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_rewritten_names_are_refused_and_alpha_is_untouched(work: Path, capsys: pytest.CaptureFixture[str],
                                                            name: str, args: tuple[str, ...]) -> None:
    before = tree(work)
    code = cli.main(["team", *(a.format(name) for a in args), "--cwd", str(work), "-o", "json"])
    out = capsys.readouterr()
    assert code == 2
    answer = json.loads(out.out)
    assert answer["error_code"] == "usage_error" and answer["error"].startswith(f"usage: {name!r} is not a team name")
    assert str(rewritten_team_name(name)).split(" (", 1)[1].rstrip(")") in answer["error"]
    assert f"{name!r} is not a team name panefleet can use" in out.err
    assert tree(work) == before


def test_the_exact_name_still_works(work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["team", "scale-down", "alpha", "--count", "1", "--cwd", str(work), "-o", "json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["ok"] is True
