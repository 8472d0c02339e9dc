"""The Herdr fleet's durable store: SQLite (stdlib ``sqlite3``) in WAL mode with a busy timeout.

Lives at ``$PANEFLEET_STATE_DIR/herdr.sqlite3``, else ``$XDG_STATE_HOME/panefleet/herdr.sqlite3``, else
``~/.local/state/panefleet/herdr.sqlite3``. Holds, per project, the owned workspace ids (the "record"
leg of ownership) and the run records (the live run set, with recorded pane and attempt budget),
each scoped to the herdr machine and session it belongs to (schema version 3: machine ``''`` is this
machine, a saved machine's runs have session ``''``; version-1 rows belong to ``fleet``, rows before
version 3 to this machine), the pending ``workspace create`` of each (schema version 4), and what the
last reconcile pass owned and could not close (schema version 5). Run ids are unique across machines
and sessions; a run belongs to exactly one.

Concurrency: every write is one ``BEGIN IMMEDIATE`` transaction, so concurrent panefleet processes
serialise on SQLite's lock (waiting up to the busy timeout) and never interleave half-writes.
Schema changes are versioned migrations keyed on ``PRAGMA user_version``, applied in one
transaction. A file that is not a panefleet store (or is corrupt) raises ``StoreError`` naming the
path and what was wrong; nothing is written to it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pure import model as m
from pure.herdr.records import PENDING_KEY, RunRecord

FILENAME = "herdr.sqlite3"
BUSY_TIMEOUT_MS = 10_000
DEFAULT_SESSION = "fleet"
DEBT_KEYS = ("kind", "subject", "reason", "detail")

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE workspaces (
            project TEXT NOT NULL,
            workspace_id TEXT NOT NULL,
            recorded_seq INTEGER NOT NULL,
            PRIMARY KEY (project, workspace_id)
        )""",
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            issue INTEGER NOT NULL,
            attempt INTEGER NOT NULL,
            pid INTEGER,
            pane_id TEXT,
            pane_label TEXT,
            session_file TEXT,
            settled INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            started_seq INTEGER NOT NULL
        )""",
        "CREATE INDEX runs_project ON runs(project)",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "INSERT INTO meta(key, value) VALUES ('app', 'panefleet-herdr')",
    ),
    # 2: records are scoped per herdr session (workspace ids are per-session herdr ids). Rows written
    # before sessions were recorded belong to the default session, ``fleet``.
    (
        "ALTER TABLE runs ADD COLUMN session TEXT NOT NULL DEFAULT 'fleet'",
        "CREATE INDEX runs_session ON runs(session)",
        """CREATE TABLE workspaces_v2 (
            session TEXT NOT NULL,
            project TEXT NOT NULL,
            workspace_id TEXT NOT NULL,
            recorded_seq INTEGER NOT NULL,
            PRIMARY KEY (session, project, workspace_id)
        )""",
        """INSERT INTO workspaces_v2(session, project, workspace_id, recorded_seq)
           SELECT 'fleet', project, workspace_id, recorded_seq FROM workspaces""",
        "DROP TABLE workspaces",
        "ALTER TABLE workspaces_v2 RENAME TO workspaces",
    ),
    # 3: records are scoped per herdr machine too (herdr 0.9.1 ``--machine``: each saved machine is a
    # server of its own, with its own workspace ids). ``''`` is this machine, where every earlier row lives.
    (
        "ALTER TABLE runs ADD COLUMN machine TEXT NOT NULL DEFAULT ''",
        "CREATE INDEX runs_machine_session ON runs(machine, session)",
        """CREATE TABLE workspaces_v3 (
            machine TEXT NOT NULL,
            session TEXT NOT NULL,
            project TEXT NOT NULL,
            workspace_id TEXT NOT NULL,
            recorded_seq INTEGER NOT NULL,
            PRIMARY KEY (machine, session, project, workspace_id)
        )""",
        """INSERT INTO workspaces_v3(machine, session, project, workspace_id, recorded_seq)
           SELECT '', session, project, workspace_id, recorded_seq FROM workspaces""",
        "DROP TABLE workspaces",
        "ALTER TABLE workspaces_v3 RENAME TO workspaces",
    ),
    # 4: a ``workspace create`` is recorded before it is sent (its pending create: the ids listed just
    # before it), so a create whose answer is lost still has a record naming it (docs/herdr-fleet.md,
    # "Saved machines"). One per machine, session and project; earlier stores have none.
    (
        """CREATE TABLE pending_creates (
            machine TEXT NOT NULL,
            session TEXT NOT NULL,
            project TEXT NOT NULL,
            listed_before TEXT NOT NULL,
            recorded_seq INTEGER NOT NULL,
            PRIMARY KEY (machine, session, project)
        )""",
    ),
    # 5: what the last reconcile pass of a machine and session owned and could not close (its debt,
    # pure/herdr/fleet/outcomes.py ``debt_of``), so that ``herdr status`` names it between passes.
    (
        """CREATE TABLE debts (
            machine TEXT NOT NULL,
            session TEXT NOT NULL,
            kind TEXT NOT NULL,
            subject TEXT NOT NULL,
            reason TEXT NOT NULL,
            detail TEXT NOT NULL,
            recorded_seq INTEGER NOT NULL,
            PRIMARY KEY (machine, session, kind, subject)
        )""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(Exception):
    """The store cannot be used; the message names the file and the reason."""


