"""A first build's archive entries made from the index's rows (:mod:`agentdex.archive.spans`).

With parse workers a first build into an empty archive keeps a span per file (keys,
sizes, kept lines) and makes the entries from the index's committed rows after each
index commit. These tests hold it to the archive the writer builds entry by entry (the
same entries, texts and kept lines), and to the same archive after a build killed at
the two points the order allows: after the spans and the index committed and before the
entries were made (the next refresh derives them), and after the spans committed but
before the index did (the next refresh drops them and reads the files again).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import search as api
from agentdex.archive import spans
from agentdex.archive.store import ArchiveStore, archive_path
from agentdex.archive.writer import ArchiveWriter
from agentdex.index.store import index_root
from agentdex.ingest import archiving, parallel
from test_index_fixtures import ROWS, register, store_dir, write_file


class Killed(Exception):
    """Stands for a kill at a chosen point of a refresh."""


@pytest.fixture(autouse=True)
def _workers(monkeypatch: pytest.MonkeyPatch) -> None:
    register()
    monkeypatch.setenv("AGENTDEX_INDEX_WORKERS", "2")
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)


def _rec(n: int, session: str = "s1", kind: str = "prompt") -> dict[str, Any]:
    text = f"plum {n} caf\u00e9 \u0130" if n % 5 == 0 else f"plum {n}"
    return {"session": session, "role": "user", "kind": kind, "text": text, "ts": n}


def _write(home: Path) -> None:
    """Files sharing records with each other and within themselves, prompts and replies,
    ASCII and not (a size the index's length does not give)."""
    d = store_dir(home)
    write_file(d / "a.jsonl", [_rec(n) for n in range(400)] + [_rec(n) for n in range(0, 300, 7)])
    write_file(d / "b.jsonl", [_rec(n, kind="reply") for n in range(200, 700)])
    write_file(d / "c.jsonl", [_rec(n, "s2") for n in range(300)])


def _archive(root: Path) -> list[tuple[Any, ...]]:
    """Every entry as read back: its columns (no ids), its text and kept line, by key."""
    store = ArchiveStore(root, write=False)
    try:
        out = []
        for row in store.entries():
            text = store.text(row[16], row[17], row[18])
            raw = store.raw(row[19], row[20], row[21])
            out.append((*row[:16], row[18], text, raw))
        return sorted(out, key=lambda r: r[0])
    finally:
        store.close()


def _spans_left(root: Path) -> int:
    db = sqlite3.connect(archive_path(root) / "archive.db")
    try:
        return int(db.execute("SELECT count(*) FROM entry_spans").fetchone()[0])
    finally:
        db.close()


def _one_at_a_time(home: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """The archive the writer builds entry by entry (no spans), then removed."""
    with monkeypatch.context() as m:
        m.setattr(ArchiveWriter, "_offer_span", _never)
        writer_init = ArchiveWriter.__init__

        def no_index(self: ArchiveWriter, *args: Any, **kwargs: Any) -> None:
            kwargs["index_path"] = None
            writer_init(self, *args, **kwargs)

        m.setattr(ArchiveWriter, "__init__", no_index)
        api.refresh(home=str(home), rows=ROWS)
    built = _archive(index_root())
    shutil.rmtree(index_root(), ignore_errors=True)
    return built


def _never(*_: Any) -> None:
    raise AssertionError("a span was made with no index to derive it from")


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    derive = ArchiveWriter.derive

    def counted(self: ArchiveWriter, **kwargs: Any) -> int:
        n = derive(self, **kwargs)
        made.append(n)
        return n

    monkeypatch.setattr(ArchiveWriter, "derive", counted)
    return made


def test_entries_made_from_the_index_are_the_ones_built_one_at_a_time(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(home)
    expected = _one_at_a_time(home, monkeypatch)
    made = _counting(monkeypatch)
    stats = api.refresh(home=str(home), rows=ROWS)
    assert sum(made) == stats.records_archived == len(expected) == 1200
    got = _archive(index_root())
    assert got == expected
    assert any(r[-1] is not None for r in got) and any(r[-1] is None for r in got)
    assert _spans_left(index_root()) == 0


def test_a_build_killed_after_the_index_committed_gets_its_entries_at_the_next_refresh(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(home)
    expected = _one_at_a_time(home, monkeypatch)
    calls: list[int] = []

    def killed(self: archiving.IndexingArchive, index: Any) -> None:
        if self.writer is not None and self.writer._spans_open:
            calls.append(1)
            raise Killed

    with monkeypatch.context() as m:
        m.setattr(archiving.IndexingArchive, "_derive", killed)
        with pytest.raises(Killed):
            api.refresh(home=str(home), rows=ROWS)
    assert calls and _spans_left(index_root()) > 0
    made = _counting(monkeypatch)
    start = archiving.IndexingArchive.start
    left: list[bool] = []

    def started(self: archiving.IndexingArchive) -> None:
        start(self)
        assert self.store is not None
        left.append(spans.pending(self.store.db))

    monkeypatch.setattr(archiving.IndexingArchive, "start", started)
    api.refresh(home=str(home), rows=ROWS)
    # the next writer derived what the first left, before anything else
    assert left == [False] and made and made[0] > 0
    assert _archive(index_root()) == expected
    assert _spans_left(index_root()) == 0


def test_a_build_killed_before_the_index_committed_offers_its_records_again(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(home)
    expected = _one_at_a_time(home, monkeypatch)
    commit_first = archiving.IndexingArchive._commit_first

    def then_killed(self: archiving.IndexingArchive, index: Any) -> None:
        spanned = self.writer is not None and self.writer._spans_open > 0
        commit_first(self, index)  # the archive's batch, its spans, committed
        if spanned:
            raise Killed  # before the index commits

    with monkeypatch.context() as m:
        m.setattr(archiving.IndexingArchive, "_commit_first", then_killed)
        with pytest.raises(Killed):
            api.refresh(home=str(home), rows=ROWS)
    assert _spans_left(index_root()) > 0
    made = _counting(monkeypatch)
    api.refresh(home=str(home), rows=ROWS)
    assert made and made[0] == 0  # the index never committed them: dropped, read again
    assert _archive(index_root()) == expected
    assert _spans_left(index_root()) == 0


def test_spans_of_another_index_are_dropped(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path, write=True)
    store.db.execute("BEGIN IMMEDIATE")
    store.db.execute(
        "INSERT INTO entry_spans (first_rid, source_id, items) VALUES (1, 1, '[5, 6]')"
    )
    store.db.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?)", (spans.SPANS_OF, str(tmp_path / "old.db"))
    )
    store.db.execute("COMMIT")
    writer = ArchiveWriter(store, index_path=str(tmp_path / "new.db"))
    assert writer.derive() == 0
    assert not spans.pending(store.db) and not store.has_entries()
    writer.close(True)
    store.close()


def _calls(root: Path) -> list[tuple[Any, ...]]:
    """The archive's model calls as read back (source path, context, call, counts)."""
    db = sqlite3.connect(archive_path(root) / "archive.db")
    try:
        return sorted(
            db.execute(
                "SELECT s.path, c.agent, c.store, c.session_id, c.model, c.cwd, c.project,"
                " c.branch, c.worktree, c.host, u.call, u.offset, u.timestamp, u.input,"
                " u.cache_read, u.cache_write, u.output, u.reasoning, u.cache_write_1h"
                " FROM usage_calls u JOIN sources s ON s.id = u.source_id"
                " JOIN contexts c ON c.id = u.context_id"
            ).fetchall()
        )
    finally:
        db.close()


def test_model_calls_copied_from_the_index_are_the_ones_kept_one_read_at_a_time(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_usage_index import _claude, _transcript

    for n in range(6):
        _transcript(home, f"s{n}", [
            _claude(f"s{n}", f"m{n}", "2026-03-01T10:00:00Z", (5, 100, 20, 7)),
            _claude(f"s{n}", f"k{n}", "2026-03-02T10:00:00Z", (3, 200, 0, n)),
            _claude("s0", "m0", "2026-03-01T10:00:00Z", (5, 100, 20, 7)),  # s0's, copied
        ])  # fmt: skip
    with monkeypatch.context() as m:
        m.setattr(
            ArchiveWriter, "spanning", property(lambda self: False, lambda self, v: None), False
        )
        api.refresh(home=str(home))
    expected = _archive(index_root()), _calls(index_root())
    shutil.rmtree(index_root(), ignore_errors=True)
    assert len(expected[1]) == 17  # every file's copy of each call (s0 holds m0 twice)
    made = _counting(monkeypatch)
    spanned: list[bool] = []
    add_usage = ArchiveWriter.add_usage

    def noted(self: ArchiveWriter, *args: Any) -> None:
        spanned.append(self.spanning)
        add_usage(self, *args)

    monkeypatch.setattr(ArchiveWriter, "add_usage", noted)
    api.refresh(home=str(home))
    assert spanned and all(spanned)
    assert sum(made) == len(expected[0]) and _spans_left(index_root()) == 0
    assert (_archive(index_root()), _calls(index_root())) == expected
