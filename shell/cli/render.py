"""Human text for outcomes. Plain text, no colour codes (so NO_COLOR and pipes are always safe)."""

from __future__ import annotations

from typing import Any


def render_error(result: dict[str, Any]) -> str | None:
    if result.get("ok") is False:
        return f"error: {result.get('error')}"
    return None


def render_init(result: dict[str, Any]) -> str:
    failed = render_error(result)
    if failed:
        return failed
    return (
        f"team {result['team']} initialised in {result['stateRoot']}\n"
        f"leader pane {result['leaderPaneId']} (pid {result['leaderPanePid']} pinned) tagged {result['ownerId']}\n"
        f"the leader runs in tmux session {result.get('leaderSession') or '(unknown)'}; the team's recorded "
        f"session name is {result['tmuxSession']}"
    )


def _pane_line(p: dict[str, Any]) -> str:
    verdict = p.get("verdict", "?")
    bits = [f"{p['role']:<6} {p['name']:<10} {str(p.get('paneId') or '-'):<6} {verdict:<11}"]
    if p.get("pid") is not None:
        bits.append(f"pid {p['pid']}" + ("" if p.get("pidMatch") else f" (pinned {p.get('pinnedPid')}: MISMATCH)"))
    elif p.get("pinnedPid") is not None:
        bits.append(f"pinned pid {p['pinnedPid']}")
    if "ownerRead" in p:
        owner = p.get("owner") or "(untagged)"
        bits.append(f"owner {owner}" + ("" if p.get("ownerMatch") else " (NOT OURS)"))
    if p.get("screen"):
        # what its screen shows (pure/agents/screen.py), and for how long (team status --watch)
        since = f" for {p['screenStateS']} s" if p.get("screenStateS") is not None else ""
        bits.append(f"agent {p['screen']}{since}")
    if p.get("screenIdleS") is not None:
        bits.append(f"screen unchanged {p['screenIdleS']} s")  # team status --watch
    task = p.get("task")
    if isinstance(task, dict):
        word = {"delivered": "task delivered", "notified": "task sent (unconfirmed)", "pending": "task pending"}
        bits.append(word.get(str(task.get("status")), f"TASK NOT CONFIRMED ({task.get('reason')})"))
    if p.get("state"):
        bits.append(f"status.json {p['state']}")  # what the worker last reported of itself
    if p.get("detail"):
        bits.append(f"[{p['detail']}]")
    line = "  " + "  ".join(bits)
    return line + (f"\n      cause: {p['cause']}" if p.get("cause") else "")


