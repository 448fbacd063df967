"""Rewriting the archive's chunk file without removed text, or through a transform.

Named methods of :class:`agentdex.archive.store.ArchiveStore` (this is its
mixin): ``forget`` and ``prune`` remove entries and every byte of their text,
a change of the redaction setting passes every text and raw line through a
transform, and texts that moved to the index's blocks leave their chunks.
Each writes a new chunk file in one transaction: unaffected chunks are
copied as they are, affected ones re-packed from the entries still in them;
the old file is deleted after the commit (the store module's docstring).
"""

from __future__ import annotations

import os
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from agentdex.index import codec

#: changes one text or raw line (``kind``, its bytes) while the chunks are rewritten
Transform = Callable[[int, bytes], bytes | None]
#: chunk kinds: records' texts, raw source lines
TEXT, RAW = 0, 1
#: the entries whose text (``column`` text) or raw line (raw) lies in one chunk
CHUNK_USERS = (
    "SELECT id, {column}_start, {column}_size FROM entries WHERE {column}_chunk = ?"
    " ORDER BY {column}_start"
)
#: Without an index, :data:`CHUNK_USERS` reads every entry: re-packing many chunks would read
#: the whole table once per chunk (a one-time redaction of a 1 GB history's archive, 2,586
#: chunks x 1.25 M entries, ran for more than half an hour). A rewrite that re-packs more
#: than this many chunks builds these indexes inside its transaction (seconds, once) and
#: drops them before it commits, so the archive's writes never pay for them.
SCANS_BEFORE_LOOKUP = 8
LOOKUP_INDEXES = ("rewrite_text_chunk", "rewrite_raw_chunk")
LOOKUP_DDL = (
    "CREATE INDEX IF NOT EXISTS rewrite_text_chunk ON entries(text_chunk, text_start)",
    "CREATE INDEX IF NOT EXISTS rewrite_raw_chunk ON entries(raw_chunk, raw_start)",
)


def blob_name(number: int) -> str:
    """The name of the ``number``th chunk file (each rewrite writes the next)."""
    return f"chunks-{number:06d}.blobs"


class _Store(Protocol):
    """What these methods use of the store they are mixed into."""

    dir: Path
    db: sqlite3.Connection
    blob_file: str
    transformed: set[int]
    _fd: int
    _end: int
    _cache: OrderedDict[int, bytes]
    _chunk_rows: dict[int, tuple[int, int]]

    def append_chunk(
        self, kind: int, data: bytes, packed: bytes | None = None, chunk_id: int | None = None
    ) -> int: ...
    def _write(self, data: bytes) -> None: ...
    def set_meta(self, key: str, value: object) -> None: ...
    def checkpoint(self) -> None: ...
    def _in_new_file(self, body: Callable[[], int]) -> int: ...
    def _rewrite_without(self, affected: set[int], transform: Transform | None = None) -> None: ...

    def _repack(self, *args: Any, **kw: Any) -> None: ...  # ChunkRewrites._repack


