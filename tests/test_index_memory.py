"""The writer's memory keeper: freed memory handed back, its thread stopped with the writer."""

from __future__ import annotations

import ctypes
import threading
import time
from pathlib import Path

import pytest

from agentdex.index import memory

CHUNK = 64 * 1024  # below glibc's mmap threshold: served from the heap, kept when freed
CHUNKS = 512  # 32 MiB


def _c_library() -> ctypes.CDLL:
    lib = memory.libc()
    if lib is None or not hasattr(lib, "malloc_trim") or memory.anon_rss() is None:
        pytest.skip("needs Linux with glibc")
    assert lib is not None
    return lib


def test_the_keeper_hands_back_memory_freed_since_it_looked() -> None:
    lib = _c_library()
    malloc, free, memset = lib.malloc, lib.free, lib.memset
    malloc.restype = ctypes.c_void_p
    malloc.argtypes = [ctypes.c_size_t]
    free.argtypes = [ctypes.c_void_p]
    memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    keeper = memory.MemoryKeeper()  # its level: before the allocations
    chunks = [malloc(CHUNK) for _ in range(CHUNKS)]
    pin = malloc(CHUNK)  # above the others: glibc cannot shrink its heap past it by itself
    try:
        for chunk in chunks:
            memset(chunk, 1, CHUNK)
        for chunk in chunks:
            free(chunk)
        kept = memory.anon_rss()
        assert kept is not None
        if kept - keeper.low < 24 * 1024 * 1024:
            pytest.skip("this C library returned the freed memory by itself")
        keeper.start()
        deadline = time.monotonic() + 30
        while memory.anon_rss() > kept - 16 * 1024 * 1024 and time.monotonic() < deadline:  # type: ignore[operator]
            time.sleep(0.05)
        keeper.stop()
        after = memory.anon_rss()
        assert after is not None
        assert keeper.trims >= 1
        assert kept - after >= 16 * 1024 * 1024  # most of the 32 MiB left the resident set
    finally:
        keeper.stop()
        free(pin)


def test_the_keeper_trims_only_after_growth() -> None:
    _c_library()
    keeper = memory.MemoryKeeper()
    keeper.start()
    time.sleep(6 * memory.KEEP_SECONDS)  # a steady process: nothing grew
    keeper.stop()
    assert keeper.trims == 0


def test_the_postings_writer_stops_its_keeper_when_closed(tmp_path: Path) -> None:
    from agentdex.index.postings import PostingsWriter

    def keepers() -> int:
        return sum(t.name == "agentdex-memory" and t.is_alive() for t in threading.enumerate())

    before = keepers()
    writer = PostingsWriter(tmp_path / "postings", threads=1)
    if writer.keeper._thread is None:
        writer.close(wait_merges=False)
        pytest.skip("needs Linux with glibc")
    assert keepers() == before + 1
    writer.add(1, 1, 1, 0, 0, "hello world", None, 0)
    writer.commit()
    writer.close(wait_merges=True)
    assert keepers() == before


def test_a_bulk_load_keeps_a_small_sqlite_cache_and_restores_the_usual_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk load's rows are appended: it runs with a small page cache (SQLite's sorts are
    bounded by it too), builds the record indexes with a smaller one, then restores it."""
    from agentdex.index import writer as writer_mod
    from agentdex.index.segments import prepare
    from agentdex.records import Record

    gen = tmp_path / "gen-000001"
    gen.mkdir()
    writer = writer_mod.IndexWriter(gen)

    def cache() -> int:
        return int(writer.db.execute("PRAGMA cache_size").fetchone()[0])

    usual = cache()
    probe = "CREATE TEMP TABLE sorting_cache AS SELECT cache_size FROM pragma_cache_size()"
    monkeypatch.setattr(writer_mod, "RECORD_INDEXES", (*writer_mod.RECORD_INDEXES, probe))
    try:
        writer.start_bulk_load()
        assert cache() == -writer_mod.BULK_CACHE_KIB != usual
        fid = writer.new_file("/x.jsonl", "claude-code", "claude-code.transcripts", None)
        for n in range(3):
            record = Record(
                agent="claude-code",
                store="claude-code.transcripts",
                source_path="/x.jsonl",
                locator=f"line:{n + 1}",
                session_id="s",
                role="user",
                kind="prompt",
                text=f"wombat{n} digs",
            )
            writer.add(prepare(record), fid)
        writer.finish(big=True)
        sorted_with = writer.db.execute("SELECT cache_size FROM temp.sorting_cache").fetchone()
        assert sorted_with == (-writer_mod.SORT_CACHE_KIB,)
        assert cache() == usual
        assert writer.db.execute("SELECT count(*) FROM record_rows").fetchone() == (3,)
    finally:
        writer.close(True)
