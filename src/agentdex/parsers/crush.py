"""Crush: one ``crush.db`` per project (``<project>/.crush/crush.db``), read with its WAL.

charmbracelet/crush ``internal/db/migrations/*.sql`` and ``internal/message``:
``sessions(id, parent_session_id, title, message_count, prompt_tokens,
completion_tokens, cost, summary_message_id, created_at, updated_at)`` and
``messages(id, session_id, role user|assistant|tool|system, parts, model,
provider, is_summary_message, created_at (ms), finished_at)``; ``parts`` is a
list of ``{type, data}``: ``text``, ``reasoning`` (``thinking``),
``tool_call`` (``id, name, input`` as a JSON string), ``tool_result``
(``tool_call_id, name, content, is_error``), ``shell_command`` (a ``!`` command
the person ran: ``command, output, exit_code``), ``image_url``, ``binary``,
``finish``.

Crush keeps its newest rows in the uncheckpointed ``-wal`` (it runs in WAL
mode and rarely checkpoints): :func:`agentdex.readers.connect_readonly` reads
the database and its WAL together from a private copy, so nothing of the
project's ``.crush`` folder changes.

* Prompt: a user message's text in a top-level session. Sessions with a
  ``parent_session_id`` are the agent's own: a task sub-agent (its user
  message is the parent agent's instruction: ``user``/``message``) or a title
  generation session (``title-<parent>``, a copy of the first prompt: skipped).
* Reply: an assistant message's text parts (one reply per message);
  ``reasoning`` = reasoning; ``tool_call`` = tool call; ``tool_result`` (in
  ``tool`` messages) = tool result; a ``shell_command`` = ``user``/``message``
  (``$ command`` and its output); a summary message (``is_summary_message``,
  or the session's ``summary_message_id``) = ``summary``.
* cwd: the folder holding ``.crush`` (Crush records no cwd of its own).
* Title: the session's ``title``. Usage: the session totals
  (``prompt_tokens``/``completion_tokens``; Crush keeps no per-call counts).
"""

from __future__ import annotations

import contextlib
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
from agentdex.readers import Diagnostics, connect_readonly
from agentdex.records import Record, parse_timestamp

KNOWN_PARTS = frozenset(
    {"text", "reasoning", "tool_call", "tool_result", "shell_command", "image_url", "binary",
     "finish"}
)  # fmt: skip


def _parts(raw: object) -> list[tuple[str, dict[str, Any]]]:
    try:
        value = json.loads(raw) if isinstance(raw, str | bytes) else raw
    except ValueError:
        return []
    return [
        (str_of(p.get("type")), dict_of(p.get("data")))
        for p in (value if isinstance(value, list) else [])
        if isinstance(p, dict)
    ]


def project_of(db: Path) -> str | None:
    """The project a ``.crush/crush.db`` belongs to (Crush records no cwd)."""
    return str(db.parent.parent) if db.parent.name == ".crush" else None


def _pick(have: set[str], wanted: list[str]) -> str:
    return ", ".join(c if c in have else f"NULL AS {c}" for c in wanted)


class _Message:
    def __init__(self, ref: SourceRef, sid: str, cwd: str | None, diag: Diagnostics) -> None:
        self.ref, self.sid, self.cwd, self.diag = ref, sid, cwd, diag

    def records(
        self, mid: str, role: object, parts: list[tuple[str, dict[str, Any]]], **fields: Any
    ) -> list[Record]:
        where = f"row:messages/{mid}"
        summary = fields.pop("summary")
        typed = fields.pop("typed")
        base_extra = fields.pop("extra", {})
        common = {"cwd": self.cwd, **fields}
        out: list[Record] = []

        def add(r: Any, k: Any, text: str, **extra: Any) -> None:
            if text.strip():
                out.append(
                    make_record(
                        self.ref,
                        where,
                        self.sid,
                        r,
                        k,
                        text,
                        extra={**base_extra, **extra},
                        **common,
                    )
                )

        said = "\n".join(d.get("text", "") for t, d in parts if t == "text" and d.get("text"))
        first = True
        for kind, data in parts:
            if kind == "text" and first:
                first = False
                if summary:
                    add("system", "summary", said)
                elif role == "user":
                    add("user", "prompt" if typed else "message", said)
                elif role == "assistant":
                    add("assistant", "message", said)
                else:
                    add("system", "message", said)
            elif kind == "reasoning":
                add("assistant", "reasoning", str_of(data.get("thinking")))
            elif kind == "tool_call":
                args: object = data.get("input")
                with contextlib.suppress(ValueError):
                    args = json.loads(args) if isinstance(args, str) and args else args
                add("assistant", "tool_call", tool_call_text(data.get("name"), args),
                    call_id=data.get("id"))  # fmt: skip
            elif kind == "tool_result":
                extra = {"call_id": data.get("tool_call_id")}
                if data.get("is_error"):
                    extra["ok"] = False
                add("tool", "tool_result", clip(str_of(data.get("content"))), **extra)
            elif kind == "shell_command":
                text = f"$ {str_of(data.get('command'))}\n{str_of(data.get('output'))}"
                add("user", "message", clip(text), exit_code=data.get("exit_code"))
            elif kind not in KNOWN_PARTS:
                self.diag.unrecognised("part type", kind, path=self.ref.path, locator=where)
        return number_parts(out)


