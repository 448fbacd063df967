"""A first build into an empty archive: the entries' indexes dropped, kept keys, one sort.

The archive's writer drops ``entries_key`` and ``entries_context`` when it starts on an
empty archive and answers "is this key archived" from the keys it added
(:class:`agentdex.archive.keyset.KeySet`) until it builds them again. These tests hold
it to the same entries as with the indexes, and to indexes that are there again after a
complete build, after a kill, after the in-memory keys' limit, and before a backfill's
entries (whose text may move later, found by key).
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.archive import writer as archive_writer
from agentdex.archive.keyset import KeySet
from agentdex.archive.schema import MIGRATIONS
from agentdex.archive.store import ArchiveStore, archive_path
from agentdex.archive.writer import ArchiveWriter
from agentdex.index.segments import prepare
from agentdex.index.store import index_root
from agentdex.records import Record
from test_index_fixtures import ROWS, register, store_dir, write_file


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def _rec(n: int, session: str = "s1") -> dict[str, Any]:
    return {"session": session, "role": "user", "kind": "prompt", "text": f"plum {n}", "ts": n}


def _indexes(db: sqlite3.Connection) -> dict[str, str]:
    return {
        str(name): str(sql)
        for name, sql in db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries'"
        )
    }


def _entries(root: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(archive_path(root) / "archive.db")
    try:
        return db.execute(
            "SELECT id, key, context_id, source_id, text_size FROM entries ORDER BY id"
        ).fetchall()
    finally:
        db.close()


def _build(home: Path) -> list[tuple[Any, ...]]:
    """Files sharing records with each other and within themselves, over many batches."""
    d = store_dir(home)
    write_file(d / "a.jsonl", [_rec(n) for n in range(1200)] + [_rec(n) for n in range(0, 900, 7)])
    write_file(d / "b.jsonl", [_rec(n) for n in range(600, 1800)])
    write_file(d / "c.jsonl", [_rec(n, "s2") for n in range(300)])
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.records_archived == 1800 + 300
    return _entries(index_root())


def test_a_first_build_archives_each_record_once_and_ends_with_the_indexes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bulk = _build(home)
    db = sqlite3.connect(archive_path(index_root()) / "archive.db")
    indexes = _indexes(db)
    assert "UNIQUE" in indexes["entries_key"] and "entries_context" in indexes
    assert not any(name.startswith("sqlite_autoindex") for name in indexes)
    (distinct,) = db.execute("SELECT count(DISTINCT key) FROM entries").fetchone()
    assert distinct == len(bulk) == 2100
    db.close()
    # the same build with the indexes kept (every key looked up in SQLite): the same rows
    shutil.rmtree(archive_path(index_root()).parent, ignore_errors=True)
    monkeypatch.setattr(archive_writer.ArchiveWriter, "_build_indexes", _never_dropped)
    monkeypatch.setattr(archive_writer, "BULK_KEYS", 0)
    assert _build(home) == bulk


def _never_dropped(self: ArchiveWriter) -> None:
    self._keys = None
    for _, statement in archive_writer.ENTRY_INDEXES:
        self.db.execute(statement)


def _record(n: int) -> Any:
    return prepare(Record("a", "s", "p", f"line:{n}", "x", "user", "prompt", f"fig {n}", 1.0 * n))


def test_a_killed_first_build_leaves_entries_the_next_writer_indexes(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path, write=True)
    writer = ArchiveWriter(store)
    writer.begin_source("p", jsonl=False)
    for n in range(1200):
        writer.offer(_record(n))
    writer.commit()  # a batch committed without the indexes, then the process dies
    assert "entries_key" not in _indexes(store.db)
    store.db.close()
    again = ArchiveStore(tmp_path, write=True)
    indexes = _indexes(again.db)
    assert "UNIQUE" in indexes["entries_key"] and "entries_context" in indexes
    later = ArchiveWriter(again)  # holds entries: looks keys up in SQLite, drops nothing
    later.begin_source("p", jsonl=False)
    for n in range(1100, 1300):
        later.offer(_record(n))
    later.close(True)
    assert "entries_key" in _indexes(again.db)
    (count,) = again.db.execute("SELECT count(*) FROM entries").fetchone()
    assert count == 1300 and later.added == 100
    again.close()


def test_past_the_keys_limit_the_indexes_are_built_and_keys_looked_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(archive_writer, "BULK_KEYS", 1000)
    store = ArchiveStore(tmp_path, write=True)
    writer = ArchiveWriter(store)
    writer.begin_source("p", jsonl=False)
    for n in range(1200):
        writer.offer(_record(n))
    writer.commit()
    assert "entries_key" in _indexes(store.db)  # built at 1000 keys, in the open batch
    for n in range(800):
        writer.offer(_record(n))  # all archived: found in SQLite now
    writer.close(True)
    assert writer.added == 1200
    store.close()


def test_an_entry_whose_text_goes_to_a_chunk_builds_the_indexes_first(tmp_path: Path) -> None:
    """A backfill's entries keep their text in chunks; a later copy of one moves it to the
    generation's blocks, found by key: the writer keeps no such place in memory."""
    store = ArchiveStore(tmp_path, write=True)
    writer = ArchiveWriter(store)
    writer.text_file = "text-gen-000001.blocks"  # as if linked to a generation
    writer.begin_source("p", jsonl=False)
    writer.offer(_record(1), (0, 0))
    assert "entries_key" not in _indexes(store.db)
    writer.offer(_record(2))  # no place in the blocks
    assert "entries_key" in _indexes(store.db)
    writer.close(False)
    store.close()


