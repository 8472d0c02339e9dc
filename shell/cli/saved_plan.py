"""Saved plans: ``--plan-out FILE`` writes a dry run down; ``panefleet apply FILE`` carries it out
or refuses; ``panefleet show FILE`` renders it.

A plan file (JSON, ``format`` ``PLAN_FORMAT``) holds the operation and its request, the journal the
dry run computed (real reads, predicted changes), its predicted decision and changes
(``shell/cli/plan_view.py``), the team state root (or, for herdr commands, panefleet's state directory)
and tmux server it was made against, the panefleet version, and a fingerprint (SHA-256 of all of
that), so a changed or damaged file is refused rather than half-trusted.

``apply`` follows Terraform's saved-plan contract: it runs the plan's request for real through
:class:`CheckedExecutor`, and refuses (exit 4) before anything is changed when a fact the plan read
differs now — a pane gone or with another pid, a file changed, another listing, an answer of tmux, git
or herdr — naming the first that differs. The plan's reads before the run's first change are compared
as they come, those after it are read again just before it; which reads are facts is the rule of
:func:`comparable`. Exempt are the reads whose answers legitimately differ between two runs: the clock
and fresh ids (a plan's ids are placeholders), locks (a dry run takes none; a real run waits for a held
lock as usual), waits, and ``tmux capture-pane`` (a pane's screen changes as its agent works, and no
proof rests on it); a step built from an exempt answer is expected with the real answer in it
(:class:`CheckedExecutor`). From the first change on, the run is the ordinary one: every mutation still
has its own proofs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import posixpath
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import frozen

from pure import model as m
from pure.tmux import facts
from shell.cli.plan_file import KIND, PLAN_FORMAT, PlanFileError, fingerprint, state_root_of, version

if TYPE_CHECKING:
    from pure.program import ProgramFactory


class StalePlan(Exception):
    """A fact the plan read (:func:`comparable`) is found otherwise, or the run asks for another step."""

    def __init__(self, step: int, fact: str, planned: object = None, observed: object = None) -> None:
        super().__init__(fact)
        self.step = step
        self.fact = fact
        self.planned = planned
        self.observed = observed


@frozen
class SavedPlan:
    path: str
    data: dict[str, Any]
    operation: str
    request: Any
    journal: list[m.Entry]
    decision: m.Done


def _team_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("OMX_")}


# ------------------------------------------------------------------------------------------- read


def load_plan(path: str) -> SavedPlan:
    from pure import wire
    from shell.cli.operation import load_operations

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PlanFileError(f"cannot read the plan {path}: {reason}", code=2) from None
    try:
        data = json.loads(text)
    except ValueError:
        raise PlanFileError(f"{path} is not a panefleet plan (not JSON)", code=2) from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise PlanFileError(f"{path} is not a panefleet plan (make one with a command's --plan-out FILE)", code=2)
    if data.get("format") != PLAN_FORMAT:
        raise PlanFileError(f"{path} is a plan of format {data.get('format')!r} (panefleet {data.get('panefleetVersion')}); "
                        f"this panefleet reads plans of format {PLAN_FORMAT} only: make the plan again")
    if data.get("fingerprint") != fingerprint(data):
        raise PlanFileError(f"{path} does not match its fingerprint: the file was changed after it was written; "
                        "make the plan again")
    if data.get("panefleetVersion") != version():
        raise PlanFileError(f"{path} was made by panefleet {data.get('panefleetVersion')}, this is panefleet {version()}: "
                        "a plan is applied by the version that made it; make the plan again")
    operation = str(data.get("operation"))
    op = load_operations().get(operation)
    if op is None:
        raise PlanFileError(f"{path}: unknown operation {operation!r}")
    request = wire.structure(data.get("request"), op.request_type).value_or(None)
    decision = wire.structure(data.get("decision"), m.Done).value_or(None)
    entries = [wire.structure(raw, m.Entry).value_or(None) for raw in data.get("journal") or []]
    if request is None or decision is None or any(e is None for e in entries):
        raise PlanFileError(f"{path}: the plan's request, journal or decision does not fit {operation}")
    return SavedPlan(path=path, data=data, operation=operation, request=request,
                     journal=[e for e in entries if e is not None], decision=decision)


# ------------------------------------------------------------------------------------ the checker

EXEMPT_RUN_VERBS = {"tmux": frozenset({"capture-pane"})}


def exempt(step: m.Step) -> bool:
    """Reads whose answers legitimately differ between the plan and the run (module docstring)."""
    if isinstance(step, (m.Clock, m.FreshId, m.AcquireLock, m.ReleaseLock, m.Sleep)):
        return True
    if isinstance(step, m.Run):
        return bool(step.args) and step.args[0] in EXEMPT_RUN_VERBS.get(step.tool, frozenset())
    return False


FILE_READS = (m.ReadFile, m.ListDir, m.Stat, m.RealPath)
FILE_CHANGES = (m.WriteFile, m.AppendFile, m.RemovePath, m.MakeDir, m.AcquireLock, m.ReleaseLock)
GIT_WORKTREE_READS = frozenset({"status", "ls-files"})  # git reads that look at the files of the tree


def answered_by_reading(step: m.Step) -> bool:
    """Whether a dry run answers ``step`` by reading it (``shell/run/dryrun.py``: tmux and git verbs of
    ``READ_ONLY``, herdr reads through ``shell/cli/herdr.py`` ``herdr_predictor``, files, store reads)
    rather than with a prediction, which is no fact to compare."""
    from pure.program import is_mutation
    from shell.run.dryrun import READ_ONLY

    if is_mutation(step):
        return False
    if isinstance(step, m.Run):
        if step.tool == "herdr":
            return True
        return bool(step.args) and step.args[0] in READ_ONLY.get(step.tool, frozenset())
    return isinstance(step, (*FILE_READS, m.Store))


def _related(a: str, b: str) -> bool:
    """The same path, or one under the other."""
    a, b = posixpath.normpath(a), posixpath.normpath(b)
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def changes_answer(earlier: m.Step, read: m.Step) -> bool:
    """Whether ``earlier``, a step before ``read`` in the plan, may change what ``read`` answers (the
    dry run answered ``read`` from its predictions, or the real run's answer follows its own change)."""
    from pure.program import is_mutation

    if isinstance(earlier, m.Run):
        # tmux, git, herdr: beyond their own state, the agent of a pane they start, stop or type into
        # may change anything
        return earlier.mutates
    if isinstance(earlier, m.Store):
        return is_mutation(earlier) and isinstance(read, (m.Store, *FILE_READS))  # the store is files
    if isinstance(earlier, FILE_CHANGES):  # one path made, written, removed (a lock: its folder)
        if isinstance(read, FILE_READS):
            return _related(earlier.path, read.path)
        return isinstance(read, m.Run) and read.tool == "git" and bool(read.args) and read.args[0] in GIT_WORKTREE_READS
    return False


def comparable(journal: Sequence[m.Entry]) -> list[bool]:
    """The plan's facts (True at their index): the reads a real run must find unchanged. A read is one
    when it is not exempt, the dry run answered it by reading (:func:`answered_by_reading`), and no step
    before it in the plan may change its answer (:func:`changes_answer`) — else its planned answer is
    the dry run's prediction of that change, or the real answer follows the run's own change, and
    neither shows the plan stale. So: every read before the first change (but those of the run's own
    lock folders, which hold its pid and token, ``shell/run/fs.py``), and after it every read no earlier
    change reaches. A file step or lock reaches its path, what is under and above it, and git's view of
    the tree; a store change the store; a mutating run of tmux, git or herdr everything (a pane's agent
    it starts, stops or types into may change anything). For scale-down, the pane table and owner tag
    read after it marks the worker draining and commits the config (files only) are facts; the reads
    after its ``kill-pane`` are not."""
    from pure.program import is_mutation

    facts: list[bool] = []
    changes: list[m.Step] = []
    ran = False  # a mutating run came: it reaches every read after it
    for entry in journal:
        step = entry.step
        facts.append(not ran and not exempt(step) and answered_by_reading(step)
                     and not any(changes_answer(earlier, step) for earlier in changes))
        if isinstance(step, m.Run) and step.mutates:
            ran = True
        elif is_mutation(step) or isinstance(step, FILE_CHANGES):
            changes.append(step)
    return facts


def _another(step: m.Step, value: str) -> str:
    """Another answer to the exempt ``step`` than ``value``: a time 1.001 s later, another id."""
    if isinstance(step, m.Clock):
        from datetime import datetime, timedelta

        try:
            later = datetime.fromisoformat(value.replace("Z", "+00:00")) + timedelta(seconds=1, milliseconds=1)
        except ValueError:
            return value + "0"
        return later.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]


