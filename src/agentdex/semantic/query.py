"""Nearest records to a vector: sign-bit prefilter, exact rerank, content -> records.

Small stores are scored exactly (every 4-bit vector against the query). Past
``EXACT_MAX`` vectors the sign bits (48 bytes a vector, derived from the 4-bit
vectors: :meth:`agentdex.semantic.store.Rows.signs`) pick ``PREFILTER``
candidates by Hamming distance and only those are scored exactly
(bench/bench_semantic.py measures what the prefilter loses). A vector becomes
results only through ``members`` rows; the caller keeps those whose record is
live in the index with the same ``thash``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from agentdex.semantic import store
from agentdex.semantic.signs import query_signs

if TYPE_CHECKING:
    import numpy as np

EXACT_MAX = 50_000
PREFILTER = 4_000
SLICE = 65_536


class Near:
    """A record near the query (``rid``, the ``thash`` of its embedded text), or a
    conversation whose title is (``title``: (agent, session id); ``rid`` 0).

    A plain class, not a dataclass: a fresh hybrid search's client reads these, and
    creating a dataclass costs every fresh process ~0.5 ms."""

    __slots__ = ("ckey", "rid", "similarity", "thash", "title")

    def __init__(
        self,
        rid: int,
        thash: int,
        ckey: int,
        similarity: float,
        title: tuple[str, str] | None = None,
    ) -> None:
        self.rid = rid
        self.thash = thash
        self.ckey = ckey
        self.similarity = similarity
        self.title = title

    def __repr__(self) -> str:
        return (
            f"Near(rid={self.rid!r}, thash={self.thash!r}, ckey={self.ckey!r},"
            f" similarity={self.similarity!r}, title={self.title!r})"
        )


class VectorIndex:
    """A read view of ``semantic/`` for one generation (``open`` returns None without one)."""

    def __init__(
        self,
        folder: Path,
        db: sqlite3.Connection,
        rows: store.Rows | None,
        dim: int,
        *,
        count: int | None = None,
        vfile: str | None = None,
    ):
        self.folder = folder
        self.db = db
        self.rows = rows
        self.dim = dim
        #: committed rows and the folder of the flat files (read without mapping them)
        self.count = len(rows) if rows is not None else (count or 0)
        self.vfile = vfile or store.vfile(db)
        #: a store written before titles were embedded has no ``title_members``
        self.has_titles = (
            db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'title_members'"
            ).fetchone()
            is not None
        )

    @classmethod
    def open(
        cls, index_root: Path, generation: str, dim: int = 384, *, mapped: bool = True
    ) -> VectorIndex | None:
        """The store linked to ``generation`` (None without one). ``mapped=False`` reads
        only the row count and the files' folder (no numpy: the resident embedder scans
        them, :func:`agentdex.semantic.resident.nearest`); ``rows`` is None then."""
        folder = store.semantic_dir(index_root)
        db = store.connect(folder, create=False)
        if db is None:
            return None
        try:
            if store.get_meta(db, "generation") != generation:
                db.close()
                return None
            if not mapped:
                count, name = store.committed_rows(db), store.vfile(db)
                return cls(folder, db, None, dim, count=count, vfile=name)
            return cls(folder, db, store.read_rows(folder, db, dim), dim)
        except sqlite3.DatabaseError:
            db.close()
            return None

    def close(self) -> None:
        self.db.close()

    def members_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM members").fetchone()[0])

    def vectors_of(self, rids: list[int]) -> np.ndarray:
        """The vectors of records ``rids`` (for ``similar``)."""
        import numpy as np

        if self.rows is None:
            return np.zeros((0, self.dim), dtype=np.float32)
        marks = ",".join("?" * len(rids))
        found = sorted(
            {
                row
                for (row,) in self.db.execute(
                    f"SELECT k.row FROM members m JOIN keys k ON k.ckey = m.ckey"
                    f" WHERE m.rid IN ({marks})",
                    rids,
                )
                if row < len(self.rows)
            }
        )
        index = np.asarray(found, dtype=np.int64)
        return store.unpack4(self.rows.q4[index], self.rows.scale[index])

    def nearest(self, query: np.ndarray, *, top: int = 200) -> list[Near]:
        """Records whose text is closest to ``query`` (unit float32), best first."""
        if self.rows is None or not len(self.rows):
            return []
        return self.records(best_rows(self.rows, query, top))

    def records(self, best: dict[int, float]) -> list[Near]:
        """The records (and titles) holding the contents ``best`` (content key -> cosine)."""
        out: list[Near] = []
        keys = list(best)
        for at in range(0, len(keys), 900):
            part = keys[at : at + 900]
            marks = ",".join("?" * len(part))
            for rid, ckey, thash in self.db.execute(
                f"SELECT m.rid, m.ckey, {store.MEMBER_THASH} FROM members m"
                f" LEFT JOIN keys k ON k.ckey = m.ckey WHERE m.ckey IN ({marks})",
                part,
            ):
                out.append(Near(rid, thash, ckey, best[ckey]))
            if self.has_titles:
                for agent, sid, ckey in self.db.execute(
                    f"SELECT agent, session_id, ckey FROM title_members WHERE ckey IN ({marks})",
                    part,
                ):
                    out.append(Near(0, 0, ckey, best[ckey], title=(agent, sid)))
        out.sort(key=lambda n: (-n.similarity, -n.rid))
        return out


def best_rows(rows: store.Rows, query: np.ndarray, top: int) -> dict[int, float]:
    """The ``top`` contents closest to ``query`` (unit float32): content key -> cosine,
    best first (here, or in the resident embedder that scans for a fresh CLI process)."""
    import numpy as np

    idx = _candidates(rows, query)
    sims = _exact(rows, query, idx)
    take = min(len(sims), top * 2)
    order = np.argpartition(-sims, take - 1)[:take] if take < len(sims) else np.arange(len(sims))
    order = order[np.argsort(-sims[order], kind="stable")]
    picked = idx[order]
    ckeys = np.asarray(rows.ckey)[picked]  # one gather (a mapped scalar each is ~10 us)
    best: dict[int, float] = {}
    for ckey, sim in zip(ckeys.tolist(), sims[order].tolist(), strict=True):
        if ckey not in best:
            best[ckey] = float(sim)
            if len(best) >= top:
                break
    return best


def _candidates(rows: store.Rows, query: np.ndarray) -> np.ndarray:
    """Rows worth scoring exactly: all of a small store, else the Hamming-nearest."""
    import numpy as np

    n = len(rows)
    if n <= EXACT_MAX:
        return np.arange(n, dtype=np.int64)
    qbits = query_signs(query)
    words = rows.sign_words()
    dist = _hamming(rows.signs(), qbits) if words is None else _hamming_words(words, qbits)
    keep = min(PREFILTER, n)
    return np.sort(np.argpartition(dist, keep - 1)[:keep]).astype(np.int64)


def _hamming(signs: np.ndarray, qbits: np.ndarray) -> np.ndarray:
    """Hamming distance of each row of ``signs`` to ``qbits`` (uint16, one a row). Rows of
    whole 64-bit words are counted a word at a time: 8x fewer values to count and add
    than bytes (at 470,904 rows ~2x faster than counting bytes)."""
    import numpy as np

    n = len(signs)
    dist = np.empty(n, dtype=np.uint16)
    words = len(qbits) % 8 == 0 and signs.flags.c_contiguous
    for at in range(0, n, SLICE):
        part = signs[at : at + SLICE]
        out = dist[at : at + len(part)]
        if not words:
            out[:] = np.bitwise_count(part ^ qbits).sum(axis=1, dtype=np.uint16)
            continue
        counts = np.bitwise_count(part.view(np.uint64) ^ qbits.view(np.uint64))
        out[:] = counts[:, 0]
        for j in range(1, counts.shape[1]):
            out += counts[:, j]  # column adds: a sum along the short axis is slower
    return dist


def _hamming_words(words: np.ndarray, qbits: np.ndarray) -> np.ndarray:
    """:func:`_hamming` over the bits as columns of 64-bit words (:meth:`store.Rows.
    sign_words`): each column is XORed, counted and added in one contiguous pass (at
    470,904 rows ~4 ms against ~15 ms for rows of words)."""
    import numpy as np

    n = words.shape[1]
    qwords = qbits.view(np.uint64)
    dist = np.zeros(n, dtype=np.uint16)
    xored = np.empty(n, dtype=np.uint64)
    counts = np.empty(n, dtype=np.uint8)
    for column, qword in zip(words, qwords, strict=True):
        np.bitwise_xor(column, qword, out=xored)
        np.bitwise_count(xored, out=counts)
        dist += counts
    return dist


def _exact(rows: store.Rows, query: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Cosine of ``query`` with the rows ``idx`` (sorted), from their 4-bit vectors."""
    import numpy as np

    out = np.empty(len(idx), dtype=np.float32)
    for at in range(0, len(idx), SLICE):
        part = idx[at : at + SLICE]
        if len(part) and part[-1] - part[0] + 1 == len(part):  # a run: slice, no gather
            q4, scale = rows.q4[part[0] : part[-1] + 1], rows.scale[part[0] : part[-1] + 1]
        else:
            q4, scale = rows.q4[part], rows.scale[part]
        out[at : at + len(part)] = store.unpack4(q4, scale) @ query
    return out
