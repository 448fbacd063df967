"""Vectors beside the index, keyed by content; the flat snapshot searches read.

``<index root>/semantic/`` (beside the ``gen-N`` folders, so a rebuild keeps it):

* ``vectors.db`` (SQLite, the truth): ``vectors`` holds one int8 vector (and
  its scale) per (content key, chunk), where the content key is a hash of the
  model id and the record's lower-cased text as the index stores it (so
  redacted text is what is embedded, identical messages are embedded once and
  a rebuild reuses every vector); ``members`` says which record of the current
  generation holds which content (``rid``, ``ckey``, its ``thash``, time).
* ``snap-N/`` (numpy arrays, read through ``mmap``): every vector up to
  ``meta.snap_id`` as one int8 matrix, its scales, content keys and chunk
  numbers, and one sign bit per dimension for the prefilter. Vectors added
  after it (a fill in progress) are read from SQLite as the *tail*.

Consistency rule: a vector is returned only through a ``members`` row whose
record is live in the index with the same ``thash``; members of records the
index no longer holds (forget, prune, a rewritten file) and vectors no member
holds are dropped by the next fill (:func:`collect_garbage`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (
    id INTEGER PRIMARY KEY,
    ckey INTEGER NOT NULL,
    chunk INTEGER NOT NULL,
    scale REAL NOT NULL,
    vec BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS vectors_key ON vectors(ckey, chunk);
CREATE TABLE IF NOT EXISTS members (
    rid INTEGER PRIMARY KEY,
    ckey INTEGER NOT NULL,
    thash INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    ts REAL
);
CREATE INDEX IF NOT EXISTS members_ckey ON members(ckey);
"""


def semantic_dir(index_root: Path) -> Path:
    return index_root / "semantic"


def content_key(model_id: str, lower: bytes) -> int:
    """A signed 64-bit key for (model, text): what a vector is stored under."""
    digest = hashlib.blake2b(lower, digest_size=8, person=model_id.encode()[:16]).digest()
    return int.from_bytes(digest, "big", signed=True)


def connect(folder: Path, *, create: bool) -> sqlite3.Connection | None:
    """``vectors.db`` in ``folder`` (None when it does not exist and ``create`` is false)."""
    path = folder / "vectors.db"
    if not create and not path.exists():
        return None
    if create:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if create:
        db.executescript(SCHEMA)
    return db


def get_meta(db: sqlite3.Connection, key: str) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def set_meta(db: sqlite3.Connection, key: str, value: object) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, str(value)))


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Float rows -> (int8 rows, float32 scales) with ``row ~= int8 * scale``."""
    import numpy as np

    peak = np.abs(vectors).max(axis=1)
    scales = np.maximum(peak, 1e-12) / 127.0
    q = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return q, scales.astype(np.float32)


# -- the snapshot ------------------------------------------------------------------------------


@dataclass(slots=True)
class Snapshot:
    """Every vector up to ``last_id`` as arrays (memory-mapped when read from disk)."""

    last_id: int
    vec: np.ndarray  #: int8 [n, dim]
    scale: np.ndarray  #: float32 [n]
    ckey: np.ndarray  #: int64 [n]
    chunk: np.ndarray  #: int16 [n]
    bits: np.ndarray  #: uint8 [n, dim / 8], the sign of each dimension

    def __len__(self) -> int:
        return int(self.vec.shape[0])


ARRAYS = ("vec", "scale", "ckey", "chunk", "bits")


def read_snapshot(folder: Path, db: sqlite3.Connection) -> Snapshot | None:
    import numpy as np

    name = get_meta(db, "snapshot")
    if not name:
        return None
    path = folder / name
    try:
        arrays = {a: np.load(path / f"{a}.npy", mmap_mode="r") for a in ARRAYS}
    except (OSError, ValueError):
        return None
    return Snapshot(last_id=int(get_meta(db, "snap_id") or 0), **arrays)


def rows_to_arrays(rows: list[tuple[Any, ...]], dim: int) -> dict[str, np.ndarray]:
    """(id, ckey, chunk, scale, vec) rows -> the snapshot's arrays."""
    import numpy as np

    n = len(rows)
    vec = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.int8).reshape(n, dim)
    return {
        "vec": vec,
        "scale": np.fromiter((r[3] for r in rows), dtype=np.float32, count=n),
        "ckey": np.fromiter((r[1] for r in rows), dtype=np.int64, count=n),
        "chunk": np.fromiter((r[2] for r in rows), dtype=np.int16, count=n),
        "bits": np.packbits(vec > 0, axis=1),
    }


