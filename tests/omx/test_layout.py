"""Pane placement for scale-up (``pure/omx/layout.py``): the geometry parser, the placement rule,
and tmux 3.3a's split arithmetic checked against real private servers."""

from __future__ import annotations

import random
from collections.abc import Mapping

import pytest
from attrs import evolve
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from pure import model as m
from pure import tmux as t
from pure.omx import layout as lay
from pure.omx.layout import (
    GEOMETRY_FORMAT,
    MIN_PANE_HEIGHT,
    MIN_PANE_WIDTH,
    NewWindow,
    PaneBox,
    Placement,
    Split,
    apply_placement,
    choose_placement,
    geometry_from_answer,
    geometry_step,
    parse_geometry,
    placement_step,
    plan_placements,
    planned_index,
    planned_pane_id,
    planned_window_id,
)
from tests.conftest import TmuxServer


def row(pane: str = "%0", session: str = "$0", window: str = "@0", zoomed: str = "0", border: str = "off",
        left: object = 0, top: object = 0, width: object = 200, height: object = 50,
        window_width: object = 200, window_height: object = 50) -> str:
    return "\t".join(str(v) for v in (pane, session, window, zoomed, border, left, top, width, height,
                                      window_width, window_height))


def box(pane: str = "%0", width: int = 200, height: int = 50, *, left: int = 0, top: int = 0,
        window: str = "@0", window_width: int | None = None, window_height: int | None = None,
        session: str = "$0", zoomed: bool = False) -> PaneBox:
    return PaneBox(pane_id=pane, session_id=session, window_id=window, left=left, top=top, width=width,
                   height=height, window_width=window_width or left + width,
                   window_height=window_height or top + height, zoomed=zoomed)


def leader_only(width: int = 200, height: int = 50) -> dict[str, PaneBox]:
    return {"%0": box("%0", width, height)}


# ------------------------------------------------------------------------------------------ parsing


def test_geometry_step_is_a_read_only_list_panes() -> None:
    step = geometry_step()
    assert step == m.Run(tool="tmux", args=("list-panes", "-a", "-F", GEOMETRY_FORMAT))
    assert not step.mutates
    assert GEOMETRY_FORMAT.count("\t") == 10
    for name in ("pane_id", "session_id", "window_id", "pane_width", "pane_height", "pane_left", "pane_top",
                 "window_width", "window_height", "window_zoomed_flag", "pane-border-status"):
        assert "#{" + name + "}" in GEOMETRY_FORMAT


def test_parses_a_good_table() -> None:
    text = (row("%0", width=100) + "\n" + row("%1", left=101, width=99) + "\n"
            + row("%7", "$3", "@9", "1", "top", 0, 1, 80, 23, 80, 24) + "\n")
    parsed = parse_geometry(text)
    assert isinstance(parsed, Success)
    boxes = parsed.unwrap()
    assert list(boxes) == ["%0", "%1", "%7"]
    assert boxes["%1"] == box("%1", 99, 50, left=101, window_width=200)
    assert boxes["%7"] == PaneBox(pane_id="%7", session_id="$3", window_id="@9", left=0, top=1, width=80,
                                  height=23, window_width=80, window_height=24, zoomed=True, border_status="top")
    assert boxes["%0"].area == 5000


@pytest.mark.parametrize("text", ["", row(), row() + "\r\n", row() + "\n"])
def test_line_endings_and_empty(text: str) -> None:
    assert parse_geometry(text).unwrap() == ({} if not text else {"%0": box()})


def test_leading_zeros_are_numbers() -> None:
    assert parse_geometry(row(width="0200")).unwrap()["%0"].width == 200


