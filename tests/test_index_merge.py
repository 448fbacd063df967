"""A new generation's big build ends with its postings merged into one tantivy segment
(index/merging.py): the same records found once each, whatever moment a reader looks.

Real files, real SQLite, real tantivy and a real child process. Each commit of these builds
writes one segment (one indexing thread, a commit after every file), so they end with
several segments: tantivy merges eight under 10,000 documents itself, never fewer."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.index import merging, stored
from agentdex.index import writer as writer_mod
from agentdex.index.postings import PostingsWriter
from agentdex.index.segments import BlockFile
from agentdex.index.store import Location, index_root, open_writer_db
from agentdex.index.tail import postings_args
from test_index_fixtures import ROWS, register, store_dir, write_file

FILES = 12
PER_FILE = 30


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    register()
    # one segment per commit (two indexing threads would write one or two)
    monkeypatch.setattr(
        writer_mod, "PostingsWriter", functools.partial(_one_thread, PostingsWriter)
    )
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_SECONDS", 3600.0)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_GROWTH", 1.0)
    monkeypatch.setattr("agentdex.ingest.refresh.BIG_REFRESH_BYTES", 0)


def _one_thread(cls: Any, path: Path, *, threads: int = 2, **kwargs: Any) -> PostingsWriter:
    writer: PostingsWriter = cls(path, threads=1, **kwargs)
    return writer


def _write(home: Path, prefix: str, files: int) -> None:
    for i in range(files):
        write_file(
            store_dir(home) / f"{prefix}{i:03d}.jsonl",
            [
                {
                    "session": f"{prefix}{i}",
                    "role": "user",
                    "kind": "prompt",
                    "text": f"merged {prefix}file{i} line{j} " + "w" * (j % 5),
                }
                for j in range(PER_FILE)
            ],
        )


def _commit_every_file(home: Path, monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
    size = (store_dir(home) / f"{prefix}000.jsonl").stat().st_size
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_BYTES", size)


def _watch_merges(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Segments in the postings each time a merge starts."""
    seen: list[int] = []
    real = merging.start

    def watched(gen: Path, *args: Any, **given: Any) -> Any:
        seen.append(len(merging.segment_sizes(gen / "postings")))
        return real(gen, *args, **given)

    monkeypatch.setattr(merging, "start", watched)
    return seen


def _postings() -> Path:
    gen = Location(index_root()).current()
    assert gen is not None
    return gen / "postings"


def _segments(postings: Path) -> list[tuple[int, int]]:
    """(max_doc, live documents) of each committed segment."""
    import json

    meta = json.loads((postings / "meta.json").read_text())
    return [
        (s["max_doc"], s["max_doc"] - ((s.get("deletes") or {}).get("num_deleted_docs") or 0))
        for s in meta["segments"]
    ]


def _ids(query: str) -> list[str]:
    page = api.search(query, refresh_first=False, limit=10_000)
    return sorted(f"{r['ref']}" for r in page.results)


