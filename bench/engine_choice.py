"""Measure text-index candidates on the same parsed records: the evidence for the engine choice.

    python bench/engine_choice.py run CORPUS_HOME --work DIR [--engines tantivy,roaring,fts5]

Steps (each build in its own subprocess, so peak RSS is its own):

1. ``extract``: parse CORPUS_HOME with agentdex's real parsers and write every
   record's text to ``DIR/records.bin`` (the common input), and pick the
   queries from it deterministically.
2. ``build`` per engine:

   * **tantivy** (PyPI ``tantivy``): lower-cased text, a regex tokenizer
     (``[a-z0-9_]`` runs and non-ASCII runs, each capped at 255 chars) with
     positions, text not stored; record id as a fast field. Substrings come
     from the term dictionary (``.*sub.*``), phrases from
     ``regex_phrase_query`` (outer words as suffix/prefix regexes).
   * **roaring**: per-record trigram posting lists in roaring bitmaps
     (``pyroaring`` + numpy), built by two forked workers and merged.
   * **fts5**: SQLite FTS5 with the ``trigram`` tokenizer (exact substrings).

   tantivy and roaring verify candidates against a text store built the
   same way for both (zlib-1 blocks of lower-cased text, 32 KiB); its build
   time and size are reported separately.
3. ``query`` per engine and query class, in-process (median of 5) and as a
   fresh process (median of 5 subprocess runs, interpreter start included):
   the first page (20 verified hits) and all (exact count).

Prints one JSON document with every figure; docs/architecture-search.md
records a run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import struct
import subprocess
import sys
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent.parent / "src"))

TOKEN = re.compile(r"[a-z0-9_]{1,255}|[^\x00-\x7f]{1,255}")
BLOCK = 32 * 1024
PAGE = 20
ENGINES = ("tantivy", "tantivy-fst", "roaring", "fts5", "fts5-none")


# -- the common input --------------------------------------------------------------------


def read_records(work: Path) -> Iterator[str]:
    """Stream the extracted texts (never the whole file in memory: it would inflate peak RSS)."""
    with open(work / "records.bin", "rb") as handle:
        while header := handle.read(4):
            (length,) = struct.unpack("<I", header)
            yield handle.read(length).decode("utf-8", "replace")


def extract(home: str, work: Path) -> dict[str, Any]:
    """Parse every store with the real parsers; write texts; pick the queries."""
    from agentdex.discovery import discover
    from agentdex.parsers import ParseCursor, run
    from agentdex.readers import Diagnostics

    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    zq: Counter[str] = Counter()
    phrase = None
    count = size = 0
    with open(work / "records.bin", "wb") as out:
        for source in sorted(discover(home).sources, key=lambda s: str(s.path)):
            if source.row.parser is None:
                continue
            for record in run(source, ParseCursor(), Diagnostics()):
                data = (record.text or "").encode("utf-8", "replace")
                out.write(struct.pack("<I", len(data)))
                out.write(data)
                count += 1
                size += len(data)
                zq.update(re.findall(r"\bzq\d+\b", record.text))
                if phrase is None and record.kind == "prompt":
                    words = re.findall(r"[a-z]{6,}", record.text)
                    if len(words) >= 5 and re.search(" ".join(words[1:4]), record.text):
                        phrase = " ".join(words[1:4])
    # a token found once and no prefix of another (zq + the longest numbers)
    longest = max(len(token) for token in zq)
    rare = sorted(token for token, n in zq.items() if n == 1 and len(token) == longest)[0]
    assert phrase is not None
    w1, w2 = phrase.split()[:2]
    queries = {
        "rare": {"literal": rare},
        "phrase": {"literal": phrase},
        "function": {"literal": "function"},
        "the": {"literal": "the"},
        "infix": {"literal": "rimel"},
        "regex": {"regex": rf"{w1} ({w2}|zzq)", "alternatives": [f"{w1} {w2}", f"{w1} zzq"]},
    }
    (work / "queries.json").write_text(json.dumps(queries, indent=1))
    return {
        "records": count,
        "text_mb": round(size / 1e6, 1),
        "parse_seconds": round(time.perf_counter() - started, 2),
        "queries": queries,
    }


# -- text store (verification for tantivy and roaring) -----------------------------------


def build_text_store(work: Path) -> None:
    import numpy as np

    firsts, offsets, starts = [], [], []
    buffer: list[bytes] = []
    local: list[int] = []
    used = 0
    rid = first = 0
    with open(work / "text.blocks", "wb") as out:

        def seal() -> None:
            nonlocal used, buffer, local, first
            if not buffer:
                return
            blob = zlib.compress(b"\x00".join(buffer), 1)
            firsts.append(first)
            offsets.append(out.tell())
            out.write(blob)
            starts.append(np.array(local, dtype=np.uint32))
            buffer, local, used, first = [], [], 0, rid

        for text in read_records(work):
            data = text.lower().encode("utf-8", "replace")
            local.append(used)
            buffer.append(data)
            used += len(data) + 1
            rid += 1
            if used >= BLOCK:
                seal()
        seal()
        offsets.append(out.tell())
    np.save(work / "text.firsts.npy", np.array(firsts, dtype=np.int64))
    np.save(work / "text.offsets.npy", np.array(offsets, dtype=np.int64))
    flat = np.concatenate(starts) if starts else np.zeros(0, dtype=np.uint32)
    np.save(work / "text.starts.npy", flat)


class TextStore:
    """Random access to a record's lower-cased text (one block decompressed per visit)."""

    def __init__(self, work: Path) -> None:
        import numpy as np

        self.firsts = np.load(work / "text.firsts.npy")
        self.offsets = np.load(work / "text.offsets.npy")
        self.starts = np.load(work / "text.starts.npy")
        self.handle = open(work / "text.blocks", "rb")  # noqa: SIM115 - lives with the store
        self.cache: dict[int, bytes] = {}

    def text(self, rid: int) -> bytes:
        import numpy as np

        block = int(np.searchsorted(self.firsts, rid, side="right")) - 1
        data = self.cache.get(block)
        if data is None:
            self.handle.seek(int(self.offsets[block]))
            blob = self.handle.read(int(self.offsets[block + 1] - self.offsets[block]))
            data = zlib.decompress(blob)
            if len(self.cache) > 64:
                self.cache.clear()
            self.cache[block] = data
        start = int(self.starts[rid])
        next_first = int(self.firsts[block + 1]) if block + 1 < len(self.firsts) else -1
        end = (
            len(data)
            if rid + 1 == next_first or rid + 1 >= len(self.starts)
            else (int(self.starts[rid + 1]) - 1)
        )
        return data[start:end]


