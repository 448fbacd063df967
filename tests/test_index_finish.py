"""The end of a big build (``IndexWriter.finish``): the ``while_merging`` hooks (the archive's
entries of a first build) start as soon as the last batch's rows are committed (beside its
postings commit and tantivy's last merges) and run beside the term list's child and the
record indexes, not after them; a failed term list and a failed hook still reach the caller."""

from __future__ import annotations

import errno
import sqlite3
import threading
from pathlib import Path

import pytest

from agentdex.index import writer as writer_mod
from agentdex.index.postings import PostingsWriter
from agentdex.index.segments import prepare
from agentdex.index.writer import IndexWriter
from agentdex.records import Record


def _bulk_writer(tmp_path: Path) -> IndexWriter:
    """A first build's writer (bulk load) holding three uncommitted records."""
    gen = tmp_path / "gen-000001"
    gen.mkdir()
    writer = IndexWriter(gen)
    writer.start_bulk_load()
    fid = writer.new_file("/x.jsonl", "claude-code", "claude-code.transcripts", None)
    for n in range(3):
        record = Record(
            agent="claude-code",
            store="claude-code.transcripts",
            source_path="/x.jsonl",
            locator=f"line:{n + 1}",
            session_id="s",
            role="user",
            kind="prompt",
            text=f"numbat{n} forages",
        )
        writer.add(prepare(record), fid)
    return writer


def _committed_indexes(gen: Path) -> set[str]:
    """The record indexes another connection sees (committed ones only)."""
    db = sqlite3.connect(gen / "index.db")
    try:
        return {
            str(r[0])
            for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            if str(r[0]).startswith("record_rows_")
        }
    finally:
        db.close()


def test_the_hooks_run_while_the_term_list_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The term list's child waits for the hook and the hook for the child: one after
    the other (the order before), each would wait in vain and the test fails."""
    writer = _bulk_writer(tmp_path)
    real = writer_mod.write_term_list
    listing, hooked, started = threading.Event(), threading.Event(), threading.Event()
    real_close = PostingsWriter.close
    seen: dict[str, bool] = {}
    niceness: list[int] = []
    main = threading.current_thread()

    def term_list(gen: Path, chars: set[str] | str, *, nice: int = 0) -> None:
        listing.set()
        seen["hook ran while the list was written"] = hooked.wait(20)
        niceness.append(nice)
        real(gen, chars, nice=nice)

    def close(self: PostingsWriter, *, wait_merges: bool) -> None:
        seen["hook started before the postings closed"] = started.wait(20)
        real_close(self, wait_merges=wait_merges)

    def hook() -> None:
        started.set()
        seen["list was being written while the hook ran"] = listing.wait(20)
        seen["hook on a thread of its own"] = threading.current_thread() is not main
        hooked.set()

    monkeypatch.setattr(writer_mod, "write_term_list", term_list)
    monkeypatch.setattr(PostingsWriter, "close", close)
    writer.while_merging.append(hook)
    try:
        writer.finish(big=True)
        assert seen == {
            "hook started before the postings closed": True,
            "hook ran while the list was written": True,
            "list was being written while the hook ran": True,
            "hook on a thread of its own": True,
        }
        assert niceness == [writer_mod.TAIL_CHILD_NICE]  # below the hooks' chain
        assert writer.meta_int("vocab_rid") == writer.next_record
        assert not writer.vocab_stale
        assert all(f"\tnumbat{n}\n" in (writer.gen / "vocab.txt").read_text() for n in range(3))
        # committed by finish itself, not left to close()
        assert _committed_indexes(writer.gen) == {"record_rows_file", "record_rows_context"}
    finally:
        writer.close(True)


def test_the_hooks_start_once_the_last_rows_are_committed_beside_the_postings_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last batch's postings commit waits for the hook, which reads the batch's rows from
    another connection: started after that commit (the order before), the hook never comes
    and the test fails. The commit's ``after_commit`` hooks run first, on the hook's thread."""
    writer = _bulk_writer(tmp_path)
    real_commit = PostingsWriter.commit
    started = threading.Event()
    seen: dict[str, object] = {}
    ran: list[str] = []
    main = threading.current_thread()

    def commit(self: PostingsWriter) -> None:
        seen["hook started before the postings commit ended"] = started.wait(20)
        real_commit(self)

    def after(index: IndexWriter) -> None:
        ran.append("after_commit" if threading.current_thread() is not main else "on main")

    def hook() -> None:
        started.set()
        db = sqlite3.connect(writer.gen / "index.db")
        try:
            seen["rows it reads"] = db.execute("SELECT count(*) FROM record_rows").fetchone()[0]
        finally:
            db.close()
        ran.append("hook")

    monkeypatch.setattr(PostingsWriter, "commit", commit)
    writer.after_commit.append(after)
    writer.while_merging.append(hook)
    try:
        writer.finish(big=True)
        assert seen == {"hook started before the postings commit ended": True, "rows it reads": 3}
        assert ran == ["after_commit", "hook"]
        assert writer.meta_int("postings_rid") == writer.next_record  # the commit completed
    finally:
        writer.close(True)


def test_a_failed_term_list_is_raised_after_the_hooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _bulk_writer(tmp_path)
    ran: list[str] = []

    def term_list(gen: Path, chars: set[str] | str, *, nice: int = 0) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer_mod, "write_term_list", term_list)
    writer.while_merging.append(lambda: ran.append("hook"))
    try:
        with pytest.raises(OSError) as failed:
            writer.finish(big=True)
        assert failed.value.errno == errno.ENOSPC
        assert ran == ["hook"]
        assert writer.vocab_stale  # no list: the next writer writes one
        assert writer.meta_int("vocab_rid") == 0
    finally:
        writer.close(False)


def test_a_failed_hook_is_raised_once_the_term_list_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _bulk_writer(tmp_path)
    real = writer_mod.write_term_list
    listed = threading.Event()

    def term_list(gen: Path, chars: set[str] | str, *, nice: int = 0) -> None:
        real(gen, chars, nice=nice)
        listed.set()

    def hook() -> None:
        raise RuntimeError("the archive failed")

    monkeypatch.setattr(writer_mod, "write_term_list", term_list)
    writer.while_merging.append(hook)
    try:
        with pytest.raises(RuntimeError, match="the archive failed"):
            writer.finish(big=True)
        assert listed.is_set()  # finish waited for the list's thread before it raised
        assert not any(t.name == "agentdex-beside" for t in threading.enumerate())
    finally:
        writer.close(False)
