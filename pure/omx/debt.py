"""Scale-down cleanup debt: the ``.scale-down-cleanup-debt.json`` record and its reconciliation.

Record (docs/scale-down.md, "The debt record"; key order as oh-my-codex writes it)::

    {schema_version: 1, operation: "scale_down",
     status: "pending_teardown" | "resource_cleanup_pending" | "unresolved",
     created_at, removed_worker_names: [...],
     workers: [{name, index, pane_id, pid|null, tmux_server?}],   removed workers with a %N pane
     resource_workers: [{name, worktree_*?, team_state_root?}],
     updated_at?, unresolved_panes?: [{name, index, pane_id, pid|null, tmux_server?}], reasons?: [...]}

``reconcile(ctx, held)`` is oh-my-codex's ``reconcileScaleDownCleanupDebt`` (docs/scale-down.md,
"Reconciling debt"): under the membership barrier and from canonical state only, it validates the
whole record before any tmux call (``scale_down_cleanup_debt_malformed``), discards pre-commit debt
while the removed workers are still canonical, refuses survivor collisions, re-proves every debt
pane (``L``, identity, ``S``, then the teardown primitive), and finally cleans worker resources
(root ``AGENTS.md`` restore, ``git worktree remove --force``, ``rm -rf workers/<w>``) before deleting
the record. Its answer stands for the JSON object oh-my-codex returns: None for ``{"ok": true}``,
a :class:`~pure.program.Failed` (its status and ``error``) for ``{"ok": false, "error": ...}``.

Its human reports (``team debt show`` and what a reconcile did) are ``pure/omx/debt_report.py``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

import attrs
from attrs import frozen
from returns.result import Failure

from pure import model as m
from pure import tmux as t
from pure.omx import effects, locks, transcripts, txn
from pure.omx.codec import Parsed, is_positive_int, parse_json, render_json
from pure.omx.paths import is_same_or_inside_path
from pure.omx.records import Member
from pure.omx.state import TeamPaths, TeamState, check_identity, is_server
from pure.program import Failed, Gen, PlanError, changing, expect, fail

REMOVED_NAME_RE = re.compile(r"worker-[0-9]+")
MALFORMED = "scale_down_cleanup_debt_malformed"
RESOURCE_KEYS = ("worktree_path", "worktree_repo_root", "worktree_branch", "worktree_detached",
                 "worktree_created", "team_state_root")
BOOL_KEYS = ("worktree_detached", "worktree_created")


@frozen(kw_only=True)
class DebtPane:
    name: str
    index: int
    pane_id: str
    pid: int | None
    server: str | None = None  # the tmux server ``pid`` was pinned on (panefleet's key ``tmux_server``)

    @classmethod
    def of(cls, worker: Member) -> DebtPane:
        """A removed worker's pane, as its member record pinned it."""
        return cls(name=worker.name, index=worker.index, pane_id=str(worker.pane_id), pid=worker.pid,
                   server=worker.tmux_server)

    def to_json(self) -> dict[str, object]:
        pinned = {"tmux_server": self.server} if self.server is not None else {}
        return {"name": self.name, "index": self.index, "pane_id": self.pane_id, "pid": self.pid, **pinned}


@frozen(kw_only=True)
class Resource:
    """One ``resource_workers`` entry: a removed worker's folder and worktree, for the cleanup."""

    name: str
    worktree_path: str | None = None
    worktree_repo_root: str | None = None
    worktree_branch: str | None = None
    worktree_detached: bool | None = None
    worktree_created: bool | None = None
    team_state_root: str | None = None

    @classmethod
    def of(cls, worker: Member) -> Resource:
        return cls(name=worker.name, worktree_path=worker.worktree_path, worktree_repo_root=worker.worktree_repo_root,
                   worktree_branch=worker.worktree_branch, worktree_detached=worker.worktree_detached,
                   worktree_created=worker.worktree_created, team_state_root=worker.team_state_root)

    def to_json(self) -> dict[str, object]:
        """As the record writes it: the fields that are set, in ``RESOURCE_KEYS`` order after the name."""
        return {key: value for key, value in attrs.asdict(self).items() if value is not None}


@frozen(kw_only=True)
class Ctx:
    """Where a team lives: the state root derived from cwd, and the leader's cwd."""

    paths: TeamPaths
    cwd: str


def team_state_root(ctx: Ctx, state: TeamState) -> str:
    return state.config.team_state_root or ctx.paths.state_root