def test_an_archive_made_before_keeps_its_entries_under_a_named_key_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.archive import schema

    before = [m for m in MIGRATIONS if m[0] != "m006_entries_key_index"]
    monkeypatch.setattr(schema, "MIGRATIONS", before)
    store = ArchiveStore(tmp_path, write=True)
    writer = ArchiveWriter(store)
    writer.begin_source("p", jsonl=False)
    for n in range(700):
        writer.offer(_record(n))
    writer.close(True)
    rows = store.db.execute("SELECT * FROM entries ORDER BY id").fetchall()
    assert any(name.startswith("sqlite_autoindex") for name in _indexes(store.db))
    store.close()
    monkeypatch.undo()
    again = ArchiveStore(tmp_path, write=True)
    indexes = _indexes(again.db)
    assert set(indexes) == {"entries_key", "entries_context"}
    assert again.db.execute("SELECT * FROM entries ORDER BY id").fetchall() == rows
    with pytest.raises(sqlite3.IntegrityError):
        again.db.execute(
            "INSERT INTO entries (id, key, context_id, source_id, rk, loc, offset, text_chunk,"
            " text_start, text_size) SELECT id + 1000, key, 1, 1, 0, 1, 0, 1, 0, 0 FROM entries"
            " LIMIT 1"
        )
    again.close()


def test_the_key_set_answers_exactly() -> None:
    chance = random.Random(7)
    keys = list({chance.getrandbits(64) - (1 << 63) for _ in range(20000)})
    held, other = keys[:15000], keys[15000:]
    found = KeySet()
    found.add_all(held)
    assert len(found) == 15000
    assert all(k in found for k in held)
    assert not any(k in found for k in other)
    # two keys of one array whose bytes, side by side, hold a third key's across the
    # boundary (found by the search at an offset that is not a key's)
    first = int.from_bytes(bytes([1, 1, 1, 1, 1, 1, 1, 2]), "little", signed=True)
    second = int.from_bytes(bytes([1, 1, 1, 1, 1, 1, 1, 3]), "little", signed=True)
    across = int.from_bytes(bytes([1, 1, 1, 2, 1, 1, 1, 1]), "little", signed=True)
    assert first & 0xFFF == second & 0xFFF == across & 0xFFF
    close = KeySet()
    close.add_all([first, second])
    assert first in close and second in close and across not in close


def test_a_fresh_first_build_builds_the_indexes_while_the_merge_child_runs(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing reads the entries by key at the end of a first build into an empty archive:
    their indexes are built by the index writer's ``while_merging`` hooks, after its last
    commit, not before the end's commits as a re-import needs."""
    from agentdex.index.writer import IndexWriter

    seen: list[tuple[str, bool]] = []
    real_finish, real_end = IndexWriter.finish, ArchiveWriter.end_bulk_load
    finishing = [False]

    def finish(self: IndexWriter, **kw: Any) -> None:
        finishing[0] = True
        try:
            real_finish(self, **kw)
        finally:
            finishing[0] = False

    def end(self: ArchiveWriter) -> None:
        seen.append(("end", finishing[0] and self._keys is not None))
        real_end(self)

    monkeypatch.setattr(IndexWriter, "finish", finish)
    monkeypatch.setattr(ArchiveWriter, "end_bulk_load", end)
    _build(home)
    assert ("end", True) in seen  # built inside the index's finish
    db = sqlite3.connect(archive_path(index_root()) / "archive.db")
    assert "entries_key" in _indexes(db)
    db.close()
