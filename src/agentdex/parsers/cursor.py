"""Cursor IDE ``state.vscdb`` (global and per-workspace), every era.

Only these keys are ever read — never ``SELECT *``, never ``cursorAuth/*``:

- ``cursorDiskKV`` ``composerData:<composerId>`` (current and inline eras)
  and ``bubbleId:<composerId>:<bubbleId>`` (current era: one row per
  message, ordered by the composer's ``fullConversationHeadersOnly``);
- ``ItemTable`` ``composer.composerData`` (composer -> workspace mapping,
  and the oldest composers, inline), ``workbench.panel.aichat.view.aichat.chatdata``
  (legacy chat tabs) and ``aiService.prompts`` (legacy prompt log).

Databases reach gigabytes, so keys are listed first (key ranges use the
``UNIQUE`` index) and values fetched per composer, bubbles in batches of
:data:`BATCH`: memory holds one composer and one batch, never the file.
The project of a composer comes from the workspace DB that lists it (the
sibling ``workspace.json`` names the folder); models from ``modelConfig``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers._agent_common import (
    clip,
    dict_of,
    file_mtime,
    make_record,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, connect_readonly, read_json
from agentdex.records import Record, parse_timestamp
from agentdex.uris import uri_to_path

#: Bubble values fetched per query.
BATCH = 256
COMPOSER_PREFIX = "composerData:"
BUBBLE_PREFIX = "bubbleId:"
CHATDATA_KEY = "workbench.panel.aichat.view.aichat.chatdata"
PROMPTS_KEY = "aiService.prompts"
COMPOSERS_KEY = "composer.composerData"


def _range(prefix: str) -> tuple[str, str]:
    """``key >= ? AND key < ?`` bounds equal to ``LIKE 'prefix%'`` (case-sensitive, indexed)."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _loads(value: object) -> Any:
    if value is None:
        return None
    if isinstance(value, memoryview):
        value = bytes(value)
    try:
        return orjson.loads(value)  # type: ignore[arg-type]
    except (orjson.JSONDecodeError, TypeError):
        return None


def _item(conn: sqlite3.Connection, key: str) -> Any:
    row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (key,)).fetchone()
    return _loads(row[0]) if row else None


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def workspace_folder(db_path: Path, diagnostics: Diagnostics) -> str | None:
    """The folder of a ``workspaceStorage/<hash>/state.vscdb`` (from ``workspace.json``)."""
    meta = db_path.parent / "workspace.json"
    if db_path.parent.parent.name != "workspaceStorage" or not meta.is_file():
        return None
    data = read_json(meta, diagnostics)
    if not isinstance(data, dict):
        return None
    return uri_to_path(data.get("folder") or data.get("workspace"))


def composer_projects(user_dir: Path, diagnostics: Diagnostics) -> dict[str, str]:
    """composerId -> workspace folder, from every workspace DB's ``composer.composerData``."""
    mapping: dict[str, str] = {}
    storage = user_dir / "workspaceStorage"
    if not storage.is_dir():
        return mapping
    for db in sorted(storage.glob("*/state.vscdb")):
        folder = workspace_folder(db, diagnostics)
        if folder is None:
            continue
        try:
            conn = connect_readonly(db)
        except sqlite3.Error:
            continue
        try:
            data = _item(conn, COMPOSERS_KEY) if "ItemTable" in _tables(conn) else None
        except sqlite3.DatabaseError as exc:
            diagnostics.add(db, "", f"SQLite error: {exc}")
            data = None
        finally:
            conn.close()
        for entry in (data or {}).get("allComposers", []) if isinstance(data, dict) else []:
            if isinstance(entry, dict) and isinstance(entry.get("composerId"), str):
                mapping.setdefault(entry["composerId"], folder)
    return mapping


