"""Regenerate tests/goldens/omx/paths.json from the real oh-my-codex 0.20.3 (needs node).

Usage: OMX_DIST=/path/to/package/dist .venv/bin/python tests/omx/oracles/gen_paths.py
Not run by the test suite; the suite only reads the committed JSON.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from pure.omx.paths import is_same_or_inside_path, node_relative  # noqa: E402

SPEC_TABLE = [
    ("C:\\repo", "C:\\repo", "win32"),
    ("C:\\repo\\.omx\\team\\alpha", "C:\\repo", "win32"),
    ("c:/REPO/.omx\\team/alpha", "C:\\repo", "win32"),
    ("\\\\SERVER\\Share\\repo/.omx\\team\\alpha", "\\\\server\\share\\REPO", "win32"),
    ("C:\\repo-other\\worker", "C:\\repo", "win32"),
    ("C:\\repo\\..\\foreign\\worker", "C:\\repo", "win32"),
    ("C:\\foreign\\worker", "C:\\repo", "win32"),
    ("D:\\foreign\\worker", "C:\\repo", "win32"),
    ("\\\\foreign-server\\share\\repo\\worker", "C:\\repo", "win32"),
    ("\\\\server\\foreign-share\\repo\\worker", "C:\\repo", "win32"),
    ("\\\\server\\share\\repo-other\\worker", "C:\\repo", "win32"),
    ("\\\\foreign-server\\share\\repo\\worker", "\\\\server\\share\\repo", "win32"),
    ("\\\\server\\foreign-share\\repo\\worker", "\\\\server\\share\\repo", "win32"),
    ("\\\\server\\share\\repo-other\\worker", "\\\\server\\share\\repo", "win32"),
    ("/repo", "/repo", "posix"),
    ("/repo/.omx/team/alpha", "/repo", "posix"),
    ("/repo-other/worker", "/repo", "posix"),
    ("/repo/../foreign/worker", "/repo", "posix"),
    ("/foreign/worker", "/repo", "posix"),
]

EDGE = [
    ("/repo/..foo", "/repo", "posix"),
    ("/repo/..", "/repo", "posix"),
    ("/repo/../repo/x", "/repo", "posix"),
    ("/repo/./x/", "/repo/", "posix"),
    ("//repo//x", "/repo", "posix"),
    ("/", "/", "posix"),
    ("/x", "/", "posix"),
    ("/", "/repo", "posix"),
    ("/REPO/x", "/repo", "posix"),
    ("/repo\\x", "/repo", "posix"),
    ("/../../repo/x", "/repo", "posix"),
    ("repo/x", "/repo", "posix"),
    ("/repo/a b/$x/`y`/'q'", "/repo", "posix"),
    ("C:\\repo\\..foo", "C:\\repo", "win32"),
    ("C:\\repo\\..", "C:\\repo", "win32"),
    ("C:\\repo\\...", "C:\\repo", "win32"),
    ("C:\\", "C:\\", "win32"),
    ("C:\\x", "C:\\", "win32"),
    ("C:\\", "C:\\repo", "win32"),
    ("c:\\REPO", "C:\\repo\\", "win32"),
    ("C:/repo//x//", "C:\\repo", "win32"),
    ("C:\\repo\\x\\..\\..\\repo\\y", "C:\\repo", "win32"),
    ("C:\\..\\..\\repo\\y", "C:\\repo", "win32"),
    ("C:repo\\x", "C:\\repo", "win32"),
    ("\\repo\\x", "\\repo", "win32"),
    ("/repo/x", "\\repo", "win32"),
    ("\\\\server\\share", "\\\\server\\share\\", "win32"),
    ("\\\\server\\share\\x", "\\\\SERVER\\SHARE", "win32"),
    ("//server/share/x/../../y", "\\\\server\\share", "win32"),
    ("\\\\server\\share\\repo", "\\\\server\\share\\repo\\x", "win32"),
    ("\\\\a\\repo", "\\a\\repo", "win32"),
    ("\\\\.\\pipe\\x", "\\\\.\\pipe", "win32"),
    ("\\\\?\\C:\\repo\\x", "\\\\?\\C:\\repo", "win32"),
    ("\\\\?\\C:\\repo\\x", "C:\\repo", "win32"),
    ("\\\\srv\\team", "\\\\srv\\", "win32"),
    ("C:\\Rep\u00f6\\x", "c:\\rep\u00d6", "win32"),
    ("C:\\\u0130\\x", "C:\\\u0130", "win32"),
    ("C:\\\u0130x", "C:\\\u0130", "win32"),
    # Node's device-less rooted prefix quirk: these are where panefleet deliberately fails closed.
    ("\\a", "\\ab", "win32"),
    ("\\abc", "\\ab", "win32"),
    ("\\ab", "\\abc", "win32"),
    ("\\abcd", "\\a", "win32"),
    ("repo-other", "/repo", "win32"),
]


def fuzz(seed: int, count: int) -> list[tuple[str, str, str]]:
    rnd = random.Random(seed)
    comps = ["repo", "REPO", "Repo-other", "..", ".", "..foo", "a", "A", "", "x.y", "...", "team", " sp ace"]
    pre_w = ["C:\\", "c:/", "D:\\", "C:", "\\\\server\\share\\", "//SERVER/Share/", "\\\\server\\other\\",
             "\\\\srv\\", "\\", "/", "", "C:\\\\", "\\\\server\\share", "\\\\.\\"]
    pre_p = ["/", "//", "", "///", "./"]
    out: list[tuple[str, str, str]] = []
    for _ in range(count):
        sem = rnd.choice(["posix", "win32"])

        def mk(sem: str = sem) -> str:
            s = rnd.choice(pre_w if sem == "win32" else pre_p)
            seps = ["\\", "/"] if sem == "win32" else ["/"]
            n = rnd.randint(0, 4)
            for i in range(n):
                s += rnd.choice(comps) + (rnd.choice(seps) if i < n - 1 or rnd.random() < 0.2 else "")
            return s

        out.append((mk(), mk(), sem))
    return out


def main() -> None:
    rows = (
        [("spec-12", c) for c in SPEC_TABLE]
        + [("edge", c) for c in EDGE]
        + [("fuzz", c) for c in fuzz(20261130, 400)]
    )
    seen: set[tuple[str, str, str]] = set()
    uniq = []
    for origin, c in rows:
        if c not in seen:
            seen.add(c)
            uniq.append((origin, c))
    oracle = subprocess.run(
        ["node", str(HERE / "paths_oracle.mjs")],
        input=json.dumps([list(c) for _, c in uniq]),
        capture_output=True, text=True, check=True, env={**os.environ},
    )
    node = json.loads(oracle.stdout)
    cases = []
    for (origin, (path, root, sem)), n in zip(uniq, node, strict=True):
        rel = node_relative(root, path, sem)  # type: ignore[arg-type]
        inside = is_same_or_inside_path(path, root, sem)  # type: ignore[arg-type]
        case = {
            "origin": origin,
            "input": {"path": path, "root": root, "semantics": sem},
            "node": {"relative": n["relative"], "inside": n["inside"]},
            "expected": {"relative": rel, "inside": inside},
        }
        if rel != n["relative"] or inside != n["inside"]:
            if n["inside"] and not inside:
                case["deviation"] = (
                    "Node's win32.relative mis-slices device-less rooted paths whose first component is "
                    "a string prefix of the other's (e.g. relative('\\\\ab','\\\\a') == '..a'), which "
                    "reports containment; panefleet compares whole components and fails closed."
                )
            elif not n["inside"] and not inside:
                case["deviation"] = (
                    "Same Node prefix mis-slice; only the relative string differs, both say outside."
                )
            else:
                raise SystemExit(f"unexpected disagreement: {case}")
        cases.append(case)
    doc = {
        "format_version": "1.0",
        "kind": "function",
        "function": "isSameOrInsidePath(path, root, semantics) and path.<semantics>.relative(root, path)",
        "comment": (
            "isSameOrInsidePath(path, root, semantics) goldens. 'node' = output of oh-my-codex 0.20.3 "
            "dist/team/scaling.js isSameOrInsidePath with Node v20 path.posix/path.win32 (cwd '/'), "
            "generated by tests/omx/oracles/gen_paths.py; 'expected' = panefleet's answer, equal to "
            "'node' except rows carrying 'deviation'. Origins: spec-12 = spec §12 table, edge = hand-"
            "picked, fuzz = seeded random. Relative inputs resolve against cwd '/' (posix) or '\\\\' (win32)."
        ),
        "cases": cases,
    }
    out = ROOT / "tests" / "goldens" / "omx" / "paths.json"
    out.write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases, {sum('deviation' in c for c in cases)} deviations")


if __name__ == "__main__":
    main()
