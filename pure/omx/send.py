"""``team.send``: a follow-up message typed into workers' agents, confirmed from their screens.

Everything is checked before anything is typed: the message (not empty, at most ``MAX_MESSAGE_BYTES``
of UTF-8, no control character but newline and tab — an escape sequence would drive the agent's
interface), the workers (each named one exists; ``--all``/``--role`` pick at least one), and every
target's recorded pane, proven (``L``, owner tag, ``L`` with its pinned pid, ``pure/tmux/owned.py``).
One that fails refuses the whole send, and nothing is typed anywhere.

Then each target's screen is read (``pure/agents/screen.py``). An agent at a trust, bypass, API-key or
login prompt, one asking the user to approve something mid-task (``needs_input``: a key would answer
it), or one that exited, is ``blocked``: nothing is typed into it. Into the others the message
is typed literally (never read as tmux key names), submitted and confirmed from the screen as a task's
trigger is (``pure/agents/supervise.py``, ``deliver_all``): ``delivered``, ``queued`` (the agent was busy,
and its CLI took the message for after its turn) or ``not_submitted`` (why). Before it is typed, the
message is put in the worker's mailbox as oh-my-codex 0.20.3 records a leader's direct message
(``pure/omx/mailbox.py``), and marked notified once it is confirmed; each result is appended to
oh-my-codex's delivery log.
"""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Sequence
from functools import partial

from attrs import field, frozen

from pure import model as m
from pure import operations
from pure.agents import supervise
from pure.omx import effects, ids, locks, mailbox
from pure.omx import state as st
from pure.omx.peek import prove_recorded
from pure.omx.records import Member
from pure.program import Gen, Program, changing, expect, fail
from pure.team import check_team_name, load_team

MAX_MESSAGE_BYTES = 64 * 1024
TOKEN_CHARS = 60  # how much of the message's last line is looked for on screen
LEADER = "leader-fixed"  # who a message from the leader is from, as oh-my-codex names the leader
# An agent at one of these is not typed into: a key would answer the prompt (needs_input: an approval
# mid-task, which only the user may give), or nothing would read it.
BLOCKING: frozenset[str] = frozenset({"trust_prompt", "bypass_prompt", "api_key_prompt", "model_prompt",
                                      "login_required", "needs_input", "exited"})


@frozen(kw_only=True)
class SendRequest:
    team: str
    cwd: str
    message: str
    env: dict[str, str] = field(factory=dict)
    workers: tuple[str, ...] = ()  # by name; or every worker (``all_workers``), or those of ``role``
    all_workers: bool = False
    role: str | None = None


def message_problem(text: str) -> str | None:
    """Why ``text`` cannot be sent (a stable code with details), or None."""
    if not text.strip():
        return "send_message_empty"
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_MESSAGE_BYTES:
        return f"send_message_too_long:{size}:{MAX_MESSAGE_BYTES}"
    for position, char in enumerate(text):
        if char not in "\n\t" and unicodedata.category(char) in ("Cc", "Cs"):
            return f"send_message_control_character:U+{ord(char):04X}:{position}"
    return None


def token_of(text: str) -> str:
    """The part of a message its screen is searched for: the start of its last line with text (what
    stays in an agent's input line until the message is submitted)."""
    last = [line for line in text.split("\n") if line.strip()][-1]
    return last.strip()[:TOKEN_CHARS]


def targets(workers: Sequence[Member], req: SendRequest) -> list[Member]:
    """The worker records the request names, in team order; a refusal when one is unknown or none is picked."""
    names = [w.name for w in workers]
    if req.all_workers:
        picked = list(workers)
    elif req.role is not None:
        picked = [w for w in workers if w.role == req.role]
        if not picked:
            roles = sorted({w.role for w in workers if w.role})
            raise fail(f"send_role_not_found:{req.role}:{','.join(roles)}", status="refused")
    else:
        for name in req.workers:
            if name not in names:
                raise fail(f"send_worker_not_found:{name}", status="refused")
        picked = [w for w in workers if w.name in req.workers]
    if not picked:
        raise fail("send_no_workers", status="refused")
    return picked


@frozen(kw_only=True)
class Target:
    worker: str
    cli: str
    pane: str
    pid: int
    server: str | None = None  # the tmux server it was proven on