class CheckedExecutor:
    """Runs steps for real; until the first change, each must be the step the plan's program asks for
    and observe what the plan observed (:func:`comparable` reads), else :class:`StalePlan` is raised
    before the step after it runs. Just before the first change, the plan's comparable reads after it
    are read again, out of order (reading changes nothing, and no step of the plan before them changes
    their answers), and must observe what the plan observed too — so any difference refuses before any
    change.

    Which step the plan asks for is found by replaying ``program`` (``pure/program.py`` ``Driver``) on
    the plan's observations, with the real answers of the exempt reads made so far (the clock, fresh
    ids) in place of the plan's: a step built from them in any form (as is, as a UUID, a lease time
    computed from the clock) is then exactly the run's. A later read whose step would change with an
    exempt answer the run has not had yet (replayed with other answers, it differs) cannot be made
    early; it is left to the run's own proofs."""

    def __init__(self, real: Any, program: ProgramFactory, planned: Sequence[m.Entry], team_dir: str = "") -> None:
        from pure.program import Driver

        self.real = real
        self.program = program
        self.planned = list(planned)
        self.facts = comparable(self.planned)
        self.team_dir = team_dir
        self.checking = True
        self.at = 0
        self.shadow = Driver(program)  # the plan's program, fed the plan's answers (real exempt Values)
        self.known: dict[int, m.Value] = {}  # index -> the real answer of an exempt Value read
        self.exempt_note = ""
        self.ran: list[m.Entry] = []  # every step run and what it observed, for :func:`not_as_planned`

    def _note(self, step: m.Step, observed: m.Observation, planned: m.Observation) -> None:
        """An answer not compared that differs: it may be why the run then takes another path."""
        from shell.run.step_text import describe_observation, describe_step

        self.exempt_note = (f" (after `{describe_step(step)}` answered {describe_observation(observed)}; "
                            f"the plan saw {describe_observation(planned)})")

    def _replayed(self, unknown_differ: bool) -> list[m.Step | None]:
        """The step the plan's program asks for at each index of the plan, fed the plan's answers with
        the known real exempt answers; ``unknown_differ``: and other answers to the exempt reads after
        ``self.at``. None from where it ends."""
        from pure.program import Driver

        driver = Driver(self.program)
        steps: list[m.Step | None] = []
        for index, entry in enumerate(self.planned):
            decision = driver.decision()
            if not isinstance(decision, m.Next):
                break
            step = decision.steps[0]
            steps.append(step)
            answer = self.known.get(index, entry.observation)
            if unknown_differ and index > self.at and exempt(entry.step) and isinstance(answer, m.Value):
                answer = m.Value(value=_another(entry.step, answer.value))
            driver.feed(step, answer)
        return steps + [None] * (len(self.planned) - len(steps))

    def _check_reads_after_first_change(self) -> None:
        """Read again the plan's comparable reads after its first change (``self.at``), before it."""
        steps, other = self._replayed(False), self._replayed(True)
        for index in range(self.at + 1, len(self.planned)):
            step, entry = steps[index], self.planned[index]
            if not self.facts[index] or step is None or step != other[index] or step.op != entry.step.op:
                continue
            observed: m.Observation = self.real.execute(step)
            if observed != entry.observation:
                raise StalePlan(index + 1, difference(step, entry.observation, observed, self.team_dir),
                                entry.observation, observed)

    def execute(self, step: m.Step) -> m.Observation:
        observed = self._checked(step)
        self.ran.append(m.Entry(step=step, observation=observed))
        return observed

    def _checked(self, step: m.Step) -> m.Observation:
        from pure.program import is_mutation
        from shell.run.step_text import describe_step

        if not self.checking:
            return self.real.execute(step)  # type: ignore[no-any-return]
        number = self.at + 1
        decision = self.shadow.decision()
        recorded = self.planned[self.at].step if self.at < len(self.planned) else None
        expected = decision.steps[0] if isinstance(decision, m.Next) else None
        if recorded is None or expected != step or step.op != recorded.op:
            planned = f"`{describe_step(recorded)}`" if recorded is not None else "nothing more"
            raise StalePlan(number, f"the run took another path than the plan at step {number}: it asks for "
                                    f"`{describe_step(step)}` where the plan has {planned}{self.exempt_note}")
        if is_mutation(step):
            self._check_reads_after_first_change()
            self.checking = False
            return self.real.execute(step)  # type: ignore[no-any-return]
        entry = self.planned[self.at]
        observed: m.Observation = self.real.execute(step)
        self.at += 1
        answer = entry.observation  # what the shadow is fed: the plan's, so a branch of the run shows
        if observed != entry.observation:
            if exempt(step) and isinstance(observed, m.Value) and isinstance(entry.observation, m.Value):
                self.known[self.at - 1] = answer = observed
            elif self.facts[self.at - 1]:
                raise StalePlan(number, difference(step, entry.observation, observed, self.team_dir),
                                entry.observation, observed)
            else:
                self._note(step, observed, entry.observation)
        self.shadow.feed(step, answer)
        return observed

    def release_all(self) -> None:
        release = getattr(self.real, "release_all", None)
        if callable(release):
            release()

    def __getattr__(self, name: str) -> Any:
        """Everything else (``end_run``, ``calls``, how tmux answered) is the real executor's."""
        if name == "real":
            raise AttributeError(name)
        return getattr(self.real, name)