def test_a_first_build_ends_with_one_segment_and_the_same_records(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(home, "a", FILES)
    _commit_every_file(home, monkeypatch, "a")
    monkeypatch.setattr(merging, "MERGE_ABOVE", 10_000)  # no merge: the reference build
    api.refresh(home=str(home), rows=ROWS)
    unmerged = len(merging.segment_sizes(_postings()))
    assert unmerged >= 3
    expected = {q: _ids(q) for q in ("merged", "afile11", "afile0", "line29", "wwww")}

    monkeypatch.setattr(merging, "MERGE_ABOVE", 2)
    monkeypatch.setenv("AGENTDEX_DATA_DIR", str(tmp_path / "merged-data"))
    seen = _watch_merges(monkeypatch)
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.records_added == FILES * PER_FILE
    assert seen and seen[0] >= 3  # the build left several segments
    assert len(merging.segment_sizes(_postings())) == 1
    for query, ids in expected.items():
        found = _ids(query)
        assert found == ids and len(set(found)) == len(found), query
    assert len(expected["merged"]) == FILES * PER_FILE
    assert len(expected["afile11"]) == PER_FILE  # the last records, re-added once


def test_an_incremental_refresh_does_not_merge(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(home, "a", FILES)
    _commit_every_file(home, monkeypatch, "a")
    api.refresh(home=str(home), rows=ROWS)
    assert len(merging.segment_sizes(_postings())) == 1
    _write(home, "b", 4)
    seen = _watch_merges(monkeypatch)
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.records_added == 4 * PER_FILE
    assert seen == []
    assert len(merging.segment_sizes(_postings())) > 1
    assert len(_ids("bfile3")) == PER_FILE
    assert len(_ids("merged")) == (FILES + 4) * PER_FILE


def test_a_merge_that_fails_leaves_the_build_as_it_was(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(home, "a", FILES)
    _commit_every_file(home, monkeypatch, "a")
    reports: list[dict[str, Any]] = []
    real_start, real_wait = merging.start, merging.wait

    def killed(gen: Path, *args: Any, **given: Any) -> Any:
        proc = real_start(gen, *args, **given)
        assert proc is not None
        proc.kill()  # before, or while, it commits: either way nothing is lost
        return proc

    def waited(proc: Any, db: Any) -> dict[str, Any]:
        report = real_wait(proc, db)
        reports.append(report)
        return report

    monkeypatch.setattr(merging, "start", killed)
    monkeypatch.setattr(merging, "wait", waited)
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.records_added == FILES * PER_FILE
    assert reports and reports[0]["ok"] is False and reports[0]["error"]
    assert len(_ids("merged")) == FILES * PER_FILE
    assert len(set(_ids("merged"))) == FILES * PER_FILE
    assert len(_ids("afile11")) == PER_FILE


def test_a_writer_after_an_unfinished_merge_drops_its_segment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merge child killed after its commit, before the merge: the segment of one live
    record among deleted placeholders stays; the next writer re-adds that record, so the
    segment has none left and its commit drops it (no later commit merges everything)."""
    _write(home, "a", 5)
    _commit_every_file(home, monkeypatch, "a")
    monkeypatch.setattr(merging, "MERGE_ABOVE", 10_000)  # no merge at the end of the build
    api.refresh(home=str(home), rows=ROWS)
    postings = _postings()
    gen = postings.parent
    built = _segments(postings)
    assert 2 <= len(built) < merging.POLICY_MIN_SEGMENTS - 1  # no merge fires below
    # the child's commit, made here, and the id it re-added, as start() records it
    db = open_writer_db(gen)
    last = db.execute("SELECT max(id) FROM record_rows").fetchone()[0]
    row, lowered = next(stored.lowered_rows(db, BlockFile(gen), last))
    db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (merging.READDED, f"[{last}]"))
    db.commit()
    db.close()
    writer = PostingsWriter(postings, threads=1)
    placeholders = max(size for size, _ in built) + 1
    merging.commit_level(writer, [postings_args(row, lowered)], placeholders)
    writer.close(wait_merges=True)
    left = _segments(postings)
    assert (placeholders + 1, 1) in left and len(left) == len(built) + 1
    assert len(_ids("afile4")) == PER_FILE  # the re-added record counted once meanwhile

    _write(home, "b", 2)  # an incremental refresh: its writer opens the postings
    api.refresh(home=str(home), rows=ROWS)
    after = _segments(postings)
    assert all(size <= placeholders for size, _ in after)  # that segment is gone
    assert all(live > 0 for _, live in after)
    check = open_writer_db(gen)
    assert check.execute("SELECT 1 FROM meta WHERE key = ?", (merging.READDED,)).fetchone() is None
    check.close()
    assert len(_ids("afile4")) == PER_FILE
    assert len(_ids("merged")) == 7 * PER_FILE


def test_which_segments_the_merge_leaves() -> None:
    """The largest segments (up to six) are kept out of the merge when each holds a
    sixteenth of the records (and enough to open a level of its own above the
    placeholders' one), and at least two segments are left to merge."""
    leaves = merging.placeholders_for
    # a 1 GB build's layout: six heap flushes and commits' segments kept, four small merged
    sizes = [210_000, 209_000, 208_000, 207_000, 135_000, 129_000, 64_000, 61_000, 22_000, 7_000]
    assert leaves([(size, size) for size in sizes]) == (64_001, 6)
    # six at most
    sizes = [100_000 - i for i in range(0, 18, 2)]
    assert leaves([(size, size) for size in sizes]) == (sizes[6] + 1, 6)
    # 56% and 33%: both kept; 4% is below a sixteenth
    assert leaves(
        [
            (500_000, 500_000),
            (300_000, 300_000),
            (40_000, 40_000),
            (30_000, 30_000),
            (30_000, 30_000),
        ]
    ) == (40_001, 2)
    # two of the same size: kept together, the placeholders' segment after both
    assert leaves(
        [(100_000, 100_000), (80_000, 80_000), (79_999, 79_999), (5_000, 5_000), (5_000, 5_000)]
    ) == (5_001, 3)
    # every segment small: everything is merged, the placeholders' segment first
    assert leaves([(30_000, 30_000)] + [(20_000, 20_000)] * 20) == (30_001, 0)
    # two segments left to merge at least
    assert leaves([(60_000, 60_000), (30_000, 30_000), (10_000, 10_000)]) == (30_001, 1)
    # a large share, but too few to stand in a level above the placeholders'
    assert leaves([(30_000, 30_000), (6_000, 6_000), (6_000, 6_000)]) == (30_001, 0)
    # no room between the largest and the second for the placeholders' segment
    assert leaves([(50_000, 50_000), (49_999, 49_999), (10, 10)]) == (50_001, 0)


def test_the_largest_segment_left_out_of_the_merge(tmp_path: Path) -> None:
    """Real tantivy: a segment of 40,000 records and three small ones end as two segments,
    the large one untouched, every record found once."""
    import tantivy

    path = tmp_path / "postings"
    writer = PostingsWriter(path, threads=1)
    args: list[tuple[Any, ...]] = []
    for batch in (40_000, 100, 100, 100):
        for _ in range(batch):
            rid = len(args)
            args.append((rid, 1, 1, 0, 0, f"common r{rid}", 0.0, 0))
            writer.add(*args[-1])
        writer.commit()
    docs = merging.segment_docs(path)
    assert [size for size, _ in docs] == [40_000, 100, 100, 100]
    placeholders, kept = merging.placeholders_for(docs)
    assert kept == 1
    fillers = merging.POLICY_MIN_SEGMENTS - 1 - (len(docs) - kept)
    merging.commit_level(writer, args[-(fillers + 1) :], placeholders)
    writer.close(wait_merges=True)
    after = merging.segment_docs(path)
    assert len(after) == 2 and after[0] == (40_000, 40_000)
    assert after[1][1] == 300
    index = tantivy.Index.open(str(path))
    index.reload()
    searcher = index.searcher()
    assert searcher.num_docs == 40_300
    query = tantivy.Query.term_query(index.schema, "text", "common")
    assert searcher.search(query, 1).count == 40_300
    for rid in (0, 39_999, 40_000, 40_299):
        query = tantivy.Query.term_query(index.schema, "text", f"r{rid}")
        assert searcher.search(query, 1).count == 1
