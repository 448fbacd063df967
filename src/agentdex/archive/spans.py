"""A first build's archive entries made from the index's rows, not built in Python each.

An archive entry repeats the index's row of its record (context, role and kind, time,
locator, offset, the block and place of its text) and adds what the index lacks: the
record's key, its text's UTF-8 size where the index's length of the lower-cased text
does not give it (non-ASCII text), and a prompt's kept source line. Building each entry
in Python on the writer's main thread was ~27 us a record of a cold build
(docs/performance.md, s13-writer and s14-archive).

In a first build into an empty archive (the entries' indexes dropped: keys are checked
in memory) the writer keeps, per file the index took, one row of ``entry_spans``: the
index id of its first record, its source, and a JSON array with one value a record:
``null`` (archived already: no entry), the key (ASCII text: its size is the index's
``tlen``), ``[key, size]``, or ``[key, size, raw_chunk, raw_start, raw_size]`` (a kept
line). The entries are then made by one ``INSERT ... SELECT`` over the index's rows.
The model calls a file holds are kept the same way: ``usage_spans`` notes the index's
file, and its calls are copied from the index's ``usage_calls`` (as
:meth:`ArchiveWriter.add_usage` would keep them: a later read's row of a call replaces
the source's earlier one).

The order of the two stores (also stated in :mod:`agentdex.ingest.archiving`):

1. the spans commit with the archive's batch (its chunks fsynced, its block rows saved)
   inside the index's open transaction, before the index's batch and its
   ``archived_rid`` commit: the archive never loses what was offered;
2. right after the index commits, :func:`derive` makes the entries of every span below
   the index's committed ``archived_rid`` (the index ATTACHed for it) and drops those
   spans, in one archive transaction;
3. a writer killed between 1 and 2 leaves spans: the next refresh derives the ones below
   ``archived_rid`` before anything else reads the archive's entries, and drops the ones
   at or past it: the index never committed those records, so their files' cursors did
   not move and they are offered again. Spans written against another index (the
   generation was replaced since) are dropped: the backfill copies what that index holds.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from agentdex.index.usage import COUNT_COLUMNS

if TYPE_CHECKING:
    from collections.abc import Callable

#: the name the index database is ATTACHed under while entries are derived
INDEX_SCHEMA = "adx_index"
#: archive meta: the index database the spans' record ids belong to
SPANS_OF = "entry_spans_of"

_TEMP = (
    # index block id -> the archive's row of it (``blocks``), as the writer numbered them,
    # and the index's id of the block's first record (read once a block, by :func:`_derive`)
    "CREATE TEMP TABLE IF NOT EXISTS adx_block_rows"
    " (id INTEGER PRIMARY KEY, row INTEGER, first_id INTEGER)",
    # index context id -> the archive's context id
    "CREATE TEMP TABLE IF NOT EXISTS adx_context_ids (id INTEGER PRIMARY KEY, archive_id INTEGER)",
)

#: one entry a value of a span that is not null, in record order (entry ids follow it: the
#: joins run in the order written, spans by their first id, a span's values in order)
_DERIVE = f"""
    INSERT INTO main.entries (key, context_id, source_id, rk, role_x, kind_x, ts, loc, offset,
        text_chunk, text_start, text_size, raw_chunk, raw_start, raw_size)
    SELECT iif(j.type = 'integer', j.value, j.value ->> 0), c.archive_id, s.source_id,
        r.rk, r.role_x, r.kind_x, r.ts, r.loc, r.offset, -m.row, r.id - m.first_id,
        iif(j.type = 'integer', r.tlen, j.value ->> 1),
        iif(j.type = 'integer', NULL, j.value ->> 2),
        iif(j.type = 'integer', NULL, j.value ->> 3),
        iif(j.type = 'integer', NULL, j.value ->> 4)
    FROM main.entry_spans s
    CROSS JOIN json_each(s.items) j
    CROSS JOIN {INDEX_SCHEMA}.record_rows r ON r.id = s.first_rid + j.key
    CROSS JOIN temp.adx_block_rows m ON m.id = r.block_id
    CROSS JOIN temp.adx_context_ids c ON c.id = r.context_id
    WHERE s.first_rid < ? AND j.type != 'null'
"""


#: the calls of the files of ``usage_spans``, in the order the index added them
_DERIVE_USAGE = f"""
    INSERT OR REPLACE INTO main.usage_calls (source_id, call, context_id, offset, timestamp,
        {", ".join(COUNT_COLUMNS)})
    SELECT s.source_id, u.call, c.archive_id, u.offset, u.timestamp,
        {", ".join(f"u.{name}" for name in COUNT_COLUMNS)}
    FROM main.usage_spans s
    CROSS JOIN {INDEX_SCHEMA}.usage_calls u ON u.file_id = s.file_id
    CROSS JOIN temp.adx_context_ids c ON c.id = u.context_id
    ORDER BY u.id