def verifier(query: dict[str, Any]) -> Any:
    if "regex" in query:
        pattern = re.compile(query["regex"].encode())
        return lambda text: pattern.search(text) is not None
    needle = query["literal"].encode()
    return lambda text: needle in text


def verify_stream(store: TextStore, ids: Iterator[int], query: dict[str, Any], mode: str) -> int:
    check = verifier(query)
    found = 0
    for rid in ids:
        if check(store.text(rid)):
            found += 1
            if mode == "first" and found >= PAGE:
                break
    return found


# -- tantivy -------------------------------------------------------------------------------


def _analyzer() -> Any:
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()


def _tantivy_index(work: Path) -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=False, tokenizer_name="adx", index_option="position")
    builder.add_unsigned_field("rid", stored=False, fast=True, indexed=False)
    schema = builder.build()
    (work / "tantivy").mkdir(exist_ok=True)
    index = tantivy.Index(schema, path=str(work / "tantivy"))
    index.register_tokenizer("adx", _analyzer())
    return index, schema


def build_tantivy(work: Path, heap_mb: int = 96) -> None:
    """Index lower-cased text; then write the term dictionary as ``vocab.txt``."""
    import shutil

    import tantivy

    shutil.rmtree(work / "tantivy", ignore_errors=True)
    index, _ = _tantivy_index(work)
    writer = index.writer(heap_size=heap_mb * 1024 * 1024, num_threads=2)
    for rid, text in enumerate(read_records(work)):
        doc = tantivy.Document()
        doc.add_text("text", text.lower())
        doc.add_unsigned("rid", rid)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    terms = sorted(term for term, _ in index.searcher().terms_with_prefix("text", ""))
    (work / "vocab.txt").write_bytes(("\n" + "\n".join(terms) + "\n").encode())


