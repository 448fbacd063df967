"""Codex conversation titles, from stores that hold no messages.

- ``session_index.jsonl``: ``{id, thread_name, updated_at}`` per line; the
  last name written for an id wins.
- ``state_*.sqlite``: ``threads(id, rollout_path, title, cwd, git_branch,
  model, ...)``; only ``id`` and ``title`` are read.

These parsers yield no records: they fill ``cursor.titles`` (which the
index keeps whatever store a title came from). For them a *unit* is a
title found, so ``audit`` compares titles with titles. A title Codex took
from a first message an IDE wrapped (``# Context from my IDE setup:`` ...
``## My request for Codex:``) becomes the request after the wrapper; one
holding only the wrapper is no title (the first prompt stands in).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.parsers.codex._items import split_ide_context
from agentdex.readers import Diagnostics, JsonlReader, connect_readonly
from agentdex.records import Record


def _title(text: str) -> str:
    """The title as a person would write it: an IDE wrapper's request, on one line."""
    wrapped = split_ide_context(text)
    return " ".join((text if wrapped is None else wrapped[1]).split())


def parse_session_index(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    reader = JsonlReader(ref.path, diagnostics)
    named: set[str] = set()
    for line in reader:
        entry = line.value
        if not isinstance(entry, dict):
            continue
        sid, name = entry.get("id"), entry.get("thread_name")
        if isinstance(sid, str) and isinstance(name, str) and name.strip():
            named.add(sid)
            if _title(name):
                cursor.titles[sid] = _title(name)
            else:  # the last name holds only an IDE's wrapper: no title
                cursor.titles.pop(sid, None)
    cursor.units += len(named)
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
                cursor.units += 1
                if _title(title):
                    cursor.titles[sid] = _title(title)
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
