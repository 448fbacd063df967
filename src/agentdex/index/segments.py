"""Append-only text blocks: records' text packed ~64 KiB at a time.

A block holds consecutive records (ids ``first_id .. first_id + count - 1``):
their lower-cased UTF-8 joined by NUL bytes (what substring search scans,
at memory speed with ``bytes.find``) with the byte offset where each record
starts, and the original text, zlib-compressed, with character offsets (what
results show and what case-sensitive matching checks). A block is written in
the same SQLite transaction as its records, so a reader's snapshot never
holds half a block.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from array import array
from bisect import bisect_right
from dataclasses import dataclass

from agentdex.index.signatures import SignatureWriter
from agentdex.records import Record

BLOCK_BYTES = 64 * 1024
SEP = "\x00"
SEP_B = b"\x00"

RECORD_COLUMNS = (
    "id, block_id, file_id, agent, store, session_id, role, kind, timestamp, model, cwd,"
    " project, branch, worktree, host, locator, offset, tlen, thash"
)
_INSERT_RECORD = f"INSERT INTO records ({RECORD_COLUMNS}) VALUES ({', '.join('?' * 19)})"


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def text_hash(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)


class BlockWriter:
    """Packs records into blocks; the caller commits (``flush`` then ``db.commit``)."""

    def __init__(self, db: sqlite3.Connection, signatures: SignatureWriter) -> None:
        self.db = db
        self.signatures = signatures
        row = db.execute("SELECT max(id) FROM blocks").fetchone()
        self.next_block = (row[0] + 1) if row[0] is not None else 0
        row = db.execute(
            "SELECT max(m) FROM (SELECT max(id) AS m FROM records"
            " UNION ALL SELECT max(first_id + count - 1) FROM blocks)"
        ).fetchone()
        self.next_record = (row[0] + 1) if row[0] is not None else 1
        self._lower: list[bytes] = []
        self._original: list[str] = []
        self._rows: list[tuple[object, ...]] = []
        self._size = 0
        self.text_bytes = 0

    def add(self, record: Record, file_id: int) -> None:
        text = record.text or ""
        original = encode(text)
        lower = encode(text.lower())
        rid = self.next_record + len(self._rows)
        self._rows.append(
            (
                rid,
                self.next_block,
                file_id,
                record.agent,
                record.store,
                record.session_id,
                record.role,
                record.kind,
                record.timestamp,
                record.model,
                record.cwd,
                record.project,
                record.branch,
                record.worktree,
                record.host,
                record.locator,
                record.offset,
                len(lower),
                text_hash(original),
            )
        )
        self._lower.append(lower)
        self._original.append(text)
        self._size += len(lower) + 1
        if self._size >= BLOCK_BYTES:
            self.seal()

    def seal(self) -> None:
        """Write the pending block (text, offsets, signature bits) and its records."""
        if not self._rows:
            return
        lower_starts = array("I")
        pos = 0
        for part in self._lower:
            lower_starts.append(pos)
            pos += len(part) + 1
        original_starts = array("I")
        pos = 0
        for part_s in self._original:
            original_starts.append(pos)
            pos += len(part_s) + 1
        lower = SEP_B.join(self._lower)
        original = zlib.compress(encode(SEP.join(self._original)), 1)
        self.signatures.add(self.next_block, lower)
        self.db.execute(
            "INSERT INTO blocks (id, first_id, count, lower, lower_starts, original,"
            " original_starts) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                self.next_block,
                self.next_record,
                len(self._rows),
                lower,
                lower_starts.tobytes(),
                original,
                original_starts.tobytes(),
            ),
        )
        self.db.executemany(_INSERT_RECORD, self._rows)
        self.text_bytes += len(lower)
        self.next_record += len(self._rows)
        self.next_block += 1
        self._lower, self._original, self._rows, self._size = [], [], [], 0

    def flush(self) -> None:
        """Seal the open block and write signature bits; the caller then commits."""
        self.seal()
        self.signatures.flush()


@dataclass(slots=True)
class Block:
    """A block as read back for searching."""

    id: int
    first_id: int
    count: int
    lower: bytes
    lower_starts: array[int]
    _original_blob: bytes
    original_starts: array[int]
    _original: str | None = None

    @property
    def original(self) -> str:
        if self._original is None:
            self._original = zlib.decompress(self._original_blob).decode("utf-8", "surrogatepass")
        return self._original

    def lower_span(self, index: int) -> tuple[int, int]:
        start = self.lower_starts[index]
        end = self.lower_starts[index + 1] - 1 if index + 1 < self.count else len(self.lower)
        return start, end

    def original_text(self, index: int) -> str:
        text = self.original
        start = self.original_starts[index]
        end = self.original_starts[index + 1] - 1 if index + 1 < self.count else len(text)
        return text[start:end]

    def lower_text(self, index: int) -> str:
        start, end = self.lower_span(index)
        return self.lower[start:end].decode("utf-8", "surrogatepass")

    def record_at(self, pos: int) -> int:
        return bisect_right(self.lower_starts, pos) - 1

    def original_record_at(self, pos: int) -> int:
        return bisect_right(self.original_starts, pos) - 1


def load_block(db: sqlite3.Connection, block_id: int) -> Block | None:
    row = db.execute(
        "SELECT id, first_id, count, lower, lower_starts, original, original_starts"
        " FROM blocks WHERE id = ?",
        (block_id,),
    ).fetchone()
    if row is None:
        return None
    lower_starts = array("I")
    lower_starts.frombytes(row[4])
    original_starts = array("I")
    original_starts.frombytes(row[6])
    return Block(row[0], row[1], row[2], row[3], lower_starts, row[5], original_starts)
