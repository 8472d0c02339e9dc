"""What a failure means to a person: a sentence and the next step, made from the failure's stable code.

The planner answers in oh-my-codex's words (``Team alpha not found``) or with a stable code and its
details (``respawn_worker_not_found:worker-99``); ports and golden files depend on them, so they stay
as they are, and the code is kept in JSON as ``error_code``. A person reads the sentence instead
(``error`` in JSON, the error line in text). ``RULES`` is the one table of these sentences; a code no
rule knows still gets a readable sentence (``fallback``), and tests/core/test_error_texts.py checks
that every failure the suite reaches through the CLI has a rule of its own.

The shell may look (read only) at what a sentence names: the workers or tasks a team has, whether the
tmux server is running. Nothing here changes anything.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

CODE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
BARE_CODE = re.compile(rf"{CODE.pattern}(?::\S*)*")  # a code with details and no words, as people should never read


@frozen
class Scene:
    """Where the failure happened: the command and what it was run on."""

    command: str = ""                    # e.g. "team scale-up"
    team: str | None = None
    cwd: str | None = None
    socket: str | None = None            # the tmux server's -L name (None: the default server)
    task_id: str | None = None
    worker: str | None = None
    env: Mapping[str, str] = {}
    searched: tuple[str, ...] = ()       # the folders the team was looked for in (shell/cli/team_home.py)
    ours: bool = False                   # the team's record says panefleet made it
    answer: Mapping[str, Any] = {}       # the whole JSON answer, for the facts it carries

    def team_dir(self) -> Path | None:
        if self.team is None or self.cwd is None:
            return None
        from pure.omx.state import resolve_state_root

        return Path(resolve_state_root(self.cwd, self.env)) / "team" / self.team

    def workers(self) -> list[str]:
        """The team's workers by name, as its config records them (empty when it cannot be read)."""
        from shell.cli.complete_names import worker_names

        where = self.team_dir()
        return worker_names(where.parent, where.name) if where is not None else []

    def tasks(self) -> list[str]:
        """The team's task ids, in number order."""
        where = self.team_dir()
        try:
            names = os.listdir(where / "tasks") if where is not None else []
        except OSError:
            return []
        ids = [n[len("task-"):-len(".json")] for n in names if n.startswith("task-") and n.endswith(".json")]
        return sorted(ids, key=lambda i: (len(i), i))

    def task(self) -> dict[str, Any]:
        """The task the command named, as its file records it now (empty when it cannot be read)."""
        where = self.team_dir()
        if where is None or self.task_id is None:
            return {}
        try:
            task = json.loads((where / "tasks" / f"task-{self.task_id}.json").read_text())
        except (OSError, ValueError):
            return {}
        return task if isinstance(task, dict) else {}

    def server(self) -> str:
        return f"the tmux server `tmux -L {self.socket}`" if self.socket else "the default tmux server"

    def server_running(self) -> bool | None:
        """Whether a tmux server listens on the socket (None: cannot tell)."""
        base = self.env.get("TMUX_TMPDIR") or "/tmp"
        path = Path(base) / f"tmux-{os.getuid()}" / (self.socket or "default")
        try:
            import socket as sockets

            with sockets.socket(sockets.AF_UNIX) as probe:
                probe.settimeout(1.0)
                probe.connect(str(path))
            return True
        except (FileNotFoundError, ConnectionRefusedError):  # no socket, or nobody listening on it
            return False
        except OSError:
            return None


@frozen
class Explained:
    code: str        # stable: ``error_code`` in JSON
    text: str        # a sentence and the next step
    known: bool      # made by a rule of RULES (False: the fallback)


Sentence = Callable[[re.Match[str], Scene], str]


def _listed(names: list[str], what: str) -> str:
    if not names:
        return f"it has no {what}"
    return f"its {what}: {', '.join(names)}"


def _team(scene: Scene, match: re.Match[str] | None = None, group: str = "team") -> str:
    found = match.groupdict().get(group) if match is not None else None
    return found or scene.team or "TEAM"


def _status_hint(scene: Scene) -> str:
    return f"`panefleet team status {_team(scene)}` shows each worker's pane and its proof"




def _debt_hint(scene: Scene) -> str:
    team = _team(scene)
    return f"see `panefleet team debt show {team}`, retry with `panefleet team debt reconcile {team}`"


