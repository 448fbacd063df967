"""VS Code: the inline-chat prompt history in ``globalStorage/state.vscdb``.

Only the ``ItemTable`` key ``inline-chat-history`` is read, with one
parameterized ``SELECT`` on a read-only connection (:func:`connect_readonly`)
and a short busy timeout; no other key is read or listed (``secret://``
keys live in the same table). A locked, corrupt or table-less database is
skipped with a diagnostic. No timestamps are stored: records carry the
database's mtime (``extra.timestamp_source = "mtime"``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics, connect_readonly
from agentdex.records import Record

INLINE_HISTORY_KEY = "inline-chat-history"
#: Milliseconds to wait on a locked state.vscdb before skipping it.
BUSY_TIMEOUT_MS = 250


def read_inline_history(path: Path, diagnostics: Diagnostics) -> list[Any] | None:
    """The ``inline-chat-history`` array, or ``None`` (with a diagnostic) when unreadable."""
    locator = f"row:ItemTable/{INLINE_HISTORY_KEY}"
    try:
        conn = connect_readonly(path)
    except sqlite3.Error as exc:
        diagnostics.add(path, locator, f"cannot open database: {exc}")
        return None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        row = conn.execute(
            "SELECT value FROM ItemTable WHERE key = ?", (INLINE_HISTORY_KEY,)
        ).fetchone()
    except sqlite3.Error as exc:
        diagnostics.add(path, locator, f"database skipped: {exc}")
        return None
    finally:
        conn.close()
    if row is None:
        return []
    value = row[0]
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    try:
        data = orjson.loads(value) if isinstance(value, str) else None
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, list):
        diagnostics.add(path, locator, "value is not a JSON array; skipped")
        return None
    return data


def _inline_prompt(entry: object) -> str:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict):
        for key in ("text", "value", "message", "prompt"):
            if isinstance(entry.get(key), str):
                return str(entry[key])
    return ""


def parse_inline_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    """One user/prompt per inline-chat prompt; timestamps are the db's mtime (none stored)."""
    try:
        regular = ref.path.is_file()
    except OSError:
        regular = False
    if not regular:
        diagnostics.add(ref.path, "", "not a regular file; skipped")
        return
    entries = read_inline_history(ref.path, diagnostics)
    for i, entry in enumerate(entries or []):
        text = _inline_prompt(entry)
        if not text.strip():
            continue
        cursor.units += 1
        yield Record(
            agent=ref.agent,
            store=ref.store,
            source_path=str(ref.path),
            locator=f"row:ItemTable/{INLINE_HISTORY_KEY}/{i}",
            session_id=INLINE_HISTORY_KEY,
            role="user",
            kind="prompt",
            text=text,
            timestamp=ref.mtime or None,
            host=ref.host,
            extra={"timestamp_source": "mtime"},
        )
