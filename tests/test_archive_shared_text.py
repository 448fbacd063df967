"""One copy of a record's text: the archive points at the index's text blocks.

Real files in a temporary home (the test store format of
tests/test_index_fixtures.py), real refreshes and rebuilds: the archive keeps
no text of its own for records the index holds, reads them through its own
hard link to the generation's ``text.blocks``, and still has every text after
the generation that wrote it is gone.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.archive import shared
from agentdex.archive.store import TEXT, ArchiveStore, archive_path
from agentdex.index import codec
from agentdex.index.segments import (
    BLOCK_FILE,
    BLOCK_ROW,
    BlockFile,
    BlockWriter,
    blocks_in,
    prepare,
)
from agentdex.index.store import Location, index_root, open_writer_db
from agentdex.records import Record
from test_archive import _parser, rec, refresh  # noqa: F401  (_parser: autouse fixture)
from test_index_fixtures import store_dir, write_file


def archive_rows(sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(archive_path(index_root()) / "archive.db")
    try:
        return db.execute(sql, params).fetchall()
    finally:
        db.close()


def archived() -> dict[str, int]:
    """Every archived text -> its chunk (negative: a shared index block), read back."""
    store = ArchiveStore(index_root(), write=False)
    try:
        return {store.text(e[16], e[17], e[18]): int(e[16]) for e in store.entries()}
    finally:
        store.close()


def links() -> list[Path]:
    return sorted(archive_path(index_root()).glob(shared.LINK_GLOB))


def chunk_texts() -> bytes:
    """Every text chunk of the archive, decompressed."""
    folder = archive_path(index_root())
    rows = archive_rows("SELECT offset, size FROM chunks WHERE kind = ?", (TEXT,))
    name = archive_rows("SELECT value FROM meta WHERE key = 'blob_file'")
    data = (folder / (name[0][0] if name else "chunks-000001.blobs")).read_bytes()
    return b"".join(codec.decompress(data[o : o + s]) for o, s in rows)


def block_texts(data: bytes, rows: list[tuple[Any, ...]]) -> list[str]:
    """The whole original text of each block listed in ``rows`` (``BLOCK_ROW``) of a text
    file's bytes, read as the index and the archive read it."""
    texts = []
    for block in blocks_in(data, rows):
        assert block.lower == block.original.lower().encode("utf-8", "surrogatepass")
        texts.append(block.original)
    return texts


def test_the_archive_keeps_no_second_copy_of_indexed_text(home: Path) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec(f"walnut {i} " + "pad " * 40, ts=i) for i in range(50)])
    refresh(home)
    texts = archived()
    assert len(texts) == 50 and all(chunk < 0 for chunk in texts.values())
    assert b"walnut" not in chunk_texts()  # no text chunk holds them: the index's blocks do
    current = Location(index_root()).current()
    assert current is not None
    [link] = links()
    assert link.stat().st_ino == (current / BLOCK_FILE).stat().st_ino  # the same bytes
    assert archive_rows("SELECT value FROM meta WHERE key = 'text_shared'") == [("1",)]


def test_a_rebuild_moves_entries_to_the_new_blocks_and_keeps_what_only_the_archive_has(
    home: Path,
) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("pecan gone", ts=1)])
    write_file(d / "s2.jsonl", [rec("pecan here", session="s2", ts=2)])
    write_file(d / "s3.jsonl", [rec("pecan fin", session="s3", ts=3)])  # being written
    refresh(home)
    old = Location(index_root()).current()
    (d / "s1.jsonl").unlink()  # only the archive has it now
    write_file(d / "s3.jsonl", [rec("pecan final", session="s3", ts=4)])  # written
    refresh(home)
    stats = refresh(home, full=True)
    assert stats.rebuilt
    new = Location(index_root()).current()
    assert new is not None and new != old and old is not None and not old.exists()
    texts = archived()
    assert set(texts) == {"pecan gone", "pecan here", "pecan fin", "pecan final"}
    # the old generation's file left the archive: what the new one holds points at it,
    # the one text no generation holds (the reply's earlier state: the index shows the
    # whole one only) moved into the archive's chunks
    [link] = links()
    assert link.stat().st_ino == (new / BLOCK_FILE).stat().st_ino
    assert texts["pecan fin"] > 0 and b"pecan fin" in chunk_texts()
    assert all(texts[t] < 0 for t in ("pecan gone", "pecan here", "pecan final"))
    assert b"pecan here" not in chunk_texts()
    found = api.search("pecan", refresh_first=False, limit=None, dedup=False).results
    assert sorted(r["text"] for r in found) == ["pecan final", "pecan gone", "pecan here"]


