"""Vectors beside the index, keyed by content: 4-bit vectors in flat files, keys in SQLite.

``<index root>/semantic/`` (beside the ``gen-N`` folders, so a rebuild keeps it):

* ``vec-N/`` (append-only flat files, read through ``mmap``), one row per
  distinct text: ``q4`` its vector as 4-bit integers (two a byte, 192 bytes
  for 384 dimensions), ``scale`` (float32: the vector is ``q4 * scale``) and
  ``ckey`` (int64: the row's content key). The prefilter's sign bits are not
  stored: they are derived from ``q4`` by the process that scans
  (:meth:`Rows.signs`, kept per file between searches);
* ``vectors.db`` (SQLite, the truth): ``keys`` maps a content key (a hash of
  the model id and the record's lower-cased text as the index stores it: so
  redacted text is what is embedded, identical messages are embedded once and
  a rebuild reuses every vector) to its row and the (``thash``, ``tlen``) of
  the record it was first embedded from; ``members`` says which record of
  the current generation holds which content (``rid``, ``ckey``, and the
  record's ``thash``/``tlen`` only where they differ from its key's: NULL
  means "the key's", :data:`MEMBER_THASH` reads it); ``title_members`` says
  which conversation's title has which content (``agent``, ``session_id``,
  ``ckey``: valid while the index's title of that conversation still hashes
  to ``ckey``, whatever the generation); ``meta.rows`` is how many rows are
  committed.

A fill appends rows, fsyncs the files, then commits the keys, members and
``rows`` in one SQLite transaction; a writer that opens truncates the files to
``rows`` (what a killed fill appended past its commit). Readers map ``rows``
rows. Rows no key points to any more (forgotten texts) are dead until more
than half the rows are, when the files are rewritten (:func:`compact`).

A store written by an older agentdex is upgraded by the first writer that
opens it (:mod:`agentdex.semantic.migrations`: named, each once, safe to kill).

Consistency rule: a vector is returned only through a ``members`` row whose
record is live in the index with the same ``thash``; members of records the
index no longer holds and keys no member holds are dropped by
:func:`collect_garbage` (after ``forget``/``prune``, and by every complete fill).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentdex.paths import blake2b  # hashlib's blake2b without loading OpenSSL

if TYPE_CHECKING:
    import numpy as np

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS keys (
    ckey INTEGER PRIMARY KEY,
    row INTEGER NOT NULL,
    thash INTEGER,
    tlen INTEGER
);
CREATE TABLE IF NOT EXISTS members (
    rid INTEGER PRIMARY KEY,
    ckey INTEGER NOT NULL,
    thash INTEGER,
    tlen INTEGER
);
CREATE INDEX IF NOT EXISTS members_ckey ON members(ckey);
CREATE TABLE IF NOT EXISTS title_members (
    agent TEXT NOT NULL,
    session_id TEXT NOT NULL,
    ckey INTEGER NOT NULL,
    PRIMARY KEY (agent, session_id)
);
CREATE INDEX IF NOT EXISTS title_members_ckey ON title_members(ckey);
"""

#: columns added since the first stores (NULL in rows written before): table -> columns
ADDED = {"keys": ("thash", "tlen"), "members": ("tlen",)}

#: file name -> (numpy dtype, values per row as a function of the dimension)
FILES = {
    "q4": ("uint8", lambda dim: dim // 2),
    "scale": ("float32", lambda dim: 1),
    "ckey": ("int64", lambda dim: 1),
}

#: a member's text hash: its own where it differs from its key's, else the key's
#: (SQL over ``members m LEFT JOIN keys k ON k.ckey = m.ckey``; 0 when neither has one)
MEMBER_THASH = "coalesce(m.thash, k.thash, 0)"


def semantic_dir(index_root: Path) -> Path:
    return index_root / "semantic"


def content_key(model_id: str, lower: bytes) -> int:
    """A signed 64-bit key for (model, text): what a vector is stored under."""
    digest = blake2b(lower, digest_size=8, person=model_id.encode()[:16]).digest()
    return int.from_bytes(digest, "big", signed=True)


def connect(folder: Path, *, create: bool) -> sqlite3.Connection | None:
    """``vectors.db`` in ``folder`` (None when it does not exist and ``create`` is false)."""
    path = folder / "vectors.db"
    if not create and not path.exists():
        return None
    from agentdex.paths import private_files

    with private_files():  # the database, its WAL and -shm: 0600 whatever the caller's umask
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if create:
            fresh = not db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'members'"
            ).fetchone()
            db.executescript(SCHEMA)
            for table, columns in ADDED.items():
                have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                for column in columns:
                    if column not in have:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {column} INTEGER")
            from agentdex.semantic.migrations import migrate

            migrate(folder, db, fresh=fresh)
    return db