def _proof_reason(reason: str, scene: Scene) -> str:
    """A pane proof's verdict code in words (pure/tmux/owned.py)."""
    if reason == "query_failed":
        running = scene.server_running()
        if running is False:
            where = f"socket {scene.socket}" if scene.socket else "the default socket"
            return f"no tmux server is running on {where} (start one, or pass the team's with --tmux-socket NAME)"
        return f"tmux could not be asked about it on {scene.server()} (is --tmux-socket the team's server?)"
    return {
        "absent": "no such pane exists on " + scene.server(),
        "dead": "its process has exited (the pane is dead)",
        "malformed": "tmux answered a pane table panefleet cannot read",
        "timed_out": "tmux did not answer in time",
        "invalid_pane_id": "the team records no pane id there",
    }.get(reason, f"its proof failed ({reason})")


def _not_found(match: re.Match[str], scene: Scene) -> str:
    team = match["team"]
    where = scene.team_dir()
    folders = ", ".join(scene.searched) if scene.searched else str(where.parent) if where is not None else ""
    place = f" (looked in {folders})" if folders else ""
    return (f"Team {team} was not found{place}. Run panefleet in the team's project (or a folder inside it), or "
            f"pass --cwd DIR; `panefleet list` shows every team panefleet can find; to make it: "
            f"`panefleet team init {team} --new-session`.")


def _scaling_off(scene: Scene) -> str:
    if scene.ours:  # panefleet's own team, with the variable set to what does not enable it
        return (f"Scaling is turned off by OMX_TEAM_SCALING_ENABLED={scene.env.get('OMX_TEAM_SCALING_ENABLED', '')}: "
                "a team panefleet made scales without the variable; unset it, or set it to 1.")
    return ("Scaling is turned off for a team oh-my-codex made (or one without panefleet's record, panefleet.json), "
            "as oh-my-codex has it by default: set OMX_TEAM_SCALING_ENABLED=1, e.g. "
            f"`OMX_TEAM_SCALING_ENABLED=1 panefleet {scene.command or 'team scale-up'} …`. A team panefleet made "
            "scales without it.")


def _worker_missing(match: re.Match[str], scene: Scene) -> str:
    worker = match.groupdict().get("worker") or scene.worker or "that worker"
    return (f"Team {_team(scene, match)} has no worker {worker}; {_listed(scene.workers(), 'workers')}.")


def _logs_worker_missing(match: re.Match[str], scene: Scene) -> str:
    saved = [str(w) for w in scene.answer.get("transcripts") or []]
    workers = [str(w) for w in scene.answer.get("workers") or []] or scene.workers()
    return (f"Team {_team(scene, match)} has no worker {match['worker']} and no transcript of one; "
            f"{_listed(workers, 'workers')}; {_listed(saved, 'saved transcripts')}.")


def _claim_conflict(_match: re.Match[str], scene: Scene) -> str:
    task = f"Task {scene.task_id}" if scene.task_id else "The task"
    found = scene.task()
    raw_claim = found.get("claim")
    claim: dict[str, Any] = raw_claim if isinstance(raw_claim, dict) else {}
    holder, until = found.get("owner") or claim.get("owner"), claim.get("leased_until")
    if holder:
        lease = f" until {until}" if until else ""
        return (f"{task} is already claimed by {holder}{lease}; claim it after the lease lapses, or from "
                f"{holder}.")
    return (f"{task} changed or is held by another claim right now; read it again (its version) and "
            "retry.")


def _task_missing(_match: re.Match[str], scene: Scene) -> str:
    task = scene.task_id or "that task"
    return f"Team {_team(scene)} has no task {task}; {_listed(scene.tasks(), 'tasks')}."


def _split_target(match: re.Match[str], scene: Scene) -> str:
    pane, rest = match["pane"] or "(none)", match["rest"] or ""
    kind = match["kind"]
    if kind == "proof_unavailable":
        why = _proof_reason(rest, scene)
    elif kind == "pid_changed":
        pinned, _, found = rest.partition(":")
        why = f"it now runs process {found or 'unknown'}, not the pinned {pinned} (the pane id was reused)"
    elif kind == "pid_missing":
        why = "no process id was recorded for it"
    elif kind == "owner_changed":
        why = "its owner tag now names another team"
    elif kind == "owner_unavailable":
        why = "its owner tag could not be read"
    else:
        why = f"its process id could not be recorded ({rest})"
    return f"The team pane {pane} that scale-up would split is not proven the team's: {why}; {_status_hint(scene)}."


