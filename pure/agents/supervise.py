"""Start-up supervision of agent worker panes: readiness, prompt answers, verified delivery.

Every read and keystroke here is behind the pinned proof ``L, S, L`` of ``watch`` (the pane live, or
dead under ``remain-on-exit``, with the pid pinned at its creation, carrying the team's owner tag).
What a screen means comes from ``pure/agents/screen.py``.

* ``wait_until_ready`` polls several new panes together (their CLIs start in parallel) until each
  is ``ready`` or fails. A trust or bypass prompt is answered only when the policy allows it
  (``OMX_TEAM_AUTO_TRUST`` / ``OMX_TEAM_AUTO_ACCEPT_BYPASS``, default on, ``0`` turns it off), by
  moving the highlight onto the accepting option, seeing it highlighted on the next screen, and
  only then pressing Enter — never a blind Enter on a screen whose default is "exit". Codex's offer of a
  newer model (``model_prompt``) is always answered "Use existing model": the worker keeps the model it
  was launched with, and keys typed into the offer would be lost (or pick the other model). A prompt is acted
  on again only once it has settled since the last key: Gemini keeps its trust dialog on screen for a
  moment after Enter, then restarts itself; what it shows until its interface is up again after the
  restart reads as ``starting`` (``pure/agents/screen.py``), so nothing is typed into the old process.
  A ready screen counts once it holds on two polls in a row (a dialog may still come up right after
  the input line shows). ``login_required``, ``api_key_prompt``, ``exited``, a pane that dies or goes,
  and a screen that is not ready by the deadline are start-up failures carrying the CLI's own last lines.
* ``deliver`` types a message literally, waits until the screen shows it in the input line,
  submits, and confirms from the screen that it left the input line (or the agent turned busy);
  it re-submits in bounded rounds as oh-my-codex does (6 rounds; Codex 2 Enter presses a round).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from attrs import frozen

from pure import model as m
from pure import tmux as t
from pure.agents import screen as sc
from pure.program import Gen, expect

READY_TIMEOUT_MS = 45_000
MIN_READY_TIMEOUT_MS = 5_000
POLL_FIRST_MS = 100
POLL_MAX_MS = 500
MAX_PROMPT_ANSWERS = 8  # key actions per pane before a prompt that does not go away is a failure
SUBMIT_ROUNDS = 6
CONFIRM_POLLS = 6  # screen reads after each submit before the next round
TYPED_POLLS = 10  # screen reads waiting for the typed text to show in the input line
DELIVERY_PAUSE_MS = 100

# What a dry run predicts a new pane shows: ready, and later every typed message as submitted.
PREDICTED_SCREEN = "panefleet dry run: the agent is predicted ready and to accept what is typed"


# ------------------------------------------------------------------------------------------ proof

WatchKind = Literal["live", "dead", "gone", "unavailable", "changed"]


@frozen(kw_only=True)
class Watch:
    kind: WatchKind
    reason: str = ""
    owned: t.OwnedPane | None = None  # the proof's token when the pane is ``live`` or ``dead``


def watch(pane: str, pid: int, owner: str, server: str | None = None) -> Gen[Watch]:
    """``L, S, L`` for a pane this run created: ``live`` or ``dead`` (kept by ``remain-on-exit``)
    with the pinned pid, on the tmux ``server`` it was pinned on, and the owner tag; ``gone`` when absent;
    else why it is not ours to touch."""
    proof = yield from t.prove_owned(pane, pid, owner, server=server, keep_dead=True)
    if proof.token is not None:
        return Watch(kind="dead" if proof.token.dead else "live", owned=proof.token)
    if proof.kind == "unavailable":
        return Watch(kind="unavailable", reason=f"worker_pane_proof_unavailable:{pane}:{proof.code}")
    if proof.kind == "gone":
        return Watch(kind="gone", reason=f"worker_pane_gone:{pane}")
    if proof.kind == "owner_changed":
        return Watch(kind="changed", reason=f"worker_pane_owner_changed:{pane}")
    return Watch(kind="changed", reason=f"worker_pane_pid_changed:{pane}:{pid}:{proof.found_pid}")


@frozen(kw_only=True)
class Look:
    watch: Watch
    screen: sc.Screen | None = None  # None when the pane is not proven ours or not readable
    text: str = ""  # the capture as tmux printed it
    predicted: bool = False  # a dry run's predicted screen (PREDICTED_SCREEN)


def look(cli: str, pane: str, pid: int, owner: str, server: str | None = None) -> Gen[Look]:
    """The pinned proof, then the screen."""
    seen = yield from watch(pane, pid, owner, server)
    if seen.owned is None:
        return Look(watch=seen)
    shot = yield from expect(t.capture_step(seen.owned, history=seen.owned.dead), m.Proc)
    if shot.exit_code != 0:
        return Look(watch=Watch(kind="unavailable", reason=f"worker_pane_capture_failed:{pane}:{shot.stderr.strip()}"))
    if shot.stdout.strip() == PREDICTED_SCREEN:
        return Look(watch=seen, screen=sc.Screen(state="ready", evidence=(PREDICTED_SCREEN,)), text=shot.stdout,
                    predicted=True)
    return Look(watch=seen, screen=sc.classify(cli, shot.stdout, dead=seen.kind == "dead"), text=shot.stdout)


def press(pane: str, pid: int, owner: str, *keys: str, literal: bool = False,
          effect: m.Effect | None = None, server: str | None = None) -> Gen[str | None]:
    """Keystrokes behind a fresh pinned proof; ``None`` when sent, else why not. ``effect``: what they
    change, in the caller's words (pure/program.py ``changing``)."""
    seen = yield from watch(pane, pid, owner, server)
    if seen.owned is None or seen.owned.dead:
        return seen.reason or f"worker_pane_dead:{pane}"
    sent = yield from expect(t.send_keys_step(seen.owned, *keys, literal=literal, effect=effect), m.Proc)
    if sent.exit_code != 0:
        return f"tmux_send_keys_failed:{pane}:{sent.stderr.strip() or sent.exit_code}"
    return None


