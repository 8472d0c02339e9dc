"""A scale-up that cannot ask tmux for stray panes (pure/omx/strays.py ``Sweep.unproven``) never reuses
the name of a worker a crashed run left: that worker's intent and folder may pin a live pane, and a new
run would overwrite them (or its rollback remove them), leaving the pane named by nothing."""

from __future__ import annotations

import json
from pathlib import Path

from pure import model as m
from pure.omx import strays
from pure.omx.scale_up import scale_up
from pure.program import is_mutation
from tests.harness import ScenarioExecutor, run_scenario
from tests.omx_up.fixtures import StubTmux, UpTeam, request


def test_a_leftover_worker_is_not_reused_while_tmux_cannot_be_asked(tmp_path: Path) -> None:
    team = UpTeam(tmp_path)
    left = {"kind": "scale_up", "worker": "worker-2", "script": str(team.dir / "runtime/worker-2-startup.sh"),
            "pane_id": "%31", "pid": 42424}
    (team.dir / "runtime").mkdir()
    (team.dir / "runtime" / "worker-2.intent").write_text(json.dumps(left))
    (team.dir / "workers" / "worker-2").mkdir()
    stub = StubTmux()

    def tmux(args: tuple[str, ...]) -> m.Proc:
        if args[0] == "list-panes" and args[-1] == strays.STRAY_FORMAT:
            return m.Proc(exit_code=1, stderr="server exited unexpectedly\n")
        return stub(args)

    done, journal = run_scenario(lambda: scale_up(request(team)), ScenarioExecutor(tmp_path, tmux))
    assert done.outcome.status == "refused", done
    assert done.outcome.message == "scale_up_stray_listing_unavailable:worker-2"
    assert json.loads((team.dir / "runtime" / "worker-2.intent").read_text()) == left
    assert not [e for e in journal if is_mutation(e.step)], journal
    assert team.worker_names() == ["worker-1"]


def test_a_pane_s_own_pin_speaks_only_for_the_split_its_intent_announced() -> None:
    """The pane must be numbered no lower than the first new pane of the listing before the split, and
    the intent must not name a pane yet (then the intent's own pid is the record, pure/omx/strays.py
    ``pin_of``)."""
    announced = {"kind": "scale_up", "worker": "worker-1", strays.NEW_PANES_FROM: "%8"}
    assert strays.made_after_intent(announced, "%8")
    assert strays.made_after_intent(announced, "%12")
    assert not strays.made_after_intent(announced, "%7")  # listed before the split: not its pane
    assert not strays.made_after_intent(announced, "%3")
    assert not strays.made_after_intent({**announced, "pane_id": "%8", "pid": 5}, "%8")
    assert not strays.made_after_intent({"kind": "scale_up", "worker": "worker-1"}, "%8")  # no newest: unknown
    assert not strays.made_after_intent({**announced, strays.NEW_PANES_FROM: "8"}, "%8")
    assert not strays.made_after_intent({**announced, strays.NEW_PANES_FROM: 8}, "%8")
    assert not strays.made_after_intent(None, "%8")
    assert not strays.made_after_intent(announced, "8")
