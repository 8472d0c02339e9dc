"""Worker git worktrees for scale-up (docs/scale-up.md, "Worktrees"), as pure sub-programs over ``git`` calls.

* mode: ``config.worktree_mode`` when set, else derived from existing workers (any detached ⇒
  detached; one common branch prefix ``X`` of ``X/worker-N`` ⇒ named ``X``; else detached);
* path ``<repoRoot>/.omx/team/<team>/worktrees/<worker>``; named mode branch ``<name>/<worker>``
  created from ``HEAD``; detached mode ``git worktree add --detach … HEAD``;
* a path that already holds a worktree of the same repository is reused (and never removed by a
  rollback); a half-created worktree is proven before it is registered for removal.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable

from attrs import frozen

from pure import model as m
from pure.omx.records import TeamConfig
from pure.program import Gen, expect


@frozen(kw_only=True)
class WorktreeMode:
    enabled: bool
    detached: bool
    name: str | None

    def as_json(self) -> dict[str, object]:
        return {"enabled": self.enabled, "detached": self.detached, "name": self.name}


@frozen(kw_only=True)
class Worktree:
    repo_root: str
    path: str
    branch: str | None
    detached: bool
    created: bool
    branch_created: bool


class WorktreeError(Exception):
    """A git step failed; the message is what scale-up reports after ``<worker>:``.

    ``half`` is a worktree git left behind although the step failed, proven to be the one this
    run asked for (same repository, expected HEAD): the rollback removes it like a created one."""

    def __init__(self, message: str, half: Worktree | None = None) -> None:
        super().__init__(message)
        self.half = half


_WORKER_BRANCH = re.compile(r"(.+)/worker-[0-9]+")


def resolve_mode(config: TeamConfig) -> tuple[WorktreeMode | None, bool]:
    """The worktree mode of a team and whether it was derived (to be persisted in memory)."""
    if config.workspace_mode != "worktree":
        return None, False
    raw = config.worktree_mode
    if isinstance(raw, dict) and raw.get("enabled") is True:
        name = raw.get("name") if isinstance(raw.get("name"), str) and raw.get("name") else None
        detached = raw.get("detached") is not False or name is None
        return WorktreeMode(enabled=True, detached=detached, name=None if detached else name), False
    if any(w.worktree_detached is True for w in config.workers):
        return WorktreeMode(enabled=True, detached=True, name=None), True
    prefixes = set()
    for worker in config.workers:
        branch = worker.worktree_branch
        match = _WORKER_BRANCH.fullmatch(branch) if branch is not None else None
        if match is not None:
            prefixes.add(match.group(1))
    if len(prefixes) == 1:
        return WorktreeMode(enabled=True, detached=False, name=prefixes.pop()), True
    return WorktreeMode(enabled=True, detached=True, name=None), True


def worktree_path(repo_root: str, team: str, worker: str) -> str:
    return posixpath.join(repo_root, ".omx", "team", team, "worktrees", worker)


def git(cwd: str, *args: str, mutates: bool = False) -> Gen[m.Proc]:
    return (yield from expect(m.Run(tool="git", args=tuple(args), cwd=cwd, mutates=mutates), m.Proc))


def _out(proc: m.Proc) -> str:
    return proc.stdout.strip()


def _failure(args: tuple[str, ...], proc: m.Proc) -> str:
    detail = proc.stderr.strip() or f"exit {proc.exit_code}"
    return f"git {' '.join(args)} failed: {detail}"


def repo_root(cwd: str) -> Gen[str]:
    proc = yield from git(cwd, "rev-parse", "--show-toplevel")
    if proc.exit_code != 0 or not _out(proc):
        raise WorktreeError(f"worktree mode requires a git repository at {cwd}")
    real = yield from expect(m.RealPath(path=_out(proc)), m.Value)
    return real.value


def _common_dir(cwd: str) -> Gen[str | None]:
    proc = yield from git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if proc.exit_code != 0 or not _out(proc):
        return None
    real = yield from expect(m.RealPath(path=_out(proc)), m.Value)
    return real.value


def _branch_exists(root: str, branch: str) -> Gen[bool]:
    proc = yield from git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
    return proc.exit_code == 0


def _head_matches(path: str, branch: str | None) -> Gen[bool]:
    proc = yield from git(path, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch is None:
        # --quiet answers exactly 1 for a detached HEAD; a call that failed otherwise (not a
        # repository: 128, timed out: None) proves nothing.
        return proc.exit_code == 1
    return proc.exit_code == 0 and _out(proc) == branch


def prove_worktree(root: str, path: str, branch: str | None) -> Gen[bool]:
    """The path is a worktree of ``root``'s repository with the expected HEAD."""
    kind = yield from expect(m.Stat(path=path), m.Value)
    if kind.value != "dir":
        return False
    mine = yield from _common_dir(root)
    theirs = yield from _common_dir(path)
    if mine is None or theirs != mine:
        return False
    return (yield from _head_matches(path, branch))


