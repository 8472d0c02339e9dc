"""Startup scripts: byte-equal to what oh-my-codex writes, and safe to execute with hostile inputs.

The execution tests really run the rendered script with /bin/sh, with a fake CLI that records its
argv, working directory and environment, and check that exactly the planned argv arrived.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from returns.result import Failure

from pure.omx.launch import (
    CodexHome,
    LaunchHost,
    LaunchPlan,
    ScaleUpLaunchRequest,
    build_worker_launch,
    plan_scale_up_launches,
)
from pure.omx.startup_script import (
    choose_worker_shell,
    leader_node_dir,
    render_startup_script,
    shell_quote,
    should_source_shell_rc,
    startup_command,
)
from pure.omx.state import TeamPaths, resolve_state_root
from tests.omx.conftest import load_golden
from tests.omx.test_launch import extra_env_of, host_of, request_of

CASES = [c for c in load_golden("launch.json")["cases"] if "script" in c["expected"]]
ORACLE_SHELL = "/bin/bash"  # what oh-my-codex picked on the oracle host (SHELL=/bin/sh, bash present)
ORACLE_HOST_FILES = frozenset({"/bin/sh", "/bin/bash", "/usr/bin/bash"})  # no zsh on the oracle host


def _plan_for(i: dict[str, Any]) -> tuple[LaunchPlan, dict[str, str]]:
    request = request_of(i)
    policy = plan_scale_up_launches(request).unwrap()[i["position"]]
    extra = extra_env_of(i, request)
    plan = build_worker_launch(
        policy, team_name=i["team_name"], worker_cwd=i["worker_cwd"], extra_env=extra, host=host_of(i)
    ).unwrap()
    return plan, extra


def test_golden_has_scripts() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["input"]["id"])
def test_script_matches_oh_my_codex_byte_for_byte(case: dict[str, Any]) -> None:
    i = case["input"]
    plan, extra = _plan_for(i)
    source_rc = should_source_shell_rc({**i["process_env"], **extra})
    shell, rc_file = choose_worker_shell(i["process_env"].get("SHELL"), ORACLE_HOST_FILES)
    assert shell == ORACLE_SHELL
    script = render_startup_script(
        plan, worker_cwd=i["worker_cwd"], shell=shell, rc_file=rc_file, source_rc=source_rc
    )
    assert script.unwrap() == case["expected"]["script"]
    path = TeamPaths(resolve_state_root(i["worker_cwd"], extra), i["team_name"]).startup_script(plan_index(case))
    assert startup_command(path) == case["expected"]["startup_command"]


def plan_index(case: dict[str, Any]) -> int:
    return int(case["expected"]["plans"][case["input"]["position"]]["worker_index"])


# --------------------------------------------------------------------------- execution

FAKE_CLI = """#!{python}
import json, os, sys
with open(os.environ["PF_RECORD"], "w", encoding="utf-8") as fh:
    json.dump({{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}, fh)
"""


@pytest.fixture(scope="module")
def fake_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bin_dir = tmp_path_factory.mktemp("fake bin $x 'q'")
    for cli in ("codex", "claude", "gemini"):
        path = bin_dir / cli
        path.write_text(FAKE_CLI.format(python=sys.executable), encoding="utf-8")
        path.chmod(0o755)
    return bin_dir


def run_script(script: str, where: Path, env_extra: dict[str, str] | None = None) -> dict[str, Any]:
    script_path = where / "worker-2-startup.sh"
    script_path.write_text(script, encoding="utf-8")
    script_path.chmod(0o700)
    record = where / "record.json"
    if record.exists():
        record.unlink()
    env = {"PATH": "/usr/bin:/bin", "PF_RECORD": str(record), "OMX_TMUX_HUD_OWNER": "1", **(env_extra or {})}
    proc = subprocess.run(["/bin/sh", str(script_path)], env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
    return result


def make_plan(command: str, argv: list[str], env: list[tuple[str, str]], node: str = "/opt/node/bin/node") -> LaunchPlan:
    return LaunchPlan(
        worker_cli="codex", command=command, argv=tuple(argv), env=tuple(env), startup_env=tuple(env),
        leader_node_path=node,
    )


HOSTILE = [
    "plain",
    "",
    " ",
    "two words",
    "it's",
    "'",
    "''",
    '"double"',
    "$HOME",
    "${PATH}",
    "$(touch /tmp/pf-pwned)",
    "`touch /tmp/pf-pwned`",
    "back\\slash\\",
    "new\nline",
    "tab\tand\rcr",
    "semi; exit 3",
    "&& false",
    "| cat",
    "*",
    "~",
    "--",
    "-c",
    "!event",
    "\u00e9\u4e2d\U0001f600",
    "'\"'\"'",
    "'\\''",
]


def test_hostile_fixed_corpus(fake_bin: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "we ird $HOME `x` 'q' \"d\"\nnl"
    cwd.mkdir()
    env = [("OMX_TEAM_WORKER", "t'eam $x/worker-2"), ("TASK_TEXT", "\n".join(HOSTILE))]
    plan = make_plan(str(fake_bin / "codex"), HOSTILE, env)
    for shell in ("/bin/sh", "/bin/bash"):
        if not Path(shell).exists():
            continue
        seen = run_script(render_startup_script(plan, worker_cwd=str(cwd), shell=shell).unwrap(), tmp_path)
        assert seen["argv"] == HOSTILE
        assert seen["cwd"] == str(cwd)
        assert seen["env"]["OMX_TEAM_WORKER"] == "t'eam $x/worker-2"
        assert seen["env"]["TASK_TEXT"] == "\n".join(HOSTILE)
        assert "OMX_TMUX_HUD_OWNER" not in seen["env"]
        assert seen["env"]["PATH"].startswith("/opt/node/bin:")
    assert not Path("/tmp/pf-pwned").exists()


_text = st.text(alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=24)
_component = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00/"), min_size=1, max_size=12
).filter(lambda s: s not in (".", ".."))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    argv=st.lists(_text, max_size=6),
    team=_text,
    task=_text,
    dirname=_component,
    shell=st.sampled_from(["/bin/sh", "/bin/bash"]),
)
def test_quoting_property(
    fake_bin: Path, tmp_path: Path, argv: list[str], team: str, task: str, dirname: str, shell: str
) -> None:
    if not Path(shell).exists():
        shell = "/bin/sh"
    cwd = tmp_path / "cwd" / dirname
    cwd.mkdir(parents=True, exist_ok=True)
    plan = make_plan(str(fake_bin / "codex"), argv, [("OMX_TEAM_WORKER", f"{team}/worker-2"), ("TASK", task)])
    seen = run_script(render_startup_script(plan, worker_cwd=str(cwd), shell=shell).unwrap(), tmp_path)
    assert seen["argv"] == argv
    assert seen["cwd"] == str(cwd)
    assert seen["env"]["OMX_TEAM_WORKER"] == f"{team}/worker-2"
    assert seen["env"]["TASK"] == task


def _serialise(args: list[str]) -> str:
    out = []
    for arg in args:
        out.append("'" + arg.replace("'", "'\"'\"'") + "'" if "\\" in arg else '"' + arg.replace('"', '\\"') + '"')
    return " ".join(out)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(head=st.lists(_text.filter(lambda s: not s.startswith("-")), max_size=3), tail=st.lists(_text, max_size=3))
def test_full_pipeline_argv_is_executed(fake_bin: Path, tmp_path: Path, head: list[str], tail: list[str]) -> None:
    """OMX_TEAM_WORKER_LAUNCH_ARGS -> plan -> script -> exec: the CLI receives exactly the planned argv."""
    raw = _serialise([*head, "--", *tail])
    request = ScaleUpLaunchRequest(
        count=1, next_worker_index=2, agent_type="executor", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": raw},
        process_env={}, leader_cwd=str(tmp_path), codex_home=CodexHome(),
    )
    planned = plan_scale_up_launches(request)
    assert not isinstance(planned, Failure), planned
    host = LaunchHost(
        process_env={}, process_argv=(), cli_paths={"codex": str(fake_bin / "codex")}, node_path="/usr/bin/node"
    )
    plan = build_worker_launch(
        planned.unwrap()[0], team_name="team $(x)", worker_cwd=str(tmp_path),
        extra_env={"OMX_MODEL_INSTRUCTIONS_FILE": str(tmp_path / "it's.md")}, host=host,
    ).unwrap()
    assert list(plan.argv[plan.argv.index("--") + 1 :]) == tail
    seen = run_script(render_startup_script(plan, worker_cwd=str(tmp_path), shell="/bin/sh").unwrap(), tmp_path)
    assert seen["argv"] == list(plan.argv)
    assert seen["env"]["OMX_TEAM_WORKER"] == "team $(x)/worker-2"


# --------------------------------------------------------------------------- small pure pieces


def test_helpers() -> None:
    assert shell_quote("it's") == "'it'\\''s'"
    assert leader_node_dir("/opt/node/bin/node") == "/opt/node/bin"
    assert leader_node_dir("node") == ""
    assert leader_node_dir("C:\\node\\node.exe") == "C:\\node"
    assert leader_node_dir("/node") == ""
    assert choose_worker_shell("/usr/bin/zsh", {"/usr/bin/zsh"}) == ("/usr/bin/zsh", "~/.zshrc")
    assert choose_worker_shell("/bin/fish", {"/bin/fish", "/bin/bash"}) == ("/bin/bash", "~/.bashrc")
    assert choose_worker_shell("/bin/bash", set()) == ("/bin/sh", None)
    assert choose_worker_shell("/bin/bash", {"/bin/bash"}, msys=True) == ("/bin/sh", None)
    assert should_source_shell_rc({"OMX_TMUX_SOURCE_SHELL_RC": " 1 "})
    assert not should_source_shell_rc({"OMX_TMUX_SOURCE_SHELL_RC": "true"})
    root = resolve_state_root("/elsewhere", {"OMX_TEAM_STATE_ROOT": "/r/.omx/state/"})
    assert TeamPaths(root, "t").startup_script(3) == "/r/.omx/state/team/t/runtime/worker-3-startup.sh"


def test_rc_prefix_and_bad_env_key() -> None:
    plan = make_plan("/bin/codex", [], [("GOOD", "1")], node="node")
    text = render_startup_script(plan, worker_cwd="/w", shell="/bin/zsh", rc_file="~/.zshrc", source_rc=True).unwrap()
    assert text.splitlines()[-2] == "exec '/bin/zsh' -c 'if [ -f ~/.zshrc ]; then . ~/.zshrc; fi"
    assert text.endswith("exec '\\''/bin/codex'\\'''")
    bad = make_plan("/bin/codex", [], [("BAD-KEY", "1")])
    assert render_startup_script(bad, worker_cwd="/w", shell="/bin/sh") == Failure(
        "invalid worker startup env key: BAD-KEY"
    )


def test_real_sh_runs_golden_script_layout(fake_bin: Path, tmp_path: Path) -> None:
    """A golden case re-rendered for this host executes and delivers the oracle's executed argv."""
    case = next(c for c in CASES if c["input"]["id"] == "p10")
    plan, _ = _plan_for(case["input"])
    plan = LaunchPlan(plan.worker_cli, str(fake_bin / "codex"), plan.argv, plan.env, plan.startup_env,
                      plan.leader_node_path)
    seen = run_script(render_startup_script(plan, worker_cwd=str(tmp_path), shell="/bin/sh").unwrap(), tmp_path)
    assert seen["argv"] == case["expected"]["executed_argv"]
    assert shutil.which("sh") is not None and os.path.isabs(seen["cwd"])
