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

import os
import sqlite3
import threading
import time
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from agentdex.index.segments import name_os_thread
from agentdex.index.usage import COUNT_COLUMNS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

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
#: the same over the spans of one piece (:func:`derive_piece`): those below a rowid
_DERIVE_PIECE = _DERIVE.replace("WHERE s.first_rid < ?", "WHERE s.rowid <= ? AND s.first_rid < ?")
#: SQLite's page cache (KiB) of the ATTACHed index and of the temp maps while the deriver runs
READ_CACHE_KIB = 512
#: records a piece of the build's derivation takes at most (a few spans more: whole spans)
PIECE_RECORDS = 8192


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


def derive_piece(
    db: sqlite3.Connection,
    get_context: Callable[[tuple[object, ...]], int],
    text_file: str | None,
    below: int,
) -> int | None:
    """Make the entries of the first spans (in the order written, up to ~``PIECE_RECORDS``
    records) below ``below`` and the index's ``archived_rid`` as this transaction reads it,
    and drop those spans; how many entries (None: no span is due). While a first build
    runs: in the archive writer's open transaction (its spans and these entries commit
    together, before the index's next batch), with the index ATTACHed, each piece short
    so the writer's commit waits little for it (:class:`agentdex.archive.writer.Deriver`).
    Entries, contexts and blocks are numbered as one :func:`derive` at the end would."""
    meta = db.execute(
        f"SELECT value FROM {INDEX_SCHEMA}.meta WHERE key = 'archived_rid'"
    ).fetchone()
    below = min(below, int(meta[0]) if meta and meta[0] is not None else 1)
    last = 0
    records = 0
    for rowid, count in db.execute(
        "SELECT rowid, json_array_length(items) FROM entry_spans WHERE first_rid < ?"
        " ORDER BY rowid",
        (below,),
    ):
        last = int(rowid)
        records += int(count)
        if records >= PIECE_RECORDS:
            break
    if not last:
        return None
    made = _derive(db, get_context, text_file, below=below, last=last)[1]
    db.execute("DELETE FROM entry_spans WHERE rowid <= ? AND first_rid < ?", (last, below))
    return made


