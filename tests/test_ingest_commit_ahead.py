"""The parse workers are sent more files just before the writer commits (so they parse
through the commit), and the index is the same either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdex.api import search as api
from agentdex.index.writer import IndexWriter
from agentdex.ingest import parallel
from agentdex.ingest.workers import ParseWorkers
from test_index_fixtures import ROWS, register, store_dir, write_file


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def _in_flight_at_commits(
    home: Path, monkeypatch: pytest.MonkeyPatch, ahead: int
) -> tuple[list[int], list[str]]:
    """Build ``home`` with one worker, a commit every ~3 files and a window of ~2 files;
    the jobs in flight at each commit made while the workers run, and every text."""
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
    monkeypatch.setattr(parallel, "IN_FLIGHT_BYTES", 2 * size)
    monkeypatch.setattr(parallel, "COMMIT_AHEAD_BYTES", ahead)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_BYTES", 3 * size)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_GROWTH", 1.0)
    pools: list[ParseWorkers] = []
    enter = ParseWorkers.__enter__

    def entered(self: ParseWorkers) -> ParseWorkers:
        pools.append(self)
        return enter(self)

    seen: list[int] = []
    commit = IndexWriter.commit

    def counted(self: IndexWriter, *, beside: bool = False) -> None:
        if pools:
            seen.append(pools[0].sent - pools[0].received)
        commit(self, beside=beside)

    monkeypatch.setattr(ParseWorkers, "__enter__", entered)
    monkeypatch.setattr(IndexWriter, "commit", counted)
    stats = api.refresh(home=str(home), rows=ROWS)  # type: ignore[arg-type]
    assert stats.workers == 1 and stats.records_added == 48
    found = api.search("plum", refresh_first=False, limit=None, dedup=False, sort="time")
    return seen, sorted(r["text"] for r in found.results)


def test_more_files_are_sent_before_a_commit(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen, found = _in_flight_at_commits(home, monkeypatch, ahead=10**9)
    assert len(found) == 48
    # the periodic commits while files remain: every file not yet read was sent ahead
    assert max(seen) > 3, seen


def test_without_the_commit_ahead_the_window_holds(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen, found = _in_flight_at_commits(home, monkeypatch, ahead=0)
    assert len(found) == 48
    assert max(seen) <= 3, seen
