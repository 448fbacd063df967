"""Reading a store changes nothing of it; a store that could not be read is read next time.

Writers are real separate processes holding real SQLite locks: an OpenCode
database open in WAL mode (normal and exclusive locking), and a Cursor
``state.vscdb`` (rollback journal) under ``BEGIN EXCLUSIVE``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agentdex.api import history
from agentdex.api import search as api
from agentdex.readers import connect_readonly, is_read_failure

OPENCODE_SCHEMA = (
    "CREATE TABLE session(id TEXT PRIMARY KEY, directory TEXT, parent_id TEXT, title TEXT,"
    " time_created INTEGER);"
    "CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, data TEXT, time_created INTEGER);"
    "CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT,"
    " time_created INTEGER);"
)
OPENCODE_ROWS = (
    "INSERT INTO session VALUES ('ses-w', '/work/w', NULL, 'wal title', 1795000000000);"
    "INSERT INTO message VALUES ('msg-w', 'ses-w', '{\"role\":\"user\"}', 1795000000000);"
    "INSERT INTO part VALUES ('prt-w', 'msg-w', 'ses-w',"
    ' \'{"type":"text","text":"walonly marker text"}\', 1795000000000);'
)
CURSOR_SCHEMA = (
    "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
    "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
)

#: A writer process: set up, say "ready", hold its connection (and lock) until stdin closes.
WRITER = r"""
import sqlite3, sys
path, pragmas, script, begin = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
conn = sqlite3.connect(path, isolation_level=None)
for pragma in filter(None, pragmas.split(";")):
    conn.execute(pragma)
conn.executescript(script)
if begin:
    conn.execute(begin)
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
print("ready", flush=True)
sys.stdin.read()
if begin:
    conn.execute("COMMIT")
