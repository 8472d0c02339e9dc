"""The membership/task transaction ``.membership-task-transaction.json`` (docs/transaction.md), as
sub-programs.

A commit rewrites task files, ``config.json`` and (optionally) ``manifest.v2.json`` as one
old-or-new generation. The journal is byte-compatible with oh-my-codex's, so either tool recovers
the other's interrupted commit::

    {"schemaVersion": 1, "phase": "prepared"|"committed",
     "files": [{"path": ABS, "oldBytes": str|null, "newBytes": str|null}, ...]}

API (generators, use with ``yield from``; errors end the program through ``PlanError`` whose
message is oh-my-codex's ``Error.message`` — callers that wrap errors catch ``PlanError``):

* ``commit(paths, barrier, txn)`` – "Commit". Requires the :class:`~pure.omx.locks.Barrier` token
  (``membership_transaction_barrier_required:<team>`` otherwise), checks ``base_generation``
  against the raw config (``team_config_missing:<team>``,
  ``team_membership_stale_generation:<team>:<base>:<current>``), injects
  ``config_generation = current + 1`` into the new config and manifest, writes the journal, applies
  every file, marks it committed and deletes it (unless ``retain_journal_on_success``). Injections:
  ``interrupt_after_first_task_write`` and ``fail_rollback_persistence[_after]``. Returns the new
  generation.
* ``recover(paths, barrier, retain=False)`` – "Recovery": a journal's phase decides the direction
  (``committed`` ⇒ new bytes, ``prepared`` ⇒ old bytes); validated first.
* ``finalize(paths, barrier)`` – "Finalize": validate a ``committed`` journal and delete it.
* ``load_team(paths, barrier)`` – the public read: recover, then read config + manifest into a
  :class:`~pure.omx.state.TeamState` (``None`` when ``config.json`` is absent; a config that is
  present but malformed ends the program with ``team_state_malformed:<file>: <what>``).
* ``read_text(path)`` / ``write_text(path, text)`` / ``remove_file(path)`` – file helpers that
  turn a failed step into a ``PlanError``.
"""

from __future__ import annotations

import json
import posixpath
import re
from functools import partial
from typing import Literal

from attrs import frozen
from returns.result import Failure, Result, Success

from pure import model as m
from pure.omx import effects
from pure.omx.codec import Parsed, StateError, parse_json, parse_object, render_json
from pure.omx.locks import Barrier
from pure.omx.state import (
    TeamPaths,
    TeamState,
    check_task,
    config_generation,
    read_team_state,
    validate_config,
)
from pure.program import Gen, PlanError, expect, fail

Phase = Literal["prepared", "committed"]
TASK_FILE_RE = re.compile(r"task-([A-Za-z0-9_-]+)\.json")
TASK_ID_RE = re.compile(r"[0-9]{1,20}")
INTERRUPTION = "injected_scale_down_interruption:after-first-task-write"
ROLLBACK_PERSISTENCE = "injected_scale_down_failure:rollback-persistence-failure"
STATE_MALFORMED = "team_state_malformed"
JOURNAL_FILE = ".membership-task-transaction.json"
NOT_UTF8 = "not_utf8"  # the shell's FileData error for a file whose bytes are not UTF-8 (shell/run/executor.py)


class StateMalformed(PlanError):
    """A team file that is not what it must be ends the operation as ``team_state_malformed:<file>[
    field <f>]: <what>`` (status ``error``), before it changes anything that file would decide
    (docs/team-state.md). Raise it with :func:`malformed`; a caller that wraps other failures in its
    own message lets this one through as it is."""


def malformed(detail: str) -> StateMalformed:
    """``detail``: ``<file>[ field <f>]: <what>``."""
    return StateMalformed(fail(f"{STATE_MALFORMED}:{detail}").outcome)


@frozen
class Change:
    old: str | None
    new: str | None


@frozen
class TaskChange:
    task_id: str
    old: str | None
    new: str | None


@frozen(kw_only=True)
class Transaction:
    base_generation: int
    tasks: tuple[TaskChange, ...]
    config: Change
    manifest: Change | None = None
    recover_to_new_on_failure: bool = False
    retain_journal_on_success: bool = False
    interrupt_after_first_task_write: bool = False
    fail_rollback_persistence: bool = False
    fail_rollback_persistence_after: Literal["config", "manifest"] | None = None


