"""How stored text is compressed: zstd, chosen by measurement; zlib is still read.

``bench/bench_codecs.py`` compared zlib, zstd and lz4 on agentdex's two
shapes of stored text (16 KiB blocks of lower-cased records, 256 KiB chunks
of original text; docs/performance.md). zstd at level 3 packs both smaller
than the zlib levels used before (1 for blocks, 4 for chunks) and
compresses several times faster, and decompresses faster too; lz4 is faster
still but stores 40-50% more. Text written by an earlier agentdex (zlib)
is told apart by the zstd frame's magic number and read as before.

The compressor keeps per-thread state (a block or chunk is packed on a
helper thread while the writer goes on), so each thread has its own.

A :class:`Dictionary` is a zstd dictionary trained on a text file's first
blocks (:mod:`.segments`): 16 KiB blocks share most of their words and
structure with one another, which a block compressed alone cannot use
(docs/performance.md, "One text, one dictionary").
"""

from __future__ import annotations

import threading
import zlib
from typing import Any

#: the first bytes of every zstd frame
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: text blocks and archive chunks (docs/performance.md, "Stored text: the codec")
LEVEL = 3

_local = threading.local()


def _zstd() -> Any:
    import zstandard

    return zstandard


def compress(data: bytes, level: int = LEVEL) -> bytes:
    """``data`` as one zstd frame (the content size recorded in it)."""
    compressors: dict[int, Any] | None = getattr(_local, "compressors", None)
    if compressors is None:
        compressors = _local.compressors = {}
    compressor = compressors.get(level)
    if compressor is None:
        compressor = compressors[level] = _zstd().ZstdCompressor(level=level)
    return bytes(compressor.compress(data))


def decompress(blob: bytes) -> bytes:
    """A zstd frame, or a zlib stream written by an earlier agentdex."""
    if blob[:4] != ZSTD_MAGIC:
        return zlib.decompress(blob)
    decompressor = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = _local.decompressor = _zstd().ZstdDecompressor()
    return bytes(decompressor.decompress(blob))


def train(samples: list[bytes], size: int) -> bytes:
    """A zstd dictionary of at most ``size`` bytes trained on ``samples``; raises
    :class:`CodecError` when zstd cannot train one (too few or too uniform samples)."""
    try:
        return bytes(_zstd().train_dictionary(size, samples, level=LEVEL).as_bytes())
    except Exception as exc:  # zstandard.ZstdError
        raise CodecError(f"no dictionary: {exc}") from exc


#: the match tables a text file's dictionary packs blocks with (log2 of their entries).
#: zstd sizes them for the 256 KiB dictionary at level 3 (2^17 + 2^16 entries, ~0.8 MB of
#: tables, past a core's 512 KiB L2) whatever the input; in a build, where the writer's
#: other threads and the parse workers share the caches, the packing thread spent ~4x the
#: CPU it spends on the same blocks alone (~0.8 against ~0.2 ms a block: its samples in
#: the dictionary's match search). 2^15 + 2^14 entries (192 KiB) are the same frames to a
#: reader, ~5% larger (docs/performance.md, s14-pack)
DICT_HASH_LOG = 15
DICT_CHAIN_LOG = 14
#: (a frame's window is cut to its input anyway: with 17 and 16 above, the frames are byte for
#: byte what ``ZstdCompressor(level=3, dict_data=...)`` writes)
WINDOW_LOG = 19


class Dictionary:
    """A trained dictionary, with per-thread (de)compressors that use it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._local = threading.local()

    def _state(self) -> Any:
        state = self._local
        if getattr(state, "dict", None) is None:
            state.dict = _zstd().ZstdCompressionDict(self.data)
            state.compressor = None
            state.decompressor = None
        return state

    def compress(self, data: bytes) -> bytes:
        """``data`` as one zstd frame packed with the dictionary (level 3's search, the
        smaller tables above)."""
        state = self._state()
        compressor = state.compressor
        if compressor is None:
            zstd = _zstd()
            # a dictionary object of its own: precomputing ties it to these parameters
            tables = zstd.ZstdCompressionDict(self.data)
            tables.precompute_compress(
                compression_params=zstd.ZstdCompressionParameters(
                    window_log=WINDOW_LOG,
                    hash_log=DICT_HASH_LOG,
                    chain_log=DICT_CHAIN_LOG,
                    search_log=1,
                    min_match=5,
                    strategy=zstd.STRATEGY_DFAST,
                )
            )
            compressor = state.compressor = zstd.ZstdCompressor(dict_data=tables)
        return bytes(compressor.compress(data))

    def decompress(self, blob: bytes) -> bytes:
        state = self._state()
        if state.decompressor is None:
            state.decompressor = _zstd().ZstdDecompressor(dict_data=state.dict)
        return bytes(state.decompressor.decompress(blob))


class CodecError(ValueError):
    """Stored bytes that neither zstd nor zlib can read."""


def checked_decompress(blob: bytes) -> bytes:
    """:func:`decompress`, with either codec's error as one :class:`CodecError`."""
    try:
        return decompress(blob)
    except zlib.error as exc:
        raise CodecError(str(exc)) from exc
    except Exception as exc:  # zstandard.ZstdError: not imported unless zstd is read
        if type(exc).__name__ == "ZstdError":
            raise CodecError(str(exc)) from exc
        raise
