"""Where each new worker pane goes: read the pane geometry, then split the largest pane that still
leaves two usable halves, or open a new window when none can be split.

oh-my-codex splits every worker from the previous worker's pane (``split_target`` in
``pure/omx/scale_up/plan.py``, still used with ``OMX_TEAM_SKIP_READY_WAIT=1``), so each pane halves and
a 250x200 window runs out of space at the 8th worker. This module only decides; it never runs anything but the read-only ``list-panes`` of
:func:`geometry_step`.

The rule (also in ``docs/scale-up.md``, *Pane placement*):

* A pane can take a new worker when splitting it leaves both halves at least
  ``min_width`` x ``min_height`` cells (default :data:`MIN_PANE_WIDTH` x :data:`MIN_PANE_HEIGHT`).
* Among the candidates (the team's live worker panes and the leader pane, in the caller's
  preference order) the largest such pane by area wins; equal areas go to the earlier candidate.
  Panes of a zoomed window are never split (tmux would unzoom the user's view, and ``list-panes``
  reports the zoomed pane as large as the window, so its real size is unknown).
* It is split along its longer side in terminal terms (a cell is about twice as tall as wide):
  ``-h`` (side by side) when ``width > 2 * height``, else ``-v`` (one above the other; a visually
  square pane keeps its long lines). When only the other direction keeps both halves usable, that
  one is used.
* When no candidate can be split, the worker gets a new window in the leader pane's session,
  predicted as large as the leader's window; its pane is a candidate for later workers. A new
  window smaller than the minimum is refused (:class:`LayoutRefusal`, ``window_too_small``).

tmux 3.3a's arithmetic for ``split-window -h|-v`` without ``-l`` (measured on real servers, and
checked by ``tests/omx/test_layout.py``): a layout cell of ``size`` columns (``-h``) or rows
(``-v``) keeps ``size // 2`` at its left/top, one column/row becomes the separator, and the new
pane gets the remaining ``(size - 1) // 2`` right of/below it; the other dimension is unchanged,
and no other pane moves. A cell smaller than 3 is refused (``no space for new pane``). With
``pane-border-status top`` a pane whose cell touches the window's top edge is one row shorter
(its status line takes the row), with ``bottom`` one touching the bottom edge is; the cells, and
so the arithmetic, are the same. ``new-window`` opens a single pane as large as the window.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Union

from attrs import evolve, frozen
from returns.result import Failure, Result, Success

from pure import model as m
from pure import tmux as t
from pure.program import Gen, expect
from pure.tmux import facts

# A worker pane is planned at least this large. Chosen, not measured (no agent CLI is installed
# here): 40 columns keep an agent TUI's prompt box and footer readable, 10 rows leave a few lines
# of history above a 3-4 row composer and a status line. Callers may pass other minimums.
MIN_PANE_WIDTH = 40
MIN_PANE_HEIGHT = 10

# tmux 3.3a clamps a window to at most 10000 x 10000 cells (``new-session -x 10001`` makes a 10000
# wide window); anything larger in a snapshot is not a real geometry.
MAX_CELLS = 10_000
_MAX_DIGITS = len(str(MAX_CELLS))

PLANNED_PANE_PREFIX = "planned:"
PLANNED_WINDOW_PREFIX = "planned-window:"

BorderStatus = Literal["off", "top", "bottom"]
Direction = Literal["-h", "-v"]

_FIELDS = facts.GEOMETRY.fields
GEOMETRY_FORMAT = facts.GEOMETRY.format
_BORDERS: dict[str, BorderStatus] = {"off": "off", "top": "top", "bottom": "bottom"}


@frozen(kw_only=True)
class PaneBox:
    """One pane's place on screen (in cells) and the size of its window."""

    pane_id: str
    session_id: str
    window_id: str
    left: int
    top: int
    width: int
    height: int
    window_width: int
    window_height: int
    zoomed: bool = False
    border_status: BorderStatus = "off"

    @property
    def area(self) -> int:
        return self.width * self.height


@frozen(kw_only=True)
class Split:
    """``split-window <direction> -t <target>``; ``target`` may be a planned pane (:func:`planned_index`)."""

    kind: Literal["split"] = "split"
    target: str
    direction: Direction
    target_box: PaneBox  # the target after the split
    new_box: PaneBox


@frozen(kw_only=True)
class NewWindow:
    """``new-window -t <session_id>:`` (see :func:`placement_step`)."""

    kind: Literal["new_window"] = "new_window"
    session_id: str
    new_box: PaneBox


