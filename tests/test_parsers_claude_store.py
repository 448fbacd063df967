"""Claude Code __store.db (0.2.9x SQLite era)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from _agent_helpers import build_db, count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers import run

PID = "claude-code.store_sqlite.v1"
SCHEMA = """
CREATE TABLE base_messages (uuid TEXT PRIMARY KEY, parent_uuid TEXT, session_id TEXT NOT NULL,
  timestamp INTEGER NOT NULL, message_type TEXT NOT NULL, cwd TEXT NOT NULL,
  user_type TEXT NOT NULL, version TEXT NOT NULL, isSidechain INTEGER NOT NULL);
CREATE TABLE user_messages (uuid TEXT PRIMARY KEY, message TEXT NOT NULL, tool_use_result TEXT,
  timestamp INTEGER NOT NULL);
CREATE TABLE assistant_messages (uuid TEXT PRIMARY KEY, cost_usd REAL, duration_ms INTEGER,
  message TEXT NOT NULL, is_api_error_message INTEGER, timestamp INTEGER NOT NULL, model TEXT);
CREATE TABLE conversation_summaries (leaf_uuid TEXT PRIMARY KEY, summary TEXT NOT NULL,
  updated_at INTEGER NOT NULL);
"""


def _store(path: Path) -> Path:
    db = build_db(path, SCHEMA)
    conn = sqlite3.connect(db)
    rows = [
        ("u1", "S", 1795000000, "user", {"role": "user", "content": "sqlite era prompt"}),
        (
            "a1",
            "S",
            1795000060,
            "assistant",
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "an answer"},
                    {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}},
                ],
            },
        ),
        (
            "u2",
            "S",
            1795000061,
            "user",
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "README.md"}],
            },
        ),
        ("u3", "S", 1795000070, "user", {"role": "user", "content": ""}),
    ]
    for uuid, sid, ts, kind, message in rows:
        conn.execute(
            "INSERT INTO base_messages VALUES (?, NULL, ?, ?, ?, '/work/old', "
            "'external', '0.2.90', 0)",
            (uuid, sid, ts, kind),
        )
        if kind == "user":
            conn.execute(
                "INSERT INTO user_messages VALUES (?, ?, NULL, ?)", (uuid, json.dumps(message), ts)
            )
        else:
            conn.execute(
                "INSERT INTO assistant_messages VALUES (?, 0.1, 10, ?, 0, ?, 'claude-3-7-sonnet')",
                (uuid, json.dumps(message), ts),
            )
    conn.execute("INSERT INTO conversation_summaries VALUES ('u2', 'Listing files', 1795000100)")
    conn.commit()
    conn.close()
    return db


def test_store_db(home: Path) -> None:
    db = _store(home / ".claude" / "__store.db")
    records, cursor, _diags = parse(PID, db)
    assert [(r.role, r.kind, r.text) for r in records] == [
        ("user", "prompt", "sqlite era prompt"),
        ("assistant", "message", "an answer"),
        ("assistant", "tool_call", 'Bash {"command":"ls"}'),
        ("tool", "tool_result", "README.md"),
        ("system", "summary", "Listing files"),
    ]
    assert {r.session_id for r in records} == {"S"} and {r.cwd for r in records} == {"/work/old"}
    assert records[1].model == "claude-3-7-sonnet"
    assert records[0].timestamp == 1795000000.0
    assert cursor.titles == {"S": "Listing files"}
    assert cursor.units == count_raw(PID, db) == 4
    found = discover(home, agents=["claude-code"])
    assert [s.store for s in found.sources] == ["claude-code.store_db"]
    assert len(list(run(found.sources[0]))) == 5


def test_other_sqlite_is_a_diagnostic(tmp_path: Path) -> None:
    db = build_db(tmp_path / "__store.db", "CREATE TABLE t(x);")
    records, _, diags = parse(PID, db)
    assert records == [] and diags.count == 1