BAD_ROWS: list[tuple[str, str, str]] = [
    ("too_few_fields", "\t".join(row().split("\t")[:10]), "expected 11 tab-separated fields, got 10"),
    ("too_many_fields", row() + "\tx", "expected 11 tab-separated fields, got 12"),
    ("pane_id_no_sigil", row(pane="0"), "bad pane_id '0'"),
    ("pane_id_bare_sigil", row(pane="%"), "bad pane_id '%'"),
    ("pane_id_letters", row(pane="%a1"), "bad pane_id '%a1'"),
    ("pane_id_space", row(pane="%1 "), "bad pane_id '%1 '"),
    ("session_id", row(session="main"), "bad session_id 'main'"),
    ("session_id_unicode_digit", row(session="$٤"), "bad session_id"),
    ("window_id", row(window="0"), "bad window_id '0'"),
    ("zoomed_flag", row(zoomed="2"), "window_zoomed_flag must be 0 or 1, got '2'"),
    ("border_status", row(border="left"), "pane-border-status must be off, top or bottom, got 'left'"),
    ("left_negative", row(left=-1), "bad pane_left '-1'"),
    ("top_plus", row(top="+1"), "bad pane_top '+1'"),
    ("width_zero", row(width=0), "bad pane_width '0'"),
    ("width_empty", row(width=""), "bad pane_width ''"),
    ("width_float", row(width="1.5"), "bad pane_width '1.5'"),
    ("width_unicode_digit", row(width="٤٢"), "bad pane_width '٤٢'"),
    ("height_space", row(height=" 50"), "bad pane_height ' 50'"),
    ("height_too_big", row(height=10001, window_height=10001), "bad pane_height '10001'"),
    ("window_width_zero", row(window_width=0), "bad window_width '0'"),
    ("window_height_hex", row(window_height="0x32"), "bad window_height '0x32'"),
    ("width_outside_window", row(left=150, width=100), "pane %0 at 150,0 size 100x50 does not fit its window 200x50"),
    ("height_outside_window", row(height=51), "does not fit its window 200x50"),
]


@pytest.mark.parametrize(("text", "problem"), [(t, p) for _, t, p in BAD_ROWS], ids=[n for n, _, _ in BAD_ROWS])
def test_each_malformed_field_is_a_failure_naming_row_and_field(text: str, problem: str) -> None:
    parsed = parse_geometry(row("%5", window="@5") + "\n" + text + "\n")
    assert isinstance(parsed, Failure)
    assert parsed.failure().startswith("row 2: ")
    assert problem in parsed.failure()


@pytest.mark.parametrize("field", ["pane_left", "pane_top", "pane_width", "pane_height", "window_width",
                                   "window_height"])
@pytest.mark.parametrize("digits", [6, 5000, 100_000])
def test_huge_numbers_are_failures_not_exceptions(field: str, digits: int) -> None:
    huge = "9" * digits
    values = {"pane_left": "left", "pane_top": "top", "pane_width": "width", "pane_height": "height",
              "window_width": "window_width", "window_height": "window_height"}
    parsed = parse_geometry(row(**{values[field]: huge}))
    assert isinstance(parsed, Failure)
    assert parsed.failure().startswith(f"row 1: bad {field} ")
    assert len(parsed.failure()) < 120  # the message shows the start of the field, not all of it
    if digits > 24:
        assert f"({digits} characters)" in parsed.failure()


def test_duplicate_pane_is_refused() -> None:
    # a window linked into two sessions is listed once per session by list-panes -a
    parsed = parse_geometry(row() + "\n" + row(session="$1") + "\n")
    assert isinstance(parsed, Failure)
    assert parsed.failure().startswith("row 2: duplicate pane id %0")


@pytest.mark.parametrize("other", [row("%1", session="$1"), row("%1", window_width=201),
                                   row("%1", zoomed="1"), row("%1", border="top", top=1, height=49)])
def test_rows_of_one_window_must_agree(other: str) -> None:
    parsed = parse_geometry(row() + "\n" + other + "\n")
    assert isinstance(parsed, Failure)
    assert parsed.failure() == "row 2: pane %1 disagrees with an earlier row about window @0"


@pytest.mark.parametrize("text", ["\n", "\n\n", row() + "\r", row() + "\n\n"])
def test_blank_rows_are_failures(text: str) -> None:
    assert isinstance(parse_geometry(text), Failure)


@given(st.text(alphabet=st.sampled_from("%$@0123456789\t\n\r -+xofpbtm٤"), max_size=200))
def test_parser_is_total(text: str) -> None:
    assert isinstance(parse_geometry(text), (Success, Failure))


@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 10_000), st.integers(0, 10_000),
                          st.integers(1, 10_000)), min_size=1, max_size=8))
def test_round_trip(sizes: list[tuple[int, int, int, int]]) -> None:
    lines = []
    expected = {}
    for number, (left, width, top, height) in enumerate(sizes):
        left, top = min(left, 10_000 - width), min(top, 10_000 - height)
        ww, wh = left + width, top + height
        lines.append(row(f"%{number}", "$0", f"@{number}", "0", "off", left, top, width, height, ww, wh))
        expected[f"%{number}"] = box(f"%{number}", width, height, left=left, top=top, window=f"@{number}",
                                     window_width=ww, window_height=wh)
    assert parse_geometry("\n".join(lines)).unwrap() == expected


