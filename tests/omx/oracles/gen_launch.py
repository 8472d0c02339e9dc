"""Regenerate tests/goldens/omx/launch.json by running oh-my-codex 0.20.3's own functions (needs node).

Usage: OMX_DIST=/path/to/package/dist .venv/bin/python tests/omx/oracles/gen_launch.py
Each case creates a scratch tree under /tmp/pf-omx-oracle/<id> (paths recorded verbatim in the
golden; the pure code never touches them).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BASE = "/tmp/pf-omx-oracle"

MATRIX_ARGS = (
    "--config 'sandbox_mode=\"workspace-write\"' -- 'C:\\scale-up\\nested\\' '--sandbox=read-only' '--madmax'"
)
MCP_TOML = "\n".join(
    [
        'model = "toml-root-model"',
        "[mcp_servers.omx_state]",
        'command = "x"',
        "  [ mcp_servers . \"omx_memory\" ]  ",
        "[mcp_servers.'omx_trace']",
        "[mcp_servers.omx_wiki_extra]",
        "[mcp_servers.other]",
        "",
    ]
)
PROVIDER_TOML = "\n".join(
    [
        'model_provider = "azure"',
        "[model_providers.azure]",
        'env_key = "AZURE_OPENAI_API_KEY"',
        "[model_providers.other]",
        'env_key = "OTHER_KEY"',
        "",
    ]
)


def case(cid: str, note: str, **kw: Any) -> dict[str, Any]:
    root = f"{BASE}/{cid}"
    leader_cwd = f"{root}/repo"
    home_mode = kw.pop("home_mode", "env")
    env = dict(kw.pop("env", {}))
    process_env = {
        "PATH": f"{root}/bin:/usr/bin:/bin",
        "HOME": f"{root}/user",
        "SHELL": "/bin/sh",
        "OMX_LEADER_NODE_PATH": "/opt/node/bin/node",
        "OMX_BYPASS_DEFAULT_SYSTEM_PROMPT": "0",
    }
    process_env.update(kw.pop("process_env", {}))
    for key in [k for k, v in process_env.items() if v is None]:
        del process_env[key]
    if home_mode == "env":
        env.setdefault("CODEX_HOME", f"{root}/home")
        codex_home_dir = env["CODEX_HOME"]
    elif home_mode == "project":
        codex_home_dir = f"{leader_cwd}/.codex"
    elif home_mode == "process":
        process_env["CODEX_HOME"] = f"{root}/process-home"
        codex_home_dir = process_env["CODEX_HOME"]
    else:
        codex_home_dir = f"{root}/user/.codex"
    worker_cwd = kw.pop("worker_cwd", leader_cwd)
    c = {
        "id": cid,
        "note": note,
        "root": root,
        "leader_cwd": leader_cwd,
        "worker_cwd": worker_cwd,
        "team_name": kw.pop("team_name", "scale-team"),
        "agent_type": kw.pop("agent_type", "executor"),
        "count": kw.pop("count", 1),
        "next_worker_index": kw.pop("next_worker_index", 2),
        "position": kw.pop("position", 0),
        "existing_tasks": kw.pop("existing_tasks", []),
        "incoming_tasks": kw.pop("incoming_tasks", []),
        "env": env,
        "process_env": process_env,
        "process_argv": kw.pop("process_argv", ["/opt/node/bin/node", "/opt/omx/bin/omx"]),
        "setup_scope_json": kw.pop("setup_scope_json", None),
        "codex_home_dir": codex_home_dir,
        "omx_config_json": kw.pop("omx_config_json", None),
        "config_toml": kw.pop("config_toml", None),
    }
    c["extra_env"] = kw.pop(
        "extra_env",
        {
            "OMX_TEAM_STATE_ROOT": f"{leader_cwd}/.omx/state",
            "OMX_TEAM_LEADER_CWD": leader_cwd,
            "OMX_MODEL_INSTRUCTIONS_FILE": f"{leader_cwd}/.omx/state/team/{c['team_name']}/worker-agents.md",
        },
    )
    assert not kw, kw
    # Order matters (it is the export order of the startup script): keep it as [key, value] pairs.
    c["extra_env"] = [[k, v] for k, v in c["extra_env"].items()]
    return c


def role_task(worker: str, role: str | None) -> dict[str, Any]:
    return {"owner": worker, "role": role}


MADMAX_ARGV = ["/opt/node/bin/node", "/opt/omx/bin/omx", "--madmax"]


def cases() -> list[dict[str, Any]]:
    out = [
        # oh-my-codex's own argv matrix (CODEX_HOME = empty dir, OMX_BYPASS_DEFAULT_SYSTEM_PROMPT=0)
        case("m1", "§13.5 row 1: config sandbox policy, -- tail, leader --madmax", process_argv=MADMAX_ARGV,
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": MATRIX_ARGS, "OMX_TEAM_WORKER_INHERITED_MODEL": "leader-model"},
             incoming_tasks=[role_task("worker-2", "executor")]),
        case("m2", "§13.5 row 2: direct approval, leader --madmax", process_argv=MADMAX_ARGV,
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--ask-for-approval=on-request",
                  "OMX_TEAM_WORKER_INHERITED_MODEL": "leader-model"},
             incoming_tasks=[role_task("worker-2", "executor")]),
        case("m3", "§13.5 row 3: executor gets execution bypass",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model policy-model"}, incoming_tasks=[role_task("worker-2", "executor")]),
        case("m4", "§13.5 row 4: explore (read-only) gets no bypass",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model policy-model"}, incoming_tasks=[role_task("worker-2", "explore")]),
        case("m5", "§13.5 row 5: absent role", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model policy-model"},
             incoming_tasks=[role_task("worker-2", None)]),
        case("m6", "§13.5 row 6: unknown role", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model policy-model"},
             incoming_tasks=[role_task("worker-2", "unknown-role")]),
        # refusals
        case("r1", "bypass + direct policy refused",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--dangerously-bypass-approvals-and-sandbox --sandbox workspace-write"}),
        case("r2", "claude + config policy refused", env={"OMX_TEAM_WORKER_CLI": "claude",
             "OMX_TEAM_WORKER_LAUNCH_ARGS": "--config 'sandbox_mode=\"workspace-write\"'"}),
        case("r3", "gemini + config policy refused", env={"OMX_TEAM_WORKER_CLI": "gemini",
             "OMX_TEAM_WORKER_LAUNCH_ARGS": "--config 'sandbox_mode=\"workspace-write\"'"}),
        case("r4", "unterminated quote", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model 'x"}),
        case("r5", "missing --sandbox value", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--sandbox --model m"}),
        case("r6", "missing -a value at end", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-a"}),
        case("r7", "conflicting approval", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-a never --ask-for-approval=on-request"}),
        case("r8", "missing --config value", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--config"}),
        case("r9", "missing -c value (dash)", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-c --model x"}),
        case("r10", "invalid OMX_TEAM_WORKER_CLI", env={"OMX_TEAM_WORKER_CLI": " Cursor "}),
        case("r11", "CLI map empty entry", env={"OMX_TEAM_WORKER_CLI_MAP": "codex,,claude"}, count=3),
        case("r12", "CLI map wrong length", env={"OMX_TEAM_WORKER_CLI_MAP": "codex,claude"}, count=3),
        case("r13", "CLI map invalid entry", env={"OMX_TEAM_WORKER_CLI_MAP": "codex,vim"}, count=2),
        case("r14", "CLI map only commas", env={"OMX_TEAM_WORKER_CLI_MAP": " , "}),
        case("r15", "missing config policy value", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-c approval_policy="}),
        case("r16", "conflicting sandbox via config and flag",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-s read-only -c sandbox_mode='danger-full-access'"}),
        case("r17", "claude map entry + direct approval", env={"OMX_TEAM_WORKER_CLI_MAP": "codex,claude",
             "OMX_TEAM_WORKER_LAUNCH_ARGS": "-a never"}, count=2),
        # model / reasoning selection
        case("s1", "inherited model only", env={"OMX_TEAM_WORKER_INHERITED_MODEL": "  leader-x  "}),
        case("s2", "env model equals inherited -> inherited path",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model same", "OMX_TEAM_WORKER_INHERITED_MODEL": "same"},
             incoming_tasks=[role_task("worker-2", "architect")]),
        case("s3", "architect exact model beats inherited", env={"OMX_TEAM_WORKER_INHERITED_MODEL": "leader-x"},
             incoming_tasks=[role_task("worker-2", "architect")]),
        case("s4", "env model beats exact role model", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model=env-model"},
             incoming_tasks=[role_task("worker-2", "researcher")]),
        case("s5", "explicit reasoning kept verbatim (quoted source)",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-c model_reasoning_effort=\"high\" --model m"}),
        case("s6", "explicit reasoning single-quoted token",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-c 'model_reasoning_effort = low'"}),
        case("s7", "--config= reasoning passes through, role effort added",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--config=model_reasoning_effort=low"},
             incoming_tasks=[role_task("worker-2", "writer")]),
        case("s8", "model provider canonicalised",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-c model_provider='my \"prov\"\\x' --foo"}),
        case("s9", "omx-config agentReasoning + agentModels overrides", incoming_tasks=[role_task("worker-2", "writer")],
             omx_config_json=json.dumps({"agentReasoning": {"Writer": "XHIGH", "explore": "bogus"},
                                         "agentModels": {"writer": " cfg-writer-model "}})),
        case("s10", "standard default from omx-config env (project scope home)", home_mode="project",
             setup_scope_json='{"scope":"project"}', incoming_tasks=[role_task("worker-2", "writer")],
             omx_config_json=json.dumps({"env": {"OMX_DEFAULT_STANDARD_MODEL": "project-standard-model"},
                                         "agentReasoning": {"writer": "xhigh"}})),
        case("s11", "legacy project-local scope", home_mode="project",
             setup_scope_json='{"scope":"project-local"}', omx_config_json=json.dumps({"agentModels": {"executor": "pl"}})),
        case("s12", "user scope: ~/.codex, config.toml root model for executor", home_mode="user",
             setup_scope_json='{"scope":"user"}', config_toml='model = "toml-root"\n'),
        case("s13", "process CODEX_HOME, frontier env model from process", home_mode="process",
             process_env={"OMX_DEFAULT_FRONTIER_MODEL": "proc-frontier"}, incoming_tasks=[role_task("worker-2", "critic")]),
        case("s14", "-low suffix role gets spark default", agent_type="executor-low",
             omx_config_json=json.dumps({"models": {"team-low-complexity": "cfg-low"}})),
        case("s15", "fast class: process OMX_SPARK_MODEL", incoming_tasks=[role_task("worker-2", "style-reviewer")],
             process_env={"OMX_SPARK_MODEL": "proc-spark"}),
        case("s16", "mixed task roles fall back to agent type", agent_type="debugger",
             incoming_tasks=[role_task("worker-2", "writer"), role_task("worker-2", "explore")]),
        case("s17", "existing task role decides", existing_tasks=[role_task("worker-2", "verifier")]),
        case("s18", "agent type casing: table lookup is exact", agent_type="Executor"),
        case("s19", "prototype-member role: no tools, no bypass", incoming_tasks=[role_task("worker-2", "constructor")]),
        case("s20", "no agent type at all", agent_type=None),
        case("s21", "orphan --model dropped, -- tail preserved",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model -- --model tail-model"}),
        case("s22", "--model= empty dropped", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model= --verbose"}),
        # CLI selection
        case("c1", "auto -> claude from model name", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model Claude-Opus"},
             incoming_tasks=[role_task("worker-2", "executor")]),
        case("c2", "auto -> gemini from model, read-only role", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--model gemini-2.5-pro"},
             incoming_tasks=[role_task("worker-2", "explore")]),
        case("c3", "explicit gemini with non-gemini model", env={"OMX_TEAM_WORKER_CLI": "GEMINI"}),
        case("c4", "CLI map per position (3 workers, 2nd)", env={"OMX_TEAM_WORKER_CLI_MAP": "codex, claude ,auto"},
             count=3, position=1),
        case("c5", "CLI map single entry applies to all, OMX_TEAM_WORKER_CLI ignored",
             env={"OMX_TEAM_WORKER_CLI_MAP": "claude", "OMX_TEAM_WORKER_CLI": "bogus"}, count=2, position=1),
        case("c6", "CLI map auto entry with gemini model", env={"OMX_TEAM_WORKER_CLI_MAP": "auto,codex",
             "OMX_TEAM_WORKER_LAUNCH_ARGS": "--model gemini-x"}, count=2),
        case("c7", "claude explore worker: no skip-permissions", env={"OMX_TEAM_WORKER_CLI": "claude"},
             incoming_tasks=[role_task("worker-2", "explore")]),
        # process-launch steps
        case("p1", "system prompt override inserted before --",
             process_env={"OMX_BYPASS_DEFAULT_SYSTEM_PROMPT": None},
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--foo -- bar"}),
        case("p2", "existing model_instructions_file override kept", process_env={"OMX_BYPASS_DEFAULT_SYSTEM_PROMPT": "1"},
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-c model_instructions_file=/x.md"}),
        case("p3", "instructions path escaped for TOML", process_env={"OMX_BYPASS_DEFAULT_SYSTEM_PROMPT": None},
             extra_env={"OMX_TEAM_STATE_ROOT": f"{BASE}/p3/repo/.omx/state", "OMX_TEAM_LEADER_CWD": f"{BASE}/p3/repo",
                        "OMX_MODEL_INSTRUCTIONS_FILE": f"{BASE}/p3/we\"ird\\dir/AGENTS.md"}),
        case("p4", "MCP servers disabled for declared servers", config_toml=MCP_TOML,
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-c mcp_servers.omx_trace.enabled=true -- tail"}),
        case("p5", "MCP compat mode keeps servers", config_toml=MCP_TOML, process_env={"OMX_TEAM_WORKER_MCP_COMPAT": " On "}),
        case("p6", "provider env forwarded", config_toml=PROVIDER_TOML,
             process_env={"AZURE_OPENAI_API_KEY": "k-123", "OTHER_KEY": "o-1", "HTTPS_PROXY": "http://proxy:1",
                          "no_proxy": "localhost", "HTTP_PROXY": "  "}),
        case("p7", "provider override selects other provider", config_toml=PROVIDER_TOML,
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "-c model_provider=other"},
             process_env={"AZURE_OPENAI_API_KEY": "k-123", "OTHER_KEY": "o-1"}),
        case("p8", "leader argv with --dangerously flag and explicit bypass in env args",
             process_argv=["node", "omx", "--dangerously-bypass-approvals-and-sandbox"],
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--madmax --foo -- --madmax"},
             incoming_tasks=[role_task("worker-2", "explore")]),
        case("p9", "worktree env vars and HUD scrub",
             worker_cwd=f"{BASE}/p9/repo/.omx/team/scale-team/worktrees/worker-2",
             process_env={"OMX_TMUX_HUD_OWNER": "1", "CODEX_SQLITE_HOME": " /sqlite "},
             extra_env={"OMX_TEAM_STATE_ROOT": f"{BASE}/p9/repo/.omx/state", "OMX_TEAM_LEADER_CWD": f"{BASE}/p9/repo",
                        "OMX_MODEL_INSTRUCTIONS_FILE": f"{BASE}/p9/repo/.omx/team/scale-team/worktrees/worker-2/AGENTS.md",
                        "OMX_TEAM_WORKTREE_PATH": f"{BASE}/p9/repo/.omx/team/scale-team/worktrees/worker-2",
                        "OMX_TEAM_WORKTREE_BRANCH": "feature/x/worker-2", "OMX_TEAM_WORKTREE_DETACHED": "0",
                        "OMX_TMUX_HUD_LEADER_PANE": "%1", "EMPTY_ONE": "  "}),
        case("p10", "hostile strings survive quoting", team_name="hostile-team",
             worker_cwd=f"{BASE}/p10/we ird $HOME `x` 'q'",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--note \"a 'b' \\\"c\\\" $d `e` \\\\f\" -- 'g h' \"$(rm -rf /)\""}),
        case("p11", "leader node path without directory -> no PATH export",
             process_env={"OMX_LEADER_NODE_PATH": "node"}),
        case("p12", "default instructions path when extra env lacks one", process_env={"OMX_BYPASS_DEFAULT_SYSTEM_PROMPT": None},
             worker_cwd=f"{BASE}/p12/repo/./sub/../wk/",
             extra_env={"OMX_TEAM_STATE_ROOT": f"{BASE}/p12/repo/.omx/state", "OMX_TEAM_LEADER_CWD": f"{BASE}/p12/repo"}),
        case("p13", "direct policy re-normalised, no bypass even with --madmax leader", process_argv=MADMAX_ARGV,
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "--x -s=read-only --y -a never"}),
        case("p14", "tokenizer: whitespace kinds, adjacent quotes, backslashes",
             env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "\t--a\u00a0b  c\\ d 'e'\"f\"g \"\" '' x\\y \"p\\q\\\"r\"\u2028z\x1cw"}),
        case("p15", "tokenizer: backslash then quote opens a quote", env={"OMX_TEAM_WORKER_LAUNCH_ARGS": "x\\\"y"}),
        case("p17", "rc sourcing opt-in", process_env={"OMX_TMUX_SOURCE_SHELL_RC": " 1 "}),
        case("p18", "display name for the public worker identity",
             extra_env={"OMX_TEAM_STATE_ROOT": f"{BASE}/p18/repo/.omx/state", "OMX_TEAM_LEADER_CWD": f"{BASE}/p18/repo",
                        "OMX_MODEL_INSTRUCTIONS_FILE": f"{BASE}/p18/i.md", "OMX_TEAM_DISPLAY_NAME": " Pretty Team "}),
        case("p16", "ambient leader argv with direct policy is ignored, -c missing tolerated",
             process_argv=["node", "omx", "-s", "read-only", "-c", "--madmax"]),
    ]
    return out


FUZZ_TOKENS = [
    "--madmax", "--dangerously-bypass-approvals-and-sandbox", "-a", "never", "on-request", "-a=untrusted",
    "--ask-for-approval", "--sandbox", "-s", "read-only", "--sandbox=workspace-write", "-s=", "-c", "--config",
    "model_reasoning_effort=high", "'model_reasoning_effort=\"low\"'", "model_reasoning_effort=\"xhigh\"",
    "model_provider=azure", "'model_provider = \"o p\"'", "approval_policy=never", "sandbox_mode='read-only'",
    "--config=sandbox_mode=read-only", "-c=approval_policy=never", "k=v", "--model", "gpt-x", "--model=claude-3",
    "--model=", "gemini-pro", "--", "--", "--foo", "bar", "'a b'", "\"c\\\"d\"", "x\\y", "-c",
    "model_instructions_file=/i.md", "mcp_servers.omx_state.enabled=true",
]
FUZZ_ROLES = [None, "executor", "explore", "writer", "architect", "researcher", "critic", "qa-tester", "Writer",
              "planner", "bogus-role", "test-engineer", "vision", "executor-low", "constructor"]


def fuzz_cases(seed: int, count: int) -> list[dict[str, Any]]:
    import random

    rnd = random.Random(seed)
    out = []
    for n in range(count):
        raw = " ".join(rnd.choice(FUZZ_TOKENS) for _ in range(rnd.randint(0, 6)))
        env: dict[str, str] = {"OMX_TEAM_WORKER_LAUNCH_ARGS": raw}
        if rnd.random() < 0.4:
            env["OMX_TEAM_WORKER_INHERITED_MODEL"] = rnd.choice(["leader-m", " gpt-x ", "claude-leader", ""])
        if rnd.random() < 0.2:
            env["OMX_TEAM_WORKER_CLI"] = rnd.choice(["auto", "codex", "claude", "gemini", "CODEX"])
        count_workers = rnd.choice([1, 1, 2, 3])
        if rnd.random() < 0.2:
            env["OMX_TEAM_WORKER_CLI_MAP"] = ",".join(
                rnd.choice(["auto", "codex", "claude", "gemini"]) for _ in range(rnd.choice([1, count_workers]))
            )
        argv = ["node", "omx"] + rnd.sample(["--madmax", "--dangerously-bypass-approvals-and-sandbox", "-s", "x"],
                                            rnd.randint(0, 2))
        tasks = [role_task(f"worker-{2 + rnd.randrange(count_workers)}", rnd.choice(FUZZ_ROLES))
                 for _ in range(rnd.randint(0, 3))]
        process_env: dict[str, str | None] = {}
        if rnd.random() < 0.5:
            process_env["OMX_BYPASS_DEFAULT_SYSTEM_PROMPT"] = None
        config_toml = rnd.choice([None, MCP_TOML, PROVIDER_TOML])
        if config_toml == PROVIDER_TOML:
            process_env["AZURE_OPENAI_API_KEY"] = "k"
        omx_config = rnd.choice([None, json.dumps({"agentReasoning": {"executor": "low", "writer": "max"}}),
                                 json.dumps({"agentModels": {"explore": "cfg-explore"}, "env": {
                                     "OMX_DEFAULT_STANDARD_MODEL": "cfg-std"}})])
        out.append(case(
            f"f{n}", f"seeded fuzz {seed}#{n}", env=env, process_argv=argv, incoming_tasks=tasks,
            count=count_workers, position=rnd.randrange(count_workers), agent_type=rnd.choice(FUZZ_ROLES),
            process_env=process_env, config_toml=config_toml, omx_config_json=omx_config,
        ))
    return out


def main() -> None:
    cs = cases() + fuzz_cases(20261130, 200)
    oracle = subprocess.run(
        ["node", str(HERE / "launch_oracle.mjs")], input=json.dumps(cs),
        capture_output=True, text=True, check=True, env={**os.environ},
    )
    results = json.loads(oracle.stdout)
    golden = []
    for c, r in zip(cs, results, strict=True):
        files = {"omx_config_json": c.pop("omx_config_json"), "config_toml": c.pop("config_toml")}
        c["codex_home_files"] = files
        c["cli_paths"] = {cli: f"{c['root']}/bin/{cli}" for cli in ("codex", "claude", "gemini")}
        golden.append({"input": c, "expected": r})
    doc = {
        "format_version": "1.0",
        "kind": "function",
        "function": "scale-up worker launch plans, process launch spec and startup script",
        "comment": (
            "Launch-argument policy goldens (spec §13). 'expected' is what oh-my-codex 0.20.3 produced on Node "
            "v20 via tests/omx/oracles/launch_oracle.mjs (driven by gen_launch.py): stage-1 plans from "
            "model-contract.js/tmux-session.js composed as scaling.js does, 'spec' from "
            "buildWorkerProcessLaunchSpec, 'script' from writeWorkerStartupScriptCommand and 'executed_argv' "
            "from running that script with /bin/sh against a fake CLI that prints its argv. 'error' = refusal "
            "of the whole scale-up call; 'build_error' = refusal while building the process."
        ),
        "cases": golden,
    }
    out = ROOT / "tests" / "goldens" / "omx" / "launch.json"
    out.write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} cases")


if __name__ == "__main__":
    main()
