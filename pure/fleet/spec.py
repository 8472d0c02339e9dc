"""The fleet file (``panefleet.toml``, docs/fleet.md): what it declares and its parser.

:func:`parse_fleet` turns the text of a fleet file into a :class:`FleetFile` or the first problem in
it (in file order) as a :class:`FleetFileProblem` naming the file, the line and the key. It reads
nothing: the file's path only names it in messages and anchors a relative ``cwd``. Values are
carried exactly as written (no trimming, no shell interpretation): a worker's arguments, environment,
model and task reach its launch as they stand in the file.

A key is named dotted, as TOML would (``team.alpha.workers[2].count``), a worker group by its number
in the team counting from 1 (``workers[1]`` is the team's first ``[[team.alpha.workers]]``). A key
part that is not a bare TOML key is quoted (``team.alpha.workers[1].env."A B"``).

Whether a role is known can depend on files of the team's project (a prompt file of its own, docs/scale-up.md,
"Roles"): the parser checks that a role is a role name, and :func:`role_problem` checks, given the
roles configured there, that it is known.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from attrs import frozen
from returns.result import Failure, Result, Success

from pure.hosts import check_destination
from pure.omx.launch import AGENTS, CLI_NAMES
from pure.omx.names import rewritten_team_name
from pure.omx.state import DEFAULT_MAX_WORKERS
from pure.team import SESSION_NAME_RE
from pure.tmux import is_pane_id

FLEET_CLIS: Final[tuple[str, ...]] = (*CLI_NAMES, "placeholder")
TOP_KEYS: Final = ("team",)
TEAM_KEYS: Final = ("tmux_session", "leader_pane", "tmux_socket", "cwd", "host", "workers")
GROUP_KEYS: Final = ("cli", "role", "count", "model", "args", "env", "worktree", "task")
DEFAULT_ROLE: Final = "executor"
#: the most workers a team may have (a scale-up refuses to pass its ``max_workers``, 20 by default)
MAX_TEAM_WORKERS: Final = DEFAULT_MAX_WORKERS
ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: a name a known role can have: a prompt file's ``<role>.md`` (``pure/omx/scale_up/plan.py`` ROLE_NAME)
#: or an ``agentModels``/``agentReasoning`` entry (``pure/omx/launch/agents.py``), both lower case
ROLE_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]*")
#: a role of the agent table with this suffix runs on the spark model: it is a known role too
LOW_SUFFIX: Final = "-low"
#: team init's session names without '.', which tmux rewrites to '_' (as it does ':')
SESSION_RULE: Final = "1-64 characters of A-Z, a-z, 0-9, '_' and '-'"


@frozen(kw_only=True)
class WorkerGroup:
    """``count`` workers of one CLI and role (one ``[[team.NAME.workers]]``)."""

    cli: str
    role: str = DEFAULT_ROLE
    count: int
    model: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # in file order
    worktree: bool = False
    task: str | None = None
    line: int = 0  # of its [[team.NAME.workers]] header; 0 when not read from a file


@frozen(kw_only=True)
class TeamSpec:
    """One ``[team.NAME]``. Parsed, exactly one of ``tmux_session`` and ``leader_pane`` is set: with
    neither in the file, ``tmux_session`` is the team's name. ``cwd`` is absolute and normalised."""

    name: str
    tmux_session: str | None = None
    leader_pane: str | None = None
    tmux_socket: str | None = None
    cwd: str
    host: str | None = None  # the machine it lives on (an OpenSSH destination, docs/hosts.md); None: this one
    groups: tuple[WorkerGroup, ...]
    line: int = 0  # of its [team.NAME] header (or where the team is first named); 0 when not read from a file

    @property
    def declared(self) -> int:
        """How many workers the team declares (the sum of its groups' counts)."""
        return sum(group.count for group in self.groups)


@frozen(kw_only=True)
class FleetFile:
    path: str
    teams: tuple[TeamSpec, ...]