def plural(count: object, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def render_status(result: dict[str, Any]) -> str:
    if "panes" not in result:
        return render_error(result) or ""
    lines = []
    if result.get("ok") is False:
        lines.append(f"error: {result.get('error')}")
    lines += [
        f"team {result['team']}  ({plural(result.get('workerCount'), 'worker')}, owner tag {result.get('ownerId')}, "
        f"config generation {result.get('configGeneration')})",
        f"state: {result['stateRoot']}",
        "panes:",
    ]
    lines.extend(_pane_line(p) for p in result.get("panes", []))
    debt = result.get("debt")
    leftovers = leftover_lines(result)
    if debt is None:
        lines.append("debt: none" + (" recorded, but a run that did not finish left:" if leftovers else ""))
    elif debt.get("malformed"):
        lines.append("debt: the debt file is not valid JSON (see `panefleet team debt show`)")
    else:
        lines.append(f"debt: status {debt.get('status')}, unresolved "
                     f"{', '.join(str(p.get('pane_id')) for p in debt.get('unresolved_panes') or []) or '-'}; "
                     f"reasons: {', '.join(debt.get('reasons') or []) or '-'}  (see `panefleet team debt show`)")
    lines += leftovers
    undelivered = undelivered_lines(result)
    lines += undelivered
    if result.get("healthy"):
        lines.append("healthy: every pane proven live, pid pinned and owner-tagged")
    elif not result.get("panesProven"):
        lines.append("attention: not every pane is proven live with its pinned pid and owner tag")
    elif debt is not None:
        lines.append("attention: every pane is proven, but cleanup debt is recorded")
    elif leftovers:
        lines.append("attention: every pane is proven, but a run that did not finish left what it could not undo")
    else:
        lines.append(f"attention: every pane is proven, but {plural(len(undelivered), 'task')} never reached "
                     "its worker")
    return "\n".join(lines)


def undelivered_lines(report: dict[str, Any]) -> list[str]:
    """Tasks no screen confirmed reaching their worker (pure/omx/undelivered.py), as ``team status``
    and ``team debt show`` print them."""
    return [f"  undelivered: {u['worker']}'s task (dispatch request {u['requestId']}, "
            f"{plural(u.get('attempts'), 'attempt')}): {u['reason']} "
            "(`panefleet team debt reconcile` types it again)" for u in report.get("undeliveredTasks") or []]


def leftover_lines(survey: dict[str, Any]) -> list[str]:
    """What a crashed or interrupted run left (pure/omx/strays.py ``Survey``), as ``team status`` and
    ``team debt show`` print it."""
    fix = "`panefleet team debt reconcile` or the next scale-up removes it"
    lines = [f"  stray: pane {s['paneId']} (pid {s['pid']}) runs {s['worker']}'s startup script but is no member "
             f"({fix} when its pid is pinned, else keeps it as debt)" for s in survey.get("strayPanes") or []]
    for left in survey.get("leftoverWorkers") or []:
        what = " and ".join(w for w, there in (("folder", left.get("folder")), ("startup script",
                                                                                 left.get("startupScript"))) if there)
        lines.append(f"  leftover: {left['worker']}'s {what}, no member ({fix})")
    for tree in survey.get("leftoverWorktrees") or []:
        branch = f" on branch {tree['branch']}" if tree.get("branch") else ""
        lines.append(f"  leftover: {tree['worker']}'s git worktree {tree['path']}{branch}, no member "
                     f"({fix} when git proves it the one that run made)")
    return lines + kept_lines(survey)


def kept_lines(survey: dict[str, Any]) -> list[str]:
    """Members a rolled-back scale-up kept (pure/omx/kept_workers.py), in ``DEBT_WORDS``'s words."""
    from pure import model as m

    what, retry = m.DEBT_WORDS["kept_worker"]
    return [f"  kept: {k['worker']} (pane {k['paneId']}, pid {k['pid']}; {', '.join(k['debt']) or 'no debt code'}), "
            f"{what} ({retry})" for k in survey.get("keptWorkers") or []]


def sweep_lines(swept: dict[str, Any]) -> list[str]:
    """What a stray sweep (pure/omx/strays.py ``Sweep``) removed and kept."""
    lines = [f"  stray pane {s['paneId']} (pid {s['pid']}, {s['worker']}): removed" for s in swept.get("removed") or []]
    lines += [f"  stray pane {s['paneId']} (pid {s['pid']}, {s['worker']}): kept as debt ({s['reason']})"
              for s in swept.get("kept") or []]
    lines += [f"  leftover {w}: its folder (and startup script) removed" for w in swept.get("cleanedWorkers") or []]
    lines += [f"  leftover git worktree {path}: removed" for path in swept.get("removedWorktrees") or []]
    lines += [f"  leftover git worktree {t['path']}: kept as debt ({t['reason']})"
              for t in swept.get("keptWorktrees") or []]
    return ["left by a run that did not finish:", *lines] if lines else []


# ------------------------------------------------------------------ informative prose for structured answers


def describe_decide_problem(problem: dict[str, Any]) -> str:
    """Prose for an error decision's ``problem`` (pure/program.py); informative only."""
    code, at = problem.get("code"), problem.get("at")
    if code == "journal_divergence":
        return (f"journal entry {at} has a {problem.get('got_op')} step where the program asks for a "
                f"{problem.get('expected_op')} step (first difference: {problem.get('field')})")
    if code == "journal_after_done":
        return f"journal entry {at} ({problem.get('got_op')}) comes after the program had finished"
    if code == "journal_mismatch":
        return (f"journal entry {at} answers the {problem.get('op')} step with an observation of kind "
                f"{problem.get('got_kind')}; it needs kind {problem.get('expected_kind')}")
    return str(code)
