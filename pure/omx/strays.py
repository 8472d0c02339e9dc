"""Stray worker panes: panes a crashed scale-up created that no membership records.

A scale-up starts every worker pane with its startup script ``<team>/runtime/worker-<N>-startup.sh``
(``pure/omx/startup_script.py``), written before the split; tmux keeps that command as the pane's
``#{pane_start_command}``. A run killed between its ``split-window`` and the membership commit of
that worker leaves a live pane that no later read knows. ``find`` names every pane whose start
command runs one of this team's startup scripts and that is not the recorded pane of that worker.

A start command and a tag do not prove the process: ``respawn-pane -k`` keeps both and starts another
one. So ``sweep`` removes a stray only when a record names the pane with the pid the listing shows:
the pid a gated pane's first process wrote itself (``pure/omx/startup_script.py``, ``self_pin_path``;
only for a pane newer than the split its intent announced, ``pin_of``), the worker's ``identity.json``
(a scale-up writes it after the pin and the tag, before the membership commit) or its intent
(``intent_step``: a scale-up or a respawn rewrites it with the new pane and the pid its split
answered, before it tags the pane). Then it goes through the proof teardown
(``pure/tmux/teardown.py``: ``L``, owner tag, ``L``, kill, ``L``) with that pid, so it is killed only
while it still runs that process and carries the team's owner tag — or, pinned before the run could
tag it (by itself, or in the intent), no tag yet. A stray no record pins (a crash before the
record was written, in oh-my-codex mode), one whose process is not the recorded one (respawned
since) and one that cannot be proven ours are kept and reported, never killed. Callers hold the
scaling lock, so no scale-up of the team is in flight (docs/scale-up.md, "Stray panes").

What such a run left on disk goes too (``leftover_workers``): the folder (and startup script) of a
worker that is no member, that no cleanup debt record names (a scale-down's debt cleans its own) and
that no stray pane kept for it may still use — only once tmux was asked, when a script is there. A
startup script alone is no leftover: a scale-down leaves it, as oh-my-codex does.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Literal, NamedTuple

from attrs import frozen

from pure import model as m
from pure import tmux as t
from pure.omx import effects, kept_workers, startup_script
from pure.omx import worktree as wt
from pure.omx.codec import parse_object, render_json
from pure.omx.records import TeamConfig
from pure.omx.state import WORKER_NAME, TeamPaths, runtime_file
from pure.program import Gen, changing, expect
from pure.tmux import facts

STRAY_FORMAT = facts.PANES_STARTED.format


def listing_step() -> m.Run:
    return t.tmux("list-panes", "-a", "-F", STRAY_FORMAT)


@frozen(kw_only=True)
class Stray:
    pane_id: str
    pid: int
    worker: str
    server: str | None = None  # the tmux server that listed it (pure/tmux/parse.py ``on_server``)


def find(stdout: str, paths: TeamPaths, config: TeamConfig) -> tuple[Stray, ...]:
    """Stray panes of this team in a ``listing_step`` answer."""
    recorded = {w.name: w.pane_id for w in config.workers}
    members = {pane for pane in recorded.values() if pane is not None}
    leader = config.leader_pane_id
    found: list[Stray] = []
    for row in live_rows(stdout):
        worker = startup_script.started_worker(row.start_command, paths.runtime_dir)
        if worker is None:
            continue
        if row.pane in members or row.pane == leader or recorded.get(worker) == row.pane:
            continue
        found.append(Stray(pane_id=row.pane, pid=row.pid, worker=worker, server=row.server))
    return tuple(found)


class StartedRow(NamedTuple):
    pane: str
    pid: int
    server: str  # the tmux server that listed it (``PID@START``)
    start_command: str


def live_rows(stdout: str) -> Iterator[StartedRow]:
    """Each live pane in a ``listing_step`` answer; a row that does not parse is skipped: only a pane
    positively recognised by its start command is ever a candidate."""
    for fields in facts.PANES_STARTED.rows(stdout):
        if len(fields) != 6 or not t.is_pane_id(fields[0]) or fields[1] != "0":
            continue
        pid, server = t.parse_pid(fields[2]), t.server_of(fields[3], fields[4])
        if pid is not None and server is not None:
            yield StartedRow(fields[0], pid, server, fields[5])


@frozen(kw_only=True)
class Sweep:
    removed: tuple[Stray, ...] = ()
    kept: tuple[tuple[Stray, str], ...] = ()  # with why it could not be proven ours
    cleaned: tuple[str, ...] = ()  # workers (no members) whose folder and startup script were removed
    trees_removed: tuple[str, ...] = ()  # worktrees (or their new branches) that an intent named
    trees_kept: tuple[tuple[str, str], ...] = ()  # such a worktree's path, and why it is still there
    kept_members: tuple[kept_workers.Kept, ...] = ()  # members a rollback kept: not the sweep's to remove
    # tmux could not be asked: the non-members whose folder or intent a live stray may still use
    unproven: tuple[str, ...] = ()

    def to_json(self) -> m.Answer:
        out: m.Answer = {"removed": [{"paneId": s.pane_id, "pid": s.pid, "worker": s.worker} for s in self.removed],
                     "kept": [{"paneId": s.pane_id, "pid": s.pid, "worker": s.worker, "reason": why}
                              for s, why in self.kept]}
        if self.cleaned:
            out["cleanedWorkers"] = list(self.cleaned)
        if self.trees_removed:
            out["removedWorktrees"] = list(self.trees_removed)
        if self.trees_kept:
            out["keptWorktrees"] = [{"path": path, "reason": why} for path, why in self.trees_kept]
        return out

    @property
    def found(self) -> bool:
        """Whether the sweep found anything a run left (removed or kept)."""
        return bool(self.removed or self.kept or self.cleaned or self.trees_removed or self.trees_kept)

    def blocking(self, workers: Collection[str]) -> str | None:
        """Why a run may not make a pane for one of ``workers``: a stray of that worker was kept, and the
        records that pin it (its intent, its identity) must not be overwritten; None when none was."""
        for stray, why in self.kept:
            if stray.worker in workers:
                return f"stray_pane_kept:{stray.worker}:{stray.pane_id}:{why}"
        for worker in self.unproven:  # its records may pin a live stray: neither overwritten nor removed
            if worker in workers:
                return f"stray_listing_unavailable:{worker}"
        return None

    def debts(self) -> tuple[m.Debt, ...]:
        return (*(m.Debt(kind="stray_pane", subject=s.pane_id, reason=why,
                         detail=f"started by {s.worker}'s startup script; pid {s.pid}") for s, why in self.kept),
                *(m.Debt(kind="stray_worktree", subject=path, reason=why) for path, why in self.trees_kept))

    def onto(self, done: m.Done) -> m.Done:
        """A command's answer with what this sweep removed (``strayPanes``) and kept (debt, exit 3)."""
        return done.adding("strayPanes", self.to_json(), self.debts()) if self.found else done


