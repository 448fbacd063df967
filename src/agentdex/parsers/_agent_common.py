"""Small helpers shared by the parsers of the agents beyond the first four.

Building a :class:`Record` from a :class:`SourceRef`, flattening content
blocks to text, and rendering tool calls the same way everywhere, so every
parser's output looks alike in search results.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics, connect_readonly
from agentdex.records import Kind, Record, Role, Usage

#: Tool inputs/outputs longer than this are cut (the source keeps the rest).
MAX_TOOL_TEXT = 32 * 1024


def make_record(
    ref: SourceRef,
    locator: str,
    session_id: str,
    role: Role,
    kind: Kind,
    text: str,
    **fields: Any,
) -> Record:
    """A record for ``ref`` (agent, store, path and host filled in)."""
    return Record(
        agent=ref.agent,
        store=ref.store,
        source_path=str(ref.path),
        locator=locator,
        session_id=session_id,
        role=role,
        kind=kind,
        text=text,
        host=ref.host,
        **fields,
    )


def typed_prompts(
    ref: SourceRef, cursor: ParseCursor, items: list[Any], pointer: str, session_id: str
) -> Iterator[Record]:
    """One prompt per non-blank string of a prompt-history list (no timestamps: file mtime).

    ``pointer`` is the JSON pointer of the list (``""`` for a top-level array).
    """
    mtime = file_mtime(ref.path)
    for index, item in enumerate(items):
        if isinstance(item, str) and item.strip():
            cursor.units += 1
            yield make_record(
                ref, f"json:{pointer}/{index}", session_id, "user", "prompt", item, timestamp=mtime
            )


def number_parts(records: list[Record]) -> list[Record]:
    """One unit's records share its locator; the further ones get ``#1``, ``#2``...

    So a search hit on any of them reopens exactly that record in ``show``.
    """
    for n, record in enumerate(records[1:], 1):
        record.locator = f"{record.locator}#{n}"
    return records


def clip(text: str, limit: int = MAX_TOOL_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} chars cut]"


def as_text(value: Any) -> str:
    """Text of a content value: a string, or the ``text`` of a list of blocks."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in (None, "text", "output_text"):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        text = value.get("text")
        return text if isinstance(text, str) else ""
    return ""


def compact_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def json_or_text(value: object) -> object:
    """A tool call's arguments: a JSON string decoded, anything else (or bad JSON) as is."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def tool_call_text(name: object, arguments: object) -> str:
    """``name {json args}``, clipped: one searchable line per call."""
    label = name if isinstance(name, str) and name else "tool"
    if arguments in (None, "", {}, []):
        return label
    return clip(f"{label} {compact_json(arguments)}")


_TAG_RE = re.compile(r"<(?P<tag>[A-Za-z_][\w-]*)>(?P<body>.*?)</(?P=tag)>", re.DOTALL)


def strip_tags(text: str, drop: tuple[str, ...], unwrap: tuple[str, ...]) -> str:
    """Remove ``drop`` elements entirely and replace ``unwrap`` elements by their body."""

    def _sub(match: re.Match[str]) -> str:
        tag = match.group("tag")
        if tag in drop:
            return ""
        if tag in unwrap:
            return match.group("body")
        return match.group(0)

    return _TAG_RE.sub(_sub, text).strip()


def file_mtime(path: str | os.PathLike[str]) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def str_of(value: object) -> str:
    """``value`` when it is a string, else ``""``."""
    return value if isinstance(value, str) else ""


def opt_str(value: object) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def dict_of(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}``."""
    return value if isinstance(value, dict) else {}


def session_total_usage(
    ref: SourceRef,
    session_id: str,
    input_tokens: object,
    output_tokens: object,
    *,
    timestamp: float | None,
    cwd: str | None,
) -> Usage:
    """The usage entry of an agent that keeps only a session's running token totals (Goose,
    Crush): one per session, at ``row:sessions/<id>``, with no cache split."""
    return Usage(
        agent=ref.agent,
        store=ref.store,
        source_path=os.fspath(ref.path),
        locator=f"row:sessions/{session_id}",
        session_id=session_id,
        call_id=f"{session_id}:session-total",
        input_tokens=input_tokens if isinstance(input_tokens, int) else 0,
        output_tokens=output_tokens if isinstance(output_tokens, int) else 0,
        timestamp=timestamp,
        cwd=cwd,
        host=ref.host,
    )


def open_sqlite_store(
    ref: SourceRef, diagnostics: Diagnostics, label: str, tables: set[str]
) -> sqlite3.Connection | None:
    """``ref``'s database opened read-only (database and WAL together), or None with a
    diagnostic when it cannot be opened or lacks one of ``tables``."""
    try:
        conn = connect_readonly(ref.path)
        found = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except (sqlite3.Error, OSError) as exc:
        diagnostics.add(ref.path, "", f"not a readable {label} database: {exc}")
        return None
    if not tables <= found:
        conn.close()
        diagnostics.add(ref.path, "", f"no {'/'.join(sorted(tables))} tables; skipped")
        return None
    return conn


def table_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table``."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
