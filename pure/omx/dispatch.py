"""Scale-up inbox, dispatch request and trigger delivery (docs/scale-up.md, "Dispatch").

The inbox is written to ``workers/<w>/inbox.md``, one dispatch request is appended to
``dispatch/requests.json`` and the trigger text is typed into the worker pane. Every keystroke
delivery is preceded by the pinned proof ``L, S, L`` (docs/tmux-proofs.md, "Proofs before every
mutation"): the pane must still be live with the pid pinned when it was created, and carry the
team's owner tag.

Delivery policy. ``transport_direct`` types the trigger right away. oh-my-codex's default
``hook_preferred_with_fallback`` first waits ``dispatch_ack_timeout_ms`` for a receipt written by a
worker-side hook and then falls back to the same keystrokes. panefleet has no worker hook that could
ever write such a receipt, so waiting would only add latency and a receipt could never be observed:
it goes straight to the fallback and says so in ``last_reason``
(``hook_receipt_unobservable:tmux_send_keys_sent``) instead of oh-my-codex's
``fallback_confirmed:…``, which would claim a wait that did not happen.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence

from attrs import evolve, frozen
from returns.result import Failure, Result, Success

from pure import model as m
from pure import tmux as t
from pure.omx import effects
from pure.omx.codec import StateError, parse_json, render_json
from pure.omx.records import DispatchRequest, JsonObject, Task, from_json, to_json
from pure.omx.state import TeamPaths
from pure.omx.txn import NOT_UTF8, malformed
from pure.program import Gen, expect, fail

TRANSPORT_DIRECT = "transport_direct"
HOOK_PREFERRED = "hook_preferred_with_fallback"


def dispatch_mode(manifest: JsonObject | None) -> str:
    """The manifest's ``policy.dispatch_mode`` (the manifest is kept as read: pure/omx/state.py ``TeamState``)."""
    policy = manifest.get("policy") if manifest is not None else None
    mode = policy.get("dispatch_mode") if isinstance(policy, dict) else None
    return TRANSPORT_DIRECT if mode == TRANSPORT_DIRECT else HOOK_PREFERRED


def trigger_message(paths: TeamPaths, worker: str, cwd: str, worktree: bool) -> str:
    if worktree:
        return (f"Read $OMX_TEAM_STATE_ROOT/team/{paths.team}/workers/{worker}/inbox.md, work now, "
                "report progress, continue assigned work or next feasible task.")
    inbox = paths.worker_file(worker, "inbox.md")
    rel = posixpath.relpath(inbox, cwd) if inbox.startswith(cwd.rstrip("/") + "/") else inbox
    return (f"Read {rel}, start work now, report concrete progress, "
            "then continue assigned work or next feasible task.")


def trigger_token(worker: str) -> str:
    """The part of every trigger that names the worker's own inbox: what its screen is searched for."""
    return f"workers/{worker}/inbox.md"


# ------------------------------------------------------------------------------------------ inbox


def _task_lines(task: Task) -> list[str]:
    lines = [f"- **Task {task.id}**: {task.subject}",
             f"  Description: {task.description}",
             f"  Status: {task.status}"]
    if task.role:
        lines.append(f"  Role: {task.role}")
    depends = task.depends_on or ()
    if depends:
        lines.append(f"  Blocked by: {', '.join(str(d) for d in depends)}")
    return lines