"""


def pending(db: sqlite3.Connection) -> bool:
    """Does the archive hold spans whose entries (or calls) are not made yet?"""
    return (
        db.execute(
            "SELECT 1 FROM entry_spans UNION ALL SELECT 1 FROM usage_spans LIMIT 1"
        ).fetchone()
        is not None
    )


def map_blocks(db: sqlite3.Connection, rows: list[tuple[int, int]]) -> None:
    """Note the archive's row of index blocks (``(index block id, row)``) for :func:`derive`."""
    for statement in _TEMP:
        db.execute(statement)
    db.executemany("INSERT OR REPLACE INTO temp.adx_block_rows (id, row) VALUES (?, ?)", rows)


def derive(
    db: sqlite3.Connection,
    index_path: str,
    get_context: Callable[[tuple[object, ...]], int],
    text_file: str | None,
    *,
    drop_past: bool = True,
) -> int:
    """Make the entries of the spans below the index's committed ``archived_rid`` and drop
    them, and drop spans of another index or (``drop_past``: when the index's writer is
    gone) at or past it (module docstring); how many entries. Call with nothing written in
    the archive's open transaction (right after a commit): it commits, ATTACHes the index
    (outside a transaction: the writer's ``BEGIN IMMEDIATE`` would lock every attached
    database), and opens a new transaction."""
    if not pending(db):
        return 0
    row = db.execute("SELECT value FROM meta WHERE key = ?", (SPANS_OF,)).fetchone()
    if db.in_transaction:
        db.execute("COMMIT")
    made = 0
    attached = False
    below: int | None = None
    try:
        if row is not None and row[0] == index_path:
            db.execute(f"ATTACH DATABASE ? AS {INDEX_SCHEMA}", (index_path,))
            attached = True
        db.execute("BEGIN")
        if attached:
            below, made = _derive(db, get_context, text_file)
        if drop_past or below is None:
            db.execute("DELETE FROM entry_spans")
        else:  # the index's open batch may still commit them
            db.execute("DELETE FROM entry_spans WHERE first_rid < ?", (below,))
        db.execute("DELETE FROM usage_spans")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    finally:
        if attached:
            db.execute(f"DETACH DATABASE {INDEX_SCHEMA}")
        db.execute("BEGIN IMMEDIATE")
    return made


def _derive(
    db: sqlite3.Connection,
    get_context: Callable[[tuple[object, ...]], int],
    text_file: str | None,
) -> tuple[int, int]:
    """``(archived_rid, entries made)``."""
    meta = db.execute(
        f"SELECT value FROM {INDEX_SCHEMA}.meta WHERE key = 'archived_rid'"
    ).fetchone()
    below = int(meta[0]) if meta and meta[0] is not None else 1
    for statement in _TEMP:
        db.execute(statement)
    low, high = db.execute(
        "SELECT min(first_rid), max(first_rid + json_array_length(items)) FROM entry_spans"
        " WHERE first_rid < ?",
        (below,),
    ).fetchone()
    # the index's contexts and blocks the spans' records and calls use that are not mapped
    # yet (blocks: a writer killed before the derivation numbered them in the rows it saved)
    for (context_id,) in db.execute(
        f"SELECT context_id FROM {INDEX_SCHEMA}.record_rows WHERE id >= ? AND id < ?"
        f" UNION SELECT context_id FROM {INDEX_SCHEMA}.usage_calls"
        " WHERE file_id IN (SELECT file_id FROM main.usage_spans)"
        " EXCEPT SELECT id FROM temp.adx_context_ids",
        (low or 0, high or 0),
    ).fetchall():
        context = db.execute(
            "SELECT agent, store, session_id, model, cwd, project, branch, worktree, host"
            f" FROM {INDEX_SCHEMA}.contexts WHERE id = ?",
            (context_id,),
        ).fetchone()
        db.execute(
            "INSERT INTO temp.adx_context_ids (id, archive_id) VALUES (?, ?)",
            (context_id, get_context(tuple(context))),
        )
    db.execute(_DERIVE_USAGE)
    if low is None:
        return below, 0
    db.execute(
        "INSERT OR IGNORE INTO temp.adx_block_rows (id, row)"
        f" SELECT ib.id, ab.id FROM {INDEX_SCHEMA}.blocks ib JOIN main.blocks ab"
        " ON ab.file = ? AND ab.offset = ib.offset"
        f" WHERE ib.id IN (SELECT DISTINCT block_id FROM {INDEX_SCHEMA}.record_rows"
        " WHERE id >= ? AND id < ?) AND ib.id NOT IN (SELECT id FROM temp.adx_block_rows)",
        (text_file, low, high),
    )
    # a block's first record once, not the index's block row looked up again for each of its
    # records (~15% of the entries' statement at c250: docs/performance.md, s15-tail)
    db.execute(
        "UPDATE temp.adx_block_rows SET first_id ="
        f" (SELECT b.first_id FROM {INDEX_SCHEMA}.blocks b WHERE b.id = adx_block_rows.id)"
        " WHERE first_id IS NULL"
    )
    return below, int(db.execute(_DERIVE, (below,)).rowcount)
