"""Append-only text blocks: records' text packed ~16 KiB at a time.

A block holds consecutive records (ids ``first_id .. first_id + count - 1``):
their lower-cased UTF-8 joined by NUL bytes (what substring verification
and full scans search, at memory speed with ``bytes.find``) with the byte
offset where each record starts, and the original text with character
offsets (what results show and what case-sensitive matching checks). Both
are compressed (zstd, :mod:`.codec`): the index stays smaller than the stores,
and verifying a candidate decompresses one small block. A block is written in
the same SQLite transaction as its records, so a reader's snapshot never
holds half a block. Which records a query must look at comes from the
postings (:mod:`agentdex.index.postings`).

How a block is stored (``blocks.lower_size`` and ``original_size`` bytes at
``offset``):

* ``lower_size`` 0 (this agentdex): only the original text is stored; the
  lower-cased bytes are ``original.lower()`` again, computed when read. The
  writer checks that they come out byte for byte as the postings saw them,
  and stores the old way when they do not. The original is ``o`` + a zstd
  frame, or ``d`` + where the file's dictionary lies (:data:`DICT_REF`:
  offset, size) + a frame compressed with it. The dictionary is trained
  once per text file on its first :data:`DICT_TRAIN_BYTES` of blocks and
  appended to the file itself, so whatever links the file (the archive:
  :mod:`agentdex.archive.shared`) reads it the same way.
* otherwise (earlier agentdex): the compressed lower-cased text, then the
  original as ``x``/``z`` (:func:`pack_original`).
"""

from __future__ import annotations

import os
import re
import sqlite3
import struct
import zlib
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from agentdex.errors import CorruptError
from agentdex.index import codec, rolekind, rowpack
from agentdex.index.context_stats import AddedTotals
from agentdex.index.postings import LONG_TOKEN, MAX_TERM_BYTES, rust_safe
from agentdex.index.scores import level_of
from agentdex.records import Record

if TYPE_CHECKING:
    from agentdex.index.columns import Columns
    from agentdex.index.packer import OrderedWorker

#: a block holds at most this many bytes of text (its records' lower-cased UTF-8 and a
#: separator each), unless one record alone holds more: a record that would take the open
#: block past it goes to the next. zstd packs an input of at most 16 KiB with the file's
#: dictionary by reference, a larger one after copying the dictionary's tables (~0.8 MB at
#: level 3) into its context first: blocks sealed once they passed 16 KiB spent ~15% of
#: the packing thread's CPU on that copy (docs/performance.md, s13-writer)
BLOCK_BYTES = 16 * 1024
BLOCK_FILE = "text.blocks"
#: a text file's dictionary is trained on its first this many bytes of original text
#: (docs/performance.md, s5-21a: 4 MB trained in ~0.6 s and packed blocks within 0.5% of
#: what 16 MB's dictionary did)
DICT_TRAIN_BYTES = 4 * 1024 * 1024
#: the largest dictionary trained (256 KiB packed 3% smaller than zstd's default 112 KiB,
#: 512 KiB 1% smaller still)
DICT_BYTES = 256 * 1024
#: after the ``d`` marker: where the dictionary lies in the same file (offset, size)
DICT_REF = struct.Struct("<QI")
#: a run of this many characters that are neither spaces nor ASCII punctuation may hold a
#: token too long for the postings (MAX_TERM_BYTES, at most 4 bytes a character)
LONG_TOKEN_CHARS = MAX_TERM_BYTES // 4
_LONG_RUN = re.compile(r"[^\s!-/:-@\[-`{-~]{" + str(LONG_TOKEN_CHARS) + ",}")
#: sealed blocks that may wait for the packing thread before this thread waits for it (with
#: 2, a replayed c250 build's writer spent ~9% of its wall waiting there; the packing thread
#: catches up while this one commits; a pending block holds ~16-40 KB)
PACK_AHEAD = 16
SEP = "\x00"
SEP_B = b"\x00"