def record_paths(ctx: Ctx, state: TeamState) -> TeamPaths:
    """Paths under the team's own ``team_state_root`` (debt file, worker dirs)."""
    return TeamPaths(team_state_root(ctx, state), ctx.paths.team)


# ------------------------------------------------------------------------------------------ record


def base_record(workers: list[Member], created_at: str) -> dict[str, object]:
    """The ``pending_teardown`` record written before the membership commit."""
    panes = [DebtPane.of(w).to_json() for w in workers if t.is_pane_id(w.pane_id)]
    resources = [Resource.of(w).to_json() for w in workers]
    return {
        "schema_version": 1,
        "operation": "scale_down",
        "status": "pending_teardown",
        "created_at": created_at,
        "removed_worker_names": [w.name for w in workers],
        "workers": panes,
        "resource_workers": resources,
    }


def rewrite(record: Mapping[str, object], status: str, updated_at: str, unresolved: list[dict[str, object]] | None,
            reasons: list[str] | None) -> dict[str, object]:
    """Keep every previous key; overwrite status, updated_at, unresolved_panes and reasons."""
    out = dict(record)
    out["status"] = status
    out["updated_at"] = updated_at
    if unresolved is not None:
        out["unresolved_panes"] = unresolved
    if reasons is not None:
        out["reasons"] = reasons
    return out


# ---------------------------------------------------------------------------------------- validate


def _removed_names(debt: Parsed) -> list[str] | None:
    names = debt.get("removed_worker_names")
    if isinstance(names, list):
        out = names
    elif isinstance(debt.get("workers"), list):
        out = [w.get("name") for w in debt["workers"] if isinstance(w, dict) and isinstance(w.get("name"), str)]
    else:
        out = []
    if not out or any(not isinstance(n, str) or REMOVED_NAME_RE.fullmatch(n) is None for n in out):
        return None
    if len(set(out)) != len(out):
        return None
    return [str(n) for n in out]


def _resources(debt: Parsed, names: list[str]) -> list[Resource] | None:
    resources = debt.get("resource_workers")
    if not isinstance(resources, list) or len(resources) != len(names):
        return None
    seen: set[str] = set()
    for r in resources:
        if not isinstance(r, dict) or not isinstance(r.get("name"), str) or r["name"] not in names \
                or r["name"] in seen:
            return None
        for key in RESOURCE_KEYS:
            if key in r and r[key] is not None:
                kind = bool if key in BOOL_KEYS else str
                if type(r[key]) is not kind:
                    return None
            elif key in r:  # an explicit null is not "undefined"
                return None
        seen.add(r["name"])
    return [Resource(name=r["name"], **{key: r[key] for key in RESOURCE_KEYS if key in r}) for r in resources]


def _pane_ok(pane: object, names: list[str], leader: str, hud: str) -> DebtPane | None:
    if not isinstance(pane, dict):
        return None
    name, index, pane_id = pane.get("name"), pane.get("index"), pane.get("pane_id")
    if not isinstance(name, str) or name not in names:
        return None
    if not is_positive_int(index) or index != int(name[len("worker-"):]):
        return None
    if not t.is_pane_id(pane_id) or pane_id in (leader, hud):
        return None
    if "pid" not in pane:
        return None
    pid = pane["pid"]
    if pid is not None and not t.is_positive_pid(pid):
        return None
    server = pane.get("tmux_server")
    if server is not None and not is_server(server):
        return None
    return DebtPane(name=name, index=index, pane_id=str(pane_id), pid=pid, server=server)


def debt_panes(debt: Parsed, names: list[str], leader: object, hud: object) -> list[DebtPane] | None:
    """Validate ``workers`` and ``unresolved_panes``; the panes to act on (unresolved if any)."""
    workers, unresolved = debt.get("workers"), debt.get("unresolved_panes")
    if not isinstance(workers, list) or (unresolved is not None and not isinstance(unresolved, list)):
        return None
    lead = leader.strip() if isinstance(leader, str) else ""
    head = hud.strip() if isinstance(hud, str) else ""
    by_name: dict[str, DebtPane] = {}
    pane_ids: set[str] = set()
    for w in workers:
        pane = _pane_ok(w, names, lead, head)
        if pane is None or pane.name in by_name or pane.pane_id in pane_ids:
            return None
        by_name[pane.name] = pane
        pane_ids.add(pane.pane_id)
    chosen: list[DebtPane] = []
    seen_names: set[str] = set()
    seen_ids: set[str] = set()
    for u in unresolved or []:
        pane = _pane_ok(u, names, lead, head)
        if pane is None or pane.name in seen_names or pane.pane_id in seen_ids or by_name.get(pane.name) != pane:
            return None
        seen_names.add(pane.name)
        seen_ids.add(pane.pane_id)
        chosen.append(pane)
    return chosen if chosen else list(by_name.values())


