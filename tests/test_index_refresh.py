"""Incremental refresh end to end: real files, real discovery, the test parser, refresh."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import pytest

from agentdex.api import search as api
from agentdex.errors import CorruptError
from agentdex.index import segments
from agentdex.index.store import Location, index_root
from agentdex.ingest.stats import DiskFullError
from test_index_fixtures import (
    ROWS,
    SQLITE_ROW,
    register,
    register_sqlite,
    store_dir,
    touch_later,
    write_file,
)


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def rec(text: str, session: str = "s1", **extra: object) -> dict[str, object]:
    return {"session": session, "role": "user", "kind": "prompt", "text": text, **extra}


def refresh(home: Path, **kw: object) -> api.RefreshStats:  # type: ignore[name-defined]
    return api.refresh(home=str(home), rows=ROWS, **kw)  # type: ignore[arg-type]


def texts(query: str) -> list[str]:
    result = api.search(query, refresh_first=False, limit=None, dedup=False, sort="time")
    return sorted(r["text"] for r in result.results)


def test_unchanged_files_are_skipped(home: Path) -> None:
    d = store_dir(home)
    for i in range(5):
        write_file(d / f"f{i}.jsonl", [rec(f"alpha {i}")])
    first = refresh(home)
    assert (first.files_parsed, first.records_added) == (5, 5)
    again = refresh(home)
    assert (again.files_unchanged, again.files_parsed, again.records_added) == (5, 0, 0)
    assert texts("alpha") == [f"alpha {i}" for i in range(5)]


def test_append_resumes_from_last_complete_line(home: Path) -> None:
    path = store_dir(home) / "a.jsonl"
    write_file(path, [rec("one apple"), rec("two apple")])
    with open(path, "ab") as handle:  # an incomplete last line (agent mid-write)
        handle.write(b'{"session": "s1", "text": "three apple"}')
    refresh(home)
    assert texts("apple") == ["one apple", "three apple", "two apple"]
    with open(path, "ab") as handle:
        handle.write(b"\n")
    write_file(path, [rec("four apple")], mode="ab")
    stats = refresh(home)
    assert stats.files_resumed == 1 and stats.files_parsed == 0
    assert stats.records_removed == 1  # only the once-incomplete line was redone
    assert texts("apple") == ["four apple", "one apple", "three apple", "two apple"]
    assert api.index_status()["records"] == 4


def test_rewritten_truncated_replaced_and_deleted_files(home: Path) -> None:
    # the index's own semantics: with the archive on (the default), what a source drops
    # stays searchable as "source gone" (tests/test_archive.py)
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("archive = false\n")
    d = store_dir(home)
    write_file(d / "a.jsonl", [rec("keep mango"), rec("old mango")])
    write_file(d / "b.jsonl", [rec("bee mango")])
    write_file(d / "c.jsonl", [rec("sea mango")])
    refresh(home)
    # rewritten in place with the same size but different first bytes
    write_file(d / "a.jsonl", [rec("keep mangO"), rec("new mango")])
    touch_later(d / "a.jsonl")
    # truncated
    write_file(d / "b.jsonl", [rec("b mango")])
    # replaced by a new file (new inode) that is larger
    tmp = d / "c.tmp"
    write_file(tmp, [rec("sea mango"), rec("sea mango 2")])
    os.replace(tmp, d / "c.jsonl")
    stats = refresh(home)
    assert stats.files_parsed == 3 and stats.files_resumed == 0
    assert texts("mango") == ["b mango", "keep mangO", "new mango", "sea mango", "sea mango 2"]
    (d / "b.jsonl").unlink()
    stats = refresh(home)
    assert stats.files_removed == 1
    assert "b mango" not in texts("mango")


def test_titles_and_first_prompt_fallback(home: Path) -> None:
    d = store_dir(home)
    write_file(
        d / "a.jsonl",
        [
            rec("how do I retry", "s1", ts=1_767_000_000, cwd="/nonexistent/p"),
            {"session": "s1", "title": "Retry design"},
            rec("second chat first prompt", "s2", ts=1_767_100_000, cwd="/nonexistent/p/sub"),
            rec("reply", "s2", ts=1_767_100_100, cwd="/nonexistent/p/sub"),
        ],
    )
    refresh(home)
    convs = api.conversations(refresh_first=False).conversations
    assert [(c["session_id"], c["title"], c["message_count"]) for c in convs] == [
        ("s2", "second chat first prompt", 2),
        ("s1", "Retry design", 1),
    ]
    only = api.conversations("retry", refresh_first=False).conversations
    assert [c["session_id"] for c in only] == ["s1"]
    found = api.conversations_for_workdir("/nonexistent/p/sub", None, None, refresh_first=False)
    assert [c["session_id"] for c in found] == ["s2"]
    window = api.conversations_for_workdir(
        "/nonexistent/p", 1_767_050_000, 1_767_200_000, refresh_first=False
    )
    assert [c["session_id"] for c in window] == ["s2"]
    assert found[0]["first_activity"].endswith("Z")


def test_resolve_ref_orders_records_and_finds_position(home: Path) -> None:
    write_file(
        store_dir(home) / "a.jsonl",
        [rec("first", "s9", ts=10), rec("second", "s9", ts=20), rec("third target", "s9", ts=30)],
    )
    refresh(home)
    hit = api.search("target", refresh_first=False).results[0]
    resolved = api.resolve_ref(hit["ref"])
    assert [r["text"] for r in resolved["records"]] == ["first", "second", "third target"]
    assert resolved["position"] == 2
    assert api.resolve_ref("s9")["position"] is None
    with pytest.raises(Exception, match="no indexed conversation"):
        api.resolve_ref("nope@line:1")


def test_sqlite_store_fingerprint_includes_wal(home: Path) -> None:
    register_sqlite()
    d = home / ".claude" / "testdb"
    d.mkdir(parents=True)
    writer = sqlite3.connect(d / "chat.db")
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE msgs (id INTEGER PRIMARY KEY, session TEXT, text TEXT)")
    writer.execute("INSERT INTO msgs (session, text) VALUES ('d1', 'walrus one')")
    writer.commit()
    rows = (SQLITE_ROW,)
    api.refresh(home=str(home), rows=rows)
    assert texts("walrus") == ["walrus one"]
    before = (d / "chat.db").stat()
    writer.execute("INSERT INTO msgs (session, text) VALUES ('d1', 'walrus two')")
    writer.commit()
    after = (d / "chat.db").stat()
    assert (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)
    stats = api.refresh(home=str(home), rows=rows)
    assert stats.files_parsed == 1
    assert texts("walrus") == ["walrus one", "walrus two"]
    writer.close()


def test_corrupt_index_is_rebuilt_with_a_message(home: Path) -> None:
    write_file(store_dir(home) / "a.jsonl", [rec("kiwi one")])
    refresh(home)
    gen = Location(index_root()).current()
    assert gen is not None
    (gen / "index.db-wal").unlink(missing_ok=True)
    (gen / "index.db-shm").unlink(missing_ok=True)
    (gen / "index.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(CorruptError):
        api.search("kiwi", refresh_first=False)
    warnings: list[str] = []
    stats = refresh(home, warn=warnings.append)
    assert stats.rebuilt and any("rebuilding" in w for w in warnings)
    assert texts("kiwi") == ["kiwi one"]


def test_disk_full_leaves_the_index_consistent(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segments, "BLOCK_BYTES", 64)
    monkeypatch.setattr("agentdex.ingest.feed.COMMIT_BYTES", 1)
    d = store_dir(home)
    for i in range(6):
        write_file(d / f"f{i}.jsonl", [rec(f"plum {i} " + "x" * 80)])
    real_seal = segments.BlockWriter.seal
    calls = {"n": 0}

    def failing_seal(self: segments.BlockWriter) -> None:
        calls["n"] += 1
        if calls["n"] > 3 and self._rows:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_seal(self)

    monkeypatch.setattr(segments.BlockWriter, "seal", failing_seal)
    with pytest.raises(DiskFullError, match="disk full"):
        refresh(home)
    partial = texts("plum")
    assert 0 < len(partial) < 6
    assert api.index_status()["records"] == len(partial)  # nothing half-written
    monkeypatch.setattr(segments.BlockWriter, "seal", real_seal)
    refresh(home)
    assert len(texts("plum")) == 6
    assert api.index_status()["records"] == 6


def test_full_rebuild_and_busy_writer(home: Path) -> None:
    write_file(store_dir(home) / "a.jsonl", [rec("fig one"), rec("fig two")])
    refresh(home)
    old = Location(index_root()).current()
    stats = refresh(home, full=True)
    new = Location(index_root()).current()
    assert stats.rebuilt and old != new and old is not None and not old.exists()
    assert texts("fig") == ["fig one", "fig two"]
    from agentdex.index.lock import WriterLock

    lock = WriterLock(Location(index_root()).lock_path)
    lock.acquire()
    try:
        busy = refresh(home, wait=False)
        assert busy.skipped_busy
        result = api.search("fig", home=str(home), rows=ROWS)
        assert result.stats["refresh"].startswith("skipped")
        assert len(result.results) == 2
    finally:
        lock.release()


def test_vanishing_and_unreadable_files_are_skipped(home: Path) -> None:
    import test_index_fixtures as fx

    d = store_dir(home)
    write_file(d / "ok.jsonl", [rec("pear ok")])
    write_file(d / "locked.jsonl", [rec("pear locked")])
    write_file(d / "gone.jsonl", [rec("pear gone")])
    fx.UNREADABLE.add("locked.jsonl")
    fx.VANISH.add("gone.jsonl")
    try:
        stats = refresh(home)
    finally:
        fx.UNREADABLE.clear()
        fx.VANISH.clear()
    assert stats.diagnostics == 2
    assert texts("pear") == ["pear ok"]
    stats = refresh(home)  # the unreadable file is retried, not remembered as indexed
    assert stats.files_parsed + stats.files_resumed == 1
    assert texts("pear") == ["pear locked", "pear ok"]
    assert api.index_status()["files"] == 2


def test_parallel_parse_workers_index_the_same(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked parse worker (used for big refreshes) gives the same index and resumes."""
    import test_index_fixtures as fx

    d = store_dir(home)
    for i in range(12):
        write_file(d / f"f{i:02d}.jsonl", [rec(f"grape {i} {j}", f"s{i}") for j in range(30)])
    write_file(d / "gone.jsonl", [rec("grape gone")])
    write_file(d / "locked.jsonl", [rec("grape locked")])
    fx.UNREADABLE.add("locked.jsonl")
    fx.VANISH.add("gone.jsonl")
    monkeypatch.setenv("AGENTDEX_INDEX_WORKERS", "1")
    monkeypatch.setattr("agentdex.ingest.parallel.IN_FLIGHT_BYTES", 2000)
    monkeypatch.setattr("agentdex.ingest.parallel.PARALLEL_MIN_BYTES", 0)
    try:
        stats = refresh(home)
    finally:
        fx.UNREADABLE.clear()
        fx.VANISH.clear()
    assert stats.records_added == 360 and stats.diagnostics == 2
    assert len(texts("grape")) == 360
    write_file(d / "f03.jsonl", [rec("grape appended", "s3")], mode="ab")
    stats = refresh(home)
    assert (stats.files_resumed, stats.records_added) == (2, 2)  # + the unreadable one
    assert len(texts("grape")) == 362  # + the appended line + the once-unreadable file
    assert api.index_status()["records"] == 362


