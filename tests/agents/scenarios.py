"""Entry point inside the sandbox namespace: ``python -m tests.agents.scenarios NAME PARAMS_JSON``.

Started by ``run_scenario`` (``tests/agents/sandbox.py``), never by hand. It runs the registered
scenario NAME with the JSON params in the work directory named by ``$PANEFLEET_SANDBOX_WORK`` and
writes the scenario's JSON result to ``result.json`` there (``{"_error": ...}`` when it raised).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

from tests.agents.sandbox import SCENARIOS, WORK_ENV, log


def _load() -> None:
    """Import the modules whose ``@scenario`` functions fill ``SCENARIOS``."""
    import tests.agents.flows  # noqa: F401
    import tests.agents.record_screens  # noqa: F401


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: python -m tests.agents.scenarios NAME PARAMS_JSON\n")
        return 2
    _load()
    name, params = argv[1], json.loads(argv[2])
    work = Path(os.environ[WORK_ENV])
    try:
        function = SCENARIOS[name]
        log(f"scenario {name} {json.dumps(params)}")
        result = function(work, params)
    except Exception:  # noqa: BLE001 - reported to the outside as the scenario's failure
        result = {"_error": traceback.format_exc()}
    (work / "result.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