@frozen(kw_only=True)
class Leftovers:
    """Workers a run left on disk without making them members: their ``folders`` (``workers/<name>``),
    and of those, the ones whose ``scripts`` (``runtime/<name>-startup.sh``) are there too, by worker
    name; ``suspect``: a stray pane can exist (a startup script of a worker that is no member, or an
    intent), so tmux is asked."""

    folders: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    suspect: bool = False
    # by worker: the worktree a non-member's intent names, and whether its path is there
    worktrees: tuple[tuple[str, wt.Worktree, bool], ...] = ()
    kept: tuple[kept_workers.Kept, ...] = ()  # members a rollback kept (pure/omx/kept_workers.py)
    intents: tuple[str, ...] = ()  # the non-members that have an intent

    @property
    def workers(self) -> tuple[str, ...]:
        return tuple(sorted(self.folders, key=_index))


def leftover_workers(paths: TeamPaths, config: TeamConfig) -> Gen[Leftovers]:
    """The folders of workers that are no members and that no cleanup debt record names, with their
    startup scripts (``team status``, ``team debt show`` and ``sweep`` read them alike)."""
    in_debt = yield from _debt_workers(paths)
    runtime = yield from expect(m.ListDir(path=paths.runtime_dir), m.Listing)
    folders = yield from expect(m.ListDir(path=paths.workers_dir), m.Listing)
    members = {w.name for w in config.workers}
    files = [found for found in map(runtime_file, runtime.names or ()) if found is not None]
    scripts = [worker for worker, kind in files if kind == "script"]
    suspect = any(n not in members for n in scripts) or any(kind == "intent" for _, kind in files)
    if in_debt is None:  # a record that cannot be read may name any worker: none is a leftover
        return Leftovers(suspect=suspect)
    # A scale-up makes a worker's folder before anything else of it; a scale-down removes the folder
    # and, as oh-my-codex does, leaves the startup script: a folder is what marks a leftover worker.
    left = [name for name in folders.names or () if WORKER_NAME.fullmatch(name) and name not in members | in_debt]
    intents = {w for w, kind in files if kind == "intent"}
    trees, kept = [], []  # of non-members; of members
    for worker in sorted(intents, key=_index):
        data = yield from expect(m.ReadFile(path=paths.intent(worker)), m.FileData)
        record = None if data.content is None else parse_object(data.content, paths.intent(worker)).value_or(None)
        if worker in members:  # a member's intent: a respawn's, or a rollback's record of a kept worker
            member = kept_workers.from_record(record, worker)
            if member is not None:
                kept.append(member)
            continue
        tree = None if record is None else wt.from_intent(record.get("worktree"), paths.team, worker)
        if tree is not None:  # reported once git made it; ``sweep`` also removes a branch it left alone
            there = yield from expect(m.Stat(path=tree.path), m.Value)
            trees.append((worker, tree, there.value != "absent"))
    return Leftovers(folders=tuple(left), scripts=tuple(n for n in scripts if n in left), suspect=suspect,
                     worktrees=tuple(trees), kept=tuple(kept),
                     intents=tuple(sorted(intents - members, key=_index)))