Placement = Union[Split, NewWindow]

RefusalReason = Literal["window_too_small", "unknown_pane", "bad_request"]


@frozen(kw_only=True)
class LayoutRefusal:
    """Why no placement can be planned; nothing should be created."""

    reason: RefusalReason
    message: str


# ------------------------------------------------------------------------------------------ reading


def geometry_step() -> m.Run:
    """The read-only geometry snapshot of every pane on the server."""
    return t.tmux("list-panes", "-a", "-F", GEOMETRY_FORMAT)


def _show(field: str) -> str:
    return repr(field) if len(field) <= 24 else f"{field[:12]!r}… ({len(field)} characters)"


def _count(field: str, *, least: int) -> int | None:
    """A decimal in ``least..MAX_CELLS``; None for anything else (length checked before ``int``)."""
    if not field or len(field) > _MAX_DIGITS or not (field.isascii() and field.isdigit()):
        return None
    value = int(field)
    return value if least <= value <= MAX_CELLS else None


def _tmux_id(field: str, sigil: str) -> bool:
    return len(field) >= 2 and field[0] == sigil and field[1:].isascii() and field[1:].isdigit()


def parse_geometry(stdout: str) -> Result[dict[str, PaneBox], str]:
    """Parse ``list-panes -a -F GEOMETRY_FORMAT`` strictly; Failure names the first bad row and field.

    A pane listed twice (a window linked into several sessions) is refused, as ``parse_pane_table``
    in ``pure/tmux/parse.py`` refuses it; so are rows of one window that disagree about it.
    """
    boxes: dict[str, PaneBox] = {}
    windows: dict[str, tuple[str, int, int, bool, str]] = {}
    for number, fields in enumerate(facts.GEOMETRY.rows(stdout), start=1):
        if len(fields) != len(_FIELDS):
            return Failure(f"row {number}: expected {len(_FIELDS)} tab-separated fields, got {len(fields)}")
        pane_id, session_id, window_id, zoomed, border = fields[:5]
        if not _tmux_id(pane_id, "%"):
            return Failure(f"row {number}: bad pane_id {_show(pane_id)}")
        if pane_id in boxes:
            return Failure(f"row {number}: duplicate pane id {pane_id} (a window linked into several sessions?)")
        if not _tmux_id(session_id, "$"):
            return Failure(f"row {number}: bad session_id {_show(session_id)}")
        if not _tmux_id(window_id, "@"):
            return Failure(f"row {number}: bad window_id {_show(window_id)}")
        if zoomed not in ("0", "1"):
            return Failure(f"row {number}: window_zoomed_flag must be 0 or 1, got {_show(zoomed)}")
        border_status = _BORDERS.get(border)
        if border_status is None:
            return Failure(f"row {number}: pane-border-status must be off, top or bottom, got {_show(border)}")
        numbers: list[int] = []
        for name, field in zip(_FIELDS[5:], fields[5:], strict=True):
            value = _count(field, least=0 if name in ("pane_left", "pane_top") else 1)
            if value is None:
                return Failure(f"row {number}: bad {name} {_show(field)}")
            numbers.append(value)
        left, top, width, height, window_width, window_height = numbers
        if left + width > window_width or top + height > window_height:
            return Failure(f"row {number}: pane {pane_id} at {left},{top} size {width}x{height} does not fit "
                           f"its window {window_width}x{window_height}")
        window = (session_id, window_width, window_height, zoomed == "1", border)
        if windows.setdefault(window_id, window) != window:
            return Failure(f"row {number}: pane {pane_id} disagrees with an earlier row about window {window_id}")
        boxes[pane_id] = PaneBox(pane_id=pane_id, session_id=session_id, window_id=window_id, left=left, top=top,
                                 width=width, height=height, window_width=window_width,
                                 window_height=window_height, zoomed=zoomed == "1", border_status=border_status)
    return Success(boxes)


def geometry_from_answer(proc: m.Proc) -> Result[dict[str, PaneBox], str]:
    """The geometry from tmux's answer to :func:`geometry_step`; a failed query is a Failure."""
    if proc.exit_code != 0:
        return Failure(proc.stderr.strip() or (
            "tmux could not be started" if proc.exit_code is None else f"tmux exited {proc.exit_code}"))
    return parse_geometry(proc.stdout)


def read_geometry() -> Gen[Result[dict[str, PaneBox], str]]:
    """One geometry snapshot as a program step."""
    proc = yield from expect(geometry_step(), m.Proc)
    return geometry_from_answer(proc)


