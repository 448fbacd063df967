"""Zed's agent panel threads: ``<data dir>/threads/threads.db`` (``zed.threads_sqlite.v1``).

zed-industries/zed @ 0642ec7e ``crates/agent/src/db.rs``: one row per thread
in ``threads(id, summary, updated_at RFC 3339, data_type 'json'|'zstd', data,
parent_id?, folder_paths?, folder_paths_order?, created_at?)``; new writes
are zstd-compressed JSON (the ``zstandard`` package decodes them, imported
only here). Two document shapes:

* ``version`` ``0.3.0`` (``DbThread``): ``messages`` of serde's externally
  tagged enum: ``{"User": {"id", "content": [{"Text": s} | {"Mention":
  {"uri", "content"}} | {"Image": ...}]}}``, ``{"Agent": {"content":
  [{"Text": s} | {"Thinking": {"text"}} | {"RedactedThinking": ...} |
  {"ToolUse": {"id", "name", "input"}}], "tool_results": {id: {"content",
  "is_error", "output"}}}}`` and ``"Resume"`` (continuing after the tool-use
  limit).
* older threads (``agent 1``, ``crates/agent/src/legacy_thread.rs``, which Zed
  upgrades when it opens them): ``messages`` of ``{"role", "segments":
  [{"type": "text"|"thinking", "text"}], "tool_uses", "tool_results",
  "context", "is_hidden"}``.

Records (``locator`` ``row:<thread id>/messages/<n>[/…]``): user ``Text`` ->
``user``/``prompt`` (``user``/``message`` in a subagent's thread,
``parent_id`` set), ``Mention`` content (a file or symbol the person
attached) and the legacy ``context`` -> ``system``/``message``; agent
``Text`` -> one reply per message, ``Thinking`` -> ``reasoning``, ``ToolUse``
-> ``tool_call``, tool results -> ``tool_result``. Zed keeps no time per
message: every record has the thread's ``updated_at`` (the store row says
so). Title: ``summary``. cwd: the first of ``folder_paths`` (newline
separated). Usage: ``request_token_usage`` (per request, keyed by the user
message id) when present. Units: messages that give a record.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.nesting import cut_deep, may_be_deeper
from agentdex.parsers._agent_common import (
    clip,
    compact_json,
    dict_of,
    make_record,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import MAX_JSON_BYTES, Diagnostics, connect_readonly
from agentdex.records import Kind, Record, Role, Usage, parse_timestamp

Item = tuple[Role, Kind, str, str, dict[str, Any]]  # role, kind, text, pointer, extra


def _columns(conn: sqlite3.Connection) -> set[str]:
    return {row[1] for row in conn.execute("PRAGMA table_info(threads)")}


def thread_rows(conn: sqlite3.Connection) -> Iterator[tuple[Any, ...]]:
    """(id, summary, updated_at, data_type, data, parent_id, folder_paths) per thread."""
    cols = _columns(conn)
    if not {"id", "summary", "updated_at", "data_type", "data"} <= cols:
        raise sqlite3.DatabaseError("no threads table of Zed's shape")
    parent = "parent_id" if "parent_id" in cols else "NULL"
    folders = "folder_paths" if "folder_paths" in cols else "NULL"
    yield from conn.execute(
        f"SELECT id, summary, updated_at, data_type, data, {parent}, {folders} FROM threads"
        " ORDER BY id"
    )


def decode(data_type: object, data: object) -> tuple[Any, str | None]:
    """The thread document, or (None, why it cannot be read)."""
    raw = data if isinstance(data, bytes) else str_of(data).encode()
    if data_type == "zstd":
        try:
            import zstandard
        except ImportError:  # pragma: no cover - a dependency; kept for broken installs
            return None, "zstd-compressed thread: the zstandard package is not installed"
        try:
            raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=MAX_JSON_BYTES)
        except zstandard.ZstdError as exc:
            return None, f"zstd data not readable: {exc}"
    elif data_type != "json":
        return None, f"unknown data_type {data_type!r}"
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None, "thread data is not valid JSON"
    if may_be_deeper(raw):
        cut_deep(value)
    return (value, None) if isinstance(value, dict) else (None, "thread data is not an object")


def _tool_results(results: object, at: str) -> list[Item]:
    items: list[Item] = []
    pairs: list[tuple[Any, Any]] = (
        list(results.items()) if isinstance(results, dict) else list(enumerate(_list(results)))
    )
    for key, raw in pairs:
        result = dict_of(raw)
        content = result.get("content")
        text = _flat_text(content) or (
            compact_json(result["output"]) if result.get("output") else ""
        )
        if text.strip():
            extra: dict[str, Any] = {"call_id": opt_str(result.get("tool_use_id")) or str(key)}
            if result.get("is_error"):
                extra["is_error"] = True
            items.append(("tool", "tool_result", clip(text), f"{at}/tool_results/{key}", extra))
    return items


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _flat_text(content: object) -> str:
    """Tool-result content: a string, ``{"Text": s}``, or a list of those."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return str_of(content.get("Text")) or str_of(content.get("text"))
    if isinstance(content, list):
        return "\n".join(t for t in map(_flat_text, content) if t)
    return ""