def _exists(path: str) -> Gen[bool]:
    kind = yield from expect(m.Stat(path=path), m.Value)
    return kind.value != "absent"


def _realpath(path: str) -> Gen[str]:
    value = yield from expect(m.RealPath(path=path), m.Value)
    return value.value


def _nearest_existing(path: str) -> Gen[str | None]:
    candidate = posixpath.normpath(path)
    while True:
        if (yield from _exists(candidate)):
            return candidate
        parent = posixpath.dirname(candidate)
        if parent == candidate:
            return None
        candidate = parent


def _contained(path: str, root: str) -> Gen[bool]:
    existing = yield from _nearest_existing(path)
    if existing is None:
        return False
    real = yield from _realpath(existing)
    return is_same_or_inside_path(real, root, "posix")


def repo_root(cwd: str) -> Gen[str]:
    """realpath of ``git rev-parse --show-toplevel`` from the leader cwd, else realpath(cwd)."""
    root = yield from _realpath(cwd)
    proc = yield from expect(m.Run(tool="git", args=("rev-parse", "--show-toplevel"), cwd=cwd), m.Proc)
    reported = proc.stdout.strip()
    if proc.exit_code == 0 and reported:
        root = yield from _realpath(posixpath.normpath(posixpath.join(cwd, reported)))
    return root


def _is_normal_abs(value: str) -> bool:
    return value.startswith("/") and posixpath.normpath(value) == value and not value.startswith("//")


def resources_valid(ctx: Ctx, team_root: str, resources: list[Resource]) -> Gen[bool]:
    """Every resource path is exactly where this team's workers live (no traversal, no symlinks)."""
    if not (yield from _exists(ctx.cwd)) or not (yield from _exists(team_root)):
        return False
    repo = yield from repo_root(ctx.cwd)
    state_root = yield from _realpath(team_root)
    workers_root = posixpath.join(state_root, "team", ctx.paths.team, "workers")
    for r in resources:
        name = r.name
        if not (yield from _contained(posixpath.join(workers_root, name), state_root)):
            return False
        tsr = r.team_state_root
        if tsr is not None and (not _is_normal_abs(tsr) or tsr != state_root):
            return False
        path = r.worktree_path
        if path is None:
            if any(v is not None for v in (r.worktree_repo_root, r.worktree_branch, r.worktree_detached,
                                           r.worktree_created)):
                return False
            continue
        expected = posixpath.join(repo, ".omx", "team", ctx.paths.team, "worktrees", name)
        root_field = r.worktree_repo_root
        if not _is_normal_abs(path) or path != expected:
            return False
        if root_field is not None and (not _is_normal_abs(root_field) or root_field != repo):
            return False
        if r.worktree_created is True and (root_field is None or r.worktree_detached is None):
            return False
        if not (yield from _contained(expected, repo)):
            return False
        if (yield from _exists(expected)) and (yield from _realpath(expected)) != expected:
            return False
    return True


# -------------------------------------------------------------------------------------- reconcile


def _identity_matches(paths: TeamPaths, pane: DebtPane) -> Gen[bool]:
    """Whether the worker's ``identity.json`` names this pane (an absent file does not). A file that
    is not an identity (``check_identity``) ends the program with ``team_state_malformed:<file>…``
    before anything is torn down or rewritten: it cannot be told from a mismatch."""
    path = paths.worker_file(pane.name, "identity.json")
    checked = check_identity((yield from txn.read_text(path)), path)
    if isinstance(checked, Failure):
        raise txn.malformed(str(checked.failure()))
    identity = checked.unwrap()
    if identity is None:
        return False
    return (identity.name, identity.index, identity.pane_id, identity.pid) == (pane.name, pane.index, pane.pane_id,
                                                                                pane.pid)