def test_geometry_from_answer() -> None:
    assert geometry_from_answer(m.Proc(exit_code=0, stdout=row() + "\n")).unwrap() == {"%0": box()}
    assert geometry_from_answer(m.Proc(exit_code=1, stderr="no server running\n")).failure() == "no server running"
    assert geometry_from_answer(m.Proc(exit_code=1)).failure() == "tmux exited 1"
    assert geometry_from_answer(m.Proc(exit_code=None)).failure() == "tmux could not be started"


def test_read_geometry_program() -> None:
    program = lay.read_geometry()
    assert next(program) == geometry_step()
    with pytest.raises(StopIteration) as stop:
        program.send(m.Proc(exit_code=0, stdout=row()))
    assert stop.value.value.unwrap() == {"%0": box()}


# --------------------------------------------------------------------------------- tmux arithmetic


@pytest.mark.parametrize(("size", "expected"), [(1, None), (2, None), (3, (1, 1)), (4, (2, 1)), (5, (2, 2)),
                                                (49, (24, 24)), (50, (25, 24)), (199, (99, 99)), (200, (100, 99))])
def test_split_sizes(size: int, expected: tuple[int, int] | None) -> None:
    assert lay.split_sizes(size) == expected


def test_split_box_border_status() -> None:
    top = evolve(box("%0", 200, 49, top=1, window_height=50), border_status="top")
    kept, new = lay.split_box(top, "-v", "%9") or (None, None)
    assert (kept and (kept.top, kept.height), new and (new.top, new.height)) == ((1, 24), (26, 24))
    bottom = evolve(box("%0", 200, 49, window_height=50), border_status="bottom")
    kept, new = lay.split_box(bottom, "-v", "%9") or (None, None)
    assert (kept and (kept.top, kept.height), new and (new.top, new.height)) == ((0, 25), (26, 23))
    kept, new = lay.split_box(top, "-h", "%9") or (None, None)
    assert (kept and (kept.left, kept.width, kept.height), new and (new.left, new.width, new.height)) == (
        (0, 100, 49), (101, 99, 49))


# ----------------------------------------------------------------------------------------- planning


def owned(pane: str) -> t.OwnedPane:
    """A stand-in for the proof the program takes before it splits (pure/tmux/owned.py)."""
    return t.OwnedPane(pane_id=pane, pid=1)


def only(result: object) -> Placement:
    assert isinstance(result, Success), result
    placement = result.unwrap()
    assert isinstance(placement, (Split, NewWindow))
    return placement


def test_defaults() -> None:
    assert (MIN_PANE_WIDTH, MIN_PANE_HEIGHT) == (40, 10)


def test_first_worker_splits_the_leader_side_by_side() -> None:
    placement = only(choose_placement(leader_only(), ["%0"], leader_pane="%0"))
    assert placement == Split(target="%0", direction="-h", target_box=box("%0", 100, 50, window_width=200),
                              new_box=box(planned_pane_id(0), 99, 50, left=101))
    assert placement_step(placement, owned("%0")).args == ("split-window", "-h", "-t", "%0")


def split_target(boxes: Mapping[str, PaneBox], candidates: list[str]) -> str:
    placement = only(choose_placement(boxes, candidates, leader_pane="%0"))
    assert isinstance(placement, Split)
    return placement.target


def test_largest_candidate_wins_and_ties_go_to_the_earlier_one() -> None:
    boxes = {"%0": box("%0", 100, 50, window_width=200), "%1": box("%1", 99, 50, left=101),
             "%2": box("%2", 60, 30, window="@1"), "%3": box("%3", 99, 50, left=101, window="@2")}
    assert split_target(boxes, ["%2", "%1", "%0"]) == "%0"
    assert split_target(boxes, ["%2", "%1", "%3"]) == "%1"
    assert split_target(boxes, ["%2", "%3", "%1"]) == "%3"
    # a larger pane that cannot be split loses to a smaller one that can
    boxes = {"%0": box("%0", 79, 19), "%1": box("%1", 81, 12, window="@1")}
    chosen = only(choose_placement(boxes, ["%0", "%1"], leader_pane="%0"))
    assert isinstance(chosen, Split) and chosen.target == "%1" and chosen.direction == "-h"