def _bubble_records(
    ref: SourceRef,
    loc: str,
    sid: str,
    bubble: dict[str, Any],
    *,
    cwd: str | None,
    model: str | None,
    fallback_ts: float | None,
) -> list[Record]:
    btype = bubble.get("type")
    ts = parse_timestamp(bubble.get("createdAt") or bubble.get("timestamp")) or fallback_ts
    text = str_of(bubble.get("text"))
    info = dict_of(bubble.get("modelInfo"))
    model = info.get("modelName") if isinstance(info.get("modelName"), str) else model
    out: list[Record] = []
    if btype in (1, "user"):
        if text.strip():
            out.append(make_record(ref, loc, sid, "user", "prompt", text, timestamp=ts, cwd=cwd))
        return out
    thinking = bubble.get("thinking")
    thought = thinking.get("text") if isinstance(thinking, dict) else None
    if isinstance(thought, str) and thought.strip():
        out.append(
            make_record(
                ref, loc, sid, "assistant", "reasoning", thought, timestamp=ts, cwd=cwd, model=model
            )
        )
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict):
        args = tool.get("rawArgs") or tool.get("params")
        status = tool.get("status")
        out.append(
            make_record(
                ref,
                loc,
                sid,
                "assistant",
                "tool_call",
                tool_call_text(tool.get("name"), args),
                timestamp=ts,
                cwd=cwd,
                model=model,
                extra={"call_id": tool.get("toolCallId"), "status": status},
            )
        )
        result = tool.get("result")
        if isinstance(result, str) and result.strip():
            out.append(
                make_record(
                    ref,
                    loc,
                    sid,
                    "tool",
                    "tool_result",
                    clip(result),
                    timestamp=ts,
                    cwd=cwd,
                    extra={
                        "call_id": tool.get("toolCallId"),
                        "ok": status not in ("error", "failed"),
                    },
                )
            )
    if text.strip():
        out.append(
            make_record(
                ref, loc, sid, "assistant", "message", text, timestamp=ts, cwd=cwd, model=model
            )
        )
    return out


def _fetch_bubbles(conn: sqlite3.Connection, cid: str, ids: list[str]) -> Iterator[tuple[str, Any]]:
    """``(bubbleId, value)`` for ``ids`` in header order, batch by batch (missing ones skipped)."""
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        keys = [f"{BUBBLE_PREFIX}{cid}:{bid}" for bid in chunk]
        marks = ",".join("?" * len(keys))
        found = {
            key: value
            for key, value in conn.execute(
                f"SELECT key, value FROM cursorDiskKV WHERE key IN ({marks})", keys
            )
        }
        for bid, key in zip(chunk, keys, strict=True):
            if key in found:
                yield bid, _loads(found[key])


def _unlisted_bubbles(conn: sqlite3.Connection, cid: str) -> Iterator[tuple[str, Any]]:
    """Bubbles of a composer with no header list: keys first, then values in batches."""
    low, high = _range(f"{BUBBLE_PREFIX}{cid}:")
    keys = [
        k
        for (k,) in conn.execute(
            "SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ?", (low, high)
        )
    ]
    ids = [k[len(low) :] for k in keys]
    pairs = [(bid, v) for bid, v in _fetch_bubbles(conn, cid, ids) if isinstance(v, dict)]
    pairs.sort(key=lambda p: parse_timestamp(p[1].get("createdAt")) or 0.0)
    yield from pairs


