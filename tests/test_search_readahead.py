"""Text blocks decompressed ahead of a verification on a helper thread (search/readahead.py).

The search thread must get exactly the blocks :func:`load_block` reads, in the
order it asks, whatever it skips; the helper holds at most ``WINDOW`` blocks,
leaves a block it cannot read to the search thread (which then raises as
before), and is gone when the verification ends. A search answers the same,
with the same statistics, with and without it.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.index import segments
from agentdex.index.segments import BlockFile, BlockWriter, load_block, prepare
from agentdex.index.store import open_writer_db
from agentdex.records import Record
from agentdex.search import readahead
from agentdex.search.readahead import ReadAhead
from test_index_fixtures import ROWS, register, store_dir, write_file

NOW = 1_795_700_000.0
WORDS = ["retry", "backoff", "timeout", "server", "table", "lock", "migration", "the", "on"]


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 30))) for _ in range(count)]


@pytest.fixture
def generation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A generation of 1,500 records in small blocks (a few hundred of them)."""
    monkeypatch.setattr(segments, "BLOCK_BYTES", 1024)
    db = open_writer_db(tmp_path)
    file = BlockFile(tmp_path, write=True)
    writer = BlockWriter(db, file)
    db.execute("BEGIN IMMEDIATE")
    for i, text in enumerate(_texts(1_500, seed=3)):
        record = Record("a", "s", "p", f"line:{i}", "x", "user", "prompt", text, timestamp=i)
        writer.add_prepared(prepare(record), 1)
    writer.flush()
    db.execute("COMMIT")
    writer.close()
    file.close()
    db.close()
    return tmp_path


def _texts_of(block: Any) -> list[str]:
    return [block.original_text(i) for i in range(block.count)]


def test_the_search_thread_gets_the_blocks_load_block_reads(generation: Path) -> None:
    db = open_writer_db(generation)
    file = BlockFile(generation)
    try:
        ids = [i for (i,) in db.execute("SELECT id FROM blocks ORDER BY id")]
        assert len(ids) > 3 * readahead.WINDOW
        wanted = [*ids[::2], 10**9]  # a block that does not exist is never read ahead
        ahead = ReadAhead(db, file, wanted)
        try:
            asked = wanted[:5] + wanted[9:-1]  # four skipped: passed, never asked for
            for block_id in asked:
                block = ahead.take(block_id)  # the helper's, or read from its row
                expected = load_block(db, file, block_id)
                assert block is not None and expected is not None
                assert block.id == block_id and _texts_of(block) == _texts_of(expected)
            assert ahead.take(wanted[6]) is None  # passed: the caller reads it itself
            assert ahead.take(wanted[0]) is None  # taken already
            assert ahead.take(10**9) is None and ahead.take(ids[1]) is None  # never listed
        finally:
            ahead.close()
        assert not ahead._thread.is_alive()
    finally:
        file.close()
        db.close()


def test_the_helper_stays_a_window_ahead(generation: Path) -> None:
    db = open_writer_db(generation)
    file = BlockFile(generation)
    try:
        ids = [i for (i,) in db.execute("SELECT id FROM blocks ORDER BY id")]
        ahead = ReadAhead(db, file, ids)
        try:
            assert ahead.take(ids[0]) is not None  # the search thread's, from its row
            time.sleep(0.3)  # ample for a few hundred small blocks: the window is what stops it
            mine = [p for p in range(readahead.WINDOW) if p % readahead.STRIDE == 1]
            assert sorted(ahead._ready) == [ids[p] for p in mine]
            assert ahead._finished == mine[-1] + 1
        finally:
            ahead.close()
        assert not ahead._thread.is_alive() and not ahead._ready
    finally:
        file.close()
        db.close()


def test_a_block_the_helper_cannot_read_is_left_to_the_search_thread(
    generation: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = open_writer_db(generation)
    file = BlockFile(generation)
    real = readahead.block_from_row
    try:
        ids = [i for (i,) in db.execute("SELECT id FROM blocks ORDER BY id")][:40]
        broken = ids[3]

        def reading(file: BlockFile, row: tuple[Any, ...]) -> Any:
            if row[0] == broken:
                raise segments.CorruptError("cut short")
            return real(file, row)

        monkeypatch.setattr(readahead, "block_from_row", reading)
        ahead = ReadAhead(db, file, ids)
        try:
            got = [ahead.take(block_id) for block_id in ids]
        finally:
            ahead.close()
        assert 3 % readahead.STRIDE == readahead.STRIDE - 1  # the broken one is the helper's
        assert [block is None for block in got] == [block_id == broken for block_id in ids]
    finally:
        file.close()
        db.close()


def _corpus() -> list[dict[str, object]]:
    rng = random.Random(11)
    return [
        {
            "session": f"s{i % 9}",
            "role": "user" if i % 3 else "assistant",
            "kind": "prompt" if i % 3 else "message",
            "text": text,
            "ts": 1_790_000_000 + i,
            "cwd": "/w",
            "model": None,
            "branch": None,
        }
        for i, text in enumerate(_texts(1_200, seed=rng.randrange(100)))
    ]


def test_a_search_answers_the_same_with_and_without_reading_ahead(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phrases and short words are verified on their candidates (hundreds of blocks)."""
    monkeypatch.setattr(segments, "BLOCK_BYTES", 1024)
    register()
    write_file(store_dir(home) / "corpus.jsonl", _corpus())
    root = home / "index"
    api.refresh(root, home=str(home), rows=ROWS)
    made: list[int] = []
    real = readahead.ReadAhead

    def counted(db: Any, file: Any, block_ids: Any) -> ReadAhead:
        made.append(1)
        return real(db, file, block_ids)

    monkeypatch.setattr(readahead, "ReadAhead", counted)

    def answers(at_least: int) -> list[Any]:
        monkeypatch.setattr(readahead, "AT_LEAST", at_least)
        out = []
        for query in ('"retry backoff"', "lock on the table", '"the server"'):
            for limit in (20, None):
                found = api.search(
                    query, root=root, refresh_first=False, limit=limit, mode="lexical", now=NOW
                )
                stats = {k: v for k, v in found.stats.items() if k != "seconds"}
                out.append((found.results, found.highlights, stats))
        return out

    without = answers(10**9)
    assert not made
    with_it = answers(1)
    assert made  # the helper ran
    assert with_it == without
    assert all(stats["candidates"] > readahead.WINDOW for _, _, stats in without)