def _index(worker: str) -> int:
    return int(worker.split("-")[1])


@frozen(kw_only=True)
class Survey:
    """What runs that did not finish left of a team: its stray panes (None: tmux could not be asked)
    and leftover workers on disk. ``team status``, ``team debt show`` and ``sweep`` read the same."""

    strays: tuple[Stray, ...] | None
    files: Leftovers

    def to_json(self, excluded: Collection[object] = ()) -> m.Answer:
        """For reports: the strays (but panes in ``excluded``, named elsewhere) and leftover workers."""
        out: m.Answer = {"strayPanes": [{"paneId": s.pane_id, "pid": s.pid, "worker": s.worker}
                                    for s in self.strays or () if s.pane_id not in excluded],
                     "strayListing": "read" if self.strays is not None else "unavailable",
                     "leftoverWorkers": [{"worker": w, "folder": True, "startupScript": w in self.files.scripts}
                                         for w in self.files.workers]}
        trees = [{"worker": w, "path": tree.path, "branch": tree.branch} for w, tree, there in self.files.worktrees
                 if there]
        if trees:
            out["leftoverWorktrees"] = trees
        if self.files.kept:
            out["keptWorkers"] = [k.to_json() for k in self.files.kept]
        return out


def survey(paths: TeamPaths, config: TeamConfig) -> Gen[Survey]:
    """The leftover workers on disk, and — only when one can exist — the stray panes (one ``list-panes``)."""
    files = yield from leftover_workers(paths, config)
    if not files.suspect:
        return Survey(strays=(), files=files)
    answer = yield from expect(listing_step(), m.Proc)
    if answer.exit_code != 0:
        return Survey(strays=None, files=files)
    return Survey(strays=find(answer.stdout, paths, config), files=files)


def _debt_workers(paths: TeamPaths) -> Gen[set[object] | None]:
    """The workers a cleanup debt record names; None when there is a record that cannot be read."""
    data = yield from expect(m.ReadFile(path=paths.debt), m.FileData)
    if data.content is None and not data.error:
        return set()
    record = None if data.content is None else parse_object(data.content, paths.debt).value_or(None)
    if record is None:
        return None
    names: set[object] = set()
    for key in ("removed_worker_names", "workers", "unresolved_panes", "resource_workers"):
        for entry in record.get(key) or [] if isinstance(record.get(key), list) else []:
            name = entry.get("name") if isinstance(entry, dict) else entry
            if isinstance(name, str):
                names.add(name)
    return names


IntentKind = Literal["scale_up", "respawn"]