class Vocabulary:
    """Terms containing / starting with / ending with a string, by scanning the term list."""

    def __init__(self, work: Path) -> None:
        self.blob = (work / "vocab.txt").read_bytes()

    def lookup(self, token: str, left: bool, right: bool) -> list[str]:
        """Terms holding ``token``; ``left``/``right``: the token starts/ends the term."""
        blob = self.blob
        needle = token.encode()
        if left:
            needle = b"\n" + needle
        if right:
            needle += b"\n"
        out: list[str] = []
        pos = blob.find(needle)
        while pos != -1:
            start = blob.rfind(b"\n", 0, pos + (1 if left else 0)) + 1
            end = blob.find(b"\n", pos + (1 if left else 0))
            out.append(blob[start:end].decode())
            pos = blob.find(needle, end)
        return out


def tantivy_query(schema: Any, literal: str, vocab: Vocabulary | None) -> tuple[Any, bool]:
    """The candidate query for one lower-cased literal, and whether it is exact.

    Interior tokens are whole terms; the first and last are suffixes and
    prefixes of terms (infixes when alone). With ``vocab`` they expand
    through the term list; without, through regexes over tantivy's term
    dictionary (``.*tok``), which walks all of it.
    """
    import tantivy

    tokens = _analyzer().pre_tokenize(literal).tokens
    length = len(literal)
    positions = []
    for token in tokens:
        left, right = token.char_offset_from > 0, token.char_offset_to < length
        if left and right:
            positions.append((token.position, [token.text], re.escape(token.text)))
        elif vocab is not None:
            terms = vocab.lookup(token.text, left, right)
            positions.append((token.position, terms, None))
        else:
            regex = ("" if left else ".*") + re.escape(token.text) + ("" if right else ".*")
            positions.append((token.position, None, regex))
    if len(positions) == 1:
        _, terms, regex = positions[0]
        exact = True
        if terms is not None:
            return tantivy.Query.term_set_query(schema, "text", terms), exact
        return tantivy.Query.regex_query(schema, "text", regex), exact
    words = []
    for position, terms, regex in positions:
        if terms is not None and len(terms) <= 64:
            words.append((position, "(?:" + "|".join(re.escape(t) for t in terms) + ")"))
        elif regex is not None:
            words.append((position, regex))
    if len(words) < 2:
        smallest = min((p for p in positions if p[1] is not None), key=lambda p: len(p[1]))
        return tantivy.Query.term_set_query(schema, "text", smallest[1]), False
    return tantivy.Query.regex_phrase_query(schema, "text", words), False


def query_tantivy(work: Path, query: dict[str, Any], mode: str, *, fst: bool = False) -> int:
    import tantivy

    index, schema = _tantivy_index(work)
    searcher = index.searcher()
    vocab = None if fst else Vocabulary(work)
    literals = query.get("alternatives") or [query["literal"]]
    parts = [tantivy_query(schema, lit, vocab) for lit in literals]
    if len(parts) == 1:
        candidates, exact = parts[0]
    else:
        candidates = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q, _ in parts])
        exact = False
    exact = exact and "regex" not in query
    if mode == "all" and exact:
        return int(searcher.search(candidates, limit=1, count=True).count)
    store = TextStore(work)
    limit = 2 * PAGE if mode == "first" else max(1, searcher.num_docs)
    hits = searcher.search(candidates, limit=limit, count=False).hits
    rids = searcher.fast_field_values("rid", [address for _, address in hits])
    found = verify_stream(store, iter(sorted(rids)), query, mode)
    if mode == "first" and found < PAGE and len(rids) == limit:
        hits = searcher.search(candidates, limit=searcher.num_docs, count=False).hits
        rids = searcher.fast_field_values("rid", [address for _, address in hits])
        found = verify_stream(store, iter(sorted(rids)), query, mode)
    return found


