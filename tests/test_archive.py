"""The archive end to end: real files in a temporary home, the test store format
(tests/test_index_fixtures.py), real discovery, real refreshes.

What a source loses (deleted, truncated, rewritten) stays searchable, shown and
marked ``source_gone``; rebuilds re-import it; re-reading unchanged content costs
no archive space; ``archive = false`` turns all of it off.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import archive as archive_api
from agentdex.api import history
from agentdex.api import search as api
from agentdex.archive.store import archive_path
from agentdex.errors import NotFoundError
from agentdex.index.store import Location, index_root
from test_index_fixtures import ROWS, register, store_dir, touch_later, write_file


@pytest.fixture(autouse=True)
def _parser() -> None:
    register()


def rec(text: str, session: str = "s1", **extra: Any) -> dict[str, Any]:
    return {"session": session, "role": "user", "kind": "prompt", "text": text, **extra}


def refresh(home: Path, **kw: Any) -> Any:
    return api.refresh(home=str(home), rows=ROWS, **kw)


def results(query: str) -> list[tuple[str, bool]]:
    """(text, source_gone) of every match, sorted."""
    found = api.search(query, refresh_first=False, limit=None, dedup=False, sort="time")
    return sorted((r["text"], r["source_gone"]) for r in found.results)


def archive_db() -> sqlite3.Connection:
    return sqlite3.connect(archive_path(index_root()) / "archive.db")


def archived_texts() -> list[str]:
    from agentdex.archive.store import ArchiveStore

    store = ArchiveStore(index_root(), write=False)
    try:
        return sorted(store.text(e[16], e[17], e[18]) for e in store.entries("1 ORDER BY e.id"))
    finally:
        store.close()


def archive_off() -> None:
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("archive = false\n")


def test_a_deleted_file_stays_searchable_shown_and_marked(home: Path) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("kiwi one", ts=100), rec("kiwi two", ts=101)])
    write_file(d / "s2.jsonl", [rec("kiwi live", session="s2", ts=102)])
    first = refresh(home)
    assert first.records_archived == 3
    (d / "s1.jsonl").unlink()
    stats = refresh(home)
    assert stats.files_removed == 1 and stats.records_removed == 0  # kept, not deleted
    assert results("kiwi") == [("kiwi live", False), ("kiwi one", True), ("kiwi two", True)]
    gone = next(r for r in api.search("kiwi one", refresh_first=False).results)
    assert gone["source_path"] == str(d / "s1.jsonl")  # the original path, not a marker
    conversations = api.conversations(refresh_first=False).conversations
    listed = {c["session_id"]: c["source_gone"] for c in conversations}
    assert listed == {"s1": True, "s2": False}
    shown = history.show("s1", str(home))
    assert [r["text"] for r in shown["records"]] == ["kiwi one", "kiwi two"]
    assert all(r["source_gone"] for r in shown["records"])
    # path: filters match the original path of archived records
    assert len(api.search(f"path:{d} kiwi", refresh_first=False).results) == 3


def test_truncated_and_rewritten_sources_keep_what_they_dropped(home: Path) -> None:
    d = store_dir(home)
    path = d / "s1.jsonl"
    write_file(path, [rec("plum a", ts=1), rec("plum b", ts=2), rec("plum c", ts=3)])
    refresh(home)
    write_file(path, [rec("plum a", ts=1)])  # truncated
    refresh(home)
    assert results("plum") == [("plum a", False), ("plum b", True), ("plum c", True)]
    # show merges what the file holds with what only the archive keeps, in time order
    shown = history.show("s1", str(home))
    assert [(r["text"], r["source_gone"]) for r in shown["records"]] == [
        ("plum a", False),
        ("plum b", True),
        ("plum c", True),
    ]
    focused = history.show("s1@line:3", str(home))  # a reference into the lost part
    assert shown["records"][focused["focus"]]["text"] == "plum c"
    # rewritten in place: both versions stay, the old one marked
    write_file(path, [rec("plum A", ts=1)])
    touch_later(path)
    refresh(home)
    assert results("plum") == [
        ("plum A", False),
        ("plum a", True),
        ("plum b", True),
        ("plum c", True),
    ]


def test_a_record_still_being_written_is_not_repeated(home: Path) -> None:
    """An earlier, shorter state of a record (a reply read mid-stream) is archived but not
    shown beside the finished one: every part of it is found through the live record."""
    d = store_dir(home)
    path = d / "s1.jsonl"
    write_file(path, [rec("the quince answer is", role="assistant", kind="message", ts=5)])
    refresh(home)
    write_file(path, [rec("the quince answer is 42", role="assistant", kind="message", ts=5)])
    touch_later(path)
    refresh(home)
    assert results("quince") == [("the quince answer is 42", False)]
    assert "the quince answer is" in archived_texts()


def test_a_rebuild_reimports_what_only_the_archive_holds(home: Path) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("fig gone", ts=1)])
    write_file(d / "s2.jsonl", [rec("fig here", session="s2", ts=2)])
    refresh(home)
    (d / "s1.jsonl").unlink()
    refresh(home)
    rebuilt = refresh(home, full=True)
    assert rebuilt.rebuilt and rebuilt.records_restored == 1
    assert results("fig") == [("fig gone", True), ("fig here", False)]
    # a second rebuild re-imports it again and adds nothing to the archive
    again = refresh(home, full=True)
    assert again.records_archived == 0 and again.records_restored == 1
    assert results("fig") == [("fig gone", True), ("fig here", False)]


def test_rereading_unchanged_content_costs_no_archive_space(home: Path) -> None:
    d = store_dir(home)
    path = d / "s1.jsonl"
    write_file(path, [rec(f"date {i} " + "pad " * 50, ts=i) for i in range(200)])
    refresh(home)
    folder = archive_path(index_root())
    sizes = {p.name: p.stat().st_size for p in folder.glob("chunks-*.blobs")}
    copy = path.with_suffix(".tmp")
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)  # the same content in a new file: re-read whole
    stats = refresh(home)
    assert stats.files_parsed == 1 and stats.records_added == 200
    assert stats.records_archived == 0
    assert {p.name: p.stat().st_size for p in folder.glob("chunks-*.blobs")} == sizes
    db = archive_db()
    assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == 200


def test_a_source_that_comes_back_is_not_shown_twice(home: Path) -> None:
    d = store_dir(home)
    path = d / "s1.jsonl"
    write_file(path, [rec("lime x", ts=1), rec("lime y", ts=2)])
    refresh(home)
    saved = path.read_bytes()
    path.unlink()
    refresh(home)
    assert results("lime") == [("lime x", True), ("lime y", True)]
    path.write_bytes(saved)  # restored from a backup
    refresh(home)
    assert results("lime") == [("lime x", False), ("lime y", False)]
    path.unlink()  # and gone again: the archived row is made afresh
    refresh(home)
    assert results("lime") == [("lime x", True), ("lime y", True)]
    assert api.index_status()["records"] == 2


def test_archive_off_keeps_nothing(home: Path) -> None:
    archive_off()
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("pear gone", ts=1)])
    stats = refresh(home)
    assert stats.records_archived == 0
    assert not archive_path(index_root()).exists()
    (d / "s1.jsonl").unlink()
    refresh(home)
    assert results("pear") == []
    assert archive_api.status()["enabled"] is False


def test_turning_the_archive_on_later_copies_what_is_indexed(home: Path) -> None:
    archive_off()
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("apricot one", ts=1)])
    write_file(d / "s2.jsonl", [rec("apricot two", session="s2", ts=2)])
    refresh(home)
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("")  # archive on again (the default)
    backfill = refresh(home)
    assert backfill.records_archived == 2 and backfill.files_parsed == 0
    (d / "s1.jsonl").unlink()
    refresh(home)
    assert results("apricot") == [("apricot one", True), ("apricot two", False)]


def test_records_lost_while_the_archive_was_off_come_back_when_it_is_on(home: Path) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("melon kept", ts=1)])
    refresh(home)
    archive_off()
    (d / "s1.jsonl").unlink()
    refresh(home)
    assert results("melon") == []  # off: the index forgets deleted files as before
    Path(os.environ["AGENTDEX_CONFIG"]).write_text("")
    refresh(home)
    assert results("melon") == [("melon kept", True)]


def test_forgotten_conversations_stay_forgotten(home: Path) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("cherry secret", ts=1, model="model-zebra-private")])
    write_file(d / "s2.jsonl", [rec("cherry public", session="s2", ts=2)])
    refresh(home)
    old_generation = Location(index_root()).current()
    assert old_generation is not None
    assert b"\tsecret\n" in _terms(old_generation)
    plan = archive_api.forget_plan("s1@line:1")
    assert [c["session_id"] for c in plan.conversations] == ["s1"]
    result = archive_api.forget(plan)
    assert result["index_records_removed"] == 1 and result["archive_records_removed"] == 1
    root = index_root()
    assert not (root / "refresh-manifest.json").exists()  # the fast path is invalidated
    assert results("cherry") == [("cherry public", False)]
    # the source changes and is re-read: the tombstone keeps its records out
    write_file(d / "s1.jsonl", [rec("cherry more", ts=3)], mode="ab")
    stats = refresh(home)
    assert stats.files_resumed + stats.files_parsed == 1 and stats.records_added == 0
    refresh(home, full=True)
    assert results("cherry") == [("cherry public", False)]
    assert "cherry secret" not in archived_texts()
    with pytest.raises(NotFoundError):
        history.show("s1", str(home))
    _assert_nowhere_in_archive(root, [b"cherry secret", b"model-zebra-private"])
    # the rebuild left no copy in the index's files either
    new_generation = Location(root).current()
    assert new_generation is not None and not old_generation.exists()
    assert b"\tsecret\n" not in _terms(new_generation)


def _terms(generation: Path) -> bytes:
    """The generation's term lists (full and delta), as stored."""
    files = [generation / "vocab.txt", generation / "vocab-delta.txt"]
    return b"".join(path.read_bytes() for path in files if path.exists())