@pytest.mark.parametrize(("width", "height", "direction"), [
    (200, 50, "-h"), (101, 50, "-h"), (100, 50, "-v"), (99, 50, "-v"), (80, 80, "-v"), (250, 200, "-v"),
    (81, 40, "-h"),
    (79, 30, "-v"),  # -h would leave 39 columns: the other direction is used
    (100, 20, "-h"), (100, 21, "-h"),
    (82, 20, "-h"),  # -v would leave 9 rows, -h leaves 41 and 40 columns
])
def test_direction(width: int, height: int, direction: str) -> None:
    placement = only(choose_placement(leader_only(width, height), ["%0"], leader_pane="%0"))
    assert isinstance(placement, Split) and placement.direction == direction
    assert placement.target_box.width >= 40 and placement.new_box.height >= 10


@pytest.mark.parametrize(("width", "height"), [(79, 20), (80, 20), (80, 19), (40, 20), (40, 10)])
def test_new_window_when_no_pane_can_be_split(width: int, height: int) -> None:
    boxes = {"%0": box("%0", width, height, window_width=width + 30, session="$4"),
             "%1": box("%1", 29, height, left=width + 1, session="$4")}
    placement = only(choose_placement(boxes, ["%1", "%0"], leader_pane="%0"))
    assert placement == NewWindow(session_id="$4", new_box=box(planned_pane_id(0), width + 30, height,
                                                               window=planned_window_id(0), session="$4"))
    assert placement_step(placement, owned("%1")).args == ("new-window", "-t", "$4:")


def test_zoomed_windows_are_not_split() -> None:
    boxes = {"%0": box("%0", zoomed=True)}
    assert isinstance(only(choose_placement(boxes, ["%0"], leader_pane="%0")), NewWindow)


def test_new_window_takes_the_border_status_of_the_leaders_window() -> None:
    # a 40x19 pane below a top status line: -h leaves 20 columns, -v leaves 9 rows for each half
    boxes = {"%0": evolve(box("%0", 40, 19, top=1, window_height=20), border_status="top")}
    placement = only(choose_placement(boxes, ["%0"], leader_pane="%0"))
    assert isinstance(placement, NewWindow)
    assert (placement.new_box.top, placement.new_box.height, placement.new_box.border_status) == (1, 19, "top")


@pytest.mark.parametrize(("width", "height"), [(30, 8), (39, 50), (200, 9)])
def test_windows_smaller_than_a_worker_pane_are_refused(width: int, height: int) -> None:
    planned = plan_placements(leader_only(width, height), ["%0"], 3, leader_pane="%0")
    assert isinstance(planned, Failure)
    refusal = planned.failure()
    assert refusal.reason == "window_too_small"
    assert refusal.message.startswith("worker 1 of 3: ")
    assert f"would be {width}x{height}" in refusal.message and "40x10" in refusal.message


def test_a_border_status_line_can_make_a_window_too_small() -> None:
    boxes = {"%0": evolve(box("%0", 80, 9, top=1, window_height=10), border_status="top")}
    refusal = plan_placements(boxes, ["%0"], 1, leader_pane="%0").failure()
    assert refusal.reason == "window_too_small" and "(a 80x9 pane)" in refusal.message


def test_a_refusal_later_in_the_plan_refuses_the_whole_plan() -> None:
    planned = plan_placements(leader_only(81, 9), ["%0"], 1, leader_pane="%0", min_width=40, min_height=9)
    assert isinstance(planned, Success) and len(planned.unwrap()) == 1
    refusal = plan_placements(leader_only(81, 9), ["%0"], 2, leader_pane="%0", min_height=10).failure()
    assert refusal.message.startswith("worker 1 of 2: ")


def test_bad_requests() -> None:
    assert plan_placements(leader_only(), ["%0"], -1, leader_pane="%0").failure().reason == "bad_request"
    assert plan_placements(leader_only(), ["%0"], 1, leader_pane="%0", min_width=0).failure().reason == "bad_request"
    unknown = plan_placements(leader_only(), ["%0", "%8"], 1, leader_pane="%0").failure()
    assert unknown.reason == "unknown_pane" and "%8" in unknown.message
    assert plan_placements(leader_only(), [], 1, leader_pane="%9").failure().reason == "unknown_pane"
    assert plan_placements(leader_only(), ["%0"], 0, leader_pane="%0").unwrap() == []