def intent_step(paths: TeamPaths, kind: IntentKind, worker: str, *, pane_id: str | None = None,
                pid: int | None = None, worktree: wt.Worktree | None = None,
                first_new_pane: int | None = None) -> m.WriteFile:
    """Write ``worker``'s intent (``TeamPaths.intent``): what is about to be created (``kind``, the worker,
    its startup script, the git ``worktree`` a scale-up makes for it), right before the split the lowest
    number the split's pane can have (``NEW_PANES_FROM``) and, once the split answered, the pane and
    its pid.

    The durable intent of a worker pane: written before the split (by a scale-up,
    ``pure/omx/scale_up/worker.py``, or a respawn, ``pure/omx/respawn.py``), rewritten with the new pane
    and the pid the split answered before anything else is done with it, removed once the pane is a
    member or proven gone. While it exists, every team command looks for the pane (``survey``); a stray
    is removed only when a record names it with its pid (``pin_of``)."""
    record: dict[str, object] = {"kind": kind, "worker": worker, "script": paths.startup_script(_index(worker))}
    if worktree is not None:  # written before ``git worktree add`` (pure/omx/worktree.py ``ensure``)
        record["worktree"] = wt.intent_record(worktree)
    if first_new_pane is not None:
        record[NEW_PANES_FROM] = f"%{first_new_pane}"
    if pane_id is not None:
        record.update(pane_id=pane_id, pid=pid)
    return m.WriteFile(path=paths.intent(worker), content=render_json(record))


NEW_PANES_FROM = "new_panes_from"


def made_after_intent(intent: dict[str, object] | None, pane_id: str) -> bool:
    """Whether ``pane_id`` can be the pane whose making ``intent`` announced (a worker's split, or a fleet
    leader's pane, pure/fleet/leader.py) and does not name yet: the intent names no pane, and the pane is
    numbered no lower than the first new pane of the listing before it was made (tmux never reuses a
    number while its server lives, pure/tmux/parse.py ``first_new_pane``). Only such a pane's own pin
    speaks for it (``pin_of``, ``leftover_leaders``): a pin is written by whichever process first finds none, and a
    folder removed and made again while an older pane lives on lets a process ``respawn-pane`` starts
    there later write one."""
    if intent is None or intent.get("pane_id") is not None:
        return False
    first_new = intent.get(NEW_PANES_FROM)
    return (isinstance(first_new, str) and t.is_pane_id(first_new) and t.is_pane_id(pane_id)
            and int(pane_id[1:]) >= int(first_new[1:]))


def pin_records(paths: TeamPaths, worker: str) -> tuple[str, str]:
    """Where a pane of ``worker`` is recorded with its pinned pid before it is a member."""
    return paths.worker_file(worker, "identity.json"), paths.intent(worker)


@frozen(kw_only=True)
class Pin:
    """Whether a stray runs the process panefleet started: ``refused``, why not (None: it does);
    ``before_tag``, proven by a record made before the run could tag it — the pid the pane's own
    first process wrote (pure/omx/startup_script.py, ``gated_startup_command``) or the one its split
    answered, in the intent — so it may be removed untagged."""

    refused: str | None
    before_tag: bool = False


def pin_of(paths: TeamPaths, stray: Stray) -> Gen[Pin]:
    """Whether a record names this pane with the listed pid: the worker's identity, its intent (a
    record that cannot be read or parsed pins nothing), or the pid the pane's first process wrote
    itself — which counts only for the pane of a split the intent announced and does not name yet
    (``made_after_intent``). A pane older than that split is not its pane: a worker's folder can be
    removed and made again while an old pane of that worker lives on (dead, kept by ``remain-on-exit``),
    and a process ``respawn-pane`` starts there later then finds no pin and writes its own."""
    data = yield from expect(m.ReadFile(path=startup_script.self_pin_path(paths.worker_dir(stray.worker), stray.pane_id)),
                             m.FileData)
    own = t.parse_pid((data.content or "").strip())
    recorded: list[object] = []
    intent: dict[str, object] | None = None
    for path in pin_records(paths, stray.worker):
        data = yield from expect(m.ReadFile(path=path), m.FileData)
        record = None if data.content is None else parse_object(data.content, path).value_or(None)
        if path == paths.intent(stray.worker):
            intent = record
        if record is None or record.get("pane_id") != stray.pane_id:
            continue
        if t.is_positive_pid(record.get("pid")) and record.get("pid") == stray.pid:
            return Pin(refused=None, before_tag=path == paths.intent(stray.worker))
        recorded.append(record.get("pid"))
    if own is not None and made_after_intent(intent, stray.pane_id):
        if own == stray.pid:
            return Pin(refused=None, before_tag=True)
        recorded.insert(0, own)
    if recorded:
        return Pin(refused=f"stray_pid_changed:{stray.pane_id}:{recorded[0]}:{stray.pid}")
    return Pin(refused=f"stray_pid_unrecorded:{stray.pane_id}")