@frozen(kw_only=True)
class FleetFileProblem:
    """What is wrong with a fleet file, where: ``key`` is dotted (module docstring), ``""`` when the
    problem belongs to no key (a TOML syntax error outside any table); ``line`` is None when unknown."""

    path: str
    line: int | None
    key: str
    message: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


# ------------------------------------------------------------------------------------------- parsing

Address = tuple[str | int, ...]  # ("team", "alpha", "workers", 0, "count"): list indices from 0


def parse_fleet(text: str, path: str) -> Result[FleetFile, FleetFileProblem]:
    """The fleet file ``text``, read from ``path`` (absolute), or its first problem in file order."""
    lines = _Lines(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return Failure(_syntax_problem(str(error), path, text, lines))
    found = _Found(path, lines)
    teams = _teams(data, posixpath.dirname(path), found)
    first = found.first()
    return Success(FleetFile(path=path, teams=teams)) if first is None else Failure(first)


def _syntax_problem(error: str, path: str, text: str, lines: _Lines) -> FleetFileProblem:
    at = re.search(r" \(at (?:line (\d+), column (\d+)|end of document)\)$", error)
    message = error[:at.start()] if at else error
    line = None
    if at and at.group(1):
        line = int(at.group(1))
        message += f" (column {at.group(2)})"
    elif at:
        line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
        message += " (at the end of the file)"
    key = "" if line is None else key_text(lines.key_at(line))
    return FleetFileProblem(path=path, line=line, key=key, message=f"not valid TOML: {message}")


class _Found:
    """The problems found so far, each at the line of its key."""

    def __init__(self, path: str, lines: _Lines) -> None:
        self.path, self.lines = path, lines
        self.problems: list[FleetFileProblem] = []
        self.absent: list[bool] = []

    def add(self, address: Address, message: str, *, absent: bool = False) -> None:
        """A problem with what is at ``address``; ``absent``: with something left out there."""
        problem = FleetFileProblem(path=self.path, line=self.lines.line_of(address), key=key_text(address),
                                   message=message)
        self.problems.append(problem)
        self.absent.append(absent)

    def first(self) -> FleetFileProblem | None:
        """The problem that comes first in the file; one with something left out (placed at its table's
        line: a misspelt key would come after it) after all those with something written."""
        ranked = sorted(zip(self.absent, self.problems, strict=True),
                        key=lambda pair: (pair[0], pair[1].line if pair[1].line is not None else float("inf")))
        return ranked[0][1] if ranked else None

    def unknown(self, address: Address, known: Sequence[str], what: str) -> None:
        name = str(address[-1])
        self.add(address, f"{what} has no key {name!r}{_did_you_mean(name, known)}; its keys: {', '.join(known)}")

    def typed(self, address: Address, value: object, kind: type, expected: str) -> bool:
        """Whether ``value`` is a ``kind`` (a bool is not an int); if not, the problem is added."""
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return True
        self.add(address, f"must be {expected}, not {_shown(value)}")
        return False


def _teams(data: Mapping[str, Any], folder: str, found: _Found) -> tuple[TeamSpec, ...]:
    for key in data:
        if key not in TOP_KEYS:
            found.unknown((key,), TOP_KEYS, "a fleet file")
    teams = data.get("team")
    if teams is None or teams == {}:
        found.add(("team",), "no team: declare one with [team.NAME] and its [[team.NAME.workers]]", absent=True)
        return ()
    if not found.typed(("team",), teams, dict, "a table of teams ([team.NAME])"):
        return ()
    specs = [_team(name, value, folder, found) for name, value in teams.items()]
    return tuple(spec for spec in specs if spec is not None)


def _team(name: str, value: object, folder: str, found: _Found) -> TeamSpec | None:
    at: Address = ("team", name)
    problem = rewritten_team_name(name)
    if problem is not None:
        found.add(at, problem)
    if not isinstance(value, dict):
        found.add(at, f"must be a table ([{key_text(at)}]), not {_shown(value)}")
        return None
    ok = problem is None
    for key in value:
        if key not in TEAM_KEYS:
            found.unknown((*at, key), TEAM_KEYS, "a team")
            ok = False
    texts: dict[str, str | None] = {}
    for key in ("tmux_session", "leader_pane", "tmux_socket", "cwd", "host"):
        texts[key] = _text(found, (*at, key), value.get(key))
        ok = ok and (key not in value or texts[key] is not None)
    session, leader, socket, cwd = texts["tmux_session"], texts["leader_pane"], texts["tmux_socket"], texts["cwd"]
    host = texts["host"]
    rules = (
        (session, "tmux_session", lambda s: SESSION_NAME_RE.fullmatch(s) is not None and "." not in s,
         f"must be a tmux session name: {SESSION_RULE}"),
        (leader, "leader_pane", is_pane_id, "must be a tmux pane id like %3 (`tmux display -p '#{pane_id}'`)"),
        (socket, "tmux_socket", lambda s: s != "" and "/" not in s and "\0" not in s,
         "must be the name of a tmux server's socket (`tmux -L NAME`): not empty, no '/'"),
        (cwd, "cwd", lambda s: s != "" and not s.startswith("~"),
         "must be a folder, absolute or relative to this file's folder ('~' is not expanded)"),
        (host, "host", lambda s: isinstance(check_destination(s), Success),
         "must be an OpenSSH destination: [user@]host or a ~/.ssh/config alias"),
    )
    for text, key, rule, message in rules:
        if text is not None and not rule(text):
            found.add((*at, key), f"{message}, not {_shown(text)}")
            ok = False
    if session is not None and leader is not None:
        found.add((*at, "leader_pane"), "tmux_session and leader_pane exclude each other: tmux_session names the "
                                        "session made for the team, leader_pane an existing pane it joins")
        ok = False
    if host is not None and ok and (cwd is None or not cwd.startswith("/")):
        found.add((*at, "cwd"), "a team on a host needs cwd: its folder there, absolute", absent=cwd is None)
        ok = False
    groups = _groups(at, value.get("workers"), found)
    if not ok or groups is None:
        return None
    return TeamSpec(name=name, tmux_session=session if session is not None or leader is not None else name,
                    leader_pane=leader, tmux_socket=socket,
                    cwd=posixpath.normpath(posixpath.join(folder, cwd if cwd is not None else ".")), host=host,
                    groups=groups, line=found.lines.line_of(at) or 0)


def _groups(team: Address, value: object, found: _Found) -> tuple[WorkerGroup, ...] | None:
    at = (*team, "workers")
    header = f"[[{key_text(at)}]]"
    if value is None:
        found.add(at, f"missing: a team needs at least one group of workers, {header}", absent=True)
        return None
    if not (isinstance(value, list) and all(isinstance(g, dict) for g in value)):
        found.add(at, f"must be an array of tables ({header}), not {_shown(value)}")
        return None
    if not value:
        found.add(at, f"must have at least one group of workers ({header})")
        return None
    parsed = [_group((*at, index), group, found) for index, group in enumerate(value)]
    groups = [group for group in parsed if group is not None]
    if len(groups) < len(parsed):
        return None
    seen: dict[tuple[str, str], int] = {}
    for index, group in enumerate(groups):
        first = seen.setdefault((group.cli, group.role), index)
        if first != index:
            found.add((*at, index), f"has the cli and role of {key_text((*at, first))} ({group.cli}, {group.role}): "
                                    "a team's groups must differ in cli or role; merge their counts")
    declared = sum(group.count for group in groups)
    if declared < 1:
        found.add(team, "declares no worker: a team needs at least 1 (`panefleet destroy` stops a team)")
    elif declared > MAX_TEAM_WORKERS:
        found.add(team, f"declares {declared} workers, more than the {MAX_TEAM_WORKERS} a team may have")
    return tuple(groups) if len(seen) == len(groups) and 1 <= declared <= MAX_TEAM_WORKERS else None


def _launched_as_given(at: Address, cli: str | None, model: str | None, args: object, found: _Found) -> None:
    """Refuse what a Claude or Gemini worker would never get: oh-my-codex's worker launch gives them argv of
    their own (pure/omx/launch/process.py ``_translate_for_cli``; Gemini keeps a Gemini model only), so
    ``args`` and such a ``model`` would be dropped without a word."""
    if cli not in ("claude", "gemini"):
        return
    name = {"claude": "Claude Code", "gemini": "Gemini CLI"}[cli]
    if isinstance(args, list) and args:
        found.add((*at, "args"), f"{name} workers are launched with arguments of their own (docs/launch-policy.md), so "
                                 f"these would be dropped; set what they ask for in the CLI's settings file instead")
    if model is not None and (cli == "claude" or "gemini" not in model.lower()):
        what = "no --model" if cli == "claude" else "only a Gemini model (one whose name holds 'gemini')"
        found.add((*at, "model"), f"{name} workers are launched with {what} (docs/launch-policy.md), so "
                                  f"{_shown(model)} would be dropped; leave it out, or set the model in the CLI's "
                                  "settings")


def _group(at: Address, value: dict[str, Any], found: _Found) -> WorkerGroup | None:
    before = len(found.problems)
    for key in value:
        if key not in GROUP_KEYS:
            found.unknown((*at, key), GROUP_KEYS, "a group of workers")
    cli = _text(found, (*at, "cli"), value.get("cli"))
    if "cli" not in value:
        found.add((*at, "cli"), f"missing: the workers' CLI, one of: {', '.join(FLEET_CLIS)}", absent=True)
    elif cli is not None and cli not in FLEET_CLIS:
        found.add((*at, "cli"), f"{_shown(cli)} is not a worker CLI{_did_you_mean(cli, FLEET_CLIS)}; "
                                f"one of: {', '.join(FLEET_CLIS)}")
    role = _text(found, (*at, "role"), value.get("role", DEFAULT_ROLE))
    if role is not None and ROLE_NAME.fullmatch(role) is None:
        found.add((*at, "role"), f"{_shown(role)} is not a role name (a-z, 0-9, '-' and '_', starting with a "
                                 f"letter or digit){_did_you_mean(role, sorted(AGENTS), 3)}")
    count = value.get("count")
    if count is None:
        found.add((*at, "count"), "missing: how many workers of this group the team has (0 or more)", absent=True)
    elif found.typed((*at, "count"), count, int, "an integer") and count < 0:
        found.add((*at, "count"), f"must be 0 or more, not {count}")
    model = _text(found, (*at, "model"), value.get("model"))
    if model == "":
        found.add((*at, "model"), "must not be empty (leave it out for the role's default model)")
    args = value.get("args", [])
    if found.typed((*at, "args"), args, list, "an array of strings"):
        for number, arg in enumerate(args, 1):
            if not isinstance(arg, str):
                found.add((*at, "args"), f"must be an array of strings; its item {number} is {_shown(arg)}")
    _launched_as_given(at, cli, model, args, found)
    env = value.get("env", {})
    if found.typed((*at, "env"), env, dict, "a table of environment variables (NAME = \"value\")"):
        for name, text in env.items():
            if ENV_NAME.fullmatch(name) is None:
                found.add((*at, "env", name), "is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
            _text(found, (*at, "env", name), text)
    worktree = value.get("worktree", False)
    found.typed((*at, "worktree"), worktree, bool, "true or false")
    task = _text(found, (*at, "task"), value.get("task"))
    if task is not None and task.strip() == "":
        found.add((*at, "task"), "must not be blank (leave it out for a worker without a task of its own)")
    if len(found.problems) > before or cli is None or role is None or not isinstance(count, int):
        return None
    return WorkerGroup(cli=cli, role=role, count=count, model=model, args=tuple(args), env=tuple(env.items()),
                       worktree=worktree, task=task, line=found.lines.line_of(at) or 0)


def _text(found: _Found, at: Address, value: object) -> str | None:
    """``value`` when it is a string; None if not: a key left out (None), or a problem."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    found.typed(at, value, str, "a string")
    return None


def role_problem(fleet: FleetFile, configured: Iterable[str] = ()) -> FleetFileProblem | None:
    """The first group whose role is not known: not a role of the agent table (or one with ``-low``), nor
    one of ``configured`` (the roles of the team's project: prompt files, ``.omx-config.json``;
    ``pure/omx/task_input.py`` ``configured_roles`` reads them). Its line is the group's."""
    known = {*AGENTS, *configured}
    for team in fleet.teams:
        for index, group in enumerate(team.groups):
            role = group.role
            if role in known or (role.endswith(LOW_SUFFIX) and role.removesuffix(LOW_SUFFIX) in AGENTS):
                continue
            return FleetFileProblem(
                path=fleet.path, line=group.line or None, key=key_text(("team", team.name, "workers", index, "role")),
                message=f"{_shown(role)} is not a known role{_did_you_mean(role, sorted(known), 3)}; a role of your "
                        "own needs its prompt file .codex/prompts/<role>.md in the team's folder")
    return None


# --------------------------------------------------------------------------------------------- JSON


def fleet_as_json(fleet: FleetFile) -> dict[str, Any]:
    """The parsed fleet as plain JSON data: every key always present (null when not set), the
    environment as ``[name, value]`` pairs in file order, so that sorting keys loses nothing."""
    return {
        "path": fleet.path,
        "teams": [
            {
                "name": team.name, "line": team.line, "tmuxSession": team.tmux_session,
                "leaderPane": team.leader_pane, "tmuxSocket": team.tmux_socket, "cwd": team.cwd, "host": team.host,
                "declared": team.declared,
                "groups": [group_as_json(g) for g in team.groups],
            }
            for team in fleet.teams
        ],
    }


def group_as_json(group: WorkerGroup) -> dict[str, Any]:
    """One group as plain JSON data (as in :func:`fleet_as_json`)."""
    return {"cli": group.cli, "role": group.role, "count": group.count, "model": group.model, "args": list(group.args),
            "env": [[name, value] for name, value in group.env], "worktree": group.worktree, "task": group.task,
            "line": group.line}


# ------------------------------------------------------------------------------------------ wording

_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")


def key_text(address: Address) -> str:
    """``("team", "alpha", "workers", 0, "count")`` → ``team.alpha.workers[1].count``."""
    text = ""
    for part in address:
        if isinstance(part, int):
            text += f"[{part + 1}]"
        else:
            shown = part if _BARE_KEY.fullmatch(part) else json.dumps(part, ensure_ascii=False)
            text += f".{shown}" if text else shown
    return text


def _did_you_mean(word: str, known: Sequence[str], n: int = 1) -> str:
    close = difflib.get_close_matches(word, known, n=n)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def _shown(value: object) -> str:
    """A value as a message names it: its TOML type and, when short, the value."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if len(value) <= 60 else "a long string"
    if isinstance(value, int | float):
        return f"the {'integer' if isinstance(value, int) else 'float'} {value}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"  # date, time, datetime


# ------------------------------------------------------------------------------------- line locator

_PART: Final = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_PATH: Final = rf"{_PART}(?:[ \t]*\.[ \t]*{_PART})*"
_HEADER: Final = re.compile(rf"[ \t]*(\[\[?)[ \t]*({_PATH})[ \t]*\]\]?[ \t]*(?:#.*)?")
_KEY: Final = re.compile(rf"[ \t]*({_PATH})[ \t]*=")
_STRING: Final = re.compile(r""""(?:[^"\\]|\\.)*"?|'[^']*'?""")


