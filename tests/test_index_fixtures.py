"""Test-only store format for the index/search tests (no tests here).

A real JSONL format of our own, read by a real resumable parser registered
in the parser registry and found by real discovery through a catalogue row,
so refresh is exercised end to end on real files. One line per record::

    {"session": "s1", "role": "user", "kind": "prompt", "text": "...",
     "ts": 1767323045, "cwd": "/p", "model": "m", "branch": "main"}

A line ``{"session": "s1", "title": "..."}`` names a session.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.catalogue import StoreRow
from agentdex.parsers import _registry
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, JsonlReader
from agentdex.records import Record

PARSER_ID = "test.records_jsonl.v1"
ROW = StoreRow(
    agent="claude-code",
    store="claude-code.testlog",
    holds="test records",
    format="jsonl",
    root="claude",
    patterns=("testlog/*.jsonl",),
    parser=PARSER_ID,
)
ROWS = (ROW,)


def _parse(source: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    reader = JsonlReader(
        source.path, diagnostics, start_offset=cursor.offset, start_line=cursor.line
    )
    seen = cursor.state.get("lines", 0)
    for line in reader:
        value = line.value
        if not isinstance(value, dict):
            continue
        if "title" in value:
            cursor.titles[str(value.get("session"))] = str(value["title"])
            continue
        if line.complete:
            seen += 1
        cursor.units += 1
        yield Record(
            agent=source.agent,
            store=source.store,
            source_path=str(source.path),
            locator=f"line:{line.lineno}",
            session_id=str(value.get("session", "")),
            role=value.get("role", "user"),
            kind=value.get("kind", "message"),
            text=str(value.get("text", "")),
            timestamp=value.get("ts"),
            model=value.get("model"),
            cwd=value.get("cwd"),
            branch=value.get("branch"),
            host=source.host,
            offset=line.offset,
        )
    cursor.resume_offset = reader.resume_offset
    cursor.resume_line = reader.resume_line
    cursor.state = {"lines": seen}


SPEC = ParserSpec(id=PARSER_ID, parse=_parse, resumable=True)


def register() -> None:
    _registry._LOADED[PARSER_ID] = SPEC
    _registry.PARSER_MODULES.setdefault(PARSER_ID, __name__)


PARSERS = (SPEC,)


def store_dir(home: Path) -> Path:
    path = home / ".claude" / "testlog"
    path.mkdir(parents=True, exist_ok=True)
    return path


def line(**fields: Any) -> bytes:
    return orjson.dumps(fields) + b"\n"


def write_file(path: Path, records: list[dict[str, Any]], mode: str = "wb") -> None:
    with open(path, mode) as handle:
        for rec in records:
            handle.write(line(**rec))


def touch_later(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
