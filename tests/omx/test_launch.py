"""Launch-argument policy (docs/launch-policy.md) against goldens produced by running the real
oh-my-codex builder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from pure.omx.launch import (
    AGENTS,
    CodexHome,
    LaunchError,
    LaunchHost,
    ScaleUpLaunchRequest,
    TaskRole,
    build_worker_launch,
    normalize_launch_args,
    parse_launch_args,
    plan_scale_up_launches,
    posix_join,
    resolve_codex_home_override,
    split_launch_args,
)
from tests.omx.conftest import load_golden

GOLDEN = "launch.json"
DOC = load_golden(GOLDEN)
CASES: list[dict[str, Any]] = DOC["cases"]


def request_of(i: dict[str, Any]) -> ScaleUpLaunchRequest:
    files = i["codex_home_files"]
    return ScaleUpLaunchRequest(
        count=i["count"],
        next_worker_index=i["next_worker_index"],
        agent_type=i["agent_type"],
        env=i["env"],
        process_env=i["process_env"],
        leader_cwd=i["leader_cwd"],
        codex_home=CodexHome(files["omx_config_json"], files["config_toml"]),
        setup_scope_json=i["setup_scope_json"],
        existing_tasks=tuple(TaskRole(t["owner"], t["role"]) for t in i["existing_tasks"]),
        incoming_tasks=tuple(TaskRole(t["owner"], t["role"]) for t in i["incoming_tasks"]),
    )


def host_of(i: dict[str, Any]) -> LaunchHost:
    files = i["codex_home_files"]
    return LaunchHost(
        process_env=i["process_env"],
        process_argv=tuple(i["process_argv"]),
        cli_paths=i["cli_paths"],
        node_path="/usr/local/bin/node",
        codex_home=CodexHome(files["omx_config_json"], files["config_toml"]),
    )


def extra_env_of(i: dict[str, Any], request: ScaleUpLaunchRequest) -> dict[str, str]:
    """scaling.js's extra env order: state root, leader cwd, instructions, CODEX_HOME override, worktree."""
    override = resolve_codex_home_override(request.env, request.leader_cwd, request.setup_scope_json)
    out: dict[str, str] = {}
    for key, value in i["extra_env"]:
        out[key] = value
        if key == "OMX_MODEL_INSTRUCTIONS_FILE" and override:
            out["CODEX_HOME"] = override
    return out


def actual(i: dict[str, Any]) -> dict[str, Any]:
    request = request_of(i)
    planned = plan_scale_up_launches(request)
    if isinstance(planned, Failure):
        return {"error": planned.failure()}
    plans = planned.unwrap()
    out: dict[str, Any] = {
        "plans": [
            {
                "worker_index": p.worker_index,
                "worker_name": p.worker_name,
                "role": p.role,
                "launch_args": list(p.launch_args),
                "worker_cli": p.worker_cli,
            }
            for p in plans
        ]
    }
    extra_env = extra_env_of(i, request)
    out["extra_env"] = [[k, v] for k, v in extra_env.items()]
    built = build_worker_launch(
        plans[i["position"]], team_name=i["team_name"], worker_cwd=i["worker_cwd"], extra_env=extra_env,
        host=host_of(i),
    )
    if isinstance(built, Failure):
        out["build_error"] = built.failure()
        return out
    plan = built.unwrap()
    out["command"] = plan.command
    out["env"] = [list(kv) for kv in plan.env]
    out["argv"] = list(plan.argv)
    return out


def project(expected: dict[str, Any]) -> dict[str, Any]:
    """The parts of the oracle's record that the launch plan must reproduce."""
    if "error" in expected:
        return {"error": expected["error"]}
    out = {"plans": expected["plans"], "extra_env": expected["extra_env"]}
    if "build_error" in expected:
        out["build_error"] = expected["build_error"]
        return out
    out["command"] = expected["spec"]["command"]
    out["env"] = expected["spec"]["env"]
    out["argv"] = expected["executed_argv"]
    return out


def test_golden_coverage() -> None:
    ids = {c["input"]["id"] for c in CASES}
    assert {"m1", "m2", "m3", "m4", "m5", "m6", "r1", "r2", "r3"} <= ids
    assert len(CASES) >= 60
    assert sum("error" in c["expected"] for c in CASES) >= 15


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["input"]["id"])
def test_golden(case: dict[str, Any], update_goldens: bool, golden_updater: Callable[[str, Any], None]) -> None:
    # 'expected' is the oracle's record; it is not rewritten from our output (regenerate with
    # tests/omx/oracles/gen_launch.py instead), so --update-goldens leaves this file alone.
    del update_goldens, golden_updater
    assert actual(case["input"]) == project(case["expected"])


MATRIX = {
    "m1": '--sandbox workspace-write -c model_reasoning_effort="medium" --model leader-model -- '
    "C:\\scale-up\\nested\\ --sandbox=read-only --madmax",
    "m2": '--ask-for-approval on-request -c model_reasoning_effort="medium" --model leader-model',
    "m3": '-c model_reasoning_effort="medium" --model policy-model --dangerously-bypass-approvals-and-sandbox',
    "m4": '-c model_reasoning_effort="low" --model policy-model',
    "m5": '-c model_reasoning_effort="medium" --model policy-model --dangerously-bypass-approvals-and-sandbox',
    "m6": '-c model_reasoning_effort="medium" --model policy-model --dangerously-bypass-approvals-and-sandbox',
}


