"""The first safety rule, in one place: nothing touches a pane that was not proven ours just before.

A *proof* is ``L, S, L`` (docs/tmux-proofs.md, "The proof"): the pane listed with the pid pinned
when it was created, carrying the team's owner tag, listed so again. ``prove_owned`` (or
``pin_owned``, which pins the pid from its first ``L``) is the only way to get an ``OwnedPane``;
``prove_created`` and ``prove_claimable`` give a ``ClaimedPane``, a pane that may only be tagged.
Every step that changes a pane or reads its screen is built here and takes one of these tokens, so
a mutation without a fresh proof does not type-check; ``tests/core/test_owned_panes.py`` checks
that no module outside ``pure/tmux/`` builds such a step or makes a token.

A failed proof is a ``Proof`` saying which check failed and on what answer; each caller turns it
into its own oh-my-codex message.
"""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from pure import model as m
from pure.program import Gen
from pure.tmux import facts
from pure.tmux.parse import (
    OWNER_OPTION,
    Verdict,
    is_pane_id,
    is_positive_pid,
    on_server,
    parse_pid,
    server_of,
)
from pure.tmux.proof import OwnerAnswer, prove, prove_listed, read_owner, tmux

# ------------------------------------------------------------------------------------------ tokens


@frozen(kw_only=True)
class OwnedPane:
    """A pane proven ours by the ``L, S, L`` just run: listed with its pinned ``pid`` and the owner
    tag (``dead``: listed dead, kept by ``remain-on-exit``)."""

    pane_id: str
    pid: int
    dead: bool = False
    server: str | None = None  # the tmux server it was proven on (``PID@START``), when the listing named it


@frozen(kw_only=True)
class ClaimedPane:
    """A pane proven live with a known ``pid`` that no other team's tag claims — one this run has
    just created and pinned, or the leader pane ``team init`` adopts. It may only be tagged."""

    pane_id: str
    pid: int
    server: str | None = None  # the tmux server it is on (``PID@START``): what a pin records with its pid


@frozen(kw_only=True)
class Pin:
    """A new pane's process as pinned right after it was made: its ``pid``, on the tmux ``server`` that
    listed it (None when the listing named none)."""

    pid: int
    server: str | None = None


# ------------------------------------------------------------------------------------------ proofs

ProofKind = Literal["owned", "gone", "unavailable", "pid_unpinned", "pid_changed", "owner_changed"]
ProofStage = Literal["first_proof", "owner", "final_proof"]


@frozen(kw_only=True)
class Proof:
    """What a proof found. ``owned`` carries the token; otherwise ``stage`` is the check that
    failed: ``gone`` (absent, or dead where a dead pane is not kept) and ``unavailable`` with the
    ``verdict`` of that ``L``; ``pid_unpinned``/``pid_changed`` with the ``verdict`` that listed it
    (its pid is the one found); ``owner_changed`` with the ``owner`` answer of ``S``."""

    kind: ProofKind
    pane_id: str
    pinned_pid: int | None
    stage: ProofStage | None = None
    verdict: Verdict | None = None
    owner: OwnerAnswer | None = None
    token: OwnedPane | None = None
    first_new_pane: int | None = None  # owned: the lowest number a pane made after its final ``L`` can have

    @property
    def found_pid(self) -> int | None:
        return self.verdict.pid if self.verdict is not None else None

    @property
    def code(self) -> str:
        """The verdict's reason as oh-my-codex spells it in error strings (``absent``, ``dead``,
        ``query_failed`` …)."""
        return self.verdict.code() if self.verdict is not None else ""


def _judge(pane_id: str, pinned_pid: int | None, verdict: Verdict, stage: ProofStage, keep_dead: bool,
           server: str | None) -> Proof | None:
    """Why one ``L`` ends the proof, or None when the pane is still the pinned one: on the pinned tmux
    ``server`` (``on_server``), listed, with the pinned pid."""
    verdict = on_server(verdict, server)
    if verdict.unavailable:
        return Proof(kind="unavailable", pane_id=pane_id, pinned_pid=pinned_pid, stage=stage, verdict=verdict)
    if verdict.gone and not (keep_dead and verdict.reason == "dead"):
        return Proof(kind="gone", pane_id=pane_id, pinned_pid=pinned_pid, stage=stage, verdict=verdict)
    if not is_positive_pid(pinned_pid):
        return Proof(kind="pid_unpinned", pane_id=pane_id, pinned_pid=pinned_pid, stage=stage, verdict=verdict)
    if verdict.pid != pinned_pid:
        return Proof(kind="pid_changed", pane_id=pane_id, pinned_pid=pinned_pid, stage=stage, verdict=verdict)
    return None