def test_an_archive_with_its_own_copies_is_moved_once_with_a_message(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec(f"hazel {i}", ts=i) for i in range(20)])
    with monkeypatch.context() as patch:  # no hard link: the archive copies every text
        patch.setattr(shared, "link", lambda *_a: None)
        refresh(home)
    assert all(chunk > 0 for chunk in archived().values()) and b"hazel 7" in chunk_texts()
    db = sqlite3.connect(archive_path(index_root()) / "archive.db")
    db.execute("UPDATE meta SET value = '0' WHERE key = 'text_shared'")  # as m002 marks them
    db.commit()
    db.close()
    warnings: list[str] = []
    stats = refresh(home, warn=warnings.append)
    assert stats.rebuilt
    assert any("shares one copy with the index" in w for w in warnings), warnings
    texts = archived()
    assert len(texts) == 20 and all(chunk < 0 for chunk in texts.values())
    assert b"hazel" not in chunk_texts()  # the chunks were re-packed without them
    again: list[str] = []
    assert not refresh(home, warn=again.append).rebuilt and not again  # once


def test_forget_purge_takes_the_text_from_the_one_place(home: Path) -> None:
    """What ``forget --purge`` does (forget, then rebuild): no file under the index dir,
    the archive's links and chunks included, holds the forgotten text any more."""
    from agentdex.ingest import manage

    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("chestnut secret words", ts=1)])
    write_file(d / "s2.jsonl", [rec("chestnut kept", session="s2", ts=2)])
    refresh(home)
    (d / "s1.jsonl").unlink()
    refresh(home)  # now only the archive (and the index's archived rows) hold it
    assert "chestnut secret words" in archived()
    manage.forget(index_root(), [(None, "s1")], "test")
    assert refresh(home, full=True).rebuilt
    needle = "secret words"
    read = 0
    for link in links():
        rows = archive_rows(f"SELECT {BLOCK_ROW} FROM blocks WHERE file = ?", (link.name,))
        for text in block_texts(link.read_bytes(), rows):
            assert needle not in text.lower()
            read += 1
    for gen in index_root().glob("gen-*"):
        db = sqlite3.connect(gen / "index.db")
        rows = db.execute(f"SELECT {BLOCK_ROW} FROM blocks").fetchall()
        db.close()
        for text in block_texts((gen / BLOCK_FILE).read_bytes(), rows):
            assert needle not in text.lower()
            read += 1
    assert read > 0
    assert needle.encode() not in chunk_texts()
    assert set(archived()) == {"chestnut kept"}


def test_blocks_the_archive_points_at_survive_a_writer_killed_before_the_index_commit(
    tmp_path: Path,
) -> None:
    """The archive commits first: a kill before the index's commit leaves blocks it points
    at past the index's committed end; the next index writer keeps them."""
    gen = tmp_path / "gen-000001"
    gen.mkdir()
    db = open_writer_db(gen)
    file = BlockFile(gen, write=True)
    writer = BlockWriter(db, file)
    db.execute("BEGIN IMMEDIATE")
    text = "almond " * 3000
    record = Record("a", "s", "p", "line:1", "x", "user", "prompt", text, timestamp=1.0)
    writer.add_prepared(prepare(record), 1)
    writer.flush()
    db.execute("ROLLBACK")  # the index's batch never committed
    end = file.end
    assert end > 0
    writer.close()
    file.close()
    again = BlockFile(gen, write=True)
    BlockWriter(db, again, keep_end=end)
    assert os.path.getsize(gen / BLOCK_FILE) == end  # kept for the archive
    again.close()
    cut = BlockFile(gen, write=True)
    BlockWriter(db, cut)
    assert os.path.getsize(gen / BLOCK_FILE) == 0  # without it: cut as before
    cut.close()
    db.close()


def test_a_copied_data_directory_keeps_one_copy_of_the_text(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cp -a`` (or a restore with hard links) keeps the archive's link to the text file
    but gives the file a new inode, which its name holds: the next refresh renames the
    link instead of copying every text into chunks as if another generation wrote it."""
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec(f"walnut {i} " + "pad " * 40, ts=i) for i in range(50)])
    refresh(home)
    copy = tmp_path / "restored-data"
    subprocess.run(["cp", "-a", os.environ["AGENTDEX_DATA_DIR"], str(copy)], check=True)
    monkeypatch.setenv("AGENTDEX_DATA_DIR", str(copy))
    [earlier] = links()
    current = Location(index_root()).current()
    assert current is not None
    assert earlier.name != shared.link_name(current)  # the copy's file has a new inode
    # the next index writer still sees how far the archive's blocks reach (it keeps them)
    assert shared.referenced_end(index_root(), current) > 0
    write_file(d / "s2.jsonl", [rec("walnut late", session="s2", ts=99)])
    refresh(home)
    texts = archived()
    assert len(texts) == 51 and all(chunk < 0 for chunk in texts.values())
    assert b"walnut" not in chunk_texts()  # still one copy: the index's blocks
    assert archive_rows("SELECT DISTINCT file FROM blocks") == [(shared.link_name(current),)]
    refresh(home)  # the store opens again: the earlier name goes
    [link] = links()
    assert link.name == shared.link_name(current)
    assert link.stat().st_ino == (current / BLOCK_FILE).stat().st_ino
    found = api.search("walnut", refresh_first=False, limit=None, dedup=False).results
    assert len(found) == 51