def test_planned_ids() -> None:
    assert planned_index(planned_pane_id(12)) == 12
    assert planned_index("%12") is None and planned_index("planned:") is None and planned_index("planned:x") is None
    split = Split(target=planned_pane_id(3), direction="-v", target_box=box(), new_box=box())
    assert placement_step(split, owned("%44")).args == ("split-window", "-v", "-t", "%44")


def windows_of(boxes: Mapping[str, PaneBox]) -> dict[str, list[PaneBox]]:
    found: dict[str, list[PaneBox]] = {}
    for pane in boxes.values():
        found.setdefault(pane.window_id, []).append(pane)
    return found


def assert_tiles(boxes: Mapping[str, PaneBox]) -> None:
    """Panes lie inside their window and never overlap."""
    for panes in windows_of(boxes).values():
        cells: set[tuple[int, int]] = set()
        for pane in panes:
            assert pane.left + pane.width <= pane.window_width and pane.top + pane.height <= pane.window_height
            mine = {(x, y) for x in range(pane.left, pane.left + pane.width)
                    for y in range(pane.top, pane.top + pane.height)}
            assert not cells & mine
            cells |= mine


def test_twenty_workers_fit_a_200x50_window_with_splits_and_new_windows() -> None:
    plan = plan_placements(leader_only(), ["%0"], 20, leader_pane="%0").unwrap()
    assert len(plan) == 20
    kinds = ["window" if isinstance(p, NewWindow) else "split" for p in plan]
    assert kinds == ["split"] * 15 + ["window"] + ["split"] * 4
    boxes: dict[str, PaneBox] = leader_only()
    for placement in plan:
        boxes = apply_placement(boxes, placement)
        assert_tiles(boxes)
        assert all(p.width >= 40 and p.height >= 10 for p in boxes.values())
    assert len(boxes) == 21
    assert {w: len(p) for w, p in windows_of(boxes).items()} == {"@0": 16, planned_window_id(15): 5}
    assert sorted({(p.width, p.height) for p in windows_of(boxes)["@0"]}) == [
        (49, 11), (49, 12), (50, 11), (50, 12)]


def test_the_reported_case_250x200_reaches_twenty_workers() -> None:
    plan = plan_placements(leader_only(250, 200), ["%0"], 20, leader_pane="%0").unwrap()
    assert all(isinstance(p, Split) for p in plan)
    boxes: dict[str, PaneBox] = leader_only(250, 200)
    for placement in plan:
        boxes = apply_placement(boxes, placement)
    assert min(p.width for p in boxes.values()) >= 61 and min(p.height for p in boxes.values()) >= 24


def test_determinism_and_snapshot_order_does_not_matter() -> None:
    boxes = {"%3": box("%3", 99, 50, left=101, window_width=200), "%0": box("%0", 100, 50, window_width=200),
             "%5": box("%5", 120, 40, window="@1", session="$0")}
    first = plan_placements(boxes, ["%0", "%3", "%5"], 12, leader_pane="%0")
    again = plan_placements(dict(reversed(list(boxes.items()))), ["%0", "%3", "%5"], 12, leader_pane="%0")
    assert first == again == plan_placements(boxes, ["%0", "%3", "%5", "%0"], 12, leader_pane="%0")


@pytest.mark.parametrize("seed", range(20))
def test_replanning_from_the_predicted_geometry_agrees_with_the_plan(seed: int) -> None:
    rng = random.Random(seed)
    width, height = rng.randint(40, 400), rng.randint(10, 150)
    count = rng.randint(1, 25)
    plan = plan_placements(leader_only(width, height), ["%0"], count, leader_pane="%0").unwrap()
    boxes: dict[str, PaneBox] = leader_only(width, height)
    pool = ["%0"]
    for index, placement in enumerate(plan):
        assert only(choose_placement(boxes, pool, leader_pane="%0", new_pane_id=planned_pane_id(index),
                                     new_window_id=planned_window_id(index))) == placement
        boxes = apply_placement(boxes, placement)
        pool.append(placement.new_box.pane_id)
        assert_tiles(boxes)


# ------------------------------------------------------------------------------------------ real tmux


def real_geometry(server: TmuxServer) -> dict[str, PaneBox]:
    return parse_geometry(server.cmd(*geometry_step().args).stdout).unwrap()


def session_200x50(server: TmuxServer) -> str:
    return server.cmd("new-session", "-d", "-s", "lead", "-x", "200", "-y", "50", "-P", "-F", "#{pane_id}",
                      "sleep 100000").stdout.strip()