def _usage(ref: SourceRef, row: dict[str, Any], cwd: str | None, cursor: ParseCursor,
           diag: Diagnostics) -> None:  # fmt: skip
    if row.get("prompt_tokens") is None and row.get("completion_tokens") is None:
        return
    sid = str(row["id"])
    updated = parse_timestamp(row.get("updated_at"))
    usage = session_total_usage(
        ref, sid, row.get("prompt_tokens"), row.get("completion_tokens"), timestamp=updated, cwd=cwd
    )
    cursor.add_usage(usage, diag)


def parse_db(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    conn = open_sqlite_store(ref, diagnostics, "crush", {"sessions", "messages"})
    if conn is None:
        return
    cwd = project_of(Path(ref.path))
    try:
        s_cols = ["id", "parent_session_id", "title", "prompt_tokens", "completion_tokens",
                  "summary_message_id", "created_at", "updated_at"]  # fmt: skip
        sessions = conn.execute(
            f"SELECT {_pick(table_columns(conn, 'sessions'), s_cols)} FROM sessions "
            "ORDER BY created_at, id"
        ).fetchall()
        m_cols = ["id", "role", "parts", "model", "created_at", "is_summary_message"]
        m_sql = (
            f"SELECT {_pick(table_columns(conn, 'messages'), m_cols)} FROM messages "
            "WHERE session_id = ? ORDER BY created_at, rowid"
        )
        for values in sessions:
            row = dict(zip(s_cols, values, strict=True))
            sid = str(row["id"])
            parent = row["parent_session_id"]
            if parent and sid == f"title-{parent}":
                continue  # the title generation call: a copy of the first prompt
            if row["title"]:
                cursor.titles[sid] = str(row["title"])
            _usage(ref, row, cwd, cursor, diagnostics)
            message = _Message(ref, sid, cwd, diagnostics)
            for mid, role, parts, model, created, is_summary in conn.execute(m_sql, (sid,)):
                records = message.records(
                    str(mid),
                    role,
                    _parts(parts),
                    summary=bool(is_summary) or mid == row["summary_message_id"],
                    typed=not parent,
                    model=opt_str(model),
                    timestamp=parse_timestamp(created),
                    extra={"parent_session": parent} if parent else {},
                )
                if records:
                    cursor.units += 1
                    yield from records
    except sqlite3.Error as exc:
        diagnostics.add(ref.path, "", f"crush database read failed: {exc}")
    finally:
        conn.close()


def _rows(path: Path) -> list[tuple[Any, ...]]:
    conn = connect_readonly(path)
    try:
        return conn.execute(
            "SELECT m.session_id, m.role, m.parts, s.parent_session_id FROM messages m "
            "JOIN sessions s ON s.id = m.session_id"
        ).fetchall()
    finally:
        conn.close()


def _own(sid: str, parent: object) -> bool:
    return not (parent and sid == f"title-{parent}")


def count_raw(path: Path) -> int:
    """Messages (outside title sessions) with text, reasoning, a tool call or result, or a
    shell command: plain SQL and ``json``."""
    count = 0
    for sid, _role, parts, parent in _rows(path):
        if not _own(str(sid), parent):
            continue
        items = json.loads(parts) if parts else []
        count += any(
            (p.get("type") == "text" and str(p.get("data", {}).get("text", "")).strip())
            or (p.get("type") == "reasoning" and str(p["data"].get("thinking", "")).strip())
            or p.get("type") in ("tool_call", "tool_result", "shell_command")
            for p in items
            if isinstance(p, dict)
        )
    return count


def count_roles(path: Path) -> RoleCounts:
    """Per session: user messages with text in top-level sessions; assistant messages with
    text (summaries left out)."""
    conn = connect_readonly(path)
    try:
        cols = table_columns(conn, "messages")
        summary = "m.is_summary_message" if "is_summary_message" in cols else "0"
        summary_id = (
            "s.summary_message_id"
            if "summary_message_id" in table_columns(conn, "sessions")
            else "NULL"
        )
        rows = conn.execute(
            f"SELECT m.id, m.session_id, m.role, m.parts, s.parent_session_id, {summary}, "
            f"{summary_id} FROM messages m JOIN sessions s ON s.id = m.session_id"
        ).fetchall()
    finally:
        conn.close()
    counts: RoleCounts = {}
    for mid, sid, role, parts, parent, is_summary, summary_mid in rows:
        if not _own(str(sid), parent) or is_summary or mid == summary_mid:
            continue
        items = json.loads(parts) if parts else []
        text = "".join(
            str(p.get("data", {}).get("text", ""))
            for p in items
            if isinstance(p, dict) and p.get("type") == "text"
        )
        if not text.strip():
            continue
        if role == "assistant":
            add_role(counts, str(sid), "replies")
        elif role == "user" and not parent:
            add_role(counts, str(sid), "prompts")
    return counts


PARSERS = (ParserSpec("crush.sqlite.v1", parse_db, count_raw=count_raw, count_roles=count_roles),)
