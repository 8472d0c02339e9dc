"""The fleet file (docs/fleet.md): the example parses to what it declares; every malformed file is refused
naming the file, the line and the key of its first problem; values are carried literally; the JSON
Schema ``docs/fleet.schema.json`` agrees with the parser (``pure/fleet/spec.py``)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from returns.result import Failure, Success

from pure.fleet import spec
from pure.fleet.spec import (
    FLEET_CLIS,
    FleetFile,
    FleetFileProblem,
    TeamSpec,
    WorkerGroup,
    fleet_as_json,
    parse_fleet,
    role_problem,
)
from pure.omx.launch import AGENTS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "fleet.schema.json").read_text(encoding="utf-8"))
PATH = "/work/proj/panefleet.toml"

EXAMPLE = """\
# panefleet.toml
[team.alpha]
tmux_session = "alpha"      # made on the team's tmux server when missing, with a leader pane
# leader_pane = "%3"        # or: join an existing pane as the leader
# cwd = "."                 # the project the team works in (default: this file's folder)

[[team.alpha.workers]]
cli = "codex"               # codex | claude | gemini | placeholder
role = "executor"
count = 3

[[team.alpha.workers]]
cli = "claude"
role = "reviewer"
count = 2
# model, args, env, worktree = true, task = "…" are optional per group
"""


def parsed(text: str, path: str = PATH) -> FleetFile:
    result = parse_fleet(text, path)
    assert isinstance(result, Success), str(result.failure())
    fleet: FleetFile = result.unwrap()
    return fleet


def problem(text: str, path: str = PATH) -> FleetFileProblem:
    result = parse_fleet(text, path)
    assert isinstance(result, Failure), f"parsed: {result.unwrap()}"
    found: FleetFileProblem = result.failure()
    return found


def group(cli: str = "codex", count: int = 1, extra: str = "", team: str = "alpha") -> str:
    """A ``[[team.TEAM.workers]]`` of three lines, and ``extra`` (lines) after them."""
    more = extra if extra == "" or extra.endswith("\n") else extra + "\n"
    return f'[[team.{team}.workers]]\ncli = "{cli}"\ncount = {count}\n{more}'


# ------------------------------------------------------------------------------------ the example


def test_the_example_parses_to_what_it_declares() -> None:
    assert parsed(EXAMPLE) == FleetFile(path=PATH, teams=(
        TeamSpec(name="alpha", tmux_session="alpha", leader_pane=None, tmux_socket=None, cwd="/work/proj", line=2,
                 groups=(WorkerGroup(cli="codex", role="executor", count=3, line=7),
                         WorkerGroup(cli="claude", role="reviewer", count=2, line=12))),
    ))
    team = parsed(EXAMPLE).teams[0]
    assert team.declared == 5
    assert team.groups[0] == WorkerGroup(cli="codex", role="executor", count=3, model=None, args=(), env=(),
                                         worktree=False, task=None, line=7)


def test_the_documented_example_is_this_one() -> None:
    doc = (ROOT / "docs" / "fleet.md").read_text(encoding="utf-8")
    assert f"```toml\n{EXAMPLE}```" in doc


def test_defaults_and_every_key() -> None:
    text = """\
[team.beta]
leader_pane = "%12"
tmux_socket = "private-1"
cwd = "../other/./proj"

[[team.beta.workers]]
cli = "gemini"
count = 0

[[team.beta.workers]]
cli = "placeholder"
role = "code-reviewer"
count = 4
model = "gpt-5.6-terra"
args = ["--verbose", "-c", "x=1"]
worktree = true
task = "review the login form"
[team.beta.workers.env]
ZED = "last"
ALPHA = "first"
_private = ""
"""
    assert parsed(text).teams == (TeamSpec(
        name="beta", tmux_session=None, leader_pane="%12", tmux_socket="private-1", cwd="/work/other/proj", line=1,
        groups=(WorkerGroup(cli="gemini", count=0, line=6),
                WorkerGroup(cli="placeholder", role="code-reviewer", count=4, model="gpt-5.6-terra",
                            args=("--verbose", "-c", "x=1"), env=(("ZED", "last"), ("ALPHA", "first"), ("_private", "")),
                            worktree=True, task="review the login form", line=10))),)


@pytest.mark.parametrize(("cwd", "expected"), [
    (None, "/work/proj"), (".", "/work/proj"), ("sub/dir/", "/work/proj/sub/dir"), ("..", "/work"),
    ("/srv/x/../y", "/srv/y"), ("a//b", "/work/proj/a/b"),
])
def test_cwd_is_resolved_against_the_files_folder(cwd: str | None, expected: str) -> None:
    line = "" if cwd is None else f"cwd = {json.dumps(cwd)}\n"
    assert parsed(f"[team.alpha]\n{line}{group()}").teams[0].cwd == expected


def test_several_teams_in_file_order() -> None:
    text = f"""\
