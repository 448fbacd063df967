"""The first answer in seconds: a first build goes newest first, commits early, stops at a
search's deadline, says how much it covered, and is finished by a detached process.

Real Claude Code transcripts under a temporary home, real ``agentdex`` processes where
exit codes and the background build matter. The size threshold is lowered through the
environment (``AGENTDEX_FIRST_ANSWER_BYTES=0``) and the deadline set to 0 s, so the
build stops after its first file whatever the machine's speed.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentdex.api import search as api
from agentdex.index.lock import WriterLock
from agentdex.index.store import Location, index_root
from agentdex.ingest import firstbuild

FILES = 6
STOP_AT_ONCE = {
    "AGENTDEX_FIRST_ANSWER_BYTES": "0",
    "AGENTDEX_FIRST_ANSWER_SECONDS": "0",
    "AGENTDEX_BACKGROUND_BUILD": "0",
}


def _line(session: str, text: str) -> bytes:
    return (
        orjson.dumps(
            {
                "type": "user",
                "sessionId": session,
                "uuid": f"u-{session}",
                "cwd": "/work/app",
                "timestamp": "2026-11-01T10:00:00Z",
                "message": {"role": "user", "content": text},
            }
        )
        + b"\n"
    )


@pytest.fixture
def transcripts(home: Path) -> list[Path]:
    """Six transcripts, one prompt each (``wombat N``); file N is N hours old, so file 0
    is the newest."""
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    now = time.time()
    paths = []
    for n in range(FILES):
        path = folder / f"c{n}.jsonl"
        path.write_bytes(_line(f"c{n}", f"why does wombat {n} burrow"))
        os.utime(path, (now - 3600 * n, now - 3600 * n))
        paths.append(path)
    return paths


def _search(run_cli: Any, *args: str, env: dict[str, str] | None = None) -> tuple[int, Any, str]:
    done = run_cli("search", "--json", "wombat", *args, env=env)
    return done.returncode, json.loads(done.stdout), done.stderr


def test_a_first_search_answers_from_the_newest_file_and_says_it_is_partial(
    transcripts: list[Path], run_cli: Any
) -> None:
    code, data, _err = _search(run_cli, env=STOP_AT_ONCE)
    assert code == 7 and data["status"] == "partial"
    assert [r["text"] for r in data["results"]] == ["why does wombat 0 burrow"]  # newest first
    coverage = data["coverage"]
    assert coverage["complete"] is False and coverage["files"] == 1
    assert coverage["files_total"] == FILES and 0 < coverage["fraction"] < 1
    assert coverage["back_to"] == pytest.approx(transcripts[0].stat().st_mtime)
    assert data["stats"]["refresh"]["incomplete"] is True
    # the next search goes on where the first stopped (the index is incremental)
    code, data, _err = _search(run_cli, env=STOP_AT_ONCE)
    assert code == 7 and data["coverage"]["files"] == 2
    assert {r["text"] for r in data["results"]} == {
        "why does wombat 0 burrow",
        "why does wombat 1 burrow",
    }
    # `agentdex index` has no deadline: it completes the build, and the mark goes
    assert run_cli("index", "--json", env=STOP_AT_ONCE).returncode == 0
    code, data, _err = _search(run_cli, env=STOP_AT_ONCE)
    assert code == 0 and data["status"] == "ok" and "coverage" not in data
    assert len(data["results"]) == FILES


def test_the_terminal_gets_one_line_and_exit_7(transcripts: list[Path], run_cli: Any) -> None:
    done = run_cli("search", "wombat", env=STOP_AT_ONCE)
    assert done.returncode == 7
    assert "wombat 0" in done.stdout
    lines = [line for line in done.stderr.splitlines() if "still being built" in line]
    assert len(lines) == 1 and "searched the newest" in lines[0]


def test_a_detached_process_finishes_the_build(transcripts: list[Path], run_cli: Any) -> None:
    env = {**STOP_AT_ONCE, "AGENTDEX_BACKGROUND_BUILD": "1"}
    code, data, _err = _search(run_cli, env=env)
    assert code == 7
    pid = data["stats"]["refresh"]["background_pid"]
    assert isinstance(pid, int)
    give_up = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < give_up:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), "the background build did not finish"
    code, data, _err = _search(run_cli, "--no-refresh")
    assert code == 0 and "coverage" not in data and len(data["results"]) == FILES


def test_a_search_while_another_process_builds_says_it_is_partial(
    transcripts: list[Path], run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in STOP_AT_ONCE.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(firstbuild, "FIRST_ANSWER_BYTES", 0)
    first = api.search("wombat", refresh_first=True)
    assert first.status == "partial" and first.coverage is not None
    lock = WriterLock(Location(index_root()).lock_path)
    lock.acquire(0)  # "another process" is writing: the search must not wait, nor look empty
    try:
        code, data, err = _search(run_cli)
    finally:
        lock.release()
    assert "another agentdex process is building it" in err
    assert code == 7 and data["status"] == "partial" and data["coverage"]["files"] == 1
    assert data["stats"]["refresh"].startswith("skipped")
    assert [r["text"] for r in data["results"]] == ["why does wombat 0 burrow"]


def test_nothing_committed_yet_is_partial_not_an_empty_answer(
    transcripts: list[Path], run_cli: Any
) -> None:
    root = index_root()
    root.mkdir(parents=True)
    lock = WriterLock(Location(root).lock_path)
    lock.acquire(0)  # a build has the lock but has not made its generation yet
    try:
        code, data, err = _search(run_cli)
    finally:
        lock.release()
    assert code == 7 and data["status"] == "partial" and data["results"] == []
    assert data["coverage"]["fraction"] == 0.0
    assert "another agentdex process is building it" in err


def test_small_first_builds_keep_discovery_order_and_no_deadline(
    transcripts: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDEX_FIRST_ANSWER_SECONDS", "0")
    result = api.search("wombat")  # far below FIRST_ANSWER_BYTES: built whole, no mark
    assert result.status == "ok" and result.coverage is None and len(result.results) == FILES


def _prompt(n: int, text: str) -> Any:
    from agentdex.records import Record

    return Record(
        agent="claude-code",
        store="claude-code.transcripts",
        source_path="/x.jsonl",
        locator=f"line:{n + 1}",
        session_id="s",
        role="user",
        kind="prompt",
        text=text,
    )


def test_a_bulk_first_build_keeps_its_term_list_current_for_readers(tmp_path: Path) -> None:
    """Readers verify every record past ``vocab_rid``: a build read while it runs writes its
    whole term list at a commit (at most every ``terms_every`` seconds), not only at its end;
    after the first, only when a reader asked since the last (a search that found the list
    behind the postings), since each rewrite reads every term dictionary."""
    from agentdex.index.segments import prepare
    from agentdex.index.store import open_reader_db
    from agentdex.index.writer import IndexWriter
    from agentdex.search.engine import Engine

    gen = tmp_path / "gen-000001"
    gen.mkdir()
    writer = IndexWriter(gen)

    def add(n: int) -> None:
        writer.add(prepare(_prompt(n, f"numbat{n} digs")), fid)
        writer.commit()

    def read() -> int:
        """A reader opens the generation; returns the first record it must verify itself."""
        db = open_reader_db(gen)
        try:
            engine = Engine(db, gen)
            engine.close()
            return int(engine.tail_rid)
        finally:
            db.close()

    try:
        writer.start_bulk_load()  # a big first build: the term list is stale from the start
        writer.terms_every = 0.0
        fid = writer.new_file("/x.jsonl", "claude-code", "claude-code.transcripts", None)
        add(0)  # the first commit writes the list whether or not anyone reads
        assert writer.meta_int("vocab_rid") == writer.next_record == 2
        assert read() == 2  # nothing past the list: this reader asks for nothing
        add(1)  # nobody asked since: no rewrite, the new record is verified by readers
        assert writer.meta_int("vocab_rid") == 2 and writer.next_record == 3
        assert read() == 2  # ... and this reader, verifying it, asks for the list
        add(2)
        assert writer.meta_int("vocab_rid") == writer.next_record == 4
        terms = (gen / "vocab.txt").read_text()
        assert all(f"\tnumbat{n}\n" in terms for n in range(3))
        add(3)  # asked before the last rewrite only: none now
        assert writer.meta_int("vocab_rid") == 4 and writer.next_record == 5
    finally:
        writer.close(True)


def test_a_bulk_build_commits_its_postings_before_sorting_the_record_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end of a bulk first build writes tantivy's last buffers before SQLite sorts every
    record row for the two record indexes, so the two never hold memory at once (the cold
    build's peak RSS fell where they did); the indexes exist when it returns."""
    from agentdex.index import postings
    from agentdex.index.segments import prepare
    from agentdex.index.writer import IndexWriter

    gen = tmp_path / "gen-000001"
    gen.mkdir()
    seen: list[tuple[str, bool]] = []
    writer = IndexWriter(gen)

    def indexes() -> bool:
        names = {r[0] for r in writer.db.execute("SELECT name FROM sqlite_master")}
        return {"record_rows_file", "record_rows_context"} <= names

    real_commit = postings.PostingsWriter.commit

    def commit(self: postings.PostingsWriter) -> None:
        seen.append(("postings commit", indexes()))
        real_commit(self)

    monkeypatch.setattr(postings.PostingsWriter, "commit", commit)
    try:
        writer.start_bulk_load()
        writer.terms_every = 0.0
        fid = writer.new_file("/x.jsonl", "claude-code", "claude-code.transcripts", None)
        for n in range(3):
            writer.add(prepare(_prompt(n, f"quokka{n} hops")), fid)
        assert not indexes()
        writer.finish(big=True)
        assert indexes()
        assert seen[0] == ("postings commit", False)  # the records' postings: before the sort
        assert writer.meta_int("vocab_rid") == writer.next_record
        assert all(f"\tquokka{n}\n" in (gen / "vocab.txt").read_text() for n in range(3))
    finally:
        writer.close(True)


def test_http_and_mcp_searches_carry_the_coverage(
    transcripts: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP and MCP search in a worker process: its answer keeps ``coverage`` (the page's
    "Partial" note and an MCP client read it there)."""
    from agentdex.api import search_worker

    for name, value in STOP_AT_ONCE.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(firstbuild, "FIRST_ANSWER_BYTES", 0)
    assert api.search("wombat", refresh_first=True).status == "partial"
    answer = search_worker.search_in_worker("wombat", refresh_first=False).to_json()
    assert answer["status"] == "partial"
    assert answer["coverage"]["files"] == 1 and answer["coverage"]["files_total"] == FILES