def _composer_records(
    ref: SourceRef,
    conn: sqlite3.Connection,
    data: dict[str, Any],
    cursor: ParseCursor,
    diagnostics: Diagnostics,
    cwd: str | None,
    *,
    disk: bool,
) -> Iterator[Record]:
    cid = data.get("composerId")
    if not isinstance(cid, str):
        return
    if isinstance(data.get("name"), str) and data["name"].strip():
        cursor.titles[cid] = data["name"]
    config = dict_of(data.get("modelConfig"))
    model = opt_str(config.get("modelName"))
    created = parse_timestamp(data.get("createdAt"))
    inline = data.get("conversation")
    headers = data.get("fullConversationHeadersOnly")
    bubbles: Iterable[tuple[str, Any]]
    if isinstance(inline, list) and inline:
        bubbles = (
            (str(b.get("bubbleId", i)) if isinstance(b, dict) else str(i), b)
            for i, b in enumerate(inline)
        )
    elif isinstance(headers, list) and headers and disk:
        ids = [
            h["bubbleId"]
            for h in headers
            if isinstance(h, dict) and isinstance(h.get("bubbleId"), str)
        ]
        bubbles = _fetch_bubbles(conn, cid, ids)
    elif disk:
        bubbles = _unlisted_bubbles(conn, cid)
    else:
        bubbles = ()
    for bid, bubble in bubbles:
        if not isinstance(bubble, dict):
            continue
        produced = _bubble_records(
            ref,
            f"key:{BUBBLE_PREFIX}{cid}:{bid}",
            cid,
            bubble,
            cwd=cwd,
            model=model,
            fallback_ts=created,
        )
        if produced:
            cursor.units += 1
            yield from produced


def _disk_composers(
    ref: SourceRef,
    conn: sqlite3.Connection,
    cursor: ParseCursor,
    diagnostics: Diagnostics,
    projects: dict[str, str],
    folder: str | None,
) -> Iterator[Record]:
    low, high = _range(COMPOSER_PREFIX)
    keys = [
        k
        for (k,) in conn.execute(
            "SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY key", (low, high)
        )
    ]
    for key in keys:
        row = conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()
        data = _loads(row[0]) if row else None
        if not isinstance(data, dict):
            if row is not None and row[0] is not None:
                diagnostics.add(ref.path, f"key:{key}", "composer value is not a JSON object")
            continue
        data.setdefault("composerId", key[len(COMPOSER_PREFIX) :])
        cwd = projects.get(data["composerId"], folder)
        yield from _composer_records(ref, conn, data, cursor, diagnostics, cwd, disk=True)


def _legacy_items(
    ref: SourceRef,
    conn: sqlite3.Connection,
    cursor: ParseCursor,
    diagnostics: Diagnostics,
    folder: str | None,
) -> Iterator[Record]:
    composers = _item(conn, COMPOSERS_KEY)
    for entry in composers.get("allComposers", []) if isinstance(composers, dict) else []:
        if isinstance(entry, dict) and isinstance(entry.get("conversation"), list):
            yield from _composer_records(ref, conn, entry, cursor, diagnostics, folder, disk=False)
    chat = _item(conn, CHATDATA_KEY)
    tabs = chat.get("tabs") if isinstance(chat, dict) else None
    for t_index, tab in enumerate(tabs if isinstance(tabs, list) else []):
        if not isinstance(tab, dict):
            continue
        sid = str(tab.get("tabId") or f"{ref.path}#tab{t_index}")
        if isinstance(tab.get("chatTitle"), str) and tab["chatTitle"]:
            cursor.titles[sid] = tab["chatTitle"]
        ts = parse_timestamp(tab.get("lastSendTime"))
        for b_index, bubble in enumerate(tab.get("bubbles") or []):
            if not isinstance(bubble, dict):
                continue
            text = str_of(bubble.get("text"))
            if not text.strip():
                text = str_of(bubble.get("rawText"))
            if not text.strip():
                continue
            loc = f"key:{CHATDATA_KEY}/tabs/{t_index}/bubbles/{b_index}"
            is_user = bubble.get("type") == "user"
            cursor.units += 1
            yield make_record(
                ref,
                loc,
                sid,
                "user" if is_user else "assistant",
                "prompt" if is_user else "message",
                text,
                timestamp=ts,
                cwd=folder,
                model=opt_str(bubble.get("modelType")),
            )
    prompts = _item(conn, PROMPTS_KEY)
    for index, item in enumerate(prompts if isinstance(prompts, list) else []):
        text = str_of(item.get("text") if isinstance(item, dict) else item)
        if isinstance(text, str) and text.strip():
            cursor.units += 1
            yield make_record(
                ref,
                f"key:{PROMPTS_KEY}/{index}",
                f"cursor-prompts:{folder or ref.path}",
                "user",
                "prompt",
                text,
                cwd=folder,
            )