[team.web]
{group("codex", 2, team="web")}
[team.api-2]
tmux_session = "api_two"
tmux_socket = "fleet"
{group("claude", 1, team="api-2")}
{group("codex", 1, 'role = "test-engineer"', team="api-2")}
[team.docs]
leader_pane = "%0"
{group("gemini", 1, 'role = "writer"', team="docs")}"""
    fleet = parsed(text)
    assert [(t.name, t.line, t.tmux_session, t.leader_pane, t.tmux_socket, t.declared) for t in fleet.teams] == [
        ("web", 1, "web", None, None, 2), ("api-2", 6, "api_two", None, "fleet", 2), ("docs", 18, None, "%0", None, 1)]
    assert [[(g.cli, g.role, g.line) for g in t.groups] for t in fleet.teams] == [
        [("codex", "executor", 2)], [("claude", "executor", 9), ("codex", "test-engineer", 13)],
        [("gemini", "writer", 20)]]


def test_a_team_made_implicitly_or_inline_still_has_lines() -> None:
    implicit = parsed(f"# no [team.alpha] header\n\n{group()}")
    assert (implicit.teams[0].line, implicit.teams[0].groups[0].line) == (3, 3)
    inline = parsed('[team.alpha]\nworkers = [\n  {cli = "codex", count = 1},\n  {cli = "claude", count = 1},\n]\n')
    assert [g.line for g in inline.teams[0].groups] == [2, 2]
    dotted = parsed('team.alpha.tmux_session = "s"\nteam.alpha.workers = [{cli = "codex", count = 2}]\n')
    assert (dotted.teams[0].line, dotted.teams[0].tmux_session) == (1, "s")


# ----------------------------------------------------------------------------------- malformed files

# (id, text, line, key, message): the exact problem, or (for long ones) the start of its message.
MALFORMED: list[tuple[str, str, int | None, str, str]] = [
    ("syntax error", f"[team.alpha]\n{group()}model = gpt\n", 5, "team.alpha.workers[1].model",
     "not valid TOML: Invalid value (column 9)"),
    ("garbage before any table", "oops\n[team.alpha]\n", 1, "",
     "not valid TOML: Expected '=' after a key in a key/value pair (column 5)"),
    ("duplicate team table", f"[team.alpha]\n{group()}\n[team.alpha]\ncwd = 'x'\n", 6, "team.alpha",
     "not valid TOML: Cannot declare ('team', 'alpha') twice (column 12)"),
    ("duplicate key", f"[team.alpha]\n{group()}count = 2\n", 5, "team.alpha.workers[1].count",
     "not valid TOML: Cannot overwrite a value (column 10)"),
    ("syntax error inside a multi-line array", f"[team.alpha]\n{group()}args = [\n  'a',\n  b,\n]\n", 7,
     "team.alpha.workers[1].args", "not valid TOML: Invalid value (column 3)"),
    ("unclosed array", f"[team.alpha]\n{group()}args = [\n  'a',\n", 6, "team.alpha.workers[1].args",
     "not valid TOML: Invalid value (at the end of the file)"),
    ("unknown team key", f'[team.alpha]\ntmux_sesion = "a"\n{group()}', 2, "team.alpha.tmux_sesion",
     "a team has no key 'tmux_sesion' (did you mean tmux_session?); its keys: tmux_session, leader_pane, "
     "tmux_socket, cwd, host, workers"),
    ("host without cwd", f'[team.alpha]\nhost = "me@build1"\n{group()}', 1, "team.alpha.cwd",
     "a team on a host needs cwd: its folder there, absolute"),
    ("host with a relative cwd", f'[team.alpha]\nhost = "build1"\ncwd = "proj"\n{group()}', 3, "team.alpha.cwd",
     "a team on a host needs cwd: its folder there, absolute"),
    ("host read as an option", f'[team.alpha]\nhost = "-oProxyCommand=x"\ncwd = "/p"\n{group()}', 2,
     "team.alpha.host", 'must be an OpenSSH destination: [user@]host or a ~/.ssh/config alias, not "-oProxyCommand=x"'),
    ("unknown group key", f"[team.alpha]\n{group()}{group('claude')}cout = 2\n", 8, "team.alpha.workers[2].cout",
     "a group of workers has no key 'cout' (did you mean count?); its keys: cli, role, count, model, args, env, "
     "worktree, task"),
    ("unknown top-level key", f"teams = 1\n[team.alpha]\n{group()}", 1, "teams",
     "a fleet file has no key 'teams' (did you mean team?); its keys: team"),
    ("count of the wrong type", f"[team.alpha]\n{group(extra='')}".replace("count = 1", 'count = "3"'), 4,
     "team.alpha.workers[1].count", 'must be an integer, not "3"'),
    ("float count", f"[team.alpha]\n{group()}".replace("count = 1", "count = 2.0"), 4,
     "team.alpha.workers[1].count", "must be an integer, not the float 2.0"),
    ("negative count", f"[team.alpha]\n{group()}{group('claude', -1)}", 7, "team.alpha.workers[2].count",
     "must be 0 or more, not -1"),
    ("bool count", f"[team.alpha]\n{group()}".replace("count = 1", "count = true"), 4, "team.alpha.workers[1].count",
     "must be an integer, not the boolean true"),
    ("missing count", f"[team.alpha]\n{group()}\n[[team.alpha.workers]]\ncli = 'claude'\n", 6,
     "team.alpha.workers[2].count", "missing: how many workers of this group the team has (0 or more)"),
    ("missing cli", "[team.alpha]\n[[team.alpha.workers]]\ncount = 1\n", 2, "team.alpha.workers[1].cli",
     "missing: the workers' CLI, one of: codex, claude, gemini, placeholder"),
    ("bad cli", f"[team.alpha]\n{group('codx')}", 3, "team.alpha.workers[1].cli",
     '"codx" is not a worker CLI (did you mean codex?); one of: codex, claude, gemini, placeholder'),
    ("bad team name", f"[team.Alpha]\n{group(team='Alpha')}", 1, "team.Alpha",
     "invalid_team_name:Alpha (a team name is 1-30 characters of a-z and 0-9 joined by single '-', exactly as "
     "oh-my-codex's sanitizeTeamName leaves it; oh-my-codex would act on team 'alpha')"),
    ("team name with a double hyphen", f"[team.a--b]\n{group(team='a--b')}", 1, "team.a--b",
     "invalid_team_name:a--b ("),
    ("quoted team name", f'[team."a.b"]\n{group(team=chr(34) + "a.b" + chr(34))}', 1, 'team."a.b"',
     "invalid_team_name:a.b ("),
    ("both tmux_session and leader_pane", f'[team.alpha]\ntmux_session = "a"\nleader_pane = "%3"\n{group()}', 3,
     "team.alpha.leader_pane", "tmux_session and leader_pane exclude each other: tmux_session names the session "
     "made for the team, leader_pane an existing pane it joins"),
    ("bad leader pane", f'[team.alpha]\nleader_pane = "3"\n{group()}', 2, "team.alpha.leader_pane",
     "must be a tmux pane id like %3 (`tmux display -p '#{pane_id}'`), not \"3\""),
    ("session name with a dot", f'[team.alpha]\ntmux_session = "a.b"\n{group()}', 2, "team.alpha.tmux_session",
     "must be a tmux session name: 1-64 characters of A-Z, a-z, 0-9, '_' and '-', not \"a.b\""),
    ("session name with a colon", f'[team.alpha]\ntmux_session = "a:b"\n{group()}', 2, "team.alpha.tmux_session",
     "must be a tmux session name: "),
    ("empty session name", f'[team.alpha]\ntmux_session = ""\n{group()}', 2, "team.alpha.tmux_session",
     "must be a tmux session name: "),
    ("socket with a slash", f'[team.alpha]\ntmux_socket = "/tmp/s"\n{group()}', 2, "team.alpha.tmux_socket",
     "must be the name of a tmux server's socket (`tmux -L NAME`): not empty, no '/', not \"/tmp/s\""),
    ("cwd with a tilde", f'[team.alpha]\ncwd = "~/proj"\n{group()}', 2, "team.alpha.cwd",
     "must be a folder, absolute or relative to this file's folder ('~' is not expanded), not \"~/proj\""),
    ("cwd not a string", f"[team.alpha]\ncwd = 3\n{group()}", 2, "team.alpha.cwd", "must be a string, not the integer 3"),
    ("bad env name", f"[team.alpha]\n{group()}[team.alpha.workers.env]\nOK = '1'\n1X = '2'\n", 7,
     "team.alpha.workers[1].env.1X", "is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"),
    ("env name that needs quoting, inline", f"[team.alpha]\n{group()}env = {{ 'A B' = '1' }}\n", 5,
     'team.alpha.workers[1].env."A B"', "is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"),
    ("env value not a string", f"[team.alpha]\n{group()}env.PORT = 8080\n", 5, "team.alpha.workers[1].env.PORT",
     "must be a string, not the integer 8080"),
    ("duplicate cli and role", "[team.alpha]\n" + group() + group("claude") + group("codex", 2, 'role = "executor"'),
     8, "team.alpha.workers[3]", "has the cli and role of team.alpha.workers[1] (codex, executor): a team's groups "
     "must differ in cli or role; merge their counts"),
    ("zero total", f"[team.alpha]\n{group(count=0)}{group('claude', 0)}", 1, "team.alpha",
     "declares no worker: a team needs at least 1 (`panefleet destroy` stops a team)"),
    ("too many in one group", f"[team.alpha]\n{group(count=21)}", 1, "team.alpha",
     "declares 21 workers, more than the 20 a team may have"),
    ("too many in all", f"[team.alpha]\n{group(count=11)}{group('claude', 10)}", 1, "team.alpha",
     "declares 21 workers, more than the 20 a team may have"),
    ("no teams", "# an empty fleet\n", None, "team",
     "no team: declare one with [team.NAME] and its [[team.NAME.workers]]"),
    ("an empty team table", "[team]\n", 1, "team", "no team: "),
    ("team not a table of teams", "team = 3\n", 1, "team", "must be a table of teams ([team.NAME]), not the integer 3"),
    ("a team that is not a table", "team.alpha = 'x'\n", 1, "team.alpha", "must be a table ([team.alpha]), not \"x\""),
    ("no workers", '[team.alpha]\ntmux_session = "a"\n', 1, "team.alpha.workers",
     "missing: a team needs at least one group of workers, [[team.alpha.workers]]"),
    ("empty workers", "[team.alpha]\nworkers = []\n", 2, "team.alpha.workers",
     "must have at least one group of workers ([[team.alpha.workers]])"),
    ("workers not tables", "[team.alpha]\nworkers = ['codex']\n", 2, "team.alpha.workers",
     "must be an array of tables ([[team.alpha.workers]]), not an array"),
    ("args a string", f"[team.alpha]\n{group()}args = '--fast'\n", 5, "team.alpha.workers[1].args",
     'must be an array of strings, not "--fast"'),
    ("args not all strings", f"[team.alpha]\n{group()}args = ['--n', 3]\n", 5, "team.alpha.workers[1].args",
     "must be an array of strings; its item 2 is the integer 3"),
    ("role of the wrong shape", f"[team.alpha]\n{group()}role = 'Executor'\n", 5, "team.alpha.workers[1].role",
     '"Executor" is not a role name (a-z, 0-9, \'-\' and \'_\', starting with a letter or digit) '
     "(did you mean executor"),
    ("role not a string", f"[team.alpha]\n{group()}role = ['executor']\n", 5, "team.alpha.workers[1].role",
     "must be a string, not an array"),
    ("empty model", f"[team.alpha]\n{group()}model = ''\n", 5, "team.alpha.workers[1].model",
     "must not be empty (leave it out for the role's default model)"),
    ("worktree not a boolean", f"[team.alpha]\n{group()}worktree = 'yes'\n", 5, "team.alpha.workers[1].worktree",
     'must be true or false, not "yes"'),
    ("blank task", f"[team.alpha]\n{group()}" + 'task = " \\t\\n "\n', 5, "team.alpha.workers[1].task", "must not be blank"),
    # pure/fleet/spec.py _launched_as_given: what a Claude or Gemini worker's launch would drop
    ("args for Claude Code", f"[team.alpha]\n{group('claude')}args = ['--permission-mode', 'default']\n", 5,
     "team.alpha.workers[1].args", "Claude Code workers are launched with arguments of their own"),
    ("a model for Claude Code", f"[team.alpha]\n{group('claude')}model = 'claude-opus'\n", 5,
     "team.alpha.workers[1].model", 'Claude Code workers are launched with no --model (docs/launch-policy.md), so '
     '"claude-opus" would be dropped'),
    ("a model Gemini drops", f"[team.alpha]\n{group('gemini')}model = 'gpt-5'\n", 5, "team.alpha.workers[1].model",
     "Gemini CLI workers are launched with only a Gemini model"),
    ("unknown key in an inline group", "[team.alpha]\nworkers = [\n  {cli = 'codex', count = 1, modle = 'x'},\n]\n",
     2, "team.alpha.workers[1].modle", "a group of workers has no key 'modle' (did you mean model?)"),
]


@pytest.mark.parametrize(("text", "line", "key", "message"), [case[1:] for case in MALFORMED],
                         ids=[case[0] for case in MALFORMED])
def test_a_malformed_file_is_refused_naming_path_line_and_key(text: str, line: int | None, key: str,
                                                             message: str) -> None:
    found = problem(text)
    assert (found.path, found.line, found.key) == (PATH, line, key)
    assert found.message.startswith(message), found.message


def test_windows_line_ends_keep_the_lines() -> None:
    assert parsed(EXAMPLE.replace("\n", "\r\n")) == parsed(EXAMPLE)
    found = problem(f"[team.alpha]\n{group()}{group('claude', -1)}".replace("\n", "\r\n"))
    assert (found.line, found.key) == (7, "team.alpha.workers[2].count")


def test_the_first_problem_in_file_order_is_reported() -> None:
    text = f"""\
