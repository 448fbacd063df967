"""Goose sessions: ``sessions/sessions.db`` (SQLite), and the legacy ``sessions/<id>.jsonl``.

block/goose ``crates/goose/src/session/session_manager.rs`` (schema) and
``conversation/message.rs`` (``Message``): the database has ``sessions(id
'YYYYMMDD_N', name, description, working_dir, session_type, created_at,
accumulated_*_tokens, ...)`` and ``messages(id, message_id, session_id, role
user|assistant, content_json, created_timestamp (unix s), metadata_json
{userVisible, agentVisible})``; ``content_json`` is the message's
``MessageContent`` list, tagged by ``type``: ``text``, ``image``,
``toolRequest`` (``toolCall: {status, value: {name, arguments}}``),
``toolResponse`` (``toolResult: {status, value: {content: [...]}}``, carried by
user-role messages), ``thinking``, ``redactedThinking``, ``frontendToolRequest``,
``toolConfirmationRequest``, ``actionRequired``, ``systemNotification``.

* Prompt: the text of a user message that the person saw (``userVisible``
  not false) in a session a person drives (``session_type`` user, acp or
  terminal); a message only the agent sees (a compaction summary, injected
  instructions) and the user messages of scheduled, sub-agent or hidden
  sessions are ``user``/``message``. Reply: an assistant message's text
  items, one reply per message. ``thinking`` = reasoning; ``toolRequest`` and
  ``frontendToolRequest`` = tool calls; ``toolResponse`` = tool results.
  Other content types are skipped when Goose documents them, else reported
  as format drift.
* Title: the session ``name`` (``description`` before schema v4).
* Usage: Goose keeps no per-call counts, only each session's running totals
  (``accumulated_input_tokens``/``accumulated_output_tokens``, else
  ``input_tokens``/``output_tokens``): one usage entry per session, located at
  ``row:sessions/<id>``.
* Legacy files (before ~1.10): line 1 is the session (``working_dir``,
  ``description``, token totals), then one ``Message`` per line. Goose imports
  them into the database once; a file whose session the ``sessions.db``
  beside it holds is read there, not twice (the file gives nothing).

Only ``sessions`` and ``messages`` are read (``threads``/``thread_messages``,
the desktop's grouping, repeat session messages; rows there whose message id
no session holds are reported as drift, not silently dropped).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    clip,
    dict_of,
    make_record,
    number_parts,
    open_sqlite_store,
    opt_str,
    session_total_usage,
    str_of,
    table_columns,
    tool_call_text,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import Diagnostics, JsonlReader, connect_readonly
from agentdex.records import Record, parse_timestamp

#: Sessions a person drives; the user messages of the others are not typed prompts.
TYPED_SESSIONS = frozenset({"user", "acp", "terminal"})
#: Content types read, or knowingly skipped (images, confirmations, UI notices).
READ = frozenset({"text", "thinking", "toolRequest", "frontendToolRequest", "toolResponse"})
SKIPPED = frozenset(
    {
        "image", "redactedThinking", "toolConfirmationRequest", "actionRequired",
        "systemNotification", "conversationCompacted", "summarizationRequested",
        "contextLengthExceeded",
    }
)  # fmt: skip


def _loads(value: object) -> Any:
    if isinstance(value, str | bytes):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _tool_result_text(item: dict[str, Any]) -> str:
    result = dict_of(item.get("toolResult"))
    if result.get("status") == "error":
        return f"error: {str_of(result.get('error'))}"
    value = result.get("value")
    content = value.get("content") if isinstance(value, dict) else value
    parts = content if isinstance(content, list) else []
    texts = [
        str_of(part.get("text"))
        for part in parts
        if isinstance(part, dict) and part.get("type") == "text"
    ]
    return "\n".join(t for t in texts if t)


def _tool_call_text(item: dict[str, Any]) -> str:
    call = dict_of(item.get("toolCall"))
    if call.get("status") == "error":
        return f"invalid tool call: {str_of(call.get('error'))}"
    value = dict_of(call.get("value"))
    return tool_call_text(value.get("name"), value.get("arguments"))


class _Session:
    """Turns one session's messages into records."""

    def __init__(
        self, ref: SourceRef, sid: str, cwd: str | None, typed: bool, diag: Diagnostics
    ) -> None:
        self.ref, self.sid, self.cwd, self.typed, self.diag = ref, sid, cwd, typed, diag

    def message(
        self, where: str, role: object, content: object, meta: object, created: object
    ) -> list[Record]:
        items = [i for i in content if isinstance(i, dict)] if isinstance(content, list) else []
        visible = dict_of(meta).get("userVisible") is not False
        common: dict[str, Any] = {"timestamp": parse_timestamp(created), "cwd": self.cwd}
        out: list[Record] = []

        def add(r: Any, k: Any, text: str, **extra: Any) -> None:
            if text.strip():
                out.append(
                    make_record(self.ref, where, self.sid, r, k, text, extra=extra, **common)
                )

        texts = [str_of(i.get("text")) for i in items if i.get("type") == "text"]
        said = "\n".join(t for t in texts if t.strip()).strip()
        if role == "user":
            who, what = ("user", "prompt") if self.typed and visible else ("user", "message")
            who = who if visible else "system"
        else:
            who, what = "assistant", "message"
        first_text = True
        for item in items:
            kind = item.get("type")
            if kind == "text" and first_text:  # the message's text items are one record
                first_text = False
                add(who, what, said)
            elif kind == "thinking":
                add("assistant", "reasoning", str_of(item.get("thinking")))
            elif kind in ("toolRequest", "frontendToolRequest"):
                add("assistant", "tool_call", _tool_call_text(item), call_id=item.get("id"))
            elif kind == "toolResponse":
                add("tool", "tool_result", clip(_tool_result_text(item)), call_id=item.get("id"))
            elif kind not in READ and kind not in SKIPPED:
                self.diag.unrecognised("content type", kind, path=self.ref.path, locator=where)
        return number_parts(out)


