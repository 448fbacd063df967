"""The archive keeps token usage: what a source once held stays counted through rebuilds.

Real Claude Code transcripts in a temporary home, real refreshes, the real archive. A call
is still counted once (the index counts one row per call), a forgotten conversation's
usage does not come back, and an archive made before it kept usage gets the index's calls.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.api.usage import usage
from agentdex.archive.store import archive_path
from agentdex.index.store import index_root
from agentdex.ingest import manifest
from test_usage_index import _archive_off, _claude, _counts, _totals, _transcript

pytestmark = pytest.mark.deferred_postings


def _history(home: Path) -> tuple[Path, Path]:
    gone = _transcript(home, "s1", [
        _claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 100, 20, 7)),
        _claude("s1", "m2", "2026-03-02T10:00:00Z", (3, 200, 0, 9), model="claude-sonnet-4-5"),
    ])  # fmt: skip
    kept = _transcript(home, "s2", [
        _claude("s2", "m3", "2026-03-02T11:00:00Z", (1, 0, 0, 1)),
        _claude("s1", "m1", "2026-03-03T10:00:00Z", (5, 100, 20, 7)),  # s1's call, copied
    ])  # fmt: skip
    return gone, kept


def _views(home: Path) -> dict[str, Any]:
    return {by: usage(by, home=str(home), refresh_first=False) for by in ("day", "session")}


def _archived_calls() -> int:
    db = sqlite3.connect(archive_path(index_root()) / "archive.db")
    try:
        return int(db.execute("SELECT count(*) FROM usage_calls").fetchone()[0])
    finally:
        db.close()


def test_a_rebuild_after_a_source_is_gone_keeps_its_usage(home: Path) -> None:
    gone, _kept = _history(home)
    before = _views(home) if api.refresh(home=str(home)) else {}
    assert _counts(before["day"]["totals"]) == (3, 9, 300, 20, 17)
    assert _archived_calls() == 4  # every file's copy of each call
    gone.unlink()
    api.refresh(home=str(home))
    rebuilt = api.refresh(home=str(home), full=True)
    assert rebuilt.rebuilt
    after = _views(home)
    assert after["day"]["totals"] == before["day"]["totals"]
    assert after["day"]["rows"] == before["day"]["rows"]
    # per conversation as well (s1's call m1 stays where it was first written)
    assert {r["session_id"]: r["total_tokens"] for r in after["session"]["rows"]} == {
        r["session_id"]: r["total_tokens"] for r in before["session"]["rows"]
    }
    # a second rebuild restores the same, and nothing is counted twice
    api.refresh(home=str(home), full=True)
    assert _views(home)["day"]["totals"] == before["day"]["totals"]


def _meta(db_path: Path, key: str) -> str | None:
    db = sqlite3.connect(db_path)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])
    finally:
        db.close()


def test_a_first_build_beside_an_empty_archive_neither_copies_nor_compares_it_whole(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every call a first build reads is offered to the archive as it goes: the one-time copy
    to the archive and the whole comparison with it are marked done at its start (they were
    about a third of what storing usage cost a cold build), yet a call that loses its row
    after it is still restored from the archive."""
    from agentdex.archive.writer import ArchiveWriter
    from agentdex.ingest import usage_sync

    copied: list[int] = []
    whole: list[None] = []
    add_rows, rows_of = ArchiveWriter.add_usage_rows, usage_sync.archived.rows_of

    def spy_add_rows(self: ArchiveWriter, rows: Any) -> int:
        copied.append(n := add_rows(self, rows))
        return n

    def spy_rows_of(db: sqlite3.Connection, wanted: Any) -> Any:
        if wanted is None:
            whole.append(None)
        return rows_of(db, wanted)

    monkeypatch.setattr(ArchiveWriter, "add_usage_rows", spy_add_rows)
    monkeypatch.setattr(usage_sync.archived, "rows_of", spy_rows_of)
    gone, _kept = _history(home)
    api.refresh(home=str(home))
    root = index_root(home=str(home))
    assert _meta(archive_path(root) / "archive.db", "usage_copied") == "1"
    assert copied == [] and whole == []
    assert _archived_calls() == 4
    before = _counts(_totals(home, refresh_first=False))
    assert before == (3, 9, 300, 20, 17)
    gone.write_text("")  # rewritten without its calls: the archive still has them
    assert _counts(_totals(home)) == before
    # a rebuild beside an archive that holds calls compares it whole (and restores)
    gone.unlink()
    api.refresh(home=str(home), full=True)
    assert whole == [None]
    assert _counts(_totals(home, refresh_first=False)) == before


def test_a_call_a_rewritten_file_dropped_stays_counted(home: Path) -> None:
    path = _transcript(home, "s1", [
        _claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 0, 0, 5)),
        _claude("s1", "m2", "2026-03-01T10:05:00Z", (7, 0, 0, 7)),
    ])  # fmt: skip
    before = _counts(_totals(home))
    _transcript(home, "s1", [_claude("s1", "m1", "2026-03-01T10:00:00Z", (5, 0, 0, 5))])
    assert path.exists()
    assert _counts(_totals(home)) == before  # m2 was billed: the archive keeps it
    api.refresh(home=str(home), full=True)
    assert _counts(_totals(home, refresh_first=False)) == before


def test_without_the_archive_a_rebuild_counts_what_the_sources_hold(home: Path) -> None:
    _archive_off()
    gone, _kept = _history(home)
    api.refresh(home=str(home))
    gone.unlink()
    api.refresh(home=str(home), full=True)
    assert _counts(_totals(home, refresh_first=False)) == (2, 6, 100, 20, 8)


def test_a_forgotten_conversation_does_not_come_back(home: Path, run_cli: Any) -> None:
    gone, _kept = _history(home)
    api.refresh(home=str(home))
    done = run_cli("forget", "--yes", "--session", "s1")
    assert done.returncode == 0, done.stderr
    gone.unlink()
    api.refresh(home=str(home), full=True)
    result = usage("session", home=str(home), refresh_first=False)
    assert [r["session_id"] for r in result["rows"]] == ["s2"]
    assert result["totals"]["calls"] == 1
    db = sqlite3.connect(archive_path(index_root()) / "archive.db")
    try:
        left = db.execute(
            "SELECT count(*) FROM usage_calls u JOIN contexts c ON c.id = u.context_id"
            " WHERE c.session_id = 's1'"
        ).fetchone()[0]
    finally:
        db.close()
    assert left == 0


def test_an_archive_from_before_usage_gets_the_index_calls(home: Path) -> None:
    gone, _kept = _history(home)
    api.refresh(home=str(home))
    before = _counts(_totals(home, refresh_first=False))
    db = sqlite3.connect(archive_path(index_root()) / "archive.db")
    db.executescript(
        "DROP TABLE usage_calls; DELETE FROM migrations WHERE name = 'm002_usage';"
        " DELETE FROM meta WHERE key = 'usage_copied';"
    )
    db.commit()
    db.close()
    manifest.discard(index_root())  # written by the version that had no m002_usage
    api.refresh(home=str(home))  # migrates the archive and copies the index's calls
    assert _archived_calls() == 4
    gone.unlink()
    api.refresh(home=str(home), full=True)
    assert _counts(_totals(home, refresh_first=False)) == before
