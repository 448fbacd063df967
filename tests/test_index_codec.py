"""Stored text is written with zstd and still read when an earlier agentdex wrote zlib."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from agentdex.archive.store import TEXT, ArchiveStore
from agentdex.index import codec
from agentdex.index.segments import _xor, pack_original, unpack_original

TEXT_SAMPLE = "Retry the Upload with Backoff; ünïcode ß and İ change length when lower-cased\n" * 40


def test_new_text_is_zstd_and_round_trips() -> None:
    data = TEXT_SAMPLE.encode()
    packed = codec.compress(data)
    assert packed[:4] == codec.ZSTD_MAGIC and len(packed) < len(data) // 4
    assert codec.decompress(packed) == data


def test_blocks_written_by_an_earlier_agentdex_still_read() -> None:
    for original in (b"Same Length Text", TEXT_SAMPLE.encode()):
        lower = original.lower()
        now = pack_original(original, lower)
        assert now[:1] in (b"x", b"z")
        assert unpack_original(now, lambda lw=lower: lw) == original
        if len(original) == len(lower):
            old = b"X" + zlib.compress(_xor(original, lower), 1)
        else:
            old = b"Z" + zlib.compress(original, 1)
        assert unpack_original(old, lambda lw=lower: lw) == original
    assert codec.decompress(zlib.compress(b"lower-cased block", 1)) == b"lower-cased block"


def test_archive_chunks_of_either_codec_read_back(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path, write=True)
    try:
        store.db.execute("BEGIN IMMEDIATE")
        new = store.append_chunk(TEXT, b"written now")
        old = store.append_chunk(TEXT, b"written by zlib", zlib.compress(b"written by zlib", 4))
        store.sync()
        store.db.execute("COMMIT")
    finally:
        store.close()
    reader = ArchiveStore(tmp_path, write=False)
    try:
        assert reader.text(new, 0, 11) == "written now"
        assert reader.text(old, 0, 15) == "written by zlib"
    finally:
        reader.close()


def _dictionary_and_block() -> tuple[bytes, bytes]:
    """A 256 KiB dictionary (raw content, as large as a text file's) and a 16 KiB block, of
    words drawn from one vocabulary (many distinct matches: the tables' size shows)."""
    import random

    rng = random.Random(7)
    vocabulary = [
        "".join(rng.choices("abcdefghijklmnop", k=rng.randint(3, 9))) for _ in range(5000)
    ]

    def text(size: int) -> bytes:
        return " ".join(rng.choices(vocabulary, k=size // 4)).encode()[:size]

    return text(256 * 1024), text(16 * 1024)


def test_dictionary_frames_read_back_with_the_dictionary_alone() -> None:
    """The smaller match tables change how a block is packed, not what a reader needs: a
    zstd frame any agentdex that reads dictionary blocks decompresses with the same bytes."""
    import zstandard

    content, block = _dictionary_and_block()
    packed = codec.Dictionary(content).compress(block)
    assert packed[:4] == codec.ZSTD_MAGIC and len(packed) < len(block) // 2
    reader = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(content))
    assert reader.decompress(packed) == block
    assert codec.Dictionary(content).decompress(packed) == block


def test_level_three_tables_pack_as_level_three_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the tables level 3 sizes for a 256 KiB dictionary the frames are byte for byte
    what ``ZstdCompressor(level=3)`` wrote (so the parameters differ from it in the tables
    alone)."""
    import zstandard

    content, block = _dictionary_and_block()
    monkeypatch.setattr(codec, "DICT_HASH_LOG", 17)
    monkeypatch.setattr(codec, "DICT_CHAIN_LOG", 16)
    level3 = zstandard.ZstdCompressor(level=3, dict_data=zstandard.ZstdCompressionDict(content))
    assert codec.Dictionary(content).compress(block) == level3.compress(block)
    monkeypatch.setattr(codec, "DICT_HASH_LOG", 14)
    monkeypatch.setattr(codec, "DICT_CHAIN_LOG", 13)
    assert codec.Dictionary(content).compress(block) != level3.compress(block)