def render_inbox(*, team: str, worker: str, role: str, tasks: Sequence[Task], paths: TeamPaths,
                 leader_cwd: str, specialization: str | None = None, context: Sequence[str] = ()) -> str:
    """The worker's first assignment. The header and the task list have oh-my-codex's exact layout;
    the instructions say the same things (ACK, claim, transition, idle status, state root) in
    panefleet's words, without oh-my-codex's goal-workflow and verification boilerplate."""
    lines = [f"# Worker Assignment: {worker}", "", f"**Team:** {team}", f"**Role:** {role}",
             f"**Worker Name:** {worker}", "", "## Your Assigned Tasks", ""]
    for task in tasks:
        lines.extend(_task_lines(task))
    lines.append("")
    for section in context:
        lines.extend([section.rstrip("\n"), ""])
    status = paths.worker_file(worker, "status.json")
    ack = json.dumps({"team_name": team, "from_worker": worker, "to_worker": "leader-fixed",
                      "body": f"ACK: {worker} initialized"}, separators=(",", ":"))
    lines.extend([
        "## Instructions",
        "",
        "1. Before any task work, send a startup ACK to the leader:",
        f"   `omx team api send-message --input '{ack}' --json`",
        f"2. Start with the first non-blocked task; its file is `{paths.tasks_dir}/task-<id>.json` "
        '(APIs take the bare id, e.g. "1").',
        "3. Claim the task with `omx team api claim-task --json` before editing anything.",
        "4. Do the work, commit your changes, then move the task from in_progress to completed or failed "
        "with `omx team api transition-task-status --json` (include the result or the error).",
        "5. Use `omx team api release-task-claim --json` only to roll a task back to pending.",
        f'6. When idle, write {{"state": "idle", "updated_at": "<ISO time>"}} to `{status}` and wait for the '
        "leader's next instruction.",
        "7. Resolve the team state root from OMX_TEAM_STATE_ROOT, then your identity's team_state_root, then "
        f"the team config, then the leader cwd `{leader_cwd}`.",
        "8. Edit only the files your tasks describe; if you need a shared file, set your status to blocked "
        "with the reason and wait.",
        "",
    ])
    if specialization is not None:
        lines.extend(["## Your Specialization", "", f"You are operating as a **{role}** agent.", "",
                      specialization.strip(), ""])
    return "\n".join(lines)


ULTRAGOAL_ID_RE = re.compile(r"G[0-9]{3}[-\w]*", re.ASCII)


def ultragoal_section(text: str | None) -> str | None:
    """The leader-owned Ultragoal context of ``team/<team>/ultragoal-context.json`` as an inbox
    section, or None when the file is absent or not a valid leader-owned context."""
    if text is None:
        return None
    raw = parse_json(text, "ultragoal-context.json").value_or(None)
    if not isinstance(raw, dict) or raw.get("kind") != "leader_owned_ultragoal_context":
        return None
    goal_raw, title_raw = raw.get("activeGoalId"), raw.get("activeGoalTitle")
    goal = goal_raw.strip() if isinstance(goal_raw, str) else ""
    if (raw.get("goalsPath") != ".omx/ultragoal/goals.json" or raw.get("ledgerPath") != ".omx/ultragoal/ledger.jsonl"
            or raw.get("checkpointPolicy") != "fresh_leader_get_goal_required"
            or ULTRAGOAL_ID_RE.fullmatch(goal) is None):
        return None
    title = title_raw.strip() if isinstance(title_raw, str) else ""
    mode = "aggregate" if raw.get("codexGoalMode") == "aggregate" else "per_story"
    return "\n".join([
        "### Leader-owned Ultragoal context",
        "",
        f"- Active goal: {goal}" + (f" ({title})" if title else ""),
        f"- Codex goal mode: {mode}; goals in .omx/ultragoal/goals.json, ledger in .omx/ultragoal/ledger.jsonl",
        "- The leader checkpoints the goal after a fresh get_goal; workers do not own Ultragoal goal state: do not "
        "write Ultragoal ledgers, change .omx/ultragoal, or claim that a shell command changed Codex goal state.",
        "- Your task results and evidence (mention .omx/ultragoal and the goal id) feed the leader's checkpoint:",
        f'  `omx ultragoal checkpoint --goal-id {goal} --status complete --evidence "<team evidence>" '
        "--codex-goal-json <fresh get_goal JSON>`",
    ])


# -------------------------------------------------------------------------------- request records


def new_request(*, request_id: str, team: str, worker: str, index: int, pane_id: str, trigger: str,
                mode: str, now: str, made_by: str = "scale_up") -> DispatchRequest:
    return DispatchRequest(
        request_id=request_id, kind="inbox", team_name=team, to_worker=worker, worker_index=index, pane_id=pane_id,
        trigger_message=trigger, intent="followup-relaunch", inbox_correlation_key=f"{made_by}:{worker}",
        transport_preference=mode, fallback_allowed=True, status="pending", attempt_count=0, created_at=now,
        updated_at=now)


