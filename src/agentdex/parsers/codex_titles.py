"""Codex conversation titles, from stores that hold no messages.

- ``session_index.jsonl``: ``{id, thread_name, updated_at}`` per line; the
  last name written for an id wins.
- ``state_*.sqlite``: ``threads(id, rollout_path, title, cwd, git_branch,
  model, ...)``; only ``id`` and ``title`` are read.

These parsers yield no records: they fill ``cursor.titles`` (which the
index keeps whatever store a title came from). For them a *unit* is a
title found, so ``audit`` compares titles with titles.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, JsonlReader, connect_readonly
from agentdex.records import Record


def parse_session_index(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    reader = JsonlReader(ref.path, diagnostics)
    for line in reader:
        entry = line.value
        if not isinstance(entry, dict):
            continue
        sid, name = entry.get("id"), entry.get("thread_name")
        if isinstance(sid, str) and isinstance(name, str) and name.strip():
            cursor.titles[sid] = name.strip()
    cursor.units += len(cursor.titles)
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line
    yield from ()


def count_session_index(path: Path) -> int:
    ids: set[str] = set()
    for entry in raw_objects(path):
        if isinstance(entry, dict) and str(entry.get("thread_name") or "").strip():
            ids.add(str(entry.get("id")))
    return len(ids)


def parse_state_db(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    try:
        conn = connect_readonly(ref.path)
    except sqlite3.Error as exc:
        diagnostics.add(ref.path, "", f"cannot open SQLite store: {exc}")
        return
    try:
        rows = conn.execute(
            "SELECT id, title FROM threads WHERE title IS NOT NULL AND trim(title) <> ''"
        )
        for sid, title in rows:
            if isinstance(sid, str) and isinstance(title, str):
                cursor.titles[sid] = title.strip()
                cursor.units += 1
    except sqlite3.DatabaseError as exc:
        diagnostics.add(ref.path, "", f"no readable threads table: {exc}")
    finally:
        conn.close()
    yield from ()


def count_state_db(path: Path) -> int:
    conn = connect_readonly(path)
    try:
        return int(
            conn.execute(
                "SELECT count(DISTINCT id) FROM threads WHERE length(trim(coalesce(title,''))) > 0"
            ).fetchone()[0]
        )
    except sqlite3.DatabaseError:
        return 0
    finally:
        conn.close()


PARSERS = (
    ParserSpec("codex.session_index_jsonl.v1", parse_session_index, count_raw=count_session_index),
    ParserSpec("codex.state_sqlite.v1", parse_state_db, count_raw=count_state_db),
)
