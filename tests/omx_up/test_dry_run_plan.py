"""The scale-up dry run predicts a new pane ready at its first readiness poll."""

from __future__ import annotations

from pathlib import Path

from pure import model as m
from pure.omx.scale_up import scale_up
from shell.cli_scale_up import PREDICTED_READY_OUTPUT
from shell.dryrun import DryRunExecutor
from shell.loop import run_program
from tests.harness import ScenarioExecutor
from tests.omx_up.fixtures import StubTmux, UpTeam, request, rows


def _plan(tmp_path: Path, count: int, capture: str | None) -> list[tuple[str, ...]]:
    team = UpTeam(tmp_path)
    req = request(team, count=count, env={"OMX_TEAM_SKIP_READY_WAIT": "0"})
    tmux = StubTmux(snapshot=lambda _call, _killed: m.Proc(exit_code=0, stdout=rows(("%11", 0, 42411),
                                                                                   ("%21", 0, 42421))))
    real = ScenarioExecutor(tmp_path, tmux)
    dry = DryRunExecutor(real, predicted_capture=capture)  # type: ignore[arg-type]
    done, journal = run_program(lambda: scale_up(req), dry)
    assert done.outcome.status == "ok", done.outcome.message
    return [tuple(e.step.args) for e in journal if isinstance(e.step, m.Run) and e.step.tool == "tmux"]


def test_dry_run_plans_one_readiness_poll_per_worker(tmp_path: Path) -> None:
    calls = _plan(tmp_path, 10, PREDICTED_READY_OUTPUT)
    assert [c[0] for c in calls].count("capture-pane") == 10
    assert len(calls) == 2 + 19 * 10


def test_dry_run_without_a_prediction_plans_the_whole_backoff(tmp_path: Path) -> None:
    """The general default of the dry-run executor is unchanged: a planned pane shows nothing."""
    calls = _plan(tmp_path, 1, None)
    assert [c[0] for c in calls].count("capture-pane") == 11


# ------------------------------------------------------------------ ids look like randomUUID()


def test_request_and_event_ids_are_dashed_uuids_like_oh_my_codex(tmp_path: Path) -> None:
    import json
    import uuid

    from pure.omx.ids import uuid_text
    from tests.omx_up.fixtures import run

    hex_id = uuid.uuid4().hex
    assert uuid_text(hex_id) == str(uuid.UUID(hex_id))
    team = UpTeam(tmp_path)
    out = run(team, request(team), StubTmux())
    assert out.result["ok"] is True, out.error
    # The scenario executor's fresh ids are id-0001, id-0002, …: both go through the shared helper.
    requests = json.loads((team.dir / "dispatch" / "requests.json").read_text())
    assert requests[0]["request_id"] == uuid_text("id-0001")
    event = json.loads((team.dir / "events" / "events.ndjson").read_text().splitlines()[-1])
    assert event["event_id"] == uuid_text("id-0002")