# -------------------------------------------------------------------------------------- readiness


@frozen(kw_only=True)
class Starting:
    """One new worker pane whose agent is starting."""

    worker: str
    cli: str
    pane: str
    pid: int
    server: str | None = None  # the tmux server it was pinned on (pure/tmux/parse.py ``on_server``)


NOT_READY = "worker_not_ready:"  # the reason's prefix for an agent still not ready at the deadline


@frozen(kw_only=True)
class Started:
    worker: str
    ok: bool
    state: str  # the last screen state seen (or the proof's verdict)
    reason: str = ""  # why it failed
    last_lines: tuple[str, ...] = ()
    answered: tuple[str, ...] = ()  # the prompts answered on the way (trust_prompt, bypass_prompt, model_prompt)
    polls: int = 0


@frozen(kw_only=True)
class Policy:
    auto_trust: bool = True
    auto_accept_bypass: bool = True
    timeout_ms: int = READY_TIMEOUT_MS


def policy_from_env(env: Mapping[str, str]) -> Policy:
    raw = env.get("OMX_TEAM_READY_TIMEOUT_MS", "").strip()
    timeout = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 9 else READY_TIMEOUT_MS
    return Policy(auto_trust=env.get("OMX_TEAM_AUTO_TRUST", "").strip() != "0",
                  auto_accept_bypass=env.get("OMX_TEAM_AUTO_ACCEPT_BYPASS", "").strip() != "0",
                  timeout_ms=max(timeout, MIN_READY_TIMEOUT_MS))


def poll_pauses(timeout_ms: int) -> list[int]:
    """The pauses between polling rounds: 100 ms doubling to 500 ms, adding up to ``timeout_ms``."""
    pauses: list[int] = []
    pause, total = POLL_FIRST_MS, 0
    while total + pause <= timeout_ms:
        pauses.append(pause)
        total += pause
        pause = min(pause * 2, POLL_MAX_MS)
    return pauses


# The start-up prompts answered, and the policy switch that allows it (None: always; keeping the model
# the worker was launched with changes nothing the user chose).
_PROMPT_POLICY: dict[str, tuple[str, str] | None] = {
    "trust_prompt": ("auto_trust", "OMX_TEAM_AUTO_TRUST"),
    "bypass_prompt": ("auto_accept_bypass", "OMX_TEAM_AUTO_ACCEPT_BYPASS"),
    "model_prompt": None,
}
_STUCK_TEXT = {
    "login_required": "is waiting at a sign-in or onboarding screen (set the CLI up once for this user)",
    "api_key_prompt": "asks whether to use the API key in its environment (approve the key once in the CLI)",
    "exited": "exited during start-up",
}


