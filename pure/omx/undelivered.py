"""Tasks no screen confirmed reaching their worker: a member whose latest dispatch request is
``failed`` (a watched delivery, pure/agents/supervise.py ``deliver_all``, that never saw the agent
take its trigger). The request in ``dispatch/requests.json`` is the durable record (oh-my-codex's
own format): ``team status`` and ``team debt show`` report it alike (``find``), and ``team debt
reconcile`` types the trigger again, watched as at scale-up, and records the outcome in the same
request (``redeliver``; docs/scale-up.md, "Undelivered tasks")."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import evolve, frozen

from pure import model as m
from pure import tmux as t
from pure.agents import supervise
from pure.omx import dispatch as dsp
from pure.omx.records import DispatchRequest, TeamConfig
from pure.omx.state import TeamPaths
from pure.program import Gen, expect


@frozen(kw_only=True)
class Undelivered:
    worker: str
    cli: str
    pane: str | None
    pid: int | None
    request: DispatchRequest
    server: str | None = None  # the tmux server ``pid`` was pinned on

    @property
    def trigger(self) -> str:
        """The message to type again (``find`` takes only a request whose trigger is text)."""
        return str(self.request.trigger_message)

    def to_json(self) -> m.Answer:
        return {"worker": self.worker, "paneId": self.pane, "requestId": self.request.request_id,
                "attempts": self.request.attempt_count, "reason": self.request.last_reason}

    def debt(self) -> m.Debt:
        return m.Debt(kind="task_delivery", subject=self.worker, reason=str(self.request.last_reason),
                      detail=f"dispatch request {self.request.request_id}")


def latest_requests(requests: Sequence[DispatchRequest]) -> dict[str, DispatchRequest]:
    """Each worker's latest dispatch request."""
    return {request.to_worker: request for request in requests if request.to_worker is not None}


def find(config: TeamConfig, requests: Sequence[DispatchRequest]) -> tuple[Undelivered, ...]:
    """The members whose latest dispatch request failed, in membership order."""
    latest = latest_requests(requests)
    found = []
    for worker in config.workers:
        request = latest.get(worker.name)
        if request is not None and request.status == "failed" and isinstance(request.trigger_message, str):
            found.append(Undelivered(worker=worker.name, cli=worker.worker_cli or "codex", pane=worker.pane_id,
                                     pid=worker.pid if t.is_positive_pid(worker.pid) else None, request=request,
                                     server=worker.tmux_server))
    return tuple(found)


def reported(paths: TeamPaths, config: TeamConfig) -> Gen[tuple[Undelivered, ...]]:
    """``find`` over the recorded requests (``team debt show``, ``redeliver``; ``team status`` parses the
    same file itself); an unreadable requests file shows none, as it shows no task state."""
    data = yield from expect(m.ReadFile(path=paths.dispatch_requests), m.FileData)
    return find(config, dsp.check_requests(data.content, paths.dispatch_requests).value_or([]))


@frozen(kw_only=True)
class Redelivery:
    delivered: tuple[str, ...] = ()  # workers whose task reached them now
    still: tuple[Undelivered, ...] = ()  # as recorded after this try

    def to_json(self) -> m.Answer:
        return {"delivered": list(self.delivered), "notDelivered": [u.to_json() for u in self.still]}

    def onto(self, done: m.Done) -> m.Done:
        """A command's answer with this retry's outcome (``redeliveredTasks``), a task still not
        delivered as ``task_delivery`` debt (exit 3)."""
        if not (self.delivered or self.still):
            return done
        return done.adding("redeliveredTasks", self.to_json(), tuple(u.debt() for u in self.still))


def redeliver(paths: TeamPaths, config: TeamConfig, owner: str, cwd: str) -> Gen[Redelivery]:
    """Type each undelivered trigger again into its worker's pinned, owner-tagged pane and watch it
    land; every outcome is written into its request (``attempt_count`` + 1) and the delivery log. A
    requests file that cannot be read names no task and is left as it is (``team status`` shows no
    task state from it either)."""
    found = yield from reported(paths, config)
    if not found:
        return Redelivery()
    messages = [supervise.Message(worker=u.worker, cli=u.cli, pane=u.pane, pid=u.pid,
                                  text=u.trigger, token=dsp.trigger_token(u.worker), server=u.server)
                for u in found if u.pane is not None and u.pid is not None]
    outcomes = yield from supervise.deliver_all(messages, owner)
    now = (yield from expect(m.Clock(), m.Value)).value
    delivered, still = [], []
    for undelivered in found:
        outcome = outcomes.get(undelivered.worker, supervise.Delivery(ok=False, reason="not_delivered:pane_not_pinned"))
        attempts = undelivered.request.attempt_count
        request = dsp.watched_outcome(undelivered.request, outcome.ok, outcome.reason, now,
                                      (attempts if type(attempts) is int else 1) + 1)
        yield from dsp.update_request(paths, request)
        yield from expect(dsp.result_log_step(cwd, request, now, "panefleet.debt_reconcile"), m.Ack)
        if outcome.ok:
            delivered.append(undelivered.worker)
        else:
            still.append(evolve(undelivered, request=request))
    return Redelivery(delivered=tuple(delivered), still=tuple(still))
