"""Crush: per-project crush.db (peer seed; synthetic rows in Crush's schema), read with its WAL."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from _agent_helpers import HeldWriter, build_db, count_raw, parse
from agentdex.catalogue import resume_row
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser

PID = "crush.sqlite.v1"
#: Crush's schema after its migrations (internal/db/migrations: the Up parts, in order).
SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL,
  content TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
  parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT,
  is_summary_message INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE read_files (session_id TEXT NOT NULL, path TEXT NOT NULL, read_at INTEGER NOT NULL,
  PRIMARY KEY (path, session_id));
"""
T = 1793790000000  # 2026-11-04T10:20:00Z


def _part(kind: str, **data: object) -> dict[str, object]:
    return {"type": kind, "data": data}


ROWS = [
    ("s1", None, "Cache the exchange rates", 9100, 420, "m7"),
    ("title-s1", "s1", "Generate a title", 0, 0, None),
    ("call_7", "s1", "find callers", 0, 0, None),
]
MESSAGES = [
    ("m1", "s1", "user", [_part("text", text="cache the exchange rates for an hour")]),
    (
        "m2",
        "s1",
        "assistant",
        [
            _part("reasoning", thinking="Use functools.lru_cache with a TTL wrapper."),
            _part("text", text="I'll wrap fetch_rates in a TTL cache."),
            _part(
                "tool_call",
                id="call_7",
                name="agent",
                input='{"prompt":"find callers of fetch_rates"}',
                finished=True,
            ),
            _part("finish", reason="tool_use", time=1793790003),
        ],
    ),
    ("m3", "call_7", "user", [_part("text", text="find callers of fetch_rates")]),
    ("m4", "call_7", "assistant", [_part("text", text="Two callers: api.py and cli.py.")]),
    (
        "m5",
        "s1",
        "tool",
        [
            _part(
                "tool_result",
                tool_call_id="call_7",
                name="agent",
                content="Two callers: api.py and cli.py.",
            )
        ],
    ),
    (
        "m6",
        "s1",
        "user",
        [_part("shell_command", command="pytest -q", output="3 passed", exit_code=0)],
    ),
    ("m7", "s1", "assistant", [_part("text", text="Summary: rates are cached for an hour.")]),
    (
        "m8",
        "s1",
        "assistant",
        [_part("text", text="Done: rates are cached for 3600 s."), _part("citation", url="x")],
    ),
    ("m9", "title-s1", "user", [_part("text", text="cache the exchange rates for an hour")]),
    ("m10", "title-s1", "assistant", [_part("text", text="Cache the exchange rates")]),
]


def _fill(conn_execute: object) -> None:
    for i, (sid, parent, title, pin, pout, summary) in enumerate(ROWS):
        conn_execute(  # type: ignore[operator]
            "INSERT INTO sessions (id, parent_session_id, title, prompt_tokens, completion_tokens,"
            " summary_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, parent, title, pin, pout, summary, T + i, T + 60000),
        )
    for i, (mid, sid, role, parts) in enumerate(MESSAGES):
        conn_execute(  # type: ignore[operator]
            "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (mid, sid, role, json.dumps(parts), "gpt-5" if role == "assistant" else None,
             T + 1000 * i, T + 1000 * i),
        )  # fmt: skip


def _project(base: Path) -> Path:
    db = build_db(base / "shop" / ".crush" / "crush.db", SCHEMA, wal=True)
    return db


def _digest(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
    }


def test_rows_only_in_the_wal_are_read_and_nothing_changes(tmp_path: Path) -> None:
    db = _project(tmp_path)
    writer = HeldWriter(db)
    try:
        _fill(writer.execute)
        assert (db.parent / "crush.db-wal").stat().st_size > 0
        before = _digest(db.parent)
        records, cursor, diags = parse(PID, db)
        assert _digest(db.parent) == before
    finally:
        writer.close()
    assert [(r.session_id, r.role, r.kind, r.text[:34]) for r in records] == [
        ("s1", "user", "prompt", "cache the exchange rates for an ho"),
        ("s1", "assistant", "reasoning", "Use functools.lru_cache with a TTL"),
        ("s1", "assistant", "message", "I'll wrap fetch_rates in a TTL cac"),
        ("s1", "assistant", "tool_call", 'agent {"prompt":"find callers of f'),
        ("s1", "tool", "tool_result", "Two callers: api.py and cli.py."),
        ("s1", "user", "message", "$ pytest -q\n3 passed"),
        ("s1", "system", "summary", "Summary: rates are cached for an h"),
        ("s1", "assistant", "message", "Done: rates are cached for 3600 s."),
        ("call_7", "user", "message", "find callers of fetch_rates"),
        ("call_7", "assistant", "message", "Two callers: api.py and cli.py."),
    ]
    assert {r.cwd for r in records} == {str(tmp_path / "shop")}
    assert records[2].model == "gpt-5" and records[0].timestamp == T / 1000
    assert records[8].extra == {"parent_session": "s1"}
    assert cursor.titles == {"s1": "Cache the exchange rates", "call_7": "find callers"}
    [drift] = diags.drift.values()
    assert (drift.what, drift.name, drift.locator) == ("part type", "citation", "row:messages/m8")
    [usage] = cursor.usage
    assert (usage.session_id, usage.input_tokens, usage.output_tokens) == ("s1", 9100, 420)