def check_requests(text: str | None, file: str) -> Result[tuple[DispatchRequest, ...], StateError]:
    """``dispatch/requests.json`` as the file it must be: absent (no requests), or a JSON array of
    request objects whose ``request_id`` and ``to_worker`` are strings when present."""
    if text is None:
        return Success(())
    parsed = parse_json(text, file)
    if isinstance(parsed, Failure):
        return Failure(parsed.failure())
    value = parsed.unwrap()
    if not isinstance(value, list):
        return Failure(StateError(file, "", f"expected a JSON array, got {type(value).__name__}"))
    for position, entry in enumerate(value):
        if not isinstance(entry, dict):
            return Failure(StateError(file, f"[{position}]", "must be an object"))
        for key in ("request_id", "to_worker"):
            if entry.get(key) is not None and not isinstance(entry[key], str):
                return Failure(StateError(file, f"[{position}].{key}", "must be a string"))
    return Success(tuple(from_json(DispatchRequest, entry) for entry in value))


def _requests_text(paths: TeamPaths) -> Gen[str | None]:
    data = yield from expect(m.ReadFile(path=paths.dispatch_requests), m.FileData)
    if data.error == NOT_UTF8:
        raise malformed(f"{paths.dispatch_requests}: not UTF-8 text")
    if data.error:
        raise fail(data.error)
    return data.content


def read_requests(paths: TeamPaths) -> Gen[tuple[DispatchRequest, ...]]:
    """The recorded requests; a malformed file ends the program as ``team_state_malformed:<file>…``
    (``pure/omx/txn.py`` ``malformed``) and is never overwritten."""
    checked = check_requests((yield from _requests_text(paths)), paths.dispatch_requests)
    if isinstance(checked, Failure):
        raise malformed(str(checked.failure()))
    return checked.unwrap()


def write_requests(paths: TeamPaths, requests: Sequence[DispatchRequest],
                   before: Sequence[DispatchRequest]) -> Gen[None]:
    """``requests`` over the recorded ones (``before``, as read)."""
    ack = yield from expect(m.WriteFile(path=paths.dispatch_requests, content=render_json([to_json(r) for r in requests]),
                                        effect=effects.dispatch(before, requests)), m.Ack)
    if not ack.ok:
        raise fail(ack.error)


def append_request(paths: TeamPaths, request: DispatchRequest) -> Gen[None]:
    """Add ``request`` after the recorded ones."""
    requests = yield from read_requests(paths)
    yield from write_requests(paths, [*requests, request], requests)


def update_request(paths: TeamPaths, request: DispatchRequest) -> Gen[None]:
    """Write ``request`` over the recorded one of the same ``request_id``, the others as they are."""
    current = yield from read_requests(paths)
    yield from write_requests(paths, [request if r.request_id == request.request_id else r for r in current], current)


def watched_outcome(request: DispatchRequest, ok: bool, reason: str, now: str, attempts: int) -> DispatchRequest:
    """A request after a delivery watched on the worker's screen (pure/agents/supervise.py
    ``deliver_all``): ``delivered``, or ``failed`` with why (a task no screen confirmed is debt until a
    retry delivers it: pure/omx/undelivered.py)."""
    if ok:
        return evolve(request, attempt_count=attempts, updated_at=now, status="delivered", delivered_at=now,
                      last_reason=reason)
    return evolve(request, attempt_count=attempts, updated_at=now, status="failed", failed_at=now, last_reason=reason)


def typed_outcome(request: DispatchRequest, ok: bool, reason: str, now: str) -> DispatchRequest:
    """A request after its trigger was typed unwatched, as oh-my-codex records it: ``notified`` (keys
    sent) or ``failed``."""
    if ok:
        return evolve(request, attempt_count=1, updated_at=now, status="notified", notified_at=now,
                      last_reason=delivered_reason(str(request.transport_preference), reason))
    return evolve(request, attempt_count=1, updated_at=now, status="failed", last_reason=reason)


# oh-my-codex's delivery log, ``<cwd>/.omx/logs/team-delivery-<UTC date>.jsonl``: one JSON line per
# event, appended best effort (an append that fails changes nothing), in oh-my-codex's own key order.
# Its ``source`` names the writer: oh-my-codex's own where panefleet does what oh-my-codex does
# (``team.state.dispatch``, ``team.mcp-comm``), panefleet's where only panefleet does it (a watched
# delivery, a retry).
OMX_RESULT_SOURCE = "team.mcp-comm"


def _log_step(cwd: str, now: str, line: dict[str, object]) -> m.AppendFile:
    path = posixpath.join(cwd, ".omx", "logs", f"team-delivery-{now[:10]}.jsonl")
    return m.AppendFile(path=path, content=json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n",
                        effect=effects.DELIVERY_LOG)


