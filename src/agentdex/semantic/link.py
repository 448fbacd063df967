"""Records onto the vectors their text already has, from the index's ``thash``/``tlen`` alone.

Vectors are keyed by content (:func:`agentdex.semantic.store.content_key`),
and ``members`` says which record of the current generation holds which
content. A rebuilt index numbers its records anew, and a refresh adds
records whose text may have a vector already (a copied or resumed
conversation). Linking gives those records their ``members`` row without
reading their text or running the model: every ``keys`` row remembers the
(``thash``, ``tlen``) of the text it came from, and a ``members`` row those
of its record where they differ (the same text in another case),
and a record whose (``thash``, ``tlen``) is among them has that text (the
same 63-bit hash and the same length; ``keys.ckey`` itself is a hash of the
whole text). Vectors stored before these columns existed are matched by
the next fill, which reads the text.

:func:`relink` runs at the end of a rebuild (the ``rebuilt`` event) and, as a
fallback, on the first search by meaning that finds the vectors linked to
an older generation; a fill links first and embeds only what is left. A
rebuild that a search started is a first build, current while its records
keep coming (``index/coverage.py``): it is linked once complete, by the first
search by meaning after that (until then hybrid answers lexically, with a
note), or earlier by a fill.
"""

from __future__ import annotations

import sqlite3
from contextlib import suppress
from pathlib import Path
from typing import Any

from agentdex.index import coverage
from agentdex.index.store import Location, open_reader_db
from agentdex.semantic import store

#: which records are embedded (SQL over ``record_rows``)
ELIGIBLE = "(kind = 'prompt' OR kind = 'summary' OR (kind = 'message' AND role = 'assistant'))"


#: rows read and converted at once by :meth:`Live.read`
_CHUNK = 8_192


class Live:
    """Every embeddable record of the generation as sorted arrays: ``rids``, ``thash``,
    ``tlen`` (24 bytes a record; a dict of tuples took ~300, a list of ints ~36 more),
    and while the fill orders its work, ``ts`` (their times).

    Read with their count known, so no array is grown by copies; a record's block is
    asked of the index per batch (:func:`blocks_of`), not held for every record
    (bench/bench_fill_memory.py: where a fill's memory goes at 1 GB)."""

    def __init__(self, rids: Any, thash: Any, tlen: Any, ts: Any = None) -> None:
        self.rids, self.thash, self.tlen, self.ts = rids, thash, tlen, ts

    @classmethod
    def read(cls, index_db: sqlite3.Connection, *, times: bool = False) -> Live:
        """The records ``ELIGIBLE`` now (``times``: with their timestamps, for
        :meth:`missing`), from one snapshot of the index."""
        import numpy as np

        time = ", coalesce(timestamp, 0)" if times else ""
        fields = [("r", "i8"), ("t", "i8"), ("l", "i8")] + ([("ts", "f8")] if times else [])
        with store.read_snapshot(index_db):
            count = index_db.execute(
                f"SELECT count(*) FROM record_rows WHERE {ELIGIBLE}"
            ).fetchone()[0]
            cursor = index_db.execute(
                f"SELECT id, thash, tlen{time} FROM record_rows WHERE {ELIGIBLE} ORDER BY id"
            )
            out = {name: np.empty(count, dtype=kind) for name, kind in fields}
            at = 0
            while chunk := cursor.fetchmany(_CHUNK):  # a chunk of rows at a time, never all
                rows = np.array(chunk, dtype=fields)
                for name, _ in fields:
                    out[name][at : at + len(rows)] = rows[name]
                at += len(rows)
        return cls(out["r"], out["t"], out["l"], out.get("ts"))

    def __len__(self) -> int:
        return len(self.rids)

    def at(self, rids: list[int]) -> Any:
        import numpy as np

        return np.searchsorted(self.rids, np.asarray(rids, dtype=np.int64))

    def thash_of(self, rids: list[int]) -> list[int]:
        return [int(t) for t in self.thash[self.at(rids)]]

    def tlen_of(self, rids: list[int]) -> list[int]:
        return [int(t) for t in self.tlen[self.at(rids)]]

    def missing(self, db: sqlite3.Connection) -> tuple[Any, int]:
        """Records with no members row, newest first (an int64 array: 8 bytes a record);
        and how many have one. Needs the times (``read(times=True)``) and drops them:
        nothing after the order reads them."""
        import numpy as np

        if self.ts is None:
            raise ValueError("Live.missing needs the records' times: Live.read(times=True)")
        done = np.isin(self.rids, member_rids(db), assume_unique=True)
        todo = np.flatnonzero(~done)
        order = np.lexsort((-self.rids[todo], -self.ts[todo]))
        self.ts = None
        return self.rids[todo[order]], int(done.sum())


def blocks_of(index_db: sqlite3.Connection, rids: list[int]) -> dict[int, int]:
    """The block of each record of ``rids`` (a batch: one lookup by primary key each)."""
    marks = ",".join("?" * len(rids))
    sql = f"SELECT id, block_id FROM record_rows WHERE id IN ({marks})"
    return dict(index_db.execute(sql, rids))


