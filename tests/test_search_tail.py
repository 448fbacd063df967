"""The tail: records a small refresh left out of the postings, verified by every query.

A small refresh (an agent appending a message) opens no tantivy writer; its
records are searchable at once because readers check every tail record
against the query, and a later refresh indexes the tail in one go. Here the
tail is exercised for real (``deferred_postings``), next to records that are
in the postings, against the brute-force oracle.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agentdex.api import search as api
from agentdex.index.store import Location, index_root
from agentdex.ingest import parallel as parallel_mod
from test_index_fixtures import ROWS, register, store_dir, write_file
from test_search_oracle import REGEXES, _engine_set, corpora, oracle, queries

pytestmark = pytest.mark.deferred_postings


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def _meta(root: Path, key: str) -> int:
    import sqlite3

    gen = Location(root).current()
    assert gen is not None
    db = sqlite3.connect(gen / "index.db")
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else 1
    finally:
        db.close()


def rec(text: str) -> dict[str, object]:
    return {"session": "s1", "role": "user", "kind": "prompt", "text": text}


def test_an_append_is_searchable_without_opening_the_postings(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = store_dir(home) / "a.jsonl"
    write_file(path, [rec(f"alpha {i}") for i in range(5)])
    with monkeypatch.context() as patch:
        patch.setattr(parallel_mod, "DEFER_BYTES", 0)
        assert not api.refresh(home=str(home), rows=ROWS).deferred  # into the postings
    root = index_root()
    gen = Location(root).current()
    assert gen is not None
    postings_meta = (gen / "postings" / "meta.json").stat().st_mtime_ns
    write_file(path, [rec("alpha wombat"), rec("a quokkaflux")], mode="ab")
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.deferred and stats.records_added == 2
    assert (gen / "postings" / "meta.json").stat().st_mtime_ns == postings_meta  # untouched
    assert _meta(root, "postings_rid") == 6  # records 6 and 7 are the tail
    found = api.search("alpha", refresh_first=False, limit=3)
    assert found.stats["matched_records"] == 6 and found.stats["total_exact"]
    assert [r["text"] for r in api.search("okkaflu", refresh_first=False).results] == [
        "a quokkaflux"
    ]
    # once the tail is big enough, the next refresh indexes it in one go
    monkeypatch.setattr(parallel_mod, "TAIL_RECORDS", 2)
    write_file(path, [rec("alpha last")], mode="ab")
    assert not api.refresh(home=str(home), rows=ROWS).deferred
    assert _meta(root, "postings_rid") == 9 and _meta(root, "vocab_rid") == 9
    assert [r["text"] for r in api.search("okkaflu", refresh_first=False).results] == [
        "a quokkaflux"
    ]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)
@given(data=st.data(), first=corpora, appended=corpora)
def test_postings_plus_tail_equal_brute_force(
    home: Path, data: st.DataObject, first: list, appended: list
) -> None:
    work = Path(tempfile.mkdtemp(dir=home))
    try:
        fake_home, root = work / "home", work / "index"
        path = store_dir(fake_home) / "corpus.jsonl"
        write_file(path, first)
        parallel_mod.DEFER_BYTES, saved = 0, parallel_mod.DEFER_BYTES
        try:
            api.refresh(root, home=str(fake_home), rows=ROWS)  # in the postings
        finally:
            parallel_mod.DEFER_BYTES = saved
        write_file(path, appended, mode="ab")
        assert api.refresh(root, home=str(fake_home), rows=ROWS).deferred  # the tail
        recs = first + appended
        for _ in range(5):
            query, case, word, regex = data.draw(queries(recs))
            got = _engine_set(root, query, case, word, regex)
            assert got == oracle(recs, query, case, word, regex), (query, case, word)
        for pattern in data.draw(st.lists(st.sampled_from(REGEXES), min_size=1, max_size=2)):
            got = _engine_set(root, pattern, "smart", False, True)
            assert got == oracle(recs, pattern, "smart", False, True), pattern
    finally:
        shutil.rmtree(work, ignore_errors=True)