class _Lines:
    """Where each table header and key of a TOML text is: tomllib gives no lines. A line scan that
    knows headers (``[a.b]``, the N-th ``[[a.b]]``), ``key =`` and dotted keys, and skips what is
    inside strings and multi-line arrays; works on text tomllib rejects too."""

    def __init__(self, text: str) -> None:
        self.spans: list[tuple[int, int, Address, bool]] = []  # first line, last line, address, is a header
        arrays: dict[Address, int] = {}  # array-of-tables address → how many elements so far
        table: Address = ()
        depth, quote = 0, ""  # open brackets of a value; the """ or ''' of an open multi-line string
        for number, line in enumerate(text.split("\n"), 1):
            rest = line.rstrip("\r")
            if depth == 0 and not quote:
                header, key = _HEADER.fullmatch(rest), _KEY.match(rest)
                if header:
                    parts = _key_parts(header.group(2))
                    if header.group(1) == "[[":
                        base = (*self._canonical(parts[:-1], arrays), parts[-1])
                        arrays[base] = arrays.get(base, 0) + 1
                        table = (*base, arrays[base] - 1)
                    else:
                        table = self._canonical(parts, arrays)
                    self.spans.append((number, number, table, True))
                    continue
                if key:
                    self.spans.append((number, number, (*table, *_key_parts(key.group(1))), False))
                    rest = rest[key.end():]
            was_open = depth > 0 or bool(quote)
            depth, quote = _value_state(rest, depth, quote)
            if was_open and self.spans and not self.spans[-1][3]:
                first, _, address, _ = self.spans[-1]
                self.spans[-1] = (first, number, address, False)

    @staticmethod
    def _canonical(parts: tuple[str, ...], arrays: Mapping[Address, int]) -> Address:
        """A table path with the current element of each array of tables on it."""
        address: Address = ()
        for part in parts:
            address = (*address, part)
            if address in arrays:
                address = (*address, arrays[address] - 1)
        return address

    def line_of(self, address: Address) -> int | None:
        """The first line that names ``address`` or something under it (a table made implicitly by a
        header below it); failing that, the same for its enclosing table or key, and so on (a key left
        out: its table's header; a value inside an inline table: the line of the table's key)."""
        for end in range(len(address), 0, -1):
            lines = [first for first, _, at, _ in self.spans if at[:end] == address[:end]]
            if lines:
                return min(lines)
        return None

    def key_at(self, number: int) -> Address:
        """The header or key (with its whole value) on line ``number``, else the table it is in."""
        named = [at for first, last, at, _ in self.spans if first <= number <= last]
        if named:
            return named[-1]
        tables = [at for first, _, at, header in self.spans if header and first < number]
        return tables[-1] if tables else ()


def _key_parts(path: str) -> tuple[str, ...]:
    return tuple(_unquote(part) for part in re.findall(_PART, path))


def _unquote(part: str) -> str:
    if part[0] == "'":
        return part[1:-1]
    if part[0] == '"':
        try:
            return str(tomllib.loads(f"k = {part}")["k"])
        except tomllib.TOMLDecodeError:
            return part[1:-1]
    return part


def _value_state(text: str, depth: int, quote: str) -> tuple[int, str]:
    """After ``text`` (a value or its continuation): how many brackets are open, and the delimiter
    of a multi-line string left open ("" when none). Strings and comments do not count."""
    at = 0
    while at < len(text):
        if quote:
            end = text.find(quote, at)
            if end < 0:
                return depth, quote
            at, quote = end + 3, ""
        elif text.startswith(('"""', "'''"), at):
            quote, at = text[at:at + 3], at + 3
        elif text[at] in "\"'":
            match = _STRING.match(text, at)
            at = match.end() if match else len(text)
        elif text[at] == "#":
            break
        else:
            depth += (text[at] in "[{") - (text[at] in "]}")
            depth = max(depth, 0)
            at += 1
    return depth, quote