def send(req: SendRequest) -> Program:
    check_team_name(req.team)
    text = req.message.rstrip("\n")  # the submit is the Enter: a trailing newline (stdin's) is not typed
    problem = message_problem(text)
    if problem is not None:
        raise fail(problem, status="refused")
    paths = st.TeamPaths(st.resolve_state_root(req.cwd, req.env), req.team)
    team, _unlocked = yield from load_team(paths)
    owner = team.config.tmux_pane_owner_id or ""
    chosen = targets(team.config.workers, req)
    proven = []
    for record in chosen:  # every pane proven before anything is typed anywhere
        proven.append((yield from _proven(record, owner)))
    results: dict[str, m.Answer] = {}
    messages: list[supervise.Message] = []
    states: dict[str, str] = {}  # what each agent was doing before anything was typed
    for target in proven:
        seen = yield from supervise.look(target.cli, target.pane, target.pid, owner, target.server)
        state = states[target.worker] = seen.screen.state if seen.screen is not None else "unavailable"
        if seen.screen is None or state in BLOCKING:
            results[target.worker] = _result(target, "blocked", state, seen.watch.reason or f"agent_at_{state}")
            continue
        message_id = yield from changing(effects.worker(target.worker, "change", "message added to its mailbox"),
                                         locks.with_mailbox_lock(paths, target.worker, partial(
                                             _store, paths, req, target.worker, text, team.config.created_at)))
        messages.append(supervise.Message(worker=target.worker, cli=target.cli, pane=target.pane, pid=target.pid,
                                          text=text, token=token_of(text), server=target.server))
        results[target.worker] = {"messageId": message_id}
    delivered = yield from supervise.deliver_all(messages, owner)
    for message in messages:
        delivery = delivered[message.worker]
        target = next(p for p in proven if p.worker == message.worker)
        message_id = str(results[message.worker]["messageId"])
        state = states[message.worker]
        kind = ("queued" if state == "busy" else "delivered") if delivery.ok else "not_submitted"
        results[message.worker] = {**_result(target, kind, state, delivery.reason), "messageId": message_id}
        now = yield from _now()
        if delivery.ok:
            yield from changing(effects.worker(message.worker), locks.with_mailbox_lock(
                paths, message.worker, partial(_notified, paths, message.worker, message_id, now)))
        yield from _log(req, now, mailbox.dispatch_result_line(
            team=paths.team, worker=message.worker, message_id=message_id, now=now,
            result="confirmed" if delivery.ok else "failed", reason=f"{kind}:{delivery.reason}"))
    ordered = [results[p.worker] for p in proven]
    reached = all(r["result"] in ("delivered", "queued") for r in ordered)
    return m.Done(outcome=m.Outcome(status="ok" if reached else "debt", result=m.JsonValue({
        "ok": reached, "team": req.team, "workers": ordered})))


def _proven(record: Member, owner: str) -> Gen[Target]:
    name = record.name
    proof = yield from prove_recorded(record, owner)
    if proof is None:
        raise fail(f"send_no_pane:{name}", status="refused")
    if proof.token is None:
        raise fail(f"send_pane_unproven:{name}:{proof.pane_id}:{proof.code}", status="refused")
    return Target(worker=name, cli=record.worker_cli or "codex", pane=proof.pane_id,
                  pid=proof.token.pid, server=record.tmux_server)


def _result(target: Target, kind: str, state: str, reason: str) -> m.Answer:
    return {"worker": target.worker, "paneId": target.pane, "result": kind, "agentState": state, "reason": reason}


def _now() -> Gen[str]:
    return str((yield from expect(m.Clock(), m.Value)).value)


def _store(paths: st.TeamPaths, req: SendRequest, worker: str, body: str, created_at: str | None) -> Gen[str]:
    """The message in the worker's mailbox, its event and its delivery-log line, as oh-my-codex 0.20.3
    records a leader's message (``pure/omx/mailbox.py``); the id of the message that stands for the
    send (an undelivered one with the same text already does). A mailbox that cannot be read is
    never overwritten: the send stops there, nothing typed."""
    file = mailbox.mailbox_path(paths, worker)
    data = yield from expect(m.ReadFile(path=file), m.FileData)
    if data.error:
        raise fail(f"send_mailbox_unreadable:{file}:{data.error}")
    message_id, now = (yield from ids.fresh_uuid()), (yield from _now())
    added = mailbox.with_message(data.content, file, worker, mailbox.new_message(
        message_id=message_id, from_worker=LEADER, to_worker=worker, body=body, now=now),
        team_created_at=created_at)
    recorded = added.value_or(None)
    if recorded is None:
        raise fail(f"send_mailbox_malformed:{file}:{added.failure()}", status="refused")
    if recorded.text is None:
        return str(recorded.message.message_id)
    wrote = yield from expect(m.WriteFile(path=file, content=recorded.text), m.Ack)
    if not wrote.ok:
        raise fail(f"send_mailbox_not_written:{file}:{wrote.error}")
    event_id = yield from ids.fresh_uuid()
    yield from expect(m.AppendFile(path=paths.events, content=mailbox.render_line(mailbox.received_event(
        team=paths.team, worker=worker, message_id=message_id, event_id=event_id, now=now)), effect=effects.EVENT), m.Ack)
    yield from _log(req, now, mailbox.created_log_line(team=paths.team, message_id=message_id, from_worker=LEADER,
                                                       to_worker=worker, now=now))
    return message_id


def _notified(paths: st.TeamPaths, worker: str, message_id: str, now: str) -> Gen[None]:
    file = mailbox.mailbox_path(paths, worker)
    data = yield from expect(m.ReadFile(path=file), m.FileData)
    marked = mailbox.mark_notified(data.content, file, message_id, now, worker=worker).value_or(None)
    if marked is not None:
        yield from expect(m.WriteFile(path=file, content=marked), m.Ack)


def _log(req: SendRequest, now: str, line: dict[str, str]) -> Gen[None]:
    """A line in oh-my-codex's delivery logs; best effort, as there."""
    local = yield from expect(m.Stat(path=posixpath.join(req.cwd, ".omx", "state", "team")), m.Value)
    for path in mailbox.delivery_log_paths(req.cwd, req.env, now, local_team_state=local.value == "dir"):
        yield from expect(m.AppendFile(path=path, content=mailbox.render_line(line), effect=effects.DELIVERY_LOG), m.Ack)


operations.register("team.send", SendRequest, send)