def _derive(
    db: sqlite3.Connection,
    get_context: Callable[[tuple[object, ...]], int],
    text_file: str | None,
    *,
    below: int | None = None,
    last: int | None = None,
) -> tuple[int, int]:
    """``(archived_rid, entries made)``; ``last``: only the spans up to this rowid (a piece:
    ``below`` given, usage calls left to the end)."""
    if below is None:
        meta = db.execute(
            f"SELECT value FROM {INDEX_SCHEMA}.meta WHERE key = 'archived_rid'"
        ).fetchone()
        below = int(meta[0]) if meta and meta[0] is not None else 1
    for statement in _TEMP:
        db.execute(statement)
    low, high = db.execute(
        "SELECT min(first_rid), max(first_rid + json_array_length(items)) FROM entry_spans"
        " WHERE first_rid < ? AND rowid <= ?",
        (below, last if last is not None else 1 << 62),
    ).fetchone()
    # the index's contexts and blocks the spans' records and calls use that are not mapped
    # yet (blocks: a writer killed before the derivation numbered them in the rows it saved)
    usage = (
        ""
        if last is not None
        else f" UNION SELECT context_id FROM {INDEX_SCHEMA}.usage_calls"
        " WHERE file_id IN (SELECT file_id FROM main.usage_spans)"
    )
    for (context_id,) in db.execute(
        f"SELECT context_id FROM {INDEX_SCHEMA}.record_rows WHERE id >= ? AND id < ?"
        f"{usage} EXCEPT SELECT id FROM temp.adx_context_ids",
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
    if last is None:
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
    if last is not None:
        return below, int(db.execute(_DERIVE_PIECE, (last, below)).rowcount)
    return below, int(db.execute(_DERIVE, (below,)).rowcount)


#: how much nicer than the writer's threads the derivation's thread runs: it takes the build's
#: idle room, not the parse workers' nor the writer's CPU
DERIVER_NICE = 10


class Deriver:
    """A first build's entries made while it runs, on a thread of their own, in pieces
    (:func:`derive_piece`) of the spans the index committed, in the archive writer's open
    transaction: the build's end then derives only its last batch (the whole derivation
    was the longest chain of a 1 GB cold build's tail, ~14 s: docs/performance.md, s17).

    The archive's connection is shared: :meth:`held` takes it from the thread between two
    pieces (the writer's commit, with ``pause``: no piece runs from the archive's commit
    until the index's commit is done, :meth:`resume`, so a piece never reads the index as it
    was before the batch whose spans it derives). The writer defers its own statements to
    its commit meanwhile (:class:`agentdex.archive.writer.ArchiveWriter`), so it never waits
    for a piece mid-batch. SQLite's step releases the GIL: a piece runs beside the writer."""

    def __init__(
        self,
        db: sqlite3.Connection,
        get_context: Callable[[tuple[object, ...]], int],
        text_file: str | None,
    ) -> None:
        self.db = db
        self._get_context = get_context
        self._text_file = text_file
        self._lock = threading.RLock()
        self._wake = threading.Condition(self._lock)
        self._want_lock = threading.Lock()
        #: threads waiting for :meth:`held` (the thread yields to them after its piece)
        self._want = 0
        self._below = 0
        self._paused = True
        self._stopping = False
        self._error: BaseException | None = None
        #: the thread's id for its priority (None: not known) and the process's nice value
        self._tid: int | None = None
        self._base = 0
        #: entries made, pieces and the thread's CPU seconds in them (for the bench's steps)
        self.made = 0
        self.pieces = 0
        self.cpu = 0.0
        self._thread = threading.Thread(target=self._run, name="agentdex-entries", daemon=True)
        self._thread.start()

    @contextmanager
    def held(self, *, pause: bool = False) -> Iterator[None]:
        """The connection, once the running piece (if any) is done; ``pause``: no piece
        runs after until :meth:`resume`. Raises what the thread raised."""
        with self._want_lock:
            self._want += 1
        try:
            if not self._lock.acquire(blocking=False):
                # its piece runs at a lower priority: at the caller's while it waits for it
                # (no priority inversion at the writer's commit)
                self._nice(0)
                try:
                    self._lock.acquire()
                finally:
                    self._nice(DERIVER_NICE)
        finally:
            with self._want_lock:
                self._want -= 1
        try:
            if pause:
                self._paused = True
            if self._error is not None:
                raise self._error
            yield
        finally:
            self._wake.notify()
            self._lock.release()

    def try_hold(self) -> bool:
        """Take the connection if no piece runs now (then :meth:`release` it); False: one
        does (or the thread failed: :meth:`held` raises that)."""
        return self._error is None and self._lock.acquire(blocking=False)

    def release(self) -> None:
        self._wake.notify()
        self._lock.release()

    def resume(self, below: int, block_rows: list[tuple[int, int]]) -> None:
        """The index committed every record below ``below``: derive their spans (the
        archive rows of the blocks numbered since: ``block_rows``)."""
        with self.held():
            map_blocks(self.db, block_rows)
            self._below = below
            self._paused = False

    def stop(self, *, quiet: bool = False) -> None:
        """End the thread after its piece; raise what it raised (unless ``quiet``)."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join()
        if self._error is not None and not quiet:
            raise self._error

    def _nice(self, more: int) -> None:
        """The thread's priority: ``more`` than the process's (Linux: one thread's own)."""
        if self._tid is not None:
            with suppress(AttributeError, OSError):
                os.setpriority(os.PRIO_PROCESS, self._tid, min(19, self._base + more))

    def _run(self) -> None:
        name_os_thread("agentdex-entries")  # its CPU apart in top, perf and the bench
        with suppress(AttributeError, OSError):
            self._base = os.getpriority(os.PRIO_PROCESS, 0)
            self._tid = threading.get_native_id()
        self._nice(DERIVER_NICE)
        with self._wake:
            while True:
                while not self._stopping and (self._paused or self._want):
                    self._wake.wait()
                if self._stopping:
                    return
                started = time.thread_time()
                try:
                    made = derive_piece(self.db, self._get_context, self._text_file, self._below)
                except BaseException as exc:  # raised by held() and stop()
                    self._error = exc
                    self._paused = True
                    continue
                finally:
                    self.cpu += time.thread_time() - started
                if made is None:
                    self._paused = True
                else:
                    self.made += made
                    self.pieces += 1
