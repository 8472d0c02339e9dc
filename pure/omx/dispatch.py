"""Scale-up inbox, dispatch request and trigger delivery (spec §7.6, §8.5).

The inbox is written to ``workers/<w>/inbox.md``, one dispatch request is appended to
``dispatch/requests.json`` and the trigger text is typed into the worker pane. Every keystroke
delivery is preceded by the pinned proof ``L, S, L`` (spec §4.6): the pane must still be live with
the pid pinned when it was created, and carry the team's owner tag.

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
from collections.abc import Sequence
from typing import Any

from attrs import frozen

from pure import model as m
from pure.omx.state import Json, TeamPaths, render_json
from pure.program import Gen, expect
from pure.tmux import is_positive_pid, prove, read_owner, tmux

TRANSPORT_DIRECT = "transport_direct"
HOOK_PREFERRED = "hook_preferred_with_fallback"


def dispatch_mode(manifest: Json | None) -> str:
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


# ------------------------------------------------------------------------------------------ inbox


def _task_lines(task: Json) -> list[str]:
    lines = [f"- **Task {task.get('id')}**: {task.get('subject', '')}",
             f"  Description: {task.get('description', '')}",
             f"  Status: {task.get('status', 'pending')}"]
    if task.get("role"):
        lines.append(f"  Role: {task['role']}")
    depends = task.get("depends_on") or []
    if depends:
        lines.append(f"  Blocked by: {', '.join(str(d) for d in depends)}")
    return lines


def render_inbox(*, team: str, worker: str, role: str, tasks: Sequence[Json], paths: TeamPaths,
                 leader_cwd: str) -> str:
    """The worker's first assignment. Header and task list follow oh-my-codex's layout."""
    lines = [f"# Worker Assignment: {worker}", "", f"**Team:** {team}", f"**Role:** {role}",
             f"**Worker Name:** {worker}", "", "## Your Assigned Tasks", ""]
    if tasks:
        for task in tasks:
            lines.extend(_task_lines(task))
            lines.append("")
    else:
        lines.extend(["No task is assigned yet: wait for the leader's next instruction.", ""])
    status = paths.worker_file(worker, "status.json")
    lines.extend([
        "## Instructions",
        "",
        "1. Start with the first non-blocked task.",
        f"2. Read the task file at `{paths.tasks_dir}/task-<id>.json` and claim it before editing.",
        "3. Complete the work described in the task and commit your changes.",
        f'4. Write `{{"state": "idle", "updated_at": "<current ISO timestamp>"}}` to `{status}` when done.',
        "5. Wait for the next instruction from the lead.",
        f"6. If state resolution fails, use the leader cwd: `{leader_cwd}`.",
        "",
    ])
    return "\n".join(lines)


# -------------------------------------------------------------------------------- request records


def new_request(*, request_id: str, team: str, worker: str, index: int, pane_id: str, trigger: str,
                mode: str, now: str) -> Json:
    return {
        "request_id": request_id,
        "kind": "inbox",
        "team_name": team,
        "to_worker": worker,
        "worker_index": index,
        "pane_id": pane_id,
        "trigger_message": trigger,
        "intent": "followup-relaunch",
        "inbox_correlation_key": f"scale_up:{worker}",
        "transport_preference": mode,
        "fallback_allowed": True,
        "status": "pending",
        "attempt_count": 0,
        "created_at": now,
        "updated_at": now,
    }


def parse_requests(text: str | None) -> list[Any]:
    if text is None:
        return []
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return []
    return value if isinstance(value, list) else []


def read_requests(paths: TeamPaths) -> Gen[list[Any]]:
    data = yield from expect(m.ReadFile(path=paths.dispatch_requests), m.FileData)
    if data.error:
        raise OSError(data.error)
    return parse_requests(data.content)


def write_requests(paths: TeamPaths, requests: list[Any]) -> Gen[None]:
    ack = yield from expect(m.WriteFile(path=paths.dispatch_requests, content=render_json(requests)), m.Ack)
    if not ack.ok:
        raise OSError(ack.error)


def remove_requests_for(paths: TeamPaths, workers: Sequence[str]) -> Gen[None]:
    """Drop every request addressed to ``workers`` (scale-up rollback, spec §8.2 step 2)."""
    data = yield from expect(m.ReadFile(path=paths.dispatch_requests), m.FileData)
    if data.error:
        raise OSError(data.error)
    if data.content is None:
        return
    requests = parse_requests(data.content)
    kept = [r for r in requests if not (isinstance(r, dict) and r.get("to_worker") in workers)]
    if len(kept) != len(requests):
        yield from write_requests(paths, kept)


# ------------------------------------------------------------------------------------- delivery


@frozen
class Delivery:
    ok: bool
    reason: str


def pinned_proof(pane: str, pid: int | None, owner: str) -> Gen[str | None]:
    """``L, S, L`` before a keystroke: ``None`` when the pane is proven, else the reason."""
    if not is_positive_pid(pid):
        return f"pane_pid_unpinned:{pane}"
    first = yield from prove(pane)
    if not first.live:
        return f"worker_pane_proof_unavailable:{pane}:{first.code()}"
    if first.pid != pid:
        return f"worker_pane_pid_changed:{pane}:{pid}:{first.pid}"
    tag = yield from read_owner(pane)
    if tag.kind != "value" or tag.value != owner:
        return f"worker_pane_owner_changed:{pane}"
    final = yield from prove(pane)
    if not final.live:
        return f"worker_pane_proof_unavailable:{pane}:{final.code()}"
    if final.pid != pid:
        return f"worker_pane_pid_changed:{pane}:{pid}:{final.pid}"
    return None


def deliver_trigger(pane: str, pid: int | None, owner: str, text: str) -> Gen[Delivery]:
    """Type ``text`` literally, then Enter; each keystroke behind its own pinned proof."""
    problem = yield from pinned_proof(pane, pid, owner)
    if problem is not None:
        return Delivery(False, problem)
    typed = yield from expect(tmux("send-keys", "-t", pane, "-l", "--", text, mutates=True), m.Proc)
    if typed.exit_code != 0:
        return Delivery(False, "tmux_send_keys_failed:sendToWorker: failed to send text: "
                               f"Command failed: tmux send-keys -t {pane} -l -- {text}")
    problem = yield from pinned_proof(pane, pid, owner)
    if problem is not None:
        return Delivery(False, problem)
    enter = yield from expect(tmux("send-keys", "-t", pane, "C-m", mutates=True), m.Proc)
    if enter.exit_code != 0:
        return Delivery(False, "tmux_send_keys_failed:sendToWorker: failed to submit: "
                               f"Command failed: tmux send-keys -t {pane} C-m")
    return Delivery(True, "tmux_send_keys_sent")


def delivered_reason(mode: str, reason: str) -> str:
    return reason if mode == TRANSPORT_DIRECT else f"hook_receipt_unobservable:{reason}"
