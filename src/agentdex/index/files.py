"""The index's ``files`` rows: one per source file, named, and the rows kept from the archive.

A :class:`FileRow` is what a refresh needs to skip, resume or re-read a
file (its size, mtime, inode, first bytes' hash, resume cursor, parser).

Records the index keeps only because the archive has them (their source was
deleted, truncated or rewritten without them) belong to a ``files`` row
whose path is the original path behind :data:`ARCHIVED_PREFIX` and whose
parser is :data:`ARCHIVE_PARSER`: discovery never yields such a path, so a
refresh never re-reads or removes it, and surfaces show the original path
with ``source_gone: true``. The rule belongs to the index (it is how the
index marks its own rows); the archive that feeds those rows lives above it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import NamedTuple

from agentdex.paths import blake2b

#: ``meta`` key prefix of a file's last read failure (``agentdex sources`` shows it)
READ_ERROR_KEY = "read_error:"
#: index ``files.path`` of records kept from the archive: this prefix, then the original path
ARCHIVED_PREFIX = "archived:"
#: index ``files.parser`` of those rows
ARCHIVE_PARSER = "agentdex.archive"
#: the range of ``files.path`` holding archived rows (``path >= LOW AND path < HIGH``)
ARCHIVED_LOW = ARCHIVED_PREFIX
ARCHIVED_HIGH = ARCHIVED_PREFIX[:-1] + chr(ord(ARCHIVED_PREFIX[-1]) + 1)


def archived_path(source_path: str) -> str:
    return ARCHIVED_PREFIX + source_path


def is_archived(path: str) -> bool:
    return path.startswith(ARCHIVED_PREFIX)


def original_path(path: str) -> str:
    """The source path behind an index ``files.path`` (itself when it is not archived)."""
    return path[len(ARCHIVED_PREFIX) :] if path.startswith(ARCHIVED_PREFIX) else path


def head_hash(path: Path, length: int) -> str:
    """The hash of a file's first ``length`` bytes (an append keeps it; a rewrite changes it)."""
    with open(path, "rb") as handle:
        return blake2b(handle.read(length), digest_size=12).hexdigest()


class FileRow(NamedTuple):
    """One ``files`` row, as a refresh reads it (``FILE_COLUMNS`` order)."""

    id: int
    path: str
    size: int
    mtime: float
    inode: int
    head_len: int
    head_hash: str
    wal_sig: str
    resume_offset: int
    resume_line: int
    state: str
    parser: str | None
    store: str


FILE_COLUMNS = ", ".join(FileRow._fields)


def read_file_row(db: sqlite3.Connection, where: str, params: tuple[object, ...]) -> FileRow | None:
    row = db.execute(f"SELECT {FILE_COLUMNS} FROM files WHERE {where}", params).fetchone()
    return None if row is None else FileRow._make(row)


class FileRows:
    """The ``files`` table's rows by path, read as they are asked for.

    A refresh of one appended transcript looks up one path; reading all
    10,000 rows of a 1 GB index up front cost 30 ms. Iterating reads the
    rest once. Paths set or popped here win over the table, as a dict
    loaded at the start would have behaved.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._rows: dict[str, FileRow] = {}
        self._absent: set[str] = set()
        self._complete = False

    def get(self, path: str) -> FileRow | None:
        row = self._rows.get(path)
        if row is not None or self._complete or path in self._absent:
            return row
        row = read_file_row(self.db, "path = ?", (path,))
        if row is None:
            self._absent.add(path)
        else:
            self._rows[path] = row
        return row

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def __setitem__(self, path: str, row: FileRow) -> None:
        self._rows[path] = row
        self._absent.discard(path)

    def pop(self, path: str, default: FileRow | None = None) -> FileRow | None:
        row = self.get(path)
        self._rows.pop(path, None)
        self._absent.add(path)
        return row if row is not None else default

    def items(self) -> list[tuple[str, FileRow]]:
        self.read_all()
        return list(self._rows.items())

    def values(self) -> list[FileRow]:
        self.read_all()
        return list(self._rows.values())

    def read_all(self) -> None:
        """Read every row now (one query), before looking up most of them."""
        if self._complete:
            return
        for raw in self.db.execute(f"SELECT {FILE_COLUMNS} FROM files"):
            row = FileRow._make(raw)
            if row.path not in self._rows and row.path not in self._absent:
                self._rows[row.path] = row
        self._complete = True