def member_rows(
    rids: Iterable[int],
    ckeys: Iterable[int],
    own: Iterable[tuple[int, int]],
    of_key: Iterable[tuple[int | None, int | None]],
) -> Iterator[tuple[int, int, int | None, int | None]]:
    """``members`` rows (rid, ckey, thash, tlen) for records with their own (thash, tlen)
    and their key's: NULL where the two are the same (the one record a text)."""
    for rid, ckey, mine, keys in zip(rids, ckeys, own, of_key, strict=True):
        if mine == keys:
            yield rid, ckey, None, None
        else:
            yield rid, ckey, mine[0], mine[1]


#: write a record's ``members`` row (values from :func:`member_rows`)
INSERT_MEMBER = "INSERT OR REPLACE INTO members (rid, ckey, thash, tlen) VALUES (?, ?, ?, ?)"


def get_meta(db: sqlite3.Connection, key: str) -> str | None:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def set_meta(db: sqlite3.Connection, key: str, value: object) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, str(value)))


# -- 4-bit vectors ----------------------------------------------------------------------------


def quantize4(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit float rows -> (packed 4-bit rows, float32 scales): even dimensions in the
    high nibbles, odd ones in the low, each ``q + 8`` for ``q`` in -7..7."""
    import numpy as np

    peak = np.abs(vectors).max(axis=1)
    scales = (np.maximum(peak, 1e-12) / 7.0).astype(np.float32)
    q = (np.clip(np.rint(vectors / scales[:, None]), -7, 7) + 8).astype(np.uint8)
    packed = (q[:, 0::2] << 4) | q[:, 1::2]
    return packed, scales


def unpack4(packed: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Packed 4-bit rows -> float32 rows (``q * scale``)."""
    import numpy as np

    packed = np.asarray(packed)
    out = np.empty((packed.shape[0], packed.shape[1] * 2), dtype=np.float32)
    out[:, 0::2] = (packed >> 4).astype(np.int8) - 8
    out[:, 1::2] = (packed & 15).astype(np.int8) - 8
    out *= np.asarray(scales, dtype=np.float32)[:, None]
    return out


# -- the files ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Rows:
    """The first ``n`` rows of the files, memory-mapped (what a search reads)."""

    n: int
    q4: np.ndarray
    scale: np.ndarray
    ckey: np.ndarray
    #: the ``q4`` file mapped (its signs are kept per file); None for rows in memory
    source: Path | None = None
    _signs: np.ndarray | None = None
    _words: np.ndarray | None = None

    def __len__(self) -> int:
        return self.n

    def signs(self) -> np.ndarray:
        """The rows' sign bits (:func:`agentdex.semantic.signs.sign_bits`), derived once
        per file and process and extended as the file grows (the resident scans one
        store for many searches)."""
        if self._signs is None:
            from agentdex.semantic import signs

            if self.source is None:
                self._signs = signs.signs_in_chunks(self.q4, 0, self.n)
            else:
                self._signs = signs.SIGNS.of(self.source, self.q4, self.n)
        return self._signs

    def sign_words(self) -> np.ndarray | None:
        """The sign bits as 64-bit words, one contiguous column per word, shape (words,
        n) (None when a row's bits are not whole words): what the resident's scan counts,
        a column at a time, ~3x faster than rows of words (one process keeps them beside
        :meth:`signs` for as long as it keeps these rows)."""
        if self._words is None:
            import numpy as np

            bits = self.signs()
            if bits.shape[1] % 8 or not bits.flags.c_contiguous:
                return None
            self._words = np.ascontiguousarray(bits.view(np.uint64).T)
        return self._words


def vfile(db: sqlite3.Connection) -> str:
    return get_meta(db, "vfile") or "vec-000001"


def committed_rows(db: sqlite3.Connection) -> int:
    return int(get_meta(db, "rows") or 0)


def read_rows(folder: Path, db: sqlite3.Connection, dim: int) -> Rows | None:
    """The committed rows, mapped read-only (None when there are none)."""
    for _ in range(2):  # a compaction may swap the files between the two reads
        n, name = committed_rows(db), vfile(db)
        if n == 0:
            return None
        try:
            return map_rows(folder, name, n, dim)
        except (FileNotFoundError, ValueError):
            continue
    return None


def map_rows(folder: Path, name: str, n: int, dim: int) -> Rows:
    """The first ``n`` rows of ``folder/name/``, mapped read-only; ``FileNotFoundError``
    or ``ValueError`` when a file is missing or shorter than that."""
    import numpy as np

    arrays = {}
    for file, (dtype, width) in FILES.items():
        shape = (n, width(dim)) if width(dim) > 1 else (n,)
        arrays[file] = np.memmap(folder / name / file, dtype=dtype, mode="r", shape=shape)
    return Rows(
        n=n,
        q4=arrays["q4"],
        scale=arrays["scale"],
        ckey=arrays["ckey"],
        source=folder / name / "q4",
    )


class Appender:
    """The writer's end of the files: truncated to the committed rows when opened."""

    def __init__(self, folder: Path, db: sqlite3.Connection, dim: int) -> None:
        self.path = folder / vfile(db)
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.dim = dim
        self.rows = committed_rows(db)
        self.fds: dict[str, int] = {}
        for file, (dtype, width) in FILES.items():
            fd = os.open(self.path / file, os.O_RDWR | os.O_CREAT, 0o600)
            self.fds[file] = fd
            size = self.rows * width(dim) * _itemsize(dtype)
            if os.fstat(fd).st_size != size:
                os.ftruncate(fd, size)  # drop what a fill killed before its commit appended

    def append(self, vectors: np.ndarray, ckeys: list[int]) -> int:
        """Write rows for unit ``vectors``; returns the first new row (not committed yet)."""
        import numpy as np

        packed, scales = quantize4(vectors)
        parts = {
            "q4": packed,
            "scale": scales,
            "ckey": np.asarray(ckeys, dtype=np.int64),
        }
        first = self.rows
        for file, data in parts.items():
            fd = self.fds[file]
            _, width = FILES[file]
            offset = first * width(self.dim) * data.dtype.itemsize
            view = memoryview(np.ascontiguousarray(data).tobytes())
            while view:
                written = os.pwrite(fd, view, offset)
                view, offset = view[written:], offset + written
        self.rows += len(ckeys)
        return first

    def sync(self) -> None:
        for fd in self.fds.values():
            os.fsync(fd)

    def rollback(self, rows: int) -> None:
        """Forget rows appended past ``rows`` (their commit failed)."""
        self.rows = rows
        for file, fd in self.fds.items():
            dtype, width = FILES[file]
            with suppress(OSError):
                os.ftruncate(fd, rows * width(self.dim) * _itemsize(dtype))

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds = {}


def _itemsize(dtype: str) -> int:
    return {"uint8": 1, "float32": 4, "int64": 8}[dtype]


# -- consistency ---------------------------------------------------------------------------------


def collect_garbage(
    db: sqlite3.Connection,
    rids: np.ndarray,
    thash: np.ndarray,
    titles: dict[tuple[str, str], int],
) -> tuple[int, int]:
    """Drop members whose record is gone (or changed), title members whose
    conversation's title is gone (or changed), and keys no member holds.

    ``rids`` (sorted) and ``thash``: every embeddable record the index holds now;
    ``titles``: (agent, session id) -> content key of every title it holds now.
    Returns (members dropped, vectors dropped); title members count as members.
    """
    db.execute("BEGIN IMMEDIATE")  # the members read are the ones deleted from
    try:
        mine = member_hashes(db)
        stale = [(rid,) for rid in mine["r"][~live_members(rids, thash, mine)].tolist()]
        gone_titles = [
            (agent, sid)
            for agent, sid, ckey in db.execute("SELECT agent, session_id, ckey FROM title_members")
            if titles.get((agent, sid)) != ckey
        ]
        if not len(mine) and not gone_titles:
            db.execute("ROLLBACK")
            return 0, 0
        db.executemany("DELETE FROM members WHERE rid = ?", stale)
        db.executemany("DELETE FROM title_members WHERE agent = ? AND session_id = ?", gone_titles)
        cursor = db.execute(
            "DELETE FROM keys WHERE ckey NOT IN (SELECT ckey FROM members)"
            " AND ckey NOT IN (SELECT ckey FROM title_members)"
        )
        dropped = max(cursor.rowcount, 0)
        set_meta(db, "dead", int(get_meta(db, "dead") or 0) + dropped)
        db.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise
    return len(stale) + len(gone_titles), dropped


@contextmanager
def read_snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction around a count and the rows it counted (unless the caller's
    transaction already is one)."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN")
    try:
        yield
    finally:
        with suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def member_hashes(db: sqlite3.Connection) -> np.ndarray:
    """Every ``members`` row as (``r``: rid, ``t``: the text hash it was embedded
    from), by rid: 16 bytes a member, read with the count known (in one snapshot, so
    the count and the rows agree)."""
    import numpy as np

    with read_snapshot(db):
        count = db.execute("SELECT count(*) FROM members").fetchone()[0]
        return np.fromiter(
            db.execute(
                f"SELECT m.rid, {MEMBER_THASH} FROM members m LEFT JOIN keys k ON k.ckey = m.ckey"
                " ORDER BY m.rid"
            ),
            dtype=[("r", "i8"), ("t", "i8")],
            count=count,
        )


