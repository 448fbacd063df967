"""``data.sqlite3`` of Kiro CLI and of the Amazon Q Developer CLI (``kiro-cli.sqlite.v1``).

Tables read: ``conversations(key TEXT PRIMARY KEY, value TEXT)`` (Amazon Q, Kiro 1.x: the
key is the folder the chat ran in, the value its last conversation) and
``conversations_v2(key, conversation_id, value, created_at ms, updated_at ms)`` (Kiro 2.x:
several conversations per folder; the same id may sit under several keys, the newest row
is the conversation). Every query names these tables: ``auth_kv`` (credentials),
``state`` and ``history`` in the same file are never read.

One conversation id is read once: a ``conversations`` row whose id ``conversations_v2``
also holds is read there; a conversation Kiro resumed into its other engine, so that
``~/.kiro/sessions/cli/<id>.jsonl`` exists, is read from that file (as the public readers
that know both stores do); an Amazon Q conversation the ``kiro-cli`` database beside it
holds is read there.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.kiro_cli._state import StateReader, cwd_of, entry_parts
from agentdex.readers import Diagnostics, connect_readonly
from agentdex.records import Record, parse_timestamp

#: The three default data folders (Linux, macOS, Windows): two levels below the home.
_DATA_TAILS = (
    (".local", "share"),
    ("Library", "Application Support"),
    ("AppData", "Local"),
)


def sessions_dir(db: Path) -> Path | None:
    """``<home>/.kiro/sessions/cli`` for a database in a default data folder, else None."""
    folder = db.parent
    if tuple(folder.parent.parts[-2:]) in _DATA_TAILS:
        return folder.parents[2] / ".kiro" / "sessions" / "cli"
    return None


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {str(name) for (name,) in rows}


def _loads(value: object) -> Any:
    if not isinstance(value, str | bytes):
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


def conversation_rows(path: Path) -> Iterator[tuple[str, str, str, Any, Any, Any]]:
    """(table, key, conversation id, state, created, updated) per conversation, read once.

    ``state`` is the decoded JSON (None when it is not JSON); shadowed conversations
    (see the module) are left out.
    """
    conn = connect_readonly(path)
    try:
        tables = _tables(conn)
        seen: set[str] = set()
        rows: list[tuple[str, str, str, Any, Any, Any]] = []
        if "conversations_v2" in tables:
            query = (
                "SELECT key, conversation_id, value, created_at, updated_at FROM conversations_v2 "
                "ORDER BY conversation_id, updated_at DESC, created_at DESC, key DESC"
            )
            for key, cid, value, created, updated in conn.execute(query):
                if cid in seen or not cid:
                    continue
                seen.add(str(cid))
                rows.append(("conversations_v2", str(key), str(cid), value, created, updated))
        if "conversations" in tables:
            for key, value in conn.execute("SELECT key, value FROM conversations ORDER BY key"):
                state = _loads(value)
                cid = state.get("conversation_id") if isinstance(state, dict) else None
                cid = str(cid) if cid else f"key:{key}"
                if cid in seen:
                    continue
                seen.add(cid)
                rows.append(("conversations", str(key), cid, state, None, None))
    finally:
        conn.close()
    shadow = _shadowing(path)
    for table, key, cid, value, created, updated in rows:
        if shadow(cid):
            continue
        state = value if table == "conversations" else _loads(value)
        yield table, key, cid, state, created, updated


def _shadowing(path: Path) -> Any:
    """A predicate: is this conversation read from another store (see the module)?"""
    cli = sessions_dir(path)
    kiro_ids: set[str] = set()
    if path.parent.name == "amazon-q":
        beside = path.parent.parent / "kiro-cli" / "data.sqlite3"
        if beside.is_file():
            try:
                kiro_ids = {cid for _, _, cid, *_ in conversation_rows(beside)}
            except sqlite3.Error:
                kiro_ids = set()

    def shadowed(cid: str) -> bool:
        if cid in kiro_ids:
            return True
        return cli is not None and (cli / f"{cid}.jsonl").is_file()

    return shadowed


def parse_db(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Every conversation of the database, each in its history's order."""
    try:
        rows = list(conversation_rows(Path(ref.path)))
    except sqlite3.Error as exc:
        diag.add(ref.path, "", f"not a readable Kiro CLI database: {exc}")
        return
    if not rows:
        return
    mtime = _mtime(ref.path)
    for table, key, cid, state, created, updated in rows:
        where = f"row:{table}/{cid}"
        if not isinstance(state, dict):
            diag.add(ref.path, where, "conversation value is not a JSON object; skipped")
            continue
        fallback = parse_timestamp(created) or _first_time(state) or parse_timestamp(updated)
        reader = StateReader(ref, diag, where, cid, fallback or mtime)
        yield from reader.records(state, key or None)
        cursor.units += reader.units


def _first_time(state: dict[str, Any]) -> float | None:
    """The first user time of a conversation (Amazon Q rows carry no row times)."""
    for entry in state.get("history") or []:
        parts = entry_parts(entry)
        if parts is not None:
            stamp = parse_timestamp(parts[0].get("timestamp"))
            if stamp is not None:
                return stamp
    return None


def _mtime(path: str | os.PathLike[str]) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


__all__ = ["conversation_rows", "cwd_of", "parse_db", "sessions_dir"]