# ---------------------------------------------------------------------------------- tmux arithmetic


def split_sizes(size: int) -> tuple[int, int] | None:
    """tmux 3.3a's split of a ``size``-cell layout cell without ``-l``: (kept, new), one separator
    between; None when tmux answers ``no space for new pane``."""
    if size < 3:
        return None
    return size // 2, (size - 1) // 2


def _cell(box: PaneBox) -> tuple[int, int]:
    """The top and height of the box's layout cell (a border status line belongs to the cell)."""
    if box.border_status == "top" and box.top == 1:
        return 0, box.height + 1
    if box.border_status == "bottom" and box.top + box.height + 1 == box.window_height:
        return box.top, box.height + 1
    return box.top, box.height


def _from_cell(template: PaneBox, *, pane_id: str, left: int, width: int, top: int, height: int) -> PaneBox:
    if template.border_status == "top" and top == 0:
        top, height = 1, height - 1
    elif template.border_status == "bottom" and top + height == template.window_height:
        height -= 1
    return evolve(template, pane_id=pane_id, left=left, top=top, width=width, height=height)


def split_box(box: PaneBox, direction: Direction, new_pane_id: str) -> tuple[PaneBox, PaneBox] | None:
    """The target and the new pane after ``split-window <direction>`` of ``box``; None if refused."""
    top, height = _cell(box)
    if direction == "-h":
        sizes = split_sizes(box.width)
        if sizes is None:
            return None
        kept, new = sizes
        return (_from_cell(box, pane_id=box.pane_id, left=box.left, width=kept, top=top, height=height),
                _from_cell(box, pane_id=new_pane_id, left=box.left + kept + 1, width=new, top=top, height=height))
    sizes = split_sizes(height)
    if sizes is None:
        return None
    kept, new = sizes
    return (_from_cell(box, pane_id=box.pane_id, left=box.left, width=box.width, top=top, height=kept),
            _from_cell(box, pane_id=new_pane_id, left=box.left, width=box.width, top=top + kept + 1, height=new))


def new_window_box(like: PaneBox, *, pane_id: str, window_id: str) -> PaneBox:
    """The single pane of a new window in ``like``'s session, sized like ``like``'s window."""
    template = evolve(like, window_id=window_id, zoomed=False)
    return _from_cell(template, pane_id=pane_id, left=0, width=like.window_width, top=0, height=like.window_height)


def preferred_direction(box: PaneBox) -> Direction:
    """Split along the longer side, a row counting as two columns; square panes split ``-v``."""
    return "-h" if box.width > 2 * box.height else "-v"


# ----------------------------------------------------------------------------------------- planning


def planned_pane_id(index: int) -> str:
    """The stand-in id of the pane that placement ``index`` (0-based) of a plan creates."""
    return f"{PLANNED_PANE_PREFIX}{index}"


def planned_window_id(index: int) -> str:
    return f"{PLANNED_WINDOW_PREFIX}{index}"


def planned_index(pane_id: str) -> int | None:
    """Which placement of a plan creates ``pane_id``; None for a real pane id."""
    rest = pane_id.removeprefix(PLANNED_PANE_PREFIX)
    if rest == pane_id or not (rest.isascii() and rest.isdigit()):
        return None
    return int(rest)


def _usable(box: PaneBox, min_width: int, min_height: int) -> bool:
    return box.width >= min_width and box.height >= min_height


def _best_split(box: PaneBox, new_pane_id: str, min_width: int, min_height: int) -> Split | None:
    first = preferred_direction(box)
    for direction in (first, "-v" if first == "-h" else "-h"):
        halves = split_box(box, direction, new_pane_id)
        if halves is not None and all(_usable(half, min_width, min_height) for half in halves):
            return Split(target=box.pane_id, direction=direction, target_box=halves[0], new_box=halves[1])
    return None


def _check_request(boxes: Mapping[str, PaneBox], candidates: Sequence[str], leader_pane: str,
                   min_width: int, min_height: int) -> LayoutRefusal | None:
    if min_width < 1 or min_height < 1:
        return LayoutRefusal(reason="bad_request", message=f"minimum pane size {min_width}x{min_height} is not positive")
    for pane in (leader_pane, *candidates):
        if pane not in boxes:
            return LayoutRefusal(reason="unknown_pane", message=f"pane {pane} is not in the geometry snapshot")
    return None


