"""``team status`` for people: the table of ``shell/cli/render.py`` ``render_status``, followed by what
each state it shows means — only the states that appear, one line each.

The states are those of ``pure/team.py`` ``team_status``: a pane's verdict (``pure/tmux/parse.py``),
its pid against the pinned one, its owner tag, what its agent's screen shows
(``pure/agents/screen.py``) and what the worker last wrote to its ``status.json``
(``pure/omx/state.py`` ``worker_state``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

VERDICTS = {
    "live": "the pane exists and its process runs (one snapshot of every pane proves it)",
    "dead": "the pane exists but its process has exited (tmux remain-on-exit keeps it)",
    "absent": "no such pane on the tmux server: it was closed or killed",
    "none": "no pane is recorded for it",
    "malformed_snapshot": "tmux's pane table could not be parsed, so nothing is proven",
    "query_failed": "tmux could not be asked (not running, or timed out), so nothing is proven",
    "invalid_pane_id": "the recorded pane id is not a tmux pane id (%N)",
    "unavailable": "the pane's state could not be proven",
}
SCREENS = {
    "ready": "the agent waits for input",
    "idle": "the agent finished its turn and waits for input",
    "busy": "the agent is working",
    "needs_input": "the agent asks the user to approve something mid-task, and waits",
    "starting": "the agent is still starting",
    "trust_prompt": "the agent asks whether to trust the folder",
    "bypass_prompt": "the agent asks to confirm its permission-bypass mode",
    "model_prompt": "the agent offers to switch to a newer model (start-up answers: keep the model)",
    "api_key_prompt": "the agent asks for an API key: it will not start on its own",
    "login_required": "the agent needs a sign-in: it will not start on its own",
    "exited": "the agent's process has exited",
    "unknown": "the screen matches no known agent screen",
}
STATUSES = {
    "unknown": "the worker wrote no status yet (or an unreadable one)",
    "idle": "the worker reported it is idle",
    "working": "the worker reported it is working on a task",
    "blocked": "the worker reported it is blocked",
    "done": "the worker reported it is done",
    "failed": "the worker reported it failed",
    "draining": "the worker is finishing before it is removed",
}


def legend(result: dict[str, Any]) -> list[str]:
    """One line for each distinct state the status shows."""
    seen: dict[str, str] = {}
    for pane in result.get("panes") or []:
        if not isinstance(pane, dict):
            continue
        verdict = str(pane.get("verdict") or "")
        if verdict:
            seen.setdefault(verdict, VERDICTS.get(verdict, "see `pure/tmux/parse.py` verdicts"))
        if pane.get("pid") is not None and not pane.get("pidMatch"):
            seen.setdefault("MISMATCH", "the pane's pid is not the one pinned when it was created: another process")
        if "ownerRead" in pane:
            if not pane.get("owner"):
                seen.setdefault("(untagged)", "the pane carries no owner tag")
            elif not pane.get("ownerMatch"):
                seen.setdefault("(NOT OURS)", "the pane's owner tag names another team: panefleet never touches it")
        screen = pane.get("screen")
        if screen:
            seen.setdefault(f"agent {screen}", SCREENS.get(str(screen), "an agent screen state"))
        state = pane.get("state")
        if state:
            seen.setdefault(f"status.json {state}", STATUSES.get(str(state), "what the worker last reported"))
    if not seen:
        return []
    width = max(len(k) for k in seen)
    return ["states:"] + [f"  {name:<{width}}  {text}" for name, text in seen.items()]


def render_status_explained(result: dict[str, Any]) -> str:
    from shell.cli.render import render_status

    text = render_status(result)
    for lock in result.get("locks") or []:
        verdict = f"stale ({lock['stale']}): the next run takes it over at once" if lock.get("stale") else "held"
        text += f"\nlock: {lock['lock']} lock {verdict}: {lock['holder']}"
    if result.get("readUnlocked"):  # pure/team.py load_team: team state that cannot be written
        text += f"\nnote: read without the membership lock, which cannot be taken ({result['readUnlocked']})"
    lines = legend(result) if "panes" in result else []
    return text + ("\n" + "\n".join(lines) if lines else "")


CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear screen: each refresh redraws in place


def watch(request: Any, args: Any, interval: float, *, operation: str = "team.status",
          render: Callable[[dict[str, Any]], str] | None = None, store: Any = None) -> int:
    """``team status --watch`` (and ``herdr status --watch``): run the status program (one snapshot,
    its owner reads and screen reads) every ``interval`` seconds and redraw; each worker line says
    how long its agent has been in its state (needs input, idle, busy …) and how long its screen has not
    changed. Ends with Ctrl-C (exit 0)."""
    import os
    import sys
    import time

    from pure import operations
    from shell.cli.operation import make_executor, placed_on
    from shell.run.loop import placed, run_program

    op = operations.get(operation)
    assert op is not None, operation
    executor = make_executor(args, dict(os.environ), store)
    host = placed_on(args)
    draw = render or render_status_explained
    changed: dict[str, tuple[str, float]] = {}
    entered: dict[str, tuple[str, float]] = {}  # each worker's agent state, and when it was first seen in it
    try:
        while True:
            done, _journal = run_program(lambda: placed(op.program(request), host), executor)
            result = done.outcome.result if isinstance(done.outcome.result, dict) else {}
            if result.get("interrupted") is True:  # Ctrl-C during a read stops it as it does between reads
                raise KeyboardInterrupt
            now = time.monotonic()
            for pane in result.get("panes") or []:
                state = pane.get("screen")
                if state is not None:
                    if entered.get(pane["name"], ("", 0.0))[0] != state:
                        entered[pane["name"]] = (state, now)
                    pane["screenStateS"] = int(now - entered[pane["name"]][1])
                digest = pane.get("screenDigest")
                if digest is None:
                    continue
                seen = changed.get(pane["name"])
                if seen is None or seen[0] != digest:
                    changed[pane["name"]] = (digest, now)
                pane["screenIdleS"] = int(now - changed[pane["name"]][1])
            stamp = time.strftime("%H:%M:%S")
            sys.stdout.write(CLEAR + draw(result) + f"\n(refreshed {stamp}, every {interval:g} s; Ctrl-C to stop)\n")
            sys.stdout.flush()
            time.sleep(interval)
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        return 0
