"""The archive on disk: one SQLite database and one append-only file of compressed chunks.

Layout under ``<index root>/archive/`` (beside the index generations, so a
rebuild never touches it)::

    archive.db            SQLite (WAL): entries (one per distinct record), their
                          contexts and source paths, titles, tombstones, the chunk list
    chunks-000001.blobs   compressed chunks (zstd) of ~256 KiB: the texts no index block
                          holds, and (in chunks of their own) raw source lines kept for records
    text-gen-*.blocks     hard links to index generations' text.blocks: the one copy of
                          the texts the index holds (:mod:`agentdex.archive.shared`)

Crash safety, the pattern of the index's ``text.blocks``: a batch's chunks
are appended and fsynced *before* the SQLite transaction that references
them commits, and a writer opening the archive truncates the file to the
end of the last chunk SQLite lists. So a process killed at any point leaves
either the whole batch or none of it visible, and never a reference to
bytes that are not on disk.

Removal (``forget``, ``prune``) writes a new chunk file without the removed
text (unaffected chunks are copied as they are, affected ones re-packed),
fsyncs it, then switches ``meta.blob_file`` to it in the same transaction
that deletes the entries; the old file is deleted after the commit (or, if
the process died first, by the next writer). ``secure_delete`` zeroes the
deleted rows' pages and the WAL is truncated after the commit, so removed
text leaves every archive file (:mod:`agentdex.archive.rewrite`).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

from agentdex.archive.rewrite import RAW as RAW
from agentdex.archive.rewrite import TEXT as TEXT
from agentdex.archive.rewrite import ChunkRewrites, blob_name
from agentdex.archive.schema import ARCHIVED_AT_SQL, ENTRY_INDEXES, TABLES, migrate
from agentdex.archive.shared import SharedBlocks
from agentdex.errors import CorruptError
from agentdex.index import codec
from agentdex.records import Record, record_from_columns

ARCHIVE_DIR = "archive"
#: migrations that copy the entries into a new table (the old one's pages are freed)
REWRITES_ENTRIES = frozenset(
    {"m004_compact_entries", "m005_packed_entries", "m006_entries_key_index"}
)
#: free pages worth a VACUUM after such a migration
VACUUM_BYTES = 16 * 1024 * 1024
DB_NAME = "archive.db"
FORMAT = "agentdex-archive-1"
#: uncompressed bytes per chunk: big enough to find repeats, small to read one record
CHUNK_BYTES = 256 * 1024
#: zstd level 3 (:mod:`agentdex.index.codec`): smaller than zlib 4 and several times faster;
#: chunks written by an earlier agentdex (zlib) are still read
LEVEL = codec.LEVEL
CHUNK_CACHE = 8
#: key, the record's columns in :data:`agentdex.records.RECORD_COLUMNS` order (1-15),
#: text (16-18: a negative chunk is a shared index block, :meth:`ArchiveStore.text`) and
#: raw line (19-21) places, archived_at (22)
ENTRY_COLUMNS = (
    "e.key, c.agent, c.store, s.path, e.locator, c.session_id, e.role, e.kind, e.timestamp,"
    " c.model, c.cwd, c.project, c.branch, c.worktree, c.host, e.offset, e.text_chunk,"
    f" e.text_start, e.text_size, e.raw_chunk, e.raw_start, e.raw_size, {ARCHIVED_AT_SQL}"
)
ENTRY_FROM = "entries e JOIN contexts c ON c.id = e.context_id JOIN sources s ON s.id = e.source_id"


class ArchiveCorruptError(CorruptError):
    """The archive's files are not what agentdex wrote. Never rebuilt silently: it may hold
    the only copy of conversations, and the tombstones of forgotten ones."""


def archive_path(root: Path) -> Path:
    """The archive dir of the index at ``root``."""
    return root / ARCHIVE_DIR


class ArchiveStore(ChunkRewrites):
    """An open archive: ``write=True`` for the one writer (under the index writer lock)."""

    def __init__(self, root: Path, *, write: bool) -> None:
        self.dir = archive_path(root)
        self.write = write
        if write:
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        elif not (self.dir / DB_NAME).is_file():
            raise FileNotFoundError(self.dir / DB_NAME)
        try:
            # the writer's connection is handed to a thread once, whole: a first build's
            # entries are made there while the index builds its own indexes
            # (IndexWriter.finish's ``while_merging``); one thread uses it at a time
            self.db = sqlite3.connect(
                self.dir / DB_NAME, timeout=30.0, isolation_level=None, check_same_thread=not write
            )
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA secure_delete=ON")
            self.db.execute("PRAGMA cache_size=-32000")  # entries are keyed by hash: random pages
            if write:
                self._migrate()
            else:
                self.db.execute("PRAGMA query_only=1")
                if not self._schema_complete():
                    self.db.close()
                    raise FileNotFoundError(self.dir / DB_NAME)
            self.blob_file = self._meta("blob_file") or blob_name(1)
        except sqlite3.DatabaseError as exc:
            raise ArchiveCorruptError(
                f"archive database {self.dir / DB_NAME} is unreadable: {exc}"
                "; move the archive folder away to start a new one"
            ) from exc
        self._fd = -1
        self._end = 0
        #: entries whose text or raw line a transforming rewrite changed
        self.transformed: set[int] = set()
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._chunk_rows: dict[int, tuple[int, int]] = {}
        #: the index text blocks entries point at (one copy of the text)
        self.shared = SharedBlocks(self.dir, self.db)
        if write:
            self._open_blobs_for_writing()
        else:
            self._open_blobs_for_reading()

    # -- schema and meta ----------------------------------------------------------------
    def _migrate(self) -> None:
        """Apply pending migrations (:mod:`.schema`) and the format mark in one transaction
        (a kill leaves none of them)."""
        fmt = None
        if self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
            fmt = self._meta("format")
        if fmt is not None and fmt != FORMAT:
            raise ArchiveCorruptError(f"{self.dir / DB_NAME}: unknown archive format {fmt!r}")
        self.db.execute("BEGIN IMMEDIATE")
        try:
            applied = migrate(self.db)
            # a first build killed before its end left the entries without their indexes
            for _, statement in ENTRY_INDEXES:
                self.db.execute(statement)
            if fmt is None:
                self.set_meta("format", FORMAT)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        if REWRITES_ENTRIES & set(applied) and fmt is not None:
            self._vacuum()

    def _vacuum(self) -> None:
        """Give back the pages a migration that copied the entries freed (the old table's:
        as many as the archive's rows take), once; a reader in the way leaves it for later
        growth to reuse."""
        pages = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        if pages * self.db.execute("PRAGMA page_size").fetchone()[0] >= VACUUM_BYTES:
            with suppress(sqlite3.OperationalError):
                self.db.execute("VACUUM")
            self.checkpoint()

    def _schema_complete(self) -> bool:
        """Whether a writer finished creating the schema (one killed by an older agentdex,
        which created it table by table, may have left only some tables): else no archive."""
        names = {
            str(row[0])
            for row in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        return set(TABLES) <= names

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def meta_int(self, key: str, default: int = 0) -> int:
        value = self._meta(key)
        return int(value) if value is not None and value.lstrip("-").isdigit() else default

    def set_meta(self, key: str, value: object) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )

    # -- the blob file --------------------------------------------------------------------
    def _open_blobs_for_writing(self) -> None:
        """Open the named chunk file; drop a killed writer's unreferenced tail and old files."""
        path = self.dir / self.blob_file
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        end = self.db.execute("SELECT max(offset + size) FROM chunks").fetchone()[0] or 0
        size = os.fstat(self._fd).st_size
        if size < end:
            raise ArchiveCorruptError(
                f"{path} is shorter than its chunk list ({size} < {end} bytes)"
                "; move the archive folder away to start a new one"
            )
        if size > end:
            os.ftruncate(self._fd, end)
        self._end = end
        for other in self.dir.glob("chunks-*.blobs"):
            if other.name != self.blob_file:
                other.unlink(missing_ok=True)
        for stale in self.shared.unreferenced_links():
            stale.unlink(missing_ok=True)  # a release killed before it deleted them

    def _open_blobs_for_reading(self) -> None:
        """Open the chunk file and the text links this read snapshot names (a removal or a
        release may switch or delete files meanwhile: then try again on a newer snapshot)."""
        for _attempt in range(5):
            self.db.execute("BEGIN")
            self.blob_file = self._meta("blob_file") or blob_name(1)
            try:
                try:
                    self._fd = os.open(self.dir / self.blob_file, os.O_RDONLY)
                except FileNotFoundError:
                    if self.db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone():
                        raise
                self.shared.open_listed()
                return
            except (FileNotFoundError, ArchiveCorruptError):
                self.shared.close()
                if self._fd >= 0:
                    os.close(self._fd)
                    self._fd = -1
                self.db.execute("ROLLBACK")
        raise ArchiveCorruptError(f"{self.dir / self.blob_file} is missing")

    def append_chunk(
        self, kind: int, data: bytes, packed: bytes | None = None, chunk_id: int | None = None
    ) -> int:
        """Append ``data`` as a chunk (``packed``: already compressed); its chunk id.

        The chunk's row is inserted in the caller's open transaction, which
        must commit only after :meth:`sync`.
        """
        if packed is None:
            packed = codec.compress(data, LEVEL)
        offset = self._end
        self._write(packed)
        cursor = self.db.execute(
            "INSERT INTO chunks (id, kind, offset, size, raw_size) VALUES (?, ?, ?, ?, ?)",
            (chunk_id, kind, offset, len(packed), len(data)),
        )
        chunk_id = int(cursor.lastrowid or 0)
        self._chunk_rows[chunk_id] = (offset, len(packed))
        self._cache[chunk_id] = data
        self._trim_cache()
        return chunk_id

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self._end += len(data)

    def sync(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)

    def chunk(self, chunk_id: int) -> bytes:
        """The uncompressed bytes of a chunk (a few recent ones are cached)."""
        cached = self._cache.get(chunk_id)
        if cached is not None:
            self._cache.move_to_end(chunk_id)
            return cached
        where = self._chunk_rows.get(chunk_id)
        if where is None:
            row = self.db.execute(
                "SELECT offset, size FROM chunks WHERE id = ?", (chunk_id,)
            ).fetchone()
            if row is None:
                raise ArchiveCorruptError(f"archive chunk {chunk_id} is not listed in {DB_NAME}")
            where = (int(row[0]), int(row[1]))
        offset, size = where
        packed = os.pread(self._fd, size, offset) if self._fd >= 0 else b""
        try:
            data = codec.checked_decompress(packed)
        except codec.CodecError as exc:
            raise ArchiveCorruptError(
                f"archive chunk {chunk_id} in {self.blob_file} is damaged"
            ) from exc
        self._cache[chunk_id] = data
        self._trim_cache()
        return data

    def _trim_cache(self) -> None:
        while len(self._cache) > CHUNK_CACHE:
            self._cache.popitem(last=False)

    def text(self, chunk_id: int, start: int, size: int) -> str:
        """An entry's text: ``size`` bytes at ``start`` in a chunk, or (``chunk_id``
        negative: minus a ``blocks`` row) the record at position ``start`` of an index
        text block the archive shares (:mod:`agentdex.archive.shared`)."""
        if chunk_id < 0:
            return self.shared.text(-chunk_id, start)
        return self.chunk(chunk_id)[start : start + size].decode("utf-8", "surrogatepass")

    def raw(self, chunk_id: int | None, start: int | None, size: int | None) -> bytes | None:
        if chunk_id is None or start is None or size is None:
            return None
        return self.chunk(chunk_id)[start : start + size]

    def checkpoint(self) -> None:
        """Fold the WAL into the database and truncate it (removed rows leave the WAL too)."""
        # a reader holding an old snapshot makes it fail: the next checkpoint folds it
        with suppress(sqlite3.OperationalError):
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- tombstones and titles ----------------------------------------------------------------
    def tombstones(self, after: int = 0) -> list[tuple[int, str | None, str]]:
        """``(id, agent, session_id)`` of every tombstone with an id past ``after``."""
        rows = self.db.execute(
            "SELECT id, agent, session_id FROM tombstones WHERE id > ? ORDER BY id", (after,)
        )
        return [(int(r[0]), r[1], str(r[2])) for r in rows]

    def add_tombstones(self, sessions: Iterable[tuple[str | None, str]], reason: str) -> int:
        """Record forgotten conversations (in the caller's transaction); the newest id."""
        now = time.time()
        for agent, session_id in sessions:
            self.db.execute(
                "INSERT INTO tombstones (agent, session_id, reason, created_at) VALUES (?,?,?,?)",
                (agent, session_id, reason, now),
            )
        return int(self.db.execute("SELECT coalesce(max(id), 0) FROM tombstones").fetchone()[0])

    def title(self, agent: str, session_id: str) -> str | None:
        row = self.db.execute(
            "SELECT title FROM titles WHERE agent = ? AND session_id = ?", (agent, session_id)
        ).fetchone()
        return None if row is None else str(row[0])

    # -- reading -------------------------------------------------------------------------------
    def entries(self, where: str = "1", params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of ``ENTRY_COLUMNS`` (``e`` entries, ``c`` contexts, ``s`` sources)."""
        return self.db.execute(
            f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE {where}", list(params)
        ).fetchall()

    def iter_entries(
        self, where: str = "1", params: Iterable[Any] = (), order: str = ""
    ) -> Iterator[tuple[Any, ...]]:
        """:meth:`entries` one row at a time, ``ORDER BY order`` (nothing accumulates:
        an export of the whole archive reads it as it writes)."""
        sql = f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE {where}"
        yield from self.db.execute(sql + (f" ORDER BY {order}" if order else ""), list(params))

    def has_entries(self) -> bool:
        return self.db.execute("SELECT 1 FROM entries LIMIT 1").fetchone() is not None

    def entries_by_key(self, keys: list[int]) -> list[tuple[Any, ...]]:
        """The entry rows (``ENTRY_COLUMNS``) of these keys."""
        found: list[tuple[Any, ...]] = []
        for i in range(0, len(keys), 900):
            chunk = keys[i : i + 900]
            found.extend(self.entries(f"e.key IN ({','.join('?' * len(chunk))})", chunk))
        return found

    def sessions(self) -> set[tuple[str, str]]:
        """Every (agent, session) with an archived entry."""
        return {
            (str(a), str(s))
            for a, s in self.db.execute(
                "SELECT DISTINCT c.agent, c.session_id FROM contexts c"
                " WHERE EXISTS (SELECT 1 FROM entries e WHERE e.context_id = c.id)"
            )
        }

    def record(self, entry: tuple[Any, ...]) -> Record:
        """The normalized record of an entry row (``ENTRY_COLUMNS``)."""
        return record_from_columns(entry[1:16], self.text(entry[16], entry[17], entry[18]))

    def session_context_ids(self, agent: str, session_id: str) -> list[int]:
        return [
            int(r[0])
            for r in self.db.execute(
                "SELECT id FROM contexts WHERE session_id = ? AND agent = ?", (session_id, agent)
            )
        ]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self.shared.close()
        self.db.close()


def open_reader(root: Path) -> ArchiveStore | None:
    """The archive for reading (None when there is none yet)."""
    try:
        return ArchiveStore(root, write=False)
    except FileNotFoundError:
        return None