def live_members(rids: np.ndarray, thash: np.ndarray, mine: np.ndarray) -> np.ndarray:
    """Which of the members ``mine`` (:func:`member_hashes`) hold a record the index
    still has (``rids`` sorted, ``thash`` theirs) with the same text."""
    import numpy as np

    if not len(rids):
        return np.zeros(len(mine), dtype=bool)
    at = np.minimum(np.searchsorted(rids, mine["r"]), len(rids) - 1)
    alive: np.ndarray = (rids[at] == mine["r"]) & (thash[at] == mine["t"])
    return alive


def title_key(model_id: str, title: str) -> int:
    """The content key of a conversation's title: lower-cased like a record's text."""
    return content_key(model_id, title.lower().encode("utf-8", "surrogatepass"))


def compact(folder: Path, db: sqlite3.Connection, dim: int, *, force: bool = False) -> bool:
    """Rewrite the files without dead rows when more than half are dead; True if done."""
    import numpy as np

    n, dead = committed_rows(db), int(get_meta(db, "dead") or 0)
    if not force and (dead < 1000 or dead * 2 < n):
        return False
    old = read_rows(folder, db, dim)
    live = db.execute("SELECT ckey, row FROM keys ORDER BY row").fetchall()
    number = int(vfile(db).rsplit("-", 1)[1]) + 1
    name = f"vec-{number:06d}"
    target = folder / name
    import shutil  # here: a search reading the store never needs it (nor bz2, lzma)

    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(mode=0o700)
    from agentdex.paths import open_private

    try:
        rows = np.fromiter((r for _, r in live), dtype=np.int64, count=len(live))
        for file in FILES:
            with open_private(target / file) as out:
                if old is not None:
                    source = getattr(old, file)
                    for at in range(0, len(rows), 65536):
                        out.write(np.ascontiguousarray(source[rows[at : at + 65536]]).tobytes())
                out.flush()
                os.fsync(out.fileno())
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "UPDATE keys SET row = ? WHERE ckey = ?",
            ((new, ckey) for new, (ckey, _) in enumerate(live)),
        )
        set_meta(db, "vfile", name)
        set_meta(db, "rows", len(live))
        set_meta(db, "dead", 0)
        db.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        shutil.rmtree(target, ignore_errors=True)
        raise
    for stale in folder.glob("vec-*"):
        if stale.name != name:
            shutil.rmtree(stale, ignore_errors=True)
    return True
