"""The scale-down cleanup debt for people: ``explain`` turns a record into the report of ``panefleet team
debt show``; ``reconcile_report`` reads a finished reconcile's journal back into what it did (the text
of ``panefleet team debt reconcile``; its JSON stays oh-my-codex's). The record and its reconcile are
``pure/omx/debt.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from returns.result import Failure

from pure import model as m
from pure.omx.codec import Parsed, parse_json
from pure.omx.transcripts import written

REASON_TEXT = {
    "legacy_pid_missing_live": "the record has no pinned pid and a live pane holds that id; "
                               "it can only converge once a fresh proof shows the pane gone",
    "query_failed": "the tmux pane table could not be read",
    "malformed_snapshot": "tmux answered with a pane table that does not parse",
    "invalid_pane_id": "the recorded pane id is not a %N id",
    "pane_pid_changed": "the pane now runs another process (or its owner tag changed): not ours to kill",
    "kill_failed": "kill-pane failed or the pane was still live afterwards",
    "worker_identity_unavailable": "the worker's identity.json no longer matches the recorded pane",
    "team_owner_unavailable": "the pane's owner tag could not be read",
    "team_owner_mismatch": "the pane is tagged for another team (or untagged)",
    "teardown_unresolved": "teardown did not resolve the pane",
}


def explain(debt: Parsed | None, text: str | None, team: str) -> m.Answer:
    """The debt record as a report: panes, why each is unresolved, what a retry would do."""
    if text is None:
        return {"ok": True, "team": team, "debt": None, "summary": "no cleanup debt recorded"}
    if debt is None:
        return {"ok": True, "team": team, "debt": None, "summary": "the debt file is not valid JSON (or holds a "
                "value JSON cannot carry); reconcile will answer scale_down_cleanup_debt_unreadable (or "
                "scale_down_cleanup_debt_malformed) until it is repaired by hand"}
    raw_reasons = debt.get("reasons")
    reasons = [r for r in raw_reasons if isinstance(r, str)] if isinstance(raw_reasons, list) else []
    raw_unresolved, raw_workers = debt.get("unresolved_panes"), debt.get("workers")
    unresolved: list[Any] = raw_unresolved if isinstance(raw_unresolved, list) else []
    workers: list[Any] = raw_workers if isinstance(raw_workers, list) else []
    panes = unresolved or workers
    rows = []
    for pane in panes:
        if not isinstance(pane, dict):
            continue
        pid = pane.get("pane_id")
        why = [r.split(":", 1)[1] for r in reasons if r.split(":", 1)[0] == pid]
        rows.append({"worker": pane.get("name"), "pane_id": pid, "pid": pane.get("pid"),
                     "reasons": why, "explained": [REASON_TEXT.get(w, w) for w in why]})
    status = debt.get("status")
    retry = {
        "pending_teardown": "if the removed workers are still members the commit never happened and the record "
                            "is discarded; otherwise every pane is re-proved and torn down, then resources cleaned",
        "unresolved": "every listed pane is re-proved (L), its identity and owner tag checked, and only then "
                      "killed (L S L kill-pane L); panes that cannot be proved stay as debt",
        "resource_cleanup_pending": "panes are resolved; worktrees and worker directories are removed",
    }.get(str(status), "reconcile validates the record first and refuses it if malformed")
    return {
        "ok": True, "team": team, "status": status, "created_at": debt.get("created_at"),
        "updated_at": debt.get("updated_at"), "removed_workers": debt.get("removed_worker_names"),
        "panes": rows, "other_reasons": [r for r in reasons if not r.startswith("%")],
        "retry": retry, "debt": debt,
    }


# ------------------------------------------------------------------------------- reconcile report


DEBT_FILE = "/.scale-down-cleanup-debt.json"


def _ran(entry: m.Entry, tool: str, *prefix: str) -> bool:
    step, obs = entry.step, entry.observation
    return (isinstance(step, m.Run) and step.tool == tool and step.args[:len(prefix)] == prefix
            and isinstance(obs, m.Proc) and obs.exit_code == 0)


def _transcript_line(journal: Sequence[m.Entry], worker: str) -> str:
    """Where the run saved the transcript of ``worker`` before its kill (pure/omx/transcripts.py), if it did."""
    saved = next((path for path in written(journal) if path.rsplit("/", 1)[-1].startswith(f"{worker}.")), None)
    return f"    its transcript: {saved}" if saved else "    no transcript of it could be kept"


def _removed(entry: m.Entry) -> bool:
    return isinstance(entry.step, m.RemovePath) and isinstance(entry.observation, m.Ack) and entry.observation.ok


def reconcile_report(result: m.Answer, journal: Sequence[m.Entry]) -> list[str]:
    """What one ``team.debt_reconcile`` run did, read from its journal: the record it found, each
    debt pane killed or found gone, the resources cleaned, what is kept. [] when it never got to
    read a record (the error says why)."""
    reads = [(e.step.path, e.observation) for e in journal if isinstance(e.step, m.ReadFile)
             and e.step.path.endswith(DEBT_FILE) and isinstance(e.observation, m.FileData)]
    if not reads:
        return []
    path, data = reads[0]
    if data.content is None:
        return ["no cleanup debt"]
    parsed = parse_json(data.content, path)
    if isinstance(parsed, Failure):
        error = parsed.failure()
        where = f" at {error.field}" if error.field else ""
        what = "is not valid JSON" if error.syntax is not None else f"is malformed{where}: {error.message}"
        return [f"the cleanup debt record {path} {what}; nothing was done (repair or remove it by hand)"]
    record = parsed.unwrap()
    if not isinstance(record, dict):
        return [f"the cleanup debt record {path} is not a JSON object; nothing was done"]
    raw_names = record.get("removed_worker_names")
    names = [n for n in raw_names if isinstance(n, str)] if isinstance(raw_names, list) else []
    lines = [f"cleanup debt for removed worker(s) {', '.join(names) or '?'} (status {record.get('status')})"]
    tmux_calls = [e for e in journal if isinstance(e.step, m.Run) and e.step.tool == "tmux"]
    tree_removals = [e for e in journal if isinstance(e.step, m.RemovePath) and e.step.recursive and _removed(e)]
    if result.get("ok") and not tmux_calls and not tree_removals:
        return lines + ["  discarded: the removed workers are still members, so the membership commit never "
                        "happened; nothing was killed or removed", "  debt record deleted"]
    if not tmux_calls and not result.get("ok"):
        return lines + ["  refused before any tmux call; nothing was killed or removed"]
    unresolved = record.get("unresolved_panes")
    panes = unresolved if isinstance(unresolved, list) and unresolved else record.get("workers")
    kept = str(result.get("error", "")).split(":", 1)[1].split(",") \
        if str(result.get("error", "")).startswith("scale_down_cleanup_debt_unresolved:") else []
    for pane in panes if isinstance(panes, list) else []:
        if not isinstance(pane, dict) or not isinstance(pane.get("pane_id"), str):
            continue
        pane_id = pane["pane_id"]
        who = f"pane {pane_id} (worker {pane.get('name')})"
        if any(_ran(e, "tmux", "kill-pane", "-t", pane_id) for e in journal):
            lines.append(f"  {who}: killed" + (", but still not proven gone: kept as debt" if pane_id in kept else ""))
            lines.append(_transcript_line(journal, str(pane.get("name"))))
        elif pane_id in kept:
            lines.append(f"  {who}: not proven safe to kill: kept as debt")
        else:
            lines.append(f"  {who}: found gone, no kill needed")
    for e in journal:
        step = e.step
        if isinstance(step, m.Run) and _ran(e, "git", "worktree", "remove", "--force"):
            lines.append(f"  removed worktree {step.args[-1]}")
        elif isinstance(step, m.WriteFile) and step.note == "restore AGENTS.md":
            lines.append(f"  restored {step.path}")
        elif isinstance(step, m.RemovePath) and step.path.endswith("/AGENTS.md") and _removed(e):
            lines.append(f"  removed the worker overlay {step.path}")
        elif isinstance(step, m.RemovePath) and step.recursive and step.note == "worker dir" and _removed(e):
            lines.append(f"  removed {step.path}")
    if result.get("ok"):
        lines.append("  debt record deleted")
    else:
        lines.append("  debt record kept (see `panefleet team debt show`)")
    return lines
