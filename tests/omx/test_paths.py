"""isSameOrInsidePath conformance: golden rows from the real oh-my-codex/Node, plus properties."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pure.omx.paths import (
    is_same_or_inside_path,
    node_is_absolute,
    node_relative,
    posix_resolve,
    win32_resolve,
)
from tests.omx.conftest import load_golden

GOLDEN = "paths.json"
DOC = load_golden(GOLDEN)
CASES: list[dict[str, Any]] = DOC["cases"]


def _id(case: dict[str, Any]) -> str:
    i = case["input"]
    return f"{i['semantics']}:{i['path']!r}<{i['root']!r}"


def test_golden_file_is_substantial() -> None:
    origins = {c["origin"] for c in CASES}
    assert origins == {"spec-12", "edge", "fuzz"}
    assert sum(c["origin"] == "spec-12" for c in CASES) == 19
    assert len(CASES) > 400


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_golden(case: dict[str, Any], update_goldens: bool, golden_updater: Callable[[str, Any], None]) -> None:
    i = case["input"]
    rel = node_relative(i["root"], i["path"], i["semantics"])
    inside = is_same_or_inside_path(i["path"], i["root"], i["semantics"])
    if update_goldens:
        case["expected"] = {"relative": rel, "inside": inside}
        golden_updater(GOLDEN, DOC)
        return
    assert {"relative": rel, "inside": inside} == case["expected"]
    if "deviation" not in case:
        assert case["expected"] == case["node"], "panefleet must agree with Node outside documented deviations"
    else:
        # Deviations only ever fail closed.
        assert not inside


@pytest.mark.parametrize(
    ("path", "root", "sem", "want"),
    [
        ("C:\\repo\\.omx\\team\\alpha", "C:\\repo", "win32", True),
        ("c:/REPO/.omx\\team/alpha", "C:\\repo", "win32", True),
        ("D:\\foreign\\worker", "C:\\repo", "win32", False),
        ("\\\\server\\foreign-share\\repo\\worker", "\\\\server\\share\\repo", "win32", False),
        ("/repo/..foo", "/repo", "posix", True),
        ("/repo/../foreign/worker", "/repo", "posix", False),
        ("C:\\repo\\x", "C:\\repo", "posix", False),  # posix: backslash is an ordinary character
    ],
)
def test_spot_checks(path: str, root: str, sem: Any, want: bool) -> None:
    assert is_same_or_inside_path(path, root, sem) is want


def test_relative_inputs_use_cwd() -> None:
    assert is_same_or_inside_path("x/y", "/work/repo", "posix", cwd="/work/repo")
    assert not is_same_or_inside_path("../y", "/work/repo", "posix", cwd="/work/repo")
    assert is_same_or_inside_path("x", "C:\\work", "win32", cwd="C:\\work")
    assert is_same_or_inside_path("C:x", "C:\\work", "win32", cwd="c:\\work")
    assert not is_same_or_inside_path("C:x", "C:\\work", "win32", cwd="D:\\work")


def test_resolvers() -> None:
    assert posix_resolve("//a/./b/../c/") == "/a/c"
    assert posix_resolve("../../x") == "/x"
    assert win32_resolve("c:/a/../b/") == "c:\\b"
    assert win32_resolve("//srv/share") == "\\\\srv\\share\\"
    assert win32_resolve("\\\\.\\pipe\\..\\x") == "\\\\.\\x"
    assert node_is_absolute("C:\\x", "win32") and not node_is_absolute("C:x", "win32")
    assert node_is_absolute("\\x", "win32") and not node_is_absolute("\\x", "posix")


_seg = st.sampled_from(["a", "B", "repo", "..", ".", "..x", "x..", "", "sp ace"])


@given(st.lists(_seg, max_size=6), st.lists(_seg, max_size=6), st.sampled_from(["/", "\\"]))
def test_win32_containment_matches_component_prefix(root: list[str], sub: list[str], sep: str) -> None:
    root_path = "C:" + sep + sep.join(root)
    path = root_path + sep + sep.join(sub)
    folded_root = [c.lower() for c in win32_resolve(root_path).split("\\")[1:] if c]
    folded_path = [c.lower() for c in win32_resolve(path).split("\\")[1:] if c]
    want = folded_path[: len(folded_root)] == folded_root
    assert is_same_or_inside_path(path, root_path, "win32") is want
    assert is_same_or_inside_path(path.upper(), root_path.lower(), "win32") is want


@given(st.lists(_seg, max_size=6), st.lists(_seg, max_size=6))
def test_posix_containment_matches_component_prefix(root: list[str], sub: list[str]) -> None:
    root_path = "/" + "/".join(root)
    path = root_path + "/" + "/".join(sub)
    r = [c for c in posix_resolve(root_path).split("/") if c]
    p = [c for c in posix_resolve(path).split("/") if c]
    assert is_same_or_inside_path(path, root_path, "posix") is (p[: len(r)] == r)
