"""A first build's archive entries made while it builds (:class:`agentdex.archive.spans.Deriver`).

With a commit after each file, the spans the index committed are derived in pieces on the
deriver's thread, inside the archive's open batch, and only the last batch's at the end.
These tests hold it to the archive the writer builds entry by entry, and to the same archive
after a kill between a piece's derivation and the index's next commit (before or after the
archive's batch, the pieces' entries with it, committed), and they read the archive from
another connection while the build runs: what a reader sees then are whole entries.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.archive import spans
from agentdex.archive.store import ArchiveStore
from agentdex.archive.writer import ArchiveWriter
from agentdex.index.store import index_root
from agentdex.ingest import archiving, feed, parallel
from test_archive_spans import Killed, _archive, _one_at_a_time, _rec, _spans_left
from test_index_fixtures import ROWS, register, store_dir, write_file


@pytest.fixture(autouse=True)
def _beside(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse workers, a commit after every file, pieces of a few dozen records."""
    register()
    monkeypatch.setenv("AGENTDEX_INDEX_WORKERS", "2")
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(feed, "COMMIT_BYTES", 1)
    monkeypatch.setattr(spans, "PIECE_RECORDS", 40)


def _write(home: Path) -> None:
    d = store_dir(home)
    for f in range(6):
        records = [_rec(n + 150 * f, session=f"s{f % 2}") for n in range(200)]
        if f == 2:
            records += [_rec(n) for n in range(0, 300, 7)]  # archived already: no entry
        write_file(d / f"f{f}.jsonl", records)


def _beside_made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, float]]:
    """What each deriver did when it stopped: (entries, pieces, CPU s)."""
    out: list[tuple[int, int, float]] = []
    stop = ArchiveWriter._stop_deriver

    def stopped(self: ArchiveWriter, *, keep: bool) -> None:
        running = self._deriver is not None
        stop(self, keep=keep)
        if running:
            out.append(self.derived_beside)

    monkeypatch.setattr(ArchiveWriter, "_stop_deriver", stopped)
    return out


def _wait_for_piece(writer: ArchiveWriter) -> None:
    deriver = writer._deriver
    assert deriver is not None
    deadline = time.monotonic() + 20
    while deriver.made == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert deriver.made > 0


def test_entries_made_beside_the_build_are_the_ones_built_one_at_a_time(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(home)
    expected = _one_at_a_time(home, monkeypatch)
    beside = _beside_made(monkeypatch)
    stats = api.refresh(home=str(home), rows=ROWS)
    assert stats.records_archived == len(expected) > 1000
    # a deriver ran and made entries in several pieces before the build's end
    assert beside and beside[0][0] > 0 and beside[0][1] > 1
    assert _archive(index_root()) == expected
    assert _spans_left(index_root()) == 0


@pytest.mark.parametrize("archive_committed", [False, True])
def test_a_build_killed_after_a_piece_before_the_index_commits_loses_nothing(
    home: Path, monkeypatch: pytest.MonkeyPatch, archive_committed: bool
) -> None:
    """Killed once a piece's entries are made, at the next commit: before the archive's
    batch commits (the pieces' entries are lost with it, their spans stay) or after it and
    before the index's (the entries stay; the batch's spans are past ``archived_rid``)."""
    _write(home)
    expected = _one_at_a_time(home, monkeypatch)
    commit_first = archiving.IndexingArchive._commit_first
    killed: list[int] = []

    def then_killed(self: archiving.IndexingArchive, index: Any) -> None:
        writer = self.writer
        assert writer is not None
        if writer._deriver is None:
            commit_first(self, index)
            return
        _wait_for_piece(writer)
        killed.append(writer._deriver.made)
        if archive_committed:
            commit_first(self, index)
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(archiving.IndexingArchive, "_commit_first", then_killed)
        with pytest.raises(Killed):
            api.refresh(home=str(home), rows=ROWS)
    assert killed
    store = ArchiveStore(index_root(), write=False)
    try:
        kept = len(list(store.entries()))
    finally:
        store.close()
    assert (kept > 0) == archive_committed
    assert _spans_left(index_root()) > 0
    api.refresh(home=str(home), rows=ROWS)
    assert _archive(index_root()) == expected
    assert _spans_left(index_root()) == 0


def test_a_reader_mid_build_sees_whole_entries(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(home)
    expected = {row[0]: row for row in _one_at_a_time(home, monkeypatch)}
    seen: list[int] = []
    commit_first = archiving.IndexingArchive._commit_first

    def read_then_commit(self: archiving.IndexingArchive, index: Any) -> None:
        commit_first(self, index)
        if self.writer is not None and self.writer._deriver is not None:
            got = _archive(index_root())  # another connection, while the build runs
            assert all(row == expected[row[0]] for row in got)
            seen.append(len(got))

    monkeypatch.setattr(archiving.IndexingArchive, "_commit_first", read_then_commit)
    api.refresh(home=str(home), rows=ROWS)
    # entries were there before the build's end, and more at a later commit
    assert seen and max(seen) > 0
    assert len(_archive(index_root())) == len(expected)
