"""OpenCode: the SQLite store (1.x and 2.x schemas, WAL, $OPENCODE_DB) and the JSON tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _agent_helpers import HeldWriter, build_db, count_raw, parse, traced_statements
from agentdex.discovery import discover

PID = "opencode.sqlite.v1"


def test_v1_schema_from_the_peer_seed(tmp_path: Path, corpus: Path) -> None:
    db = build_db(
        tmp_path / "opencode.db", (corpus / "agrep-fixtures/opencode/seed.sql").read_text()
    )
    records, cursor, diags = parse(PID, db)
    assert [(r.session_id, r.kind, r.text) for r in records] == [
        ("sess-oc-1", "prompt", "convert config to yaml"),
        ("sess-oc-1", "message", "Converted config.json to config.yaml."),
        ("sess-oc-1", "tool_call", 'bash {"command":"cat config.json"}'),
        ("sess-oc-1", "tool_result", "config as text"),
        ("sess-oc-child", "prompt", "check the generated yaml schema"),
        ("sess-oc-child", "message", "The generated yaml matches the schema."),
    ]
    assert {r.cwd for r in records} == {"/work/epsilon"}
    assert records[1].model == "claude-fable-5"
    assert cursor.titles == {"sess-oc-child": "spec check"}
    assert diags.count == 0
    assert cursor.units == count_raw(PID, db) == 5


def test_v2_schema_from_the_peer_seed(tmp_path: Path, corpus: Path) -> None:
    db = build_db(
        tmp_path / "opencode.db", (corpus / "agrep-fixtures/opencode_v2/seed.sql").read_text()
    )
    records, cursor, _ = parse(PID, db)
    kinds = [(r.role, r.kind) for r in records if r.session_id == "ses-oc2-1"]
    assert kinds == [
        ("user", "prompt"),
        ("assistant", "reasoning"),
        ("assistant", "message"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
    ]
    assert all("Called the read tool" not in r.text for r in records)
    assert cursor.units == count_raw(PID, db) == 4


SCHEMA = (
    "CREATE TABLE session(id TEXT PRIMARY KEY, directory TEXT, parent_id TEXT, title TEXT,"
    " time_created INTEGER);"
    "CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, data TEXT, time_created INTEGER);"
    "CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT,"
    " time_created INTEGER);"
    "CREATE TABLE account(id TEXT, token TEXT);"
    "CREATE TABLE credential(id TEXT, secret TEXT);"
    "INSERT INTO account VALUES ('a', 'ACCOUNT-SECRET');"
    "INSERT INTO credential VALUES ('c', 'CREDENTIAL-SECRET');"
)


def test_wal_rows_seen_and_secret_tables_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = build_db(tmp_path / "opencode.db", SCHEMA, wal=True)
    writer = HeldWriter(db)
    try:
        writer.execute("INSERT INTO session VALUES ('s', '/p', NULL, 'wal title', 1795000000000)")
        writer.execute(
            "INSERT INTO message VALUES ('m', 's', '{\"role\":\"user\"}', 1795000000000)"
        )
        writer.execute(
            "INSERT INTO part VALUES ('p', 'm', 's', ?, 1795000000000)",
            (json.dumps({"type": "text", "text": "typed while running"}),),
        )
        statements = traced_statements(monkeypatch)
        records, cursor, _ = parse(PID, db)
        assert [r.text for r in records] == ["typed while running"]
        assert cursor.titles == {"s": "wal title"}
        joined = " ".join(statements).lower()
        assert "account" not in joined and "credential" not in joined
    finally:
        writer.close()


def test_synthetic_parts_are_not_prompts(tmp_path: Path) -> None:
    db = build_db(tmp_path / "opencode.db", SCHEMA)
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO session VALUES ('s', '/p', NULL, NULL, 1)")
    conn.execute("INSERT INTO message VALUES ('m', 's', '{\"role\":\"user\"}', 1)")
    for pid, part in (
        ("p1", {"type": "text", "text": "real"}),
        ("p2", {"type": "text", "text": "injected", "synthetic": True}),
        ("p3", {"type": "step-start"}),
        ("p4", "{broken"),
    ):
        conn.execute(
            "INSERT INTO part VALUES (?, 'm', 's', ?, 1)",
            (pid, part if isinstance(part, str) else json.dumps(part)),
        )
    conn.commit()
    conn.close()
    records, cursor, _ = parse(PID, db)
    assert [r.text for r in records] == ["real"]
    assert cursor.units == count_raw(PID, db) == 1


def test_not_a_database_is_a_diagnostic(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    db.write_text("garbage" * 200)
    records, _, diags = parse(PID, db)
    assert records == [] and diags.count >= 1


def test_json_tree(tmp_path: Path) -> None:
    storage = tmp_path / "opencode" / "storage"
    (storage / "session" / "proj1").mkdir(parents=True)
    (storage / "session" / "proj1" / "ses_1.json").write_text(
        json.dumps({"id": "ses_1", "directory": "/work/tree", "title": "tree era"})
    )
    msg_dir = storage / "message" / "ses_1"
    msg_dir.mkdir(parents=True)
    (msg_dir / "msg_1.json").write_text(
        json.dumps(
            {
                "id": "msg_1",
                "sessionID": "ses_1",
                "role": "assistant",
                "modelID": "m-1",
                "time": {"created": 1795000000000},
            }
        )
    )
    parts = storage / "part" / "msg_1"
    parts.mkdir(parents=True)
    (parts / "prt_1.json").write_text(json.dumps({"type": "text", "text": "tree answer"}))
    (parts / "prt_2.json").write_text(
        json.dumps(
            {"type": "tool", "tool": "read", "state": {"input": {"path": "a"}, "output": "A"}}
        )
    )
    (parts / "prt_3.json").write_text("{broken")
    records, cursor, diags = parse("opencode.storage_json.v1", msg_dir / "msg_1.json")
    assert [(r.kind, r.text) for r in records] == [
        ("message", "tree answer"),
        ("tool_call", 'read {"path":"a"}'),
        ("tool_result", "A"),
    ]
    assert records[0].cwd == "/work/tree" and records[0].model == "m-1"
    assert cursor.titles == {"ses_1": "tree era"}
    assert diags.count == 1
    assert cursor.units == count_raw("opencode.storage_json.v1", msg_dir / "msg_1.json") == 2


def test_opencode_db_env_pins_one_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = home / ".local" / "share" / "opencode"
    build_db(default / "opencode.db", SCHEMA)
    pinned = build_db(tmp_path / "elsewhere" / "my-store.sqlite", SCHEMA)
    (tmp_path / "elsewhere" / "other.db").write_text("not this one")
    monkeypatch.setenv("OPENCODE_DB", str(pinned))
    found = discover(home, agents=["opencode"])
    assert sorted(str(s.path) for s in found.sources) == sorted(
        [str(pinned), str(default / "opencode.db")]
    )
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "missing.db"))
    found = discover(home, agents=["opencode"])
    assert [s.path for s in found.sources] == [default / "opencode.db"]
    assert any("OPENCODE_DB" in w for w in found.warnings)
