"""What an index dir holds on disk, by part, each file (inode) counted once.

Usage: python bench/bench_sizes.py INDEX_DIR CORPUS_DIR [--detail]

INDEX_DIR is ``<data dir>/homes/<home key>/index``. The archive hard-links
the index generation's ``text.blocks`` (one copy of the text): the same
bytes under two names are counted once, with the index. Prints JSON: bytes
per part, the total, the total over the corpus's bytes and the documents of each tantivy
segment per generation; ``--detail`` adds each
SQLite table's and index's pages (``dbstat``: MB on disk, payload, unused) in the
generations' ``index.db`` and the archive's ``archive.db``, and the postings' bytes per
tantivy file kind (``.idx`` postings, ``.pos`` positions, ``.term`` dictionaries...).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    report = sizes(Path(sys.argv[1]), Path(sys.argv[2]))
    if "--detail" in sys.argv[3:]:
        report["detail"] = detail(Path(sys.argv[1]))
    print(json.dumps(report, indent=2))


def detail(root: Path) -> dict[str, dict[str, object]]:
    """Per SQLite table/index [MB, payload MB, unused MB] (those over 50 kB) of each
    database, and the postings' MB per file kind."""
    import sqlite3

    out: dict[str, dict[str, object]] = {}
    for path in [*sorted(root.glob("gen-*/index.db")), root / "archive" / "archive.db"]:
        if not path.is_file():
            continue
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT name, sum(pgsize), sum(payload), sum(unused) FROM dbstat"
                " GROUP BY name ORDER BY 2 DESC"
            ).fetchall()
        finally:
            db.close()
        out[str(path.relative_to(root))] = {
            name: [round(size / 1e6, 2), round(payload / 1e6, 2), round(unused / 1e6, 2)]
            for name, size, payload, unused in rows
            if size > 50_000
        }
    kinds: dict[str, int] = {}
    for path in root.glob("gen-*/postings/*"):
        kinds[path.suffix or path.name] = (
            kinds.get(path.suffix or path.name, 0) + path.stat().st_size
        )
    out["postings"] = {k: round(v / 1e6, 2) for k, v in sorted(kinds.items())}
    return out


def sizes(root: Path, corpus: Path) -> dict[str, object]:
    """The report: bytes per part (MB), the total and its ratio to the corpus's bytes."""
    seen: set[tuple[int, int]] = set()
    parts: dict[str, int] = {}

    def count(name: str, path: Path) -> None:
        st = path.stat()
        if (st.st_dev, st.st_ino) in seen:
            return
        seen.add((st.st_dev, st.st_ino))
        parts[name] = parts.get(name, 0) + st.st_size

    gens = sorted(root.glob("gen-*"))
    for gen in gens:  # the index first: what the archive shares is counted there
        for path in gen.rglob("*"):
            if path.is_file():
                part = "postings" if "postings" in path.parts else path.name
                part = "index.db" if part.startswith("index.db") else part
                count(f"index {part}", path)
    for path in (root / "archive").rglob("*"):
        if path.is_file():
            name = path.name
            part = "archive.db" if name.startswith("archive.db") else name.split("-")[0]
            count(f"archive {part}", path)
    for path in root.iterdir():
        if path.is_file():
            count("other", path)
    total = sum(parts.values())
    corpus_bytes = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file())
    return {
        "generations": [g.name for g in gens],
        "parts_mb": {k: round(v / 1e6, 1) for k, v in sorted(parts.items())},
        "total_mb": round(total / 1e6, 1),
        "corpus_mb": round(corpus_bytes / 1e6, 1),
        "ratio": round(total / corpus_bytes, 3),
        "postings_segments": {g.name: segment_docs(g) for g in gens},
    }


def segment_docs(gen: Path) -> list[int]:
    """The documents of each tantivy segment of a generation's postings, largest first
    (what a term-set query walks once per segment: docs/performance.md, s7-seg)."""
    meta = gen / "postings" / "meta.json"
    if not meta.is_file():
        return []
    segments = json.loads(meta.read_text()).get("segments", [])
    return sorted((int(s["max_doc"]) for s in segments), reverse=True)


if __name__ == "__main__":
    main()
