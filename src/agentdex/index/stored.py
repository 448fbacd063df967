"""Reading records back from a generation's rows and text blocks, for its writer.

The writer re-reads stored records to keep some of a file's records while
dropping others, to index the tail into the postings, and (for the ingest
layer) to copy what the index holds into the archive. Pages of ids at a
time, so memory stays flat on any index size.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from agentdex.index.segments import Block, BlockFile, load_block
from agentdex.records import Record, record_from_columns


def _block_of(
    db: sqlite3.Connection, file: BlockFile, block: Block | None, block_id: int
) -> Block | None:
    if block is not None and block.id == block_id:
        return block
    return load_block(db, file, block_id)


def records(
    db: sqlite3.Connection, file: BlockFile, where: str, params: tuple[Any, ...] = ()
) -> Iterator[tuple[int, Record, str]]:
    """``(id, record, file path)`` of the records matching ``where`` (over ``records r``
    joined with ``files f``), in id order, with their original text from the blocks."""
    last = -1
    block = None
    while True:
        rows = db.execute(
            "SELECT r.id, r.block_id, r.agent, r.store, f.path, r.locator, r.session_id,"
            " r.role, r.kind, r.timestamp, r.model, r.cwd, r.project, r.branch, r.worktree,"
            " r.host, r.offset FROM records r JOIN files f ON f.id = r.file_id"
            f" WHERE ({where}) AND r.id > ? ORDER BY r.id LIMIT 2000",
            (*params, last),
        ).fetchall()
        if not rows:
            return
        last = rows[-1][0]
        for row in rows:
            rid = row[0]
            block = _block_of(db, file, block, row[1])
            if block is None:
                continue
            text = block.original_text(rid - block.first_id)
            yield rid, record_from_columns(row[2:], text), str(row[4])


def lowered_rows(
    db: sqlite3.Connection, file: BlockFile, from_rid: int
) -> Iterator[tuple[tuple[Any, ...], str]]:
    """``(id, file_id, context_id, role, kind, timestamp, tlen)`` of the records with ids
    >= ``from_rid``, and their lower-cased text."""
    rows = db.execute(
        "SELECT id, block_id, file_id, context_id, role, kind, timestamp, tlen"
        " FROM record_rows WHERE id >= ? ORDER BY id",
        (from_rid,),
    ).fetchall()
    block = None
    for row in rows:
        rid = row[0]
        block = _block_of(db, file, block, row[1])
        if block is None:
            continue
        yield (rid, *row[2:]), block.lower_text(rid - block.first_id)