conn.close()
"""


@contextmanager
def writer(path: Path, pragmas: str, script: str, begin: str = "") -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), pragmas, script, begin],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


def fingerprint(db: Path) -> dict[str, Any]:
    """Bytes and mtime of a database and its -wal/-shm (None when absent)."""
    out: dict[str, Any] = {}
    for suffix in ("", "-wal", "-shm", "-journal"):
        item = Path(f"{db}{suffix}")
        if item.exists():
            st = item.stat()
            out[suffix] = (
                st.st_size,
                st.st_mtime_ns,
                hashlib.sha256(item.read_bytes()).hexdigest(),
            )
        else:
            out[suffix] = None
    return out


def opencode_db(home: Path) -> Path:
    return home / ".local" / "share" / "opencode" / "opencode.db"


def _search_texts(home: Path, query: str) -> list[str]:
    return [r["text"] for r in api.search(query, home=str(home), limit=50).results]


def _source_row(home: Path, path: Path) -> dict[str, Any]:
    rows = [s for s in history.sources(str(home))["sources"] if s["path"] == str(path)]
    assert len(rows) == 1, rows
    return rows[0]


def test_read_failures_are_told_apart_from_parse_problems() -> None:
    for message in (
        "unreadable: Permission denied",
        "SQLite error: database is locked",
        "cannot open SQLite store: unable to open database file",
        "SQLite error: disk I/O error",
        "database is busy: it kept changing while being copied for reading",
    ):
        assert is_read_failure(message), message
    for message in (
        "not JSON; skipped",
        "paste-cache/x.txt missing or unreadable",
        "SQLite error: file is not a database",
    ):
        assert not is_read_failure(message), message


def test_wal_database_held_open_by_a_writer_is_read_without_a_change(
    home: Path, run_cli: Any
) -> None:
    db = opencode_db(home)
    pragmas = "PRAGMA journal_mode=WAL;PRAGMA wal_autocheckpoint=0"
    with writer(db, pragmas, OPENCODE_SCHEMA + OPENCODE_ROWS):
        assert Path(f"{db}-wal").stat().st_size > 0 and Path(f"{db}-shm").exists()
        before = fingerprint(db)
        time.sleep(0.05)  # an mtime written now would differ
        for args in (("index", "--json"), ("sources", "--json"), ("search", "walonly", "--json")):
            done = run_cli(*args)
            assert done.returncode == 0, (args, done.stderr)
        found = json.loads(run_cli("search", "walonly", "--json").stdout)
        assert [r["text"] for r in found["results"]] == ["walonly marker text"]  # WAL-only rows
        conn = connect_readonly(db)
        assert conn.execute("SELECT count(*) FROM part").fetchone() == (1,)
        conn.close()
        assert fingerprint(db) == before
    leftovers = list((Path(os.environ["AGENTDEX_DATA_DIR"]) / "tmp").glob("*"))
    assert leftovers == []  # the private copies are gone


def test_wal_database_in_exclusive_locking_mode_is_read_at_once(home: Path) -> None:
    db = opencode_db(home)
    pragmas = "PRAGMA journal_mode=WAL;PRAGMA locking_mode=EXCLUSIVE;PRAGMA wal_autocheckpoint=0"
    with writer(db, pragmas, OPENCODE_SCHEMA + OPENCODE_ROWS):
        before = fingerprint(db)
        api.refresh(home=str(home))
        assert _search_texts(home, "walonly") == ["walonly marker text"]
        assert _source_row(home, db)["index_error"] is None
        assert fingerprint(db) == before


def test_rollback_database_read_leaves_it_unchanged(home: Path) -> None:
    db = opencode_db(home)
    with writer(db, "", OPENCODE_SCHEMA + OPENCODE_ROWS):
        pass
    before = fingerprint(db)
    time.sleep(0.05)
    api.refresh(home=str(home))
    assert _search_texts(home, "walonly") == ["walonly marker text"]
    assert fingerprint(db) == before


def _cursor_store(home: Path) -> Path:
    db = home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    composer = {
        "composerId": "c-locked",
        "name": "locked chat",
        "fullConversationHeadersOnly": [{"bubbleId": "b1", "type": 1}],
    }
    bubble = {"type": 1, "text": "lockedstore marker prompt"}
    rows = (
        "INSERT INTO cursorDiskKV VALUES ('composerData:c-locked', '{}');"
        "INSERT INTO cursorDiskKV VALUES ('bubbleId:c-locked:b1', '{}');"
    ).format(json.dumps(composer).replace("'", "''"), json.dumps(bubble).replace("'", "''"))
    with writer(db, "", CURSOR_SCHEMA + rows):
        pass
    return db


def test_a_store_locked_during_an_index_is_read_by_the_next(home: Path, run_cli: Any) -> None:
    db = _cursor_store(home)
    with writer(db, "", "", begin="BEGIN EXCLUSIVE"):
        stats = api.refresh(home=str(home))
        assert stats.files_parsed >= 1
        assert _search_texts(home, "lockedstore") == []
        row = _source_row(home, db)
        assert "locked" in row["index_error"]["message"]
    # The lock is gone. Until the next index, `sources` still says the index lacks it.
    row = _source_row(home, db)
    assert row["parse_status"] == "ok" and "locked" in row["index_error"]["message"]
    human = run_cli("sources")
    line = next(line for line in human.stdout.splitlines() if "state.vscdb" in line)
    assert "retry" in line, human.stdout
    stats = api.refresh(home=str(home))
    assert stats.files_parsed + stats.files_resumed >= 1  # not "unchanged"
    assert _search_texts(home, "lockedstore") == ["lockedstore marker prompt"]
    assert _source_row(home, db)["index_error"] is None
    again = api.refresh(home=str(home))
    assert again.files_parsed == 0  # read once it could be: unchanged from now on


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_retried_too(home: Path) -> None:
    db = _cursor_store(home)
    db.chmod(0)
    try:
        api.refresh(home=str(home))
        assert _source_row(home, db)["index_error"] is not None
    finally:
        db.chmod(0o644)
    api.refresh(home=str(home))
    assert _search_texts(home, "lockedstore") == ["lockedstore marker prompt"]