def _settle_pane(pane: DebtPane, owner_id: str, state: TeamState, paths: TeamPaths,
                 team: TeamPaths) -> Gen[list[str]]:
    """Re-prove one debt pane and tear it down when every authority agrees, its transcript kept first in
    ``team``'s folder (``pure/omx/transcripts.py``). [] = resolved."""
    proof = t.on_server((yield from t.prove(pane.pane_id)), pane.server)
    if proof.gone:
        return []
    if proof.unavailable:
        return [f"{pane.pane_id}:{proof.code()}"]
    if pane.pid is None:
        return [f"{pane.pane_id}:legacy_pid_missing_live"]
    if proof.pid != pane.pid:
        return [f"{pane.pane_id}:pane_pid_changed"]
    if not (yield from _identity_matches(paths, pane)):
        return [f"{pane.pane_id}:worker_identity_unavailable"]
    if not owner_id:
        return [f"{pane.pane_id}:team_owner_unavailable"]
    owner = yield from t.read_owner(pane.pane_id)
    if owner.kind == "error":
        return [f"{pane.pane_id}:team_owner_unavailable"]
    if owner.kind != "value" or owner.value != owner_id:
        return [f"{pane.pane_id}:team_owner_mismatch"]
    said = effects.killed(pane.name, pane.pane_id, pane.pid, owner_id)
    yield from changing(said, transcripts.keep(team, pane.name, pane.pane_id, pane.pid, owner_id, pane.server))
    report = yield from t.teardown(
        [t.TeardownTarget(pane_id=pane.pane_id, pid=pane.pid, server=pane.server)], owner_id=owner_id, authorize=True,
        leader_pane_id=state.config.leader_pane_id, hud_pane_id=state.config.hud_pane_id,
        effects={pane.pane_id: said})
    if pane.pane_id in report.resolved_ids():
        return []
    reasons = [f"{r.pane_id}:{r.reason}" for r in report.proof_failures()]
    reasons += [f"{p}:kill_failed" for p in report.failed_kills()]
    if not reasons:
        reasons.append(f"{pane.pane_id}:teardown_unresolved")
    return reasons


def owner_id_of(state: TeamState) -> str:
    return (state.config.tmux_pane_owner_id or "").strip()


def reconcile(ctx: Ctx, held: locks.Barrier | None = None, own: bool = False) -> Gen[Failed | None]:
    """oh-my-codex ``reconcileScaleDownCleanupDebt``: None when no debt is left (its ``{"ok": true}``),
    else why, as a :class:`Failed`: ``refused`` when the record or the team cannot be acted on
    (nothing was done), ``debt`` when panes or resources are still owed (the record says which).
    The caller decides what that failure ends (``pure/omx/scale_down.py``)."""
    return (yield from locks.with_barrier(ctx.paths, lambda b: _reconcile(ctx, b, own), held=held))


def _reconcile(ctx: Ctx, barrier: locks.Barrier, own: bool) -> Gen[Failed | None]:
    """``own``: the record is the one the running scale-down wrote to guard its kills (a part of its
    membership change, pure/omx/effects.py), not debt an earlier run left."""
    removed = effects.CONFIG_COMPANION if own else effects.cleanup_debt(True, True)
    rewritten = effects.cleanup_debt(not own, False)
    state = yield from txn.load_team(ctx.paths, barrier)
    if state is None:
        return Failed("refused", f"Team {ctx.paths.team} not found")
    rpaths = record_paths(ctx, state)
    text = yield from txn.read_text(rpaths.debt)
    if text is None:
        return None
    parsed = parse_json(text, rpaths.debt)
    if isinstance(parsed, Failure):
        syntax = parsed.failure().syntax
        # not JSON at all: oh-my-codex's JSON.parse error; JSON holding a value that cannot be written
        # back unchanged (NaN, a number beyond a double, a lone surrogate, deep nesting): malformed
        return Failed("refused",
                      MALFORMED if syntax is None else f"scale_down_cleanup_debt_unreadable:SyntaxError: {syntax}")
    debt = parsed.unwrap()
    if not isinstance(debt, dict) or debt.get("schema_version") != 1 or type(debt.get("schema_version")) is bool \
            or debt.get("operation") != "scale_down":
        return Failed("refused", MALFORMED)
    names = _removed_names(debt)
    if names is None:
        return Failed("refused", MALFORMED)
    resources = _resources(debt, names)
    if resources is None:
        return Failed("refused", MALFORMED)
    if not (yield from resources_valid(ctx, rpaths.state_root, resources)):
        return Failed("refused", MALFORMED)
    panes = debt_panes(debt, names, state.config.leader_pane_id, state.config.hud_pane_id)
    if panes is None:
        return Failed("refused", MALFORMED)
    workers = state.config.workers
    canonical = [n for n in names if any(w.name == n for w in workers)]
    if len(canonical) == len(names):
        yield from txn.remove_file(rpaths.debt, note="debt", effect=removed)
        return None
    if canonical:
        return Failed("refused", "scale_down_cleanup_debt_membership_inconsistent")
    survivors = [w for w in workers if w.name not in names]
    for pane in panes:
        for w in survivors:
            if w.pane_id == pane.pane_id or (pane.pid is not None and w.pid == pane.pid):
                return Failed("refused", MALFORMED)
    owner_id = owner_id_of(state)
    reasons: list[str] = []
    unresolved: list[DebtPane] = []
    for pane in panes:
        found = yield from _settle_pane(pane, owner_id, state, rpaths, ctx.paths)
        if found:
            unresolved.append(pane)
            reasons.extend(found)
    now = (yield from expect(m.Clock(), m.Value)).value if unresolved else ""
    if unresolved:
        record = rewrite(debt, "unresolved", now, [p.to_json() for p in unresolved], reasons)
        yield from txn.write_text(rpaths.debt, render_json(record), note="debt", effect=rewritten)
        return Failed("debt", "scale_down_cleanup_debt_unresolved:" + ",".join(p.pane_id for p in unresolved))
    try:
        yield from cleanup_resources(ctx, rpaths, resources)
    except PlanError as error:
        detail = f"Error: {error.outcome.message}"
        now = (yield from expect(m.Clock(), m.Value)).value
        record = rewrite(debt, "resource_cleanup_pending", now, [], [f"resource_cleanup_failed:{detail}"])
        yield from txn.write_text(rpaths.debt, render_json(record), note="debt", effect=rewritten)
        return Failed("debt", f"scale_down_cleanup_debt_resource_cleanup_failed:{detail}")
    yield from txn.remove_file(rpaths.debt, note="debt", effect=removed)
    return None