def sweep(paths: TeamPaths, config: TeamConfig, owner: str) -> Gen[Sweep]:
    """Find this team's stray panes and remove each one that is provably ours, then what the runs that
    left them (or left only files) left on disk."""
    surveyed = yield from survey(paths, config)
    leftovers = surveyed.files
    if surveyed.strays is None:  # tmux could not be asked: a pane may run a leftover script, touch nothing
        return Sweep(unproven=tuple(sorted({*leftovers.folders, *leftovers.intents}, key=_index)),
                     kept_members=leftovers.kept)
    strays = surveyed.strays
    removed: list[Stray] = []
    kept: list[tuple[Stray, str]] = []
    for stray in strays:
        pin = yield from pin_of(paths, stray)
        if pin.refused is not None:
            kept.append((stray, pin.refused))
            continue
        report = yield from t.teardown([t.TeardownTarget(pane_id=stray.pane_id, pid=stray.pid, server=stray.server)],
                                       owner_id=owner,
                                       authorize=True, untagged_ok=pin.before_tag,
                                       leader_pane_id=config.leader_pane_id, hud_pane_id=config.hud_pane_id,
                                       effects={stray.pane_id: effects.leftover(
                                           stray.worker, f"stray pane {stray.pane_id} a killed run left, removed after "
                                                         f"proof (pid {stray.pid})")})
        result = report.results[0] if report.results else None
        if result is not None and result.resolved:
            removed.append(stray)
        else:
            kept.append((stray, (result.detail or result.reason) if result is not None else "excluded"))
    in_use = {s.worker for s, _ in kept}
    trees_removed: list[str] = []
    trees_kept: list[tuple[str, str, str]] = []  # worker, path, why
    if leftovers.suspect:  # an intent is one reason to suspect
        for worker, tree, _there in leftovers.worktrees:
            if worker in in_use:
                continue
            gone, problems = yield from changing(effects.leftover(worker, "leftover worktree removed"),
                                                 wt.remove_left(tree))
            if gone:
                trees_removed.append(tree.path)
            if problems:
                trees_kept.append((worker, tree.path, "; ".join(problems)))
        yield from _forget_intents(paths, in_use | {worker for worker, _, _ in trees_kept}
                                   | {k.worker for k in leftovers.kept})
    cleaned = yield from _clean(paths, leftovers, in_use)
    return Sweep(removed=tuple(removed), kept=tuple(kept), cleaned=cleaned, trees_removed=tuple(trees_removed),
                 trees_kept=tuple((path, why) for _, path, why in trees_kept), kept_members=leftovers.kept)


def _clean(paths: TeamPaths, leftovers: Leftovers, in_use: set[str]) -> Gen[tuple[str, ...]]:
    """Remove the leftover workers' folders and startup scripts, but those a kept stray may still use."""
    cleaned = []
    for worker in leftovers.workers:
        if worker in in_use:
            continue
        said = effects.leftover(worker, "leftover files removed")
        yield from expect(m.RemovePath(path=paths.worker_dir(worker), recursive=True, note="leftover", effect=said),
                          m.Ack)
        if worker in leftovers.scripts:
            yield from expect(m.RemovePath(path=paths.startup_script(_index(worker)), note="leftover", effect=said),
                              m.Ack)
        cleaned.append(worker)
    return tuple(cleaned)


def _forget_intents(paths: TeamPaths, keep: Collection[str]) -> Gen[None]:
    """An intent has done its work once no pane of its worker is left as a stray and the worktree it
    names is gone: remove it, so that later runs do not list panes for nothing. The intents of the
    workers in ``keep`` (a pane or a worktree kept) stay, to name them."""
    listing = yield from expect(m.ListDir(path=paths.runtime_dir), m.Listing)
    for worker, kind in filter(None, map(runtime_file, listing.names or ())):
        if kind == "intent" and worker not in keep:
            yield from expect(m.RemovePath(path=paths.intent(worker), effect=effects.leftover(worker)), m.Ack)


