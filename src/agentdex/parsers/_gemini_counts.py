"""Gemini CLI: the independent raw counts ``audit`` compares with the parser.

Deliberately separate from the parser's code path (see
:mod:`agentdex.parsers.gemini_cli` for the unit definitions).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson

from agentdex.readers import guard

KNOWN_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
T = TypeVar("T")


def _read_bytes(path: Path) -> bytes | None:
    try:
        guard(path)
        return Path(path).read_bytes()
    except OSError:
        return None


def _loads(raw: bytes) -> Any:
    """Decode JSON, replacing invalid UTF-8; ``None`` when it is not JSON."""
    if not raw.strip():
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            return orjson.loads(raw.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            return None


def superseded(path: Path) -> bool:
    """True for a legacy .json chat the CLI migrated into a sibling .jsonl."""
    try:
        return Path(path).suffix == ".json" and Path(f"{path}l").is_file()
    except OSError:
        return False


def _qualifies(msg: object) -> bool:
    if not isinstance(msg, dict) or str(msg.get("type")) not in KNOWN_TYPES:
        return False
    content = msg.get("content")
    if isinstance(content, str) and content.strip():
        return True
    if isinstance(content, list) and content:
        return True
    if msg.get("type") != "gemini":  # only model replies carry thoughts and tool calls
        return False
    return any(isinstance(msg.get(k), list) and msg[k] for k in ("thoughts", "toolCalls"))


def _said(msg: object) -> str | None:
    """``prompts`` for a user message with text, ``replies`` for a gemini one; else None."""
    if not isinstance(msg, dict) or msg.get("type") not in ("user", "gemini"):
        return None
    content = msg.get("content")
    parts = content if isinstance(content, list) else [content]
    text = "".join(
        p if isinstance(p, str) else str(p.get("text") or "") if isinstance(p, dict) else ""
        for p in parts
    )
    if not text.strip():
        return None
    return "prompts" if msg["type"] == "user" else "replies"


def _live(path: Path, summarize: Callable[[object], T]) -> tuple[str, list[T]]:
    """(session id, a summary per message left after replaying upserts and rewinds)."""
    raw = None if superseded(path) else _read_bytes(path)
    session = Path(path).stem
    if raw is None:
        return session, []
    if Path(path).suffix != ".jsonl":
        data = _loads(raw)
        messages = data.get("messages") if isinstance(data, dict) else None
        if isinstance(data, dict) and isinstance(data.get("sessionId"), str) and data["sessionId"]:
            session = data["sessionId"]
        return session, [summarize(m) for m in messages] if isinstance(messages, list) else []
    live: dict[str, T] = {}
    snapshot: list[Any] = []
    for chunk in raw.split(b"\n"):
        obj = _loads(chunk)
        if not isinstance(obj, dict):
            continue
        if isinstance(obj.get("$rewindTo"), str):
            target = obj["$rewindTo"]
            if target not in live:
                live.clear()
                continue
            while live:  # drop from the newest back to and including the target
                if live.popitem()[0] == target:
                    break
        elif isinstance(obj.get("id"), str):
            live[obj["id"]] = summarize(obj)
        else:
            update = obj.get("$set")
            holder: dict[str, Any] = update if isinstance(update, dict) else obj
            if isinstance(holder.get("sessionId"), str) and holder["sessionId"]:
                session = holder["sessionId"]
            if isinstance(holder.get("messages"), list):
                snapshot = holder["messages"]
    if live:
        return session, list(live.values())
    return session, [summarize(m) for m in snapshot]


def count_chat_raw(path: Path) -> int:
    """Messages of a known type carrying content, thoughts or tool calls (see module doc)."""
    return sum(_live(path, _qualifies)[1])


def count_chat_roles(path: Path) -> dict[str, dict[str, int]]:
    """Per session: user messages with text (prompts) and gemini messages with text (replies)."""
    session, said = _live(path, _said)
    if not said:
        return {}
    return {session: {"prompts": said.count("prompts"), "replies": said.count("replies")}}


def count_logs_roles(path: Path) -> dict[str, dict[str, int]]:
    """Each user entry with a message is one prompt of its ``sessionId``."""
    raw = _read_bytes(path)
    data = _loads(raw) if raw is not None else None
    counts: dict[str, dict[str, int]] = {}
    for entry in data if isinstance(data, list) else []:
        if not isinstance(entry, dict) or entry.get("type") != "user":
            continue
        message = entry.get("message")
        if isinstance(message, str) and message.strip():
            session = entry.get("sessionId")
            session = session if isinstance(session, str) and session else Path(path).stem
            counts.setdefault(session, {"prompts": 0, "replies": 0})["prompts"] += 1
    return counts


def count_logs_raw(path: Path) -> int:
    """Entries with ``type == "user"`` and a non-empty string ``message``."""
    raw = _read_bytes(path)
    data = _loads(raw) if raw is not None else None
    if not isinstance(data, list):
        return 0
    return sum(
        1
        for e in data
        if isinstance(e, dict)
        and e.get("type") == "user"
        and isinstance(e.get("message"), str)
        and e["message"].strip()
    )