class Created:
    """The real panes and windows behind a plan's planned ids."""

    def __init__(self) -> None:
        self.panes: list[str] = []
        self.windows: dict[str, str] = {}

    def pane(self, pane_id: str) -> str:
        index = planned_index(pane_id)
        return pane_id if index is None or index >= len(self.panes) else self.panes[index]

    def box(self, b: PaneBox) -> PaneBox:
        return evolve(b, pane_id=self.pane(b.pane_id), window_id=self.windows.get(b.window_id, b.window_id))

    def placement(self, p: Placement) -> Placement:
        if isinstance(p, Split):
            return evolve(p, target=self.pane(p.target), target_box=self.box(p.target_box), new_box=self.box(p.new_box))
        return evolve(p, new_box=self.box(p.new_box))


@pytest.mark.tmux
@pytest.mark.parametrize("border", ["off", "top", "bottom"])
def test_twenty_workers_on_real_tmux_match_the_prediction(tmux_server: TmuxServer, border: str) -> None:
    leader = session_200x50(tmux_server)
    tmux_server.cmd("set-option", "-g", "pane-border-status", border)
    start = real_geometry(tmux_server)
    assert start[leader].width == 200 and start[leader].window_height == 50
    plan = plan_placements(start, [leader], 20, leader_pane=leader).unwrap()
    assert sum(isinstance(p, NewWindow) for p in plan) == 1
    predicted = start
    created = Created()
    candidates = [leader]
    for index, placement in enumerate(plan):
        live = real_geometry(tmux_server)
        # re-planning from tmux's own geometry chooses what the plan chose
        replanned = choose_placement(live, candidates, leader_pane=leader, new_pane_id=planned_pane_id(index),
                                     new_window_id=planned_window_id(index)).unwrap()
        assert created.placement(replanned) == created.placement(placement)
        into = owned(created.pane(placement.target) if isinstance(placement, Split) else leader)
        done = tmux_server.cmd(*placement_step(placement, into, "-d", "-P", "-F", "#{pane_id}\t#{window_id}",
                                               "sleep 100000").args, check=False)
        assert done.returncode == 0, f"placement {index} {placement} failed: {done.stderr}"
        pane, window = done.stdout.strip().split("\t")
        created.panes.append(pane)
        if isinstance(placement, NewWindow):
            created.windows[placement.new_box.window_id] = window
        predicted = apply_placement(predicted, placement)
        assert real_geometry(tmux_server) == {created.pane(k): created.box(v) for k, v in predicted.items()}
        candidates.append(pane)
    assert len(tmux_server.panes()) == 21


@pytest.mark.tmux
@pytest.mark.parametrize("border", ["off", "top", "bottom"])
def test_split_arithmetic_matches_tmux_for_random_splits(tmux_server: TmuxServer, border: str) -> None:
    """Arbitrary targets, directions and window sizes: ``split_box`` predicts every pane exactly."""
    rng = random.Random(f"layout-{border}")
    checked = 0
    tmux_server.cmd("new-session", "-d", "-s", "keep", "sleep 100000")
    tmux_server.cmd("set-option", "-g", "pane-border-status", border)
    for trial in range(4):
        width, height = rng.randint(20, 250), rng.randint(10, 80)
        first = tmux_server.cmd("new-session", "-d", "-s", f"t{trial}", "-x", str(width), "-y", str(height), "-P",
                                "-F", "#{pane_id}", "sleep 100000").stdout.strip()
        window = real_geometry(tmux_server)[first].window_id
        predicted = {k: v for k, v in real_geometry(tmux_server).items() if v.window_id == window}
        for _ in range(10):
            target = rng.choice(sorted(predicted))
            direction: lay.Direction = rng.choice(["-h", "-v"])
            halves = lay.split_box(predicted[target], direction, "?")
            done = tmux_server.cmd("split-window", direction, "-d", "-t", target, "-P", "-F", "#{pane_id}",
                                   "sleep 100000", check=False)
            if halves is None:
                assert done.returncode != 0 and "no space for new pane" in done.stderr
                continue
            assert done.returncode == 0, done.stderr
            new = done.stdout.strip()
            predicted[target], predicted[new] = halves[0], evolve(halves[1], pane_id=new)
            live = {k: v for k, v in real_geometry(tmux_server).items() if v.window_id == window}
            assert live == predicted
            checked += 1
    assert checked >= 30