def _rule(pattern: str, code: str | None, sentence: Sentence) -> tuple[re.Pattern[str], str | None, Sentence]:
    """A rule: the failure message (fullmatch), its code (None: the message's own leading code), and
    the sentence."""
    return re.compile(pattern, re.S), code, sentence


def _fixed(text: str) -> Sentence:
    return lambda match, scene: text.format(*match.groups(), **{k: v or "" for k, v in match.groupdict().items()},
                                            team_=_team(scene, match), server=scene.server())


# why a stray pane was kept (pure/omx/strays.py ``pin_of``)
_STRAY_WHY = {"stray_pid_unrecorded": "no record pins its process",
              "stray_pid_changed": "it runs another process than the one recorded"}

# a scale-down that met earlier cleanup debt it cannot trust (pure/omx/debt.py)
_UNTOUCHED = ("nothing was done: scale-down settles earlier cleanup debt first and stopped there (no membership "
              "change, no status change, no tmux call).")
_SCALE_UP_PHASES: dict[str, str] = {
    "worker_start": "started a worker", "worker_preparation": "prepared a worker's files",
    "worker_materialization": "created a worker", "task_materialization": "wrote the new tasks",
    "dispatch": "handed a worker its task", "finalization": "committed the new membership",
}
_RESPAWN_STAGES: dict[str, str] = {
    "old_pane_not_removed": "the worker's old pane could not be removed",
    "old_pane_proof_unavailable": "the worker's old pane could not be proven gone or the team's",
    "owner_unavailable": "the team's owner tag could not be read",
    "pane_not_proven": "the new pane could not be proven",
    "tag_failed": "the new pane could not be tagged as the team's",
    "intent_not_written": "its intent could not be recorded (nothing was created)",
    "membership_persistence_failed": "the new pane could not be recorded in the team's membership",
    "delivery_failed": "the worker started, but its task was not confirmed",
}