def _session_rows(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    have = table_columns(conn, "sessions")
    wanted = [
        "id", "name", "description", "working_dir", "session_type", "created_at",
        "accumulated_input_tokens", "accumulated_output_tokens", "input_tokens",
        "output_tokens", "updated_at",
    ]  # fmt: skip
    cols = [c for c in wanted if c in have]
    rows = conn.execute(f"SELECT {', '.join(cols)} FROM sessions ORDER BY created_at, id")
    return [dict(zip(cols, row, strict=True)) for row in rows.fetchall()]


def _session_usage(
    ref: SourceRef, row: dict[str, Any], cursor: ParseCursor, diag: Diagnostics
) -> None:
    sid = str(row["id"])
    counts = [row.get("accumulated_input_tokens"), row.get("accumulated_output_tokens")]
    if counts == [None, None]:
        counts = [row.get("input_tokens"), row.get("output_tokens")]
    if counts == [None, None]:
        return
    updated = parse_timestamp(row.get("updated_at"))
    cwd = opt_str(row.get("working_dir"))
    usage = session_total_usage(ref, sid, counts[0], counts[1], timestamp=updated, cwd=cwd)
    cursor.add_usage(usage, diag)


def parse_db(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    conn = open_sqlite_store(ref, diagnostics, "goose", {"sessions", "messages"})
    if conn is None:
        return
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        has_meta = "metadata_json" in table_columns(conn, "messages")
        meta_col = "metadata_json" if has_meta else "NULL"
        rows = _session_rows(conn)
        known = {str(r["id"]) for r in rows}
        orphans = conn.execute(
            "SELECT DISTINCT session_id FROM messages ORDER BY session_id"
        ).fetchall()
        rows += [{"id": sid} for (sid,) in orphans if str(sid) not in known]
        for row in rows:
            sid = str(row["id"])
            title = opt_str(row.get("name")) or opt_str(row.get("description"))
            if title:
                cursor.titles[sid] = title
            kind = row.get("session_type") or "user"
            session = _Session(
                ref, sid, opt_str(row.get("working_dir")), kind in TYPED_SESSIONS, diagnostics
            )
            _session_usage(ref, row, cursor, diagnostics)
            messages = conn.execute(
                f"SELECT id, role, content_json, created_timestamp, {meta_col} FROM messages "
                "WHERE session_id = ? ORDER BY id",
                (row["id"],),
            )
            for mid, role, content, created, meta in messages:
                records = session.message(
                    f"row:messages/{mid}", role, _loads(content), _loads(meta), created
                )
                if records:
                    cursor.units += 1
                    yield from records
        if "thread_messages" in tables:
            _thread_drift(conn, ref, diagnostics)
    except sqlite3.Error as exc:
        diagnostics.add(ref.path, "", f"goose database read failed: {exc}")
    finally:
        conn.close()


def _thread_drift(conn: sqlite3.Connection, ref: SourceRef, diag: Diagnostics) -> None:
    """Thread messages whose message id no session message has: content this parser misses."""
    if "message_id" not in table_columns(conn, "messages"):
        return
    (missing,) = conn.execute(
        "SELECT COUNT(*) FROM thread_messages WHERE message_id IS NULL OR message_id NOT IN "
        "(SELECT message_id FROM messages WHERE message_id IS NOT NULL)"
    ).fetchone()
    if missing:
        diag.unrecognised(
            "table", "thread_messages without a session message", path=ref.path, count=missing
        )


def _imported(path: Path) -> bool:
    """Whether the ``sessions.db`` beside this legacy file holds its session."""
    db = path.parent / "sessions.db"
    if not db.is_file():
        return False
    try:
        conn = connect_readonly(db)
    except (sqlite3.Error, OSError):
        return False
    try:
        found = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (path.stem,)).fetchone()
        return found is not None
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def parse_legacy(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    if _imported(path):
        return
    sid = path.stem
    session: _Session | None = None
    for line in JsonlReader(path, diagnostics):
        obj = line.value
        if not isinstance(obj, dict):
            continue
        if session is None:  # line 1: the session's metadata
            title = opt_str(obj.get("description")) or opt_str(obj.get("name"))
            if title:
                cursor.titles[sid] = title
            kind = obj.get("session_type") or "user"
            session = _Session(
                ref, sid, opt_str(obj.get("working_dir")), kind in TYPED_SESSIONS, diagnostics
            )
            if "role" not in obj:
                continue
        where = f"line:{line.lineno}"
        records = session.message(
            where, obj.get("role"), obj.get("content"), obj.get("metadata"), obj.get("created")
        )
        for record in records:
            record.offset = line.offset
        if records:
            cursor.units += 1
            yield from records


def _useful(content: Any) -> bool:
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text" and str(item.get("text", "")).strip():
            return True
        if kind == "thinking" and str(item.get("thinking", "")).strip():
            return True
        if kind in ("toolRequest", "frontendToolRequest", "toolResponse"):
            return True
    return False


def _said(content: Any) -> bool:
    return any(
        isinstance(i, dict) and i.get("type") == "text" and str(i.get("text", "")).strip()
        for i in (content if isinstance(content, list) else [])
    )


def count_db(path: Path) -> int:
    """Message rows with text, thinking, a tool call or a tool response (plain SQL + json)."""
    conn = connect_readonly(path)
    try:
        rows = conn.execute("SELECT content_json FROM messages").fetchall()
    finally:
        conn.close()
    return sum(_useful(_loads(content)) for (content,) in rows)


def count_db_roles(path: Path) -> RoleCounts:
    """Per session: visible user rows with text in user/acp/terminal sessions; assistant rows
    with text."""
    conn = connect_readonly(path)
    try:
        types = dict(conn.execute("SELECT id, session_type FROM sessions").fetchall())
        meta = "metadata_json" if "metadata_json" in table_columns(conn, "messages") else "NULL"
        rows = conn.execute(f"SELECT session_id, role, content_json, {meta} FROM messages")
        counts: RoleCounts = {}
        for sid, role, content, metadata in rows.fetchall():
            _count_role(counts, str(sid), types.get(sid) or "user", role, content, metadata)
    finally:
        conn.close()
    return counts


def _count_role(
    counts: RoleCounts, sid: str, kind: str, role: object, content: Any, metadata: Any
) -> None:
    content = _loads(content)
    if not _said(content):
        return
    if role == "assistant":
        add_role(counts, sid, "replies")
    elif kind in TYPED_SESSIONS and (_loads(metadata) or {}).get("userVisible") is not False:
        add_role(counts, sid, "prompts")


def _legacy_lines(path: Path) -> list[dict[str, Any]]:
    if _imported(path):
        return []
    lines = [i.value for i in JsonlReader(path, Diagnostics()) if isinstance(i.value, dict)]
    return lines[1:] if lines and "role" not in lines[0] else lines


def count_legacy(path: Path) -> int:
    return sum(_useful(obj.get("content")) for obj in _legacy_lines(path))


def count_legacy_roles(path: Path) -> RoleCounts:
    counts: RoleCounts = {}
    head = next(iter(JsonlReader(path, Diagnostics())), None)
    kind = head.value.get("session_type") if head and isinstance(head.value, dict) else None
    for obj in _legacy_lines(path):
        _count_role(
            counts, path.stem, kind or "user", obj.get("role"), obj.get("content"),
            obj.get("metadata"),
        )  # fmt: skip
    return counts


PARSERS = (
    ParserSpec("goose.sqlite.v1", parse_db, count_raw=count_db, count_roles=count_db_roles),
    ParserSpec(
        "goose.session_jsonl.v1",
        parse_legacy,
        count_raw=count_legacy,
        count_roles=count_legacy_roles,
    ),
)