class ChunkRewrites:
    """Mixin of the archive store: removal and rewrites of the chunk file."""

    def remove_entries(self: _Store, keys: Iterable[int]) -> int:
        """Delete entries (by key) and every byte of their text from the archive's files;
        how many. Runs its own transaction (the caller holds the writer lock, no batch open).
        """
        doomed = sorted(set(keys))
        if not doomed:
            return 0

        def remove() -> int:
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS doomed (id INTEGER PRIMARY KEY)")
            self.db.execute("DELETE FROM doomed")
            self.db.executemany(
                "INSERT OR IGNORE INTO doomed (id) VALUES (?)", ((i,) for i in doomed)
            )
            inside = "key IN (SELECT id FROM doomed)"
            removed = self.db.execute(f"SELECT count(*) FROM entries WHERE {inside}").fetchone()[0]
            affected = {
                int(c)
                for row in self.db.execute(
                    f"SELECT text_chunk, raw_chunk FROM entries WHERE {inside}"
                )
                for c in row
                if c is not None and c > 0  # negative: a shared index block
            }
            self.db.execute(f"DELETE FROM entries WHERE {inside}")
            self.db.execute("DELETE FROM doomed")
            self._rewrite_without(affected)
            return int(removed)

        return self._in_new_file(remove)

    def rewrite_all(self: _Store, transform: Transform, then: Callable[[], int]) -> int:
        """Pass every text and raw line through ``transform`` into a new chunk file, then
        run ``then()`` (which sees :attr:`transformed`) in the same transaction; its result.
        The old file's bytes leave the disk with the old file."""

        def rewrite() -> int:
            self.transformed.clear()
            self._rewrite_without(set(), transform)
            return then()

        return self._in_new_file(rewrite)

    def repack_chunks(self: _Store, chunk_ids: Iterable[int]) -> None:
        """Re-pack these chunks from the entries still in them (texts that moved to the
        index's blocks leave the disk), in a new chunk file. Its own transaction."""
        affected = set(chunk_ids)

        def repack() -> int:
            self._rewrite_without(affected)
            return 0

        self._in_new_file(repack)

    def _in_new_file(self: _Store, body: Callable[[], int]) -> int:
        """Run ``body`` (which rewrites the chunk file) in one transaction: on failure the
        new file is removed and the old one stays; on success the old one is deleted."""
        old_fd, old_name, old_end = self._fd, self.blob_file, self._end
        self.db.execute("BEGIN IMMEDIATE")
        try:
            result = body()
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            if self._fd != old_fd:
                os.close(self._fd)
                (self.dir / self.blob_file).unlink(missing_ok=True)
            self._fd, self.blob_file, self._end = old_fd, old_name, old_end
            self._cache.clear()
            self._chunk_rows.clear()
            raise
        if self._fd != old_fd:
            os.close(old_fd)
            (self.dir / old_name).unlink(missing_ok=True)
        self.checkpoint()
        return result

    def _rewrite_without(
        self: _Store, affected: set[int], transform: Transform | None = None
    ) -> None:
        """Inside a transaction: write a new chunk file, re-packing the ``affected`` chunks
        from the entries still in them and copying every other chunk as it is (with a
        ``transform``, every chunk is re-packed through it)."""
        old_fd, old_name = self._fd, self.blob_file
        number = int(old_name.removeprefix("chunks-").removesuffix(".blobs") or 0) + 1
        new_name = blob_name(number)
        new_path = self.dir / new_name
        new_path.unlink(missing_ok=True)
        self._fd = os.open(new_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        self.blob_file = new_name
        self._end = 0
        self._cache.clear()
        self._chunk_rows.clear()
        chunks = self.db.execute("SELECT id, kind, offset, size FROM chunks ORDER BY id")
        listed = chunks.fetchall()
        repacked = len(listed) if transform is not None else len(affected)
        lookup = repacked > SCANS_BEFORE_LOOKUP
        if lookup:
            for statement in LOOKUP_DDL:
                self.db.execute(statement)
        for chunk_id, kind, offset, size in listed:
            if chunk_id in affected or transform is not None:
                self._repack(old_fd, chunk_id, kind, offset, size, transform)
                continue
            data = os.pread(old_fd, size, offset)
            self.db.execute("UPDATE chunks SET offset = ? WHERE id = ?", (self._end, chunk_id))
            self._write(data)
        if lookup:
            for name in LOOKUP_INDEXES:
                self.db.execute(f"DROP INDEX IF EXISTS {name}")
        os.fsync(self._fd)
        self.set_meta("blob_file", new_name)

    def _repack(
        self: _Store,
        old_fd: int,
        chunk_id: int,
        kind: int,
        offset: int,
        size: int,
        transform: Transform | None = None,
    ) -> None:
        """Re-pack one chunk from the entries still in it; ``transform(kind, piece)`` may
        change each piece (None drops a raw line: the entries keep no raw line)."""
        data = codec.decompress(os.pread(old_fd, size, offset))
        column = "text" if kind == TEXT else "raw"
        users = self.db.execute(CHUNK_USERS.format(column=column), (chunk_id,)).fetchall()
        self.db.execute("DELETE FROM chunks WHERE id = ?", (chunk_id,))
        if not users:
            return
        parts: list[bytes] = []
        moves: list[tuple[int, int, int]] = []
        dropped: list[int] = []
        position = 0
        # raw lines are shared by a line's records: (start, length) -> (new start, length)
        placed: dict[tuple[int, int], tuple[int, int] | None] = {}
        for entry_id, start, length in users:
            if (start, length) not in placed:
                piece: bytes | None = data[start : start + length]
                if transform is not None and piece is not None:
                    changed = transform(kind, piece)
                    if changed != piece:
                        self.transformed.add(entry_id)
                    piece = changed
                if piece is None:
                    placed[(start, length)] = None
                else:
                    placed[(start, length)] = (position, len(piece))
                    parts.append(piece)
                    position += len(piece)
            where = placed[(start, length)]
            if where is None:
                dropped.append(entry_id)
            else:
                moves.append((entry_id, *where))
        if dropped:
            self.db.executemany(
                "UPDATE entries SET raw_chunk = NULL, raw_start = NULL, raw_size = NULL"
                " WHERE id = ?",
                [(entry_id,) for entry_id in dropped],
            )
        if not moves:
            return
        new_id = self.append_chunk(kind, b"".join(parts))
        self.db.executemany(
            f"UPDATE entries SET {column}_chunk = ?, {column}_start = ?, {column}_size = ?"
            " WHERE id = ?",
            [(new_id, at, length, entry_id) for entry_id, at, length in moves],
        )
