"""Cursor IDE state.vscdb: every era, the workspace mapping, WAL, and the keys never read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from _agent_helpers import HeldWriter, build_db, count_raw, parse, traced_statements
from agentdex.discovery import discover
from agentdex.parsers._registry import get_parser

PID = "cursor.state_vscdb.v1"
SCHEMA = (
    "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
    "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
)


@pytest.fixture
def user_dir(tmp_path: Path, corpus: Path) -> Path:
    """A Cursor User dir built from the peer seed SQL (global + one workspace)."""
    user = tmp_path / "User"
    build_db(
        user / "globalStorage" / "state.vscdb",
        (corpus / "agrep-fixtures/cursor/global.sql").read_text(),
    )
    ws = user / "workspaceStorage" / "0123abcd"
    build_db(ws / "state.vscdb", (corpus / "agrep-fixtures/cursor/workspace.sql").read_text())
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///work/flaky%20app"}))
    return user


def test_current_era_orders_bubbles_by_header_and_maps_the_workspace(user_dir: Path) -> None:
    db = user_dir / "globalStorage" / "state.vscdb"
    records, cursor, diags = parse(PID, db)
    first = [r for r in records if r.session_id.startswith("c1a1")]
    assert [(r.role, r.kind) for r in first] == [
        ("user", "prompt"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "message"),
        ("user", "prompt"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "message"),
    ]
    assert first[0].text == "the login test fails every third run, figure out why"
    assert {r.cwd for r in first} == {"/work/flaky app"}
    assert first[3].model == "claude-4.6-sonnet"
    assert first[6].extra["ok"] is False  # the failed run_terminal_cmd
    # session 2: no workspace, the dangling header skipped, one prompt
    second = [r for r in records if r.session_id.startswith("c2a2")]
    assert [r.text for r in second] == ["does cursor keep chat history locally"]
    assert second[0].cwd is None
    # the agentKv blob and the NULL composer produce nothing, and no error
    assert all("scaffolding" not in r.text for r in records)
    assert cursor.titles["c1a11111-1111-4111-8111-111111111111"] == "Fix the flaky test"
    assert diags.count == 0
    assert cursor.units == count_raw(PID, db) == 6


def test_only_named_keys_are_read(user_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = user_dir / "globalStorage" / "state.vscdb"
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO ItemTable VALUES ('cursorAuth/accessToken', 'SECRET-TOKEN-1')")
    conn.execute("INSERT INTO cursorDiskKV VALUES ('cursorAuth/refresh', 'SECRET-TOKEN-2')")
    conn.commit()
    conn.close()
    statements = traced_statements(monkeypatch)
    records, _, _ = parse(PID, db)
    assert records and statements
    assert all("SECRET" not in r.text for r in records)
    for sql in statements:
        assert "cursorAuth" not in sql
        if "FROM ItemTable" in sql or "FROM cursorDiskKV" in sql:
            assert "WHERE key" in sql, sql
            assert not sql.upper().startswith("SELECT *")


def test_uncheckpointed_wal_writes_are_seen(tmp_path: Path) -> None:
    db = build_db(tmp_path / "globalStorage" / "state.vscdb", SCHEMA, wal=True)
    writer = HeldWriter(db)
    try:
        composer = {
            "composerId": "cw",
            "name": "wal chat",
            "fullConversationHeadersOnly": [{"bubbleId": "b1", "type": 1}],
        }
        writer.execute(
            "INSERT INTO cursorDiskKV VALUES (?, ?)", ("composerData:cw", json.dumps(composer))
        )
        writer.execute(
            "INSERT INTO cursorDiskKV VALUES (?, ?)",
            ("bubbleId:cw:b1", json.dumps({"type": 1, "text": "only in the wal"})),
        )
        assert Path(str(db) + "-wal").stat().st_size > 0
        records, _, _ = parse(PID, db)
        assert [r.text for r in records] == ["only in the wal"]
        assert count_raw(PID, db) == 1
    finally:
        writer.close()


def test_inline_and_legacy_eras(tmp_path: Path) -> None:
    inline = {
        "composerId": "old-1",
        "name": "inline era",
        "createdAt": 1795000000000,
        "modelConfig": {"modelName": "gpt-4o"},
        "conversation": [
            {"bubbleId": "x1", "type": 1, "text": "inline question"},
            {"bubbleId": "x2", "type": 2, "text": "inline answer"},
            {"bubbleId": "x3", "type": 2, "text": ""},
        ],
    }
    chat = {
        "tabs": [
            {
                "tabId": "tab-1",
                "chatTitle": "aichat tab",
                "bubbles": [
                    {"type": "user", "text": "legacy chat question"},
                    {"type": "ai", "text": "legacy chat answer", "modelType": "gpt-4"},
                    {"type": "ai", "text": ""},
                ],
            }
        ]
    }
    prompts = [{"text": "an aiService prompt", "commandType": 4}, {"text": ""}]
    ws = tmp_path / "User" / "workspaceStorage" / "ffff"
    db = build_db(ws / "state.vscdb", SCHEMA)
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///work/legacy"}))
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:old-1', ?)", (json.dumps(inline),))
    conn.execute(
        "INSERT INTO ItemTable VALUES ('workbench.panel.aichat.view.aichat.chatdata', ?)",
        (json.dumps(chat),),
    )
    conn.execute("INSERT INTO ItemTable VALUES ('aiService.prompts', ?)", (json.dumps(prompts),))
    conn.commit()
    conn.close()
    records, cursor, _ = parse(PID, db)
    assert [(r.kind, r.text) for r in records] == [
        ("prompt", "inline question"),
        ("message", "inline answer"),
        ("prompt", "legacy chat question"),
        ("message", "legacy chat answer"),
        ("prompt", "an aiService prompt"),
    ]
    assert records[1].model == "gpt-4o" and records[3].model == "gpt-4"
    assert {r.cwd for r in records} == {"/work/legacy"}
    assert cursor.titles == {"old-1": "inline era", "tab-1": "aichat tab"}
    assert cursor.units == count_raw(PID, db) == 5


def test_headerless_composer_falls_back_to_its_bubble_keys(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.vscdb", SCHEMA)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:h', '{\"composerId\":\"h\"}')")
    for bid, ts, text in (
        ("z", "2026-11-02T10:00:02Z", "second"),
        ("a", "2026-11-02T10:00:01Z", "first"),
    ):
        conn.execute(
            "INSERT INTO cursorDiskKV VALUES (?, ?)",
            (f"bubbleId:h:{bid}", json.dumps({"type": 1, "text": text, "createdAt": ts})),
        )
    conn.commit()
    conn.close()
    records, _, _ = parse(PID, db)
    assert [r.text for r in records] == ["first", "second"]


def test_corrupt_database_is_a_diagnostic(tmp_path: Path) -> None:
    db = tmp_path / "state.vscdb"
    db.write_bytes(b"this is not sqlite" * 100)
    records, _, diags = parse(PID, db)
    assert records == [] and diags.count == 1


def test_bad_json_values_are_skipped(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.vscdb", SCHEMA)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:bad', '{not json')")
    conn.commit()
    conn.close()
    records, _, diags = parse(PID, db)
    assert records == [] and diags.count == 1
    assert count_raw(PID, db) == 0


def test_discovery_finds_local_and_wsl_cursor(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = home / ".config" / "Cursor" / "User" / "globalStorage"
    build_db(local / "state.vscdb", SCHEMA)
    users = tmp_path / "winusers"
    win = users / "alice" / "AppData" / "Roaming" / "Cursor" / "User" / "workspaceStorage" / "w1"
    build_db(win / "state.vscdb", SCHEMA)
    monkeypatch.setenv("AGENTDEX_WSL", "1")
    monkeypatch.setenv("AGENTDEX_WSL_USERS_ROOT", str(users))
    found = discover(home, agents=["cursor"])
    by_store = {(s.store, s.host) for s in found.sources}
    assert by_store == {("cursor.global_state", None), ("cursor.workspace_state", "windows:alice")}


def test_odd_shapes_never_raise(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.vscdb", SCHEMA)
    conn = sqlite3.connect(db)
    odd = {
        "composerData:a": json.dumps({"composerId": "a", "fullConversationHeadersOnly": {"x": 1}}),
        "composerData:b": json.dumps({"composerId": 5, "conversation": "nope"}),
        "composerData:c": json.dumps(
            {"fullConversationHeadersOnly": [1, None, {"bubbleId": 3}, {"bubbleId": "ok"}]}
        ),
        "bubbleId:c:ok": json.dumps(
            {
                "type": 2,
                "text": 42,
                "toolFormerData": "x",
                "thinking": "y",
                "createdAt": "yesterday",
            }
        ),
        "composerData:d": json.dumps([1, 2, 3]),
    }
    for key, value in odd.items():
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, value))
    conn.execute("INSERT INTO ItemTable VALUES ('aiService.prompts', '{\"text\": 1}')")
    conn.execute(
        "INSERT INTO ItemTable VALUES ('workbench.panel.aichat.view.aichat.chatdata', "
        '\'{"tabs": [1, {"bubbles": "x"}]}\')'
    )
    conn.commit()
    conn.close()
    records, _, diags = parse(PID, db)
    assert records == []
    assert diags.count == 1  # composerData:d is not an object
    assert count_raw(PID, db) == 0


def test_long_composers_are_fetched_in_batches_in_header_order(tmp_path: Path) -> None:
    from agentdex.parsers.cursor import BATCH

    db = build_db(tmp_path / "state.vscdb", SCHEMA)
    conn = sqlite3.connect(db)
    ids = [f"b{n:05d}" for n in range(BATCH * 2 + 17)][::-1]  # header order != key order
    headers = [{"bubbleId": bid, "type": 1} for bid in ids]
    conn.execute(
        "INSERT INTO cursorDiskKV VALUES ('composerData:L', ?)",
        (json.dumps({"composerId": "L", "fullConversationHeadersOnly": headers}),),
    )
    conn.executemany(
        "INSERT INTO cursorDiskKV VALUES (?, ?)",
        [(f"bubbleId:L:{bid}", json.dumps({"type": 1, "text": bid})) for bid in ids],
    )
    conn.commit()
    conn.close()
    records, cursor, _ = parse(PID, db)
    assert [r.text for r in records] == ids
    assert cursor.units == count_raw(PID, db) == len(ids)


def _branchy_store(tmp_path: Path) -> Path:
    """A current-era composer as Cursor leaves it after an edited message: the header list
    names the live bubbles; the first answer and the original wording remain as rows."""
    db = build_db(tmp_path / "globalStorage" / "state.vscdb", SCHEMA)
    t0 = 1795168800000
    composer = {
        "_v": 3,
        "composerId": "cb",
        "name": "Retry cap",
        "createdAt": t0,
        "modelConfig": {"modelName": "claude-4.5-sonnet"},
        "fullConversationHeadersOnly": [
            {"bubbleId": "u2", "type": 1},
            {"bubbleId": "a2", "type": 2},
            {"bubbleId": "a3", "type": 2},
        ],
    }
    bubbles = {
        # the original prompt and its answer, replaced by an edit: an abandoned branch
        "u1": {"type": 1, "text": "raise the cap to 3", "createdAt": "2026-11-20T10:00:10.000Z"},
        "a1": {
            "type": 2,
            "text": "Raised to 3.",
            "timingInfo": {"clientStartTime": 4745281.3, "clientRpcSendTime": t0 + 20000},
        },
        # the live conversation: times from the bubble, else its timingInfo send time
        "u2": {"type": 1, "text": "raise the cap to 5", "createdAt": "2026-11-20T10:01:00.000Z"},
        "a2": {
            "type": 2,
            "text": "",
            "thinking": {"text": "The cap is in retry.go."},
            "toolFormerData": {"name": "edit_file", "rawArgs": "{}", "result": "ok"},
            "timingInfo": {"clientStartTime": 4745999.0, "clientRpcSendTime": t0 + 75000},
        },
        "a3": {"type": 2, "text": "Raised to 5.", "timingInfo": {"clientStartTime": 12.5}},
    }
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:cb', ?)", (json.dumps(composer),))
    for bid, bubble in bubbles.items():
        conn.execute(
            "INSERT INTO cursorDiskKV VALUES (?, ?)", (f"bubbleId:cb:{bid}", json.dumps(bubble))
        )
    conn.commit()
    conn.close()
    return db


def test_bubble_times_abandoned_branch_and_row_locators(tmp_path: Path) -> None:
    db = _branchy_store(tmp_path)
    records, cursor, _ = parse(PID, db)
    row = "row:cursorDiskKV/bubbleId:cb:"
    assert [(r.session_id, r.locator, r.kind, r.text) for r in records] == [
        ("cb", row + "u2", "prompt", "raise the cap to 5"),
        ("cb", row + "a2/thinking", "reasoning", "The cap is in retry.go."),
        ("cb", row + "a2/toolFormerData", "tool_call", "edit_file {}"),
        ("cb", row + "a2/toolFormerData/result", "tool_result", "ok"),
        ("cb", row + "a3", "message", "Raised to 5."),
        ("cb:abandoned", row + "u1", "prompt", "raise the cap to 3"),
        ("cb:abandoned", row + "a1", "message", "Raised to 3."),
    ]
    times = [r.timestamp for r in records]
    # u2's createdAt, a2's send time (not its page-relative start), a3 carries a2's
    assert times[:5] == [1795168860.0, 1795168875.0, 1795168875.0, 1795168875.0, 1795168875.0]
    assert times[5:] == [1795168810.0, 1795168820.0]
    assert all(r.extra.get("abandoned") for r in records[5:])
    assert cursor.titles == {"cb": "Retry cap", "cb:abandoned": "Retry cap (abandoned branch)"}
    assert cursor.units == count_raw(PID, db) == 5
    count_roles = get_parser(PID).count_roles
    assert count_roles is not None
    assert count_roles(db) == {
        "cb": {"prompts": 1, "replies": 1},
        "cb:abandoned": {"prompts": 1, "replies": 1, "abandoned": 1},
    }


def test_inline_composer_locators_are_rows_with_a_pointer(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.vscdb", SCHEMA)
    inline = {
        "composerId": "old-2",
        "conversation": [
            {"type": 1, "text": "inline q", "bubbleId": "x1"},
            {"type": 2, "text": "inline a", "thinking": {"text": "hm"}, "bubbleId": "x2"},
        ],
    }
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO cursorDiskKV VALUES ('composerData:old-2', ?)", (json.dumps(inline),))
    conn.execute(
        "INSERT INTO ItemTable VALUES ('composer.composerData', ?)",
        (
            json.dumps(
                {"allComposers": [{"composerId": "w", "conversation": [inline["conversation"][0]]}]}
            ),
        ),
    )
    conn.commit()
    conn.close()
    records, _, _ = parse(PID, db)
    assert [r.locator for r in records] == [
        "row:cursorDiskKV/composerData:old-2/conversation/0",
        "row:cursorDiskKV/composerData:old-2/conversation/1/thinking",
        "row:cursorDiskKV/composerData:old-2/conversation/1",
        "row:ItemTable/composer.composerData/allComposers/0/conversation/0",
    ]