def _answer(item: Starting, screen: sc.Screen, policy: Policy, owner: str) -> Gen[str | None]:
    """One step towards accepting a prompt; ``None`` when a key was sent, else why it cannot be."""
    switch = _PROMPT_POLICY[screen.state]
    if switch is not None and not getattr(policy, switch[0]):
        return f"{screen.state}_not_allowed: {switch[1]}=0 forbids answering it"
    choice = screen.choice
    if choice is None or choice.accept is None or choice.selected is None:
        return f"{screen.state}_unreadable: no highlighted option or no accepting option on screen"
    said = m.effect("change", "worker", item.worker, f"its agent's {screen.state} prompt answered")
    if choice.selected == choice.accept:
        return (yield from press(item.pane, item.pid, owner, "Enter", effect=said, server=item.server))
    key = "Down" if choice.accept > choice.selected else "Up"
    return (yield from press(item.pane, item.pid, owner, *([key] * abs(choice.accept - choice.selected)), effect=said,
                             server=item.server))


def wait_until_ready(items: Sequence[Starting], owner: str, policy: Policy) -> Gen[tuple[Started, ...]]:
    """Poll every pane of ``items`` in rounds until each has started or failed (see module doc)."""
    done: dict[str, Started] = {}
    answered: dict[str, list[str]] = {item.worker: [] for item in items}
    answers: dict[str, int] = {item.worker: 0 for item in items}
    polls: dict[str, int] = {item.worker: 0 for item in items}
    last: dict[str, sc.Screen] = {}
    for pause in [*poll_pauses(policy.timeout_ms), None]:
        for item in items:
            if item.worker in done:
                continue
            polls[item.worker] += 1
            seen = yield from look(item.cli, item.pane, item.pid, owner, item.server)
            screen = seen.screen
            keys_sent = answers[item.worker]
            finished = yield from _step(item, seen.watch, screen, last.get(item.worker), policy, owner, answers,
                                        answered)
            if answers[item.worker] != keys_sent:
                last.pop(item.worker, None)  # a key was sent: the prompt must settle anew before the next one
            elif screen is not None:
                last[item.worker] = screen
            if finished is not None:
                done[item.worker] = Started(worker=finished.worker, ok=finished.ok, state=finished.state,
                                            reason=finished.reason, last_lines=finished.last_lines,
                                            answered=tuple(answered[item.worker]), polls=polls[item.worker])
        if len(done) == len(items):
            break
        if pause is not None:
            yield from expect(m.Sleep(ms=pause), m.Ack)
    for item in items:
        if item.worker not in done:
            screen = last.get(item.worker)
            state = screen.state if screen is not None else "unknown"
            lines = screen.evidence if screen is not None else ()
            done[item.worker] = Started(
                worker=item.worker, ok=False, state=state, last_lines=lines, answered=tuple(answered[item.worker]),
                polls=polls[item.worker],
                reason=f"{NOT_READY}{item.worker}: {item.cli} did not become ready within "
                       f"{policy.timeout_ms // 1000} s (screen: {state}" + (f": {' | '.join(lines)})" if lines else ")"))
    return tuple(done[item.worker] for item in items)