[team.alpha]
{group('codex', -1)}
[team.beta]
tmux_sesion = "b"
{group(team="beta")}"""
    assert (problem(text).line, problem(text).key) == (4, "team.alpha.workers[1].count")
    later = text.replace("count = -1", "count = 1").replace("tmux_sesion", "tmux_session") + "colour = 'red'\n"
    assert (problem(later).line, problem(later).key) == (11, "team.beta.workers[1].colour")


def test_a_misspelt_key_comes_before_the_key_it_leaves_missing() -> None:
    found = problem("[team.alpha]\n[[team.alpha.workers]]\ncli = 'codex'\ncuont = 2\n")
    assert (found.line, found.key) == (4, "team.alpha.workers[1].cuont")
    assert "(did you mean count?)" in found.message


def test_multi_line_strings_and_arrays_do_not_move_the_lines() -> None:
    text = '''\
[team.alpha]
[[team.alpha.workers]]
cli = "codex"
count = 1
task = """
[team.beta]
[[team.alpha.workers]]
count = 2
"""
args = [
  "[team.gamma]",
  "count = 3",
]
[[team.alpha.workers]]
cli = "claude"
count = 1
role = 3
'''
    found = problem(text)
    assert (found.line, found.key, found.message) == (17, "team.alpha.workers[2].role", "must be a string, not the integer 3")
    assert parsed(text.replace("role = 3", "")).teams[0].groups[1].line == 14


def test_a_problem_reads_as_path_line_key_message() -> None:
    assert str(problem(f"[team.alpha]\n{group('claude', -1)}")) == (
        f"{PATH}:4: team.alpha.workers[1].count: must be 0 or more, not -1")
    assert str(problem("")) == f"{PATH}: team: no team: declare one with [team.NAME] and its [[team.NAME.workers]]"
    assert str(FleetFileProblem(path="/f.toml", line=1, key="", message="not valid TOML: x")) == (
        "/f.toml:1: not valid TOML: x")


# ------------------------------------------------------------------------------------------- roles


def test_roles_are_known_from_the_agent_table_or_the_project() -> None:
    fleet = parsed(EXAMPLE)
    found = role_problem(fleet)
    assert found is not None
    assert (found.path, found.line, found.key) == (PATH, 12, "team.alpha.workers[2].role")
    assert found.message.startswith('"reviewer" is not a known role (did you mean ')
    assert "code-reviewer" in found.message and ".codex/prompts/<role>.md" in found.message
    assert role_problem(fleet, configured=["reviewer"]) is None
    for role in ("executor", "code-reviewer", "explore-low"):
        assert role in AGENTS or role.removesuffix("-low") in AGENTS
        assert role_problem(parsed(f"[team.alpha]\n{group(extra=f'role = {json.dumps(role)}')}")) is None
    assert role_problem(parsed("[team.alpha]\n" + group(extra='role = "mine-low"'))) is not None


# ------------------------------------------------------------------------------------- literal values

HOSTILE = ["$(touch /tmp/x)", "`touch /tmp/x`", "a; rm -rf ~", "\"double\" 'single'", "line1\nline2",
           "  padded  ", "\\ backslash \\n", "${HOME} $HOME", "tab\there", "'", '"', "", "é ✓"]


def test_hostile_values_are_carried_literally() -> None:
    text = '''\
[team.alpha]
[[team.alpha.workers]]
cli = "codex"
count = 1
model = "gpt; $(touch /tmp/x)"
args = ["--flag=$(touch /tmp/x)", '`id`', "a;b", "\\"dq\\" 'sq'", "line1\\nline2", ' sp ']
task = """
first line $(touch /tmp/x)
`uname -a`; echo "done"
"""
[team.alpha.workers.env]
HOSTILE = "$(touch /tmp/x)"
QUOTES = \'\'\'it's "quoted"\'\'\'
NEWLINE = "a\\nb"
'''
    got = parsed(text).teams[0].groups[0]
    assert got.model == "gpt; $(touch /tmp/x)"
    assert got.args == ("--flag=$(touch /tmp/x)", "`id`", "a;b", "\"dq\" 'sq'", "line1\nline2", " sp ")
    assert got.task == 'first line $(touch /tmp/x)\n`uname -a`; echo "done"\n'
    assert got.env == (("HOSTILE", "$(touch /tmp/x)"), ("QUOTES", 'it\'s "quoted"'), ("NEWLINE", "a\nb"))


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_every_hostile_value_round_trips(value: str) -> None:
    quoted = json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string here
    model = f"model = {quoted}\n" if value else ""  # an empty model or a blank task is refused
    task = f"task = {quoted}\n" if value.strip() else ""
    text = f"[team.alpha]\n{group()}{model}args = [{quoted}, {quoted}]\nenv = {{ V = {quoted} }}\n{task}"
    got = parsed(text).teams[0].groups[0]
    assert (got.args, got.env) == ((value, value), (("V", value),))
    assert got.model == (value or None) and got.task == (value if value.strip() else None)
    assert fleet_as_json(parsed(text))["teams"][0]["groups"][0]["args"] == [value, value]


# -------------------------------------------------------------------------------------------- JSON


def test_fleet_as_json() -> None:
    data = fleet_as_json(parsed(EXAMPLE + '[team.alpha.workers.env]\nB = "2"\nA = "1"\n'))
    assert data == {"path": PATH, "teams": [{
        "name": "alpha", "line": 2, "tmuxSession": "alpha", "leaderPane": None, "tmuxSocket": None,
        "cwd": "/work/proj", "host": None, "declared": 5, "groups": [
            {"cli": "codex", "role": "executor", "count": 3, "model": None, "args": [], "env": [], "worktree": False,
             "task": None, "line": 7},
            {"cli": "claude", "role": "reviewer", "count": 2, "model": None, "args": [], "env": [["B", "2"], ["A", "1"]],
             "worktree": False, "task": None, "line": 12}]}]}
    assert json.loads(json.dumps(data, sort_keys=True)) == data


# ------------------------------------------------------------------------------------- the schema

GOOD = [
    EXAMPLE,
    f"[team.a]\nleader_pane = '%0'\ntmux_socket = 'x y'\ncwd = '/abs'\n{group('placeholder', 20, 'worktree = false', 'a')}",
    "[team.a-1]\n" + group("gemini", 0, team="a-1") + group("gemini", 1, 'role = "writer"', team="a-1")
    + "[team.b]\n" + group(team="b", extra='env = {A_1 = "$(x)"}'),
    f"[team.{'a' * 30}]\n" + group(team="a" * 30, extra='task = "t"'),
    f"[team.a]\nhost = 'me@build-1.example'\ncwd = '/srv/p'\n{group('placeholder', 2, team='a')}",
]
# Rules the schema cannot state (its $comment): the parser alone refuses these.
PARSER_ONLY = {"duplicate cli and role", "zero total", "too many in all",
               "float count"}  # 2.0 is a float in TOML, and an integer to JSON Schema


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("text", GOOD, ids=range(len(GOOD)))
def test_the_schema_accepts_what_the_parser_accepts(text: str) -> None:
    parsed(text)
    jsonschema.Draft202012Validator(SCHEMA).validate(tomllib.loads(text))


def _decodes(text: str) -> bool:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return False
    return True


@pytest.mark.parametrize(("name", "text"), [(c[0], c[1]) for c in MALFORMED if _decodes(c[1])],
                         ids=[c[0] for c in MALFORMED if _decodes(c[1])])
def test_the_schema_refuses_what_the_parser_refuses(name: str, text: str) -> None:
    valid = jsonschema.Draft202012Validator(SCHEMA).is_valid(tomllib.loads(text))
    assert valid == (name in PARSER_ONLY)


def _additional_properties(node: Any) -> list[Any]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node.get("additionalProperties"))
        for value in node.values():
            found += _additional_properties(value)
    elif isinstance(node, list):
        for value in node:
            found += _additional_properties(value)
    return found


def test_the_schema_names_the_parsers_keys_and_rules() -> None:
    team, worker = SCHEMA["$defs"]["team"], SCHEMA["$defs"]["workerGroup"]
    assert tuple(SCHEMA["properties"]) == spec.TOP_KEYS and SCHEMA["required"] == ["team"]
    assert tuple(team["properties"]) == spec.TEAM_KEYS and team["required"] == ["workers"]
    assert tuple(worker["properties"]) == spec.GROUP_KEYS and worker["required"] == ["cli", "count"]
    assert tuple(worker["properties"]["cli"]["enum"]) == FLEET_CLIS
    assert worker["properties"]["count"]["maximum"] == spec.MAX_TEAM_WORKERS == 20
    assert worker["properties"]["role"]["default"] == spec.DEFAULT_ROLE
    assert worker["properties"]["role"]["pattern"] == f"^{spec.ROLE_NAME.pattern}$"
    assert worker["properties"]["env"]["propertyNames"]["pattern"] == f"^{spec.ENV_NAME.pattern}$"
    # every object with fixed keys allows no others; the two maps (teams, env) type their values
    assert all(extra is False or isinstance(extra, dict) for extra in _additional_properties(SCHEMA))
    assert [extra for extra in _additional_properties(SCHEMA) if extra is not False] == [
        {"$ref": "#/$defs/team"}, {"type": "string"}]


@pytest.mark.parametrize("name", ["a", "a-b", "a1-b2-c3", "a" * 30, "A", "a--b", "-a", "a-", "a_b", "a" * 31, ""])
def test_the_schemas_team_names_are_the_parsers(name: str) -> None:
    names = SCHEMA["properties"]["team"]["propertyNames"]
    schema_ok = re.search(names["pattern"], name) is not None and len(name) <= names["maxLength"]
    text = f"[team.{json.dumps(name)}]\n{group(team=json.dumps(name))}"
    assert schema_ok == isinstance(parse_fleet(text, PATH), Success)