def test_a_wal_left_behind_by_a_crashed_crush(tmp_path: Path) -> None:
    db = _project(tmp_path / "live")
    writer = HeldWriter(db)
    _fill(writer.execute)
    left = tmp_path / "left" / "shop" / ".crush"
    left.mkdir(parents=True)
    for name in ("crush.db", "crush.db-wal", "crush.db-shm"):
        shutil.copy2(db.parent / name, left / name)
    writer.close()
    before = _digest(left)
    records, cursor, _ = parse(PID, left / "crush.db")
    assert _digest(left) == before
    assert len(records) == 10
    assert cursor.units == count_raw(PID, left / "crush.db") == 8


def test_counts_agree(tmp_path: Path) -> None:
    db = _project(tmp_path)
    writer = HeldWriter(db)
    _fill(writer.execute)
    writer.close()
    records, _, _ = parse(PID, db)
    roles = get_parser(PID).count_roles
    assert roles is not None
    assert roles(db) == {"s1": {"prompts": 1, "replies": 2}, "call_7": {"replies": 1, "prompts": 0}}
    assert sum(r.kind == "prompt" for r in records) == 1


def test_the_peer_seed(tmp_path: Path, corpus: Path) -> None:
    db = build_db(
        tmp_path / "p" / ".crush" / "crush.db",
        (corpus / "agrep-fixtures/crush/seed.sql").read_text(),
    )
    records, cursor, diags = parse(PID, db)
    assert [r.text for r in records if r.kind == "prompt"] == [
        "convert the readme to asciidoc",
        "add a smoke test",
    ]
    assert [r.kind for r in records if r.session_id == "sc3"] == ["message", "message"]
    assert cursor.units == count_raw(PID, db) == 6 and diags.count == 0


def _projects_json(folder: Path, *entries: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "projects.json").write_text(json.dumps({"projects": list(entries)}))


def test_discovery_from_projects_json(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = _project(tmp_path)
    custom = build_db(tmp_path / "elsewhere" / "crush.db", SCHEMA)
    _projects_json(
        home / ".local/share/crush",
        {
            "path": str(tmp_path / "shop"),
            "data_dir": str(shop.parent),
            "last_accessed": "2026-11-04T10:00:00Z",
        },
        {
            "path": str(tmp_path / "api"),
            "data_dir": str(custom.parent),
            "last_accessed": "2026-11-03T10:00:00Z",
        },
        {
            "path": str(tmp_path / "gone"),
            "data_dir": ".crush",
            "last_accessed": "2026-11-01T10:00:00Z",
        },
    )
    found = discover(home, agents=["crush"]).sources
    assert sorted(s.path for s in found) == sorted([shop, custom])
    assert all(r.agent == "crush" for s in found for r in run(s))
    monkeypatch.setenv("CRUSH_GLOBAL_DATA", str(tmp_path / "no-list-here"))
    (tmp_path / "no-list-here").mkdir()
    assert discover(home, agents=["crush"]).sources == []


def test_discovery_without_a_list_tries_known_projects(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = _project(tmp_path / "src")
    monkeypatch.setenv("AGENTDEX_PROJECT_ROOTS", str(tmp_path / "src"))
    assert [s.path for s in discover(home, agents=["crush"]).sources] == [shop]


def test_discovery_through_wsl(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    users = tmp_path / "Users"
    db = _project(users / "ada" / "src")
    _projects_json(
        users / "ada" / "AppData/Local/crush",
        {"path": "C:\\Users\\ada\\src\\shop", "data_dir": "C:\\Users\\ada\\src\\shop\\.crush"},
    )
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    [source] = discover(home, agents=["crush"]).sources
    assert (source.path, source.host) == (db, "windows:ada")


def test_resume_row() -> None:
    assert resume_row("crush").argv == ("crush", "--session", "{session_id}")
