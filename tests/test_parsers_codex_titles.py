"""Codex titles from session_index.jsonl and state_*.sqlite: no records, only titles."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from _agent_helpers import build_db, count_raw, parse
from agentdex.discovery import discover


def test_session_index(home: Path) -> None:
    path = home / ".codex" / "session_index.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        {"id": "t1", "thread_name": "first name", "updated_at": "2026-11-01T00:00:00Z"},
        {"id": "t2", "thread_name": "  "},
        {"id": "t1", "thread_name": "renamed", "updated_at": "2026-11-02T00:00:00Z"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n{bad\n")
    records, cursor, diags = parse("codex.session_index_jsonl.v1", path)
    assert records == []
    assert cursor.titles == {"t1": "renamed"}
    assert cursor.units == count_raw("codex.session_index_jsonl.v1", path) == 1
    assert diags.count == 1


def test_state_sqlite(home: Path) -> None:
    db = build_db(
        home / ".codex" / "state_5.sqlite",
        """
        CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, title TEXT, cwd TEXT,
          git_branch TEXT, model TEXT, created_at INTEGER);
        INSERT INTO threads VALUES ('t1', '/r1.jsonl', 'Fix the login flow', '/w', 'main', 'm', 1);
        INSERT INTO threads VALUES ('t2', '/r2.jsonl', NULL, '/w', 'main', 'm', 2);
        INSERT INTO threads VALUES ('t3', '/r3.jsonl', '', '/w', 'main', 'm', 3);
    """,
    )
    records, cursor, _ = parse("codex.state_sqlite.v1", db)
    assert records == [] and cursor.titles == {"t1": "Fix the login flow"}
    assert cursor.units == count_raw("codex.state_sqlite.v1", db) == 1
    stores = sorted(s.store for s in discover(home, agents=["codex"]).sources)
    assert stores == ["codex.state_db"]


def test_state_without_threads_table(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state_1.sqlite", "CREATE TABLE other(x);")
    records, cursor, diags = parse("codex.state_sqlite.v1", db)
    assert records == [] and cursor.titles == {} and diags.count == 1
    assert count_raw("codex.state_sqlite.v1", db) == 0


def test_titles_from_an_ide_wrapped_first_message(home: Path) -> None:
    """Codex may take a thread's title from its first message: the request, not the wrapper."""
    wrapped = (
        "# Context from my IDE setup:\n\n## Active file: src/pay.ts\n\n## Open tabs:\n"
        "- pay.ts: src/pay.ts\n\n## My request for Codex:\nadd retry   to charge\n"
    )
    only_context = "# Files mentioned by the user:\n\n## spec.txt: /tmp/spec.txt\n"
    db = build_db(
        home / ".codex" / "state_5.sqlite",
        "CREATE TABLE threads (id TEXT PRIMARY KEY, title TEXT);",
    )
    conn = sqlite3.connect(db)
    conn.executemany("INSERT INTO threads VALUES (?, ?)", [("w", wrapped), ("c", only_context)])
    conn.commit()
    conn.close()
    _, cursor, _ = parse("codex.state_sqlite.v1", db)
    assert cursor.titles == {"w": "add retry to charge"}
    assert cursor.units == count_raw("codex.state_sqlite.v1", db) == 2
    index = home / ".codex" / "session_index.jsonl"
    index.write_text(
        json.dumps({"id": "w", "thread_name": wrapped})
        + "\n"
        + json.dumps({"id": "c", "thread_name": only_context})
        + "\n"
    )
    _, cursor, _ = parse("codex.session_index_jsonl.v1", index)
    assert cursor.titles == {"w": "add retry to charge"}
    assert cursor.units == count_raw("codex.session_index_jsonl.v1", index) == 2