def _assert_nowhere_in_archive(root: Path, needles: list[bytes]) -> None:
    """Not in the database files, and not in the chunk file: every byte of it belongs to a
    listed chunk, and no chunk holds them once decompressed."""
    from agentdex.index import codec

    folder = archive_path(root)
    for path in folder.glob("archive.db*"):
        data = path.read_bytes()
        assert not any(needle in data for needle in needles), path.name
    db = archive_db()
    chunks = db.execute("SELECT offset, size FROM chunks ORDER BY offset").fetchall()
    name = db.execute("SELECT value FROM meta WHERE key = 'blob_file'").fetchone()[0]
    assert [p.name for p in folder.glob("chunks-*.blobs")] == [name]
    blob = (folder / name).read_bytes()
    assert sum(size for _, size in chunks) == len(blob)  # no unlisted (removed) bytes
    for offset, size in chunks:
        text = codec.decompress(blob[offset : offset + size])
        assert not any(needle in text for needle in needles)


def test_forgetting_one_conversation_of_a_shared_file_keeps_the_others(home: Path) -> None:
    d = store_dir(home)
    write_file(
        d / "shared.jsonl",
        [rec(f"grape {s} {i}", session=s, ts=i) for i in range(6) for s in ("sa", "sb")],
    )
    refresh(home)
    archive_api.forget(archive_api.forget_plan(session="sa"))
    assert results("grape") == [(f"grape sb {i}", False) for i in range(6)]
    assert api.index_status()["records"] == 6
    refresh(home)  # nothing changed: still six
    assert results("grape") == [(f"grape sb {i}", False) for i in range(6)]