def query_tantivy_fst(work: Path, query: dict[str, Any], mode: str) -> int:
    return query_tantivy(work, query, mode, fst=True)


# -- roaring trigram postings ----------------------------------------------------------------


def _trigram_keys(chunk: list[tuple[int, bytes]]) -> Any:
    import numpy as np

    parts = []
    for rid, data in chunk:
        if len(data) < 3:
            continue
        b = np.frombuffer(data, dtype=np.uint8).astype(np.uint32)
        codes = (b[:-2] << 16) | (b[1:-1] << 8) | b[2:]
        parts.append((codes.astype(np.uint64) << np.uint64(32)) | np.uint64(rid))
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    return np.unique(np.concatenate(parts))


def _roaring_worker(args: tuple[str, int, int]) -> str:
    """Build bitmaps for every record whose id % workers == shard; returns a file name."""
    import numpy as np
    from pyroaring import BitMap

    work, shard, workers = Path(args[0]), args[1], args[2]
    maps: dict[int, BitMap] = {}
    chunk: list[tuple[int, bytes]] = []
    used = 0

    def flush() -> None:
        keys = _trigram_keys(chunk)
        if not len(keys):
            return
        codes = (keys >> np.uint64(32)).astype(np.uint32)
        rids = (keys & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        bounds = np.flatnonzero(np.diff(codes)) + 1
        for part_codes, part_rids in zip(
            np.split(codes, bounds), np.split(rids, bounds), strict=True
        ):
            code = int(part_codes[0])
            bitmap = maps.get(code)
            if bitmap is None:
                maps[code] = BitMap(part_rids)
            else:
                bitmap.update(part_rids)

    for rid, text in enumerate(read_records(work)):
        if rid % workers != shard:
            continue
        chunk.append((rid, text.lower().encode("utf-8", "replace")))
        used += len(chunk[-1][1])
        if used > 2 * 1024 * 1024:
            flush()
            chunk, used = [], 0
    flush()
    name = f"roaring.{shard}.bin"
    _write_bitmaps(work / name, maps)
    return name


def _write_bitmaps(path: Path, maps: dict[int, Any]) -> None:
    codes = sorted(maps)
    with open(path, "wb") as out:
        out.write(struct.pack("<I", len(codes)))
        directory = bytearray()
        blobs = []
        offset = 0
        for code in codes:
            blob = maps[code].serialize()
            directory += struct.pack("<IQI", code, offset, len(blob))
            blobs.append(blob)
            offset += len(blob)
        out.write(directory)
        for blob in blobs:
            out.write(blob)


class RoaringReader:
    def __init__(self, path: Path) -> None:
        self.handle = open(path, "rb")  # noqa: SIM115 - lives with the reader
        (n,) = struct.unpack("<I", self.handle.read(4))
        raw = self.handle.read(16 * n)
        self.base = 4 + 16 * n
        self.directory = {
            code: (offset, length) for code, offset, length in struct.iter_unpack("<IQI", raw)
        }

    def bitmap(self, code: int) -> Any:
        from pyroaring import BitMap

        entry = self.directory.get(code)
        if entry is None:
            return BitMap()
        self.handle.seek(self.base + entry[0])
        return BitMap.deserialize(self.handle.read(entry[1]))


def build_roaring(work: Path, workers: int = 2) -> None:
    import multiprocessing

    from pyroaring import BitMap

    with multiprocessing.get_context("fork").Pool(workers) as pool:
        names = pool.map(_roaring_worker, [(str(work), i, workers) for i in range(workers)])
    readers = [RoaringReader(work / name) for name in names]
    codes = sorted(set().union(*(r.directory for r in readers)))
    merged: dict[int, BitMap] = {}
    for code in codes:
        merged[code] = BitMap.union(*(r.bitmap(code) for r in readers))
    _write_bitmaps(work / "roaring.bin", merged)
    for name in names:
        os.unlink(work / name)


def _literal_candidates(reader: RoaringReader, literal: str) -> Any:
    data = literal.encode()
    codes = {(data[i] << 16) | (data[i + 1] << 8) | data[i + 2] for i in range(len(data) - 2)}
    maps = sorted((reader.bitmap(c) for c in codes), key=len)
    result = maps[0]
    for other in maps[1:]:
        result = result & other
        if not result:
            break
    return result


def query_roaring(work: Path, query: dict[str, Any], mode: str) -> int:
    from pyroaring import BitMap

    reader = RoaringReader(work / "roaring.bin")
    literals = query.get("alternatives") or [query["literal"]]
    candidates = BitMap.union(*(_literal_candidates(reader, lit) for lit in literals))
    return verify_stream(TextStore(work), iter(candidates), query, mode)


# -- FTS5 trigram ------------------------------------------------------------------------------


def build_fts5(work: Path, detail: str = "full") -> None:
    import sqlite3

    for suffix in ("", "-wal", "-shm"):
        (work / f"fts5-{detail}.db{suffix}").unlink(missing_ok=True)
    db = sqlite3.connect(work / f"fts5-{detail}.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"CREATE VIRTUAL TABLE f USING fts5(t, tokenize='trigram', detail={detail})")
    batch: list[tuple[int, str]] = []
    db.execute("BEGIN")
    for rid, text in enumerate(read_records(work)):
        batch.append((rid + 1, text.lower()))
        if len(batch) >= 5000:
            db.executemany("INSERT INTO f (rowid, t) VALUES (?, ?)", batch)
            batch = []
    db.executemany("INSERT INTO f (rowid, t) VALUES (?, ?)", batch)
    db.execute("COMMIT")
    db.execute("INSERT INTO f(f) VALUES ('optimize')")
    db.close()


def query_fts5(work: Path, query: dict[str, Any], mode: str, detail: str = "full") -> int:
    """detail=full answers substrings exactly; detail=none only pre-filters (verified here)."""
    import sqlite3

    db = sqlite3.connect(f"file:{work / f'fts5-{detail}.db'}?mode=ro", uri=True)
    literals = query.get("alternatives") or [query["literal"]]
    match = " OR ".join('"' + lit.replace('"', '""') + '"' for lit in literals)
    if detail == "none":  # no positions: phrase MATCH is refused; LIKE uses the trigram index
        like = [f"%{lit.replace('%', '').replace('_', '')}%" for lit in literals]
        where = " OR ".join("t LIKE ?" for _ in like)
        check = verifier(query)
        found = 0
        for (text,) in db.execute(f"SELECT t FROM f WHERE {where}", like):
            if check(text.encode()):
                found += 1
                if mode == "first" and found >= PAGE:
                    break
        return found
    if "regex" not in query and detail == "full":
        if mode == "all":
            return int(db.execute("SELECT count(*) FROM f WHERE f MATCH ?", (match,)).fetchone()[0])
        rows = db.execute("SELECT rowid FROM f WHERE f MATCH ? LIMIT ?", (match, PAGE)).fetchall()
        return len(rows)
    check = verifier(query)
    found = 0
    for (text,) in db.execute("SELECT t FROM f WHERE f MATCH ?", (match,)):
        if check(text.encode()):
            found += 1
            if mode == "first" and found >= PAGE:
                break
    return found


BUILDERS: dict[str, Any] = {
    "tantivy": build_tantivy,
    "roaring": build_roaring,
    "fts5": build_fts5,
    "fts5-none": lambda work: build_fts5(work, "none"),
}
QUERIES: dict[str, Any] = {
    "tantivy": query_tantivy,
    "tantivy-fst": query_tantivy_fst,
    "roaring": query_roaring,
    "fts5": query_fts5,
    "fts5-none": lambda work, query, mode: query_fts5(work, query, mode, "none"),
}
#: engines that reuse another's build
SHARES = {"tantivy-fst": "tantivy"}
FILES = {
    "tantivy": ["tantivy", "vocab.txt"],
    "tantivy-fst": ["tantivy"],
    "roaring": ["roaring.bin"],
    "fts5": ["fts5-full.db", "fts5-full.db-wal"],
    "fts5-none": ["fts5-none.db", "fts5-none.db-wal"],
}


def size_of(work: Path, names: list[str]) -> int:
    total = 0
    for name in names:
        path = work / name
        if path.is_dir():
            total += sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        elif path.exists():
            total += path.stat().st_size
    return total


# -- orchestration ------------------------------------------------------------------------------


def _child(args: list[str]) -> dict[str, Any]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, str(HERE), *args], capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - started
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def run_all(
    home: str, work: Path, engines: list[str], runs: int, reuse: bool, out: Path | None
) -> dict[str, Any]:
    """Every step; ``reuse`` keeps an earlier run's extract, text store and builds."""
    report: dict[str, Any] = {"corpus": home}
    if reuse and out is not None and out.exists() and out.stat().st_size:
        report = json.loads(out.read_text())
    corpus_bytes = sum(p.stat().st_size for p in Path(home).rglob("*") if p.is_file())
    report["corpus_mb"] = round(corpus_bytes / 1e6, 1)
    if not (reuse and "floor" in report):
        report["extract"] = _child(["extract", home, "--work", str(work)])
        report["floor"] = _child(["floor", home])
        report["text_store"] = _child(["build", "text", "--work", str(work)])
    report["text_store"]["mb"] = round(
        size_of(work, ["text.blocks", "text.firsts.npy", "text.offsets.npy", "text.starts.npy"])
        / 1e6,
        1,
    )
    queries = json.loads((work / "queries.json").read_text())
    for engine in engines:
        if engine in SHARES:
            built = dict(report[SHARES[engine]]["build"])
        elif reuse and engine in report and (work / FILES[engine][0]).exists():
            built = dict(report[engine]["build"])
        else:
            built = _child(["build", engine, "--work", str(work)])
        built["mb"] = round(size_of(work, FILES[engine]) / 1e6, 1)
        rows: dict[str, Any] = {}
        for name in queries:
            for mode in ("first", "all"):
                inproc = _child(["query", engine, name, mode, "--work", str(work), "--repeat", "5"])
                fresh = [
                    _child(["query", engine, name, mode, "--work", str(work)])["wall"]
                    for _ in range(runs)
                ]
                rows[f"{name}/{mode}"] = {
                    "found": inproc["found"],
                    "in_process_ms": round(inproc["median"] * 1000, 1),
                    "fresh_ms": round(statistics.median(fresh) * 1000, 1),
                }
        report[engine] = {"build": built, "queries": rows}
        print(json.dumps({engine: report[engine]}), file=sys.stderr)
        if out is not None:
            out.write_text(json.dumps(report, indent=1))
    return report


def table(report: dict[str, Any]) -> str:
    """Markdown tables of a report: builds, then per query class first page / all, fresh."""
    text_mb = report.get("extract", {}).get("text_mb")
    lines = [
        "| engine | build s | build peak RSS MB (+workers) | size MB | size / text |",
        "| --- | --- | --- | --- | --- |",
    ]
    store = report.get("text_store", {})
    if store:
        lines.append(
            f"| text store (shared by tantivy, roaring) | {store['seconds']:.1f} |"
            f" {store['peak_rss_mb']:.0f} | {store['mb']} | {store['mb'] / text_mb:.2f} |"
            if text_mb
            else ""
        )
    engines = [e for e in ENGINES if e in report]
    for engine in engines:
        build = report[engine]["build"]
        workers = build.get("peak_rss_children_mb") or 0
        rss = f"{build['peak_rss_mb']:.0f}" + (f" (+{workers:.0f})" if workers else "")
        ratio = f"{build['mb'] / text_mb:.2f}" if text_mb else "-"
        lines.append(f"| {engine} | {build['seconds']:.1f} | {rss} | {build['mb']} | {ratio} |")
    lines += ["", "| query | " + " | ".join(engines) + " |", "|---" * (len(engines) + 1) + "|"]
    names = list(report[engines[0]]["queries"]) if engines else []
    for name in names:
        cells = []
        for engine in engines:
            row = report[engine]["queries"].get(name, {})
            cells.append(f"{row.get('in_process_ms', '-')} / {row.get('fresh_ms', '-')}")
        found = report[engines[0]]["queries"][name]["found"]
        lines.append(f"| {name} ({found}) | " + " | ".join(cells) + " |")
    return "\n".join(line for line in lines if line is not None)


def floor(home: str) -> dict[str, Any]:
    import orjson

    from agentdex.discovery import discover

    total = 0
    for source in discover(home).sources:
        if source.row.parser is None:
            continue
        data = source.path.read_bytes()
        total += len(data)
        for line in data.splitlines():
            if line.strip():
                orjson.loads(line)
    return {"bytes": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run")
    p_run.add_argument("home")
    p_run.add_argument("--work", type=Path, required=True)
    p_run.add_argument("--engines", default=",".join(ENGINES))
    p_run.add_argument("--runs", type=int, default=5)
    p_run.add_argument("--out", type=Path, help="write the report here after each engine")
    p_run.add_argument("--reuse", action="store_true", help="keep what --out and --work hold")
    p_extract = sub.add_parser("extract")
    p_extract.add_argument("home")
    p_extract.add_argument("--work", type=Path, required=True)
    p_floor = sub.add_parser("floor")
    p_floor.add_argument("home")
    p_build = sub.add_parser("build")
    p_build.add_argument("engine", choices=[*BUILDERS, "text"])
    p_build.add_argument("--work", type=Path, required=True)
    p_table = sub.add_parser("table")
    p_table.add_argument("report", type=Path)
    p_query = sub.add_parser("query")
    p_query.add_argument("engine", choices=ENGINES)
    p_query.add_argument("name")
    p_query.add_argument("mode", choices=["first", "all"])
    p_query.add_argument("--work", type=Path, required=True)
    p_query.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()

    started = time.perf_counter()
    result: dict[str, Any]
    if args.command == "table":
        print(table(json.loads(args.report.read_text())))
        return
    if args.command == "run":
        result = run_all(
            args.home, args.work, args.engines.split(","), args.runs, args.reuse, args.out
        )
        print(json.dumps(result, indent=1))
        return
    if args.command == "extract":
        result = extract(args.home, args.work)
    elif args.command == "floor":
        result = floor(args.home)
    elif args.command == "build":
        (build_text_store if args.engine == "text" else BUILDERS[args.engine])(args.work)
        result = {}
    else:
        query = json.loads((args.work / "queries.json").read_text())[args.name]
        times, found = [], 0
        for _ in range(args.repeat):
            begin = time.perf_counter()
            found = QUERIES[args.engine](args.work, query, args.mode)
            times.append(time.perf_counter() - begin)
        result = {"found": found, "median": statistics.median(times)}
    usage = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result.update(
        seconds=round(time.perf_counter() - started, 3),
        peak_rss_mb=round(usage, 1),
        peak_rss_children_mb=round(children, 1),
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