def parse_state_vscdb(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    try:
        conn = connect_readonly(path)
        tables = _tables(conn)
    except sqlite3.Error as exc:
        diagnostics.add(path, "", f"cannot open SQLite store: {exc}")
        return
    mtime = file_mtime(path)
    try:
        folder = workspace_folder(path, diagnostics)
        streams: list[Iterator[Record]] = []
        if "cursorDiskKV" in tables:
            is_global = path.parent.name == "globalStorage"
            projects = composer_projects(path.parent.parent, diagnostics) if is_global else {}
            streams.append(_disk_composers(ref, conn, cursor, diagnostics, projects, folder))
        if "ItemTable" in tables:
            streams.append(_legacy_items(ref, conn, cursor, diagnostics, folder))
        for stream in streams:
            for record in stream:
                if record.timestamp is None:  # legacy eras kept no times: mtime, as a last resort
                    record.timestamp = mtime
                yield record
    except sqlite3.DatabaseError as exc:
        diagnostics.add(path, "", f"SQLite error: {exc}")
    finally:
        conn.close()


def _has_content(bubble: object) -> bool:
    if not isinstance(bubble, dict):
        return False
    text = bubble.get("text")
    if isinstance(text, str) and text.strip():
        return True
    if bubble.get("type") in (1, "user"):
        return False
    thinking = bubble.get("thinking")
    return isinstance(bubble.get("toolFormerData"), dict) or (
        isinstance(thinking, dict) and bool(str(thinking.get("text") or "").strip())
    )


def count_raw(path: Path) -> int:
    """Every bubble row / inline bubble / chat bubble / legacy prompt with content.

    Independent of the parser's ordering logic: bubble rows are counted
    whether or not a header lists them, so orphans show up in ``audit``.
    """
    import json

    conn = connect_readonly(path)
    total = 0
    try:
        tables = _tables(conn)
        if "cursorDiskKV" in tables:
            for prefix in (BUBBLE_PREFIX, COMPOSER_PREFIX):
                low, high = _range(prefix)
                for (value,) in conn.execute(
                    "SELECT value FROM cursorDiskKV WHERE key >= ? AND key < ?", (low, high)
                ):
                    try:
                        data = json.loads(value) if value is not None else None
                    except (ValueError, TypeError):
                        continue
                    if prefix == BUBBLE_PREFIX:
                        total += _has_content(data)
                    elif isinstance(data, dict) and isinstance(data.get("conversation"), list):
                        total += sum(_has_content(b) for b in data["conversation"])
        if "ItemTable" in tables:
            for key in (COMPOSERS_KEY, CHATDATA_KEY, PROMPTS_KEY):
                row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (key,)).fetchone()
                try:
                    data = json.loads(row[0]) if row and row[0] is not None else None
                except (ValueError, TypeError):
                    continue
                if key == COMPOSERS_KEY and isinstance(data, dict):
                    for entry in data.get("allComposers") or []:
                        conv = entry.get("conversation") if isinstance(entry, dict) else None
                        total += sum(_has_content(b) for b in conv or [])
                elif key == CHATDATA_KEY and isinstance(data, dict):
                    for tab in data.get("tabs") or []:
                        for b in tab.get("bubbles") or [] if isinstance(tab, dict) else []:
                            total += isinstance(b, dict) and bool(
                                str(b.get("text") or b.get("rawText") or "").strip()
                            )
                elif key == PROMPTS_KEY and isinstance(data, list):
                    total += sum(
                        1
                        for p in data
                        if str((p.get("text") if isinstance(p, dict) else p) or "").strip()
                    )
    finally:
        conn.close()
    return total


PARSERS = (ParserSpec("cursor.state_vscdb.v1", parse_state_vscdb, count_raw=count_raw),)
