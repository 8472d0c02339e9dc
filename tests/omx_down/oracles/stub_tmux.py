"""One scripted tmux, usable in-process (our tests) and as a ``tmux`` executable on PATH (for
running oh-my-codex itself when the oracle goldens are generated).

Spec (JSON): ``panes`` {id: [dead, pid]}, ``owner`` answer, ``show_exit`` (with ``show_stderr``),
``list_fail`` bool, ``on_kill`` {pane: "remove" | "fail" | "lose" | "pid:<n>"}. The state (the
spec, mutated by kills) lives in a JSON file so consecutive invocations see earlier kills.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def answer(spec: dict[str, Any], args: list[str]) -> tuple[int, str, str]:
    """(exit, stdout, stderr); mutates ``spec`` on kills."""
    verb = args[0] if args else ""
    if verb == "list-panes":
        if spec.get("list_fail"):
            return 1, "", ""
        rows = "".join(f"{p}\t{dead}\t{pid}\n" for p, (dead, pid) in spec.get("panes", {}).items())
        return 0, rows, ""
    if verb == "show-option":
        code = int(spec.get("show_exit", 0))
        if code != 0:
            return code, "", spec.get("show_stderr", "")
        return 0, spec.get("owner", "") + "\n", ""
    if verb == "kill-pane":
        pane = args[-1]
        action = spec.get("on_kill", {}).get(pane, "remove")
        if action == "fail":
            return 1, "", ""
        if action == "remove":
            spec.get("panes", {}).pop(pane, None)
        elif action == "lose":
            spec.get("panes", {}).pop(pane, None)
            spec["list_fail"] = True
        elif action.startswith("pid:"):
            spec["panes"][pane] = [0, int(action[4:])]
        return 0, "", ""
    return 0, "", ""


def main() -> None:
    state = Path(os.environ["STUB_TMUX_STATE"])
    spec = json.loads(state.read_text())
    args = sys.argv[1:]
    with open(os.environ["STUB_TMUX_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(args) + "\n")
    code, out, err = answer(spec, args)
    state.write_text(json.dumps(spec))
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.exit(code)


if __name__ == "__main__":
    main()
