"""A data-driven stub ``tmux`` shared by the oracle generator (as a process) and the test (in-process).

Scenario keys: ``owner``; ``splits`` (pane ids answered by successive ``split-window`` calls);
``panes`` (``[[pane, dead, pid], ...]`` listed by ``list-panes``; a killed pane disappears unless
``kill_keeps``); ``list_rules`` (``[[from_call, to_call, code, stdout], ...]``: an answer that
overrides the pane table for those ``list-panes`` call numbers); ``tag_fails``; ``send_fails`` (or the stderr of a failed ``send-keys``);
``kill_keeps``; ``split_answer`` (``[code, stdout, stderr]`` for every ``split-window``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def answer(scenario: dict[str, Any], state: dict[str, Any], args: list[str]) -> tuple[int, str, str]:
    verb = args[0] if args else ""
    if verb == "-V":
        return 0, "tmux 3.2a\n", ""
    if verb == "show-option":
        return 0, scenario.get("owner", "team:scale-up") + "\n", ""
    if verb == "split-window":
        if scenario.get("split_answer") is not None:
            code, stdout, stderr = scenario["split_answer"]
            return code, stdout, stderr
        splits = scenario.get("splits", ["%31"])
        index = state.get("splits", 0)
        state["splits"] = index + 1
        return 0, splits[min(index, len(splits) - 1)] + "\n", ""
    if verb == "list-panes":
        number = state.get("lists", 0) + 1
        state["lists"] = number
        for first, last, code, stdout in scenario.get("list_rules", []):
            if first <= number <= last:
                return code, stdout, "" if code == 0 else "list failed\n"
        killed = set(state.get("killed", []))
        rows = [row for row in scenario.get("panes", []) if row[0] not in killed]
        return 0, "".join(f"{p}\t{d}\t{pid}\n" for p, d, pid in rows), ""
    if verb == "set-option":
        return (1, "", "owner tag failed\n") if scenario.get("tag_fails") else (0, "", "")
    if verb == "kill-pane":
        if not scenario.get("kill_keeps"):
            state["killed"] = [*state.get("killed", []), args[-1]]
        return 0, "", ""
    if verb == "send-keys":
        says = scenario.get("send_fails")  # True, or what tmux writes on stderr
        return (1, "", says if isinstance(says, str) else "") if says else (0, "", "")
    if verb == "capture-pane":
        return 0, "\n", ""
    return 0, "", ""


def main() -> None:
    scenario_path, state_path, log_path = (os.environ[k] for k in ("STUB_SCENARIO", "STUB_STATE", "STUB_LOG"))
    with open(scenario_path, encoding="utf-8") as handle:
        scenario = json.load(handle)
    import fcntl

    with open(state_path + ".lock", "w", encoding="utf-8") as lock:  # concurrent captures race otherwise
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(state_path, encoding="utf-8") as handle:
                state = json.load(handle)
        except FileNotFoundError:
            state = {}
        args = sys.argv[1:]
        code, stdout, stderr = answer(scenario, state, args)
        with open(state_path, "w", encoding="utf-8") as handle:
            json.dump(state, handle)
    with open(log_path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(args) + "\n")
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
