"""A bulk load's periodic commit writes tantivy's segment on a thread of its own
(``IndexWriter.commit(beside=True)``) while the writer goes on: the records added meanwhile
wait and reach tantivy after it, the markers follow, and a writer stopped after such a
commit leaves what the next writer's ``catch_up`` indexes. Real SQLite generations and
tantivy indexes in temporary folders; tantivy's commit held back by a gate."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
import tantivy

from agentdex.api import search as api
from agentdex.index.columns import Columns
from agentdex.index.postings import PostingsWriter
from agentdex.index.store import Location, index_root
from agentdex.index.writer import IndexWriter
from agentdex.ingest import parallel
from agentdex.ingest.pipeline import Wire
from test_index_fixtures import ROWS, register, store_dir, write_file
from test_index_text_dictionary import read_all
from test_writer_add_many import _wires


class _Gated:
    """tantivy's writer, its ``commit`` waiting for ``gate`` (a segment slow to write)."""

    def __init__(self, inner: Any, gate: threading.Event) -> None:
        self.inner = inner
        self.gate = gate

    def commit(self) -> Any:
        assert self.gate.wait(30)
        return self.inner.commit()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _add(index: IndexWriter, n: int, part: list[Wire]) -> None:
    file_id = index.new_file(f"/f{n}.jsonl", "claude-code", "claude-code.projects", None)
    index.add_many(Columns.from_rows(part), file_id)


def _docs(gen: Path, word: str = "servererror") -> tuple[int, int]:
    postings = tantivy.Index.open(str(gen / "postings"))
    postings.reload()
    searcher = postings.searcher()
    term = tantivy.Query.term_query(postings.schema, "text", word)
    return searcher.num_docs, searcher.search(term, 1).count  # type: ignore[attr-defined]


def _meta(gen: Path, key: str) -> int | None:
    connection = sqlite3.connect(gen / "index.db")
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    finally:
        connection.close()
    return None if row is None else int(row[0])


def _parts(wires: list[Wire]) -> list[list[Wire]]:
    third = len(wires) // 3
    return [wires[:third], wires[third : 2 * third], wires[2 * third :]]


def _plain(root: Path, wires: list[Wire]) -> Path:
    gen = root / "gen-000001"
    gen.mkdir(parents=True)
    index = IndexWriter(gen)
    index.start_bulk_load()
    for n, part in enumerate(_parts(wires)):
        _add(index, n, part)
        index.commit()
    index.close(True)
    return gen


def test_records_added_during_a_commit_beside_reach_the_postings_after_it(tmp_path: Path) -> None:
    wires = _wires(tmp_path, 1500)
    first, second, third = _parts(wires)
    gen = tmp_path / "beside" / "gen-000001"
    gen.mkdir(parents=True)
    index = IndexWriter(gen)
    index.start_bulk_load()
    gate = threading.Event()
    _add(index, 0, first)
    index.postings.writer = _Gated(index.postings.writer, gate)
    index.commit(beside=True)
    committing = index.postings._committing
    assert committing is not None and committing.is_alive()  # tantivy's commit holds
    # the batch's rows are committed; the postings marker is not (the commit still runs)
    assert _meta(gen, "postings_rid") in (None, 1)
    _add(index, 1, second)  # waits beside the commit, not in tantivy's borrowed writer
    assert len(index.postings._waiting) == 1
    gate.set()
    index.commit()  # waits for the one beside, adds what waited, commits its own batch
    assert index.postings._committing is None and not index.postings._waiting
    assert _meta(gen, "postings_rid") == len(first) + len(second) + 1
    _add(index, 2, third)
    index.commit(beside=True)
    index.close(True)  # waits for it and commits its marker
    assert _meta(gen, "postings_rid") == len(wires) + 1
    plain = _plain(tmp_path / "plain", wires)
    assert read_all(gen) == read_all(plain)
    found = _docs(gen)
    assert found == _docs(plain)
    assert found == (len(wires), sum("ServerError" in str(w[2]) for w in wires))
    again = IndexWriter(gen)
    try:
        assert again.tail_size() == 0
    finally:
        again.close(False)


def test_a_writer_stopped_after_a_commit_beside_leaves_its_batch_to_catch_up(
    tmp_path: Path,
) -> None:
    wires = _wires(tmp_path, 1200)
    assert any("\udcff" in str(w[2]) for w in wires)  # catch_up re-adds a lone surrogate too
    first, second, _ = _parts(wires)
    gen = tmp_path / "gen-000001"
    gen.mkdir(parents=True)
    index = IndexWriter(gen)
    index.start_bulk_load()
    _add(index, 0, first)
    index.commit(beside=True)
    assert index.postings._committing is not None
    _add(index, 1, second)
    index.close(False)  # as a kill: the open batch is lost, its marker never written
    assert _meta(gen, "postings_rid") in (None, 1)
    assert _docs(gen)[0] == len(first)  # tantivy's commit itself went through
    index = IndexWriter(gen)
    try:
        assert index.tail_size() == len(first)
        index.catch_up()  # the batch again, once: no record twice in the postings
        index.commit()
    finally:
        index.close(True)
    assert _meta(gen, "postings_rid") == len(first) + 1
    assert _docs(gen) == (len(first), sum("ServerError" in str(w[2]) for w in first))


def test_a_commit_beside_is_only_a_bulk_loads(tmp_path: Path) -> None:
    """Without a bulk load (a refresh of a built generation) a commit stays whole."""
    wires = _wires(tmp_path, 300)
    gen = tmp_path / "gen-000001"
    gen.mkdir(parents=True)
    index = IndexWriter(gen)
    try:
        _add(index, 0, wires)
        index.commit(beside=True)
        assert index.postings._committing is None
        assert _meta(gen, "postings_rid") == len(wires) + 1
    finally:
        index.close(True)


def _refresh(home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str], Path]:
    """A first build of 24 files with one parse worker and a commit every ~3 files; how many
    commits ran beside, every text found, the generation."""
    register()
    d = store_dir(home)
    for i in range(24):
        body = [
            {"session": f"s{i}", "role": "user", "kind": "prompt", "text": f"plum {i} {j}"}
            for j in range(2)
        ]
        write_file(d / f"f{i:02d}.jsonl", body)
    size = (d / "f00.jsonl").stat().st_size
    monkeypatch.setenv("AGENTDEX_INDEX_WORKERS", "1")
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_BYTES", 3 * size)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_GROWTH", 1.0)
    started: list[int] = []
    start = PostingsWriter.start_commit

    def counted(self: PostingsWriter) -> None:
        started.append(1)
        start(self)

    monkeypatch.setattr(PostingsWriter, "start_commit", counted)
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.workers == 1 and stats.records_added == 48
    found = api.search("plum", refresh_first=False, limit=None, dedup=False, sort="time")
    gen = Location(index_root()).current()
    assert gen is not None
    return len(started), sorted(r["text"] for r in found.results), gen


def test_a_first_build_commits_beside_and_ends_level(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beside, found, gen = _refresh(home, monkeypatch)
    assert beside >= 3  # the periodic commits of the bulk load
    assert found == sorted(f"plum {i} {j}" for i in range(24) for j in range(2))
    index = IndexWriter(gen)
    try:
        assert index.tail_size() == 0
        assert index.meta_int("postings_rid") == index.next_record == 49
    finally:
        index.close(False)
    assert _docs(gen, "plum") == (48, 48)