def prove_owned(pane_id: str, pinned_pid: int | None, owner: str | None, *, server: str | None = None,
                keep_dead: bool = False, untagged_ok: bool = False, note: str = "") -> Gen[Proof]:
    """``L, S, L``: listed (live, or dead when ``keep_dead``) with ``pinned_pid`` by the tmux ``server`` it
    was pinned on (None: a pin recorded before servers were, ``on_server``), tagged exactly ``owner`` (or,
    when ``untagged_ok``, not tagged at all: a pane whose own process pinned itself before the run that split
    it could tag it, pure/omx/strays.py), listed so again. ``owner`` None leaves out ``S``
    (``tmux.teardown`` with ``authorize`` false); an empty owner never matches. ``note`` marks its steps
    (``TRANSCRIPT_NOTE``)."""
    first = yield from prove(pane_id, note)
    ended = _judge(pane_id, pinned_pid, first, "first_proof", keep_dead, server)
    if ended is not None:
        return ended
    return (yield from _owner_then_final(pane_id, pinned_pid, first, owner, keep_dead, untagged_ok, note,
                                         server or first.server))


def pin_owned(pane_id: str, owner: str) -> Gen[Proof]:
    """``L, S, L`` for a pane whose pid was never recorded: the first ``L`` pins it and its server (the pane
    must be live), the rest is ``prove_owned``'s."""
    first = yield from prove(pane_id)
    if not first.live:
        return Proof(kind="gone" if first.gone else "unavailable", pane_id=pane_id, pinned_pid=None,
                     stage="first_proof", verdict=first)
    return (yield from _owner_then_final(pane_id, first.pid, first, owner, False, server=first.server))


def _owner_then_final(pane_id: str, pinned_pid: int | None, first: Verdict, owner: str | None,
                      keep_dead: bool, untagged_ok: bool = False, note: str = "",
                      server: str | None = None) -> Gen[Proof]:
    if owner is not None:
        tag = yield from read_owner(pane_id, note)
        if not owner or not (tag.kind == "value" and tag.value == owner or untagged_ok and tag.kind == "missing"):
            return Proof(kind="owner_changed", pane_id=pane_id, pinned_pid=pinned_pid, stage="owner", verdict=first,
                         owner=tag)
    final, first_new = yield from prove_listed(pane_id, note)
    ended = _judge(pane_id, pinned_pid, final, "final_proof", keep_dead, server)
    if ended is not None:
        return ended
    assert final.pid is not None
    return Proof(kind="owned", pane_id=pane_id, pinned_pid=pinned_pid, verdict=final,
                 token=OwnedPane(pane_id=pane_id, pid=final.pid, dead=final.gone, server=final.server),
                 first_new_pane=first_new)


@frozen(kw_only=True)
class Claim:
    """A claim's outcome: ``token`` when the pane may be tagged, else the ``proof`` that failed."""

    token: ClaimedPane | None
    proof: Proof


def prove_created(pane_id: str, pinned_pid: int, server: str | None = None) -> Gen[Claim]:
    """One ``L`` before tagging a pane this run has just created and pinned: live with that pid, on the
    tmux ``server`` its creation answered (else the one this listing names, which the pin then records)."""
    verdict = yield from prove(pane_id)
    ended = _judge(pane_id, pinned_pid, verdict, "final_proof", False, server)
    if ended is not None:
        return Claim(token=None, proof=ended)
    return Claim(token=ClaimedPane(pane_id=pane_id, pid=pinned_pid, server=verdict.server),
                 proof=Proof(kind="owned", pane_id=pane_id, pinned_pid=pinned_pid, verdict=verdict))


def prove_claimable(pane_id: str, owner: str) -> Gen[Claim]:
    """``L, S, L`` before adopting a pane (the leader at ``team init``): live, untagged or tagged
    ``owner`` already, live with the same pid again."""
    first = yield from prove(pane_id)
    if not first.live:
        return Claim(token=None, proof=Proof(kind="gone" if first.gone else "unavailable", pane_id=pane_id,
                                             pinned_pid=None, stage="first_proof", verdict=first))
    tag = yield from read_owner(pane_id)
    if tag.kind == "error" or (tag.kind == "value" and tag.value != owner):
        return Claim(token=None, proof=Proof(kind="owner_changed", pane_id=pane_id, pinned_pid=first.pid,
                                             stage="owner", verdict=first, owner=tag))
    final = yield from prove(pane_id)
    ended = _judge(pane_id, first.pid, final, "final_proof", False, first.server)
    if ended is not None:
        return Claim(token=None, proof=ended)
    assert first.pid is not None
    return Claim(token=ClaimedPane(pane_id=pane_id, pid=first.pid, server=final.server),
                 proof=Proof(kind="owned", pane_id=pane_id, pinned_pid=first.pid, verdict=final, owner=tag))


