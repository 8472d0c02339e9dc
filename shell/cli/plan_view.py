"""What a plan changes, in the words of the domain: one line per thing, derived from the journal of
a dry run (its steps and their observations: real reads, predicted changes) and the predicted result.

Every change step of the journal is attributed to exactly one *thing* — a worker, a pane, a tmux
session, a herdr workspace or run, the team's config, a task, the dispatch requests, the event log,
the cleanup-debt record, or else a file or a step of its own — so the list is complete: a change
that no rule below recognises still gets a line (``~ step …``) rather than being left out. Each
thing says whether it is added (``+``), changed (``~``), removed (``-``) or kept as debt (``!``), and
lists the journal steps (1-based) it is made of.

The rules read paths and tmux/herdr arguments the way ``pure/omx/state.py`` (team paths),
``pure/tmux/`` (pane proofs, owner tag) and ``pure/herdr/fleet/`` (herdr verbs) write them;
they only describe, and never decide anything.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import define, field

from pure import model as m
from pure import tmux as t
from pure.omx.startup_script import started_worker
from pure.omx.state import runtime_worker
from pure.program import is_mutation
from pure.tmux import facts

ACTIONS = {"add": "+", "change": "~", "remove": "-", "debt": "!"}
KIND_ORDER = ("worker", "session", "pane", "workspace", "run", "team", "config", "task", "dispatch", "events",
              "debt", "file", "step")
PANE_CREATING = ("split-window", "new-window", "new-session")
_WORKER_DIR = re.compile(r"^workers/([^/]+)(?:/|$)")
_TASK_FILE = re.compile(r"^tasks/task-(\d+)\.json$")


@define
class Change:
    action: str  # add | change | remove | debt
    kind: str
    subject: str
    detail: str = ""
    steps: list[int] = field(factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "kind": self.kind, "subject": self.subject, "detail": self.detail,
                "steps": list(self.steps)}

    @property
    def label(self) -> str:
        """The subject as a person reads it: ``pane %4``, ``run r1``; workers, files and tasks as they are."""
        prefix = {"pane": "pane", "session": "session", "workspace": "workspace", "run": "run", "team": "team"}
        word = prefix.get(self.kind)
        return f"{word} {self.subject}" if word and not self.subject.startswith(word + " ") else self.subject

    def line(self, width: int) -> str:
        text = f"{ACTIONS.get(self.action, '?')} {self.label:<{width}}"
        return (text + "  " + self.detail).rstrip() if self.detail else text.rstrip()


def _json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _new_pane_id(obs: m.Observation) -> str:
    """The pane a creation step answered ("" when it failed)."""
    return t.answered_pane(obs)[0] if isinstance(obs, m.Proc) and obs.exit_code == 0 else ""


def _target(args: Sequence[str]) -> str | None:
    for flag in ("-t", "--pane"):
        if flag in args[:-1]:
            return args[list(args).index(flag) + 1]
    return None


def _pane_rows(obs: m.Observation) -> dict[str, int | None]:
    """pane -> pid of a ``list-panes -a -F '#{pane_id}\\t#{pane_dead}\\t#{pane_pid}'`` answer."""
    rows: dict[str, int | None] = {}
    if not isinstance(obs, m.Proc) or obs.exit_code != 0:
        return rows
    for fields in facts.PANES.rows(obs.stdout):
        if len(fields) >= 3 and fields[0].startswith("%") and fields[1] in ("0", "1"):
            rows[fields[0]] = int(fields[2]) if fields[2].isdigit() else None
    return rows


def _under_any(path: str, folders: Sequence[str]) -> bool:
    """``path`` is one of ``folders`` or lies under one of them."""
    return any(path == f or path.startswith(f + "/") for f in folders)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class _Builder:
    def __init__(self, operation: str, request: object, journal: Sequence[m.Entry], result: Mapping[str, Any],
                 done: m.Done | None) -> None:
        self.operation = operation
        self.request = request
        self.journal = journal
        self.result = result
        self.done = done
        self.things: dict[tuple[str, str], Change] = {}
        self.claimed: set[int] = set()
        self.cwd = str(getattr(request, "cwd", "") or "")
        self.team = str(getattr(request, "team", "") or "")
        self.team_dir = self._team_dir()
        # what each file held before the plan changed it (its first read before the plan's first change
        # of that file or of a folder above it: a later read shows what the plan itself wrote), and the
        # files a listing showed before then; what the plan left is in its last writes
        self.first_read: dict[str, m.FileData] = {}
        self.listed: set[str] = set()
        changed: list[str] = []
        for entry in journal:
            step = entry.step
            if isinstance(step, m.ReadFile) and isinstance(entry.observation, m.FileData):
                if not _under_any(step.path, changed):
                    self.first_read.setdefault(step.path, entry.observation)
            elif isinstance(step, m.ListDir) and isinstance(entry.observation, m.Listing):
                if not _under_any(step.path, changed):
                    self.listed.update(posixpath.join(step.path, n) for n in entry.observation.names or ()
                                       if not _under_any(posixpath.join(step.path, n), changed))
            elif isinstance(step, (m.WriteFile, m.AppendFile, m.RemovePath)):  # a new folder changes no file
                changed.append(step.path)

    def _team_dir(self) -> str:
        if not self.team or not self.operation.startswith("team."):
            return ""
        from pure.omx import state as st

        env = getattr(self.request, "env", {}) or {}
        return st.TeamPaths(st.resolve_state_root(self.cwd, env), self.team).team_dir

    # ------------------------------------------------------------------------------- helpers
    def thing(self, kind: str, subject: str, action: str, detail: str = "") -> Change:
        key = (kind, subject)
        if key not in self.things:
            self.things[key] = Change(action=action, kind=kind, subject=subject, detail=detail)
        return self.things[key]

    def claim(self, index: int, change: Change) -> None:
        if index not in self.claimed:
            self.claimed.add(index)
            change.steps.append(index)

    def rel(self, path: str) -> str:
        for base in (self.team_dir, self.cwd):
            if base and (path == base or path.startswith(base + "/")):
                return posixpath.relpath(path, base)
        return path

    def in_team(self, path: str) -> str | None:
        if self.team_dir and (path == self.team_dir or path.startswith(self.team_dir + "/")):
            return posixpath.relpath(path, self.team_dir)
        return None

    def mutations(self) -> list[tuple[int, m.Entry]]:
        """The change steps, less the file and store changes observed to fail (a folder that cannot be
        written, ``shell/run/dryrun.py``): they change nothing, and the predicted result says why."""
        return [(i, e) for i, e in enumerate(self.journal, start=1) if is_mutation(e.step) and not (
            isinstance(e.step, (m.WriteFile, m.AppendFile, m.MakeDir, m.RemovePath, m.Store))
            and isinstance(e.observation, (m.Ack, m.JsonResult)) and not e.observation.ok)]

    # ----------------------------------------------------------------------------------- build
    def build(self) -> list[Change]:
        if self.operation.startswith("herdr."):
            self._herdr()
        else:
            self._tmux()
            self._files()
        self._generic()
        self._debt()
        ordered = sorted(self.things.values(), key=lambda c: (KIND_ORDER.index(c.kind) if c.kind in KIND_ORDER
                                                              else len(KIND_ORDER), c.steps[:1] or [0]))
        return ordered

    # ------------------------------------------------------------------------------------ tmux
    def _workers_by_pane(self) -> dict[str, dict[str, Any]]:
        """Workers of the team config the plan read first, by pane id."""
        config = _json(self.first_read[path].content) if (path := posixpath.join(self.team_dir, "config.json")) \
            in self.first_read else None
        workers = config.get("workers") if isinstance(config, dict) else None
        return {str(w.get("pane_id")): w for w in workers or [] if isinstance(w, dict) and w.get("pane_id")}

    def _tmux(self) -> None:
        added = {str(w.get("pane_id")): w for w in self.result.get("addedWorkers") or [] if isinstance(w, dict)}
        members = self._workers_by_pane()
        new_panes: dict[str, Change] = {}
        snapshot: dict[str, int | None] = {}
        owners: dict[str, str] = {}
        for index, entry in enumerate(self.journal, start=1):
            step, obs = entry.step, entry.observation
            if not isinstance(step, m.Run) or step.tool != "tmux":
                continue
            args = tuple(step.args)
            verb = args[0] if args else ""
            if verb == "list-panes" and args[-1:] and args[-1].startswith(facts.PANES.format):
                snapshot = _pane_rows(obs)
            elif verb == "show-option" and args[-1:] == (t.OWNER_OPTION,):
                pane = _target(args)
                if pane is not None and isinstance(obs, m.Proc) and obs.exit_code == 0:
                    owners[pane] = obs.stdout.strip()
            if not step.mutates:
                continue
            target = _target(args)
            if verb in PANE_CREATING:
                pane = _new_pane_id(obs)
                change = self._new_pane(index, args, pane, target, added)
                if pane:
                    new_panes[pane] = change
                self.claim(index, change)
            elif target in new_panes:
                owner = new_panes[target]
                if verb == "kill-pane":
                    owner.detail += "; its pane is removed again (rolled back)"
                self.claim(index, owner)
            elif verb == "kill-pane" and target is not None:
                self.claim(index, self._killed(target, snapshot.get(target), owners.get(target), members))
            elif verb == "set-option" and target is not None and args[-2:-1] == (t.OWNER_OPTION,):
                pid = snapshot.get(target)
                role = "leader pane" if self.operation == "team.init" else "pane"
                self.claim(index, self.thing("pane", target, "change",
                                             f"{role}: owner tag set to {args[-1]}"
                                             + (f" (pid {pid} pinned)" if pid else "")))
            elif target is not None:
                change = self.thing("pane", target, "change", "")
                what = {"send-keys": "keys typed", "set-option": "option set"}.get(verb, verb)
                if what not in change.detail:
                    change.detail = ", ".join(filter(None, [change.detail, what]))
                self.claim(index, change)

    def _new_pane(self, index: int, args: tuple[str, ...], pane: str, target: str | None,
                  added: Mapping[str, dict[str, Any]]) -> Change:
        verb = args[0]
        worker = added.get(pane)
        respawned = self.result.get("worker") if self.result.get("paneId") == pane else None
        script = next(filter(None, map(started_worker, args)), None)
        name = (worker or {}).get("name") or respawned or script
        if verb == "new-session":
            session = args[args.index("-s") + 1] if "-s" in args else "?"
            return self.thing("session", session, "add", "new tmux session; its first pane is the leader")
        where = {"split-window": f"split from {target}", "new-window": f"in a new window of session {target}"}[verb]
        if verb == "split-window":
            where += " (side by side)" if "-h" in args else " (below)"
        if not name:
            return self.thing("pane", pane or f"new pane (step {index})", "add", f"new pane {where}")
        bits = [f"new pane {where}"]
        info = worker or {}
        if info.get("worker_cli") or info.get("role"):
            bits.append(f"{info.get('worker_cli') or '?'} ({info.get('role') or '?'})")
        if info.get("worktree_path"):
            bits.append(f"worktree {self.rel(str(info['worktree_path']))}")
        elif info.get("working_dir") and str(info["working_dir"]) != self.cwd:
            bits.append(f"cwd {info['working_dir']}")
        if info.get("assigned_tasks"):
            bits.append("tasks " + ", ".join(map(str, info["assigned_tasks"])))
        if respawned:
            previous = self.result.get("previousPaneId")
            bits.append(f"replaces pane {previous}" if previous else "")
            return self.thing("worker", str(name), "change", ", ".join(b for b in bits if b))
        return self.thing("worker", str(name), "add", ", ".join(bits))

    def _killed(self, pane: str, pid: int | None, owner: str | None, members: Mapping[str, dict[str, Any]]) -> Change:
        member = members.get(pane)
        proof = []
        if pid is not None:
            pinned = member.get("pid") if member else None
            proof.append(f"pid {pid}" + (" as pinned" if pinned == pid else ""))
        if owner:
            proof.append(f"tagged {owner}")
        why = f" ({', '.join(proof)})" if proof else ""
        if member and member.get("name"):
            return self.thing("worker", str(member["name"]), "remove", f"pane {pane} killed after proof{why}")
        return self.thing("pane", pane, "remove", f"killed after proof{why}")

    # ----------------------------------------------------------------------------------- files
    def _files(self) -> None:
        commit = {"config.json", "manifest.v2.json", ".membership-task-transaction.json"}
        # the membership commit first, so that records that only guard it can be folded into it
        ordered = sorted(self.mutations(), key=lambda item: self.in_team(getattr(item[1].step, "path", "")) not in commit)
        for index, entry in ordered:
            step = entry.step
            path = getattr(step, "path", None)
            if not isinstance(path, str) or index in self.claimed:
                continue
            self.claim(index, self._file_thing(step, path))

    def _last_step(self, path: str) -> m.Step | None:
        for entry in reversed(self.journal):
            if is_mutation(entry.step) and getattr(entry.step, "path", None) == path:
                return entry.step
        return None

    def _existed(self, path: str) -> bool:
        read = self.first_read.get(path)
        return read is not None and read.content is not None

    def _debt_record(self, path: str) -> Change:
        existed, last = self._existed(path), self._last_step(path)
        if existed:
            if isinstance(last, m.RemovePath):
                return self.thing("debt", "cleanup debt", "change", "record removed: every debt pane is settled")
            return self.thing("debt", "cleanup debt", "change", "record updated (.scale-down-cleanup-debt.json)")
        if isinstance(last, m.RemovePath):  # the record only guarded the kills: written, then cleared
            return self.things.get(("config", "config.json")) or self.thing(
                "file", ".scale-down-cleanup-debt.json", "change", "written, then removed again (crash-safety record)")
        return self.thing("debt", "cleanup debt", "debt", "recorded in .scale-down-cleanup-debt.json "
                                                          "(see `panefleet team debt show`)")

    def _worker_name(self, rel: str, path: str) -> str | None:
        match = _WORKER_DIR.match(rel)
        if match:
            return match.group(1)
        runtime = runtime_worker(path)  # its startup script, its intent
        if runtime is not None:
            return runtime
        if "/worktrees/" in path:
            return path.split("/worktrees/", 1)[1].split("/")[0] or None
        return None

    def _file_thing(self, step: m.Step, path: str) -> Change:
        rel = self.in_team(path)
        if self.operation == "team.init" and rel is not None:
            return self.thing("team", self.team, "add", f"team state in {self.team_dir}")
        name = self._worker_name(rel or "", path)
        if name is not None and ("worker", name) in self.things:
            return self.things[("worker", name)]
        if name is not None and (rel is not None or "/worktrees/" in path):
            removing = isinstance(step, m.RemovePath)
            change = self.thing("worker", name, "remove" if removing else "change", "")
            if removing and not change.detail:
                change.detail = "worker files removed"
            elif not change.detail:
                change.detail = "worker files written"
            return change
        if rel in ("config.json", "manifest.v2.json", ".membership-task-transaction.json"):
            return self._config()
        if rel is not None and (task := _TASK_FILE.match(rel)):
            return self._task(task.group(1), path)
        if rel == "dispatch/requests.json":
            return self._dispatch(path)
        if rel is not None and rel.startswith("events/"):
            change = self.thing("events", "events.ndjson", "change", "")
            change.detail = f"{_plural(len(change.steps) + 1, 'event')} appended"
            return change
        if rel == ".scale-down-cleanup-debt.json":
            return self._debt_record(path)
        shown = self.rel(path)
        verb = {m.WriteFile: "written", m.AppendFile: "appended to", m.RemovePath: "removed",
                m.MakeDir: "created"}.get(type(step), "changed")
        before = self.first_read.get(path)
        action = "remove" if isinstance(step, m.RemovePath) else (
            "add" if isinstance(step, m.MakeDir) or (before is not None and before.content is None) else "change")
        change = self.thing("file", shown, action, verb)
        if isinstance(step, m.AppendFile):
            change.detail = f"{_plural(len(change.steps) + 1, 'line')} appended"
        return change

    def _last_write(self, path: str) -> str | None:
        for entry in reversed(self.journal):
            if isinstance(entry.step, m.WriteFile) and entry.step.path == path:
                return entry.step.content
        return None

    def _config(self) -> Change:
        change = self.thing("config", "config.json", "change", "")
        path = posixpath.join(self.team_dir, "config.json")
        read = self.first_read.get(path)
        before, after = _json(read.content if read else None), _json(self._last_write(path))
        if isinstance(before, dict) and isinstance(after, dict):
            bits = []
            if before.get("config_generation") != after.get("config_generation"):
                bits.append(f"generation {before.get('config_generation')} → {after.get('config_generation')}")
            old, new = len(before.get("workers") or []), len(after.get("workers") or [])
            if old != new:
                bits.append(f"{old} worker{'s' if old != 1 else ''} → {new}")
            if not bits:
                scalars = (str, int, float, bool, type(None))
                bits = [f"{key} {before.get(key)} → {after.get(key)}" for key in after
                        if isinstance(after.get(key), scalars) and before.get(key) != after.get(key)
                        and not key.endswith("_at")][:3]
            change.detail = ", ".join(bits) or "rewritten"
        elif isinstance(after, dict):
            change.detail = "written"
        return change

    def _task(self, number: str, path: str) -> Change:
        read = self.first_read.get(path)
        before = _json(read.content if read else None)
        after = None if isinstance(self._last_step(path), m.RemovePath) else _json(self._last_write(path))
        existed = read.content is not None if read is not None else path in self.listed
        if not existed:  # a task file this run creates
            if not isinstance(after, dict):
                return self.thing("task", f"task {number}", "add", "created, then removed again (rolled back)")
            subject, owner = after.get("subject"), after.get("owner")
            detail = f"created: {subject}" if subject else "created"
            return self.thing("task", f"task {number}", "add", detail + (f" (owner {owner})" if owner else ""))
        if not isinstance(after, dict):
            return self.thing("task", f"task {number}", "remove", "removed")
        if not isinstance(before, dict):  # it existed, but the plan did not read it before changing it
            return self.thing("task", f"task {number}", "change", "rewritten")
        bits = []
        old_owner, new_owner = before.get("owner"), after.get("owner")
        if before.get("claim") and not after.get("claim"):
            bits.append(f"released (owner {old_owner or 'none'} → {new_owner or 'none'})")
        elif after.get("claim") and not before.get("claim"):
            bits.append(f"claimed by {new_owner or (after.get('claim') or {}).get('owner') or '?'}")
        elif old_owner != new_owner:
            bits.append(f"owner {old_owner or 'none'} → {new_owner or 'none'}")
        if before.get("status") != after.get("status"):
            bits.append(f"status {before.get('status')} → {after.get('status')}")
        return self.thing("task", f"task {number}", "change", ", ".join(bits) or "rewritten")

    def _dispatch(self, path: str) -> Change:
        read = self.first_read.get(path)
        before, after = _json(read.content if read else None), _json(self._last_write(path))
        change = self.thing("dispatch", "dispatch/requests.json", "change", "rewritten")
        if isinstance(after, list):
            old = len(before) if isinstance(before, list) else 0
            change.detail = (f"{_plural(len(after) - old, 'dispatch request')} added" if len(after) > old
                             else f"{_plural(len(after), 'dispatch request')} (was {old})")
        return change

    # ----------------------------------------------------------------------------------- herdr
    def _herdr(self) -> None:
        outcomes = [o for o in self.result.get("outcomes") or [] if isinstance(o, dict)]
        causes = {str(o.get("paneId")): o for o in outcomes if o.get("kind") == "stale-released"}
        runs_by_pane = {str(o.get("paneId")): str(o.get("runId")) for o in outcomes if o.get("paneId")}
        run_id = getattr(self.request, "run_id", None)
        if self.result.get("paneId") and run_id:
            runs_by_pane.setdefault(str(self.result["paneId"]), str(run_id))
        created: dict[str, Change] = {}  # herdr id (workspace or pane) -> the thing that made it
        for index, entry in self.mutations():
            step, obs = entry.step, entry.observation
            if isinstance(step, m.Store):
                self.claim(index, self._herdr_store(step, created))
                continue
            if not isinstance(step, m.Run) or step.tool != "herdr":
                continue
            words = list(step.args)
            if words[:1] == ["--session"]:
                words = words[2:]
            verb = " ".join(words[:2])
            rest = words[2:]
            answer = _json(obs.stdout if isinstance(obs, m.Proc) else None)
            value = answer.get("result") if isinstance(answer, dict) else None
            value = value if isinstance(value, dict) else {}
            if verb == "workspace create":
                label = rest[rest.index("--label") + 1] if "--label" in rest else "?"
                ws = str((value.get("workspace") or {}).get("workspace_id") or label)
                change = self.thing("workspace", label, "add", "new herdr workspace")
                created[ws] = change
                root = (value.get("root_pane") or {}).get("pane_id")
                if root:
                    created[str(root)] = change
            elif verb in ("pane split", "tab create"):
                key = "pane" if verb == "pane split" else "root_pane"
                pane = str((value.get(key) or {}).get("pane_id") or f"step {index}")
                run = runs_by_pane.get(pane)
                source = _target(rest)
                change = self.thing("pane", pane, "add", (f"follower pane of run {run}" if run else "new pane")
                                    + (f", split from {source}" if source and source not in created else ""))
                created[pane] = change
            elif verb == "pane close":
                pane = rest[0] if rest else "?"
                if pane in created:
                    change = created[pane]
                    if "root shell closed" not in change.detail and change.kind == "workspace":
                        change.detail += " (its root shell closed)"
                else:
                    why = causes.get(pane, {})
                    cause = str(why.get("cause") or "")
                    text = {"settled": "its run settled", "duplicate": "a second pane of a live run",
                            "unidentified": "a shell no live run owns"}.get(cause, cause)
                    owner = f" of run {why['runId']}" if why.get("runId") else ""
                    change = self.thing("pane", pane, "remove", f"closed{owner}" + (f": {text}" if text else ""))
            elif verb == "workspace close":
                ws = rest[0] if rest else "?"
                change = created.get(ws) or self.thing("workspace", ws, "remove", "closed")
            else:
                target = next((w for w in rest if w.startswith("$") or w in created), None)
                change = created.get(target or "") or self.thing("step", f"herdr {verb}", "change",
                                                                 " ".join(rest))
            self.claim(index, change)

    def _herdr_store(self, step: m.Store, created: Mapping[str, Change]) -> Change:
        payload = step.payload if isinstance(step.payload, dict) else {}
        run = str(payload.get("run_id") or "")
        if step.action == "herdr.workspace.remember":
            ws = str(payload.get("workspace_id"))
            return created.get(ws) or self.thing("workspace", ws, "change", "recorded as owned")
        if step.action == "herdr.workspace.forget":
            ws = str(payload.get("workspace_id"))
            return self.thing("workspace", ws, "remove", "no longer recorded as owned")
        if step.action == "herdr.workspace.intend":  # part of the create it comes before
            return self.thing("workspace", f"{payload.get('project')}-workers", "add", "new herdr workspace")
        if step.action == "herdr.workspace.resolve":  # part of that create, or an earlier pass's settled now
            return self.thing("workspace", f"{payload.get('project')}-workers", "change",
                              "pending create of an earlier pass settled")
        if step.action == "herdr.run.set_pane":
            pane = str(payload.get("pane_id"))
            return created.get(pane) or self.thing("run", run, "change", f"pane → {pane}")
        if step.action == "herdr.run.clear_pane":
            return self.thing("run", run, "change", "pane → none")
        if step.action == "herdr.run.set_attempts":
            return self.thing("run", run, "change", f"re-establishment attempts → {payload.get('attempts')}")
        if step.action == "herdr.run.start":
            return self.thing("run", run, "add", f"live: {payload.get('project')} #{payload.get('issue')} "
                                                 f"attempt {payload.get('attempt')}")
        if step.action == "herdr.run.settle":
            return self.thing("run", run, "change", "settled (the next reconcile closes its pane)")
        return self.thing("step", f"store {step.action}", "change", "")

    # --------------------------------------------------------------------------------- the rest
    def _generic(self) -> None:
        from shell.run.step_text import describe_step

        for index, entry in self.mutations():
            if index not in self.claimed:
                text = describe_step(entry.step)
                self.claim(index, self.thing("step", text if len(text) <= 60 else text[:57] + "...", "change"))

    def _debt(self) -> None:
        if self.done is None:
            return
        for debt in self.done.debt:
            what, retry = m.DEBT_WORDS[debt.kind]
            self.thing("debt", f"{debt.kind} {debt.subject}", "debt", f"kept as debt: {debt.reason} ({what}; {retry})")


def changes(operation: str, request: object, journal: Sequence[m.Entry], result: Mapping[str, Any],
            done: m.Done | None = None) -> list[Change]:
    """The plan's changes, one per thing, in KIND_ORDER (then in journal order)."""
    return _Builder(operation, request, journal, result, done).build()


def count_line(found: Sequence[Change]) -> str:
    counts = {action: sum(1 for c in found if c.action == action) for action in ACTIONS}
    line = f"Plan: {counts['add']} to add, {counts['change']} to change, {counts['remove']} to remove"
    if counts["debt"]:
        line += f", {counts['debt']} kept as debt"
    return line + "."


def render_changes(found: Sequence[Change]) -> list[str]:
    if not found:
        return ["  (nothing)"]
    width = min(max(len(c.label) for c in found), 24)
    return ["  " + c.line(width) for c in found]