def _new_message(message: object, at: str, by_agent: bool) -> list[Item] | None:
    """Records of a 0.3.0 message; None when it is not one of Zed's message kinds."""
    if message == "Resume":
        return []
    if not isinstance(message, dict) or len(message) != 1:
        return None
    kind, body = next(iter(message.items()))
    body = dict_of(body)
    parts = _list(body.get("content"))
    if kind == "User":
        typed = "\n".join(str_of(p.get("Text")) for p in parts if isinstance(p, dict))
        attached = "\n".join(
            str_of(dict_of(p.get("Mention")).get("content")) for p in parts if isinstance(p, dict)
        )
        items: list[Item] = []
        if typed.strip():
            role_kind: tuple[Role, Kind] = ("user", "message") if by_agent else ("user", "prompt")
            items.append((*role_kind, typed.strip(), f"{at}/content", {}))
        if attached.strip():
            items.append(("system", "message", attached.strip(), f"{at}/mentions", {}))
        return items
    if kind == "Agent":
        items = []
        thoughts = [
            str_of(dict_of(p.get("Thinking")).get("text")) for p in parts if isinstance(p, dict)
        ]
        if thought := "\n".join(t for t in thoughts if t.strip()):
            items.append(("assistant", "reasoning", thought, f"{at}/thinking", {}))
        texts = [p["Text"] for p in parts if isinstance(p, dict) and isinstance(p.get("Text"), str)]
        if reply := "\n".join(t for t in texts if t.strip()):
            items.append(("assistant", "message", reply, f"{at}/content", {}))
        for n, part in enumerate(parts):
            use = dict_of(part.get("ToolUse")) if isinstance(part, dict) else {}
            if use:
                text = tool_call_text(use.get("name"), use.get("input") or use.get("raw_input"))
                items.append(
                    (
                        "assistant",
                        "tool_call",
                        text,
                        f"{at}/content/{n}",
                        {"call_id": use.get("id")},
                    )
                )
        return items + _tool_results(body.get("tool_results"), at)
    return None


def _legacy_message(message: dict[str, Any], at: str, by_agent: bool) -> list[Item]:
    role, segments = message.get("role"), _list(message.get("segments"))
    texts = [str_of(s.get("text")) for s in segments if dict_of(s).get("type") == "text"]
    text = "\n".join(t for t in texts if t.strip()).strip()
    items: list[Item] = []
    if role == "user":
        if text:
            hidden = message.get("is_hidden")
            kind: Kind = "message" if by_agent or hidden else "prompt"
            items.append(("user", kind, text, f"{at}/segments", {"hidden": True} if hidden else {}))
        if str_of(message.get("context")).strip():
            items.append(("system", "message", message["context"].strip(), f"{at}/context", {}))
    elif role == "assistant":
        thoughts = [str_of(s.get("text")) for s in segments if dict_of(s).get("type") == "thinking"]
        if thought := "\n".join(t for t in thoughts if t.strip()):
            items.append(("assistant", "reasoning", thought, f"{at}/thinking", {}))
        if text:
            items.append(("assistant", "message", text, f"{at}/segments", {}))
        for n, use in enumerate(_list(message.get("tool_uses"))):
            use = dict_of(use)
            text = tool_call_text(use.get("name"), use.get("input"))
            items.append(
                ("assistant", "tool_call", text, f"{at}/tool_uses/{n}", {"call_id": use.get("id")})
            )
    return items + _tool_results(message.get("tool_results"), at)