# -------------------------------------------------------------------------------- resource cleanup


def _git(cwd: str, *args: str, mutates: bool = False) -> Gen[m.Proc]:
    return (yield from expect(m.Run(tool="git", args=args, cwd=cwd, mutates=mutates), m.Proc))


def restore_root_agents(rpaths: TeamPaths, name: str, worktree: str) -> Gen[None]:
    """Put back the worktree root ``AGENTS.md`` the worker overlay replaced (from its backup)."""
    proc = yield from _git(worktree, "rev-parse", "--git-path", "omx/root-agents-backup.json")
    reported = proc.stdout.strip() if proc.exit_code == 0 else ""
    backup_path = posixpath.normpath(posixpath.join(worktree, reported)) if reported \
        else rpaths.worker_file(name, "root-agents-backup.json")
    data = yield from expect(m.ReadFile(path=backup_path), m.FileData)
    backup = None if data.content is None else parse_json(data.content, backup_path).value_or(None)
    if not isinstance(backup, dict):
        return
    if backup.get("tracked") and backup.get("skipWorktreeApplied"):
        yield from _git(worktree, "update-index", "--no-skip-worktree", "AGENTS.md", mutates=True)
    agents = posixpath.join(worktree, "AGENTS.md")
    if backup.get("existed"):
        previous = backup.get("previousContent")
        yield from txn.write_text(agents, previous if isinstance(previous, str) else "", note="restore AGENTS.md")
    else:
        yield from expect(m.RemovePath(path=agents), m.Ack)
    yield from expect(m.RemovePath(path=backup_path), m.Ack)


def cleanup_resources(ctx: Ctx, rpaths: TeamPaths, resources: list[Resource]) -> Gen[None]:
    present: dict[str, bool] = {}
    for r in resources:
        path = r.worktree_path
        if path:
            present[r.name] = yield from _exists(path)
            if present[r.name]:
                yield from changing(effects.worker(r.name, "remove"), restore_root_agents(rpaths, r.name, path))
    errors: list[str] = []
    created = [(r.worktree_repo_root, str(r.worktree_path), r.name) for r in resources
               if r.worktree_created is True and present.get(r.name) and r.worktree_repo_root is not None
               and r.worktree_detached is not None]
    for repo, path, name in reversed(created):
        proc = yield from changing(effects.worker(name, "remove"), _git(
            repo, "worktree", "remove", "--force", path, mutates=True))
        if proc.exit_code != 0:
            errors.append(f"remove:{path}:{proc.stderr.strip() or f'exit_{proc.exit_code}'}")
    if errors:
        raise fail("worktree_rollback_failed:" + " | ".join(errors))
    for r in resources:
        ack = yield from expect(m.RemovePath(path=rpaths.worker_dir(r.name), recursive=True, note="worker dir",
                                             effect=effects.worker(r.name, "remove")), m.Ack)
        if not ack.ok:
            raise fail(ack.error)