def _rows(obs: m.Observation) -> dict[str, tuple[str, ...]] | None:
    """pane -> the other fields of each row of a ``list-panes -a -F '#{pane_id}\t…'`` answer."""
    if not isinstance(obs, m.Proc) or obs.exit_code != 0:
        return None
    rows: dict[str, tuple[str, ...]] = {}
    for fields in facts.table(obs.stdout):
        if len(fields) < 2 or not fields[0].startswith("%"):
            return None
        rows[fields[0]] = tuple(fields[1:])
    return rows


def _pane_state(row: tuple[str, ...] | None) -> str:
    if row is None:
        return "absent"
    if len(row) >= 2 and row[0] in ("0", "1") and row[1].isdigit():
        return f"{'dead' if row[0] == '1' else 'live'} (pid {row[1]})"
    return "listed as `" + "\t".join(row) + "`"


def difference(step: m.Step, planned: m.Observation, observed: m.Observation, team_dir: str = "") -> str:
    """The first fact that differs, in words."""
    from shell.run.step_text import describe_observation, describe_step

    def shown(path: str) -> str:
        return os.path.relpath(path, team_dir) if team_dir and path.startswith(team_dir + "/") else path

    if isinstance(step, m.Run) and step.tool == "tmux" and step.args[:1] == ("list-panes",):
        before, after = _rows(planned), _rows(observed)
        if before is not None and after is not None:
            for pane in [*before, *(p for p in after if p not in before)]:
                if before.get(pane) != after.get(pane):
                    was, now = _pane_state(before.get(pane)), _pane_state(after.get(pane))
                    if was == now:  # the same pane and pid; another field differs (its size, its command)
                        was, now = (f"listed as `{chr(9).join(r)}`" if r is not None else "absent"
                                    for r in (before.get(pane), after.get(pane)))
                    return f"pane {pane} was {was} when the plan was made; now it is {now}"
        if isinstance(planned, m.Proc) and isinstance(observed, m.Proc):
            old, new = planned.stdout.splitlines(), observed.stdout.splitlines()
            for a, b in zip([*old, *[""] * len(new)], [*new, *[""] * len(old)], strict=False):
                if a != b:
                    return (f"the tmux pane layout changed since the plan (`{describe_step(step)[:60]}…`): "
                            f"planned `{a or '(no row)'}`, now `{b or '(no row)'}`")
    if isinstance(step, m.ReadFile) and isinstance(planned, m.FileData) and isinstance(observed, m.FileData):
        return (f"{shown(step.path)} changed since the plan: it was {describe_observation(planned)}, "
                f"now {describe_observation(observed)}")
    if isinstance(step, m.ListDir) and isinstance(planned, m.Listing) and isinstance(observed, m.Listing):
        had, has = set(planned.names or ()), set(observed.names or ())
        added, gone = sorted(has - had), sorted(had - has)
        bits = ([f"now also {', '.join(added)}"] if added else []) + ([f"no longer {', '.join(gone)}"] if gone else [])
        return f"the listing of {shown(step.path)} changed since the plan: " + ("; ".join(bits) or
                                                                                 describe_observation(observed))
    if isinstance(step, (m.Stat, m.RealPath)) and isinstance(planned, m.Value) and isinstance(observed, m.Value):
        return f"{shown(step.path)} was {planned.value} when the plan was made; now {observed.value}"
    return (f"`{describe_step(step)[:80]}` answered {describe_observation(observed)[:120]} where the plan saw "
            f"{describe_observation(planned)[:120]}")