def thread_items(doc: dict[str, Any], by_agent: bool) -> Iterator[tuple[int, list[Item] | None]]:
    """(message index, its records or None when its kind is unknown) per message."""
    for n, message in enumerate(doc.get("messages") or []):
        at = f"/messages/{n}"
        if isinstance(message, dict) and "role" in message and len(message) > 1:
            yield n, _legacy_message(message, at, by_agent)
        else:
            yield n, _new_message(message, at, by_agent)


def _cwd(folder_paths: object) -> str | None:
    first = str_of(folder_paths).replace("\x00", "\n").split("\n")[0].strip()
    return first or None


def parse_threads(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Every thread of the database (read whole, read-only)."""
    cursor.units = 0
    try:
        conn = connect_readonly(ref.path)
    except sqlite3.Error as exc:
        diag.add(ref.path, "", f"cannot open SQLite store: {exc}")
        return
    try:
        rows = list(thread_rows(conn))
    except sqlite3.DatabaseError as exc:
        diag.add(ref.path, "", f"no readable threads table: {exc}")
        rows = []
    finally:
        conn.close()
    for tid, summary, updated, data_type, data, parent, folders in rows:
        thread = str(tid)
        doc, why = decode(data_type, data)
        if doc is None:
            diag.add(ref.path, f"row:{thread}", why or "unreadable thread")
            continue
        version = opt_str(doc.get("version"))
        if title := " ".join(str_of(summary).split()):
            cursor.titles[thread] = title
        stamp = parse_timestamp(updated) or parse_timestamp(doc.get("updated_at"))
        cwd, by_agent = _cwd(folders), bool(parent)
        for n, items in thread_items(doc, by_agent):
            if items is None:
                diag.unrecognised("message kind", _kind_name(doc["messages"][n]), version=version,
                                  path=ref.path, locator=f"row:{thread}/messages/{n}")  # fmt: skip
                continue
            if not items:
                continue
            cursor.units += 1
            for role, kind, text, pointer, extra in items:
                if by_agent:
                    extra = {**extra, "sidechain": True, "parent_thread": str(parent)}
                yield make_record(
                    ref, f"row:{thread}{pointer}", thread, role, kind, text,
                    timestamp=stamp, cwd=cwd,
                    extra={k: v for k, v in extra.items() if v is not None},
                )  # fmt: skip
        _usage(ref, cursor, diag, thread, doc, stamp, cwd)


def _kind_name(message: object) -> str:
    if isinstance(message, dict) and len(message) == 1:
        return str(next(iter(message)))
    return type(message).__name__


def _usage(
    ref: SourceRef, cursor: ParseCursor, diag: Diagnostics, thread: str,
    doc: dict[str, Any], stamp: float | None, cwd: str | None,
) -> None:  # fmt: skip
    """``request_token_usage``: one entry per request (the user message id it answered)."""
    model = dict_of(doc.get("model"))
    name = opt_str(model.get("model"))
    for key, raw in dict_of(doc.get("request_token_usage")).items():
        locator = f"row:{thread}/request_token_usage/{key}"
        counts = read_counts(
            raw,
            ["input_tokens", "output_tokens"],
            ["cache_creation_input_tokens", "cache_read_input_tokens"],
        )
        if isinstance(counts, str):
            cursor.skip_usage(diag, ref.path, locator, counts)
            continue
        cursor.add_usage(
            Usage(
                agent=ref.agent, store=ref.store, source_path=os.fspath(ref.path),
                locator=locator, session_id=thread, call_id=f"zed:{thread}:{key}",
                input_tokens=counts["input_tokens"],
                cache_read_tokens=counts["cache_read_input_tokens"],
                cache_write_tokens=counts["cache_creation_input_tokens"],
                output_tokens=counts["output_tokens"],
                timestamp=stamp, model=name, cwd=cwd, host=ref.host,
            ),
            diag,
        )  # fmt: skip


# ----------------------------------------------------------------------------- counters


def _docs(path: Path) -> Iterator[tuple[str, bool, dict[str, Any]]]:
    """(thread id, subagent?, document) per readable thread (plain sqlite3, own decode)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = list(conn.execute("SELECT * FROM threads"))
        names = [d[0] for d in conn.execute("SELECT * FROM threads LIMIT 0").description]
    except sqlite3.DatabaseError:
        return
    finally:
        conn.close()
    for row in rows:
        record = dict(zip(names, row, strict=True))
        data = record.get("data")
        if not isinstance(data, bytes | str):
            continue
        if record.get("data_type") == "zstd":
            import zstandard

            raw = data if isinstance(data, bytes) else data.encode()
            try:
                data = zstandard.ZstdDecompressor().decompress(raw, max_output_size=MAX_JSON_BYTES)
            except zstandard.ZstdError:
                continue
        try:
            doc = orjson.loads(data)
        except (orjson.JSONDecodeError, TypeError):
            continue
        if isinstance(doc, dict):
            yield str(record["id"]), bool(record.get("parent_id")), doc


def _message_shape(message: Any) -> tuple[str, Any]:
    if isinstance(message, dict) and "role" in message and len(message) > 1:
        return str(message.get("role")), message
    if isinstance(message, dict) and len(message) == 1:
        kind, body = next(iter(message.items()))
        return {"User": "user", "Agent": "assistant"}.get(kind, "?"), dict_of(body)
    return "?", {}


def _has_text(role: str, body: dict[str, Any]) -> tuple[bool, bool]:
    """(typed or reply text, anything indexed at all) of one message."""
    if "segments" in body:
        text = any(
            str_of(s.get("text")).strip()
            for s in _list(body.get("segments"))
            if isinstance(s, dict) and s.get("type") == "text"
        )
        thought = any(
            isinstance(s, dict) and s.get("type") == "thinking" and str_of(s.get("text")).strip()
            for s in _list(body.get("segments"))
        )
        other = bool(body.get("tool_uses")) or str_of(body.get("context")).strip() != ""
        results = any(_flat_text(dict_of(r).get("content")).strip() or dict_of(r).get("output")
                      for r in body.get("tool_results") or [])  # fmt: skip
        return text, text or thought or other or results
    parts = _list(body.get("content"))
    text = any(isinstance(p, dict) and str_of(p.get("Text")).strip() for p in parts)
    other = any(
        isinstance(p, dict)
        and (
            dict_of(p.get("ToolUse"))
            or str_of(dict_of(p.get("Thinking")).get("text")).strip()
            or str_of(dict_of(p.get("Mention")).get("content")).strip()
        )
        for p in parts
    )
    outputs = dict_of(body.get("tool_results")).values()
    has_results = any(
        _flat_text(dict_of(r).get("content")).strip() or dict_of(r).get("output") for r in outputs
    )
    return text, bool(text or other or has_results)


def count_threads(path: Path) -> int:
    """Messages (of every thread) that hold anything indexed."""
    return sum(
        _has_text(*_message_shape(m))[1]
        for _, _, doc in _docs(path)
        for m in doc.get("messages") or []
        if _message_shape(m)[0] in ("user", "assistant")
    )


def count_thread_roles(path: Path) -> RoleCounts:
    counts: RoleCounts = {}
    for thread, by_agent, doc in _docs(path):
        for message in doc.get("messages") or []:
            role, body = _message_shape(message)
            typed = _has_text(role, body)[0]
            if role == "user" and typed and not by_agent and not body.get("is_hidden"):
                add_role(counts, thread, "prompts")
            elif role == "assistant" and typed:
                add_role(counts, thread, "replies")
    return counts


PARSERS = (
    ParserSpec(
        "zed.threads_sqlite.v1",
        parse_threads,
        count_raw=count_threads,
        count_roles=count_thread_roles,
    ),
)

__all__ = ["PARSERS", "parse_threads"]