class RunConflict(Exception):
    """``start_run`` of a known run id whose identity (session, project, issue, attempt) differs."""


def state_dir(env: Mapping[str, str]) -> Path:
    explicit = env.get("PANEFLEET_STATE_DIR")
    if explicit:
        return Path(explicit)
    xdg = env.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path(env.get("HOME") or os.path.expanduser("~")) / ".local" / "state"
    return base / "panefleet"


def store_path(env: Mapping[str, str]) -> Path:
    return state_dir(env) / FILENAME


READ_ONLY_CHANGE = "attempt to write a readonly database"  # sqlite3's answer to a change of a read-only store


def change_failure(env: Mapping[str, str]) -> str | None:
    """What a change answers when the store opens read-only (its folder cannot be written; see
    ``HerdrStore``), as ``HerdrStore.handle`` words it; None when it can be written. A dry run's
    prediction (``shell/run/dryrun.py``)."""
    from shell.run import fs

    path = store_path(env)
    if not path.is_file() or fs.unwritable(path.parent) is None:
        return None
    return f"store {path}: {READ_ONLY_CHANGE}"


class HerdrStore:
    """``read_only`` (``""`` when the store can be written) says why it was opened read-only: its folder
    cannot be written (a read-only mount, no permission). It then answers reads (``herdr status``,
    ``herdr run list``); a change fails naming the store (``attempt to write a readonly database``)."""

    def __init__(self, path: Path) -> None:
        from shell.run import fs

        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"store directory {path.parent}: {exc.strerror or exc}") from None
        blocked = fs.unwritable(path.parent)
        self.read_only = "" if blocked is None else f"{path.parent}: {os.strerror(blocked)}"
        try:
            self.conn = self._connect_read_only() if self.read_only else sqlite3.connect(
                str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreError(f"store {path}: cannot open: {exc}" + (
                f" (read-only: {self.read_only})" if self.read_only else "")) from None
        try:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._check_and_migrate()
            if not self.read_only:
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise StoreError(f"store {path}: not a usable panefleet store: {exc}") from None
        except StoreError:
            self.conn.close()
            raise

    @classmethod
    def open(cls, env: Mapping[str, str]) -> HerdrStore:
        return cls(store_path(env))

    def _connect_read_only(self) -> sqlite3.Connection:
        """The store in a folder that cannot be written. A store in WAL mode needs its ``-shm`` file
        to be read as it is; without one (and with no ``-wal`` holding changes not yet checkpointed
        into the store) it is read as the immutable file it is here."""
        if not self.path.exists():
            raise StoreError(f"store {self.path}: does not exist and cannot be created ({self.read_only})")
        import urllib.parse

        uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + "?mode=ro"
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            conn.execute("PRAGMA user_version").fetchone()
            return conn
        except sqlite3.Error:
            if wal.exists() and wal.stat().st_size > 0:
                raise
        return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def _check_and_migrate(self) -> None:
        with (contextlib.nullcontext(self.conn) if self.read_only else self._tx()) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if version == 0 and tables:
                raise StoreError(f"store {self.path}: holds tables {sorted(tables)} but no panefleet schema version")
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"store {self.path}: schema version {version} is newer than this panefleet ({SCHEMA_VERSION})"
                )
            if version >= 1:
                app = conn.execute("SELECT value FROM meta WHERE key = 'app'").fetchone()
                if app is None or app[0] != "panefleet-herdr":
                    raise StoreError(f"store {self.path}: not a panefleet herdr store")
            if version < SCHEMA_VERSION and self.read_only:
                raise StoreError(f"store {self.path}: schema version {version} must be upgraded to "
                                 f"{SCHEMA_VERSION}, which needs writing ({self.read_only})")
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")

    def _next_seq(self, conn: sqlite3.Connection, table: str, column: str) -> int:
        row = conn.execute(f"SELECT COALESCE(MAX({column}), 0) + 1 FROM {table}").fetchone()
        return int(row[0])

    # ---------------------------------------------------------------------------------- workspaces

    def recorded(self, projects: list[str], session: str = DEFAULT_SESSION,
                 machine: str | None = None) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {p: [] for p in projects}
        for project in projects:
            rows = self.conn.execute(
                "SELECT workspace_id FROM workspaces WHERE machine = ? AND session = ? AND project = ? "
                "ORDER BY recorded_seq",
                (machine or "", session, project),
            ).fetchall()
            out[project] = [str(r[0]) for r in rows]
        return out

    def all_workspaces(self) -> list[tuple[str, str, str, str]]:
        """Every recorded workspace as (machine, session, project, workspace id); machine ``""``: this one."""
        rows = self.conn.execute(
            "SELECT machine, session, project, workspace_id FROM workspaces ORDER BY recorded_seq"
        ).fetchall()
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def remember(self, project: str, workspace_id: str, session: str = DEFAULT_SESSION,
                 machine: str | None = None) -> None:
        with self._tx() as conn:
            seq = self._next_seq(conn, "workspaces", "recorded_seq")
            conn.execute(
                "INSERT OR IGNORE INTO workspaces(machine, session, project, workspace_id, recorded_seq) "
                "VALUES (?, ?, ?, ?, ?)",
                (machine or "", session, project, workspace_id, seq),
            )

    def forget(self, project: str, workspace_id: str, session: str = DEFAULT_SESSION,
               machine: str | None = None) -> None:
        with self._tx() as conn:
            conn.execute(
                "DELETE FROM workspaces WHERE machine = ? AND session = ? AND project = ? AND workspace_id = ?",
                (machine or "", session, project, workspace_id),
            )

    def pending(self, projects: list[str], session: str = DEFAULT_SESSION,
                machine: str | None = None) -> dict[str, list[str]]:
        """The pending ``workspace create`` of each project that has one: the ids listed before it."""
        out: dict[str, list[str]] = {}
        for project in projects:
            row = self.conn.execute(
                "SELECT listed_before FROM pending_creates WHERE machine = ? AND session = ? AND project = ?",
                (machine or "", session, project),
            ).fetchone()
            if row is not None:
                out[project] = [str(w) for w in json.loads(str(row[0]))]
        return out

    def all_pending(self) -> list[tuple[str, str, str, list[str]]]:
        """Every pending create as (machine, session, project, ids listed before it)."""
        rows = self.conn.execute(
            "SELECT machine, session, project, listed_before FROM pending_creates ORDER BY recorded_seq"
        ).fetchall()
        return [(str(r[0]), str(r[1]), str(r[2]), [str(w) for w in json.loads(str(r[3]))]) for r in rows]

    def intend(self, project: str, listed_before: list[str], session: str = DEFAULT_SESSION,
               machine: str | None = None) -> None:
        """Record a ``workspace create`` about to be sent (replacing an earlier one of the project)."""
        with self._tx() as conn:
            seq = self._next_seq(conn, "pending_creates", "recorded_seq")
            conn.execute(
                "INSERT OR REPLACE INTO pending_creates(machine, session, project, listed_before, recorded_seq) "
                "VALUES (?, ?, ?, ?, ?)",
                (machine or "", session, project, json.dumps(sorted(listed_before)), seq),
            )

    def resolve(self, project: str, session: str = DEFAULT_SESSION, machine: str | None = None) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM pending_creates WHERE machine = ? AND session = ? AND project = ?",
                         (machine or "", session, project))

    def debts(self, session: str | None = None, machine: str | None = None) -> list[dict[str, str]]:
        """The debt the last reconcile pass of ``session`` (every session: None) recorded, oldest first."""
        rows = self.conn.execute(
            "SELECT machine, session, kind, subject, reason, detail FROM debts ORDER BY recorded_seq").fetchall()
        return [{"kind": str(r[2]), "subject": str(r[3]), "reason": str(r[4]), "detail": str(r[5]),
                 **({"session": str(r[1])} if session is None else {}), **({"machine": str(r[0])} if r[0] else {})}
                for r in rows if session is None or (r[0], r[1]) == (machine or "", session)]

    def replace_debts(self, debts: list[dict[str, str]], session: str = DEFAULT_SESSION,
                      machine: str | None = None) -> None:
        """Record a pass's debt in place of the previous pass's (none: the session has no debt)."""
        with self._tx() as conn:
            conn.execute("DELETE FROM debts WHERE machine = ? AND session = ?", (machine or "", session))
            for debt in debts:
                seq = self._next_seq(conn, "debts", "recorded_seq")
                conn.execute(
                    "INSERT OR REPLACE INTO debts(machine, session, kind, subject, reason, detail, recorded_seq) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (machine or "", session, debt["kind"], debt["subject"], debt["reason"], debt["detail"], seq))

    # ---------------------------------------------------------------------------------------- runs

    _COLUMNS = ("run_id, project, issue, attempt, pid, pane_id, pane_label, session_file, settled, attempts, session, "
                "machine")

    def _record(self, row: tuple[Any, ...]) -> RunRecord:
        return RunRecord(
            run_id=str(row[0]),
            project=str(row[1]),
            issue=int(row[2]),
            attempt=int(row[3]),
            pid=None if row[4] is None else int(row[4]),
            pane_id=None if row[5] is None else str(row[5]),
            pane_label=None if row[6] is None else str(row[6]),
            session_file=None if row[7] is None else str(row[7]),
            settled=bool(row[8]),
            attempts=int(row[9]),
            session=str(row[10]),
            machine=str(row[11]) or None,
        )

    def runs(self, session: str | None = None, machine: str | None = None) -> list[RunRecord]:
        """The runs of one herdr session of ``machine`` (None: this machine; every run of every machine
        when ``session`` is None), in start order."""
        if session is None:
            rows = self.conn.execute(f"SELECT {self._COLUMNS} FROM runs ORDER BY started_seq").fetchall()
        else:
            rows = self.conn.execute(
                f"SELECT {self._COLUMNS} FROM runs WHERE machine = ? AND session = ? ORDER BY started_seq",
                (machine or "", session),
            ).fetchall()
        return [self._record(r) for r in rows]

    def run(self, run_id: str) -> RunRecord | None:
        row = self.conn.execute(f"SELECT {self._COLUMNS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else self._record(row)

    def start_run(
        self,
        *,
        run_id: str,
        project: str,
        issue: int,
        attempt: int,
        pid: int | None,
        session_file: str | None,
        session: str = DEFAULT_SESSION,
        machine: str | None = None,
    ) -> None:
        """Add a run to the live set.

        Re-starting a known run id with the same identity (machine, session, project, issue, attempt) refreshes
        its pid, session file and budget and makes it live again (idempotent); a different identity
        raises ``RunConflict`` and changes nothing — the old record still names its pane, and rewriting
        it would orphan that pane and make the run set disagree with herdr.
        """
        with self._tx() as conn:
            row = conn.execute(
                "SELECT session, project, issue, attempt, machine FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is not None and (str(row[0]), str(row[1]), int(row[2]), int(row[3]), str(row[4])) != (
                session, project, issue, attempt, machine or ""
            ):
                was = f"herdr machine {row[4]!r}" if row[4] else f"herdr session {row[0]!r}"
                now = f"machine {machine!r}" if machine else repr(session)
                raise RunConflict(
                    f"run {run_id!r} is already {row[1]} #{row[2]} attempt {row[3]} in {was}; "
                    f"refusing to rewrite it as {project} #{issue} attempt {attempt} in {now} "
                    "(use a new run id)"
                )
            seq = self._next_seq(conn, "runs", "started_seq")
            conn.execute(
                """INSERT INTO runs(run_id, project, issue, attempt, pid, session_file, settled, attempts,
                                    started_seq, session, machine)
                   VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?)
                   ON CONFLICT(run_id) DO UPDATE SET project = excluded.project, issue = excluded.issue,
                     attempt = excluded.attempt, pid = excluded.pid, session_file = excluded.session_file,
                     settled = 0, attempts = 0""",
                (run_id, project, issue, attempt, pid, session_file, seq, session, machine or ""),
            )

    def settle(self, run_id: str) -> bool:
        with self._tx() as conn:
            cur = conn.execute("UPDATE runs SET settled = 1 WHERE run_id = ?", (run_id,))
            return cur.rowcount > 0

    def set_pane(self, run_id: str, pane_id: str, pane_label: str) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE runs SET pane_id = ?, pane_label = ? WHERE run_id = ?", (pane_id, pane_label, run_id))

    def clear_pane(self, run_id: str) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE runs SET pane_id = NULL, pane_label = NULL WHERE run_id = ?", (run_id,))

    def set_attempts(self, run_id: str, attempts: int) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE runs SET attempts = ? WHERE run_id = ?", (attempts, run_id))

    # ------------------------------------------------------------------------------ Store steps

    def handle(self, step: m.Store) -> m.JsonResult:
        """Answer one ``Store`` step (the protocol is documented in ``pure.herdr.records``)."""
        payload = step.payload if isinstance(step.payload, dict) else {}
        try:
            value = self._dispatch(step.action, payload)
        except (KeyError, TypeError, ValueError) as exc:
            return m.JsonResult(ok=False, error=f"bad payload for {step.action}: {exc}")
        except sqlite3.Error as exc:
            return m.JsonResult(ok=False, error=f"store {self.path}: {exc}")
        except StoreError as exc:
            return m.JsonResult(ok=False, error=str(exc))
        return m.JsonResult(ok=True, value=m.JsonValue(value))

    def _dispatch(self, action: str, p: dict[str, Any]) -> object:
        from pure import wire

        if action == "read.herdr.workspaces":
            projects = p["projects"]
            if not isinstance(projects, list) or not all(isinstance(x, str) for x in projects):
                raise TypeError("projects must be a list of strings")
            recorded: dict[str, Any] = dict(self.recorded(projects, _str(p, "session"), _machine(p)))
            pending = self.pending(projects, _str(p, "session"), _machine(p))
            if pending:  # never a project name (shell/cli/herdr.py ``_PROJECT``): pure/herdr/records.py
                recorded[PENDING_KEY] = pending
            return recorded
        if action == "list.herdr.runs":
            return [wire.unstructure(r) for r in self.runs(_str(p, "session"), _machine(p))]
        if action == "get.herdr.run":
            record = self.run(_str(p, "run_id"))
            return None if record is None else wire.unstructure(record)
        if action == "herdr.workspace.remember":
            self.remember(_str(p, "project"), _str(p, "workspace_id"), _str(p, "session"), _machine(p))
            return None
        if action == "herdr.workspace.forget":
            self.forget(_str(p, "project"), _str(p, "workspace_id"), _str(p, "session"), _machine(p))
            return None
        if action == "herdr.workspace.intend":
            before = p["listed_before"]
            if not isinstance(before, list) or not all(isinstance(x, str) for x in before):
                raise TypeError("listed_before must be a list of strings")
            self.intend(_str(p, "project"), before, _str(p, "session"), _machine(p))
            return None
        if action == "herdr.workspace.resolve":
            self.resolve(_str(p, "project"), _str(p, "session"), _machine(p))
            return None
        if action == "list.herdr.debts":
            return self.debts(_str(p, "session"), _machine(p))
        if action == "herdr.debt.replace":
            debts = p["debts"]
            if not isinstance(debts, list) or not all(
                    isinstance(d, dict) and all(isinstance(d.get(k), str) for k in DEBT_KEYS) for d in debts):
                raise TypeError(f"debts must be a list of objects with string {', '.join(DEBT_KEYS)}")
            self.replace_debts(debts, _str(p, "session"), _machine(p))
            return None
        if action == "herdr.run.set_pane":
            self.set_pane(_str(p, "run_id"), _str(p, "pane_id"), _str(p, "pane_label"))
            return None
        if action == "herdr.run.clear_pane":
            self.clear_pane(_str(p, "run_id"))
            return None
        if action == "herdr.run.set_attempts":
            attempts = p["attempts"]
            if type(attempts) is not int:
                raise TypeError("attempts must be an integer")
            self.set_attempts(_str(p, "run_id"), attempts)
            return None
        raise ValueError(f"unknown store action {action!r}")

    def dump(self) -> dict[str, Any]:
        from pure import wire

        return {
            "schema_version": SCHEMA_VERSION,
            "workspaces": [{"session": s, "project": p, "workspace_id": w, **({"machine": h} if h else {})}
                           for h, s, p, w in self.all_workspaces()],
            "runs": [wire.unstructure(r) for r in self.runs()],
            "pending_creates": [{"session": s, "project": p, "listed_before": b, **({"machine": h} if h else {})}
                                for h, s, p, b in self.all_pending()],
            "debts": self.debts(),
        }


def _str(payload: Mapping[str, Any], key: str) -> str:
    value = payload[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string")
    return value


def _machine(payload: Mapping[str, Any]) -> str | None:
    """A payload's saved machine (``pure/herdr/records.py``): absent means this machine."""
    value = payload.get("machine")
    if value is not None and (not isinstance(value, str) or value == ""):
        raise TypeError("machine must be a non-empty string when given")
    return value


def dumps(data: object) -> str:
    return json.dumps(data, sort_keys=True)
