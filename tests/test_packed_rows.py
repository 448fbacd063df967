"""Record rows keep a record's locator and time in fewer bytes, read back exactly by name.

The index's ``record_rows`` and the archive's ``entries`` store ``loc`` (an
integer for ``line:N`` / ``line:N#M``) and ``ts`` (whole milliseconds as an
integer when they read back as the same float); ``locator`` and
``timestamp`` are generated columns (:mod:`agentdex.index.rowpack`). The
archive keeps each writer's archive time once (``archive_times``). What the
stores return must be what the parser produced, for every shape of locator
and time, in the index, the archive and after an older archive's migration.
"""

from __future__ import annotations

import math
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import history
from agentdex.api import search as api
from agentdex.archive import removal
from agentdex.archive import schema as archive_schema
from agentdex.archive import store as archive_store
from agentdex.archive.store import ArchiveStore, archive_path
from agentdex.index import rowpack
from agentdex.index.store import Location, index_root
from test_compact_rows import entries_migrated
from test_index_fixtures import ROWS, register, store_dir, write_file

LOCATORS = [
    "line:0",
    "line:7",
    "line:123456789",
    "line:3#0",
    "line:3#15",
    "line:3#16",  # a part past 15: kept as text
    "line:9999999999#2",
    "line:03",  # not the canonical number: kept as text
    "line:5#01",
    "line:",
    "line:-4",
    "line:12x",
    "json:/items/4",
    "rollout.jsonl:line:5",
    "row:msgs/abc",
    "123",
    "",
    "ligne:4",
]


def _times() -> list[Any]:
    rng = random.Random(21)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    times: list[Any] = [None, 0, 5, 0.5, -1.25, 1e300, 1767323045, 1767323045.5]
    for _ in range(2000):  # what parsers make of ISO times: whole ms, and some whole us
        step = timedelta(milliseconds=rng.randrange(10**12))
        times.append((base + step).timestamp())
        times.append((base + step + timedelta(microseconds=rng.randrange(1000))).timestamp())
    return times


def _table(db: sqlite3.Connection) -> None:
    db.execute(f"CREATE TABLE t (id INTEGER PRIMARY KEY, {rowpack.columns()})")


def test_every_locator_and_time_reads_back_exactly_from_sql_and_python() -> None:
    db = sqlite3.connect(":memory:")
    _table(db)
    times = _times()
    rows = [(i, LOCATORS[i % len(LOCATORS)], t) for i, t in enumerate(times)]
    db.executemany(
        "INSERT INTO t (id, loc, ts) VALUES (?, ?, ?)",
        [(i, rowpack.pack_locator(loc), rowpack.pack_time(t)) for i, loc, t in rows],
    )
    back = db.execute("SELECT id, locator, timestamp, loc, ts FROM t ORDER BY id").fetchall()
    for (i, loc, t), (j, loc_sql, t_sql, loc_stored, ts_stored) in zip(rows, back, strict=True):
        assert i == j
        assert loc_sql == loc == rowpack.unpack_locator(loc_stored)
        expected = None if t is None else float(t)
        assert t_sql == expected and rowpack.unpack_time(ts_stored) == t
        assert type(t_sql) is (type(None) if t is None else float)
    # the shapes agentdex writes most are integers; the whole-ms times are too
    assert isinstance(rowpack.pack_locator("line:42"), int)
    assert isinstance(rowpack.pack_locator("line:42#3"), int)
    assert isinstance(rowpack.pack_locator("line:42#16"), str)
    assert isinstance(rowpack.pack_time(1767323045.123), int)
    assert isinstance(rowpack.pack_time(1767323045.1234), float)
    packed = [rowpack.pack_time(t) for t in times[8::2]]  # the whole-ms ones
    assert all(isinstance(v, int) for v in packed)
    assert rowpack.pack_time(math.inf) == math.inf


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def _records() -> list[dict[str, Any]]:
    times = [1767323045.123, 1767323046, 1767323047.123456, None]
    return [
        {"session": "s1", "role": "user", "kind": "prompt", "text": f"mango {i}", "ts": t}
        for i, t in enumerate(times)
    ]


