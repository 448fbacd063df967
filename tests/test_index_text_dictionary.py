"""Text blocks store the original text once, compressed with a dictionary trained per file.

Real SQLite generations and real ``text.blocks`` files in temporary folders:
every block reads back to the texts written (lower-cased and original), the
dictionary lives in the text file itself, a second writer finds it instead
of training another, a writer killed before its commit leaves neither, and
the archive reads the same blocks through its own hard link.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from agentdex.archive import shared
from agentdex.index import codec, segments
from agentdex.index.segments import (
    BLOCK_FILE,
    BlockFile,
    BlockWriter,
    load_block,
    pack_block,
    prepare,
    unpack_original,
)
from agentdex.index.store import open_writer_db
from agentdex.records import Record

WORDS = (
    "Retry the Upload with Backoff; the ServerError came from src/api/Client.py line",
    "ünïcode ß and İ change length when lower-cased, ΑΣ ends in a final sigma",
    "def handle_request(self, Request):\n    return self.Router.dispatch(Request)",
    "Tool result: 3 files changed, 41 insertions(+), 7 deletions(-)",
)


def texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) + f" #{i} {rng.random()}"
        for i in range(count)
    ]


def write(gen: Path, items: list[str], *, commit: bool = True, start: int = 0) -> None:
    db = open_writer_db(gen)
    file = BlockFile(gen, write=True)
    writer = BlockWriter(db, file)
    db.execute("BEGIN IMMEDIATE")
    for i, text in enumerate(items, start):
        record = Record("a", "s", "p", f"line:{i}", "x", "user", "prompt", text, timestamp=i)
        writer.add_prepared(prepare(record), 1)
    writer.flush()
    db.execute("COMMIT" if commit else "ROLLBACK")
    writer.close()
    file.close()
    db.close()


def read_all(gen: Path) -> list[tuple[str, bytes]]:
    """(original, lower-cased bytes) of every record, in id order."""
    db = open_writer_db(gen)
    file = BlockFile(gen)
    out = []
    try:
        for (block_id,) in db.execute("SELECT id FROM blocks ORDER BY id").fetchall():
            block = load_block(db, file, int(block_id))
            assert block is not None
            for i in range(block.count):
                start, end = block.lower_span(i)
                out.append((block.original_text(i), block.lower[start:end]))
    finally:
        file.close()
        db.close()
    return out


def stored_parts(gen: Path) -> list[tuple[int, bytes]]:
    """(lower_size, the first bytes of the original part) of every block."""
    db = open_writer_db(gen)
    data = (gen / BLOCK_FILE).read_bytes()
    try:
        rows = db.execute("SELECT offset, lower_size FROM blocks ORDER BY id").fetchall()
    finally:
        db.close()
    return [(size, data[offset + size : offset + size + 1]) for offset, size in rows]


def dictionaries(gen: Path) -> set[tuple[int, int]]:
    """Where the file's blocks say their dictionaries lie (offset, size)."""
    db = open_writer_db(gen)
    data = (gen / BLOCK_FILE).read_bytes()
    try:
        rows = db.execute("SELECT offset, lower_size, original_size FROM blocks").fetchall()
    finally:
        db.close()
    refs = {segments.dictionary_ref(data[o + low : o + low + size]) for o, low, size in rows}
    return {ref for ref in refs if ref is not None}


@pytest.fixture
def small_training(monkeypatch: pytest.MonkeyPatch) -> int:
    """Train after 256 KiB (16 blocks) instead of 4 MiB, so a test needs little text."""
    monkeypatch.setattr(segments, "DICT_TRAIN_BYTES", 256 * 1024)
    return 256 * 1024


def expected(items: list[str]) -> list[tuple[str, bytes]]:
    return [(t, t.lower().encode("utf-8", "surrogatepass")) for t in items]


def test_blocks_read_back_from_the_original_alone(tmp_path: Path) -> None:
    items = [*texts(300), "", "ΑΣ", "İstanbul", "\ud800 lone surrogate"]
    write(tmp_path, items)
    assert read_all(tmp_path) == expected(items)
    parts = stored_parts(tmp_path)
    assert parts and all(size == 0 and marker == b"o" for size, marker in parts)


def test_a_dictionary_is_trained_once_and_lives_in_the_text_file(
    tmp_path: Path, small_training: int
) -> None:
    first = texts(2000)
    write(tmp_path, first)
    parts = stored_parts(tmp_path)
    assert {marker for _, marker in parts} == {b"o", b"d"}
    assert all(size == 0 for size, _ in parts)
    assert parts[-1][1] == b"d"
    refs = dictionaries(tmp_path)
    assert len(refs) == 1
    # a second writer appends with the same dictionary: no second one in the file
    more = texts(500, seed=8)
    write(tmp_path, more, start=len(first))
    assert read_all(tmp_path) == expected(first + more)
    assert dictionaries(tmp_path) == refs