def test_forgetting_one_conversation_of_a_gone_file_keeps_the_others_gone(home: Path) -> None:
    """The other conversation's records keep their (archived) file row: it is not deleted
    as empty while they wait in the open block, so they still show as kept by the archive."""
    d = store_dir(home)
    write_file(
        d / "shared.jsonl",
        [rec(f"melon {s} {i}", session=s, ts=i) for i in range(3) for s in ("sa", "sb")],
    )
    refresh(home)
    (d / "shared.jsonl").unlink()
    refresh(home)
    archive_api.forget(archive_api.forget_plan(session="sa"))
    assert results("melon") == [(f"melon sb {i}", True) for i in range(3)]
    listed = api.conversations(refresh_first=False).conversations
    assert [(c["session_id"], c["prompts"], c["source_gone"]) for c in listed] == [("sb", 3, True)]
    shown = history.show("sb")
    assert [(r["text"], r["source_gone"]) for r in shown["records"]] == [
        (f"melon sb {i}", True) for i in range(3)
    ]


def test_forget_by_project(home: Path) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("olive in app", cwd="/work/app", ts=1)])
    write_file(d / "s2.jsonl", [rec("olive in app sub", session="s2", cwd="/work/app/x", ts=2)])
    write_file(d / "s3.jsonl", [rec("olive elsewhere", session="s3", cwd="/work/apple", ts=3)])
    refresh(home)
    plan = archive_api.forget_plan(project="/work/app")
    assert sorted(c["session_id"] for c in plan.conversations) == ["s1", "s2"]
    archive_api.forget(plan)
    assert results("olive") == [("olive elsewhere", False)]