def test_a_copied_home_is_rebuilt_once_not_updated_then_compacted(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agentdex.ingest.refresh.MIN_GARBAGE", 0)
    d = store_dir(home)
    for i in range(4):
        write_file(d / f"f{i}.jsonl", [rec(f"pear {i}")])
    refresh(home)
    old = Location(index_root()).current()
    write_file(d / "f0.jsonl", [rec("pear 0"), rec("pear 0b")])  # one of four changed
    one = refresh(home)
    assert (one.files_parsed + one.files_resumed, one.rebuilt) == (1, False)
    for i in range(4):  # new inodes and mtimes, as after a copy or a restore
        path = d / f"f{i}.jsonl"
        copy = path.with_suffix(".tmp")
        copy.write_bytes(path.read_bytes())
        copy.replace(path)
        touch_later(path)
    warnings: list[str] = []
    stats = refresh(home, warn=warnings.append)
    assert stats.rebuilt and stats.files_parsed == 4  # parsed once, not twice
    assert any("rebuilding the index instead" in w for w in warnings)
    new = Location(index_root()).current()
    assert old is not None and new != old and not old.exists()
    assert texts("pear") == ["pear 0", "pear 0b", "pear 1", "pear 2", "pear 3"]


def test_file_rows_read_lazily_behave_like_the_table_read_at_the_start() -> None:
    from agentdex.index.files import FILE_COLUMNS, FileRows

    db = sqlite3.connect(":memory:")
    columns = [c.strip() for c in FILE_COLUMNS.split(",")]
    db.execute(f"CREATE TABLE files ({', '.join(columns)}, UNIQUE(path))")
    for i in range(3):
        db.execute(
            f"INSERT INTO files VALUES ({', '.join('?' * len(columns))})",
            (i, f"/p{i}", *([0] * (len(columns) - 2))),
        )
    rows = FileRows(db)
    assert rows.get("/p1") is not None and rows.get("/p1")[0] == 1  # type: ignore[index]
    assert rows.get("/nope") is None and "/nope" not in rows
    assert rows.pop("/p0") is not None and "/p0" not in rows  # popped: gone, the table aside
    rows["/new"] = (9, "/new", *([0] * (len(columns) - 2)))
    assert sorted(path for path, _ in rows.items()) == ["/new", "/p1", "/p2"]
    db.execute("DELETE FROM files WHERE path = '/p2'")  # read already: the start's view holds
    assert "/p2" in rows and len(rows.values()) == 3