# The one table of texts for people (first match wins). Patterns with a named group ``team`` take the
# team's name from the message; ``{team_}`` in a fixed text is the team in the message or the command.
RULES: tuple[tuple[re.Pattern[str], str | None, Sentence], ...] = (
    # --- teams and their state
    _rule(r"Team (?P<team>\S+) not found", "team_not_found", _not_found),
    _rule(r"Team (?P<team>\S+) already exists", "team_exists",
          _fixed("Team {team} already exists here; choose another name, or look at it with "
                 "`panefleet team status {team}`.")),
    _rule(r"invalid_team_name:(?P<name>.*?)(?: \((?P<rule>.*)\))?", None,
          lambda m, s: f"{m['name']!r} is not a team name panefleet can use: {m['rule'] or 'see `panefleet help team`'}."),
    _rule(r"team_config_missing:(?P<team>.*)", None,
          _fixed("Team {team}'s config.json is missing, though its folder exists; nothing was changed. "
                 "`panefleet team status {team}` shows what is left.")),
    _rule(r"(team_config_stale_generation|team_membership_stale_generation):(?P<team>[^:]*):(\d+):(\d+)", None,
          _fixed("Team {team} was changed by another run while this one worked (generation {2} became {3}); "
                 "nothing of this run was committed. Run the command again.")),
    _rule(r"team_state_malformed:(.*)", None,
          lambda m, s: f"The team's state files cannot be read ({m[1]}); nothing was changed. Repair or restore "
                       "the file named, then retry."),
    _rule(r"membership_transaction_barrier_required:(?P<team>.*)", None,
          _fixed("Team {team}'s membership changed without its lock (an internal order was broken); nothing was "
                 "committed. Retry the command.")),
    _rule(r"(Invalid membership transaction.*|Membership transaction .*|Cannot finalize .*)", "team_journal_invalid",
          lambda m, s: f"{m[1]}: the team's membership journal (.membership-txn.json) was not trusted and nothing "
                       "was changed; inspect it, then remove it by hand if it is not yours."),
    _rule(r"ENOENT: no such file or directory, (\w+) '(.*)'", "file_missing",
          lambda m, s: f"The file {m[2]} is missing (needed to {m[1]} it); nothing more was changed. "
                       + f"{_status_hint(s)}."),
    _rule(r"cannot (read|write|create) (\S+): (.*)", "state_io_failed",
          lambda m, s: f"panefleet could not {m[1]} {m[2]}: {m[3]}. Check that the path is writable (a changing "
                       "command needs write access to the team's state)."),
    _rule(r"(?:\w+Error): ([^:]+): (/[^;]*)(?:; (.*))?", "state_not_writable",
          lambda m, s: f"panefleet could not use {m[2]}: {m[1]}. {m[3][:1].upper() + m[3][1:] + '. ' if m[3] else ''}Nothing more was "
                       "changed; a changing command needs that path writable (commands that only read, like "
                       "`team status`, work without)."),
    _rule(r"working directory does not exist: (.*)", "cwd_missing",
          lambda m, s: f"The working directory {m[1]} does not exist; create it or pass another --cwd."),
    _rule(r"working directory is not a directory: (.*)", "cwd_not_a_directory",
          lambda m, s: f"The working directory {m[1]} is not a directory; pass a folder with --cwd."),
    # --- tmux and the leader pane
    _rule(r"tmux is not available", "tmux_unavailable",
          lambda m, s: "tmux was not found on PATH; install it (e.g. `apt-get install tmux`) and retry."),
    _rule(r"no leader pane: .*", "leader_pane_missing",
          lambda m, s: "No leader pane: run inside tmux (panefleet reads $TMUX_PANE), or pass --leader-pane %ID, or "
                       "--new-session to start one."),
    _rule(r"leader pane id must look like %N, got (.*)", "leader_pane_invalid",
          lambda m, s: f"The leader pane must be a tmux pane id like %3, not {m[1]}; `tmux display -p '#{{pane_id}}'` "
                       "prints the current pane's id."),
    _rule(r"choose one of --leader-pane and --new-session", "leader_pane_ambiguous",
          lambda m, s: "Give either --leader-pane or --new-session, not both."),
    _rule(r"invalid tmux session name: (.*)", "session_name_invalid",
          lambda m, s: f"{m[1]} cannot be a tmux session name (no '.' or ':'); choose another with --session."),
    _rule(r"Failed to create tmux session (\S+): (.*)", "session_create_failed",
          lambda m, s: f"tmux could not create the session {m[1]} on {s.server()}: {m[2]}."),
    _rule(r"failed to tag tmux pane (\S+): (.*)", "leader_tag_failed",
          lambda m, s: f"tmux would not set the team's owner tag on pane {m[1]}: {m[2]}; nothing else was written."),
    _rule(r"exact_pane_proof_unavailable:(?P<pane>[^:]+):(?P<reason>.*)", None,
          lambda m, s: f"Pane {m['pane']} cannot be proven: {_proof_reason(m['reason'], s)}. Nothing was changed."),
    _rule(r"pane_snapshot_unavailable:(?P<reason>[a-z_]+):?(?P<why>.*)", None,
          lambda m, s: f"tmux's pane table could not be read on {s.server()}: {m['why'] or m['reason']}. Nothing "
                       "was changed; check that the server is running and answers (`tmux -L NAME ls`)."),
    _rule(r"team_owner_unavailable:(?P<pane>[^:]+):(.*)", None,
          lambda m, s: f"The owner tag of pane {m['pane']} could not be read ({m[2]}); nothing was changed."),
    _rule(r"leader_pane_owned_by_other_team:(?P<pane>[^:]+):(.*)", None,
          lambda m, s: f"Pane {m['pane']} already leads another team ({m[2]}); a pane leads one team. Use another "
                       "pane or --new-session."),
    _rule(r"tmux pane identity changed: (\S+)", "leader_pane_changed",
          lambda m, s: f"Pane {m[1]} changed while it was being proven (its process was replaced); nothing was "
                       "changed. Retry."),
    # --- scale-up
    _rule(r"Dynamic scaling is disabled\. Set OMX_TEAM_SCALING_ENABLED=1 to enable\.", "scaling_disabled",
          lambda m, s: _scaling_off(s)),
    _rule(r"count must be a positive integer \(got (.*)\)", "count_invalid",
          lambda m, s: f"--count must be a positive whole number, not {m[1]}."),
    _rule(r"Cannot add (\d+) workers: would exceed max_workers \((\d+)\)(.*)", "max_workers_exceeded",
          lambda m, s: f"Adding {m[1]} workers would exceed the team's limit of {m[2]} workers{m[3].rstrip('.')}; "
                       "add fewer, or scale down first."),
    _rule(r"scale_up_split_target_(?P<kind>proof_unavailable|pid_changed|pid_missing|owner_changed|owner_unavailable"
          r"|pid_persistence_failed):(?P<pane>[^:]*):?(?P<rest>.*)", None, _split_target),
    _rule(r"scale_up_pane_geometry_unavailable:(.*)", None,
          lambda m, s: f"The size of the team's panes could not be read ({m[1]}), so no new pane was placed."),
    _rule(r"scale_up_no_room:(.*)", None,
          lambda m, s: f"There is no room for the new panes ({m[1]}); make the terminal larger or add fewer "
                       "workers."),
    _rule(r"worker_cli_not_ready:(?P<cli>\w+):(?P<worker>[^:]+):(?P<problem>.*?)(?:; fix: (?P<fix>.*))?", None,
          lambda m, s: f"{m['worker']} would run {m['cli']}, which cannot start here: {m['problem']}"
                       + (f"; to fix: {m['fix']}" if m["fix"] else "") + f". Nothing was changed (panefleet doctor "
                       f"--worker-cli {m['cli']} checks again)."),
    _rule(r"worker_cli_unavailable:(\w+):.*selected for (\S+) .*", None,
          lambda m, s: f"The worker CLI {m[1]} (for {m[2]}) is not installed or not on PATH; install it, or choose "
                       "another with --worker-cli (`--worker-cli placeholder` needs no agent CLI). Nothing was "
                       "changed."),
    _rule(r"placeholder_agent_unavailable:.*", None,
          lambda m, s: "The placeholder agent (shell/placeholder_agent.sh) is missing from this installation; "
                       "reinstall panefleet."),
    # a worker a run that did not finish left (pure/omx/strays.py ``Sweep.blocking``): scale-up and respawn
    _rule(r"(?:scale_up|respawn)_stray_pane_kept:(?P<worker>[^:]+):(?P<pane>[^:]+):(.*)", None,
          lambda m, s: f"A pane a run that did not finish left ({m['pane']}, running {m['worker']}'s startup "
                       f"script) could not be proven ours ({_STRAY_WHY.get(m[3].split(':')[0], 'its proof failed')}),"
                       f" so {m['worker']}'s records that pin it are kept and nothing was changed; {_debt_hint(s)}."),
    _rule(r"(?:scale_up|respawn)_stray_listing_unavailable:(?P<worker>.+)", None,
          lambda m, s: f"tmux could not list its panes, so panefleet cannot tell whether a pane a run that did "
                       f"not finish left for {m['worker']} still runs; its records are kept and nothing was "
                       f"changed. Retry once `tmux list-panes -a` answers; {_debt_hint(s)}."),
    _rule(r"scale_up_rollback_cleanup_debt:(.*)", None,
          lambda m, s: "Part of the rollback could not be proven safe: what is listed below was kept as cleanup "
                       f"debt, never killed; {_debt_hint(s)}."),
    _rule(r"scale_up_rollback_(membership_persistence|membership_verification|tracking_verification)_failed:?(.*)",
          None, lambda m, s: f"The rollback could not confirm the team's membership ({m[2]}); "
                             "the membership journal was kept and the next command converges it. "
                             + f"{_status_hint(s)}."),
    _rule(r"scale_up_(worker_start|worker_preparation|worker_materialization|task_materialization|dispatch"
          r"|finalization)_failed:?(.*)", None,
          lambda m, s: f"It failed while it {_SCALE_UP_PHASES[m[1]]}{(': ' + m[2]) if m[2] else ''}."),
    # --- scale-down and debt
    _rule(r"Worker (?P<worker>\S+) not found in team (?P<team>\S+)", "worker_not_found", _worker_missing),
    _rule(r"Not enough idle workers to remove: found (\d+), requested (\d+)\..*", "not_enough_idle_workers",
          lambda m, s: f"Only {m[1]} of the {m[2]} workers to remove are idle; pass --force to remove busy "
                       "workers too (their tasks go back to pending)."),
    _rule(r"No workers selected for removal", "no_workers_selected",
          lambda m, s: "No worker was chosen: pass --worker NAME (repeatable) or --count N."),
    _rule(r"Cannot remove all workers .*", "last_worker",
          lambda m, s: "A team keeps at least one worker, as oh-my-codex does; remove fewer."),
    _rule(r"canonical_scale_down_(config_missing|membership_changed|config_verification_failed"
          r"|task_verification_failed):?(.*)", None,
          lambda m, s: f"Scale-down stopped: the team's state changed under it ({m[1].replace('_', ' ')}{m[2] and ' ' + m[2]}); "
                       "the membership was restored. Run it again."),
    _rule(r"scale_down_task_reconciliation_failed:(.*)", None,
          lambda m, s: f"Scale-down could not hand the removed workers' tasks back ({m[1]}); the membership was "
                       "restored."),
    _rule(r"(scale_down_cleanup_debt|scale_down_pane_proof_unavailable):(.*)", None,
          lambda m, s: "The workers were removed from the team (membership is committed), but the panes listed "
                       f"below could not be proven the team's and are kept as cleanup debt, never killed; {_debt_hint(s)}."),
    _rule(r"scale_down_cleanup_debt_unreadable:?(.*)", None,
          lambda m, s: f"The team's cleanup debt record (.scale-down-cleanup-debt.json) is not valid JSON ({m[1].strip()}); "
                       f"{_UNTOUCHED} Inspect it with `panefleet team debt show {_team(s)}`, then repair or remove the "
                       "file by hand."),
    _rule(r"scale_down_cleanup_debt_malformed", None,
          lambda m, s: f"The team's cleanup debt record (.scale-down-cleanup-debt.json) fails validation; {_UNTOUCHED} "
                       f"Inspect it with `panefleet team debt show {_team(s)}`, then repair or remove the file by hand."),
    _rule(r"scale_down_cleanup_debt_membership_inconsistent", None,
          lambda m, s: "The cleanup debt record names removed workers of which only some are still members; "
                       f"{_UNTOUCHED} Inspect it with `panefleet team debt show {_team(s)}`."),
    _rule(r"(scale_down_cleanup_debt_unresolved|scale_down_cleanup_debt_resource_cleanup_failed):(.*)", None,
          lambda m, s: f"Earlier cleanup debt could not be settled ({m[2]}) and is kept; scale-down does nothing more "
                       f"until it is: {_debt_hint(s)}."),
    _rule(r"worktree_rollback_failed:(.*)", None,
          lambda m, s: f"A worktree this run made could not be removed ({m[1]}); remove it with `git worktree "
                       "remove` after checking it."),
    _rule(r"injected_scale_down_(interruption|failure):(.*)", None,
          lambda m, s: f"A test fault was injected ({m[2]}): the run stopped as a crash would."),
    # --- respawn
    _rule(r"respawn_worker_not_found:(?P<worker>.*)", None, _worker_missing),
    _rule(r"respawn_worker_alive:(?P<worker>[^:]*):?(.*)", None,
          lambda m, s: f"{m['worker']} is alive in its pane, so there is nothing to respawn; "
                       f"{_status_hint(s)}."),
    _rule(r"respawn_startup_script_missing:?(?P<worker>[^:]*):?(.*)", None,
          lambda m, s: f"{m['worker'] or 'The worker'} has no startup script left to restart it with; scale it down "
                       "and scale up a new worker instead."),
    _rule(r"respawn_(old_pane_not_removed|old_pane_proof_unavailable|owner_unavailable|pane_not_proven|tag_failed"
          r"|intent_not_written|membership_persistence_failed|delivery_failed):?(.*)", None,
          lambda m, s: f"Respawn stopped: {_RESPAWN_STAGES[m[1]]}{(' (' + m[2] + ')') if m[2] else ''}. "
                       + f"{_status_hint(s)}."),
    # --- send
    _rule(r"send_worker_not_found:(?P<worker>.*)", None, _worker_missing),
    _rule(r"send_message_empty", None, lambda m, s: "The message is empty: nothing was typed."),
    _rule(r"send_message_too_long:(?P<size>\d+):(?P<limit>\d+)", None,
          lambda m, s: f"The message is {m['size']} bytes, over the limit of {m['limit']} (64 KiB): nothing was "
                       "typed; put long text in a file and send its path."),
    _rule(r"send_message_control_character:(?P<char>U\+[0-9A-F]+):(?P<at>\d+)", None,
          lambda m, s: f"The message holds the control character {m['char']} at position {m['at']}: only newline "
                       "and tab are typed (an escape sequence would drive the agent's interface); nothing was typed."),
    _rule(r"send_role_not_found:(?P<role>[^:]*):(?P<roles>.*)", None,
          lambda m, s: f"No worker of team {_team(s, m)} has the role {m['role']}; "
                       + (f"roles: {m['roles'].replace(',', ', ')}." if m["roles"] else "no worker has a role.")),
    _rule(r"send_no_workers", None, lambda m, s: f"Team {_team(s, m)} has no workers to send to."),
    _rule(r"send_no_pane:(?P<worker>.*)", None,
          lambda m, s: f"{m['worker']} has no pane recorded, so nothing was typed anywhere; {_status_hint(s)}."),
    _rule(r"send_pane_unproven:(?P<worker>[^:]+):(?P<pane>[^:]+):(?P<reason>.*)", None,
          lambda m, s: f"{m['worker']}'s pane {m['pane']} is not proven its ({m['reason']}), so nothing was typed "
                       f"anywhere; {_status_hint(s)}."),
    _rule(r"send_mailbox_(malformed|unreadable|not_written):(?P<file>[^:]+):?(.*)", None,
          lambda m, s: f"The mailbox {m['file']} could not be {'read' if m[1] != 'not_written' else 'written'} "
                       f"({m[3]}), so the message was not typed; the file was left as it is."),
    # --- peek
    _rule(r"peek_worker_not_found:(?P<worker>.*)", None, _worker_missing),
    _rule(r"peek_pane_unproven:(?P<pane>[^:]+):(?P<reason>.*)", None,
          lambda m, s: f"{s.worker or 'The worker'}'s pane {m['pane']} is not proven its ({m['reason']}), so its "
                       f"screen was not read; {_status_hint(s)}."),
    _rule(r"peek_(no_pane|capture_failed|lines_out_of_range):?(.*)", None,
          lambda m, s: {"no_pane": f"{s.worker or 'The worker'} has no pane recorded; {_status_hint(s)}.",
                        "capture_failed": f"tmux could not read the pane's screen ({m[2]}).",
                        "lines_out_of_range": f"-n must be between 1 and 10000, not {m[2].split(' ')[0]}."}[m[1]]),
    # --- logs
    _rule(r"logs_worker_not_found:(?P<worker>.*)", None, _logs_worker_missing),
    _rule(r"logs_pane_unproven:(?P<pane>[^:]+):(?P<reason>.*)", None,
          lambda m, s: f"{s.worker or 'The worker'}'s pane {m['pane']} is not proven its ({m['reason']}) and no "
                       f"transcript of it was saved, so nothing was read; {_status_hint(s)}."),
    _rule(r"logs_(no_pane|capture_failed|lines_out_of_range|transcript_unreadable):?(.*)", None,
          lambda m, s: {"no_pane": f"{s.worker or 'The worker'} has no pane recorded and no transcript saved; "
                                   f"{_status_hint(s)}.",
                        "capture_failed": f"tmux could not read the pane's scrollback ({m[2]}).",
                        "lines_out_of_range": f"-n must be between 1 and 10000, not {m[2].split(' ')[0]}.",
                        "transcript_unreadable": f"The saved transcript could not be read ({m[2]})."}[m[1]]),
    _rule(r"Failed to create tmux pane for (\S+): (.*)", "pane_create_failed",
          lambda m, s: f"tmux could not create a pane for {m[1]}: {m[2]}."),
    # --- tasks
    _rule(r"task_not_found", None, _task_missing),
    _rule(r"claim_conflict", None, _claim_conflict),
    _rule(r"blocked_dependency", None,
          lambda m, s: "The task waits on unfinished tasks ("
                       + ", ".join(map(str, s.answer.get("dependencies") or ["?"])) + "); claim it once they are "
                       "completed."),
    _rule(r"worker_not_found", None, _worker_missing),
    _rule(r"already_terminal", None,
          lambda m, s: f"Task {s.task_id or ''} is already finished (completed or failed); it cannot be claimed "
                       "again."),
    _rule(r"Invalid task id: (.*)", "task_id_invalid",
          lambda m, s: f"{m[1]!r} is not a task id (task ids are numbers, e.g. 3)."),
    _rule(r"Invalid task status: (.*)", "task_status_invalid",
          lambda m, s: f"{m[1]!r} is not a task status (pending, blocked, in_progress, completed or failed)."),
    # --- locks and interrupts
    _rule(r"Timed out acquiring (scaling lock|team task lock|task claim lock) for (?:team )?([^:\s]+)(?:: (.*))?",
          "lock_timeout",
          lambda m, s: f"Another panefleet or oh-my-codex run holds the {m[1]} of {m[2]}"
                       f"{' (' + m[3] + ')' if m[3] else ''}; wait for it to finish and run the command again. "
                       f"`panefleet team status {_team(s)}` shows who holds it."),
    _rule(r"interrupted", "interrupted",
          lambda m, s: "Interrupted: the run stopped at a step boundary and undid what it had created."),
    # --- herdr (pure/herdr/parse.py ``VersionSkew``)
    _rule(r"herdr_version_skew: (.*)", None,
          lambda m, s: f"herdr's CLI and server are different versions: {m[1][0].lower()}{m[1][1:]}"),
)