def test_prune_removes_only_what_no_source_holds(home: Path) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("peach old gone", ts=1_000_000)])
    write_file(d / "s2.jsonl", [rec("peach old live", session="s2", ts=1_000_000)])
    write_file(d / "s3.jsonl", [rec("peach new gone", session="s3", ts=2_000_000_000)])
    refresh(home)
    (d / "s1.jsonl").unlink()
    (d / "s3.jsonl").unlink()
    refresh(home)
    pruned = archive_api.prune("2000-01-01", refresh_first=False)
    assert [c["session_id"] for c in pruned["conversations"]] == ["s1"]
    assert pruned["records_removed"] == 1 and pruned["records_kept_live"] == 1
    assert pruned["index_records_removed"] == 1
    assert results("peach") == [("peach new gone", True), ("peach old live", False)]
    assert "peach old gone" not in archived_texts()
    refresh(home, full=True)  # nothing pruned comes back
    assert results("peach") == [("peach new gone", True), ("peach old live", False)]


def test_export_writes_records_with_their_state(home: Path, tmp_path: Path) -> None:
    import orjson

    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("nut a", ts=1), rec("nut b", ts=2)])
    write_file(d / "s2.jsonl", [rec("nut c", session="s2", ts=3)])
    refresh(home)
    (d / "s2.jsonl").unlink()
    refresh(home)
    out = tmp_path / "out.jsonl"
    summary = archive_api.export(str(out))
    lines = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    size = out.stat().st_size
    assert summary == {"path": str(out), "records": 3, "conversations": 2, "bytes": size}
    assert [(x["text"], x["source_gone"]) for x in lines] == [
        ("nut a", False),
        ("nut b", False),
        ("nut c", True),
    ]
    assert lines[0]["locator"] == "line:1" and lines[0]["archived_at"].endswith("Z")
    assert lines[0]["raw"] == (d / "s1.jsonl").read_text().splitlines()[0]  # a prompt line
    only = archive_api.export(str(out), session="s2")
    assert only["records"] == 1
    since = archive_api.export(str(out), since="1970-01-01T00:00:02Z")
    assert since["records"] == 2


def test_the_archive_lives_beside_the_generations(home: Path) -> None:
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("walnut", ts=1)])
    refresh(home)
    refresh(home, full=True)
    root = index_root()
    location = Location(root)
    assert location.current() is not None
    assert (root / "archive" / "archive.db").is_file()
    assert not any((gen / "archive").exists() for gen in root.glob("gen-*"))


