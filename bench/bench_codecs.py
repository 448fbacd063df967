"""Which codec for agentdex's stored text: zlib against zstd and lz4, on real-shaped text.

    python bench/bench_codecs.py HOME [--mb 64] [--real DIR]

Reads records with agentdex's real discovery and parsers from HOME (a
generated corpus: ``bench/generate_corpus.py``) until ``--mb`` MB of text,
and ``--real`` (a Claude Code config dir holding ``projects/``, e.g. the shared
corpus's ``claude-code``) whole. Packs the texts the two ways agentdex stores them:

* ``block``: ~16 KiB of consecutive records' lower-cased UTF-8 joined by NUL
  (the index's text blocks: one is decompressed per verified candidate);
* ``chunk``: ~256 KiB of original text (the archive's chunks).

Per codec and shape: compressed size / raw size, and compress and
decompress speed in MB/s of raw text on one core (the best of 3 passes over
every block or chunk). Prints one JSON document and a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parent.parent / "src"
sys.path.insert(0, str(SRC))

BLOCK = 16 * 1024
CHUNK = 256 * 1024


def texts(home: Path, limit: int) -> Iterator[str]:
    """Record texts of the stores found under ``home``, in discovery order."""
    from agentdex import discovery
    from agentdex.parsers import run
    from agentdex.parsers.base import ParseCursor
    from agentdex.readers import Diagnostics

    seen = 0
    for source in discovery.discover(str(home)).sources:
        if source.row.parser is None:
            continue
        for record in run(source, ParseCursor(), Diagnostics()):
            text = record.text or ""
            yield text
            seen += len(text)
            if seen >= limit:
                return


def pack(items: list[str], size: int, *, lower: bool) -> list[bytes]:
    out: list[bytes] = []
    parts: list[bytes] = []
    filled = 0
    for text in items:
        data = (text.lower() if lower else text).encode("utf-8", "surrogatepass")
        parts.append(data)
        filled += len(data) + 1
        if filled >= size:
            out.append(b"\x00".join(parts))
            parts, filled = [], 0
    if parts:
        out.append(b"\x00".join(parts))
    return out


def codecs() -> dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]]:
    import lz4.block
    import lz4.frame
    import zstandard

    found: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {}
    for level in (1, 4, 6):
        found[f"zlib-{level}"] = (lambda d, lv=level: zlib.compress(d, lv), zlib.decompress)
    for level in (1, 3, 6):
        compressor = zstandard.ZstdCompressor(level=level)
        decompressor = zstandard.ZstdDecompressor()
        found[f"zstd-{level}"] = (compressor.compress, decompressor.decompress)
    found["lz4"] = (lz4.block.compress, lz4.block.decompress)
    found["lz4-hc9"] = (
        lambda d: lz4.block.compress(d, mode="high_compression", compression=9),
        lz4.block.decompress,
    )
    found["lz4-frame"] = (lz4.frame.compress, lz4.frame.decompress)
    return found


def measure(
    pieces: list[bytes], encode: Callable[[bytes], bytes], decode: Callable[[bytes], bytes]
) -> dict[str, Any]:
    raw = sum(len(p) for p in pieces)
    best_c = best_d = float("inf")
    packed: list[bytes] = []
    for _ in range(3):
        start = time.perf_counter()
        packed = [encode(p) for p in pieces]
        best_c = min(best_c, time.perf_counter() - start)
        start = time.perf_counter()
        for p in packed:
            decode(p)
        best_d = min(best_d, time.perf_counter() - start)
    size = sum(len(p) for p in packed)
    return {
        "ratio": round(size / raw, 4),
        "compress_mb_s": round(raw / best_c / 1e6, 1),
        "decompress_mb_s": round(raw / best_d / 1e6, 1),
    }


def run_corpus(items: list[str]) -> dict[str, Any]:
    shapes = {"block": pack(items, BLOCK, lower=True), "chunk": pack(items, CHUNK, lower=False)}
    report: dict[str, Any] = {
        "text_mb": round(sum(len(t.encode("utf-8", "surrogatepass")) for t in items) / 1e6, 1)
    }
    for shape, pieces in shapes.items():
        report[shape] = {name: measure(pieces, *pair) for name, pair in codecs().items()}
    return report


def table(name: str, report: dict[str, Any]) -> str:
    lines = [
        f"{name} ({report['text_mb']} MB of text)",
        "",
        "| codec | block: size/raw | compress MB/s | decompress MB/s |"
        " chunk: size/raw | compress MB/s | decompress MB/s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for codec in report["block"]:
        b, c = report["block"][codec], report["chunk"][codec]
        lines.append(
            f"| {codec} | {b['ratio']} | {b['compress_mb_s']} | {b['decompress_mb_s']}"
            f" | {c['ratio']} | {c['compress_mb_s']} | {c['decompress_mb_s']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--mb", type=float, default=64.0)
    parser.add_argument("--real", type=Path)
    args = parser.parse_args()
    result = {"generated": run_corpus(list(texts(args.home, int(args.mb * 1e6))))}
    if args.real is not None and args.real.is_dir():
        import os
        import tempfile

        with tempfile.TemporaryDirectory() as home:  # nothing else found there
            os.environ["CLAUDE_CONFIG_DIR"] = str(args.real.resolve())
            result["real"] = run_corpus(list(texts(Path(home), 1 << 40)))
    print(json.dumps(result, indent=1))
    for name, report in result.items():
        print("\n" + table(name, report), file=sys.stderr)


if __name__ == "__main__":
    main()
