"""One-off (lead, session 14): decompression time of the same originals packed with level
3's tables and with s14-pack's smaller ones, alternated.

Usage: python lead-s14-decompress-ab.py INDEX/gen-000001
"""

import sqlite3
import statistics
import sys
import time
from pathlib import Path

import zstandard as zstd

from agentdex.index import codec
from agentdex.index.segments import DICT_REF, BlockFile, dictionary_ref

gen = Path(sys.argv[1])
db = sqlite3.connect(f"file:{gen / 'index.db'}?mode=ro", uri=True)
rows = db.execute(
    "SELECT offset, lower_size, original_size FROM blocks ORDER BY id LIMIT 3000 OFFSET 10000"
).fetchall()
blocks = BlockFile(gen)
originals: list[bytes] = []
data = b""
for offset, lower_size, original_size in rows:
    blob = blocks.read(offset + lower_size, original_size)
    ref = dictionary_ref(blob)
    if ref is None:
        continue
    dictionary = blocks.dictionary(*ref)
    data = dictionary.data
    originals.append(dictionary.decompress(blob[1 + DICT_REF.size :]))
old = zstd.ZstdCompressor(level=3, dict_data=zstd.ZstdCompressionDict(data))
new = codec.Dictionary(data)
packs = {"old": [old.compress(o) for o in originals], "new": [new.compress(o) for o in originals]}
reader = zstd.ZstdDecompressor(dict_data=zstd.ZstdCompressionDict(data))
for packed in packs.values():
    for frame in packed:
        reader.decompress(frame)
times: dict[str, list[float]] = {"old": [], "new": []}
for run in range(7):
    for name in ("old", "new") if run % 2 == 0 else ("new", "old"):
        started = time.perf_counter()
        for frame in packs[name]:
            reader.decompress(frame)
        times[name].append(time.perf_counter() - started)
n = len(originals)
for name, seconds in times.items():
    packed_mb = sum(map(len, packs[name])) / 1e6
    per_block_us = statistics.median(seconds) / n * 1e6
    print(f"{name}: blocks {n}, packed {packed_mb:.2f} MB, decompress {per_block_us:.1f} us")