def choose_placement(boxes: Mapping[str, PaneBox], candidates: Sequence[str], *, leader_pane: str,
                     min_width: int = MIN_PANE_WIDTH, min_height: int = MIN_PANE_HEIGHT,
                     new_pane_id: str = planned_pane_id(0),
                     new_window_id: str = planned_window_id(0)) -> Result[Placement, LayoutRefusal]:
    """Where the next worker goes (the rule in the module docstring), from one snapshot."""
    refusal = _check_request(boxes, candidates, leader_pane, min_width, min_height)
    if refusal is not None:
        return Failure(refusal)
    best: Split | None = None
    best_area = -1
    for pane in dict.fromkeys(candidates):
        box = boxes[pane]
        if box.zoomed or box.area <= best_area:
            continue
        split = _best_split(box, new_pane_id, min_width, min_height)
        if split is not None:
            best, best_area = split, box.area
    if best is not None:
        return Success(best)
    leader = boxes[leader_pane]
    box = new_window_box(leader, pane_id=new_pane_id, window_id=new_window_id)
    if not _usable(box, min_width, min_height):
        return Failure(LayoutRefusal(reason="window_too_small", message=(
            f"no candidate pane can be split into two of at least {min_width}x{min_height}, and a new window in "
            f"session {leader.session_id} would be {leader.window_width}x{leader.window_height} (a "
            f"{box.width}x{box.height} pane), smaller than the {min_width}x{min_height} a worker pane needs")))
    return Success(NewWindow(session_id=leader.session_id, new_box=box))


def apply_placement(boxes: Mapping[str, PaneBox], placement: Placement) -> dict[str, PaneBox]:
    """The geometry after ``placement``, as tmux will report it."""
    after = dict(boxes)
    if isinstance(placement, Split):
        after[placement.target] = placement.target_box
    after[placement.new_box.pane_id] = placement.new_box
    return after


def plan_placements(boxes: Mapping[str, PaneBox], candidates: Sequence[str], count: int, *, leader_pane: str,
                    min_width: int = MIN_PANE_WIDTH,
                    min_height: int = MIN_PANE_HEIGHT) -> Result[list[Placement], LayoutRefusal]:
    """The placements of ``count`` new workers, in order, simulating tmux after each one.

    Placement ``i`` creates the pane :func:`planned_pane_id` ``(i)`` (and, for a new window, the
    window :func:`planned_window_id` ``(i)``); a later ``Split.target`` may name it. Each new pane
    joins the end of the candidates, so re-planning from a fresh snapshot with the created panes
    appended to ``candidates`` chooses the same as this plan while tmux behaves as predicted.
    A refusal at any worker refuses the whole plan: nothing should be created.
    """
    if count < 0:
        return Failure(LayoutRefusal(reason="bad_request", message=f"worker count {count} is negative"))
    current = dict(boxes)
    pool = list(dict.fromkeys(candidates))
    plan: list[Placement] = []
    for index in range(count):
        chosen = choose_placement(current, pool, leader_pane=leader_pane, min_width=min_width,
                                  min_height=min_height, new_pane_id=planned_pane_id(index),
                                  new_window_id=planned_window_id(index))
        if isinstance(chosen, Failure):
            refusal = chosen.failure()
            return Failure(evolve(refusal, message=f"worker {index + 1} of {count}: {refusal.message}"))
        placement = chosen.unwrap()
        plan.append(placement)
        current = apply_placement(current, placement)
        pool.append(placement.new_box.pane_id)
    return Success(plan)


def placement_words(placement: Placement | None, target: str, direction: str) -> str:
    """Where a new pane goes, for a plan (``direction`` and ``target``: the split's, without a
    placement)."""
    if isinstance(placement, NewWindow):
        return f"new pane in a new window of session {placement.session_id}"
    side = (placement.direction if placement is not None else direction) == "-h"
    return f"new pane split from {target} ({'side by side' if side else 'below'})"


def placement_step(placement: Placement, into: t.OwnedPane, *rest: str, effect: m.Effect | None = None) -> m.Run:
    """The tmux step that carries out ``placement`` (``rest``: ``-d -P -F … -c DIR COMMAND``).

    ``into`` is the proven split target (the real pane of a planned one); for a new window, the
    proven pane of the team it opens beside.
    """
    if isinstance(placement, Split):
        return t.split_step(into, placement.direction, *rest, effect=effect)
    return t.new_window_step(into, placement.session_id, *rest, effect=effect)
