"""Bit-sliced trigram signatures: which blocks may contain a byte string.

Each block's lower-cased text contributes its byte trigrams, hashed to one of
``ROWS`` bit-rows. Signatures are stored *transposed* per chunk of
``CHUNK_BLOCKS`` blocks: row ``h`` of chunk ``c`` is a ``ROW_BYTES`` bitmap
whose bit ``j`` says "block ``c * CHUNK_BLOCKS + j`` has a trigram hashing to
``h``". A query reads only the rows its trigrams hash to and ANDs them as
Python ints: no numpy at query time. False positives are removed by
verifying candidates; there are no false negatives as long as a block's bits
are written before the block is committed (writers only ever *add* bits, so
a reader racing a writer sees a superset, which is harmless).

Building uses numpy (imported lazily) to hash a block's trigrams at memory
speed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROW_BITS = 16
ROWS = 1 << ROW_BITS
CHUNK_BLOCKS = 1024
ROW_BYTES = CHUNK_BLOCKS // 8
CHUNK_BYTES = ROWS * ROW_BYTES
_MULT = 0x9E3779B1


def trigram_rows(needle: bytes) -> set[int]:
    """Signature rows of every trigram of ``needle`` (empty when shorter than 3 bytes)."""
    rows = set()
    for i in range(len(needle) - 2):
        tri = (needle[i] << 16) | (needle[i + 1] << 8) | needle[i + 2]
        rows.add(((tri * _MULT) & 0xFFFFFFFF) >> (32 - ROW_BITS))
    return rows


def block_rows(text: bytes) -> Any:
    """numpy array of the distinct signature rows of ``text``'s trigrams."""
    import numpy as np

    if len(text) < 3:
        return np.zeros(0, dtype=np.uint32)
    b = np.frombuffer(text, dtype=np.uint8).astype(np.uint32)
    tri = (b[:-2] << 16) | (b[1:-1] << 8) | b[2:]
    h = (tri * np.uint32(_MULT)) >> np.uint32(32 - ROW_BITS)
    return np.unique(h)


def chunk_path(directory: Path, chunk: int) -> Path:
    return directory / f"sig-{chunk:05d}.bin"


class SignatureWriter:
    """Accumulates block signatures in memory and writes whole chunks on ``flush``.

    Only the writer (holding the index lock) uses this; it loads a chunk's
    current bits before adding, so a flush never clears a bit.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._chunks: dict[int, Any] = {}
        self._dirty: set[int] = set()

    def _chunk(self, chunk: int) -> Any:
        import numpy as np

        mat = self._chunks.get(chunk)
        if mat is None:
            path = chunk_path(self.directory, chunk)
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                data = b""
            if len(data) == CHUNK_BYTES:
                mat = np.frombuffer(bytearray(data), dtype=np.uint8).reshape(ROWS, ROW_BYTES)
            else:
                mat = np.zeros((ROWS, ROW_BYTES), dtype=np.uint8)
            self._chunks = {chunk: mat}  # one chunk in memory at a time: bounded RSS
        return mat

    def add(self, block_id: int, text: bytes) -> None:
        import numpy as np

        chunk, j = divmod(block_id, CHUNK_BLOCKS)
        if self._dirty and chunk not in self._dirty:
            self.flush()
        mat = self._chunk(chunk)
        rows = block_rows(text)
        mat[rows, j >> 3] |= np.uint8(1 << (j & 7))
        self._dirty.add(chunk)

    def flush(self) -> None:
        """Write dirty chunks in place (bits only ever get added)."""
        for chunk in sorted(self._dirty):
            mat = self._chunks[chunk]
            path = chunk_path(self.directory, chunk)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                if os.fstat(fd).st_size != CHUNK_BYTES:
                    os.ftruncate(fd, CHUNK_BYTES)  # right size first: a kill mid-write stays valid
                view = memoryview(mat.reshape(-1))
                written = 0
                while written < CHUNK_BYTES:
                    written += os.pwrite(fd, view[written:], written)
            finally:
                os.close(fd)
        self._dirty.clear()


class SignatureReader:
    """Candidate blocks for a set of rows, reading only those rows."""

    def __init__(self, directory: Path, n_blocks: int) -> None:
        self.directory = directory
        self.n_blocks = n_blocks
        self.n_chunks = (n_blocks + CHUNK_BLOCKS - 1) // CHUNK_BLOCKS
        self._fds: dict[int, int] = {}
        self._cache: dict[tuple[int, int], int] = {}

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def all_blocks(self) -> int:
        return (1 << self.n_blocks) - 1

    def _row(self, chunk: int, row: int) -> int:
        key = (chunk, row)
        value = self._cache.get(key)
        if value is None:
            fd = self._fds.get(chunk)
            if fd is None:
                try:
                    fd = os.open(chunk_path(self.directory, chunk), os.O_RDONLY)
                except FileNotFoundError:
                    # No signature written: every block of this chunk is a candidate.
                    return (1 << CHUNK_BLOCKS) - 1
                self._fds[chunk] = fd
            data = os.pread(fd, ROW_BYTES, row * ROW_BYTES)
            value = int.from_bytes(data, "little") if len(data) == ROW_BYTES else -1
            self._cache[key] = value
        return value

    def candidates(self, rows: set[int]) -> int:
        """Bitmap (Python int, bit i = block i) of blocks whose signature has every row."""
        if not rows:
            return self.all_blocks()
        result = 0
        full = (1 << CHUNK_BLOCKS) - 1
        for chunk in range(self.n_chunks):
            acc = full
            for row in rows:
                acc &= self._row(chunk, row)
                if not acc:
                    break
            result |= acc << (chunk * CHUNK_BLOCKS)
        return result & self.all_blocks()