def ensure(root: str, team: str, worker: str, mode: WorktreeMode,
           announce: Callable[[Worktree], Gen[None]] | None = None) -> Gen[Worktree]:
    """The worker's worktree: the one at its path when it is proven this repository's, else a new one.
    ``announce`` runs right before ``git worktree add`` with the worktree about to be made (the
    scale-up's durable intent, pure/omx/strays.py ``intent_step``)."""
    path = worktree_path(root, team, worker)
    branch = None if mode.detached else f"{mode.name}/{worker}"
    kind = yield from expect(m.Stat(path=path), m.Value)
    if kind.value != "absent":
        if (yield from prove_worktree(root, path, branch)):
            return Worktree(repo_root=root, path=path, branch=branch, detached=mode.detached, created=False,
                            branch_created=False)
        raise WorktreeError(f"worktree_path_occupied:{path}")
    existed = False
    args: tuple[str, ...]
    if branch is None:
        args = ("worktree", "add", "--detach", path, "HEAD")
    else:
        existed = yield from _branch_exists(root, branch)
        args = ("worktree", "add", path, branch) if existed else ("worktree", "add", "-b", branch, path, "HEAD")
    if announce is not None:
        yield from announce(Worktree(repo_root=root, path=path, branch=branch, detached=mode.detached, created=True,
                                     branch_created=branch is not None and not existed))
    proc = yield from git(root, *args, mutates=True)
    if proc.exit_code != 0:
        half = None
        if (yield from prove_worktree(root, path, branch)):
            half = Worktree(repo_root=root, path=path, branch=branch, detached=mode.detached, created=True,
                            branch_created=branch is not None and not existed)
        raise WorktreeError(_failure(args, proc), half)
    return Worktree(repo_root=root, path=path, branch=branch, detached=mode.detached, created=True,
                    branch_created=branch is not None and not existed)


def remove(tree: Worktree) -> Gen[list[str]]:
    """Remove a worktree this run created (and the branch it created). Returns problems."""
    problems: list[str] = []
    args: tuple[str, ...]
    kind = yield from expect(m.Stat(path=tree.path), m.Value)
    if kind.value != "absent":
        args = ("worktree", "remove", "--force", tree.path)
        proc = yield from git(tree.repo_root, *args, mutates=True)
        if proc.exit_code != 0:
            problems.append(_failure(args, proc))
    if tree.branch is not None and tree.branch_created and not problems:
        args = ("branch", "-D", tree.branch)
        proc = yield from git(tree.repo_root, *args, mutates=True)
        if proc.exit_code != 0:
            problems.append(_failure(args, proc))
    return problems


def intent_record(tree: Worktree) -> dict[str, object]:
    """A worktree a run is about to make, as its durable intent names it (pure/omx/strays.py)."""
    return {"repo_root": tree.repo_root, "path": tree.path, "branch": tree.branch, "branch_created": tree.branch_created}


