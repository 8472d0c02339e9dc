"""The durable SQLite store: location, migrations, WAL, the Store-step protocol, corruption, concurrency."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from pure import model as m
from shell.store.herdr import SCHEMA_VERSION, HerdrStore, StoreError, state_dir, store_path


def test_location_precedence(tmp_path: Path) -> None:
    assert state_dir({"PANEFLEET_STATE_DIR": "/a", "XDG_STATE_HOME": "/b", "HOME": "/h"}) == Path("/a")
    assert state_dir({"XDG_STATE_HOME": "/b", "HOME": "/h"}) == Path("/b/panefleet")
    assert state_dir({"HOME": "/h"}) == Path("/h/.local/state/panefleet")
    assert store_path({"PANEFLEET_STATE_DIR": str(tmp_path)}) == tmp_path / "herdr.sqlite3"


def test_fresh_store_is_migrated_in_wal_mode(tmp_path: Path) -> None:
    store = HerdrStore(tmp_path / "s" / "herdr.sqlite3")
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    again = HerdrStore(tmp_path / "s" / "herdr.sqlite3")  # reopening is a no-op migration
    assert again.runs() == []
    again.close()


def test_store_protocol_round_trip(tmp_path: Path) -> None:
    store = HerdrStore(tmp_path / "herdr.sqlite3")
    store.start_run(run_id="r1", project="a", issue=3, attempt=1, pid=77, session_file="/s.jsonl")
    store.start_run(run_id="r2", project="b", issue=4, attempt=2, pid=None, session_file=None)

    def ask(action: str, **payload: object) -> m.JsonResult:
        return store.handle(m.Store(action=action, payload=m.JsonValue(payload)))

    assert ask("herdr.workspace.remember", session="fleet", project="a", workspace_id="w2").ok
    assert ask("herdr.workspace.remember", session="fleet", project="a", workspace_id="w1").ok
    assert ask("herdr.workspace.remember", session="fleet", project="a", workspace_id="w2").ok  # idempotent
    assert ask("read.herdr.workspaces", session="fleet", projects=["a", "b"]).value == {"a": ["w2", "w1"], "b": []}
    assert ask("herdr.workspace.forget", session="fleet", project="a", workspace_id="w2").ok
    assert ask("herdr.run.set_pane", run_id="r1", pane_id="w1:p2", pane_label="L").ok
    assert ask("herdr.run.set_attempts", run_id="r1", attempts=2).ok
    runs = ask("list.herdr.runs", session="fleet").value
    assert runs == [
        {"run_id": "r1", "project": "a", "issue": 3, "attempt": 1, "pid": 77, "pane_id": "w1:p2",
         "pane_label": "L", "session_file": "/s.jsonl", "settled": False, "attempts": 2, "session": "fleet"},
        {"run_id": "r2", "project": "b", "issue": 4, "attempt": 2, "pid": None, "pane_id": None,
         "pane_label": None, "session_file": None, "settled": False, "attempts": 0, "session": "fleet"},
    ]
    assert ask("list.herdr.runs", session="other").value == []
    assert ask("herdr.run.clear_pane", run_id="r1").ok
    assert ask("get.herdr.run", run_id="r1").value["pane_id"] is None  # type: ignore[index]
    assert ask("get.herdr.run", run_id="zz").value is None
    assert store.settle("r1") and not store.settle("zz")
    store.start_run(run_id="r1", project="a", issue=3, attempt=1, pid=77, session_file=None)
    record = store.run("r1")
    assert record is not None and not record.settled and record.attempts == 0


@pytest.mark.parametrize(("action", "payload"), [
    ("herdr.run.set_attempts", {"run_id": "r1", "attempts": "3"}),
    ("herdr.run.set_pane", {"run_id": "r1"}),
    ("read.herdr.workspaces", {"session": "fleet", "projects": "a"}),
    ("read.herdr.workspaces", {"projects": ["a"]}),
    ("list.herdr.runs", {}),
    ("no.such.action", {}),
])
def test_bad_store_requests_are_typed_failures(tmp_path: Path, action: str, payload: dict) -> None:
    store = HerdrStore(tmp_path / "herdr.sqlite3")
    answer = store.handle(m.Store(action=action, payload=m.JsonValue(payload)))
    assert not answer.ok and answer.error


def test_corrupt_file_is_a_typed_error_and_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "herdr.sqlite3"
    garbage = b"this is not a database at all" * 100
    path.write_bytes(garbage)
    with pytest.raises(StoreError, match="not a usable panefleet store"):
        HerdrStore(path)
    assert path.read_bytes() == garbage


def test_foreign_sqlite_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "herdr.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="no panefleet schema version"):
        HerdrStore(path)
    conn = sqlite3.connect(path)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["notes"]
    conn.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "herdr.sqlite3"
    HerdrStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer than this panefleet"):
        HerdrStore(path)


def _writer(path: str, worker: int, count: int) -> None:
    store = HerdrStore(Path(path))
    for i in range(count):
        store.start_run(run_id=f"w{worker}-{i}", project=f"p{worker % 3}", issue=i, attempt=1, pid=i,
                        session_file=None)
        store.remember(f"p{worker % 3}", f"w{i % 5}")
        store.set_attempts(f"w{worker}-{i}", i % 4)
    store.close()


def test_concurrent_processes_do_not_corrupt_the_store(tmp_path: Path) -> None:
    path = tmp_path / "herdr.sqlite3"
    HerdrStore(path).close()
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 40)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    store = HerdrStore(path)
    runs = store.runs()
    assert len(runs) == 160 and len({r.run_id for r in runs}) == 160
    assert all(r.attempts == int(r.run_id.split("-")[1]) % 4 for r in runs)
    assert sorted(store.recorded(["p0"])["p0"]) == ["w0", "w1", "w2", "w3", "w4"]
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_records_are_scoped_per_herdr_session(tmp_path: Path) -> None:
    store = HerdrStore(tmp_path / "herdr.sqlite3")
    store.start_run(run_id="r1", project="a", issue=1, attempt=1, pid=1, session_file=None)
    store.start_run(run_id="r2", project="a", issue=2, attempt=1, pid=2, session_file=None, session="other")
    store.remember("a", "w1")
    store.remember("a", "w1", session="other")
    store.forget("a", "w1", session="other")
    assert [r.run_id for r in store.runs("fleet")] == ["r1"]
    assert [r.run_id for r in store.runs("other")] == ["r2"] and store.run("r2").session == "other"
    assert store.recorded(["a"], "fleet") == {"a": ["w1"]} and store.recorded(["a"], "other") == {"a": []}
    store.close()


def test_version_1_store_migrates_existing_rows_to_the_fleet_session(tmp_path: Path) -> None:
    from shell.store.herdr import MIGRATIONS

    path = tmp_path / "herdr.sqlite3"
    conn = sqlite3.connect(str(path))
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("INSERT INTO workspaces(project, workspace_id, recorded_seq) VALUES ('a', 'w3', 1)")
    conn.execute("INSERT INTO runs(run_id, project, issue, attempt, pid, started_seq) VALUES ('r1', 'a', 5, 1, 9, 1)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    store = HerdrStore(path)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    assert store.run("r1").session == "fleet" and store.recorded(["a"], "fleet") == {"a": ["w3"]}
    assert store.recorded(["a"], "other") == {"a": []}
    store.remember("a", "w3", session="other")  # the same herdr id in another session is another record
    assert store.all_workspaces() == [("", "fleet", "a", "w3"), ("", "other", "a", "w3")]
    store.close()


def test_version_2_store_migrates_in_place_to_this_machine(tmp_path: Path) -> None:
    from shell.store.herdr import MIGRATIONS

    path = tmp_path / "herdr.sqlite3"
    conn = sqlite3.connect(str(path))
    for statement in (*MIGRATIONS[0], *MIGRATIONS[1]):
        conn.execute(statement)
    conn.execute("INSERT INTO workspaces(session, project, workspace_id, recorded_seq) VALUES ('rev', 'a', 'w3', 1)")
    conn.execute("INSERT INTO runs(run_id, project, issue, attempt, pid, started_seq, session, pane_id) "
                 "VALUES ('r1', 'a', 5, 1, 9, 1, 'rev', 'w3:p2')")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    store = HerdrStore(path)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    record = store.run("r1")
    assert (record.session, record.machine, record.pane_id) == ("rev", None, "w3:p2")
    assert store.recorded(["a"], "rev") == {"a": ["w3"]} and store.recorded(["a"], "", "m1") == {"a": []}
    store.close()


def test_version_3_store_migrates_in_place_with_no_pending_create(tmp_path: Path) -> None:
    from shell.store.herdr import MIGRATIONS

    path = tmp_path / "herdr.sqlite3"
    conn = sqlite3.connect(str(path))
    for statement in (*MIGRATIONS[0], *MIGRATIONS[1], *MIGRATIONS[2]):
        conn.execute(statement)
    conn.execute("INSERT INTO workspaces(machine, session, project, workspace_id, recorded_seq) "
                 "VALUES ('m1', '', 'a', 'w3', 1)")
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    store = HerdrStore(path)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    assert store.recorded(["a"], "", "m1") == {"a": ["w3"]} and store.all_pending() == [] and store.debts() == []
    store.close()


def test_a_pending_create_is_kept_per_target_and_carried_by_the_workspace_read(tmp_path: Path) -> None:
    store = HerdrStore(tmp_path / "herdr.sqlite3")

    def ask(action: str, **payload: object) -> m.JsonResult:
        return store.handle(m.Store(action=action, payload=m.JsonValue(payload)))

    assert ask("herdr.workspace.intend", session="", machine="m1", project="a", listed_before=["w2", "w1"]).ok
    assert ask("read.herdr.workspaces", session="", machine="m1", projects=["a", "b"]).value == {
        "a": [], "b": [], "@pending": {"a": ["w1", "w2"]}}
    assert ask("read.herdr.workspaces", session="fleet", projects=["a"]).value == {"a": []}  # another target
    assert ask("read.herdr.workspaces", session="", machine="m1", projects=["b"]).value == {"b": []}
    assert not ask("herdr.workspace.intend", session="", machine="m1", project="a", listed_before="w1").ok
    assert store.dump()["pending_creates"] == [{"session": "", "machine": "m1", "project": "a",
                                                "listed_before": ["w1", "w2"]}]
    assert ask("herdr.workspace.resolve", session="", machine="m1", project="a").ok
    assert ask("herdr.workspace.resolve", session="", machine="m1", project="a").ok  # idempotent
    assert store.all_pending() == []
    store.close()


def test_records_are_scoped_per_machine(tmp_path: Path) -> None:
    from pure import wire
    from shell.store.herdr import RunConflict

    store = HerdrStore(tmp_path / "herdr.sqlite3")
    store.start_run(run_id="r1", project="a", issue=1, attempt=1, pid=1, session_file=None)
    store.start_run(run_id="r2", project="a", issue=2, attempt=1, pid=2, session_file=None, session="", machine="m1")
    with pytest.raises(RunConflict, match="in herdr machine 'm1'"):  # same id elsewhere: refused, unchanged
        store.start_run(run_id="r2", project="a", issue=2, attempt=1, pid=2, session_file=None)

    def ask(action: str, **payload: object) -> m.JsonResult:
        return store.handle(m.Store(action=action, payload=m.JsonValue(payload)))

    assert ask("herdr.workspace.remember", session="", machine="m1", project="a", workspace_id="w1").ok
    assert ask("read.herdr.workspaces", session="", machine="m1", projects=["a"]).value == {"a": ["w1"]}
    assert ask("read.herdr.workspaces", session="fleet", projects=["a"]).value == {"a": []}
    assert [r["run_id"] for r in ask("list.herdr.runs", session="", machine="m1").value] == ["r2"]  # type: ignore[union-attr]
    assert [r["run_id"] for r in ask("list.herdr.runs", session="fleet").value] == ["r1"]  # type: ignore[union-attr]
    assert "machine" not in wire.unstructure(store.run("r1")) and wire.unstructure(store.run("r2"))["machine"] == "m1"
    assert not ask("list.herdr.runs", session="", machine="").ok  # a machine is named, never empty
    assert ask("herdr.workspace.forget", session="", machine="m1", project="a", workspace_id="w1").ok
    assert store.all_workspaces() == []
    store.close()


def test_a_store_from_a_newer_panefleet_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "herdr.sqlite3"
    HerdrStore(path).close()
    conn = sqlite3.connect(str(path))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer than this panefleet"):
        HerdrStore(path)
