"""The write side of the archive during a refresh: every indexed record, once.

The refresh offers each record it indexes (:meth:`ArchiveWriter.offer`),
with the index block and position where the index stored its text. A
record whose key (:func:`agentdex.archive.keys.record_key`) is already
archived costs one lookup and nothing else (unless its text lies outside
the current generation: then the entry moves to the new block); a new one
gets an entry row that points at the index's block: the text is stored once
(:mod:`agentdex.archive.shared`). Only without such a block (no hard link
possible, or a record the index does not hold) is the text appended to the
archive's own open text chunk.

Raw source bytes are kept where that is cheap and useful: the source line of
each *prompt* (what a person typed) read from a JSONL store, up to
``RAW_MAX`` bytes. The line holds what normalizing drops (the agent's ids,
parent links, attachments, the exact envelope) for the records people look
for most, and prompts are a small share of a history (about one record in
ten). Replies and tool output are kept as text only: their lines repeat that
text with bulky envelopes (on real Claude Code transcripts all lines would
triple the archive).

The archive keeps one transaction open per batch, like the index writer:
chunks are compressed on a helper thread, appended as they fill, and the
batch commits (after an fsync of the chunk file) just before the index's own
commit (the order is stated in :mod:`agentdex.ingest.archiving`), so the archive
always holds at least what the index holds: as entries, or, in a first build into an
empty archive, as spans whose entries are made from the index's rows once the index
committed them (:mod:`agentdex.archive.spans`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import orjson

from agentdex.archive import shared, spans
from agentdex.archive.keys import prepared_key
from agentdex.archive.keyset import KeySet, pack_key
from agentdex.archive.schema import ENTRY_INDEXES
from agentdex.archive.store import CHUNK_BYTES, LEVEL, RAW, TEXT, ArchiveStore
from agentdex.index import codec
from agentdex.index.segments import ContextIds, encode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from concurrent.futures import Future, ThreadPoolExecutor
    from pathlib import Path

    from agentdex.archive.usage import CallRow
    from agentdex.index.columns import Columns
    from agentdex.index.segments import Prepared
    from agentdex.records import Usage

    #: the index's rows of these block ids (id, offset, lower_size, original_size, count,
    #: lower_starts, original_starts), written and fsynced
    BlockRows = Callable[[list[int]], Iterable[tuple[object, ...]]]

#: a prompt's raw source line is kept up to this size (its text is kept whatever its size)
RAW_MAX = 64 * 1024
#: what :func:`read_raw_line` reads first (the whole ``RAW_MAX`` only for longer lines)
FIRST_READ = 4096
#: the records whose raw source line is kept
RAW_KINDS = frozenset({"prompt"})

_INSERT_ENTRY = (
    "INSERT INTO entries (id, key, context_id, source_id, rk, role_x, kind_x, ts, loc, offset,"
    " text_chunk, text_start, text_size, raw_chunk, raw_start, raw_size)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
#: records looked up and inserted together
BATCH = 500
#: the low bits of a key :attr:`ArchiveWriter._seen` keeps a bit for (4 MiB: at 1.25
#: million entries ~4% of the bits are set, so ~4% of new keys are looked up)
SEEN_MASK = (1 << 25) - 1
#: the most keys kept in memory while the entries' indexes are dropped (8 bytes each: a
#: first build of a home several times 1 GB builds them here and goes on without)
BULK_KEYS = 4_000_000
#: SQLite's page cache (KiB) while the entries' indexes are dropped (their rows are appended:
#: no random pages to keep; the store's 32 MB is for the key's B-tree) and while they are
#: built (a sort's memory follows the cache size), as the index's bulk load does
BULK_CACHE_KIB = 4000
SORT_CACHE_KIB = 2000


class _OpenChunk:
    """Bytes collected for one chunk whose id is already reserved."""

    def __init__(self, chunk_id: int) -> None:
        self.id = chunk_id
        self.parts: list[bytes] = []
        self.size = 0


def read_raw_line(fd: int, offset: int, *, redact: bool) -> bytes | None:
    """The source line at ``offset`` of the open file ``fd`` as the archive keeps it (its
    secrets masked with ``redact``); None when there is none to keep: longer than
    ``RAW_MAX`` or not a JSON line (the file changed since it was parsed). Raises
    ``OSError`` when the file cannot be read."""
    # most lines are short: read a page first, the whole limit only when no line end is
    # there (reading RAW_MAX bytes per prompt was ~7% of a parse worker's CPU)
    data = os.pread(fd, FIRST_READ, offset)
    end = data.find(b"\n")
    if end < 0 and len(data) == FIRST_READ:
        data = os.pread(fd, RAW_MAX + 2, offset)
        end = data.find(b"\n")
    if end < 0:
        if len(data) > RAW_MAX:
            return None
        end = len(data)
    line = data[:end].rstrip(b"\r")
    if not line.startswith((b"{", b"[")) or len(line) > RAW_MAX:
        return None
    if redact:
        from agentdex.archive.redaction import mask_piece

        return mask_piece(RAW, line)
    return line


class ArchiveWriter:
    """Adds one refresh's records to the archive; the caller holds the index writer lock."""

    def __init__(
        self,
        store: ArchiveStore,
        *,
        redact: bool = True,
        gen: Path | None = None,
        block_rows: BlockRows | None = None,
        index_path: str | None = None,
    ) -> None:
        """``index_path``: the index database whose records are offered (with ``gen`` and
        ``block_rows``): a first build into an empty archive then makes its entries from
        the index's rows (:mod:`agentdex.archive.spans`, :meth:`derive`)."""
        #: mask secrets in the raw source lines kept (record texts come masked already)
        self.redact = redact
        self.store = store
        self.db = store.db
        self.contexts = ContextIds(self.db)
        #: source path -> id, read per path on first use (an append touches one source)
        self.sources: dict[str, int] = {}
        self._next_chunk = (
            int(self.db.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]) + 1
        )
        self._open: dict[int, _OpenChunk] = {}
        self._pending: deque[tuple[int, int, bytes, Future[bytes]]] = deque()
        self._pool: ThreadPoolExecutor | None = None
        self._source_id = 0
        self._source_path: str | None = None
        self._raw_fd = -1
        self._lines: dict[int, tuple[int, int, int]] = {}
        self._batch: list[tuple[int, Sequence[Any], tuple[int, int] | None]] = []
        self._now = int(time.time())
        #: the id of the next entry this writer adds (ids only grow while it writes: the
        #: entries from ``_first_entry`` on are the ones archived at ``_now``)
        self._next_entry = (
            int(self.db.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()[0]) + 1
        )
        self._first_entry = self._next_entry
        #: the archive's link to the generation's text file (None: texts go to chunks)
        self.text_file: str | None = None
        self._block_rows = block_rows
        if gen is not None and block_rows is not None:
            self.text_file = shared.link(store.dir, gen)
            if self.text_file is not None:
                self._rename_earlier_links(gen, self.text_file)
        #: index block id -> the archive's row id for it (rows inserted at commit)
        self._block_ids: dict[int, int] = {}
        self._unsaved_blocks: list[int] = []
        #: (index block id, row) numbered since the last :meth:`derive`
        self._new_block_rows: list[tuple[int, int]] = []
        self._next_block_row = (
            int(self.db.execute("SELECT coalesce(max(id), 0) FROM blocks").fetchone()[0]) + 1
        )
        #: chunks whose texts moved to the index's blocks (re-packed when the writer closes)
        self.vacated_chunks: set[int] = set()
        #: entries moved from chunks or older generations to this generation's blocks
        self.moved = 0
        #: entries added in this writer's lifetime (for stats)
        self.added = 0
        self.db.execute("BEGIN IMMEDIATE")
        #: with an archive empty when this writer began (a first build on a new machine),
        #: a bit per key this writer added (by its low bits): a key whose bit is clear
        #: cannot be archived, so it is not looked up (every entry is added by a writer
        #: under the writer lock, and this one holds it)
        self._seen: bytearray | None = None
        #: the keys this writer added while the entries' indexes are dropped (None: they
        #: are not): an empty archive takes a whole build's entries in a row (1.25 million
        #: at 1 GB), each an insert into the key's B-tree at a random page that every commit
        #: wrote again; built with one sort instead (:meth:`end_bulk_load`), as the index's
        #: record indexes are. Whether a key is archived is then answered here, exactly.
        self._keys: KeySet | None = None
        #: the page cache setting the dropped indexes' bulk load replaced
        self._cache_size = 0
        if not store.has_entries():
            self._seen = bytearray((SEEN_MASK + 1) >> 3)
            self._keys = KeySet()
            self._cache_size = int(self.db.execute("PRAGMA cache_size").fetchone()[0])
            self.db.execute(f"PRAGMA cache_size=-{BULK_CACHE_KIB}")
            for name, _ in ENTRY_INDEXES:
                self.db.execute(f"DROP INDEX IF EXISTS {name}")
        #: the index database whose records are offered (spans left by a killed writer of
        #: it are derived from it: :meth:`derive`)
        self.index_path = index_path
        #: whether a worker's file makes a span, its entries made from the index's rows
        #: (None: each entry is built here)
        self.spanning = False
        #: spans written since the last :meth:`derive` (entries not made yet)
        self._spans_open = 0
        if index_path is not None and self.text_file is not None and self._keys is not None:
            self.spanning = True
            self.db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (spans.SPANS_OF, index_path),
            )

    def _rename_earlier_links(self, gen: Path, name: str) -> None:
        """Point the blocks the archive kept under an earlier name of this generation's
        text file (a copied or restored data directory: a new inode) at its current name,
        in one commit before this writer's batch. Without it the end of the refresh took
        them for another generation's and copied every text into chunks (55 s and a
        second copy of the text at 1 GB). The earlier link goes when the store next
        opens (:meth:`SharedBlocks.unreferenced_links`)."""
        earlier = shared.earlier_names(self.store.dir, gen, name)
        if not earlier:
            return
        self.db.execute("BEGIN IMMEDIATE")
        self.db.executemany(
            "UPDATE blocks SET file = ? WHERE file = ?", [(name, old) for old in earlier]
        )
        self.db.execute("COMMIT")

    # -- sources -------------------------------------------------------------------------------
    def begin_source(self, path: str, *, jsonl: bool) -> None:
        """The file the next offered records come from (``jsonl``: keep prompts' lines)."""
        self._flush()
        self._close_raw()
        self._source_path = path if jsonl else None
        self._lines = {}
        self._source_id = self._source(path)

    def _source(self, path: str) -> int:
        source_id = self.sources.get(path)
        if source_id is None:
            row = self.db.execute("SELECT id FROM sources WHERE path = ?", (path,)).fetchone()
            if row is None:
                row = (self.db.execute("INSERT INTO sources (path) VALUES (?)", (path,)).lastrowid,)
            source_id = self.sources[path] = int(row[0] or 0)
        return source_id

    # -- token usage ---------------------------------------------------------------------------
    def add_usage(self, path: str, usage: Iterable[Usage], file_id: int | None = None) -> None:
        """Keep the model calls one read of ``path`` found (a later read replaces its row of
        the same call; calls the file no longer holds stay: :mod:`agentdex.archive.usage`).
        ``file_id``: the index's file that holds them as read now: while entries are made
        from the index's rows its calls are copied from there too (:mod:`.spans`)."""
        from agentdex.archive.usage import upsert

        if file_id is not None and self.spanning:
            self.db.execute(
                "INSERT OR REPLACE INTO usage_spans (file_id, source_id) VALUES (?, ?)",
                (file_id, self._source(path)),
            )
            self._spans_open += 1
            return
        from agentdex.index.usage import call_hash

        source_id = self._source(path)
        rows = []
        for u in usage:
            context = (u.agent, u.store, u.session_id, u.model, u.cwd, u.project, u.branch,
                       u.worktree, u.host)  # fmt: skip
            call = call_hash(u.agent, u.call_id)
            context_id = self.contexts.get_or_add(context)
            rows.append((source_id, call, context_id, u.offset, u.timestamp, *u.counts()))
        upsert(self.db, rows)

    def add_usage_rows(self, rows: Iterable[CallRow]) -> int:
        """Keep calls as the index holds them (:data:`agentdex.archive.usage.CallRow`; they
        replace the archive's rows of the same source and call). How many."""
        from agentdex.archive.usage import upsert

        out = []
        for row in rows:
            path, context, rest = str(row[0]), row[1:10], row[10:]
            out.append((self._source(path), rest[0], self.contexts.get_or_add(context), *rest[1:]))
        upsert(self.db, out)
        return len(out)

    def _close_raw(self) -> None:
        if self._raw_fd >= 0:
            os.close(self._raw_fd)
            self._raw_fd = -1

    def _raw_line(self, offset: int, given: bytes | None = None) -> tuple[int, int, int] | None:
        """The chunk reference of the source line at ``offset`` (None: too long, unreadable).

        ``given``: the line as a parse worker read it (:func:`read_raw_line`; b"": none to
        keep), so this process need not read and mask it again."""
        known = self._lines.get(offset)
        if known is not None:
            return known
        if self._source_path is None:
            return None
        if given is not None:
            line: bytes | None = given or None
        else:
            try:
                if self._raw_fd < 0:
                    self._raw_fd = os.open(self._source_path, os.O_RDONLY)
                line = read_raw_line(self._raw_fd, offset, redact=self.redact)
            except OSError:
                self._source_path = None
                return None
        if line is None:
            return None
        chunk_id, start = self._next(RAW)
        self._append(RAW, line)
        ref = self._lines[offset] = (chunk_id, start, len(line))
        return ref

    # -- records -------------------------------------------------------------------------------
    def offer(self, prepared: Prepared, text_at: tuple[int, int] | None = None) -> None:
        """Archive one record unless its key is already there (checked in batches).

        ``text_at``: (index block id, position) where the index stored the record's text
        in this generation; the entry points there instead of storing the text again."""
        key = prepared.key
        if key is None:
            key = prepared_key(prepared)
        if text_at is None and self._keys is not None and self.text_file is not None:
            # an entry whose text goes to a chunk (the backfill): a later copy of the record
            # would move it to the blocks, found by its key in SQLite (:meth:`_flush`)
            self.end_bulk_load()
        self._batch.append((key, prepared, text_at if self.text_file is not None else None))
        if len(self._batch) >= BATCH:
            self._flush()

    def offer_many(
        self,
        items: Columns,
        refs: Sequence[tuple[int, int]],
        first: int | None = None,
    ) -> None:
        """:meth:`offer` for each of ``items`` (a file's records as columns: a parse
        worker's wire) with where the index stored each one's text (``refs``, in this
        generation); ``first``: the index's id of the first (the others follow it), for
        entries made from the index's rows."""
        if first is not None and self.spanning and self._keys is not None:
            self._offer_span(items, refs, first)
            return
        rows = items.prepared()
        if self.text_file is None:
            for item in rows:
                self.offer(item)
            return
        batch = self._batch
        for item, text_at in zip(rows, refs, strict=True):
            key = item[11]
            if key is None:
                key = prepared_key(item)
            batch.append((key, item, text_at))
            if len(batch) >= BATCH:
                self._flush()
                batch = self._batch

    def _offer_span(self, items: Columns, refs: Sequence[tuple[int, int]], first: int) -> None:
        """One span of ``entry_spans`` for ``items`` (:mod:`agentdex.archive.spans`): per
        record only what the index lacks, decided here; the entries are made from the
        index's rows by :meth:`derive` once the index committed them. Keys are checked and
        noted as :meth:`_flush` does with the entries' indexes dropped (the bit filter, then
        the exact set), blocks numbered in the same order."""
        self._flush()  # entries offered one at a time before these keep their order
        seen, held = self._seen, self._keys
        assert seen is not None and held is not None
        arrays, key_mask = held.arrays, held.mask
        values: list[object] = []
        append = values.append
        mask = SEEN_MASK
        block_row = self._block_row
        last_block = -1
        raw_ok = self._source_path is not None
        raws = items.raws
        keys = items.keys
        if None in keys:  # not computed by a worker (a record prepared in this process)
            keys = [
                prepared_key(row) if key is None else key
                for key, row in zip(keys, items.prepared(), strict=True)
            ]
        for at, (key, (block, _), text, kind, offset) in enumerate(
            zip(keys, refs, items.texts, items.kinds, items.offsets, strict=True)
        ):
            bit = key & mask
            byte = bit >> 3
            flag = 1 << (bit & 7)
            if seen[byte] & flag and key in held:
                append(None)
                continue
            seen[byte] |= flag
            arrays[key & key_mask] += pack_key(key)  # KeySet.add, inline
            if block != last_block:
                block_row(block)
                last_block = block
            if raw_ok and kind in RAW_KINDS and isinstance(offset, int) and offset >= 0:
                raw = self._raw_line(offset, raws.get(at))
                if raw is not None:
                    append((key, len(encode(text)), *raw))
                    continue
            if text.isascii():
                append(key)
            else:
                append((key, len(encode(text))))
        added = len(values) - values.count(None)
        if not added:
            return
        held.grew(added)
        if self.added == 0:
            self._note_time()
        self.added += added
        self.db.execute(
            "INSERT INTO entry_spans (first_rid, source_id, items) VALUES (?, ?, ?)",
            (first, self._source_id, orjson.dumps(values)),
        )
        self._spans_open += 1

    def defers(self) -> bool:
        """May the spans wait for the end of the build (:mod:`agentdex.ingest.archiving`)?
        Not once the kept keys reach ``BULK_KEYS``: the entries' indexes are built then."""
        return self.spanning and self._keys is not None and len(self._keys) < BULK_KEYS

    def derive(self, *, drop_past: bool = True) -> int:
        """Make the entries of the spans the index has committed (:mod:`.spans`), after its
        commit; how many. ``drop_past``: drop the spans it has not committed (the index's
        writer is gone: a kill). Past ``BULK_KEYS`` kept keys the entries' indexes are
        built."""
        if self.index_path is None or not (self._spans_open or spans.pending(self.db)):
            return 0
        rows, self._new_block_rows = self._new_block_rows, []
        spans.map_blocks(self.db, rows)
        made = spans.derive(
            self.db,
            self.index_path,
            self.contexts.get_or_add,
            self.text_file,
            drop_past=drop_past,
        )
        self._spans_open = 0
        self._next_entry = (
            int(self.db.execute("SELECT coalesce(max(id), 0) FROM entries").fetchone()[0]) + 1
        )
        if self._keys is not None and len(self._keys) >= BULK_KEYS:
            self._build_indexes()
        return made

    def _flush(self) -> None:
        """Insert the batch's records that are not archived yet (one lookup, one insert);
        move known ones whose text lies outside this generation to its blocks."""
        batch, self._batch = self._batch, []
        if not batch:
            return
        keys = [key for key, _, _ in batch]
        seen = self._seen
        if seen is not None:  # only keys this writer added can be there: look those up
            keys = [k for k in keys if seen[(k & SEEN_MASK) >> 3] & (1 << (k & 7))]
        if self._keys is not None:  # indexes dropped: every key this writer added is here
            # (each entry's text in this generation's blocks, or no blocks at all: none moves)
            held = self._keys
            known: dict[int, tuple[int, object]] = {
                k: (-1, self.text_file) for k in keys if k in held
            }
        else:
            known = self._archived(keys)
        rows: list[tuple[object, ...]] = []
        added: list[int] = []
        moves = []
        here = (-1, self.text_file)
        # each entry's row made here with the fields in locals (per record of
        # every build); a context is looked up once for a run of records sharing its tuple,
        # a block's row once for a run of records in it
        get_context = self.contexts.get_or_add
        last_context: object = None
        context_id = 0
        last_block = -1
        block_row = 0
        source_id = self._source_id
        entry_id = self._next_entry
        for key, prepared, text_at in batch:
            place = known.get(key)
            if place is not None:
                if text_at is not None and self._elsewhere(place):
                    moves.append((-self._block_row(text_at[0]), text_at[1], key))
                    if place[0] > 0:
                        self.vacated_chunks.add(place[0])
                    known[key] = here
                continue
            known[key] = here  # the same record twice in a batch: once
            meta, _, text, _, _, _, _, _, context, cols, _, _, given = prepared
            if context is not last_context:
                context_id = get_context(context)
                last_context = context
            if text_at is not None:  # the index's copy (a negative chunk: a shared block)
                block = text_at[0]
                if block != last_block:
                    block_row = self._block_row(block)
                    last_block = block
                text_chunk, text_start = -block_row, text_at[1]
                # only the text's UTF-8 size is needed (ASCII: its length)
                size = len(text) if text.isascii() else len(encode(text))
            else:
                data = encode(text)
                text_chunk, text_start = self._next(TEXT)
                self._append(TEXT, data)
                size = len(data)
            offset = meta[13]
            raw = None
            if (
                meta[4] in RAW_KINDS
                and self._source_path is not None
                and isinstance(offset, int)
                and offset >= 0
            ):
                raw = self._raw_line(offset, given)
            rk, role_x, kind_x, ts, loc = cols
            if raw is None:
                rows.append(
                    (entry_id, key, context_id, source_id, rk, role_x, kind_x, ts, loc, offset,
                     text_chunk, text_start, size, None, None, None)
                )  # fmt: skip
            else:
                rows.append(
                    (entry_id, key, context_id, source_id, rk, role_x, kind_x, ts, loc, offset,
                     text_chunk, text_start, size, *raw)
                )  # fmt: skip
            entry_id += 1
            added.append(key)
        self._next_entry = entry_id
        if rows:
            if self.added == 0:
                self._note_time()
            self.db.executemany(_INSERT_ENTRY, rows)
            self.added += len(rows)
            if seen is not None:
                for key in added:
                    bit = key & SEEN_MASK
                    seen[bit >> 3] |= 1 << (bit & 7)
            if self._keys is not None:
                self._keys.add_all(added)
                if len(self._keys) >= BULK_KEYS:
                    self._build_indexes()
        if moves:
            self.db.executemany(
                "UPDATE entries SET text_chunk = ?, text_start = ? WHERE key = ?",
                moves,
            )
            self.moved += len(moves)

    def _archived(self, keys: list[int]) -> dict[int, tuple[int, object]]:
        """Where the archived ones of ``keys`` keep their text: key -> (chunk, file)."""
        if not keys:
            return {}
        return {
            int(row[0]): (int(row[1]), row[2])
            for row in self.db.execute(
                "SELECT e.key, e.text_chunk, b.file FROM entries e"
                " LEFT JOIN blocks b ON b.id = -e.text_chunk"
                f" WHERE e.key IN ({','.join('?' * len(keys))})",
                keys,
            )
        }

    def end_bulk_load(self) -> None:
        """Build the entries' indexes this writer dropped (one sort each), in the open batch:
        before anything looks entries up by key or context (a re-import, the end)."""
        if self._keys is not None:
            if self._spans_open:
                raise RuntimeError("the archive's entries of uncommitted records are not made")
            self._flush()
            self._build_indexes()

    def _build_indexes(self) -> None:
        self._keys = None
        self.db.execute(f"PRAGMA cache_size=-{SORT_CACHE_KIB}")
        try:
            for _, statement in ENTRY_INDEXES:
                self.db.execute(statement)
        finally:
            self.db.execute(f"PRAGMA cache_size={self._cache_size}")

    def _note_time(self) -> None:
        """The archive time of the entries this writer adds: one row of ``archive_times``
        (the rows of ids from here on described no entry left: drop them)."""
        self.db.execute("DELETE FROM archive_times WHERE first_id >= ?", (self._first_entry,))
        self.db.execute(
            "INSERT INTO archive_times (first_id, at) VALUES (?, ?)",
            (self._first_entry, self._now),
        )

    def point_at(self, key: int, chunk: int, text_at: tuple[int, int]) -> None:
        """The index re-imported an archived entry (``chunk``: where its text is now) and
        stored its text at ``text_at``: the entry points there (one copy of the text)."""
        if self.text_file is None:
            return
        self.end_bulk_load()
        self.db.execute(
            "UPDATE entries SET text_chunk = ?, text_start = ? WHERE key = ?",
            (-self._block_row(text_at[0]), text_at[1], key),
        )
        if chunk > 0:
            self.vacated_chunks.add(chunk)
        self.moved += 1

    def _elsewhere(self, place: tuple[int, object]) -> bool:
        """Is a known entry's text outside this generation's blocks (a chunk, or the file
        of another generation)? (A block row not saved yet is one of this writer's.)"""
        chunk, file = place
        if chunk > 0:
            return True
        return file is not None and file != self.text_file

    def _block_row(self, index_block: int) -> int:
        """The archive's row id for an index block of this generation (saved at commit)."""
        found = self._block_ids.get(index_block)
        if found is None:
            found = self._block_ids[index_block] = self._next_block_row
            self._next_block_row += 1
            self._unsaved_blocks.append(index_block)
            self._new_block_rows.append((index_block, found))
        return found

    def _save_blocks(self) -> None:
        """Copy the rows of the index blocks new entries point at (after the index wrote
        and fsynced them), in the open transaction."""
        if not self._unsaved_blocks or self._block_rows is None:
            return
        wanted, self._unsaved_blocks = self._unsaved_blocks, []
        rows = {int(str(row[0])): row[1:] for row in self._block_rows(wanted)}
        missing = [b for b in wanted if b not in rows]
        if missing:
            raise RuntimeError(f"index blocks {missing[:5]} are not written")
        self.db.executemany(
            "INSERT INTO blocks (id, file, offset, lower_size, original_size, count,"
            " lower_starts, original_starts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(self._block_ids[b], self.text_file, *rows[b]) for b in wanted],
        )

    def set_titles(self, agent: str, titles: dict[str, str]) -> None:
        if titles:
            self.db.executemany(
                "INSERT INTO titles (agent, session_id, title) VALUES (?, ?, ?)"
                " ON CONFLICT(agent, session_id) DO UPDATE SET title = excluded.title",
                [(agent, sid, title) for sid, title in titles.items()],
            )

    # -- chunks --------------------------------------------------------------------------------
    def _next(self, kind: int) -> tuple[int, int]:
        """Where the next bytes of this kind go: (chunk id, offset in the chunk)."""
        chunk = self._open.get(kind)
        if chunk is None:
            chunk = self._open[kind] = _OpenChunk(self._next_chunk)
            self._next_chunk += 1
        return chunk.id, chunk.size

    def _append(self, kind: int, data: bytes) -> None:
        """Add bytes at the place :meth:`_next` gave; seal the chunk when it is full."""
        chunk = self._open[kind]
        chunk.parts.append(data)
        chunk.size += len(data)
        if chunk.size >= CHUNK_BYTES:
            self._seal(kind)

    def _seal(self, kind: int) -> None:
        chunk = self._open.pop(kind, None)
        if chunk is None or not chunk.size:
            return
        data = b"".join(chunk.parts)
        job = self._executor().submit(codec.compress, data, LEVEL)
        self._pending.append((chunk.id, kind, data, job))
        while len(self._pending) > 2:
            self._write_pending()

    def _write_pending(self) -> None:
        chunk_id, kind, data, job = self._pending.popleft()
        self.store.append_chunk(kind, data, job.result(), chunk_id=chunk_id)

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentdex-archive")
        return self._pool

    @property
    def threads_started(self) -> bool:
        return self._pool is not None

    def stop_threads(self) -> None:
        """Stop the helper thread (call after a commit, before forking parse workers)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    # -- batches ---------------------------------------------------------------------------------
    def commit(self) -> None:
        """Write every open chunk, fsync the chunk file, then commit the batch's rows."""
        self._flush()
        self._save_blocks()
        for kind in (TEXT, RAW):
            self._seal(kind)
        while self._pending:
            self._write_pending()
        self.store.sync()
        self.db.execute("COMMIT")
        self.db.execute("BEGIN IMMEDIATE")

    def release_other_files(self) -> int:
        """Copy into chunks the texts entries keep in other generations' files (or in this
        one's, without a link: :attr:`text_file` None), forget those files and delete the
        archive's links to them; how many entries moved. Call at the end of a complete
        refresh: every record the generation holds was offered (and moved to its blocks).
        """
        self._flush()
        others = [
            str(r[0])
            for r in self.db.execute("SELECT DISTINCT file FROM blocks")
            if r[0] != self.text_file
        ]
        if not others:
            return 0
        self.end_bulk_load()
        from agentdex.archive.redaction import is_redacted, mask_piece

        self.commit()  # every open chunk written: chunk ids are not reserved any more
        mask = mask_piece if self.redact and is_redacted(self.store) else None
        moved = shared.move_into_chunks(self.store, others, mask)
        self._next_chunk = (
            int(self.db.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]) + 1
        )
        self.store.sync()
        self.db.execute("COMMIT")
        self.db.execute("BEGIN IMMEDIATE")
        shared.drop_links(self.store)
        return moved

    def close(self, ok: bool) -> None:
        """Commit (``ok``) or drop the open batch; release the file handles and the thread."""
        try:
            if ok:
                # what the index committed of a build that ended early (its spans wait for
                # its end); any other span commits and waits for the next writer
                self.derive(drop_past=False)
                self.end_bulk_load()
                self.commit()
            self.db.execute("ROLLBACK")
        finally:
            self._batch.clear()
            self._close_raw()
            self._pending.clear()
            self._open.clear()
            self.stop_threads()
