"""Warp: warp.sqlite's agent tables (ai_queries, blocks naming a conversation), synthetic in
the shape public readers query (Warp is closed source, see docs/agents.md): prompts with their
folder and git head, command blocks and tool results, no replies, drift, only these tables
queried, discovery on every OS layout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _agent_helpers import HeldWriter, build_db, count_raw, parse, traced_statements
from agentdex.catalogue import resume_row
from agentdex.discovery import discover
from agentdex.parsers import run
from agentdex.parsers._registry import get_parser

SQL = (Path(__file__).parent / "fixtures" / "warp" / "warp.sql").read_text()
PID = "warp.sqlite.v1"


def _db(folder: Path) -> Path:
    return build_db(folder / "warp.sqlite", SQL, wal=True)


def test_conversations(tmp_path: Path) -> None:
    db = _db(tmp_path)
    records, cursor, diags = parse(PID, db)
    rows = [(r.locator, r.session_id, r.role, r.kind, r.text[:30]) for r in records]
    assert rows == [
        ("row:ai_queries/ex-1", "conv-a", "user", "prompt", "why does checkout round 19.995"),
        ("row:blocks/1", "conv-a", "assistant", "tool_call", "$ pytest -q tests"),  # ANSI gone
        ("row:ai_queries/ex-2", "conv-a", "tool", "tool_result", "$ pytest -q tests/test_cart.py"),
        ("row:ai_queries/ex-4", "conv-a", "tool", "tool_result", '{"GetFiles":{"result":{"Succes'),
        ("row:ai_queries/ex-5", "conv-a", "user", "prompt", "use Decimal"),
        ("row:ai_queries/ex-6", "conv-b", "user", "prompt", "list the notes routes"),
    ]
    assert records[2].text.endswith("1 failed, 4 passed")
    assert records[1].extra == {"call_id": "act-1", "exit_code": 1}
    assert records[2].extra == {"call_id": "act-1"}
    assert (records[0].cwd, records[0].branch, records[0].model) == ("/home/dev/src/shop", "main",
                                                                     "auto")  # fmt: skip
    # no working_directory on the row: the query's Directory context
    assert (records[5].cwd, records[5].branch) == ("/home/dev/src/notes-api", "feat/tags")
    assert records[0].timestamp == 1795078800.0  # start_ts is UTC
    assert not any(r.kind == "message" for r in records)  # Warp keeps no answers
    assert cursor.units == count_raw(PID, db) == 6
    assert get_parser(PID).count_roles(db) == {
        "conv-a": {"prompts": 2, "replies": 0},
        "conv-b": {"prompts": 1, "replies": 0},
    }
    assert [(d.what, d.name) for d in diags.drift.values()] == [("input item", "Summary")]
    assert cursor.usage == []  # warp_tokens have no input/output split


def test_only_agent_tables_are_queried_wal_rows_seen_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _db(tmp_path)
    writer = HeldWriter(db)
    try:
        writer.execute(
            "INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, output_status)"
            " VALUES ('ex-w', 'conv-w', '2026-11-19 11:00:00', ?, '\"InProgress\"')",
            ('[{"Query":{"text":"typed while Warp runs","context":[]}}]',),
        )
        before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in db.parent.iterdir()}
        statements = traced_statements(monkeypatch)
        records, _, _ = parse(PID, db)
        count_raw(PID, db)
        get_parser(PID).count_roles(db)
        after = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in db.parent.iterdir()}
    finally:
        writer.close()
    assert "typed while Warp runs" in [r.text for r in records]
    assert before == after
    tables = {t for s in statements for t in re.findall(r"\bFROM\s+(\w+)", s)}
    assert tables == {"sqlite_master", "ai_queries", "blocks"}
    assert not any("commands" in s or "SELECT *" in s for s in statements)
    assert all("sample-not-a-real-token" not in r.text for r in records)


def test_bad_input_is_skipped(tmp_path: Path) -> None:
    not_db = tmp_path / "warp.sqlite"
    not_db.write_text("not a database")
    records, _, diags = parse(PID, not_db)
    assert records == [] and "not a readable Warp database" in diags.items[0].message
    assert count_raw(PID, not_db) == 0
    other = build_db(tmp_path / "other" / "warp.sqlite", "CREATE TABLE commands (id INTEGER);")
    records, _, diags = parse(PID, other)
    assert records == [] and "no ai_queries tables" in diags.items[0].message
    odd = build_db(
        tmp_path / "odd" / "warp.sqlite",
        "CREATE TABLE ai_queries (id INTEGER PRIMARY KEY, exchange_id TEXT, conversation_id TEXT,"
        " start_ts TEXT, input TEXT);"
        "INSERT INTO ai_queries VALUES (1, 'e', 'c', 'x', '{not json');"
        "INSERT INTO ai_queries VALUES (2, 'e2', 'c', 'x', '[1, {\"Query\": 3}]');"
        "INSERT INTO ai_queries VALUES (3, 'e3', NULL, 'x', '[{\"Query\": {\"text\": \"hi\"}}]');",
    )
    records, cursor, _ = parse(PID, odd)  # no blocks table, no working_directory column
    assert records == [] and cursor.units == 0 == count_raw(PID, odd)


def test_discovery_every_location(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _db(home / ".local/state/warp-terminal")
    [source] = discover(home, agents=["warp"]).sources
    assert source.store == "warp.db"
    records = list(run(source))
    assert {r.agent for r in records} == {"warp"}
    assert {r.project for r in records if r.session_id == "conv-a"} == {"/home/dev/src/shop"}
    state = tmp_path / "state"
    _db(state / "warp-terminal")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    assert [s.root.path for s in discover(home, agents=["warp"]).sources] == [
        state / "warp-terminal"
    ]
    monkeypatch.delenv("XDG_STATE_HOME")
    users = tmp_path / "Users"
    _db(users / "ada" / "AppData/Local/warp/Warp/data")
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    hosts = {s.host for s in discover(home, agents=["warp"]).sources}
    assert hosts == {None, "windows:ada"}


def test_macos_group_container(tmp_path: Path) -> None:
    group = "Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support"
    _db(tmp_path / group / "dev.warp.Warp-Stable")
    [source] = discover(tmp_path, agents=["warp"]).sources
    assert source.path.parent.name == "dev.warp.Warp-Stable"


def test_no_resume_command() -> None:
    row = resume_row("warp")
    assert row.argv == () and "no command line" in row.note
