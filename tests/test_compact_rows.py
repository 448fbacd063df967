"""Record rows keep a record's role and kind as one number, read back by name.

The index's ``record_rows`` and the archive's ``entries`` store ``rk`` (and
the text of a role or kind agentdex does not know); ``role`` and ``kind``
are generated columns. What a search, a ``show`` and the archive return must
be what the parser produced, for every known pair and for unknown ones, in
the index, in the archive, after the source is gone and after a rebuild; an
archive written before keeps every entry's role and kind through its
migration.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import history
from agentdex.api import search as api
from agentdex.archive import schema as archive_schema
from agentdex.archive import store as archive_store
from agentdex.archive.store import ENTRY_COLUMNS, ENTRY_FROM, ArchiveStore, archive_path
from agentdex.index.store import Location, index_root
from agentdex.records import KINDS, ROLES
from test_index_fixtures import ROWS, register, store_dir, write_file

PAIRS = [(role, kind) for role in ROLES for kind in KINDS] + [
    ("critic", "prompt"),
    ("user", "diff"),
    ("critic", "diff"),
]


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def _records() -> list[dict[str, Any]]:
    return [
        {"session": "s1", "role": role, "kind": kind, "text": f"mango {i} {role} {kind}", "ts": i}
        for i, (role, kind) in enumerate(PAIRS)
    ]


def _shown(home: Path) -> list[tuple[str, str, str]]:
    return [(r["text"], r["role"], r["kind"]) for r in history.show("s1", str(home))["records"]]


def _expected() -> list[tuple[str, str, str]]:
    return [(r["text"], r["role"], r["kind"]) for r in _records()]


def test_every_role_and_kind_reads_back_from_the_index_and_the_archive(home: Path) -> None:
    path = store_dir(home) / "s1.jsonl"
    write_file(path, _records())
    api.refresh(home=str(home), rows=ROWS)
    assert _shown(home) == _expected()
    found = api.search("mango", refresh_first=False, limit=None, dedup=False, sort="time")
    assert sorted((r["text"], r["role"], r["kind"]) for r in found.results) == sorted(_expected())
    gen = Location(index_root()).current()
    assert gen is not None
    with sqlite3.connect(gen / "index.db") as db:
        stored = db.execute(
            "SELECT count(*), count(role_x), count(kind_x) FROM record_rows"
        ).fetchone()
    assert stored == (len(PAIRS), 2, 2)  # only the unknown ones are kept as text
    # the source is gone, the index rebuilt: every row comes back from the archive
    path.unlink()
    api.refresh(home=str(home), rows=ROWS)
    api.refresh(home=str(home), rows=ROWS, full=True)
    assert _shown(home) == _expected()
    store = ArchiveStore(index_root(), write=False)
    try:
        archived = sorted((r.text, r.role, r.kind) for r in map(store.record, store.entries("1")))
    finally:
        store.close()
    assert archived == sorted(_expected())


def test_an_archive_written_before_keeps_every_role_and_kind(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive_store, "VACUUM_BYTES", 1)  # the copy's freed pages go back
    folder = archive_path(index_root())
    folder.mkdir(parents=True)
    db = sqlite3.connect(folder / "archive.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("BEGIN")
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for name, fn in archive_schema.MIGRATIONS[:3]:  # the archive as agentdex left it before
        fn(db)
        db.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
    db.execute("INSERT INTO meta VALUES ('format', 'agentdex-archive-1')")
    db.execute("INSERT INTO contexts (agent, store, session_id) VALUES ('claude-code', 'x', 's1')")
    db.execute("INSERT INTO sources (path) VALUES ('/gone/s1.jsonl')")
    db.executemany(
        "INSERT INTO entries (key, context_id, source_id, role, kind, timestamp, locator,"
        " offset, text_chunk, text_start, text_size, archived_at)"
        " VALUES (?, 1, 1, ?, ?, ?, ?, ?, 1, 0, 0, 5)",
        [
            (1000 + i, role, kind, i + 0.5, f"line:{i}", i * 10)
            for i, (role, kind) in enumerate(PAIRS)
        ],
    )
    db.execute("COMMIT")
    db.close()
    before, after, columns, free = entries_migrated(folder)
    assert after == before and len(after) == len(PAIRS)
    assert [row[6:8] for row in after] == PAIRS
    assert "rk" in columns and "role" not in columns  # generated: not a stored column
    assert free == 0


def entries_migrated(folder: Path) -> tuple[list[Any], list[Any], list[str], int]:
    """An older archive's entry rows (``ENTRY_COLUMNS``) before and after a writer opened
    it (running its pending migrations), the entries' stored columns and free pages left."""
    sql = f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} ORDER BY e.id"
    db = sqlite3.connect(folder / "archive.db")
    # the archive time was a column then (archive_times since m005_packed_entries)
    before = db.execute(sql.replace(archive_schema.ARCHIVED_AT_SQL, "e.archived_at")).fetchall()
    db.close()
    store = ArchiveStore(index_root(), write=True)  # runs the pending migrations
    try:
        after = store.db.execute(sql).fetchall()
        columns = [r[1] for r in store.db.execute("PRAGMA table_info(entries)")]
        free = store.db.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        store.close()
    return before, after, columns, free


def test_block_starts_take_two_bytes_and_older_four_byte_ones_still_read() -> None:
    from array import array

    from agentdex.index.segments import pack_starts, unpack_starts

    small = [0, 17, 16_000, 16_383]
    assert len(pack_starts(small)) == 2 * len(small)
    assert list(unpack_starts(pack_starts(small), len(small))) == small
    wide = [0, 40_000, 70_000]  # a start past 64 KiB is kept whole
    assert list(unpack_starts(pack_starts(wide), len(wide))) == wide
    older = array("I", small).tobytes()  # a block row written before (shared by an archive)
    assert list(unpack_starts(older, len(small))) == small