def _step(item: Starting, seen: Watch, screen: sc.Screen | None, previous: sc.Screen | None, policy: Policy,
          owner: str, answers: dict[str, int], answered: dict[str, list[str]]) -> Gen[Started | None]:
    """What one poll of one pane decides: started, failed, or (``None``) keep polling. A prompt is
    acted on only once it has settled (the same prompt and highlight on two polls in a row, both after
    the last key sent): Claude's trust dialog resets a highlight moved right after it appeared, and an
    Enter then exits; Gemini's stays unchanged for a moment after the Enter that accepts it."""
    name = item.worker
    if screen is None:
        why = "is gone (its process exited or the pane was killed)" if seen.kind == "gone" else "cannot be proven ours"
        return Started(worker=name, ok=False, state=seen.kind,
                       reason=f"worker_start_failed:{name}: pane {item.pane} {why} [{seen.reason}]")
    if screen.state in sc.WAITING_STATES:
        # ready only when it holds on two polls in a row: a CLI may put a dialog up right after its input
        # line shows (Codex's model offer, tests/goldens/screens/codex/model_prompt.json, comes ~0.1 s
        # after its trust prompt is answered), and a message typed then would be lost or pick an option
        if previous is None or previous.state not in sc.WAITING_STATES:
            return None
        return Started(worker=name, ok=True, state=screen.state)
    if screen.state in sc.WORKING_STATES:
        return Started(worker=name, ok=True, state=screen.state)
    if screen.state in sc.STUCK_STATES:
        lines = screen.evidence
        return Started(worker=name, ok=False, state=screen.state, last_lines=lines,
                       reason=f"worker_start_failed:{name}: {item.cli} {_STUCK_TEXT[screen.state]}: "
                              + " | ".join(lines))
    if screen.state in _PROMPT_POLICY:
        if previous is None or previous.state != screen.state or previous.choice != screen.choice:
            return None
        if answers[name] >= MAX_PROMPT_ANSWERS:
            return Started(worker=name, ok=False, state=screen.state, last_lines=screen.evidence,
                           reason=f"worker_start_failed:{name}: {screen.state} did not go away after "
                                  f"{MAX_PROMPT_ANSWERS} answers")
        problem = yield from _answer(item, screen, policy, owner)
        if problem is not None:
            return Started(worker=name, ok=False, state=screen.state, last_lines=screen.evidence,
                           reason=f"worker_start_failed:{name}: {problem}: " + " | ".join(screen.evidence))
        answers[name] += 1
        if screen.state not in answered[name]:
            answered[name].append(screen.state)
    return None


# --------------------------------------------------------------------------------------- delivery


@frozen(kw_only=True)
class Delivery:
    ok: bool
    reason: str
    rounds: int = 0
    lost: bool = False  # the pane stopped being provably ours and live, or tmux refused a keystroke


def _submit_keys(cli: str) -> int:
    return 2 if cli == "codex" else 1


@frozen(kw_only=True)
class Message:
    """A message to type into one worker's agent; ``token`` is its distinctive part, looked for on
    screen (wrapping-proof: whitespace is ignored)."""

    worker: str
    cli: str
    pane: str
    pid: int
    text: str
    token: str
    server: str | None = None  # the tmux server the pane was pinned on (pure/tmux/parse.py ``on_server``)


def deliver(cli: str, pane: str, pid: int, owner: str, text: str, token: str,
            server: str | None = None) -> Gen[Delivery]:
    """Type ``text`` into one pane, submit it and confirm it from the screen."""
    message = Message(worker="", cli=cli, pane=pane, pid=pid, text=text, token=token, server=server)
    return (yield from deliver_all([message], owner))[""]


def deliver_all(messages: Sequence[Message], owner: str) -> Gen[dict[str, Delivery]]:
    """Deliver every message at once: type all, wait until each shows in its input line, then submit
    and confirm in rounds over the panes still waiting (the agents work in parallel, so do the reads)."""
    done: dict[str, Delivery] = {}

    def lost(message: Message, reason: str, rounds: int = 0) -> None:
        done[message.worker] = Delivery(ok=False, reason=f"not_delivered:{reason}", rounds=rounds, lost=True)

    typed: list[Message] = []
    predicted: set[str] = set()
    for message in messages:
        before = yield from look(message.cli, message.pane, message.pid, owner, message.server)
        if before.screen is None or before.watch.kind != "live":
            lost(message, before.watch.reason or "worker_pane_dead")
            continue
        problem = yield from press(message.pane, message.pid, owner, message.text, literal=True,
                                   effect=_typed_into(message), server=message.server)
        if problem is not None:
            lost(message, problem)
            continue
        typed.append(message)
        if before.predicted:
            predicted.add(message.worker)
    def shown(message: Message, seen: Look) -> bool:
        return sc.shows_typed(message.cli, seen.text, message.token) or sc.shows_submitted(
            message.cli, seen.text, message.token)

    waiting = yield from _poll([message for message in typed if message.worker not in predicted], owner,
                               TYPED_POLLS, shown, lost)
    for message in waiting:
        done[message.worker] = Delivery(ok=False, reason="not_delivered:typed_text_never_showed_in_the_input_line")
    pending = [message for message in typed if message.worker not in done]
    for round_number in range(1, SUBMIT_ROUNDS + 1):
        if not pending:
            break
        for message in pending:
            for _ in range(_submit_keys(message.cli)):
                problem = yield from press(message.pane, message.pid, owner, t.SUBMIT_KEY, effect=_typed_into(message),
                                           server=message.server)
                if problem is not None:
                    lost(message, problem, round_number)
                    break
        pending = [message for message in pending if message.worker not in done]

        def accepted(message: Message, seen: Look, round_number: int = round_number) -> bool:
            if message.worker not in predicted and not _accepted(message.cli, seen, message.token):
                return False
            done[message.worker] = Delivery(ok=True, reason=f"confirmed:round_{round_number}", rounds=round_number)
            return True

        def lost_in_round(message: Message, reason: str, round_number: int = round_number) -> None:
            lost(message, reason, round_number)

        pending = yield from _poll(pending, owner, CONFIRM_POLLS, accepted, lost_in_round)
    for message in pending:
        done[message.worker] = Delivery(
            ok=False, reason=f"not_delivered:still_in_the_input_line_after_{SUBMIT_ROUNDS}_rounds",
            rounds=SUBMIT_ROUNDS)
    return done


