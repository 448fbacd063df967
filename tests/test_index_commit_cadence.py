"""A first build commits less often as it goes; an incremental refresh keeps the base
cadence (ingest/feed.py COMMIT_GROWTH).

Fewer commits mean fewer tantivy segments only at scale: tantivy merges any eight
segments under 10,000 documents itself, so at this test's size the every-file cadence
ends merged into one or two segments. What a 1 GB build leaves is measured in
docs/performance.md ("Fewer segments at the end of a build (s7-seg2)")."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdex.api import search as api
from agentdex.index.store import Location, index_root
from agentdex.index.writer import IndexWriter
from test_index_fixtures import ROWS, register, store_dir, write_file

FILES = 48
PER_FILE = 40
REAL_MAYBE_COMMIT = IndexWriter.maybe_commit


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def _write(home: Path, prefix: str, files: int) -> None:
    d = store_dir(home)
    for i in range(files):
        write_file(
            d / f"{prefix}{i:03d}.jsonl",
            [
                {
                    "session": f"{prefix}{i}",
                    "role": "user",
                    "kind": "prompt",
                    "text": f"cadence {prefix} file{i} line{j} " + "w" * (j % 7),
                }
                for j in range(PER_FILE)
            ],
        )


def _build(home: Path, monkeypatch: pytest.MonkeyPatch, growth: float) -> list[float]:
    """Refresh ``home`` with a commit due after every file at the base cadence; return the
    byte thresholds of the periodic commits."""
    one_file = (store_dir(home) / "a000.jsonl").stat().st_size
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_BYTES", one_file)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_SECONDS", 3600.0)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_GROWTH", growth)
    thresholds = _watch(monkeypatch)
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.records_added == FILES * PER_FILE
    gen = Location(index_root()).current()
    assert gen is not None and (gen / "postings" / "meta.json").is_file()
    return thresholds


def _watch(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The byte threshold of each periodic commit the index writer makes from now on."""
    thresholds: list[float] = []

    def watched(
        self: IndexWriter, commit_bytes: float, commit_seconds: float, *, beside: bool = False
    ) -> bool:
        committed = REAL_MAYBE_COMMIT(self, commit_bytes, commit_seconds, beside=beside)
        if committed:
            thresholds.append(commit_bytes)
        return committed

    monkeypatch.setattr(IndexWriter, "maybe_commit", watched)
    return thresholds


def _answer(word: str) -> int:
    return len(api.search(word, refresh_first=False, limit=1000).results)


def test_a_first_build_commits_less_often_as_it_goes(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(home, "a", FILES)
    old = _build(home, monkeypatch, growth=1.0)
    old_hits = _answer("file7")
    monkeypatch.setenv("AGENTDEX_DATA_DIR", str(tmp_path / "second-data"))
    new = _build(home, monkeypatch, growth=2.0)
    # the base cadence commits after every file; the growing one doubles each time, capped
    assert len(old) >= FILES - 1 and set(old) == {old[0]}
    base = new[0]
    assert new[:5] == [base, 2 * base, 4 * base, 8 * base, 16 * base]
    assert len(new) <= 6  # 1 + 2 + 4 + 8 + 16 + 16 files' worth covers the 48 files
    assert _answer("file7") == old_hits > 0  # same records findable


def test_an_incremental_refresh_keeps_the_base_cadence(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(home, "a", 2)
    api.refresh(home=str(home), rows=ROWS)
    _write(home, "b", 8)
    one_file = (store_dir(home) / "b000.jsonl").stat().st_size
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_BYTES", one_file)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_SECONDS", 3600.0)
    thresholds = _watch(monkeypatch)
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.records_added == 8 * PER_FILE
    assert len(thresholds) >= 7 and set(thresholds) == {one_file}