def live_titles(index_db: sqlite3.Connection, model: str) -> dict[tuple[str, str], tuple[int, str]]:
    """Every conversation title the index holds: (agent, session id) -> (content key, title)."""
    return {
        (agent, sid): (store.title_key(model, title), title)
        for agent, sid, title in index_db.execute("SELECT agent, session_id, title FROM titles")
        if title and title.strip()
    }


def member_rids(db: sqlite3.Connection) -> Any:
    """Every ``members`` rid (sorted: the table's key), as an int64 array."""
    import numpy as np

    with store.read_snapshot(db):
        count = db.execute("SELECT count(*) FROM members").fetchone()[0]
        return np.fromiter(
            (v for (v,) in db.execute("SELECT rid FROM members ORDER BY rid")),
            dtype=np.int64,
            count=count,
        )


def link(db: sqlite3.Connection, live: Live, generation: str, model: str) -> int:
    """Give the records of ``live`` (the current ``generation``) whose text has a vector
    their ``members`` row; returns how many were linked. Members of another generation
    are replaced (what they knew is used first). One transaction."""
    import numpy as np

    same = store.get_meta(db, "generation") == generation
    known = np.fromiter(
        db.execute(
            "SELECT thash, tlen, ckey FROM members WHERE tlen IS NOT NULL"
            " UNION ALL SELECT thash, tlen, ckey FROM keys WHERE thash IS NOT NULL"
        ),
        dtype=[("t", "i8"), ("l", "i8"), ("c", "i8")],
    )
    todo = np.ones(len(live), dtype=bool)
    if same:
        todo = ~np.isin(live.rids, member_rids(db), assume_unique=True)
    rids, ckeys = np.zeros(0, np.int64), np.zeros(0, np.int64)
    # every key with its own (thash, tlen) (0/-1 where it has none: never a record's)
    keyed = np.fromiter(
        db.execute("SELECT ckey, coalesce(thash, 0), coalesce(tlen, -1) FROM keys ORDER BY ckey"),
        dtype=[("c", "i8"), ("t", "i8"), ("l", "i8")],
    )
    if len(known) and todo.any():
        order = np.lexsort((known["l"], known["t"]))
        kt, kl, kc = known["t"][order], known["l"][order], known["c"][order]
        qt, ql = live.thash[todo], live.tlen[todo]
        # the first known row of each thash, then walk its (rare) equal-thash neighbours
        pos = np.searchsorted(kt, qt)
        found = np.full(len(qt), -1, dtype=np.int64)
        for step in range(4):  # the same text hash with several lengths: almost never
            at = np.minimum(pos + step, len(kt) - 1)
            match = (found < 0) & (kt[at] == qt) & (kl[at] == ql)
            found[match] = at[match]
        hit = found >= 0
        rids, ckeys = live.rids[todo][hit], kc[found[hit]]
        alive = np.isin(ckeys, keyed["c"])
        rids, ckeys = rids[alive], ckeys[alive]
    at = np.searchsorted(live.rids, rids)
    key_at = np.searchsorted(keyed["c"], ckeys)
    db.execute("BEGIN IMMEDIATE")
    try:
        if not same:
            db.execute("DELETE FROM members")
            store.set_meta(db, "generation", generation)
            store.set_meta(db, "model", model)
        db.executemany(
            store.INSERT_MEMBER,
            store.member_rows(
                rids.tolist(),
                ckeys.tolist(),
                zip(live.thash[at].tolist(), live.tlen[at].tolist(), strict=True),
                zip(keyed["t"][key_at].tolist(), keyed["l"][key_at].tolist(), strict=True),
            ),
        )
        db.execute("COMMIT")
    except BaseException:
        with suppress(sqlite3.Error):  # a full disk may have rolled it back already
            db.execute("ROLLBACK")
        raise
    return len(rids)


def relink(index_root: Path, model: str) -> int | None:
    """Link the current generation's records to the stored vectors when the store was
    linked to another generation (after a rebuild). Returns how many records were
    linked, or None when there was nothing to do or a fill holds the store (a fill
    links first)."""
    from agentdex.semantic.fill import FillLock

    folder = store.semantic_dir(index_root)
    gen = Location(index_root).current()
    if gen is None or not (folder / "vectors.db").is_file():
        return None
    lock = FillLock(folder)
    try:
        if not lock.acquire(wait=False):
            return None
        db = store.connect(folder, create=True)
        assert db is not None
        try:
            if store.get_meta(db, "generation") == gen.name:
                return None
            if store.get_meta(db, "model") not in (None, model):
                return None  # another model's vectors: the next fill starts over
            index_db = open_reader_db(gen)
            try:
                if coverage.read(index_db) is not None:
                    # a first build still running (a rebuild a search started): its records
                    # keep coming; the first search or fill after it completes links them
                    return None
                index_db.execute("PRAGMA mmap_size=0")
                live = Live.read(index_db)
            finally:
                index_db.close()
            return link(db, live, gen.name, model)
        finally:
            db.close()
    finally:
        lock.close()