@frozen(kw_only=True)
class SeenPane:
    """A pane a read-only report found ours in its one snapshot and owner read: its screen may be
    read, nothing else (``team status``, which proves every pane from one ``L``)."""

    pane_id: str
    pid: int


def seen_owned(pane_id: str, pinned_pid: object, snapshot: Verdict, owner_answer: OwnerAnswer | None,
               owner: object) -> SeenPane | None:
    """A ``SeenPane`` when ``snapshot`` (judged on the pane's pinned server: ``on_server``) lists the pane live
    with ``pinned_pid`` and ``owner_answer`` is exactly ``owner``; else None."""
    if not snapshot.live or not is_positive_pid(pinned_pid) or snapshot.pid != pinned_pid:
        return None
    if owner_answer is None or owner_answer.kind != "value" or not owner or owner_answer.value != owner:
        return None
    assert snapshot.pid is not None
    return SeenPane(pane_id=pane_id, pid=snapshot.pid)


# ------------------------------------------------------------------------- steps that need a proof

HISTORY_LINES = 200  # how far back a dead pane is read: a CLI's error may have scrolled off screen


# The steps below that change a pane take the effect the caller states (``m.Effect``: what the change
# is, in the caller's words); without one, the part of the program they are in states it
# (``pure.program.changing``).


def kill_pane_step(pane: OwnedPane, effect: m.Effect | None = None) -> m.Run:
    return tmux("kill-pane", "-t", pane.pane_id, mutates=True, effect=effect)


# The key that submits a line (an agent's prompt, a gated pane's wait): tmux's named key ``Enter``, not
# ``C-m`` as oh-my-codex 0.20.3 sends (a deviation, docs/scale-up.md "Decisions").
SUBMIT_KEY = "Enter"


def send_keys_step(pane: OwnedPane, *keys: str, literal: bool = False, effect: m.Effect | None = None) -> m.Run:
    """Keystrokes; ``literal`` types the text as it is (``-l --``), else the keys are key names."""
    if literal:
        return tmux("send-keys", "-t", pane.pane_id, "-l", "--", *keys, mutates=True, effect=effect)
    return tmux("send-keys", "-t", pane.pane_id, *keys, mutates=True, effect=effect)


def capture_step(pane: OwnedPane | SeenPane, *, history: bool = False) -> m.Run:
    """The visible screen, row by row as the pane shows it; with ``history`` the last lines above it too.

    Rows are never joined (no ``-J``): an agent's redraw over a wrapped line leaves pieces that ``-J``
    would splice into other lines (a Codex status line inside its input line);
    pure/agents/screen.py reads rows at any width."""
    if history:
        return tmux("capture-pane", "-p", "-S", f"-{HISTORY_LINES}", "-t", pane.pane_id)
    return tmux("capture-pane", "-p", "-t", pane.pane_id)


# The note of every step that keeps a transcript (pure/omx/transcripts.py): its proof, its capture, its
# file. Those steps are panefleet's own, so the oracle tests leave them out (tests/omx_*/oracles/normalise.py).
TRANSCRIPT_NOTE = "transcript"


def scrollback_step(pane: OwnedPane, lines: int, note: str = "") -> m.Run:
    """The last ``lines`` lines of the pane's history and its visible screen, rows as shown (no ``-J``,
    as ``capture_step``): a worker's transcript (``pure/omx/transcripts.py``, ``team logs``)."""
    return tmux("capture-pane", "-p", "-S", f"-{lines}", "-t", pane.pane_id, note=note)


LOCATE_FORMAT = facts.LOCATE.format


def locate_step(pane: OwnedPane) -> m.Run:
    """Where a proven pane is: its session id, window id and session name (``LOCATE_FORMAT``), for
    ``team attach`` to bring a client to it."""
    return tmux("display-message", "-p", "-t", pane.pane_id, LOCATE_FORMAT)


def remain_on_exit_step(pane: OwnedPane, on: bool) -> m.Run:
    """Keep a pane (dead) after its process exits, so its last lines can be read; or stop keeping it."""
    if on:
        return tmux("set-option", "-p", "-t", pane.pane_id, "remain-on-exit", "on", mutates=True)
    return tmux("set-option", "-p", "-u", "-t", pane.pane_id, "remain-on-exit", mutates=True)


