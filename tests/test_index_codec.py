"""Stored text is written with zstd and still read when an earlier agentdex wrote zlib."""

from __future__ import annotations

import zlib
from pathlib import Path

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
