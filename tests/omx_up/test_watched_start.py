"""Watched start-up (docs/scale-up.md): scripted agent screens through the real scale-up program.

``ScriptedAgent`` plays one CLI in the new pane ``%31``: a sequence of start-up screens, prompts that
react to arrow keys and Enter like the real ones (recorded in ``tests/goldens/screens/``), an input
line that shows typed text, and a submit that may be swallowed (Codex's paste burst).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pure import model as m
from tests.omx_up.fixtures import Outcome, StubTmux, UpTeam, request, rows, run

WATCH = {"OMX_TEAM_SKIP_READY_WAIT": "0"}
CODEX_READY = "› {input}\n\n  mock-model default · /repo\n  ← for agents · ? for shortcuts\n"
CODEX_TRUST = ("  Trust this folder? Codex can read, edit, and run files here.\n"
               "{p1} 1. Trust and continue\n{p2} 2. Back to Agent Command Center\n  enter continue · esc back\n")
# Codex's offer of a newer model (tests/goldens/screens/codex/model_prompt.json), which comes up a moment
# after its input line has shown (READY_ONCE: one poll sees the ready screen first)
CODEX_MODEL_OFFER = ("  Meet GPT-6 Luna\n  Our latest Luna is significantly more efficient.\n"
                     "{p1} 1. Try new model\n{p2} 2. Use existing model\n  enter/esc confirm · ^c quit\n")
READY_ONCE = "(the ready screen, for one poll)"
CLAUDE_TRUST = (" Quick safety check: Is this a project you created or one you trust?\n"
                " {p1} 1. No, exit\n {p2} 2. Yes, I trust this folder\n Enter to confirm · Esc to cancel\n")
CLAUDE_BYPASS = ("  WARNING: Claude Code running in Bypass Permissions mode\n"
                 "  {p1} 1. No, exit\n  {p2} 2. Yes, I accept\n  Enter to confirm · Esc to cancel\n")
CLAUDE_READY = " ▐▛███▜▌   Claude Code v2.1.328\n{transcript}❯ {input}\n  ⏵⏵ bypass permissions on (shift+tab to cycle)\n"


class ScriptedAgent:
    def __init__(self, cli: str, prompts: list[str], *, blank_polls: int = 1, swallow_submits: int = 0,
                 dies_with: str | None = None, stuck: str | None = None, gated: bool = True,
                 highlight: int = 0) -> None:
        self.cli = cli
        self.prompts = list(prompts)  # screens still to pass, each answered by its accepting option
        self.highlight = highlight  # the first prompt's highlighted option (0: the first)
        self.blank = blank_polls
        self.swallow = swallow_submits
        self.dies_with = dies_with
        self.stuck = stuck
        self.dead = False
        self.typed = ""
        self.transcript: list[str] = []
        self.keys: list[tuple[str, str]] = []  # (key, what the screen showed when it was pressed)
        self.gated = gated  # the pane waits for one line before it starts the CLI (gated_startup_command)

    def screen(self) -> str:
        if self.gated:
            return "\n"
        if self.blank > 0:
            self.blank -= 1
            return "\n"
        if self.dies_with is not None:
            self.dead = True
            return f"{self.dies_with}\n\nPane is dead (status 1, now)\n"
        if self.stuck is not None:
            return self.stuck
        if self.prompts and self.prompts[0] is not READY_ONCE:
            marks = {"p1": "❯" if self.highlight == 0 else " ", "p2": "❯" if self.highlight == 1 else " "}
            if self.cli == "codex":
                marks = {k: v.replace("❯", "›") for k, v in marks.items()}
            return self.prompts[0].format(**marks)
        if self.cli == "codex":
            return "".join(f"› {t}\n• ok\n" for t in self.transcript) + CODEX_READY.format(
                input=self.typed or "Ask Codex to do anything")
        return CLAUDE_READY.format(transcript="".join(f"❯ {t}\n● ok\n" for t in self.transcript), input=self.typed)

    def press(self, args: tuple[str, ...]) -> None:
        if self.gated:
            assert args[-1] == "Enter", args  # nothing is typed into a pane before its CLI started
            self.gated = False
            return
        shown = self.screen_now()
        if "-l" in args:
            self.typed += args[-1]
            self.keys.append(("text", shown))
            return
        key = args[-1]
        self.keys.append((key, shown))
        if self.prompts:
            if key == "Down":
                self.highlight = 1
            elif key == "Up":
                self.highlight = 0
            elif key in ("Enter", "C-m"):
                accepting = 0 if self.prompts[0] in (CODEX_TRUST,) else 1
                if self.highlight != accepting:
                    self.dead = True  # "No, exit"
                self.prompts.pop(0)
                self.highlight = 0
            return
        if key == "Enter" and self.typed:
            if self.swallow > 0:
                self.swallow -= 1
                return
            self.transcript.append(self.typed)
            self.typed = ""

    def polled(self) -> None:
        """A capture was answered: a ready screen shown for one poll gives way to what follows it."""
        if self.prompts and self.prompts[0] is READY_ONCE and not self.gated and self.blank == 0:
            self.prompts.pop(0)

    def screen_now(self) -> str:
        blank, self.blank = self.blank, 0
        text = self.screen()
        self.blank = blank
        return text


def tmux_for(agent: ScriptedAgent) -> tuple[Callable[[tuple[str, ...]], m.Proc], list[tuple[str, ...]]]:
    """The stub tmux (its geometry answers the placement) with the scripted agent in pane ``%31``."""
    def snapshot(_call: int, killed: set[str]) -> m.Proc:
        listed = [("%11", 0, 42411), ("%21", 0, 42421)]
        if "%31" not in killed:
            listed.append(("%31", 1 if agent.dead else 0, 42424))
        return m.Proc(exit_code=0, stdout=rows(*listed))

    stub = StubTmux(snapshot=snapshot)
    calls: list[tuple[str, ...]] = []

    def tmux(args: tuple[str, ...]) -> m.Proc:
        calls.append(args)
        if args[0] == "capture-pane":
            shown = agent.screen()
            agent.polled()
            return m.Proc(exit_code=0, stdout=shown)
        if args[0] == "send-keys":
            agent.press(args)
            return m.Proc(exit_code=0)
        return stub(args)

    return tmux, calls


def _scale_up(tmp_path: Path, agent: ScriptedAgent,
              env: dict[str, str] | None = None) -> tuple[UpTeam, Outcome, list[tuple[str, ...]]]:
    team = UpTeam(tmp_path)
    tmux, calls = tmux_for(agent)
    extra = {**WATCH, **({"OMX_TEAM_WORKER_CLI": agent.cli} if agent.cli != "codex" else {}), **(env or {})}
    out = run(team, request(team, env=extra), tmux)  # type: ignore[arg-type]
    return team, out, calls


def test_codex_trust_prompt_is_accepted_then_the_trigger_is_confirmed(tmp_path: Path) -> None:
    agent = ScriptedAgent("codex", [CODEX_TRUST], swallow_submits=1)
    team, out, _calls = _scale_up(tmp_path, agent)
    assert out.done.outcome.status == "ok", out.error
    delivery = out.result["deliveries"][0]
    assert delivery["status"] == "delivered" and delivery["answered"] == ["trust_prompt"]
    assert delivery["started"] == "ready" and delivery["rounds"] == 1  # the 2nd Enter of round 1 submitted
    assert any("workers/worker-2/inbox.md" in t for t in agent.transcript)
    # Enter on the trust screen only while "Trust and continue" was highlighted
    on_prompt = [shown for key, shown in agent.keys if key == "Enter" and "Trust this folder?" in shown]
    assert len(on_prompt) == 1 and "› 1. Trust and continue" in on_prompt[0]
    requests = json.loads((team.dir / "dispatch" / "requests.json").read_text())
    assert requests[-1]["status"] == "delivered" and requests[-1]["last_reason"] == "confirmed:round_1"
    log = next((team.cwd / ".omx" / "logs").glob("team-delivery-*.jsonl")).read_text().splitlines()
    assert json.loads(log[-1])["result"] == "confirmed"


def test_codex_trust_prompt_shown_with_back_highlighted_is_answered_by_moving_onto_trust(tmp_path: Path) -> None:
    """The trust prompt as recorded with option 2 highlighted (tests/goldens/screens/codex/
    trust_prompt_option2.json): a blind Enter would go back, never start the agent, and fail."""
    agent = ScriptedAgent("codex", [CODEX_TRUST], highlight=1)
    _team, out, _calls = _scale_up(tmp_path, agent)
    assert out.done.outcome.status == "ok", out.error
    assert out.result["deliveries"][0]["answered"] == ["trust_prompt"] and not agent.dead
    assert [key for key, _shown in agent.keys if key != "text"][:2] == ["Up", "Enter"]
    assert [shown for key, shown in agent.keys if key == "Enter"][0].startswith("  Trust this folder")
    assert "› 1. Trust and continue" in [shown for key, shown in agent.keys if key == "Enter"][0]


def test_codex_model_offer_after_its_input_line_showed_is_declined_before_anything_is_typed(tmp_path: Path) -> None:
    """Codex 0.169.0 started with gpt-5.6-luna offers GPT-6 Luna ~0.1 s after its trust prompt is answered,
    after its input line has shown: ready counts only on two polls in a row, and the offer is answered
    "Use existing model" (pure/agents/supervise.py). Typed into the offer, the trigger's "1" would pick the
    other model and the rest would be lost (seen with the real CLI)."""
    agent = ScriptedAgent("codex", [CODEX_TRUST, READY_ONCE, CODEX_MODEL_OFFER])
    _team, out, _calls = _scale_up(tmp_path, agent)
    assert out.done.outcome.status == "ok", out.error
    delivery = out.result["deliveries"][0]
    assert delivery["answered"] == ["trust_prompt", "model_prompt"] and delivery["status"] == "delivered"
    assert not any(key == "text" and "Meet GPT-6 Luna" in shown for key, shown in agent.keys)  # nothing typed into it
    enters = [shown for key, shown in agent.keys if key == "Enter" and "Meet GPT-6 Luna" in shown]
    assert len(enters) == 1 and "› 2. Use existing model" in enters[0]
    assert any("workers/worker-2/inbox.md" in t for t in agent.transcript)


def test_claude_prompts_are_answered_by_moving_onto_yes_never_a_blind_enter(tmp_path: Path) -> None:
    agent = ScriptedAgent("claude", [CLAUDE_TRUST, CLAUDE_BYPASS])
    _team, out, _calls = _scale_up(tmp_path, agent)
    assert out.done.outcome.status == "ok", out.error
    assert out.result["deliveries"][0]["answered"] == ["trust_prompt", "bypass_prompt"]
    assert not agent.dead
    keys = [key for key, _shown in agent.keys if key != "text"]
    assert keys[:4] == ["Down", "Enter", "Down", "Enter"]
    for key, shown in agent.keys:
        if key == "Enter" and "Enter to confirm" in shown:
            assert "❯ 2." in shown  # the accepting option was highlighted on screen


@pytest.mark.parametrize(("variable", "prompts"), [("OMX_TEAM_AUTO_TRUST", [CLAUDE_TRUST]),
                                                   ("OMX_TEAM_AUTO_ACCEPT_BYPASS", [CLAUDE_BYPASS])])
def test_a_prompt_the_policy_forbids_fails_the_start_and_rolls_back(tmp_path: Path, variable: str,
                                                                    prompts: list[str]) -> None:
    agent = ScriptedAgent("claude", prompts)
    team, out, calls = _scale_up(tmp_path, agent, {variable: "0"})
    assert out.done.outcome.status == "error"
    assert out.error.startswith("scale_up_worker_start_failed:worker-2:") and f"{variable}=0" in out.error
    assert [a for a in calls if a[0] == "send-keys"] == [("send-keys", "-t", "%31", "Enter")]  # only the gate
    assert ("kill-pane", "-t", "%31") in calls
    assert not (team.dir / "workers" / "worker-2").exists()


def test_a_cli_that_exits_at_start_fails_with_its_own_error_and_its_dead_pane_is_removed(tmp_path: Path) -> None:
    agent = ScriptedAgent("codex", [], dies_with="Error: loading config.toml:\n/home/x/config.toml:1:20: invalid")
    team, out, calls = _scale_up(tmp_path, agent)
    assert out.done.outcome.status == "error"
    assert out.error.startswith("scale_up_worker_start_failed:worker-2: codex exited during start-up:")
    assert "Error: loading config.toml:" in out.error
    kill = calls.index(("kill-pane", "-t", "%31"))
    assert [a[0] for a in calls[kill - 3:kill]] == ["list-panes", "show-option", "list-panes"]
    assert not (team.dir / "workers" / "worker-2").exists()
    assert [w["name"] for w in json.loads((team.dir / "config.json").read_text())["workers"]] == ["worker-1"]


def test_a_sign_in_screen_fails_the_start(tmp_path: Path) -> None:
    agent = ScriptedAgent("codex", [], stuck="  Welcome to Codex\n› 1. Sign in with ChatGPT\n  Press enter to continue\n")
    _team, out, _calls = _scale_up(tmp_path, agent)
    assert out.done.outcome.status == "error"
    assert "sign-in" in out.error and "Sign in with ChatGPT" in out.error


def test_a_trigger_that_is_never_submitted_is_reported_not_claimed(tmp_path: Path) -> None:
    agent = ScriptedAgent("codex", [], swallow_submits=100)
    team, out, _calls = _scale_up(tmp_path, agent)
    assert out.done.outcome.status == "debt"  # exit 3: needs attention
    assert out.result["ok"] is True and out.result["deliveries"][0]["status"] == "not_delivered"
    assert out.done.debt[0].kind == "task_delivery" and out.done.debt[0].subject == "worker-2"
    # still a member with its proven pane: the leader can look at it and respawn or retry
    assert [w["name"] for w in json.loads((team.dir / "config.json").read_text())["workers"]] == ["worker-1",
                                                                                                "worker-2"]
    requests = json.loads((team.dir / "dispatch" / "requests.json").read_text())
    assert requests[-1]["status"] == "failed" and requests[-1]["last_reason"].startswith("not_delivered:")


def test_skipping_the_ready_wait_is_oh_my_codex_exactly(tmp_path: Path) -> None:
    agent = ScriptedAgent("codex", [CODEX_TRUST], gated=False)
    _team, out, calls = _scale_up(tmp_path, agent, {"OMX_TEAM_SKIP_READY_WAIT": "1"})
    assert out.done.outcome.status == "ok" and "deliveries" not in out.result
    assert not any(a[0] == "capture-pane" for a in calls)
    assert not any("remain-on-exit" in a for a in calls)
