"""Zed threads: both document shapes, zstd and json rows, subagent threads, usage, bad rows.

No real threads.db is public; the rows are written here the way Zed's
``crates/agent/src/db.rs`` writes them (serde's externally tagged enums, zstd
level 3) and its legacy ``agent 1`` shape (``legacy_thread.rs``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import zstandard

from _agent_helpers import HeldWriter, count_raw, parse
from agentdex.discovery import discover
from agentdex.parsers._registry import get_parser

PID = "zed.threads_sqlite.v1"
SCHEMA = """CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL,
 updated_at TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT,
 folder_paths TEXT, folder_paths_order TEXT, created_at TEXT)"""

CURRENT = {
    "title": "Retry cap",
    "version": "0.3.0",
    "updated_at": "2026-11-20T10:00:00Z",
    "model": {"provider": "zed.dev", "model": "claude-sonnet-4-5"},
    "messages": [
        {
            "User": {
                "id": "u1",
                "content": [
                    {"Text": "raise the retry cap to 5 in "},
                    {"Mention": {"uri": "file:///w/shop/retry.go", "content": "const cap = 3"}},
                ],
            }
        },
        {
            "Agent": {
                "content": [
                    {"Thinking": {"text": "The cap is a constant.", "signature": "sig"}},
                    {"Text": "I'll edit retry.go."},
                    {
                        "ToolUse": {
                            "id": "t1",
                            "name": "edit_file",
                            "raw_input": "{}",
                            "input": {"path": "retry.go"},
                            "is_input_complete": True,
                        }
                    },
                ],
                "tool_results": {
                    "t1": {
                        "tool_use_id": "t1",
                        "tool_name": "edit_file",
                        "is_error": False,
                        "content": {"Text": "Edited retry.go"},
                        "output": None,
                    }
                },
            }
        },
        "Resume",
        {"Agent": {"content": [{"Text": "Done: the cap is 5."}], "tool_results": {}}},
        {"Hologram": {"x": 1}},
    ],
    "request_token_usage": {
        "u1": {
            "input_tokens": 1200,
            "output_tokens": 90,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 8000,
        },
    },
}
LEGACY = {
    "version": "0.2.0",
    "summary": "Old thread",
    "updated_at": "2025-06-01T08:00:00Z",
    "messages": [
        {
            "id": 0,
            "role": "user",
            "segments": [{"type": "text", "text": "explain main.rs"}],
            "context": "<file>main.rs</file>",
            "tool_uses": [],
            "tool_results": [],
        },
        {
            "id": 1,
            "role": "assistant",
            "segments": [
                {"type": "thinking", "text": "Read it first."},
                {"type": "text", "text": "It starts the server."},
            ],
            "tool_uses": [{"id": "r1", "name": "read_file", "input": {"path": "main.rs"}}],
            "tool_results": [
                {"tool_use_id": "r1", "is_error": False, "content": "fn main() {}", "output": None}
            ],
        },
        {
            "id": 2,
            "role": "user",
            "segments": [{"type": "text", "text": "Continue"}],
            "is_hidden": True,
        },
    ],
}
SUB = {
    "version": "0.3.0",
    "title": "sub",
    "updated_at": "2026-11-20T10:01:00Z",
    "messages": [
        {"User": {"id": "s1", "content": [{"Text": "find callers of retry()"}]}},
        {"Agent": {"content": [{"Text": "Two callers."}], "tool_results": {}}},
    ],
}


def _zstd(doc: dict[str, Any]) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(json.dumps(doc).encode())


def _db(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(SCHEMA)
    rows = [
        ("th-1", "Retry cap", "2026-11-20T10:00:00Z", "zstd", _zstd(CURRENT), None, "/w/shop"),
        (
            "th-0",
            "Old thread",
            "2025-06-01T08:00:00Z",
            "json",
            json.dumps(LEGACY).encode(),
            None,
            "/w/api\n/w/lib",
        ),
        ("th-2", "sub", "2026-11-20T10:01:00Z", "zstd", _zstd(SUB), "th-1", "/w/shop"),
        ("th-9", "broken", "2026-11-20T11:00:00Z", "zstd", b"\x28\xb5\x2f\xfdnot zstd", None, None),
    ]
    conn.executemany(
        "INSERT INTO threads (id, summary, updated_at, data_type, data, parent_id, folder_paths)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.commit()
    conn.close()
    return path


def test_both_shapes_subagents_usage_and_bad_rows(tmp_path: Path) -> None:
    db = _db(tmp_path / "zed" / "threads" / "threads.db")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    records, cursor, diagnostics = parse(PID, db)
    got = [(r.session_id, r.role, r.kind, r.text) for r in records]
    assert got == [
        ("th-0", "user", "prompt", "explain main.rs"),
        ("th-0", "system", "message", "<file>main.rs</file>"),
        ("th-0", "assistant", "reasoning", "Read it first."),
        ("th-0", "assistant", "message", "It starts the server."),
        ("th-0", "assistant", "tool_call", 'read_file {"path":"main.rs"}'),
        ("th-0", "tool", "tool_result", "fn main() {}"),
        ("th-0", "user", "message", "Continue"),  # hidden: Zed wrote it
        ("th-1", "user", "prompt", "raise the retry cap to 5 in"),
        ("th-1", "system", "message", "const cap = 3"),
        ("th-1", "assistant", "reasoning", "The cap is a constant."),
        ("th-1", "assistant", "message", "I'll edit retry.go."),
        ("th-1", "assistant", "tool_call", 'edit_file {"path":"retry.go"}'),
        ("th-1", "tool", "tool_result", "Edited retry.go"),
        ("th-1", "assistant", "message", "Done: the cap is 5."),
        ("th-2", "user", "message", "find callers of retry()"),
        ("th-2", "assistant", "message", "Two callers."),
    ]
    by_thread = {r.session_id: r for r in records}
    assert by_thread["th-0"].cwd == "/w/api" and by_thread["th-1"].cwd == "/w/shop"
    assert by_thread["th-1"].timestamp == 1795168800.0
    assert by_thread["th-2"].extra == {"sidechain": True, "parent_thread": "th-1"}
    assert records[7].locator == "row:th-1/messages/0/content"
    assert cursor.titles == {"th-0": "Old thread", "th-1": "Retry cap", "th-2": "sub"}
    assert cursor.units == count_raw(PID, db) == 8
    count_roles = get_parser(PID).count_roles
    assert count_roles is not None
    assert count_roles(db) == {
        "th-0": {"prompts": 1, "replies": 1},
        "th-1": {"prompts": 1, "replies": 2},
        "th-2": {"prompts": 0, "replies": 1},
    }
    (usage,) = cursor.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (1200, 8000, 90)
    assert usage.model == "claude-sonnet-4-5" and usage.session_id == "th-1"
    assert [(d.what, d.name, d.version) for d in diagnostics.drift.values()] == [
        ("message kind", "Hologram", "0.3.0")
    ]
    assert any(d.locator == "row:th-9" and "zstd" in d.message for d in diagnostics.items)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_rows_only_in_the_wal_are_read(tmp_path: Path) -> None:
    db = _db(tmp_path / "threads.db")
    writer = HeldWriter(db)
    late = {
        "version": "0.3.0",
        "title": "late",
        "updated_at": "2026-11-21T09:00:00Z",
        "messages": [{"User": {"id": "l1", "content": [{"Text": "still in the wal"}]}}],
    }
    writer.conn.execute(
        "INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES (?, ?, ?, ?, ?)",
        ("th-5", "late", "2026-11-21T09:00:00Z", "zstd", _zstd(late)),
    )
    writer.conn.commit()
    try:
        records, _, _ = parse(PID, db)
        assert "still in the wal" in [r.text for r in records]
    finally:
        writer.close()


def test_not_a_zed_database(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"
    sqlite3.connect(db).execute("CREATE TABLE other (x)").connection.close()
    records, cursor, diagnostics = parse(PID, db)
    assert records == [] and cursor.units == 0 and diagnostics.count == 1
    assert count_raw(PID, db) == 0


def test_discovered_in_the_xdg_data_dir(home: Path) -> None:
    _db(home / ".local" / "share" / "zed" / "threads" / "threads.db")
    found = discover(home, agents=["zed"])
    assert [s.store for s in found.sources] == ["zed.threads"]