def write_snapshot(folder: Path, db: sqlite3.Connection, dim: int) -> int:
    """Write every stored vector as a new ``snap-N`` and point ``meta`` at it; returns n.

    The arrays are written in slices of 64k vectors (bounded memory) into
    ``.npy`` files opened as writable memory maps, fsynced, then published by
    one SQLite commit; the previous snapshot is deleted afterwards (a reader
    that has it mapped keeps reading it). A failure (a full disk) removes the
    half-written folder and leaves the previous snapshot in place.
    """
    import numpy as np
    from numpy.lib.format import open_memmap

    last = db.execute("SELECT count(*), max(id) FROM vectors").fetchone()
    n, last_id = int(last[0]), int(last[1] or 0)
    number = int(get_meta(db, "snap_seq") or 0) + 1
    path = folder / f"snap-{number:06d}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(mode=0o700)
    try:
        shapes = {
            "vec": ((n, dim), np.int8),
            "scale": ((n,), np.float32),
            "ckey": ((n,), np.int64),
            "chunk": ((n,), np.int16),
            "bits": ((n, dim // 8), np.uint8),
        }
        out = {
            a: open_memmap(path / f"{a}.npy", "w+", dtype=t, shape=s)
            for a, (s, t) in shapes.items()
        }
        at = 0
        cursor = db.execute(
            "SELECT id, ckey, chunk, scale, vec FROM vectors WHERE id <= ? ORDER BY id", (last_id,)
        )
        while True:
            rows = cursor.fetchmany(65536)
            if not rows:
                break
            arrays = rows_to_arrays(rows, dim)
            for a, values in arrays.items():
                out[a][at : at + len(rows)] = values
            at += len(rows)
        for a in ARRAYS:
            out[a].flush()
            del out[a]
            _fsync(path / f"{a}.npy")
        _fsync(path)
        db.execute("BEGIN IMMEDIATE")
        set_meta(db, "snapshot", path.name)
        set_meta(db, "snap_id", last_id)
        set_meta(db, "snap_seq", number)
        db.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        shutil.rmtree(path, ignore_errors=True)
        raise
    for stale in folder.glob("snap-*"):
        if stale.name != path.name:
            shutil.rmtree(stale, ignore_errors=True)
    return n


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def tail_rows(db: sqlite3.Connection, after_id: int) -> list[tuple[Any, ...]]:
    """Vectors stored after the snapshot (id, ckey, chunk, scale, vec)."""
    return db.execute(
        "SELECT id, ckey, chunk, scale, vec FROM vectors WHERE id > ? ORDER BY id", (after_id,)
    ).fetchall()


def collect_garbage(db: sqlite3.Connection, live: dict[int, int]) -> tuple[int, int]:
    """Drop members whose record is gone (or changed) and vectors no member holds.

    ``live``: rid -> thash of every embeddable record the index holds now.
    Returns (members dropped, vectors dropped).
    """
    stale = [
        (rid,)
        for rid, thash in db.execute("SELECT rid, thash FROM members")
        if live.get(rid) != thash
    ]
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany("DELETE FROM members WHERE rid = ?", stale)
        cursor = db.execute("DELETE FROM vectors WHERE ckey NOT IN (SELECT ckey FROM members)")
        dropped = cursor.rowcount
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return len(stale), max(dropped, 0)
