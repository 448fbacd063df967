"""Gemini CLI: the independent raw counts ``audit`` compares with the parser.

Deliberately separate from the parser's code path (see
:mod:`agentdex.parsers.gemini_cli` for the unit definitions).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentdex.readers import guard

KNOWN_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})


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


def count_chat_raw(path: Path) -> int:
    """Messages of a known type carrying content, thoughts or tool calls (see module doc)."""

    def qualifies(msg: object) -> bool:
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

    raw = None if superseded(path) else _read_bytes(path)
    if raw is None:
        return 0
    if Path(path).suffix != ".jsonl":
        data = _loads(raw)
        messages = data.get("messages") if isinstance(data, dict) else None
        return sum(1 for m in messages if qualifies(m)) if isinstance(messages, list) else 0
    live: dict[str, bool] = {}
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
            live[obj["id"]] = qualifies(obj)
        else:
            update = obj.get("$set")
            holder: dict[str, Any] = update if isinstance(update, dict) else obj
            if isinstance(holder.get("messages"), list):
                snapshot = holder["messages"]
    if live:
        return sum(live.values())
    return sum(1 for m in snapshot if qualifies(m))


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