def attempted_log_step(cwd: str, request: DispatchRequest, now: str) -> m.AppendFile:
    """The ``dispatch_attempted`` line, once ``request`` is queued in ``dispatch/requests.json``."""
    return _log_step(cwd, now, {
        "timestamp": now, "kind": "team_delivery", "event": "dispatch_attempted", "source": "team.state.dispatch",
        "team": request.team_name, "request_id": request.request_id, "to_worker": request.to_worker,
        "dispatch_kind": request.kind, "intent": request.intent, "transport": request.transport_preference,
        "result": "queued", "storage": "legacy-json"})


def result_log_step(cwd: str, request: DispatchRequest, now: str, source: str) -> m.AppendFile:
    """The ``dispatch_result`` line of ``request`` as recorded after its keystrokes: ``ok`` (oh-my-codex's
    word for keys sent), ``confirmed`` (a watched delivery) or ``failed``, with its ``last_reason``."""
    status = request.status
    return _log_step(cwd, now, {
        "timestamp": now, "kind": "team_delivery", "event": "dispatch_result", "source": source,
        "team": request.team_name, "request_id": request.request_id, "to_worker": request.to_worker,
        "dispatch_kind": request.kind, "intent": request.intent,
        "transport_preference": request.transport_preference, "transport": "send-keys",
        "result": "failed" if status == "failed" else "confirmed" if status == "delivered" else "ok",
        "reason": request.last_reason})


def remove_requests_for(paths: TeamPaths, workers: Sequence[str]) -> Gen[None]:
    """Drop every request addressed to ``workers`` (the scale-up rollback's dispatch cleanup,
    docs/scale-up.md, "Rollback")."""
    checked = check_requests((yield from _requests_text(paths)), paths.dispatch_requests)
    if isinstance(checked, Failure):
        return  # read_requests refused it before anything was appended: none of ours is in it
    kept = [r for r in checked.unwrap() if r.to_worker not in workers]
    yield from write_requests(paths, kept, checked.unwrap())  # written even when unchanged (oh-my-codex leaves "[]")


# ------------------------------------------------------------------------------------- delivery


@frozen
class Delivery:
    ok: bool
    reason: str


def pinned_proof(pane: str, pid: int | None, owner: str, server: str | None = None) -> Gen[t.OwnedPane | str]:
    """``L, S, L`` before a keystroke: the proven pane (on the tmux ``server`` it was pinned on), else the
    reason it is not ours."""
    if not t.is_positive_pid(pid):
        return f"pane_pid_unpinned:{pane}"
    proof = yield from t.prove_owned(pane, pid, owner, server=server)
    if proof.token is not None:
        return proof.token
    if proof.kind == "owner_changed":
        return f"worker_pane_owner_changed:{pane}"
    if proof.kind == "pid_changed":
        return f"worker_pane_pid_changed:{pane}:{pid}:{proof.found_pid}"
    return f"worker_pane_proof_unavailable:{pane}:{proof.code}"


def deliver_trigger(pane: str, pid: int | None, owner: str, text: str, server: str | None = None) -> Gen[Delivery]:
    """Type ``text`` literally, then Enter; each keystroke behind its own pinned proof."""
    proven = yield from pinned_proof(pane, pid, owner, server)
    if isinstance(proven, str):
        return Delivery(False, proven)
    typed = yield from expect(t.send_keys_step(proven, text, literal=True), m.Proc)
    if typed.exit_code != 0:  # tmux's own words when it has any, as oh-my-codex reports them
        return Delivery(False, "tmux_send_keys_failed:sendToWorker: failed to send text: "
                               + (typed.stderr.strip() or f"Command failed: tmux send-keys -t {pane} -l -- {text}"))
    proven = yield from pinned_proof(pane, pid, owner, server)
    if isinstance(proven, str):
        return Delivery(False, proven)
    enter = yield from expect(t.send_keys_step(proven, t.SUBMIT_KEY), m.Proc)
    if enter.exit_code != 0:
        return Delivery(False, "tmux_send_keys_failed:sendToWorker: failed to submit: "
                               + (enter.stderr.strip() or f"Command failed: tmux send-keys -t {pane} {t.SUBMIT_KEY}"))
    return Delivery(True, "tmux_send_keys_sent")


def delivered_reason(mode: str, reason: str) -> str:
    return reason if mode == TRANSPORT_DIRECT else f"hook_receipt_unobservable:{reason}"