@frozen
class JournalFile:
    path: str
    old: str | None
    new: str | None


@frozen
class Journal:
    phase: Phase
    files: tuple[JournalFile, ...]


def journal_text(journal: Journal) -> str:
    return render_json({
        "schemaVersion": 1,
        "phase": journal.phase,
        "files": [{"path": f.path, "oldBytes": f.old, "newBytes": f.new} for f in journal.files],
    })


def parse_journal(text: str, team: str, file: str = JOURNAL_FILE) -> Result[Journal, PlanError]:
    """The journal's shape (not yet its paths), or the failure that ends the program: a shape
    problem in oh-my-codex's words; text that is not JSON panefleet can carry :func:`malformed`."""
    invalid = fail(f"Invalid membership transaction journal for {team}")
    parsed = parse_json(text, file)
    if isinstance(parsed, Failure):
        return Failure(malformed(str(parsed.failure())))
    raw = parsed.unwrap()
    if not isinstance(raw, dict):
        return Failure(invalid)
    phase = raw.get("phase")
    if raw.get("schemaVersion") != 1 or type(raw.get("schemaVersion")) not in (int, float) \
            or phase not in ("prepared", "committed") or not isinstance(raw.get("files"), list):
        return Failure(invalid)
    files: list[JournalFile] = []
    for entry in raw["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) \
                or not (entry.get("oldBytes") is None or isinstance(entry.get("oldBytes"), str)) \
                or not (entry.get("newBytes") is None or isinstance(entry.get("newBytes"), str)):
            return Failure(fail(f"Invalid membership transaction file entry for {team}"))
        files.append(JournalFile(entry["path"], entry.get("oldBytes"), entry.get("newBytes")))
    return Success(Journal(phase, tuple(files)))


# ------------------------------------------------------------------------------------- file helpers


def read_text(path: str) -> Gen[str | None]:
    """A file's text, ``None`` when it does not exist; an unreadable file ends the program."""
    data = yield from expect(m.ReadFile(path=path), m.FileData)
    if data.error == NOT_UTF8:
        raise malformed(f"{path}: not UTF-8 text")
    if data.error:
        raise fail(f"cannot read {path}: {data.error}")
    return data.content


def write_text(path: str, text: str, note: str = "", effect: m.Effect | None = None) -> Gen[None]:
    ack = yield from expect(m.WriteFile(path=path, content=text, note=note, effect=effect), m.Ack)
    if not ack.ok:
        raise fail(ack.error)


def remove_file(path: str, note: str = "", effect: m.Effect | None = None) -> Gen[None]:
    ack = yield from expect(m.RemovePath(path=path, note=note, effect=effect), m.Ack)
    if not ack.ok:
        raise fail(ack.error)


def _realpath(path: str) -> Gen[str]:
    kind = yield from expect(m.Stat(path=path), m.Value)
    if kind.value == "absent":
        raise fail(f"ENOENT: no such file or directory, realpath '{path}'")
    value = yield from expect(m.RealPath(path=path), m.Value)
    return value.value


def _apply(files: tuple[JournalFile, ...], use_new: bool) -> Gen[None]:
    for f in files:
        data, was = (f.new, f.old) if use_new else (f.old, f.new)
        said = (effects.task_file(f.path, was, data) or
                (effects.config(was, data) if posixpath.basename(f.path) == effects.CONFIG else effects.CONFIG_COMPANION))
        if data is None:
            yield from remove_file(f.path, note="txn", effect=said)
        else:
            yield from write_text(f.path, data, note="txn", effect=said)


# ---------------------------------------------------------------------------------------- validate


def validate_files(paths: TeamPaths, files: tuple[JournalFile, ...]) -> Gen[None]:
    """Every path absolute, normalised, unique; exactly one config; only the manifest or
    ``tasks/task-<id>.json`` otherwise; parents are the canonical (symlink-free) directories."""
    team = paths.team
    state_root = yield from _realpath(paths.state_root)
    team_root = yield from _realpath(paths.team_dir)
    if team_root != state_root and not team_root.startswith(state_root + "/"):
        raise fail(f"Membership transaction team root escapes canonical state root for {team}")
    tasks_root = yield from _realpath(paths.tasks_dir)
    if not tasks_root.startswith(team_root + "/"):
        raise fail(f"Membership transaction tasks root escapes canonical team root for {team}")
    seen: set[str] = set()
    configs = 0
    for f in files:
        if not f.path.startswith("/") or posixpath.normpath(f.path) != f.path or f.path in seen:
            raise fail(f"Invalid membership transaction path for {team}")
        seen.add(f.path)
        if f.path == paths.config:
            configs += 1
            expected_parent = team_root
        elif f.path == paths.manifest:
            expected_parent = team_root
        else:
            if posixpath.dirname(f.path) != paths.tasks_dir:
                raise fail(f"Membership transaction path escapes expected team files for {team}")
            match = TASK_FILE_RE.fullmatch(posixpath.basename(f.path))
            if match is None or TASK_ID_RE.fullmatch(match.group(1)) is None:
                raise fail(f"Invalid membership transaction task path for {team}")
            expected_parent = tasks_root
        parent = yield from _realpath(posixpath.dirname(f.path))
        if parent != expected_parent:
            raise fail(f"Membership transaction path traverses a symlink for {team}")
    if configs != 1:
        raise fail(f"Membership transaction must contain exactly one config path for {team}")


# ---------------------------------------------------------------------------------------- recovery


def _read_journal(paths: TeamPaths) -> Gen[Journal | None]:
    text = yield from read_text(paths.journal)
    if text is None:
        return None
    parsed = parse_journal(text, paths.team, paths.journal)
    if isinstance(parsed, Failure):
        raise parsed.failure()
    return parsed.unwrap()


def check_applied_bytes(paths: TeamPaths, journal: Journal) -> Gen[None]:
    """Recovery writes one side of every entry (``newBytes`` when committed, else ``oldBytes``): the
    config it would write must be a valid config, every task a valid task, and the manifest a JSON
    object — or, for a manifest that is not one (oh-my-codex keeps such a manifest byte for byte, and
    so does a rollback), exactly the bytes already there. Otherwise the journal is malformed and
    nothing is written."""
    side = "newBytes" if journal.phase == "committed" else "oldBytes"
    for position, entry in enumerate(journal.files):
        data = entry.new if journal.phase == "committed" else entry.old
        if data is None:
            continue
        name = posixpath.basename(entry.path)
        problem: Result[object, StateError]
        if entry.path == paths.config:
            problem = parse_object(data, name).bind(partial(validate_config, file=name))
        elif entry.path == paths.manifest:
            problem = parse_object(data, name)
            if isinstance(problem, Failure) and (yield from read_text(entry.path)) == data:
                continue
        else:
            match = TASK_FILE_RE.fullmatch(name)
            problem = check_task(data, match.group(1) if match else "", name)
        if isinstance(problem, Failure):
            raise malformed(f"{paths.journal} field files[{position}].{side}: would write a "
                       f"malformed {problem.failure()}")


def recover(paths: TeamPaths, barrier: Barrier, retain: bool = False) -> Gen[Phase | None]:
    """Converge an interrupted commit; returns the phase that decided it (None: no journal)."""
    del barrier  # the token documents the precondition; recovery itself needs no more
    journal = yield from _read_journal(paths)
    if journal is None:
        return None
    yield from validate_files(paths, journal.files)
    yield from check_applied_bytes(paths, journal)
    yield from _apply(journal.files, journal.phase == "committed")
    if not retain:
        yield from remove_file(paths.journal, note="txn", effect=effects.CONFIG_COMPANION)
    return journal.phase


def finalize(paths: TeamPaths, barrier: Barrier) -> Gen[None]:
    del barrier
    text = yield from read_text(paths.journal)
    if text is None:
        raise fail(f"ENOENT: no such file or directory, open '{paths.journal}'")
    parsed = parse_journal(text, paths.team, paths.journal)
    if isinstance(parsed, Failure) or parsed.unwrap().phase != "committed":
        raise fail(f"Cannot finalize non-committed membership transaction for {paths.team}")
    yield from validate_files(paths, parsed.unwrap().files)
    yield from remove_file(paths.journal, note="txn", effect=effects.CONFIG_COMPANION)


def raw_generation(paths: TeamPaths) -> Gen[int | None]:
    """``config_generation`` of the raw ``config.json`` (None: missing or unparseable)."""
    text = yield from read_text(paths.config)
    if text is None:
        return None
    parsed = parse_json(text, paths.config)
    if isinstance(parsed, Failure):
        return None
    raw = parsed.unwrap()
    return config_generation(raw) if isinstance(raw, dict) else 0


def _with_generation(text: str, generation: int) -> str:
    value: Parsed = json.loads(text)
    value["config_generation"] = generation
    return render_json(value)


def commit(paths: TeamPaths, barrier: Barrier | None, txn: Transaction) -> Gen[int]:
    team = paths.team
    if barrier is None or not barrier.covers(paths):
        raise fail(f"membership_transaction_barrier_required:{team}")
    current = yield from raw_generation(paths)
    if current is None:
        raise fail(f"team_config_missing:{team}")
    if txn.base_generation != current:
        raise fail(f"team_membership_stale_generation:{team}:{txn.base_generation}:{current}")
    accepted = current + 1
    if txn.config.new is None:
        raise fail(f"team_config_missing:{team}")
    files = [JournalFile(paths.task(t.task_id), t.old, t.new) for t in txn.tasks]
    files.append(JournalFile(paths.config, txn.config.old, _with_generation(txn.config.new, accepted)))
    if txn.manifest is not None:
        new_manifest = None if txn.manifest.new is None else _with_generation(txn.manifest.new, accepted)
        files.append(JournalFile(paths.manifest, txn.manifest.old, new_manifest))
    all_files = tuple(files)
    phase: Phase = "committed" if txn.recover_to_new_on_failure else "prepared"
    yield from write_text(paths.journal, journal_text(Journal(phase, all_files)), note="txn-journal",
                          effect=effects.CONFIG_COMPANION)
    injected_rollback = txn.fail_rollback_persistence or txn.fail_rollback_persistence_after is not None
    try:
        if txn.interrupt_after_first_task_write and txn.tasks:
            yield from _apply(all_files[:1], True)
            raise fail(INTERRUPTION)
        yield from _apply(all_files, True)
        if injected_rollback:
            raise fail(ROLLBACK_PERSISTENCE)
        yield from write_text(paths.journal, journal_text(Journal("committed", all_files)), note="txn-journal",
                              effect=effects.CONFIG_COMPANION)
        if not txn.retain_journal_on_success:
            yield from remove_file(paths.journal, note="txn-journal", effect=effects.CONFIG_COMPANION)
    except Exception as error:
        message = str(error)
        if message == INTERRUPTION:
            raise
        if injected_rollback:
            target = txn.fail_rollback_persistence_after
            index = 0
            if target is not None:
                wanted = paths.config if target == "config" else paths.manifest
                index = next((i for i, f in enumerate(all_files) if f.path == wanted), -1)
            yield from _apply(all_files[: max(1, index + 1)], False)
            raise
        if txn.recover_to_new_on_failure:
            try:
                yield from recover(paths, barrier)
            except Exception:  # noqa: BLE001 - the committed journal stays the recovery authority
                pass
            raise
        try:
            yield from _apply(all_files, False)
            yield from remove_file(paths.journal, note="txn-journal", effect=effects.CONFIG_COMPANION)
        except Exception:  # noqa: BLE001 - the prepared journal stays the recovery authority
            pass
        raise
    return accepted


# -------------------------------------------------------------------------------------- public read


def read_state(paths: TeamPaths) -> Gen[TeamState | None]:
    """Read config + manifest as they are (call under the barrier after ``recover``).

    ``None`` when ``config.json`` is absent (the team does not exist). A config that is there but
    unusable (not JSON, not an object, a field of the wrong type) ends the program with
    ``team_state_malformed:<file>[ field <f>]: <what>`` (status ``error``), as ``team status`` does:
    oh-my-codex's ``readTeamConfig`` answers null and reports "Team X not found", which hides a
    corrupt file behind a missing team.
    """
    config_text = yield from read_text(paths.config)
    if config_text is None:
        return None
    manifest_text = yield from read_text(paths.manifest)
    parsed = read_team_state(paths, config_text, manifest_text)
    if isinstance(parsed, Failure):
        raise malformed(str(parsed.failure()))
    return parsed.unwrap()


def load_team(paths: TeamPaths, barrier: Barrier) -> Gen[TeamState | None]:
    """oh-my-codex's public read: recover any interrupted commit, then read the canonical view."""
    yield from recover(paths, barrier)
    return (yield from read_state(paths))