@pytest.mark.parametrize("cid", sorted(MATRIX))
def test_spec_13_5_matrix_literal(cid: str) -> None:
    case = next(c for c in CASES if c["input"]["id"] == cid)
    assert " ".join(actual(case["input"])["argv"]) == MATRIX[cid]


def test_built_argv_is_a_fixed_point() -> None:
    """Feeding an already-built argv through the builder returns it unchanged (docs/launch-policy.md,
    "Canonical order")."""
    case = next(c for c in CASES if c["input"]["id"] == "m1")["input"]
    request = request_of(case)
    first = plan_scale_up_launches(request).unwrap()[0]
    built = build_worker_launch(first, team_name="t", worker_cwd="/w", extra_env={}, host=host_of(case)).unwrap()
    again = build_worker_launch(
        type(first)(first.worker_index, first.worker_name, first.role, built.argv, "codex", ()),
        team_name="t", worker_cwd="/w", extra_env={}, host=host_of(case),
    ).unwrap()
    assert again.argv == built.argv


def test_agent_table_matches_package() -> None:
    table = load_golden("agents.json")["agents"]
    assert {
        name: {
            "reasoning_effort": a.reasoning_effort,
            "tools": a.tools,
            "model_class": a.model_class,
            "exact_model": a.exact_model,
        }
        for name, a in AGENTS.items()
    } == table


def test_parser_errors_and_captures() -> None:
    with pytest.raises(LaunchError, match="^Invalid OMX_TEAM_WORKER_LAUNCH_ARGS: unterminated quote$"):
        split_launch_args('a "b')
    parsed = parse_launch_args(["-c", "model_provider=x", "--model", " m ", "-c", "k=v", "--", "-a"])
    assert parsed.model_provider_override == "model_provider=x"
    assert parsed.model_override == "m"
    assert parsed.passthrough == ("-c", "k=v", "--", "-a")
    assert parsed.end_of_options_index == 2
    with pytest.raises(LaunchError, match="^Invalid worker launch arguments: missing value for --sandbox$"):
        parse_launch_args(["-s", " "])


def test_codex_home_override() -> None:
    assert resolve_codex_home_override({"CODEX_HOME": "/h"}, "/r", '{"scope":"project"}') == "/h"
    assert resolve_codex_home_override({"CODEX_HOME": "  "}, "/r", '{"scope":"project"}') == "/r/.codex"
    assert resolve_codex_home_override({}, "/r", '{"scope":"user"}') is None
    assert resolve_codex_home_override({}, "/r", "null") is None
    assert resolve_codex_home_override({}, "/r", "{bad") is None
    assert posix_join("/a/./b/", "AGENTS.md") == "/a/b/AGENTS.md"
    assert posix_join("rel/..", "x") == "x"


def test_cli_and_build_errors() -> None:
    request = ScaleUpLaunchRequest(
        count=2, next_worker_index=3, agent_type="executor", env={"OMX_TEAM_WORKER_CLI_MAP": "codex,claude"},
        process_env={}, leader_cwd="/r", codex_home=CodexHome(),
    )
    plans = plan_scale_up_launches(request).unwrap()
    assert [p.worker_cli for p in plans] == ["codex", "claude"]
    assert [p.worker_name for p in plans] == ["worker-3", "worker-4"]
    host = LaunchHost(process_env={}, process_argv=(), cli_paths={}, node_path="/n/bin/node")
    claude = build_worker_launch(plans[1], team_name="t", worker_cwd="/w", extra_env={}, host=host).unwrap()
    assert claude.command == "claude" and claude.argv == ("--dangerously-skip-permissions",)
    assert dict(claude.env)["OMX_LEADER_NODE_PATH"] == "/n/bin/node"
    assert "CODEX_HOME" not in dict(claude.env)
    assert build_worker_launch(plans[0], team_name="t", worker_cwd="/w", extra_env={}, host=host) != Success(claude)


# Tokens that the serialiser below can always round-trip through the tokeniser.
_token = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12)


def _serialise(args: list[str]) -> str:
    """oh-my-codex's reversible transport: '…' when a backslash is present, else "…" with \\" escapes."""
    out = []
    for arg in args:
        if "\\" in arg:
            out.append("'" + arg.replace("'", "'\"'\"'") + "'")
        else:
            out.append('"' + arg.replace('"', '\\"') + '"')
    return " ".join(out)


@given(st.lists(_token, max_size=8))
def test_tokeniser_round_trips_serialised_args(args: list[str]) -> None:
    assert split_launch_args(_serialise(args)) == args


@given(st.lists(st.sampled_from(["--foo", "-x", "bar", "--", "-c", "k=v", "--madmax", "--model", "m"]), max_size=8))
def test_normalise_is_idempotent(args: list[str]) -> None:
    try:
        once = normalize_launch_args(args, None, "high")
    except LaunchError:
        return
    assert normalize_launch_args(once, None, "high") == once