_INSERT_RECORD = (
    "INSERT INTO record_rows (id, block_id, file_id, context_id, rk, role_x, kind_x,"
    " ts, loc, offset, tlen, thash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
#: :data:`_INSERT_RECORD` of rows with no stored role or kind (nearly every record: its
#: role and kind are known ones, packed in ``rk``), their two NULLs written in the
#: statement: Python's sqlite3 binds a None parameter through its adapters' lookup, and
#: the record rows' inserts spent ~30% less without those two (docs/performance.md,
#: s18-writer); the rows are :data:`_INSERT_RECORD`'s without ``role_x`` and ``kind_x``
_INSERT_PLAIN_RECORD = (
    "INSERT INTO record_rows (id, block_id, file_id, context_id, rk, role_x, kind_x,"
    " ts, loc, offset, tlen, thash) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?, ?)"
)
_INSERT_CONTEXT = (
    "INSERT INTO contexts (agent, store, session_id, model, cwd, project, branch, worktree,"
    " host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _xor(a: bytes, b: bytes) -> bytes:
    return (int.from_bytes(a, "little") ^ int.from_bytes(b, "little")).to_bytes(len(a), "little")


def pack_original(original: bytes, lower: bytes) -> bytes:
    """The original text, stored as its difference from the lower-cased text when it can be.

    When both have the same byte length (no case mapping changed a length), the
    XOR of the two is almost all zeros (0x20 where ASCII letters were capitals)
    and compresses to a few percent, much faster than the text itself. Marker
    byte: ``x`` for that delta, ``z`` for the plain text (zstd: :mod:`.codec`; an
    earlier agentdex wrote ``X`` and ``Z``, the same with zlib).
    """
    if len(original) == len(lower):
        return b"x" + codec.compress(_xor(original, lower), 1)
    return b"z" + codec.compress(original)


def unpack_original(
    blob: bytes, lower: Callable[[], bytes], dictionary: codec.Dictionary | None = None
) -> bytes:
    marker, body = blob[:1], blob[1:]
    if marker == b"d":
        if dictionary is None:
            raise CorruptError("a text block names a dictionary that was not read")
        return dictionary.decompress(body[DICT_REF.size :])
    if marker == b"o":
        return codec.decompress(body)
    if marker in (b"x", b"X"):
        return _xor(codec.decompress(body), lower())
    if marker in (b"z", b"Z"):
        return codec.decompress(body)
    return zlib.decompress(blob)  # format 2 before the delta: plain zlib


def dictionary_ref(blob: bytes) -> tuple[int, int] | None:
    """Where the dictionary of a block's original blob lies in its file (None: it has
    none)."""
    if blob[:1] != b"d" or len(blob) < 1 + DICT_REF.size:
        return None
    offset, size = DICT_REF.unpack_from(blob, 1)
    return int(offset), int(size)


def lowered(original: bytes) -> bytes:
    """The lower-cased bytes of a block's original text (both UTF-8, NUL-separated)."""
    if original.isascii():  # ASCII lower-cases the same as bytes: no decoding
        return original.lower()
    return encode(original.decode("utf-8", "surrogatepass").lower())


def pack_block(
    lower: bytes, original: bytes, dictionary: tuple[int, int, codec.Dictionary] | None
) -> tuple[bytes, bytes]:
    """A block's two stored parts: ``(b"", original)`` when the lower-cased text can be
    computed again from the original (nearly always), else both, the earlier way."""
    if lowered(original) != lower:
        return codec.compress(lower), pack_original(original, lower)
    if dictionary is None:
        return b"", b"o" + codec.compress(original)
    offset, size, trained = dictionary
    return b"", b"d" + DICT_REF.pack(offset, size) + trained.compress(original)


def pack_starts(starts: list[int]) -> bytes:
    """Where each record of a block starts, as stored: 2 bytes each (a block's records all
    start within its first ~16 KiB), 4 when one does not fit (or written before)."""
    return array("H" if max(starts) < 65536 else "I", starts).tobytes()


def unpack_starts(data: bytes, count: int) -> array[int] | None:
    """:func:`pack_starts` read back; the width follows from the byte count. None: not
    stored (no record of the block holds a NUL: the separators say where each starts)."""
    if not data and count:
        return None
    starts = array("H" if len(data) == 2 * count else "I")
    starts.frombytes(data)
    return starts


def separated_starts(text: bytes | str, count: int) -> array[int]:
    """Where each of ``count`` NUL-separated records starts in ``text`` (no record holds a
    NUL: :func:`unpack_starts` returned None)."""
    sep: bytes | str = SEP_B if isinstance(text, bytes) else SEP
    starts = array("I", [0])
    at = text.find(sep)  # type: ignore[arg-type]
    while at >= 0 and len(starts) < count:
        starts.append(at + 1)
        at = text.find(sep, at + 1)  # type: ignore[arg-type]
    if len(starts) != count:
        raise CorruptError(f"a text block holds {len(starts)} records, not {count}")
    return starts


def text_hash(data: bytes) -> int:
    """A stable 63-bit hash of a record's text (for deduplication), cheap to compute."""
    return (zlib.crc32(data) << 31) ^ zlib.adler32(data)


class Prepared(NamedTuple):
    """A record ready for the writer: everything that needs no index state (parse workers).

    A named tuple: parse workers pickle hundreds of thousands of these to the writer.
    """

    #: (agent, store, session_id, role, kind, timestamp, model, cwd, project, branch,
    #:  worktree, host, locator, offset), in ``records`` column order
    meta: tuple[object, ...]
    lower: bytes
    text: str
    thash: int
    #: the lower-cased text as tantivy takes it (no lone surrogates)
    postings_text: str
    rk: int
    flags: int
    level: int
    #: the ``contexts`` row's columns (agent, store, session_id, model, cwd, project, branch,
    #: worktree, host): the key both stores look the context up by
    context: tuple[object, ...]
    #: the stored row columns ``(rk, role_x, kind_x, ts, loc)`` both stores write
    #: (:func:`agentdex.index.rolekind.pack`, :mod:`agentdex.index.rowpack`), packed once
    cols: tuple[object, ...]
    #: the non-ASCII characters of the lower-cased text (terms may start with them)
    chars: str = ""
    #: the archive's key of the record when the parse worker computed it (None: the
    #: archive computes it; :func:`agentdex.ingest.pipeline.prepare_record`)
    key: int | None = None
    #: the source line the archive keeps for a prompt, as the parse worker read (and
    #: masked) it: b"" when there is none to keep, None when it was not read there
    raw: bytes | None = None


def has_long_token(lowered: str, size: int) -> bool:
    """Might this text hold a token too long for the postings? (cheap: long texts only)."""
    return size > LONG_TOKEN_CHARS and _LONG_RUN.search(lowered) is not None


#: builds a :class:`Prepared` from its fields without NamedTuple's ``__new__`` (a Python call
#: with the defaults' keyword handling, per record of every build)
_new_tuple = tuple.__new__


def prepare(record: Record) -> Prepared:
    """The per-record work of indexing that needs no index state (done in parse workers)."""
    text = record.text or ""
    lowered = text.lower()
    lower = lowered.encode("utf-8", "surrogatepass")
    role = record.role
    kind = record.kind
    timestamp = record.timestamp
    locator = record.locator
    meta = (
        record.agent,
        record.store,
        record.session_id,
        role,
        kind,
        timestamp,
        record.model,
        record.cwd,
        record.project,
        record.branch,
        record.worktree,
        record.host,
        locator,
        record.offset,
    )
    size = len(lower)
    packed = rolekind.pack(role, kind)
    postings = lowered if b"\xed" not in lower else rust_safe(lowered, lower)
    return _new_tuple(
        Prepared,
        (
            meta,
            lower,
            text,
            text_hash(text.encode("utf-8", "surrogatepass")),
            postings,
            packed[0],
            LONG_TOKEN if has_long_token(lowered, size) else 0,
            level_of(kind, role, size),
            meta[:3] + meta[6:12],
            (*packed, rowpack.pack_time(timestamp), rowpack.pack_locator(locator)),
            # the characters the postings' terms may start with (no lone surrogate: tantivy
            # never sees one, and SQLite cannot store one in the index's text_chars)
            "" if postings.isascii() else "".join(c for c in set(postings) if c > "\x7f"),
            None,
            None,
        ),
    )


class ContextIds:
    """Ids of ``contexts`` rows by their columns, read one session at a time on first use.

    The key is (agent, store, session_id, model, cwd, project, branch, worktree,
    host). A refresh that appends to one transcript touches one session:
    loading every context of a large index up front cost more than the
    append. The index and the archive both keep such a table.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._ids: dict[tuple[object, ...], int] = {}
        self._sessions: set[object] = set()

    def get_or_add(self, key: tuple[object, ...]) -> int:
        found = self._ids.get(key)
        if found is None and key[2] not in self._sessions:
            self._sessions.add(key[2])
            for row in self.db.execute(
                "SELECT id, agent, store, session_id, model, cwd, project, branch, worktree,"
                " host FROM contexts WHERE session_id IS ?",
                (key[2],),
            ):
                self._ids[tuple(row[1:])] = int(row[0])
            found = self._ids.get(key)
        if found is None:
            cursor = self.db.execute(_INSERT_CONTEXT, key)
            found = self._ids[key] = int(cursor.lastrowid or 0)
        return found


class BlockWriter:
    """Packs records into blocks; the caller commits (``flush`` then ``db.commit``)."""

    def __init__(self, db: sqlite3.Connection, file: BlockFile, *, keep_end: int = 0) -> None:
        self.db = db
        self.file = file
        row = db.execute("SELECT max(offset + lower_size + original_size) FROM blocks").fetchone()
        # drop what a writer killed before its commit appended (but never bytes another
        # store points at: ``keep_end``, :func:`agentdex.archive.shared.referenced_end`)
        file.truncate(max(row[0] or 0, keep_end))
        row = db.execute("SELECT max(id) FROM blocks").fetchone()
        self.next_block = (row[0] + 1) if row[0] is not None else 0
        row = db.execute(
            "SELECT max(m) FROM (SELECT max(id) AS m FROM record_rows"
            " UNION ALL SELECT max(first_id + count - 1) FROM blocks)"
        ).fetchone()
        self.next_record = (row[0] + 1) if row[0] is not None else 1
        self.contexts = ContextIds(db)
        #: sums the record rows as they are written (the writer merges them at its commits)
        self.totals = AddedTotals()
        self._lower: list[bytes] = []
        self._original: list[str] = []
        #: the open block's record rows: :data:`_INSERT_PLAIN_RECORD`'s, or (once ``_wide``)
        #: some of them :data:`_INSERT_RECORD`'s
        self._rows: list[tuple[object, ...]] = []
        self._wide = False
        #: the open block's runs' columns, summed into :attr:`totals` when it is sealed
        #: (:meth:`AddedTotals.add_run`'s arguments)
        self._runs: list[tuple[Any, ...]] = []
        self._size = 0
        self.text_bytes = 0
        #: the packing thread, started at the first seal
        self._packer: OrderedWorker | None = None
        #: sealed blocks whose packed bytes are not written yet, oldest first (their
        #: :func:`_pack_block` results come back from the packer in this order)
        self._pending: deque[tuple[int, int, int, bytes, bytes]] = deque()
        #: the text file's dictionary (offset, size, it), once trained
        self.dictionary = self._find_dictionary()
        #: the original texts of the first blocks, until a dictionary is trained on them
        self._samples: list[bytes] | None = [] if self.dictionary is None else None
        self._sampled = 0
        self._train_at = 0

    def _find_dictionary(self) -> tuple[int, int, codec.Dictionary] | None:
        """The dictionary the file's last blocks were packed with (None: they were not: a
        file written by an earlier agentdex, or too small to train one yet)."""
        row = self.db.execute(
            "SELECT offset, original_size FROM blocks WHERE lower_size = 0 AND id >"
            " (SELECT max(id) - 16 FROM blocks) ORDER BY id DESC LIMIT 1"
        ).fetchone()
        if row is None:
            return None
        ref = dictionary_ref(self.file.read(int(row[0]), min(int(row[1]), 1 + DICT_REF.size)))
        if ref is None:
            return None
        return (*ref, self.file.dictionary(*ref))

    def _train(self, samples: list[bytes]) -> None:
        """Train the file's dictionary and append it to the file (before any block packed
        with it: a writer killed before its commit cuts both away)."""
        try:
            data = codec.train(samples, DICT_BYTES)
        except codec.CodecError:
            # too few or too alike: try again on twice the text, then pack blocks alone
            self._train_at = self._sampled * 2
            if self._train_at > 4 * DICT_TRAIN_BYTES:
                self._samples = None
            return
        self._samples = None
        offset = self.file.append(data)
        self.dictionary = (offset, len(data), codec.Dictionary(data))

    def add_prepared(self, prepared: Prepared, file_id: int) -> tuple[int, int]:
        """Add one prepared record; returns its record id and context id."""
        from agentdex.index.columns import Columns

        first, contexts, _ = self.add_many(Columns.from_rows((prepared,)), file_id)
        return first, contexts[0]

    def add_many(
        self, items: Columns, file_id: int
    ) -> tuple[int, list[int], list[tuple[int, int]]]:
        """Add ``items`` in order; returns the first record id (the others follow it),
        each record's context id and where its text goes (block id, position).

        ``items``: a file's records as columns (a parse worker's wire,
        :class:`agentdex.index.columns.Columns`). Per record only what decides where the
        blocks end (its text's length) and its context (looked up once for a run of records
        that share its tuple: a worker's columns hold one tuple per change of context) run
        in Python; each block's run of records is taken whole, its rows made by one ``zip``
        of the columns' slices (a tuple of twelve built, and four lists appended to, one
        record at a time was the largest share of this thread's own Python)."""
        first = self.next_record + len(self._rows)
        lowers = items.lower_bytes()
        contexts: list[int] = []
        keep = contexts.append
        get_or_add = self.contexts.get_or_add
        last_context: object = None
        context_id = 0
        for context in items.contexts:
            if context is not last_context:
                context_id = get_or_add(context)
                last_context = context
            keep(context_id)
        lengths = list(map(len, lowers))
        # no record of the file stores its role or kind as text (nearly every file)
        plain = items.role_xs.count(None) == len(lowers) == items.kind_xs.count(None)
        refs: list[tuple[int, int]] = []
        size, start, held = self._size, 0, len(self._rows)
        for at, length in enumerate(lengths):
            if size + length + 1 > BLOCK_BYTES and (held or at > start):  # seal first
                self._take(items, file_id, first, start, at, contexts, lengths, lowers, refs, plain)
                self.seal()
                size, start, held = 0, at, 0
            size += length + 1
            if size >= BLOCK_BYTES:
                self._take(
                    items, file_id, first, start, at + 1, contexts, lengths, lowers, refs, plain
                )
                self.seal()
                size, start, held = 0, at + 1, 0
        self._take(
            items, file_id, first, start, len(lengths), contexts, lengths, lowers, refs, plain
        )
        self._size = size
        return first, contexts, refs

    def _take(
        self,
        items: Columns,
        file_id: int,
        first: int,
        start: int,
        end: int,
        contexts: list[int],
        lengths: list[int],
        lowers: list[bytes],
        refs: list[tuple[int, int]],
        plain: bool,
    ) -> None:
        """Put records ``start`` to ``end`` of ``items`` (ids from ``first + start``) in the
        open block, as one run: their rows (``plain``: no record's role or kind is stored
        as text, rows of :data:`_INSERT_PLAIN_RECORD`; else :data:`_INSERT_RECORD`'s),
        texts and refs; the run's columns are kept for :attr:`totals` (at the seal)."""
        if end <= start:
            return
        count = end - start
        block, held = self.next_block, len(self._rows)
        run_contexts = contexts[start:end]
        rks = items.rks[start:end]
        times = items.packed_times[start:end]
        # a row's columns in _INSERT_PLAIN_RECORD's order, or _INSERT_RECORD's with the
        # role and kind after the rk
        columns: list[Iterable[Any]] = [
            range(first + start, first + end),
            repeat(block, count),
            repeat(file_id, count),
            run_contexts,
            rks,
        ]
        if not plain:
            role_xs = items.role_xs[start:end]
            kind_xs = items.kind_xs[start:end]
            columns += [role_xs, kind_xs]
        columns += [
            times,
            items.locs[start:end],
            items.offsets[start:end],
            lengths[start:end],
            items.thashes[start:end],
        ]
        self._rows.extend(zip(*columns, strict=True))
        if plain:
            self._runs.append((file_id, run_contexts, rks, times, None, None))
        else:
            self._wide = True
            self._runs.append((file_id, run_contexts, rks, times, role_xs, kind_xs))
        self._lower.extend(lowers[start:end])
        self._original.extend(items.texts[start:end])
        refs.extend(zip(repeat(block, count), range(held, held + count), strict=True))

    def seal(self) -> None:
        """Close the open block: its records now, its text once a helper thread packed it.

        Compression runs on one helper thread (zlib releases the GIL) while
        this thread keeps going; ``flush`` waits for it. Blocks are inserted
        in order, before any commit.
        """
        if not self._rows:
            return
        lower = SEP_B.join(self._lower)
        joined = SEP.join(self._original)
        original = encode(joined)
        if joined.count(SEP) == len(self._original) - 1:
            # no record holds a NUL: where each starts is where a separator ends, on reading
            packed_lower_starts = packed_original_starts = b""
        else:
            packed_lower_starts = pack_starts(_starts(self._lower))
            packed_original_starts = pack_starts(_starts(self._original))
        if self._samples is not None:
            self._samples.append(original)
            self._sampled += len(original)
            if self._sampled >= max(DICT_TRAIN_BYTES, self._train_at):
                self._train(self._samples)
        self._start_packer().submit(lower, original, self.dictionary)
        self._pending.append(
            (
                self.next_block,
                self.next_record,
                len(self._rows),
                packed_lower_starts,
                packed_original_starts,
            )
        )
        if self._wide:  # the plain rows with their two NULLs, in order
            self.db.executemany(
                _INSERT_RECORD,
                [row if len(row) == 12 else (*row[:5], None, None, *row[5:]) for row in self._rows],
            )
        else:
            self.db.executemany(_INSERT_PLAIN_RECORD, self._rows)
        add_run = self.totals.add_run
        for run in self._runs:
            add_run(*run)
        self._runs = []
        self.next_record += len(self._rows)
        self.next_block += 1
        self._lower, self._original, self._rows, self._size = [], [], [], 0
        self._wide = False
        if len(self._pending) > PACK_AHEAD:
            self._write_ready()

    @property
    def threads_started(self) -> bool:
        return self._packer is not None

    def _start_packer(self) -> OrderedWorker:
        if self._packer is None:
            from agentdex.index.packer import OrderedWorker

            self._packer = OrderedWorker(_pack_block, name=PACK_THREAD, initializer=name_os_thread)
        return self._packer

    def _write_packed(self, count: int = 1) -> None:
        """Write the ``count`` oldest pending blocks once packed: their bytes with one write
        to the text file, in order, and their rows with one insert (a write and an insert
        a block were ~4% of this thread in a replayed cold build: docs/performance.md,
        s18-writer)."""
        rows: list[tuple[object, ...]] = []
        parts: list[bytes] = []
        offset = self.file.end
        packer = self._packer
        for _ in range(count):
            assert packer is not None  # a block was sealed
            block_id, first_id, records, lower_starts, original_starts = self._pending.popleft()
            lower, original, text_bytes = packer.result()
            rows.append(
                (
                    block_id,
                    first_id,
                    records,
                    offset,
                    len(lower),
                    len(original),
                    lower_starts,
                    original_starts,
                )
            )
            if lower:
                parts.append(lower)
            parts.append(original)
            offset += len(lower) + len(original)
            self.text_bytes += text_bytes
        if rows:
            written = self.file.append(parts[0] if len(parts) == 1 else b"".join(parts))
            assert written == rows[0][3]
            self.db.executemany(
                "INSERT INTO blocks (id, first_id, count, offset, lower_size, original_size,"
                " lower_starts, original_starts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    def _write_ready(self) -> None:
        """Write the oldest pending block, waiting for it, and those after it already
        packed (:data:`PACK_AHEAD` sealed blocks wait)."""
        assert self._packer is not None  # a block was sealed
        self._write_packed(min(max(1, self._packer.done()), len(self._pending)))

    def flush(self) -> None:
        """Seal the open block and write every packed block; then commit."""
        self.seal()
        self._write_packed(len(self._pending))

    def close(self) -> None:
        """Stop the helper thread (pending, uncommitted blocks are dropped)."""
        if self._packer is not None:
            self._packer.stop()
            self._packer = None
        self._pending.clear()


#: the packing thread's name as the system shows it (``/proc/PID/task/TID/comm``)
PACK_THREAD = "agentdex-pack"


def name_os_thread(name: str = PACK_THREAD) -> None:
    """Give the calling thread ``name`` where ``top``, ``perf`` and the build's bench see it
    (Linux; Python's thread names stay inside Python, and every thread of the writer showed
    as ``python``: the packing thread's CPU could not be told from the others')."""
    from agentdex.index.memory import libc

    lib = libc()
    if lib is not None and hasattr(lib, "prctl"):
        lib.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME


def _starts(parts: list[bytes] | list[str]) -> list[int]:
    """Where each of ``parts`` starts once they are joined by one separator each."""
    starts: list[int] = []
    pos = 0
    for part in parts:
        starts.append(pos)
        pos += len(part) + 1
    return starts


def _pack_block(
    lower: bytes, original: bytes, dictionary: tuple[int, int, codec.Dictionary] | None
) -> tuple[bytes, bytes, int]:
    """Helper thread: the block's stored parts (:func:`pack_block`)."""
    return (*pack_block(lower, original, dictionary), len(lower))


@dataclass(slots=True)
class Block:
    """A block as read back for searching."""

    id: int
    first_id: int
    count: int
    _lower_blob: bytes
    #: None: not stored (:func:`unpack_starts`), found from the text when first asked
    _lower_starts: array[int] | None
    _original_blob: bytes
    _original_starts: array[int] | None
    _original: str | None = None
    _lower: bytes | None = None
    #: the file's dictionary when the original was packed with one
    dictionary: codec.Dictionary | None = None
    #: the original's UTF-8 bytes, once decompressed (:attr:`raw`)
    _raw: bytes | None = None
    #: :attr:`raw` cut at its separators, one ``bytes`` a record, once cut
    _raw_records: list[bytes] | None = None
    #: records are cut from :attr:`raw` at its separators (no record holds a NUL, and the
    #: lower-cased text is not stored apart): one record is read without the whole block
    _separated: bool = False

    def __post_init__(self) -> None:
        self._separated = not self._lower_blob and self._original_starts is None

    @property
    def lower_starts(self) -> array[int]:
        """Where each record starts in :attr:`lower` (bytes)."""
        if self._lower_starts is None:
            self._lower_starts = separated_starts(self.lower, self.count)
        return self._lower_starts

    @property
    def original_starts(self) -> array[int]:
        """Where each record starts in :attr:`original` (characters)."""
        if self._original_starts is None:
            self._original_starts = separated_starts(self.original, self.count)
        return self._original_starts

    @property
    def lower(self) -> bytes:
        """The whole block lower-cased (what scans and substring checks search)."""
        if self._lower is None:
            if self._lower_blob:
                self._lower = codec.decompress(self._lower_blob)
            else:  # stored as the original only (the module's docstring)
                self._lower = lowered(self.raw)
        return self._lower

    @property
    def raw(self) -> bytes:
        """The original text's UTF-8 bytes (what :attr:`original` decodes)."""
        if self._raw is None:
            self._raw = unpack_original(self._original_blob, lambda: self.lower, self.dictionary)
        return self._raw

    @property
    def original(self) -> str:
        if self._original is None:
            self._original = self.raw.decode("utf-8", "surrogatepass")
        return self._original

    def _raw_record(self, index: int) -> bytes | None:
        """Record ``index``'s original UTF-8 bytes, when they can be cut from :attr:`raw` by
        its separators (no record holds a NUL, and the lower-cased text is not stored apart);
        None otherwise."""
        if not self._separated:
            return None
        records = self._raw_records
        if records is None:
            # one split in C: a block read for one candidate cost a find per record here
            records = self.raw.split(SEP_B, self.count - 1)
            if len(records) != self.count:
                raise CorruptError(f"a text block holds {len(records)} records, not {self.count}")
            self._raw_records = records
        return records[index]

    def lower_span(self, index: int) -> tuple[int, int]:
        start = self.lower_starts[index]
        end = self.lower_starts[index + 1] - 1 if index + 1 < self.count else len(self.lower)
        return start, end

    def lower_record(self, index: int) -> bytes:
        """Record ``index`` lower-cased (UTF-8): only that record is lower-cased when the block
        is stored as its original (lower-casing maps character by character, the final sigma
        aside, which looks no further than the NUL between records)."""
        if self._lower is None:
            raw = self._raw_record(index)
            if raw is not None:
                return lowered(raw)
        start, end = self.lower_span(index)
        return self.lower[start:end]

    def original_text(self, index: int) -> str:
        if self._original is None:
            raw = self._raw_record(index)
            if raw is not None:
                return raw.decode("utf-8", "surrogatepass")
        text = self.original
        start = self.original_starts[index]
        end = self.original_starts[index + 1] - 1 if index + 1 < self.count else len(text)
        return text[start:end]

    def lower_text(self, index: int) -> str:
        return self.lower_record(index).decode("utf-8", "surrogatepass")

    def record_at(self, pos: int) -> int:
        return bisect_right(self.lower_starts, pos) - 1

    def original_record_at(self, pos: int) -> int:
        return bisect_right(self.original_starts, pos) - 1


class BlockFile:
    """The generation's ``text.blocks``: appended by the one writer, read with ``pread``."""

    def __init__(self, gen: Path, *, write: bool = False) -> None:
        path = gen / BLOCK_FILE
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND if write else os.O_RDONLY
        try:
            self.fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            self.fd = -1  # a generation with no text yet
        self.end = os.fstat(self.fd).st_size if self.fd >= 0 else 0
        self._dictionaries: dict[tuple[int, int], codec.Dictionary] = {}

    def dictionary(self, offset: int, size: int) -> codec.Dictionary:
        """The dictionary stored at ``offset`` (read once per file object)."""
        return read_dictionary(self._dictionaries, self.read, offset, size)

    def read(self, offset: int, size: int) -> bytes:
        if self.fd < 0:
            return b""
        return os.pread(self.fd, size, offset)

    def append(self, data: bytes) -> int:
        """Write ``data`` at the end; returns its offset."""
        offset = self.end
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]
        self.end += len(data)
        return offset

    def truncate(self, size: int) -> None:
        if self.end > size:
            os.ftruncate(self.fd, size)
            self.end = size

    def sync(self) -> None:
        if self.fd >= 0:
            os.fsync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


#: the columns of a ``blocks`` row :func:`block_from_row` takes
LOAD_ROW = "id, first_id, count, offset, lower_size, original_size, lower_starts, original_starts"


def load_block(db: sqlite3.Connection, file: BlockFile, block_id: int) -> Block | None:
    row = db.execute(f"SELECT {LOAD_ROW} FROM blocks WHERE id = ?", (block_id,)).fetchone()
    return None if row is None else block_from_row(file, row)


def block_from_row(file: BlockFile, row: tuple[Any, ...]) -> Block:
    """The block a ``blocks`` row (:data:`LOAD_ROW`) describes, its bytes read from ``file``
    (no SQLite: a reader's helper thread may run it)."""
    block_id = row[0]
    data = file.read(row[3], row[4] + row[5])
    if len(data) != row[4] + row[5]:
        raise CorruptError(f"text block {block_id} is cut short in {BLOCK_FILE}")
    lower_starts = unpack_starts(row[6], row[2])
    original_starts = unpack_starts(row[7], row[2])
    original = data[row[4] :]
    ref = dictionary_ref(original)
    return Block(
        row[0],
        row[1],
        row[2],
        data[: row[4]],
        lower_starts,
        original,
        original_starts,
        dictionary=None if ref is None else file.dictionary(*ref),
    )


#: the columns of a ``blocks`` row :func:`blocks_in` takes
BLOCK_ROW = "offset, lower_size, original_size, count, lower_starts, original_starts"


def blocks_in(data: bytes, rows: Iterable[tuple[Any, ...]]) -> Iterator[Block]:
    """The blocks ``rows`` (:data:`BLOCK_ROW`, of the index's or the archive's ``blocks``)
    list in a text file's bytes ``data`` (checks and tools that read a whole file)."""
    cache: dict[tuple[int, int], codec.Dictionary] = {}
    for offset, lower_size, original_size, count, lower_raw, original_raw in rows:
        original = data[offset + lower_size : offset + lower_size + original_size]
        ref = dictionary_ref(original)
        dictionary = None
        if ref is not None:
            dictionary = read_dictionary(cache, lambda at, n: data[at : at + n], *ref)
        yield Block(
            -1,
            -1,
            int(count),
            data[offset : offset + lower_size],
            unpack_starts(lower_raw, int(count)),
            original,
            unpack_starts(original_raw, int(count)),
            dictionary=dictionary,
        )


def read_dictionary(
    cache: dict[tuple[int, int], codec.Dictionary],
    read: Callable[[int, int], bytes],
    offset: int,
    size: int,
) -> codec.Dictionary:
    """The dictionary at ``offset`` of a text file, through ``cache``."""
    found = cache.get((offset, size))
    if found is None:
        data = read(offset, size)
        if len(data) != size:
            raise CorruptError(f"a text dictionary is cut short in {BLOCK_FILE}")
        found = cache[(offset, size)] = codec.Dictionary(data)
    return found
