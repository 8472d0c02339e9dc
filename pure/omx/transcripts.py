"""Worker transcripts: a worker pane's scrollback, saved in the team's folder before the pane is killed
(docs/reaching-workers.md, "Transcripts").

Before a program kills a worker's pane — scale-down and the debt reconcile (``pure/omx/scale_down.py``,
``pure/omx/debt.py``), a scale-up's rollback and a worker that did not start
(``pure/omx/scale_up/rollback.py``, ``worker.py``), a respawn (``pure/omx/respawn.py``), ``fleet.stop``
behind ``panefleet destroy`` (``pure/fleet/stop.py``) — :func:`keep` proves the pane (``L``, owner tag,
``L`` with its pinned pid; a dead pane kept by ``remain-on-exit`` counts), reads its last ``LINES``
lines of history and its screen, and writes them atomically to
``<team dir>/transcripts/<worker>.<YYYYMMDDTHHMMSS.mmmZ>.log`` (UTC, when it was saved: a worker
removed and added again never overwrites an earlier one). A pane that is gone already has nothing to
keep; one that is not proven, a capture or a write that fails keep nothing and say why
(:attr:`Kept.missing`). None of it changes whether the pane is then killed: the kill has its own
proof (``pure/tmux/teardown.py``, unchanged), and a transcript is only ever taken before it.
Every step of it carries ``t.TRANSCRIPT_NOTE``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from attrs import evolve, frozen

from pure import model as m
from pure import tmux as t
from pure.omx import effects
from pure.omx.records import Member
from pure.omx.state import WORKER_NAME_RE, TeamPaths
from pure.program import Gen, expect

LINES = 10_000  # lines of history kept (tmux keeps at most its history-limit, 2000 by default), plus the screen
NOTE = t.TRANSCRIPT_NOTE
MODE = 0o600  # what an agent printed may be private
STAMP_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z")
FILE_RE = re.compile(r"(?P<worker>[a-z0-9][a-z0-9-]{0,63})\.(?P<stamp>\d{8}T\d{6}\.\d{3}Z)\.log")


@frozen(kw_only=True)
class Kept:
    """What :func:`keep` did for one pane: ``path`` where its transcript was saved, else ``missing``,
    why none was (a sentence; "" when the pane was gone already, with nothing left to keep)."""

    worker: str
    pane_id: str
    path: str | None = None
    missing: str = ""


def stamp(now: str) -> str:
    """``2026-01-01T12:34:56.789Z`` (the shell's clock) → ``20260101T123456.789Z``: no ``:`` in a file
    name, and names sort as times do."""
    found = STAMP_RE.fullmatch(now)
    if found is None:  # never from the shell's clock; still a file name
        return re.sub(r"[^0-9A-Za-z.]", "", now) or "unknown"
    year, month, day, hour, minute, second, ms = found.groups()
    return f"{year}{month}{day}T{hour}{minute}{second}.{ms}Z"


def saved_at(file_stamp: str) -> str:
    """The inverse of :func:`stamp`: when a transcript was saved, ISO 8601."""
    d, h = file_stamp[:8], file_stamp[9:15]
    return f"{d[:4]}-{d[4:6]}-{d[6:]}T{h[:2]}:{h[2:4]}:{h[4:]}{file_stamp[15:]}"


def text_of(capture: str) -> str:
    """The capture without the blank rows above its first line and below its last, ending in a newline."""
    lines = capture.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return "".join(f"{line}\n" for line in lines[first:])


_UNPROVEN = {"pid_unpinned": "no pid was pinned for it", "pid_changed": "another process runs in it",
             "owner_changed": "it does not carry the team's owner tag"}


def keep(paths: TeamPaths, worker: str, pane_id: str, pid: object, owner: str, server: str | None = None) -> Gen[Kept]:
    """Save the scrollback of ``worker``'s pane ``pane_id`` (pinned ``pid`` on tmux ``server``, tagged
    ``owner``), after its proof. Never fails: what could not be kept is said in the answer."""
    if WORKER_NAME_RE.fullmatch(worker) is None:
        return Kept(worker=worker, pane_id=pane_id, missing=f"no transcript of {worker!r}: not a worker name a "
                    "file can be named after")
    pinned = pid if isinstance(pid, int) and t.is_positive_pid(pid) else None
    proof = yield from t.prove_owned(pane_id, pinned, owner, server=server, keep_dead=True, note=NOTE)
    if proof.kind == "gone":
        return Kept(worker=worker, pane_id=pane_id)
    if proof.token is None:
        why = _UNPROVEN.get(proof.kind) or f"tmux answered {proof.code}"
        return Kept(worker=worker, pane_id=pane_id, missing=f"no transcript of {worker}: its pane {pane_id} is not "
                    f"proven its ({why}), so it was not read")
    shot = yield from expect(t.scrollback_step(proof.token, LINES, note=NOTE), m.Proc)
    if shot.exit_code != 0:
        return Kept(worker=worker, pane_id=pane_id, missing=f"no transcript of {worker}: tmux could not read its "
                    f"pane {pane_id} ({shot.stderr.strip() or f'exit {shot.exit_code}'})")
    now = yield from expect(m.Clock(), m.Value)
    path = paths.transcript(worker, stamp(now.value))
    wrote = yield from expect(m.WriteFile(path=path, content=text_of(shot.stdout), mode=MODE, note=NOTE,
                                          effect=effects.worker(worker, "change", "transcript saved")), m.Ack)
    if not wrote.ok:
        return Kept(worker=worker, pane_id=pane_id, missing=f"no transcript of {worker}: {path} could not be "
                    f"written ({wrote.error})")
    return Kept(worker=worker, pane_id=pane_id, path=path)


def keep_records(paths: TeamPaths, records: Iterable[Member], owner: str, *, leader_pane_id: str | None = None,
                 hud_pane_id: str | None = None) -> Gen[list[Kept]]:
    """:func:`keep` for each worker record (``name``, ``pane_id``, ``pid``) whose pane the teardown would
    not leave out (the leader or HUD pane, a repeat: ``t.exclusion_rule``)."""
    kept: list[Kept] = []
    seen: set[str] = set()
    for record in records:
        pane = record.pane_id
        if t.is_pane_id(pane) and t.exclusion_rule(pane, seen, leader_pane_id, hud_pane_id) is None:
            seen.add(pane)
            kept.append((yield from keep(paths, record.name, pane, record.pid, owner, record.tmux_server)))
    return kept


def lost(kept: Sequence[Kept], report: t.TeardownReport | None) -> list[str]:
    """Why no transcript was kept of each pane the teardown then killed (a pane left alive, or found
    gone, lost nothing to it)."""
    killed = {r.pane_id for r in report.results if r.fate == "killed"} if report is not None else set()
    return [k.missing for k in kept if k.missing and k.pane_id in killed]


def with_warnings(result: m.Answer, warnings: Sequence[str]) -> m.Answer:
    """``result`` with ``transcriptWarnings`` when a killed pane's transcript could not be kept; else as it
    is (oh-my-codex's result objects stay exactly theirs, docs/scale-down.md "Deviations")."""
    return {**result, "transcriptWarnings": list(warnings)} if warnings else result


def noted(done: m.Done, fields: m.Answer) -> m.Done:
    """``done`` with ``fields`` (where a transcript went, why one could not be kept) in its JSON result; as
    it is when there are none."""
    if not fields or not isinstance(done.outcome.result, dict):
        return done
    return evolve(done, outcome=evolve(done.outcome, result=m.JsonValue({**done.outcome.result, **fields})))


def written(journal: Sequence[m.Entry]) -> list[str]:
    """The transcripts a run saved, from its journal (for its text: what the result of an oh-my-codex
    operation does not carry)."""
    return [e.step.path for e in journal if isinstance(e.step, m.WriteFile) and e.step.note == NOTE
            and isinstance(e.observation, m.Ack) and e.observation.ok]


@frozen(kw_only=True)
class Saved:
    """One saved transcript: its worker, file name and stamp."""

    worker: str
    name: str
    stamp: str


def saved(paths: TeamPaths) -> Gen[list[Saved]]:
    """The team's saved transcripts, oldest first (a folder that cannot be listed has none)."""
    listing = yield from expect(m.ListDir(path=paths.transcripts_dir), m.Listing)
    found = [(FILE_RE.fullmatch(name), name) for name in listing.names or ()]
    return sorted((Saved(worker=f["worker"], name=name, stamp=f["stamp"]) for f, name in found if f is not None),
                  key=lambda s: (s.stamp, s.name))
