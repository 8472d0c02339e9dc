"""What ``panefleet herdr …`` says to people: the text of each command's answer (``-o json`` prints the
answer itself). The commands are in ``shell/cli/herdr.py``."""

from __future__ import annotations

import json
from typing import Any

from pure import model as m


def render_run_start(request: Any) -> Any:
    def render(result: dict[str, Any]) -> str:
        if not result.get("ok"):
            return f"run start refused: {result.get('error')}"
        return f"run {request.run_id} is live ({request.project} #{request.issue})"

    return render


def render_run_settle(result: dict[str, Any]) -> str:
    if not result.get("ok"):
        return f"run settle refused: {result.get('error')}"
    return f"run {result['runId']} settled; the next reconcile closes its pane"


def _plural(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def render_reconcile(result: dict[str, Any]) -> str:
    """One line per outcome, led by what happened (kept, replaced, opened, closed, …), and a summary
    counting exactly those words, so the lines and the totals always agree."""
    if not result.get("ok"):
        return f"reconcile failed, nothing was changed: {result.get('error')}"
    out: list[str] = []
    counts: dict[str, int] = {}
    outcomes = result.get("outcomes", [])
    displaced = {o["runId"]: o["paneId"] for o in outcomes
                 if o.get("kind") == "stale-released" and o.get("cause") == "duplicate"}

    def line(verb: str, text: str, counted: str | None = None) -> None:
        counts[counted or verb] = counts.get(counted or verb, 0) + 1
        out.append(f"{verb:<9} {text}")

    for o in outcomes:
        kind = o.get("kind")
        if kind == "intact":
            line("kept", f"{o['runId']}: pane {o['paneId']}, follower alive")
        elif kind == "visual-unreadable":
            line("kept", f"{o['runId']}: pane {o['paneId']}, liveness unknown ({o['reason']}); not touched")
        elif kind == "reassociated" and o["runId"] in displaced:
            line("replaced", f"{o['runId']}: new pane {o['paneId']} ({o['label']}) instead of {displaced[o['runId']]}")
        elif kind == "reassociated":
            line("opened", f"{o['runId']}: new pane {o['paneId']} ({o['label']})")
        elif kind == "untracked":
            extra = " [attempt spent]" if o.get("attempted") else ""
            extra += " [split refused: budget spent]" if o.get("phase") == "split" else ""
            line("no pane", f"{o['runId']}: {o['reason']}{extra}", "without a pane")
        elif kind == "attempts-exhausted":
            line("skipped", f"{o['runId']}: re-establishment budget spent ({o['attempts']} attempts)")
        elif kind == "stale-released":
            who = f" of run {o['runId']}" if o.get("runId") else ""
            why = {"settled": "the run settled", "duplicate": "a second representation of a live run",
                   "unidentified": "a shell no live run owns"}.get(o["cause"], o["cause"])
            line("closed", f"pane {o['paneId']}{who}: {o['cause']} ({why})")
        elif kind == "stale-release-failed":
            line("FAILED", f"to close pane {o['paneId']} ({o['cause']}): {o['reason']}", "failed to close")
        elif kind == "workspace-removed":
            why = f" ({o['reason']})" if o.get("reason") else ""
            line("removed", f"workspace {o['workspaceId']} of {o['project']}{why}")
        elif kind == "workspace-remove-failed":
            line("FAILED", f"to remove workspace {o['workspaceId']} of {o['project']}: {o['reason']}",
                 "failed to remove")
        elif kind == "workspace-group-close-required":
            line("kept", f"workspace {o['workspaceId']} of {o['project']}: linked worktree workspaces keep it open "
                         "(panefleet never closes the group); close them and the next pass removes it",
                 "kept as debt")
        elif kind == "workspace-claimed":
            line("claimed", f"workspace {o['workspaceId']} of {o['project']}: made by an earlier pass's "
                            "workspace create whose answer was lost")
        elif kind == "workspace-create-pending":
            line("kept", f"pending workspace create of {o['project']}: {o['reason']}", "kept as debt")
        else:
            counts[str(kind)] = counts.get(str(kind), 0) + 1
            out.append(json.dumps(o))
    summary = ", ".join(f"{n} {verb}" for verb, n in counts.items()) or "nothing to do"
    out.append(f"reconcile: {summary}")
    return "\n".join(out)


def render_status(result: dict[str, Any]) -> str:
    if not result.get("ok"):
        return f"status unavailable: {result.get('error')}"
    runs = result.get("runs", [])
    live = [r for r in runs if not r["settled"]]
    where = f"herdr machine {result['machine']}" if "machine" in result else f"herdr session {result['session']}"
    lines = [f"{where}: {_plural(len(live), 'live run')}, "
             f"{len(runs) - len(live)} settled"]
    for r in live:
        pulse = r.get("pulse")
        shown = f"pane {r['paneId']} (follower {pulse})" if r.get("paneId") else "no pane"
        pid = r["pid"] if r["pid"] is not None else "-"
        lines.append(f"  {r['runId']}  {r['project']} #{r['issue']} a{r['attempt']}  pid {pid}  {shown}"
                     f"  attempts {r['attempts']}")
    for ws in result.get("workspaces", []):
        lines.append(f"workspace {ws['workspaceId']} ({ws['label']}) of {ws['project']}: "
                     f"{_plural(len(ws['panes']), 'pane')}")
        for p in ws["panes"]:
            role = f"run {p['runId']}" if "cause" not in p else f"junk: {p['cause']}"
            lines.append(f"  {p['paneId']}  {p['label'] or '(no label)'}  {role}")
    for stale in result.get("staleRecords", []):
        lines.append(f"record of {stale['project']} names {stale['workspaceId']}, which herdr no longer lists")
    for pending in result.get("pendingCreates", []):
        head = f"pending workspace create of {pending['project']} (its answer was lost): "
        if pending["next"] == "claim":
            lines.append(head + f"workspace {pending['workspaceId']} is its; the next reconcile claims it")
        elif pending["next"] == "keep":
            lines.append(head + f"{pending['reason']}; kept as debt, nothing touched")
        else:
            lines.append(head + "herdr lists no workspace it made; the next reconcile clears it")
    for debt in result.get("debt") or []:  # the last reconcile pass's record, in DEBT_WORDS's words
        what, retry = m.debt_words(debt["kind"])
        lines.append(f"debt: {debt['kind']} {debt['subject']}: {debt['reason']} ({what}; {retry})"
                     + (f" [{debt['detail']}]" if debt.get("detail") else ""))
    return "\n".join(lines)


def render_open(result: dict[str, Any]) -> str:
    if result.get("kind") == "tracked" and result.get("reused"):
        return (f"pane {result['paneId']} ({result['label']}) already represents the run "
                f"(follower {result.get('pulse')}); nothing opened")
    if result.get("kind") == "tracked":
        return f"opened pane {result['paneId']} ({result['label']}) in workspace {result['workspaceId']}"
    phase = " (split refused)" if result.get("phase") == "split" else ""
    residue = result.get("residue")
    if residue:
        return (f"no pane opened{phase}: {result.get('error')}; left behind in herdr: {', '.join(residue)} "
                "(the next reconcile removes what it owns)")
    return f"no pane opened{phase}: {result.get('error')}; nothing was left behind"


def render_retire(result: dict[str, Any]) -> str:
    kind = result.get("kind")
    if kind == "released":
        return f"retired pane {result['paneId']}: released and closed"
    if kind == "none":
        return "nothing to retire" + (f": {result['reason']}" if result.get("reason") else "")
    if kind == "unowned":
        return f"refused: {result['reason']}"
    return f"retire failed: {result.get('error')}"