# ------------------------------------------------------------------------------------- renderers


def renderer_for(operation: str, request: Any) -> Any:
    """The text renderer the command of ``operation`` uses (see its ``cmd_*``)."""
    from shell.cli.operation import as_run_renderer

    if operation == "team.init":
        from shell.cli.render import render_init

        return as_run_renderer(render_init, None)
    if operation == "team.scale_up":
        from shell.cli.scale_up import render_scale_up

        return as_run_renderer(None, render_scale_up)
    if operation == "team.respawn":
        from shell.cli.scale_up import render_respawn

        return as_run_renderer(render_respawn, None)
    if operation == "team.scale_down":
        from shell.cli.scale_down import render_scale_down_run

        return as_run_renderer(None, render_scale_down_run)
    if operation == "team.debt_reconcile":
        from shell.cli.scale_down import render_reconcile_run

        return as_run_renderer(None, render_reconcile_run)
    if operation in ("team.task_create", "team.task_claim"):
        from shell.cli.scale_down import render_task

        return as_run_renderer(render_task, None)
    if operation.startswith("herdr."):
        from shell.cli import herdr_text

        chosen = {"herdr.open": herdr_text.render_open, "herdr.retire": herdr_text.render_retire,
                  "herdr.reconcile": herdr_text.render_reconcile, "herdr.run_settle": herdr_text.render_run_settle,
                  "herdr.run_start": herdr_text.render_run_start(request)}.get(operation)
        return as_run_renderer(chosen, None)
    return as_run_renderer(None, None)