def from_intent(value: object, team: str, worker: str) -> Worktree | None:
    """The worktree an intent names, only when it is where this team's ``worker`` gets its worktree
    (``worktree_path``) and on no branch but one of that worker's; None otherwise (nothing to remove)."""
    if not isinstance(value, dict):
        return None
    root, path, branch, created = (value.get(k) for k in ("repo_root", "path", "branch", "branch_created"))
    if not (isinstance(root, str) and posixpath.isabs(root) and path == worktree_path(root, team, worker)
            and (branch is None or isinstance(branch, str) and _WORKER_BRANCH.fullmatch(branch)
                 and branch.endswith(f"/{worker}")) and isinstance(created, bool)):
        return None
    return Worktree(repo_root=root, path=path, branch=branch, detached=branch is None, created=True,
                    branch_created=created)


def remove_left(tree: Worktree) -> Gen[tuple[bool, list[str]]]:
    """Remove a worktree a run that did not finish was about to make (its intent names it): only when it
    is proven this repository's worktree with the intended HEAD; a branch the run was creating goes
    too, also when the worktree itself was never made. Whether anything was removed, and the problems
    (what was kept, and why)."""
    kind = yield from expect(m.Stat(path=tree.path), m.Value)
    if kind.value == "absent":
        if tree.branch is None or not tree.branch_created or not (yield from _branch_exists(tree.repo_root,
                                                                                            tree.branch)):
            return False, []
        args = ("branch", "-D", tree.branch)  # git refuses a branch some worktree has checked out
        proc = yield from git(tree.repo_root, *args, mutates=True)
        return (True, []) if proc.exit_code == 0 else (False, [_failure(args, proc)])
    if not (yield from prove_worktree(tree.repo_root, tree.path, tree.branch)):
        return False, [f"worktree_unproven:{tree.path}"]
    problems = yield from remove(tree)
    return not problems, problems


# ------------------------------------------------------------------------- worktree-root AGENTS.md


def backup_path(tree_path: str) -> Gen[str]:
    proc = yield from git(tree_path, "rev-parse", "--path-format=absolute", "--git-path",
                          "omx/root-agents-backup.json")
    if proc.exit_code != 0 or not _out(proc):
        raise WorktreeError(_failure(("rev-parse", "--git-path", "omx/root-agents-backup.json"), proc))
    return _out(proc)


def install_root_agents(tree_path: str, content: str) -> Gen[str]:
    """Write ``<worktree>/AGENTS.md`` after saving what was there; returns the backup path."""
    target = posixpath.join(tree_path, "AGENTS.md")
    kind = yield from expect(m.Stat(path=target), m.Value)
    if kind.value == "dir":
        raise WorktreeError("EISDIR: illegal operation on a directory, read")
    before = yield from expect(m.ReadFile(path=target), m.FileData)
    if before.error:
        raise WorktreeError(before.error)
    backup = yield from backup_path(tree_path)
    record: dict[str, object] = {"existed": before.content is not None}
    if before.content is not None:
        record["previousContent"] = before.content
    ack = yield from expect(m.WriteFile(path=backup, content=json.dumps(record, indent=2)), m.Ack)
    if not ack.ok:
        raise WorktreeError(ack.error)
    ack = yield from expect(m.WriteFile(path=target, content=content), m.Ack)
    if not ack.ok:
        raise WorktreeError(ack.error)
    return backup


def restore_root_agents(tree_path: str, backup: str) -> Gen[None]:
    data = yield from expect(m.ReadFile(path=backup), m.FileData)
    if data.content is None:
        return
    record = json.loads(data.content)
    target = posixpath.join(tree_path, "AGENTS.md")
    if isinstance(record, dict) and record.get("existed") and isinstance(record.get("previousContent"), str):
        ack = yield from expect(m.WriteFile(path=target, content=record["previousContent"]), m.Ack)
    else:
        ack = yield from expect(m.RemovePath(path=target), m.Ack)
    if not ack.ok:
        raise WorktreeError(ack.error)
    yield from expect(m.RemovePath(path=backup), m.Ack)