def test_a_corrupt_archive_is_reported_never_rebuilt(home: Path) -> None:
    from agentdex.archive.store import ArchiveCorruptError

    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("hazel", ts=1)])
    refresh(home)
    generation = Location(index_root()).current()
    folder = archive_path(index_root())
    for name in ("archive.db-wal", "archive.db-shm"):
        (folder / name).unlink(missing_ok=True)
    (folder / "archive.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(ArchiveCorruptError, match="move the archive folder away"):
        refresh(home)
    assert Location(index_root()).current() == generation  # the index was not rebuilt
    assert results("hazel") == [("hazel", False)]


def test_an_archive_whose_schema_a_kill_left_unfinished_reads_as_none_yet(home: Path) -> None:
    """A first writer killed while an older agentdex created the archive table by table
    left only some tables: readers see no archive (no traceback), the next writer finishes."""
    from agentdex.archive.store import open_reader

    write_file(store_dir(home) / "s1.jsonl", [rec("plum first", ts=1)])
    folder = archive_path(index_root())
    folder.mkdir(parents=True)
    half = sqlite3.connect(folder / "archive.db")
    half.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    half.commit()
    half.close()
    assert open_reader(index_root()) is None
    assert archive_api.status()["records"] == 0
    refresh(home)  # the writer completes the schema, then archives
    assert archived_texts() == ["plum first"]
    assert results("plum") == [("plum first", False)]


def test_the_archive_schema_is_named_migrations_recorded_once(tmp_path: Path) -> None:
    import sqlite3

    from agentdex.archive.schema import MIGRATIONS, m001_initial
    from agentdex.archive.store import ArchiveStore

    # an archive written before migrations were recorded: its tables (those of m001, the
    # schema then), no migrations table
    (tmp_path / "archive").mkdir()
    old = sqlite3.connect(tmp_path / "archive" / "archive.db", isolation_level=None)
    old.execute("PRAGMA journal_mode=WAL")
    m001_initial(old)
    old.execute("INSERT INTO meta (key, value) VALUES ('format', 'agentdex-archive-1')")
    old.execute(
        "INSERT INTO tombstones (agent, session_id, reason, created_at) VALUES (NULL, 's1', 'x', 0)"
    )
    old.close()
    store = ArchiveStore(tmp_path, write=True)
    try:
        names = [r[0] for r in store.db.execute("SELECT name FROM migrations ORDER BY name")]
        assert names == [name for name, _ in MIGRATIONS] and names[0] == "m001_initial"
        assert [t[2] for t in store.tombstones()] == ["s1"]  # nothing it held was lost
    finally:
        store.close()
    again = ArchiveStore(tmp_path, write=True)  # reopened: nothing applied twice
    try:
        assert again.db.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(MIGRATIONS)
    finally:
        again.close()


def test_forget_prune_and_rebuild_tell_the_ingest_listeners(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdex.ingest import events

    heard: list[events.Event] = []
    monkeypatch.setattr(events, "LISTENERS", [heard.append])
    d = store_dir(home)
    write_file(d / "s1.jsonl", [rec("plum one", ts=1_000_000)])
    write_file(d / "s2.jsonl", [rec("plum two", session="s2", ts=1_000_000)])
    refresh(home)
    assert heard == []  # a refresh that changes records in place tells nobody
    archive_api.forget(archive_api.forget_plan("s1@line:1"))
    assert [(e.kind, e.sessions) for e in heard] == [("forgotten", (("claude-code", "s1"),))]
    (d / "s2.jsonl").unlink()
    refresh(home)
    archive_api.prune("2000-01-01", refresh_first=False)
    assert heard[-1] == events.Event("pruned", (("claude-code", "s2"),), root=str(index_root()))
    refresh(home, full=True)
    current = Location(index_root()).current()
    assert current is not None
    assert heard[-1] == events.Event("rebuilt", (), current.name, root=str(index_root()))