# ------------------------------------------------------------------------------------- commands


def planned_scene(args: argparse.Namespace, plan: SavedPlan) -> argparse.Namespace:
    """``args`` with what the planned command ran on (its team, folder, task and tmux server), for the
    sentences of a failure (shell/cli/explain.py)."""
    request = plan.request
    return argparse.Namespace(**{**vars(args), "team": getattr(request, "team", None),
                                 "cwd": getattr(request, "cwd", None), "task_id": getattr(request, "task_id", None),
                                 "tmux_socket": plan.data.get("tmuxSocket")})


def _refuse(args: argparse.Namespace, message: str, code: int = 4, **extra: Any) -> int:
    sys.stderr.write(f"panefleet apply: refused, nothing was changed: {message}\n")
    if getattr(args, "output", "text") == "json":
        from shell.cli.operation import emit_json

        emit_json({"ok": False, "error": message, "refused": True, "error_code": "plan_refused", **extra})
    return code


def _load(args: argparse.Namespace, command: str) -> SavedPlan | int:
    try:
        return load_plan(str(args.plan_file))
    except PlanFileError as exc:
        if exc.code == 2:
            from shell.cli.operation import usage_error

            return usage_error(args, command, str(exc))
        return _refuse(args, str(exc)) if command == "apply" else _show_refusal(args, str(exc))


def _show_refusal(args: argparse.Namespace, message: str) -> int:
    sys.stderr.write(f"panefleet show: {message}\n")
    if getattr(args, "output", "text") == "json":
        from shell.cli.operation import emit_json

        emit_json({"ok": False, "error": message, "error_code": "plan_unreadable"})
    return 4


