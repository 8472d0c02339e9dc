"""The scale-up dry run predicts a new pane ready at its first readiness poll."""

from __future__ import annotations

from pathlib import Path

from pure import model as m
from pure.omx.scale_up import scale_up
from shell.cli.scale_up import PREDICTED_READY_OUTPUT
from shell.run.dryrun import DryRunExecutor
from shell.run.loop import run_program
from tests.harness import ScenarioExecutor
from tests.omx_up.fixtures import StubTmux, UpTeam, request, rows


def _plan(tmp_path: Path, count: int, capture: str | None) -> tuple[m.Done, list[tuple[str, ...]]]:
    team = UpTeam(tmp_path)
    req = request(team, count=count, env={"OMX_TEAM_SKIP_READY_WAIT": "0"})
    tmux = StubTmux(snapshot=lambda _call, _killed: m.Proc(exit_code=0, stdout=rows(("%11", 0, 42411),
                                                                                   ("%21", 0, 42421))))
    real = ScenarioExecutor(tmp_path, tmux)
    dry = DryRunExecutor(real, predicted_capture=capture)  # type: ignore[arg-type]
    done, journal = run_program(lambda: scale_up(req), dry)
    return done, [tuple(e.step.args) for e in journal if isinstance(e.step, m.Run) and e.step.tool == "tmux"]


def test_dry_run_plans_two_readiness_polls_and_one_confirmation_per_worker(tmp_path: Path) -> None:
    done, calls = _plan(tmp_path, 10, PREDICTED_READY_OUTPUT)
    assert done.outcome.status == "ok", done.outcome.message
    assert [d["status"] for d in done.outcome.result["deliveries"]] == ["delivered"] * 10  # type: ignore[index]
    # per worker: two readiness looks (ready holds on two polls, pure/agents/supervise.py), one look before
    # typing, one confirmation after the submit
    assert [c[0] for c in calls].count("capture-pane") == 40
    assert [c[0] for c in calls].count("split-window") == 10


def test_dry_run_without_a_prediction_predicts_the_start_up_timeout(tmp_path: Path) -> None:
    """A planned pane that shows nothing never becomes ready: the dry run says so instead of
    predicting a success the screen could not confirm."""
    from pure.agents.supervise import poll_pauses

    done, calls = _plan(tmp_path, 1, None)
    assert done.outcome.status == "error"
    assert done.outcome.message.startswith("scale_up_worker_not_ready:worker-2:")
    # and one more: the transcript the rollback keeps before it kills the pane (pure/omx/transcripts.py)
    assert [c[0] for c in calls].count("capture-pane") == len(poll_pauses(45_000)) + 1 + 1


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


def test_the_predicted_screen_is_the_one_the_start_up_supervision_knows() -> None:
    from pure.agents.supervise import PREDICTED_SCREEN

    assert PREDICTED_READY_OUTPUT == PREDICTED_SCREEN + "\n"
