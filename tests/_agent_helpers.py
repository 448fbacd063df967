"""Helpers for the per-agent parser tests: run one parser over one file, build SQLite stores."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentdex.parsers._registry import get_parser
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Record


def parse(
    parser_id: str,
    path: Path,
    *,
    root: Path | None = None,
    cursor: ParseCursor | None = None,
    agent: str = "test-agent",
    store: str = "test-agent.store",
) -> tuple[list[Record], ParseCursor, Diagnostics]:
    """Run ``parser_id`` over ``path``; returns records, the cursor and diagnostics."""
    spec = get_parser(parser_id)
    cursor = cursor if cursor is not None else ParseCursor()
    diagnostics = Diagnostics()
    ref = SourceRef(path, agent, store, None, 0.0, root if root is not None else path.parent)
    return list(spec.parse(ref, cursor, diagnostics)), cursor, diagnostics


def count_raw(parser_id: str, path: Path) -> int:
    fn = get_parser(parser_id).count_raw
    assert fn is not None, f"{parser_id} has no count_raw"
    return fn(path)


def build_db(path: Path, sql: str, *, wal: bool = False) -> Path:
    """Execute ``sql`` into a new SQLite file at ``path`` (WAL mode when asked)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(sql)
    conn.commit()
    conn.close()
    return path


class HeldWriter:
    """A writer connection in WAL mode that keeps its writes out of the main file.

    ``wal_autocheckpoint=0`` and an open connection mean the rows live only
    in ``-wal`` until :meth:`close`: what a running agent leaves on disk.
    """

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA wal_autocheckpoint=0")

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> None:
        self.conn.execute(sql, params)
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


def traced_statements(monkeypatch: object) -> list[str]:
    """Record every SQL statement agentdex runs through ``connect_readonly``."""
    import agentdex.readers as readers

    statements: list[str] = []
    original = readers.connect_readonly

    def _traced(path: object) -> sqlite3.Connection:
        conn = original(path)  # type: ignore[arg-type]
        conn.set_trace_callback(statements.append)
        return conn

    for module in _modules_using_connect():
        monkeypatch.setattr(module, "connect_readonly", _traced)  # type: ignore[attr-defined]
    return statements


def _modules_using_connect() -> list[object]:
    import importlib

    names = [
        "agentdex.parsers.cursor",
        "agentdex.parsers.cursor._counts",
        "agentdex.parsers.opencode",
        "agentdex.parsers.claude_store",
        "agentdex.parsers.codex_titles",
        "agentdex.parsers.kiro_cli._sqlite",
        "agentdex.parsers.kiro_cli._counts",
        "agentdex.parsers._agent_common",
        "agentdex.parsers.warp",
    ]
    return [importlib.import_module(n) for n in names]