def apply_plan(args: argparse.Namespace) -> int:
    from shell.cli.operation import EXIT_REFUSED, run_and_print

    plan = _load(args, "apply")
    if isinstance(plan, int):
        return plan
    env = dict(os.environ)
    if plan.operation.startswith("herdr.") and plan.operation not in ("herdr.run_start", "herdr.run_settle"):
        from shell.cli.herdr import need_herdr

        missing = need_herdr(args, env)  # a plan that drives herdr, without herdr: said as such, not as stale
        if missing is not None:
            return missing
    # the state root this environment gives the plan's request (its cwd with this environment's OMX_*
    # variables; for herdr commands, this environment's panefleet state dir)
    here = state_root_of(plan.operation, plan.request, _team_env(env) if plan.operation.startswith("team.") else env)
    if here != plan.data.get("stateRoot"):
        return _refuse(args, f"the plan was made for the state root {plan.data.get('stateRoot')}, but here it is "
                             f"{here}; apply it where it was made (same OMX_TEAM_STATE_ROOT / PANEFLEET_STATE_DIR)")
    socket = plan.data.get("tmuxSocket")
    asked = getattr(args, "tmux_socket", None)
    if asked is not None and asked != socket:
        return _refuse(args, f"the plan was made against the tmux server {socket or '(default)'}, not {asked}")
    team_dir = ""
    if plan.operation.startswith("team.") and getattr(plan.request, "team", None):
        team_dir = os.path.join(str(plan.data.get("stateRoot")), "team", str(plan.request.team))
    renderer = renderer_for(plan.operation, plan.request)
    store = None
    try:
        from shell.run.executor import Executor

        if plan.operation.startswith("herdr."):
            from shell.cli.herdr import store_handler
            from shell.store.herdr import HerdrStore, StoreError

            try:
                store = HerdrStore.open(env)
            except StoreError as exc:
                return _refuse(args, str(exc), code=1)
            real = Executor(env=env, store=store_handler(store))
        else:
            real = Executor(env=env, tmux_socket=socket if isinstance(socket, str) else None)
        from shell.cli.operation import load_operations

        op = load_operations()[plan.operation]
        checked = CheckedExecutor(real, lambda: op.program(plan.request), plan.journal, team_dir)
        try:
            return run_and_print(plan.operation, plan.request, planned_scene(args, plan), checked, env, renderer,
                                 annotate=lambda _result: not_as_planned(plan.journal, checked.ran))
        except StalePlan as stale:
            from pure import wire

            return _refuse(args, f"the plan is stale: {stale.fact}. Make a new plan ({plan.data.get('command')} "
                                 f"--plan-out FILE)", EXIT_REFUSED, error_code="plan_stale", step=stale.step,
                           planned=wire.unstructure(stale.planned) if stale.planned is not None else None,
                           observed=wire.unstructure(stale.observed) if stale.observed is not None else None)
    finally:
        if store is not None:
            store.close()


def not_as_planned(planned: Sequence[m.Entry], ran: Sequence[m.Entry]) -> dict[str, Any]:
    """What the run changed otherwise than its plan said (the effects its steps stated,
    ``shell/cli/plan_view.py``): nothing when it did as planned, else ``changesNotAsPlanned`` (told on
    stderr too). After its first change a run may take another path (an agent that does not start, a
    rollback): the plan was checked before anything changed, and this says where the run went."""
    from shell.cli.plan_view import Change, changes

    def lines(found: Sequence[Change]) -> list[str]:
        return [f"{c.action} {c.kind} {c.subject}: {c.detail}".rstrip(": ") for c in found]

    said, made = lines(changes(planned)), lines(changes(ran))
    differences = [f"planned, not made: {line}" for line in said if line not in made] + \
                  [f"made, not planned: {line}" for line in made if line not in said]
    if not differences:
        return {}
    sys.stderr.write("note: the run changed otherwise than its plan said:\n"
                     + "".join(f"  {line}\n" for line in differences))
    return {"changesNotAsPlanned": differences}


def show_plan(args: argparse.Namespace) -> int:
    from shell.cli.operation import emit_json, plan_json, plan_text

    plan = _load(args, "show")
    if isinstance(plan, int):
        return plan
    data = plan.data
    planned = planned_scene(args, plan)
    if getattr(args, "output", "text") == "json":
        answer = plan_json(plan.operation, plan.request, plan.decision, plan.journal, planned)
        answer["ok"] = True  # the plan was read; its prediction is answer["predicted"]["ok"]
        answer["plan"] = {k: data.get(k) for k in ("format", "panefleetVersion", "createdAt", "command", "operation",
                                                   "stateRoot", "tmuxSocket", "fingerprint", "request")}
        emit_json(answer)
        return 0
    sys.stdout.write(f"Saved plan {plan.path}: `{data.get('command')}`\n"
                     f"  made {data.get('createdAt')} by panefleet {data.get('panefleetVersion')} for "
                     f"{data.get('stateRoot')}" + (f" (tmux -L {data['tmuxSocket']})" if data.get("tmuxSocket") else "")
                     + f"\n  {data.get('fingerprint')}\n")
    sys.stdout.write(plan_text(plan.operation, plan.request, plan.decision, plan.journal,
                               renderer_for(plan.operation, plan.request), planned,
                               steps=bool(getattr(args, "steps", False) or getattr(args, "verbose", 0)),
                               heading="saved plan: reads as they were, changes predicted"))
    return 0
