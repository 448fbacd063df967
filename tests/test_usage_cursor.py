"""Cursor IDE token usage: a bubble's ``tokenCount`` (``docs/usage.md``).

The store is built in the shape Cursor writes (``cursorDiskKV`` ``composerData:<id>``
with ``fullConversationHeadersOnly``, ``bubbleId:<composer>:<bubble>`` rows with
``type`` 1/2, ISO ``createdAt``, ``tokenCount {inputTokens, outputTokens}`` that is
0/0 except on a turn's last assistant bubble, ``modelInfo.modelName``), as public
readers found it on real machines.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from _agent_helpers import build_db, parse

PID = "cursor.state_vscdb.v1"
SCHEMA = (
    "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
    "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);"
)


def _bubble(kind: int, text: str, at: str, tin: Any = 0, tout: Any = 0, **kw: Any) -> Any:
    return {"_v": 3, "type": kind, "bubbleId": kw.pop("bid"), "text": text, "createdAt": at,
            "tokenCount": {"inputTokens": tin, "outputTokens": tout}, **kw}  # fmt: skip


def _store(tmp_path: Path, bubbles: list[Any], headers: list[str], model: str) -> Path:
    db = build_db(tmp_path / "globalStorage" / "state.vscdb", SCHEMA)
    listed = [{"bubbleId": b, "type": 2} for b in headers]
    composer = {"_v": 10, "composerId": "c1", "name": "Retry cap", "createdAt": 1795168800000,
                "unifiedMode": "agent", "modelConfig": {"modelName": model},
                "fullConversationHeadersOnly": listed}  # fmt: skip
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)",
                     ("composerData:c1", json.dumps(composer)))  # fmt: skip
        for b in bubbles:
            conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)",
                         (f"bubbleId:c1:{b['bubbleId']}", json.dumps(b)))  # fmt: skip
    return db


def test_the_turns_last_bubble_carries_the_turns_tokens(tmp_path: Path) -> None:
    sonnet = {"modelName": "claude-4.5-sonnet"}
    bubbles = [
        _bubble(1, "raise the cap to 5", "2026-11-20T10:01:00.000Z", bid="u1"),
        _bubble(2, "", "2026-11-20T10:01:05.000Z", bid="a1", modelInfo=sonnet,
                toolFormerData={"name": "edit_file", "rawArgs": "{}", "result": "ok"}),
        _bubble(2, "Raised to 5.", "2026-11-20T10:01:20.000Z", 18_240, 512, bid="a2",
                modelInfo=sonnet),
        _bubble(1, "and log it", "2026-11-20T10:02:00.000Z", bid="u2"),
        # Auto mode: "default" is no model
        _bubble(2, "Logged.", "2026-11-20T10:02:09.000Z", 19_100, 88, bid="a3",
                modelInfo={"modelName": "default"}),
        # an abandoned branch (an edited message): billed too, its own conversation
        _bubble(2, "Raised to 3.", "2026-11-20T10:00:20.000Z", 17_000, 40, bid="a0"),
    ]  # fmt: skip
    db = _store(tmp_path, bubbles, ["u1", "a1", "a2", "u2", "a3"], "claude-4.5-sonnet")
    _, cursor, diag = parse(PID, db, agent="cursor", store="cursor.global_state")
    usage = {u.call_id: u for u in cursor.usage}
    assert set(usage) == {"cursor:c1:a2", "cursor:c1:a3", "cursor:c1:a0"}
    a2 = usage["cursor:c1:a2"]
    assert (a2.input_tokens, a2.output_tokens, a2.cache_read_tokens) == (18_240, 512, 0)
    assert (a2.model, a2.session_id, a2.timestamp) == ("claude-4.5-sonnet", "c1", 1795168880.0)
    assert a2.locator == "row:cursorDiskKV/bubbleId:c1:a2/tokenCount"
    assert usage["cursor:c1:a3"].model is None
    abandoned = usage["cursor:c1:a0"]
    assert (abandoned.session_id, abandoned.model) == ("c1:abandoned", "claude-4.5-sonnet")
    assert cursor.usage_skipped == 0 and diag.count == 0


def test_cursor_3_zero_counts_and_bad_counts(tmp_path: Path) -> None:
    bubbles = [
        _bubble(1, "hi", "2026-11-20T10:01:00.000Z", bid="u1"),
        _bubble(2, "Hello.", "2026-11-20T10:01:02.000Z", bid="a1"),  # 0/0: Cursor 3
        _bubble(2, "Again.", "2026-11-20T10:01:03.000Z", -4, 10, bid="a2"),
        _bubble(2, "More.", "2026-11-20T10:01:04.000Z", 12, "7", bid="a3"),
        {"_v": 3, "type": 2, "bubbleId": "a4", "text": "No count.",
         "createdAt": "2026-11-20T10:01:05.000Z"},
        _bubble(2, "Fine.", "2026-11-20T10:01:06.000Z", 300, 20, bid="a5"),
    ]  # fmt: skip
    db = _store(tmp_path, bubbles, [b["bubbleId"] for b in bubbles], "gpt-5")
    records, cursor, diag = parse(PID, db, agent="cursor")
    assert [(u.input_tokens, u.output_tokens) for u in cursor.usage] == [(300, 20)]
    assert cursor.usage_skipped == 2
    messages = [d.message for d in diag.items]
    assert any("inputTokens is negative" in m for m in messages)
    assert any("outputTokens is not a number" in m for m in messages)
    assert len(records) == 6  # the messages are all kept