def explain(message: str, scene: Scene) -> Explained:
    """The sentence for a failure message, by the first rule of ``RULES`` that matches it."""
    message = message.strip()
    for pattern, code, sentence in RULES:
        match = pattern.fullmatch(message)
        if match is not None:
            return Explained(code or message.split(":", 1)[0], sentence(match, scene), True)
    return fallback(message)


def fallback(message: str) -> Explained:
    """A message no rule knows: its code (when it has one) and the message in words."""
    head, _, detail = message.partition(":")
    if CODE.fullmatch(head):
        words = head.replace("_", " ")
        return Explained(head, f"{words[0].upper()}{words[1:]}{f' ({detail.strip()})' if detail else ''}.", False)
    return Explained("failed", message, False)


def is_sentence(text: str) -> bool:
    """Whether ``text`` reads as words: not a bare code with details, and at least three words."""
    text = text.strip()
    return bool(text) and BARE_CODE.fullmatch(text) is None and len(re.findall(r"[A-Za-z]{2,}", text)) >= 3


def scene_of(args: Any, env: Mapping[str, str], answer: Mapping[str, Any]) -> Scene:
    """The scene of a parsed command line (``cli.py``)."""
    from shell.cli.team_home import TeamHome, tmux_socket

    cwd = getattr(args, "cwd", None)
    home = getattr(args, "team_home", None)
    return Scene(command=" ".join(getattr(args, "command_path", ())), team=getattr(args, "team", None),
                 cwd=os.path.abspath(cwd) if isinstance(cwd, str) else None,
                 socket=tmux_socket(args, env),
                 searched=home.searched if isinstance(home, TeamHome) and not home.found else (),
                 ours=isinstance(home, TeamHome) and home.made_by_panefleet,
                 task_id=getattr(args, "task_id", None), worker=_one(getattr(args, "worker", None)), env=env,
                 answer=answer)


def _one(value: object) -> str | None:
    """A worker named on the command line (``--worker`` may be given several times: then None)."""
    if isinstance(value, list):
        return str(value[0]) if len(value) == 1 else None
    return value if isinstance(value, str) else None


def explained_answer(answer: dict[str, Any], scene: Scene) -> dict[str, Any]:
    """A failed JSON answer with ``error`` for people, ``error_code`` for programs and, when the
    planner's message said more than its code, that message as ``error_detail`` (in oh-my-codex's
    words, e.g. ``leader_pane_owned_by_other_team:%1:team:beta``). An answer that has an
    ``error_code`` already, or no error, is returned as it is."""
    if answer.get("ok") is not False or "error_code" in answer or not isinstance(answer.get("error"), str):
        return answer
    raw = answer["error"]
    found = explain(raw, scene)
    detail = {"error_detail": raw} if raw.strip() != found.code else {}
    return {**answer, "error": found.text, "error_code": found.code, **detail}
