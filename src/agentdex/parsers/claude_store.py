"""Claude Code's ``__store.db`` (versions 0.2.90-0.2.109, before the JSONL era).

A drizzle-managed SQLite file in the Claude root:
``base_messages(uuid, parent_uuid, session_id, timestamp, message_type, cwd,
user_type, version, isSidechain)`` joined by ``uuid`` to
``user_messages(uuid, message, tool_use_result, timestamp)`` and
``assistant_messages(uuid, message, timestamp, model?, ...)``; ``message``
is the API message JSON ``{role, content}``.
``conversation_summaries(leaf_uuid, summary, updated_at)`` gives summaries
(also used as titles). Timestamps are unix seconds or ms.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    make_record,
    number_parts,
    str_of,
    tool_call_text,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import Diagnostics, connect_readonly
from agentdex.records import Record, parse_timestamp


def _message(raw: object) -> dict[str, Any]:
    if isinstance(raw, bytes | str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"content": raw if isinstance(raw, str) else ""}
        if isinstance(value, dict):
            return value
        if isinstance(value, str | list):
            return {"content": value}
    return {}


def _records(
    ref: SourceRef, loc: str, sid: str, role: str, message: dict[str, Any], **common: Any
) -> list[Record]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    fallback_model = common.pop("model", None)
    model = message.get("model") if isinstance(message.get("model"), str) else fallback_model
    base_extra: dict[str, Any] = common.pop("extra", {})
    common["extra"] = base_extra
    out: list[Record] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        text = str_of(block.get("text"))
        if btype == "text" and text.strip():
            if role == "user":
                out.append(make_record(ref, loc, sid, "user", "prompt", text, **common))
            else:
                out.append(
                    make_record(ref, loc, sid, "assistant", "message", text, model=model, **common)
                )
        elif btype == "thinking" and str(block.get("thinking") or "").strip():
            out.append(
                make_record(
                    ref,
                    loc,
                    sid,
                    "assistant",
                    "reasoning",
                    block["thinking"],
                    model=model,
                    **common,
                )
            )
        elif btype == "tool_use":
            out.append(
                make_record(
                    ref,
                    loc,
                    sid,
                    "assistant",
                    "tool_call",
                    tool_call_text(block.get("name"), block.get("input")),
                    model=model,
                    **{**common, "extra": {**base_extra, "call_id": block.get("id")}},
                )
            )
        elif btype == "tool_result":
            body = as_text(block.get("content")).strip()
            if body:
                out.append(
                    make_record(
                        ref,
                        loc,
                        sid,
                        "tool",
                        "tool_result",
                        clip(body),
                        **{**common, "extra": {**base_extra, "call_id": block.get("tool_use_id")}},
                    )
                )
    return out


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def parse_store(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    try:
        conn = connect_readonly(ref.path)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as exc:
        diagnostics.add(ref.path, "", f"cannot open SQLite store: {exc}")
        return
    try:
        if "base_messages" not in tables:
            diagnostics.add(ref.path, "", "no base_messages table; not a Claude store")
            return
        selects = []
        if "user_messages" in tables:
            selects.append(
                "SELECT b.uuid, b.session_id, b.timestamp, b.cwd, b.isSidechain, "
                "'user', u.message, NULL FROM base_messages b "
                "JOIN user_messages u ON u.uuid = b.uuid"
            )
        if "assistant_messages" in tables:
            model = "a.model" if "model" in _columns(conn, "assistant_messages") else "NULL"
            selects.append(
                "SELECT b.uuid, b.session_id, b.timestamp, b.cwd, b.isSidechain, "
                f"'assistant', a.message, {model} FROM base_messages b "
                "JOIN assistant_messages a ON a.uuid = b.uuid"
            )
        if selects:
            query = " UNION ALL ".join(selects) + " ORDER BY 2, 3, 1"
            for uuid, sid, ts, cwd, side, role, raw, model in conn.execute(query):
                produced = _records(
                    ref,
                    f"row:{role}_messages/{uuid}",
                    str(sid),
                    role,
                    _message(raw),
                    timestamp=parse_timestamp(ts),
                    cwd=cwd if isinstance(cwd, str) else None,
                    model=model,
                    extra={"sidechain": bool(side)} if side else {},
                )
                if produced:
                    cursor.units += 1
                    yield from number_parts(produced)
        if "conversation_summaries" in tables:
            for leaf, summary, updated, sid, cwd in conn.execute(
                "SELECT c.leaf_uuid, c.summary, c.updated_at, b.session_id, b.cwd "
                "FROM conversation_summaries c LEFT JOIN base_messages b ON b.uuid = c.leaf_uuid"
            ):
                if not isinstance(summary, str) or not summary.strip():
                    continue
                session = str(sid or leaf)
                cursor.titles.setdefault(session, summary)
                cursor.units += 1
                yield make_record(
                    ref,
                    f"row:conversation_summaries/{leaf}",
                    session,
                    "system",
                    "summary",
                    summary,
                    timestamp=parse_timestamp(updated),
                    cwd=cwd if isinstance(cwd, str) else None,
                )
    except sqlite3.DatabaseError as exc:
        diagnostics.add(ref.path, "", f"SQLite error: {exc}")
    finally:
        conn.close()


def count_raw(path: Path) -> int:
    """Message rows joined to a base row with non-empty JSON content, plus summaries."""
    conn = connect_readonly(path)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        total = 0
        for table in ("user_messages", "assistant_messages"):
            if table in tables and "base_messages" in tables:
                total += conn.execute(
                    f"SELECT count(*) FROM {table} t JOIN base_messages b ON b.uuid = t.uuid "
                    "WHERE json_valid(t.message) AND ("
                    " (json_type(t.message,'$.content') = 'text'"
                    "  AND trim(json_extract(t.message,'$.content')) <> '')"
                    " OR json_array_length(t.message,'$.content') > 0)"
                ).fetchone()[0]
        if "conversation_summaries" in tables:
            total += conn.execute(
                "SELECT count(*) FROM conversation_summaries WHERE trim(summary) <> ''"
            ).fetchone()[0]
        return int(total)
    finally:
        conn.close()


def count_roles(path: Path) -> RoleCounts:
    """Non-blank text blocks (or string content) of user rows (prompts) and assistant rows
    (replies), per session, by plain SQL."""
    conn = connect_readonly(path)
    counts: RoleCounts = {}
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table, role in (("user_messages", "prompts"), ("assistant_messages", "replies")):
            if table not in tables or "base_messages" not in tables:
                continue
            valid = "CASE WHEN json_valid(t.message) THEN t.message ELSE '{}' END"
            block = "CASE WHEN c.type = 'object' THEN c.value ELSE '{}' END"
            rows = conn.execute(
                f"SELECT b.session_id, count(*) FROM {table} t JOIN base_messages b"
                f" ON b.uuid = t.uuid, json_each({valid}, '$.content') c"
                f" WHERE json_extract({block}, '$.type') = 'text'"
                f" AND trim(coalesce(json_extract({block}, '$.text'), '')) <> ''"
                " GROUP BY b.session_id"
                f" UNION ALL SELECT b.session_id, count(*) FROM {table} t JOIN base_messages b"
                f" ON b.uuid = t.uuid WHERE json_type({valid}, '$.content') = 'text'"
                f" AND trim(json_extract({valid}, '$.content')) <> '' GROUP BY b.session_id"
            )
            for session, n in rows:
                add_role(counts, str(session), role, n)
    finally:
        conn.close()
    return counts


PARSERS = (
    ParserSpec(
        "claude-code.store_sqlite.v1", parse_store, count_raw=count_raw, count_roles=count_roles
    ),
)
