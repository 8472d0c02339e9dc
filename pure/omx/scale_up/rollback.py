"""The scale-up rollback (docs/scale-up.md, "Rollback"): undo exactly what this run created; keep as
debt what cannot be proven ours."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable

from attrs import frozen
from returns.result import Failure

from pure import model as m
from pure import tmux as t
from pure.agents import supervise
from pure.omx import dispatch as dsp
from pure.omx import effects, kept_workers, transcripts, txn
from pure.omx import worktree as wt
from pure.omx.locks import Barrier, with_barrier
from pure.omx.records import ConfigPatch, JsonObject, Member, membership, patch_json, to_json
from pure.omx.scale_up import undo
from pure.omx.scale_up.config import (
    json_object,
    recovered_texts,
    saved_config_text,
)
from pure.omx.scale_up.run import (
    Abort,
    ScaleUpRun,
    StepFailure,
    T,
    acked,
    error_done,
    positive_or,
)
from pure.omx.scale_up.undo import InFlight
from pure.omx.scale_up.worker import leader_event
from pure.omx.state import read_team_state
from pure.program import Gen, PlanError, changing, expect, fail, uninterrupted

# ------------------------------------------------------------------------------------------ rollback


def _persistence_failure(error: BaseException) -> str:
    message = error.outcome.message if isinstance(error, PlanError) else str(error)
    return f"Error: {message}"


def _rollback_workers(run: ScaleUpRun, in_flight: InFlight) -> list[Member]:
    """The workers this run added or launched, and the one in flight; of a worker launched twice (its
    retry in a fresh pane, worker.py ``await_started``) the latest record, which names its live pane."""
    workers: dict[str, Member] = {}
    flying = [in_flight.record] if in_flight.record is not None else []
    for record in [*run.undo.members(), *run.undo.launched(), *flying]:
        workers[record.name] = record
    return list(workers.values())


def _tracking_commit(run: ScaleUpRun, rollback_workers: list[Member]) -> Gen[None]:
    """Tracking commit: record every rollback worker in canonical state before any teardown."""
    paths = run.paths

    def body(b: Barrier) -> Gen[None]:
        config_text, manifest_text = yield from recovered_texts(paths, b)
        loaded = read_team_state(paths, config_text, manifest_text)
        if isinstance(loaded, Failure):
            raise fail(f"team_state_malformed:{loaded.failure()}")
        # A manifest that is not a JSON object is left untouched (oh-my-codex would crash here and
        # leak the pane; the canonical read ignores such a manifest, so config.json records it).
        manifest_value = json_object(manifest_text)
        # Members are taken as the file holds them, well formed or not (an object that is not a v2
        # manifest is not checked): only this run's workers are added, every other entry written back.
        current: JsonObject = manifest_value if manifest_value is not None else json.loads(config_text)
        members = [w for w in _entries(current) if isinstance(w, dict)]
        next_index = positive_or(current.get("next_worker_index"), 1)
        for worker in rollback_workers:
            if all(w.get("name") != worker.name for w in members):
                members.append(to_json(worker))
            next_index = max(next_index, worker.index + 1)
        updates = ConfigPatch(workers=tuple(members), worker_count=len(members), next_worker_index=next_index)
        generation = yield from txn.raw_generation(paths)
        change = txn.Change(config_text, saved_config_text(loaded.unwrap(), updates))
        manifest = None if manifest_value is None else txn.Change(manifest_text, patch_json(manifest_text or "", updates))
        yield from txn.commit(paths, b, txn.Transaction(base_generation=generation or 0, tasks=(), config=change,
                                                         manifest=manifest, recover_to_new_on_failure=True))
        recorded = _recorded_panes((yield from txn.read_text(paths.config)))
        for worker in rollback_workers:
            if recorded.get(worker.name, "\0") != worker.pane_id:
                raise fail(f"scale_up_rollback_tracking_verification_failed:{worker.name}")

    yield from with_barrier(paths, body)


@frozen
class CleanupDebt:
    """One entry of ``scale_up_rollback_cleanup_debt:…``: its code and what it is about."""

    code: m.RollbackDebtKind
    subject: str

    @property
    def text(self) -> str:
        return f"{self.code}:{self.subject}"


def _authorize(run: ScaleUpRun, rollback_workers: list[Member], in_flight: InFlight,
               debts: list[CleanupDebt]) -> tuple[list[str], list[t.TeardownTarget]]:
    """Which panes may be killed: the candidates, and those this run may kill (pinned and tagged by it)."""
    candidates: list[str] = []
    tagged = run.undo.tagged_panes()
    for pane in [*(w.pane_id for w in rollback_workers), in_flight.pane]:
        if isinstance(pane, str) and pane.startswith("%") and pane not in candidates:
            candidates.append(pane)
    targets: list[t.TeardownTarget] = []
    for pane in candidates:
        owners = [w for w in rollback_workers if w.pane_id == pane]
        pid = owners[0].pid if len(owners) == 1 else None
        server = owners[0].tmux_server if len(owners) == 1 else None
        if pid is None or not t.is_positive_pid(pid):
            debts.append(CleanupDebt("pane_pid_unpinned", pane))
        elif pane not in tagged:
            debts.append(CleanupDebt("pane_owner_unverified", pane))
        else:
            targets.append(t.TeardownTarget(pane_id=pane, pid=pid, server=server))
    return candidates, targets


def _membership_commit(run: ScaleUpRun, unresolved: list[Member]) -> Gen[None]:
    """Membership commit: canonical membership = baseline + unresolved workers, with their tasks."""
    paths = run.paths
    keep = {w.name for w in unresolved}

    def body(b: Barrier) -> Gen[None]:
        config_now, manifest_now = yield from recovered_texts(paths, b)
        base = run.base_state.config
        members = (*base.workers, *unresolved)
        next_index = max([positive_or(base.next_worker_index, 1), *(w.index + 1 for w in unresolved)])
        updates = membership(members, next_index)
        config = txn.Change(config_now, saved_config_text(run.base_state, updates))
        manifest = None
        if json_object(run.base_manifest_text) is None and run.base_manifest_text is not None:
            # The baseline manifest was not a JSON object (the canonical read ignored it): restore its bytes.
            if manifest_now != run.base_manifest_text:
                manifest = txn.Change(manifest_now, run.base_manifest_text)
        elif run.base_manifest_text is not None or manifest_now is not None:
            manifest = txn.Change(manifest_now, None if run.base_manifest_text is None
                                  else patch_json(run.base_manifest_text, updates))
        changes: list[txn.TaskChange] = []
        for task in run.undo.of(undo.Task):
            old = yield from txn.read_text(paths.task(task.task_id))
            if old is None:
                continue
            changes.append(txn.TaskChange(task.task_id, old, old if task.owner in keep else None))
        after: str | None = None
        if "rollback-membership-config-persistence" in run.inject:
            after = "config"
        elif "rollback-membership-manifest-persistence" in run.inject:
            after = "manifest"
        generation = yield from txn.raw_generation(paths)
        yield from txn.commit(paths, b, txn.Transaction(
            base_generation=generation or 0, tasks=tuple(changes), config=config, manifest=manifest,
            recover_to_new_on_failure=True, retain_journal_on_success=True,
            fail_rollback_persistence="rollback-membership-persistence" in run.inject,
            fail_rollback_persistence_after=after,  # type: ignore[arg-type]
        ))
        recorded = _recorded_panes((yield from txn.read_text(paths.config)))
        for worker in unresolved:
            if recorded.get(worker.name, "\0") != worker.pane_id:
                raise fail(f"scale_up_rollback_membership_verification_failed:{worker.name}")
        for worker in _rollback_workers(run, InFlight()):
            if worker.name not in keep and worker.name in recorded and not _in_baseline(run, worker.name):
                raise fail(f"scale_up_rollback_membership_verification_failed:{worker.name}")
        yield from txn.finalize(paths, b)

    yield from with_barrier(paths, body)


def _entries(value: JsonObject) -> list[object]:
    workers = value.get("workers")
    return workers if isinstance(workers, list) else []


def _recorded_panes(config_text: str | None) -> dict[object, object]:
    """What ``config.json`` as just written records: each member's name and pane, read from the bytes
    themselves (a commit is verified against the file, not against what panefleet meant to write)."""
    written = json_object(config_text) or {}
    return {w.get("name"): w.get("pane_id") for w in _entries(written) if isinstance(w, dict)}


def _in_baseline(run: ScaleUpRun, name: str) -> bool:
    base = json_object(run.base_manifest_text) or json_object(run.base_config_text) or {}
    return any(isinstance(w, dict) and w.get("name") == name for w in _entries(base))


def _guard(action: Callable[[], Gen[T]]) -> Gen[tuple[T | None, str | None]]:
    """Run a sub-program; a failure becomes its message instead of ending the rollback."""
    try:
        value = yield from action()
    except PlanError as error:
        return None, error.outcome.message
    except (StepFailure, wt.WorktreeError) as error:
        return None, str(error)
    return value, None


def rollback(run: ScaleUpRun, abort: Abort) -> Gen[m.Done]:
    """Undo what the run created, with interrupts held: one that comes during the undo is answered by
    it, never parts it (docs/design-notes.md, "Interrupts")."""
    return (yield from uninterrupted(_rollback(run, abort), answers=True))


def _rollback(run: ScaleUpRun, abort: Abort) -> Gen[m.Done]:
    paths, in_flight = run.paths, run.undo.in_flight()
    rollback_workers = _rollback_workers(run, in_flight)
    _, problem = yield from _guard(lambda: _tracking_commit(run, rollback_workers))
    if problem is not None:
        return error_done(f"scale_up_rollback_membership_persistence_failed:Error: {problem}")
    names = [w.name for w in rollback_workers]
    debts: list[CleanupDebt] = []
    _, problem = yield from _guard(lambda: dsp.remove_requests_for(paths, names))
    if problem is not None:
        debts.append(CleanupDebt("authoritative_dispatch_cleanup_failed", str(problem)))
    candidates, resolved, warnings = yield from _remove_panes(run, rollback_workers, in_flight, debts)
    unresolved_panes = {p for p in candidates if p not in resolved}
    unresolved = [w for w in rollback_workers if w.pane_id in unresolved_panes]
    unresolved_names = {w.name for w in unresolved}
    if in_flight.worker and in_flight.pane in unresolved_panes:
        unresolved_names.add(in_flight.worker)
    try:
        yield from _membership_commit(run, unresolved)
    except PlanError as error:
        journal = yield from expect(m.Stat(path=paths.journal), m.Value)
        prefix = "" if journal.value != "absent" else "no_recoverable_journal:"
        return error_done(f"scale_up_rollback_membership_persistence_failed:{prefix}{_persistence_failure(error)}")
    _, problem = yield from _guard(lambda: _canonical_cleanup(run, rollback_workers, in_flight, unresolved_names))
    if problem is not None:
        debts.append(CleanupDebt("canonical_cleanup_failed", str(problem)))
    codes = [(d.code, d.subject) for d in debts]
    records = {w.name: kept_workers.record_step(paths, w, kept_workers.debt_codes(w.pane_id, codes),
                                                   abort.message) for w in unresolved}
    _, problem = yield from _guard(lambda: _resource_cleanup(run, unresolved_names, records))
    if problem is not None:
        debts.append(CleanupDebt("resource_cleanup_failed", str(problem)))
    if not debts:
        return transcripts.noted(error_done(abort.message), transcripts.with_warnings({}, warnings))
    joined = ";".join(d.text for d in debts)
    reason = f"scale_up_rollback_cleanup_debt:{joined}; retry cleanup for [{','.join(names)}]"
    _, problem = yield from _guard(lambda: leader_event(paths, reason))
    if problem is not None:
        joined += f";cleanup_debt_event_failed:{problem}"
    message = f"scale_up_rollback_cleanup_debt:{joined}"
    debt = tuple(m.Debt(kind=d.code, subject=d.subject, reason=abort.message) for d in debts)
    done = m.Done(outcome=m.Outcome(status="debt", result=m.JsonValue({"ok": False, "error": message}),
                                    message=message), debt=debt)
    return transcripts.noted(done, transcripts.with_warnings({}, warnings))


def _remove_panes(run: ScaleUpRun, rollback_workers: list[Member], in_flight: InFlight,
                  debts: list[CleanupDebt]) -> Gen[tuple[list[str], set[str], list[str]]]:
    """Kill the panes this run may kill, each one's transcript kept first (``pure/omx/transcripts.py``):
    the candidates, the panes resolved, and why a pane it killed has no transcript."""
    candidates, targets = _authorize(run, rollback_workers, in_flight, debts)
    names = {w.pane_id: w.name for w in rollback_workers}
    kept = []
    for target in targets:  # each split with its worker's start-up (pure/omx/scale_up/worker.py)
        kept.append((yield from changing(effects.rolled_back(names[target.pane_id]), transcripts.keep(
            run.paths, names[target.pane_id], target.pane_id, target.pid, run.owner, target.server))))
    if run.supervised:
        # A CLI that exited during start-up left its pane dead (remain-on-exit): remove it first, so
        # that the teardown below proves it absent instead of leaving a dead pane on screen.
        for target in targets:
            if target.pid is not None:
                problem = yield from changing(effects.rolled_back(names[target.pane_id]), supervise.remove_dead(
                    target.pane_id, target.pid, run.owner, target.server))
                if problem is not None:
                    debts.append(CleanupDebt("pane_teardown_failed", target.pane_id))
    resolved: set[str] = set()
    report: t.TeardownReport | None = None
    if targets:
        report, problem = yield from _guard(lambda: t.teardown(
            targets, owner_id=run.owner, authorize=True,
            leader_pane_id=run.config.leader_pane_id, hud_pane_id=run.config.hud_pane_id,
            effects={target.pane_id: effects.rolled_back(names[target.pane_id]) for target in targets}))
        if report is None:
            debts.append(CleanupDebt("pane_cleanup_exception", str(problem)))
        else:
            resolved = set(report.resolved_ids())
            failed = report.failed_kills()
            proof = report.proof_failures()
            if failed or proof:  # proof failures include pid/owner refusals (reason pane_pid_changed)
                if failed:
                    debts.append(CleanupDebt("pane_teardown_failed", ",".join(failed)))
                if proof:
                    debts.append(CleanupDebt("pane_proof_unavailable", ",".join(f"{r.pane_id}:{r.reason}" for r in proof)))
                direct = set(failed) | {r.pane_id for r in proof}
                rest = [p for p in candidates if p not in resolved and p not in direct]
                if rest:
                    debts.append(CleanupDebt("pane_teardown_unresolved", ",".join(rest)))
    return candidates, resolved, transcripts.lost(kept, report)


def _canonical_cleanup(run: ScaleUpRun, rollback_workers: list[Member], in_flight: InFlight,
                       unresolved: set[str]) -> Gen[None]:
    """Canonical cleanup: tasks of resolved workers and their worker directories go."""
    paths = run.paths
    for task in run.undo.of(undo.Task):
        if task.owner not in unresolved:
            yield from acked(m.RemovePath(path=paths.task(task.task_id), effect=m.effect(
                "remove", "task", f"task {task.task_id}", "removed again (rolled back)")))
    doomed = [w.name for w in rollback_workers if w.name not in unresolved]
    if in_flight.worker and in_flight.worker not in unresolved and in_flight.worker not in doomed:
        doomed.append(in_flight.worker)
    for name in doomed:
        yield from acked(m.RemovePath(path=paths.worker_dir(name), recursive=True, effect=effects.rolled_back(name)))
        kind = yield from expect(m.Stat(path=paths.worker_dir(name)), m.Value)
        if kind.value != "absent":
            raise StepFailure(f"worker directory still present: {paths.worker_dir(name)}")


def _resource_cleanup(run: ScaleUpRun, unresolved: set[str], kept: dict[str, m.WriteFile]) -> Gen[None]:
    """Resource cleanup: root AGENTS, created worktrees (and branches), prepared dirs, startup scripts,
    and the intents (``pure/omx/strays.py``) but of a pane neither proven gone nor kept as a member, or
    of a worktree that could not be removed. A worker ``kept`` as a member gets its record instead
    (``pure/omx/kept_workers.py``)."""
    paths = run.paths
    problems: list[str] = []
    log = run.undo
    for agents in log.of(undo.RootAgents):
        if agents.worker in unresolved or log.tree(agents.worker) is not None:
            continue  # a created worktree goes away whole; an unresolved one stays as it is
        yield from changing(effects.rolled_back(agents.worker), wt.restore_root_agents(agents.tree_path, agents.backup))
    kept_trees: set[str] = set()  # a worktree not removed keeps its intent, for the next command to retry
    for made in log.of(undo.Tree):
        if made.worker not in unresolved:
            found = yield from changing(effects.rolled_back(made.worker), wt.remove(made.tree))
            if found:
                kept_trees.add(made.worker)
            problems += found
    folders = [folder.worker for folder in log.of(undo.Folder)]
    for name in folders:
        if name not in unresolved:
            yield from acked(m.RemovePath(path=paths.worker_dir(name), recursive=True, effect=effects.rolled_back(name)))
    for script in log.of(undo.Script):
        if script.worker not in unresolved:
            yield from acked(m.RemovePath(path=script.path, effect=effects.rolled_back(script.worker)))
    for worker in folders:  # an intent is written from a worker's worktree or split on
        if worker in kept:
            yield from acked(kept[worker])
        elif worker not in unresolved and worker not in kept_trees:
            yield from acked(m.RemovePath(path=paths.intent(worker), effect=effects.rolled_back(worker)))  # its pane gone
    if not run.runtime_existed and not unresolved and not kept_trees:  # it holds the kept intents
        yield from acked(m.RemovePath(path=paths.runtime_dir, recursive=True, effect=m.effect(
            "remove", "file", posixpath.basename(paths.runtime_dir), "removed again (rolled back)")))
    for instructions in log.of(undo.Instructions):
        if not unresolved:
            yield from acked(m.RemovePath(path=instructions.path, effect=m.effect(
                "remove", "file", posixpath.basename(instructions.path), "removed again (rolled back)")))
    if problems:
        raise StepFailure("; ".join(problems))