def _typed_into(message: Message) -> m.Effect | None:
    """A message for a named worker changes that worker; else the caller says what it changes."""
    return m.effect("change", "worker", message.worker, "message typed") if message.worker else None


def _poll(messages: Sequence[Message], owner: str, polls: int, settled: Callable[[Message, Look], bool],
          lost: Callable[[Message, str], None]) -> Gen[list[Message]]:
    """Up to ``polls`` rounds of looks (``DELIVERY_PAUSE_MS`` apart) over the messages not yet
    ``settled``; a pane that is no longer provably ours and live is ``lost``. Returns the unsettled."""
    waiting = list(messages)
    for poll in range(polls):
        if not waiting:
            break
        if poll:
            yield from expect(m.Sleep(ms=DELIVERY_PAUSE_MS), m.Ack)
        still = []
        for message in waiting:
            seen = yield from look(message.cli, message.pane, message.pid, owner, message.server)
            if seen.screen is None or seen.watch.kind != "live":
                lost(message, seen.watch.reason or "worker_pane_dead")
            elif not settled(message, seen):
                still.append(message)
        waiting = still
    return waiting


def _accepted(cli: str, seen: Look, token: str) -> bool:
    """The message left the input line: it shows in the transcript, or the agent turned busy (or, working on
    it, asks the user to approve something)."""
    if sc.shows_typed(cli, seen.text, token):
        return False
    return sc.shows_submitted(cli, seen.text, token) or (
        seen.screen is not None and seen.screen.state in sc.WORKING_STATES)


def remove_dead(pane: str, pid: int, owner: str, server: str | None = None) -> Gen[str | None]:
    """Kill a pane of this run that ``remain-on-exit`` kept dead (its process is gone, so nothing
    runs in it), behind ``watch``; then prove it absent. ``None`` when it is gone or was not dead."""
    seen = yield from watch(pane, pid, owner, server)
    if seen.owned is None or not seen.owned.dead:
        return None
    killed = yield from expect(t.kill_pane_step(seen.owned), m.Proc)
    if killed.exit_code != 0:
        return f"dead_pane_kill_failed:{pane}:{killed.stderr.strip()}"
    after = t.on_server((yield from t.prove(pane)), seen.owned.server)
    return None if after.gone and after.reason == "absent" else f"dead_pane_still_listed:{pane}:{after.code()}"


def release(pane: str, pid: int, owner: str, server: str | None = None) -> Gen[str | None]:
    """Let a gated pane (``pure/omx/startup_script.py``, ``gated_startup_command``) run its start-up script."""
    return (yield from press(pane, pid, owner, t.SUBMIT_KEY, server=server))


def keep_on_exit(pane: str, pid: int, owner: str, on: bool, server: str | None = None) -> Gen[str | None]:
    """Set or unset ``remain-on-exit`` on a pane of this run, behind ``watch``."""
    seen = yield from watch(pane, pid, owner, server)
    if seen.owned is None or seen.owned.dead:
        return seen.reason or f"worker_pane_dead:{pane}"
    done = yield from expect(t.remain_on_exit_step(seen.owned, on), m.Proc)
    return None if done.exit_code == 0 else f"remain_on_exit_failed:{pane}:{done.stderr.strip()}"