def test_the_index_and_the_archive_store_packed_rows_and_return_them_as_parsed(
    home: Path,
) -> None:
    path = store_dir(home) / "s1.jsonl"
    write_file(path, _records())
    api.refresh(home=str(home), rows=ROWS)
    shown = history.show("s1", str(home))["records"]
    assert [r["text"] for r in shown] == [r["text"] for r in _records()]
    gen = Location(index_root()).current()
    assert gen is not None
    with sqlite3.connect(gen / "index.db") as db:
        stored = db.execute(
            "SELECT typeof(loc), typeof(ts), locator, timestamp FROM record_rows ORDER BY id"
        ).fetchall()
    assert [row[:2] for row in stored] == [
        ("integer", "integer"),
        ("integer", "integer"),
        ("integer", "real"),
        ("integer", "null"),
    ]
    assert [row[2:] for row in stored] == [
        (f"line:{i + 1}", r["ts"] if r["ts"] is None else float(r["ts"]))
        for i, r in enumerate(_records())
    ]
    store = ArchiveStore(index_root(), write=False)
    try:
        archived = sorted(
            (r.text, r.locator, r.timestamp) for r in map(store.record, store.entries("1"))
        )
        kept = store.db.execute(
            "SELECT typeof(loc), typeof(ts) FROM entries ORDER BY id"
        ).fetchall()
        when = store.db.execute(
            f"SELECT {archive_schema.ARCHIVED_AT_SQL} FROM entries e"
        ).fetchall()
    finally:
        store.close()
    assert archived == sorted(
        (r["text"], f"line:{i + 1}", None if r["ts"] is None else float(r["ts"]))
        for i, r in enumerate(_records())
    )
    assert [k[0] for k in kept] == ["integer"] * 4
    assert len({w[0] for w in when}) == 1 and when[0][0] is not None


def _old_archive(folder: Path, runs: list[int]) -> None:
    """An archive as agentdex left it before m005 (archive times a column per entry)."""
    folder.mkdir(parents=True)
    db = sqlite3.connect(folder / "archive.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN")
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    names = [name for name, _ in archive_schema.MIGRATIONS]
    for name, fn in archive_schema.MIGRATIONS[: names.index("m005_packed_entries")]:
        fn(db)
        db.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
    db.execute("INSERT INTO meta VALUES ('format', 'agentdex-archive-1')")
    db.execute("INSERT INTO contexts (agent, store, session_id) VALUES ('claude-code', 'x', 's1')")
    db.execute("INSERT INTO sources (path) VALUES ('/gone/s1.jsonl')")
    times = _times()
    db.executemany(
        "INSERT INTO entries (id, key, context_id, source_id, rk, timestamp, locator,"
        " offset, text_chunk, text_start, text_size, archived_at)"
        " VALUES (?, ?, 1, 1, 0, ?, ?, ?, 1, 0, 0, ?)",
        [
            (3 * i + 1, 1000 + i, times[i], LOCATORS[i % len(LOCATORS)], i * 10, at)
            for i, at in enumerate(runs)
        ],
    )
    db.execute("COMMIT")
    db.close()


def test_an_archive_written_before_keeps_every_locator_time_and_archive_time(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive_store, "VACUUM_BYTES", 1)  # the copy's freed pages go back
    folder = archive_path(index_root())
    runs = [5, 5, 5, 9, 9, 7, 7, 7, 7, 5, 11] * 3 + [2] * len(LOCATORS)
    _old_archive(folder, runs)
    before, after, columns, free = entries_migrated(folder)
    store = ArchiveStore(index_root(), write=False)
    try:
        spans = store.db.execute("SELECT count(*) FROM archive_times").fetchone()[0]
        indexes = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master")}
        inactive = removal.inactive_sessions(store, 1e301)
    finally:
        store.close()
    assert after == before and len(after) == len(runs)
    assert [row[-1] for row in after] == runs
    assert spans == 16  # one row per run of equal archive times, in id order
    assert "ts" in columns and "loc" in columns and "archived_at" not in columns
    assert "locator" not in columns  # generated: not a stored column
    assert "usage_calls_context" not in indexes
    assert free == 0
    assert inactive == [("claude-code", "s1", 1e300, len(runs))]


def test_a_writer_after_entries_were_forgotten_keeps_each_entry_archive_time(
    home: Path,
) -> None:
    folder = archive_path(index_root())
    _old_archive(folder, [5, 5, 9])
    store = ArchiveStore(index_root(), write=True)
    try:  # the newest entries go (forgotten): their writer's row describes none now
        store.db.execute("BEGIN IMMEDIATE")
        store.db.execute("DELETE FROM entries WHERE id > 4")
        store.db.execute("COMMIT")
    finally:
        store.close()
    path = store_dir(home) / "s1.jsonl"
    write_file(path, _records())
    api.refresh(home=str(home), rows=ROWS)
    store = ArchiveStore(index_root(), write=False)
    try:
        rows = store.db.execute(
            f"SELECT e.id, e.key, {archive_schema.ARCHIVED_AT_SQL} FROM entries e ORDER BY e.id"
        ).fetchall()
    finally:
        store.close()
    old = [r for r in rows if r[1] in (1000, 1001)]
    new = [r for r in rows if r[1] not in (1000, 1001)]
    assert [r[2] for r in old] == [5, 5]
    assert len(new) == len(_records())
    assert all(r[2] > 1_000_000_000 for r in new)  # this writer's time, not run 9's
    assert min(r[0] for r in new) == 5  # the forgotten entry's id is used again
