"""Finding node for the port tests: missing node fails under CI=true and skips elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PORT = ROOT / "ports" / "js"


def node() -> str:
    found = shutil.which("node")
    if found is not None:
        version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False).stdout.strip()
        major = int(version.lstrip("v").split(".")[0] or 0) if version.startswith("v") else 0
        if major >= 20:
            return found
        reason = f"node {version} is older than 20 (ports/js needs node >= 20)"
    else:
        reason = "node is not installed (ports/js needs node >= 20)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)
