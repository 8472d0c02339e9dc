"""Completion of team and worker names (shell/cli/complete_names.py): bash completes them through the
generated script, with a real ``panefleet`` on PATH, from the team folders of the folder typed in
``--cwd`` (or the current one); zsh's script runs the same hidden command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "cli.py")]


@pytest.fixture
def setup(tmp_path: Path, clean_env: dict[str, str]) -> tuple[Path, dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "panefleet").write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'cli.py'} \"$@\"\n")
    (bin_dir / "panefleet").chmod(0o755)
    work = tmp_path / "work"
    for team, workers in (("alpha", ["worker-1", "worker-2"]), ("beta", ["worker-3"])):
        folder = work / ".omx" / "state" / "team" / team
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps({"workers": [{"name": w} for w in workers]}))
    (work / ".omx" / "state" / "team" / "half-made").mkdir()  # no config.json: not a team
    script = tmp_path / "panefleet.bash"
    script.write_text(subprocess.run([*CLI, "completion", "bash"], capture_output=True, text=True,
                                     check=True).stdout)
    env = {**clean_env, "PATH": f"{bin_dir}:{clean_env['PATH']}"}
    return work, env, script


def _complete(script: Path, words: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    line = " ".join(words)
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (f"source {script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; "
             "COMP_POINT=${#COMP_LINE}\n_shtab_panefleet\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, cwd=cwd, env=env, timeout=30)
    return done.stdout.split()


def test_bash_completes_teams_and_workers(setup: tuple[Path, dict[str, str], Path], tmp_path: Path) -> None:
    work, env, script = setup
    assert _complete(script, ["panefleet", "team", "status", ""], work, env) == ["alpha", "beta"]
    assert _complete(script, ["panefleet", "team", "status", "al"], work, env) == ["alpha"]
    assert _complete(script, ["panefleet", "team", "respawn", "alpha", ""], work, env) == ["worker-1", "worker-2"]
    assert _complete(script, ["panefleet", "team", "scale-down", "beta", "--worker", ""], work, env) == ["worker-3"]
    # from elsewhere, the folder given with --cwd
    assert _complete(script, ["panefleet", "team", "debt", "show", "--cwd", str(work), ""], tmp_path, env) == \
        ["alpha", "beta"]
    assert _complete(script, ["panefleet", "team", "status", ""], tmp_path, env) == []


def test_the_hidden_command_is_not_listed(setup: tuple[Path, dict[str, str], Path]) -> None:
    _work, env, script = setup
    assert "_names" not in subprocess.run([*CLI, "-h"], capture_output=True, text=True, env=env).stdout
    assert "_names" not in _complete(script, ["panefleet", "_"], Path("/"), env)


def test_zsh_asks_the_same_command(setup: tuple[Path, dict[str, str], Path]) -> None:
    work, env, _script = setup
    zsh = subprocess.run([*CLI, "completion", "zsh"], capture_output=True, text=True, check=True).stdout
    assert "($(panefleet _names teams -- ${words[@]} 2>/dev/null))" in zsh
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed (./dev test installs it)")
    words = "panefleet team respawn alpha ''"
    done = subprocess.run(["zsh", "-c", f"words=({words}); print -l $(panefleet _names workers -- ${{words[@]}})"],
                          capture_output=True, text=True, cwd=work, env=env, timeout=30)
    assert done.stdout.split() == ["worker-1", "worker-2"]
