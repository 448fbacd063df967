"""Nearest records to a vector: sign-bit prefilter, exact int8 rerank, content -> records.

Small stores are scored exactly (every int8 vector against the query). Past
``EXACT_MAX`` vectors the sign bits (48 bytes a vector) pick ``PREFILTER``
candidates by Hamming distance and only those are scored exactly
(bench/semantic_eval.py measures what the prefilter loses). Vectors written
after the snapshot (a fill in progress) are scored exactly from SQLite.
A vector becomes results only through ``members`` rows; the caller keeps those
whose record is live in the index with the same ``thash``.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentdex.semantic import store

if TYPE_CHECKING:
    import numpy as np

EXACT_MAX = 200_000
PREFILTER = 4_000
SLICE = 65_536


@dataclass(slots=True)
class Near:
    rid: int
    thash: int
    ckey: int
    similarity: float
    chunk: int
    ts: float | None


class VectorIndex:
    """A read view of ``semantic/`` for one generation (None-safe: ``open`` may return None)."""

    def __init__(self, folder: Path, db: sqlite3.Connection, snapshot: store.Snapshot | None):
        self.folder = folder
        self.db = db
        self.snapshot = snapshot

    @classmethod
    def open(cls, index_root: Path, generation: str) -> VectorIndex | None:
        folder = store.semantic_dir(index_root)
        db = store.connect(folder, create=False)
        if db is None:
            return None
        try:
            if store.get_meta(db, "generation") != generation:
                db.close()
                return None
            return cls(folder, db, store.read_snapshot(folder, db))
        except sqlite3.DatabaseError:
            db.close()
            return None

    def close(self) -> None:
        self.db.close()

    def members_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM members").fetchone()[0])

    def vectors_of(self, rids: list[int]) -> np.ndarray:
        """The float vectors (all chunks) of records ``rids``: for ``similar``."""
        import numpy as np

        out = []
        marks = ",".join("?" * len(rids))
        for scale, vec in self.db.execute(
            f"SELECT v.scale, v.vec FROM members m JOIN vectors v ON v.ckey = m.ckey"
            f" WHERE m.rid IN ({marks})",
            rids,
        ):
            out.append(np.frombuffer(vec, dtype=np.int8).astype(np.float32) * scale)
        return np.array(out, dtype=np.float32).reshape(len(out), -1)

    def nearest(self, query: np.ndarray, *, top: int = 200) -> list[Near]:
        """Records whose text is closest to ``query`` (unit float32), best first."""
        import numpy as np

        scored: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (sims, ckeys, chunks)
        snap = self.snapshot
        after = 0
        if snap is not None and len(snap):
            after = snap.last_id
            idx = _candidates(snap, query)
            sims = _exact(snap.vec, snap.scale, query, idx)
            scored.append((sims, np.asarray(snap.ckey[idx]), np.asarray(snap.chunk[idx])))
        tail = store.tail_rows(self.db, after)
        if tail:
            arrays = store.rows_to_arrays(tail, query.shape[0])
            sims = _exact(arrays["vec"], arrays["scale"], query, None)
            scored.append((sims, arrays["ckey"], arrays["chunk"]))
        if not scored:
            return []
        sims = np.concatenate([s[0] for s in scored])
        ckeys = np.concatenate([s[1] for s in scored])
        chunks = np.concatenate([s[2] for s in scored])
        take = min(len(sims), top * 4)
        order = (
            np.argpartition(-sims, take - 1)[:take] if take < len(sims) else np.arange(len(sims))
        )
        order = order[np.argsort(-sims[order], kind="stable")]
        best: dict[int, tuple[float, int]] = {}
        for i in order:
            ck = int(ckeys[i])
            if ck not in best:
                best[ck] = (float(sims[i]), int(chunks[i]))
                if len(best) >= top:
                    break
        return self._records(best)

    def _records(self, best: dict[int, tuple[float, int]]) -> list[Near]:
        out: list[Near] = []
        keys = list(best)
        for at in range(0, len(keys), 900):
            part = keys[at : at + 900]
            marks = ",".join("?" * len(part))
            for rid, ckey, thash, ts in self.db.execute(
                f"SELECT rid, ckey, thash, ts FROM members WHERE ckey IN ({marks})", part
            ):
                sim, chunk = best[ckey]
                out.append(Near(rid, thash, ckey, sim, chunk, ts))
        out.sort(key=lambda n: (-n.similarity, -(n.ts or 0.0), -n.rid))
        return out


def _candidates(snap: store.Snapshot, query: np.ndarray) -> np.ndarray | slice:
    """Rows worth scoring exactly: all of a small store, else the Hamming-nearest."""
    import numpy as np

    n = len(snap)
    if n <= EXACT_MAX:
        return slice(0, n)
    qbits = np.packbits(query > 0)
    dist = np.empty(n, dtype=np.uint16)
    for at in range(0, n, SLICE):
        part = np.asarray(snap.bits[at : at + SLICE])
        dist[at : at + len(part)] = np.bitwise_count(part ^ qbits).sum(axis=1, dtype=np.uint16)
    keep = min(PREFILTER, n)
    idx = np.argpartition(dist, keep - 1)[:keep]
    return np.sort(idx)


def _exact(
    vec: np.ndarray, scale: np.ndarray, query: np.ndarray, idx: np.ndarray | slice | None
) -> np.ndarray:
    """Cosine of ``query`` with int8 rows (``idx`` of them), from their scales."""
    import numpy as np

    if idx is None:
        idx = slice(0, vec.shape[0])
    if isinstance(idx, slice):
        n = idx.stop - idx.start
        out = np.empty(n, dtype=np.float32)
        for at in range(0, n, SLICE):
            rows = np.asarray(
                vec[idx.start + at : idx.start + min(at + SLICE, n)], dtype=np.float32
            )
            out[at : at + len(rows)] = rows @ query
        return out * np.asarray(scale[idx], dtype=np.float32)
    rows = np.asarray(vec[idx], dtype=np.float32)
    return (rows @ query) * np.asarray(scale[idx], dtype=np.float32)
