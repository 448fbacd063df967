"""What a fill holds per record (issue 20, item 6: RSS while embedding <= 400 MB at 1 GB).

At 1 GB of history a fill walks ~470k embeddable records while the model
(~250 MB) is loaded; whatever it keeps per record, and whatever it builds at
once for the garbage collection and the coverage report that end it, comes on
top (bench/bench_fill_memory.py). These tests grow a real index to 200k
embeddable records and count, with ``tracemalloc`` (which sees numpy's buffers
too), the bytes per record the fill's steps allocate at their peak and keep.
Byte counts, not times: they do not depend on the machine.
"""

from __future__ import annotations

import sqlite3
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from semantic_support import write_history

#: embeddable records the index is grown to
N = 200_000


def _traced(call: Callable[[], Any]) -> tuple[Any, int, int]:
    """(result, peak bytes, bytes still held by the result) of ``call()``."""
    import numpy  # noqa: F401  (imported lazily by the code measured: not what is counted)

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = call()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak - before, current - before


@pytest.fixture
def big_index(home: Path, run_cli: Any) -> tuple[Path, Path]:
    """(index root, generation folder) of a real index grown to ``N`` embeddable records:
    copies of one prompt row with their own ids, times and text hashes."""
    write_history(home)
    assert run_cli("index").returncode == 0
    gen = sorted((home.parent / "agentdex-data").rglob("gen-*/index.db"))[-1].parent
    db = sqlite3.connect(gen / "index.db")
    have = db.execute(
        "SELECT count(*) FROM record_rows WHERE kind IN ('prompt', 'summary')"
        " OR (kind = 'message' AND role = 'assistant')"
    ).fetchone()[0]
    # the stored columns (locator and timestamp are generated from loc and ts)
    columns = "block_id, file_id, context_id, rk, role_x, kind_x, loc, offset, tlen"
    with db:
        db.execute(
            f"WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)"
            f" INSERT INTO record_rows (id, {columns}, ts, thash)"
            f" SELECT (SELECT max(id) FROM record_rows) + k, {columns},"
            f" 1e9 + (k * 7919) % 100003, k * 2654435761"
            f" FROM n, (SELECT * FROM record_rows WHERE kind = 'prompt' LIMIT 1)",
            (N - have,),
        )
    db.close()
    return gen.parent, gen


def _open(gen: Path) -> sqlite3.Connection:
    from agentdex.index.store import open_reader_db

    index_db = open_reader_db(gen)
    index_db.execute("PRAGMA mmap_size=0")
    return index_db


def test_the_fill_keeps_32_bytes_a_record_and_orders_them_newest_first(
    big_index: tuple[Path, Path],
) -> None:
    from agentdex.semantic import store
    from agentdex.semantic.link import Live

    root, gen = big_index
    index_db = _open(gen)
    db = store.connect(store.semantic_dir(root), create=True)
    assert db is not None

    def read() -> tuple[Live, Any, int]:
        live = Live.read(index_db, times=True)
        todo, done = live.missing(db)
        return live, todo, done

    (live, todo, done), peak, held = _traced(read)
    assert len(live) == N and done == 0 and len(todo) == N
    # newest first, and the newest of equal times first by record id
    order = sorted(
        index_db.execute(
            "SELECT id, timestamp FROM record_rows WHERE id IN (SELECT value FROM json_each(?))",
            (str(todo[:2000].tolist()),),
        ),
        key=lambda row: (-row[1], -row[0]),
    )
    assert [rid for rid, _ in order] == todo[:2000].tolist()
    index_db.close()
    db.close()
    # rid, text hash and length (24) and the todo list (8): no Python object a record,
    # no times kept past the ordering; a list of ints alone took 36 bytes a record
    assert held <= 36 * N, held / N
    # reading them: arrays sized once, rows converted a chunk at a time
    assert peak <= 96 * N, peak / N


def test_garbage_collection_and_coverage_at_the_end_of_a_fill_stay_small(
    big_index: tuple[Path, Path],
) -> None:
    """Every record embedded, plus members of records the index no longer holds: the
    end of a complete fill reads them all (with the model still loaded)."""
    from agentdex.semantic import store
    from agentdex.semantic.fill import coverage
    from agentdex.semantic.link import Live

    root, gen = big_index
    index_db = _open(gen)
    live = Live.read(index_db)
    index_db.close()
    db = store.connect(store.semantic_dir(root), create=True)
    assert db is not None
    gone = list(range(-10, 0))  # no record has a negative id
    with db:
        db.executemany(
            "INSERT INTO keys (ckey, row, thash, tlen) VALUES (?, ?, ?, ?)",
            zip(
                live.rids.tolist() + gone,
                range(N + len(gone)),
                live.thash.tolist() + gone,
                live.tlen.tolist() + gone,
                strict=True,
            ),
        )
        db.executemany(
            "INSERT INTO members (rid, ckey) VALUES (?, ?)",
            ((rid, rid) for rid in live.rids.tolist() + gone),
        )
        store.set_meta(db, "generation", gen.name)
    status, peak, _ = _traced(lambda: coverage(root))
    assert (status["eligible"], status["embedded"], status["vectors"]) == (N, N, N + 10)
    assert peak <= 80 * N, peak / N  # a dict of every record: 134.5 a record (109fed4)

    dropped, peak, _ = _traced(lambda: store.collect_garbage(db, live.rids, live.thash, {}))
    assert dropped == (10, 10)
    assert db.execute("SELECT count(*) FROM members").fetchone()[0] == N
    db.close()
    assert peak <= 48 * N, peak / N  # every member as a tuple took ~130 bytes a member