def test_the_dictionary_makes_blocks_smaller(tmp_path: Path, small_training: int) -> None:
    items = texts(3000)
    alone, trained = tmp_path / "alone", tmp_path / "trained"
    alone.mkdir()
    trained.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(segments, "DICT_TRAIN_BYTES", 1 << 40)  # never trains
        write(alone, items)
    write(trained, items)
    assert {m for _, m in stored_parts(alone)} == {b"o"}
    assert read_all(trained) == read_all(alone) == expected(items)

    def blocks_bytes(gen: Path) -> int:  # the blocks alone, without the dictionary
        db = open_writer_db(gen)
        try:
            row = db.execute("SELECT sum(lower_size + original_size) FROM blocks").fetchone()
            return int(row[0])
        finally:
            db.close()

    # the dictionary (~30 KB here) pays off over megabytes, not this test's 1 MB
    assert blocks_bytes(trained) < 0.9 * blocks_bytes(alone)


def test_a_writer_killed_before_its_commit_leaves_no_dictionary(
    tmp_path: Path, small_training: int
) -> None:
    write(tmp_path, texts(20))  # under the training size: committed, no dictionary
    end = (tmp_path / BLOCK_FILE).stat().st_size
    write(tmp_path, texts(2000, seed=9), commit=False, start=20)  # trained, never committed
    assert (tmp_path / BLOCK_FILE).stat().st_size > end
    write(tmp_path, ["after the kill"], start=20)  # the next writer cuts what was not committed
    assert read_all(tmp_path) == expected([*texts(20), "after the kill"])
    assert {m for _, m in stored_parts(tmp_path)} == {b"o"}


def test_a_block_whose_lower_case_cannot_be_recomputed_is_stored_both_ways() -> None:
    original = b"Some Text\x00More"
    lower = b"some text\x00not what lower() gives"
    lower_blob, original_blob = pack_block(lower, original, None)
    assert lower_blob and codec.decompress(lower_blob) == lower
    assert unpack_original(original_blob, lambda: lower) == original
    blob_lower, blob = pack_block(original.lower(), original, None)
    assert blob_lower == b"" and unpack_original(blob, lambda: b"") == original


def test_a_dictionary_block_without_its_dictionary_is_an_error() -> None:
    data = b"d" + segments.DICT_REF.pack(0, 10) + b"frame"
    with pytest.raises(Exception, match="dictionary"):
        unpack_original(data, lambda: b"")


def test_the_archive_reads_dictionary_blocks_through_its_link(
    tmp_path: Path, small_training: int
) -> None:
    gen = tmp_path / "gen-000001"
    gen.mkdir()
    items = texts(2000)
    write(gen, items)
    archive = tmp_path / "archive"
    archive.mkdir()
    name = shared.link(archive, gen)
    assert name is not None
    db = open_writer_db(gen)
    rows = db.execute(
        "SELECT id, offset, lower_size, original_size, count, lower_starts, original_starts"
        " FROM blocks ORDER BY id"
    ).fetchall()
    db.close()
    os.unlink(gen / BLOCK_FILE)  # the generation's name is gone: the link still reads
    import sqlite3

    adb = sqlite3.connect(":memory:")
    adb.execute(
        "CREATE TABLE blocks (id INTEGER PRIMARY KEY, file TEXT, offset INTEGER,"
        " lower_size INTEGER, original_size INTEGER, count INTEGER, lower_starts BLOB,"
        " original_starts BLOB)"
    )
    adb.executemany(
        "INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(r[0] + 1, name, *r[1:]) for r in rows],
    )
    reader = shared.SharedBlocks(archive, adb)
    try:
        got = [reader.text(r[0] + 1, position) for r in rows for position in range(int(r[4]))]
    finally:
        reader.close()
        adb.close()
    assert got == items


def starts_stored(gen: Path) -> list[tuple[bytes, bytes]]:
    db = open_writer_db(gen)
    try:
        rows = db.execute("SELECT lower_starts, original_starts FROM blocks ORDER BY id")
        return [(bytes(a), bytes(b)) for a, b in rows.fetchall()]
    finally:
        db.close()