def tag_step(pane: OwnedPane | ClaimedPane, owner: str, effect: m.Effect | None = None) -> m.Run:
    """Write the owner tag (docs/tmux-proofs.md, "The owner tag")."""
    return tmux("set-option", "-p", "-t", pane.pane_id, OWNER_OPTION, owner, mutates=True, effect=effect)


def untag_step(pane: OwnedPane, effect: m.Effect | None = None) -> m.Run:
    """Remove the owner tag of a pane proven ours (``team init`` undoing its adoption of a leader pane
    when the team's state cannot be written)."""
    return tmux("set-option", "-p", "-u", "-t", pane.pane_id, OWNER_OPTION, mutates=True, effect=effect)


# What a worker pane's ``split-window``/``new-window -P -F`` answers: the new pane and the pid of the
# process tmux started in it. The pin comes from the creation itself, so a respawn before the next
# query cannot be pinned (and then tagged) as the process this run created.
NEW_PANE_FORMAT = facts.NEW_PANE.format


@frozen(kw_only=True)
class CreatedPane:
    """A pane a creation step answered: ``pane_id`` None when the answer named no pane; ``pid`` None
    when it could not be pinned (``problem`` says why, a verdict code); ``server`` the tmux server it is
    on (``PID@START``), None when the answer or listing that pinned it named none."""

    pane_id: str | None
    pid: int | None = None
    problem: str = ""
    server: str | None = None


def answered_pane(answer: m.Proc) -> tuple[str, str]:
    """The pane id and pid fields of a creation step's answer, as given ("" for a missing one)."""
    pane, pid = [*(facts.NEW_PANE.rows(answer.stdout) or [[""]])[0], ""][:2]
    return pane.strip(), pid.strip()


def pin_new_pane(answer: m.Proc) -> Gen[CreatedPane]:
    """The pane a successful creation answered (``NEW_PANE_FORMAT``), pinned with the pid and the server in
    that answer. An answer with the pane id alone (the seed's stub tmux prints only that) is pinned by one
    listing, as oh-my-codex pins it; a pid or a server that does not parse pins nothing."""
    pane, pid_field = answered_pane(answer)
    if not is_pane_id(pane):
        return CreatedPane(pane_id=None)
    if pid_field:
        pid = parse_pid(pid_field)
        fields = [*facts.NEW_PANE.rows(answer.stdout)[0][2:], "", ""]
        server = server_of(fields[0].strip(), fields[1].strip()) if fields[0] else None
        if pid is None or fields[0] and server is None:
            return CreatedPane(pane_id=pane, problem="malformed_pid")
        return CreatedPane(pane_id=pane, pid=pid, server=server)
    verdict = yield from prove(pane)
    if not verdict.live or verdict.pid is None:
        return CreatedPane(pane_id=pane, problem=verdict.code())
    return CreatedPane(pane_id=pane, pid=verdict.pid, server=verdict.server)


def split_step(into: OwnedPane, direction: str, *rest: str, effect: m.Effect | None = None) -> m.Run:
    """``split-window`` of a proven pane (``rest``: ``-d -P -F … -c DIR COMMAND``)."""
    return tmux("split-window", direction, "-t", into.pane_id, *rest, mutates=True, effect=effect)


def leader_window_step(session: str, cwd: str, command: str, effect: m.Effect | None = None) -> m.Run:
    """A new window, in the background, of the session named exactly ``session``, for a team's new
    leader pane (``pure/fleet/leader.py``): it changes no existing pane, so no proof precedes it."""
    return tmux("new-window", "-d", "-t", f"={session}:", "-P", "-F", facts.PANE_ID.format, "-c", cwd, command,
                mutates=True, effect=effect)


def new_session_step(session: str, cwd: str, *command: str, effect: m.Effect | None = None) -> m.Run:
    """A new detached session named ``session`` (220x60) for a team's leader pane, answering the pane
    (``answered_pane``): it changes no existing pane, so no proof precedes it."""
    return tmux("new-session", "-d", "-s", session, "-x", "220", "-y", "60", "-P", "-F", facts.PANE_ID.format,
                "-c", cwd, *command, mutates=True, effect=effect)


def new_window_step(beside: OwnedPane, session_id: str, *rest: str, effect: m.Effect | None = None) -> m.Run:
    """A new window in the session of ``beside``, a proven pane of the team (``rest`` as for
    ``split_step``)."""
    del beside  # the proof is the point: a team window opens only next to a pane proven ours
    return tmux("new-window", "-t", f"{session_id}:", *rest, mutates=True, effect=effect)
