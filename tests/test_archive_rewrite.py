"""Rewriting the archive's chunk file (redaction turned on, forget, prune) in one pass.

Each re-packed chunk looks up the entries that use it. Without an index that
lookup reads the whole entries table, once per chunk: the one-time redaction
of a 1 GB history's archive (2,586 chunks, 1.25 M entries) ran for more than
half an hour inside whatever command refreshed first (an ``agentdex usage``
that seemed to hang). A rewrite of many chunks now looks them up through
indexes it builds in its own transaction and drops before the commit.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.archive import shared
from agentdex.archive import store as archive_store
from agentdex.archive import writer as archive_writer
from agentdex.archive.rewrite import CHUNK_USERS, LOOKUP_INDEXES, SCANS_BEFORE_LOOKUP
from agentdex.archive.store import archive_path
from agentdex.index.store import index_root
from test_index_fixtures import ROWS, register, store_dir, write_file

TOKEN = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def _indexes(db_path: Path) -> set[str]:
    with sqlite3.connect(db_path) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def test_a_rewrite_of_many_chunks_looks_their_entries_up_by_index(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Path(os.environ["AGENTDEX_CONFIG"])
    config.write_text("[privacy]\nredact = false\n")
    monkeypatch.setattr(archive_writer, "CHUNK_BYTES", 64)  # about a chunk per record
    # an archive that keeps its own copy of each text (one from before the archive shared
    # the index's blocks, or where no hard link can be made): a chunk per record
    monkeypatch.setattr(shared, "link", lambda *_a: None)
    d = store_dir(home)
    texts = [f"note {i} with {TOKEN} and some words to fill the chunk" for i in range(40)]
    for i, text in enumerate(texts):
        write_file(d / f"s{i}.jsonl", [{"session": f"s{i}", "text": text, "ts": 1000 + i}])
    api.refresh(home=str(home), rows=ROWS)
    db_path = archive_path(index_root()) / "archive.db"
    with sqlite3.connect(db_path) as db:
        chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert chunks > SCANS_BEFORE_LOOKUP * 2

    plans: list[str] = []
    repack = archive_store.ArchiveStore._repack

    def watched(self: archive_store.ArchiveStore, *args: Any, **kw: Any) -> None:
        for column in ("text", "raw"):
            rows = self.db.execute(
                "EXPLAIN QUERY PLAN " + CHUNK_USERS.format(column=column), (1,)
            ).fetchall()
            plans.append(" ".join(str(r[-1]) for r in rows))
        repack(self, *args, **kw)

    monkeypatch.setattr(archive_store.ArchiveStore, "_repack", watched)
    config.write_text("")  # redaction on: the archive is rewritten once, every chunk re-packed
    api.refresh(home=str(home), rows=ROWS)
    assert len(plans) >= 2 * chunks
    assert all("USING" in p and "INDEX rewrite_" in p for p in plans), plans[:2]
    # the lookup indexes are the rewrite's alone: gone once it committed
    assert not set(LOOKUP_INDEXES) & _indexes(db_path)
    stored = b"".join(p.read_bytes() for p in db_path.parent.iterdir() if p.is_file())
    assert TOKEN.encode() not in stored
    found = api.search("note", refresh_first=False, limit=None, dedup=False)
    assert len(found.results) == len(texts)
    assert all("[REDACTED:github-token]" in r["text"] for r in found.results)