def test_where_records_start_is_found_from_the_separators(tmp_path: Path) -> None:
    plain, nul = tmp_path / "plain", tmp_path / "nul"
    plain.mkdir()
    nul.mkdir()
    items = texts(400)
    write(plain, items)
    assert starts_stored(plain) and all(pair == (b"", b"") for pair in starts_stored(plain))
    assert read_all(plain) == expected(items)
    # a record holding a NUL: its block keeps where each record starts, as before
    with_nul = [*items[:200], "before\x00after İ", *items[200:]]
    write(nul, with_nul)
    stored = starts_stored(nul)
    assert sum(pair != (b"", b"") for pair in stored) == 1
    assert read_all(nul) == expected(with_nul)


def read_records(gen: Path, *, whole_first: bool) -> list[tuple[str, bytes, str]]:
    """(original, lower-cased bytes, lower-cased text) of every record, read one record at a
    time, in reverse order within each block; ``whole_first``: after the whole block's
    lower-cased bytes and original were read."""
    db = open_writer_db(gen)
    file = BlockFile(gen)
    out: list[tuple[str, bytes, str]] = []
    try:
        for (block_id,) in db.execute("SELECT id FROM blocks ORDER BY id").fetchall():
            block = load_block(db, file, int(block_id))
            assert block is not None
            if whole_first:
                assert block.lower and block.original is not None
            got = [
                (block.original_text(i), block.lower_record(i), block.lower_text(i))
                for i in reversed(range(block.count))
            ]
            out.extend(reversed(got))
    finally:
        file.close()
        db.close()
    return out


def test_one_record_reads_the_same_as_its_whole_block(tmp_path: Path) -> None:
    """A record read alone (its bytes cut from the block's original at the separators and
    lower-cased alone) equals its slice of the whole block lower-cased and decoded, in ASCII
    blocks, blocks whose lower case changes lengths or holds a final sigma at a record's
    edge, a block whose records hold NULs (starts stored) and a lone surrogate."""
    ascii_only = [f"Plain ASCII Record {i} with Some CAPITALS" for i in range(400)]
    edges = ["ΑΣ", "Σ", "ΣΑ", "İstanbul", "\u212aelvin", "ſecret", "straße", "ends in Σ", "日本"]
    mixed = [*texts(300), *edges, "\ud800 lone surrogate", ""]
    with_nul = [*ascii_only[:50], "before\x00AFTER İ", *edges]
    for name, items in (("ascii", ascii_only), ("mixed", mixed), ("nul", with_nul)):
        gen = tmp_path / name
        gen.mkdir()
        write(gen, items)
        want = [
            (text, lower, lower.decode("utf-8", "surrogatepass")) for text, lower in expected(items)
        ]
        assert read_records(gen, whole_first=False) == want, name
        assert read_records(gen, whole_first=True) == want, name
    assert sum(pair != (b"", b"") for pair in starts_stored(tmp_path / "nul")) == 1


def test_a_block_stored_both_ways_reads_records_from_its_stored_lower_case() -> None:
    original = b"Some Text\x00More"
    lower = b"some text\x00not what lower() gives"
    lower_blob, original_blob = pack_block(lower, original, None)
    block = segments.Block(0, 1, 2, lower_blob, None, original_blob, None)
    assert [block.lower_record(i) for i in range(2)] == [b"some text", b"not what lower() gives"]
    assert [block.original_text(i) for i in range(2)] == ["Some Text", "More"]


def test_lowered_takes_the_ascii_path_with_the_same_bytes() -> None:
    for text in ("ASCII Only\x00Two Records", "Ünïcode İ Σ\x00K", "", "\ud800x"):
        raw = text.encode("utf-8", "surrogatepass")
        assert segments.lowered(raw) == text.lower().encode("utf-8", "surrogatepass")


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="Linux: thread names in /proc")
def test_the_packing_thread_is_named_where_the_system_shows_threads(tmp_path: Path) -> None:
    """A build's bench and ``perf`` tell the packing thread from the writer's other threads
    by its system name (Python's own names never reach ``/proc``)."""

    def names() -> list[str]:
        found = []
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/comm") as handle:
                found.append(handle.read().strip())
        return found

    db = open_writer_db(tmp_path)
    file = BlockFile(tmp_path, write=True)
    writer = BlockWriter(db, file)
    try:
        db.execute("BEGIN IMMEDIATE")
        record = Record("a", "s", "p", "line:0", "x", "user", "prompt", "packed on the helper")
        writer.add_prepared(prepare(record), 1)
        writer.flush()  # the block went through the packing thread, which is still there
        assert names().count(segments.PACK_THREAD) == 1
        db.execute("COMMIT")
    finally:
        writer.close()
        file.close()
        db.close()
    assert segments.PACK_THREAD not in names()
