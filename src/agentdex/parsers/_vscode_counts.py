"""VS Code Copilot Chat: the independent raw counts ``audit`` compares with the parser.

Written apart from :mod:`agentdex.parsers.vscode_copilot` on purpose:

* session ``.json``: requests whose ``message.text`` (or, when absent, the
  joined ``message.parts[].text``) is non-blank;
* session ``.jsonl``: the same, over a narrow replay that tracks only the
  ``requests`` array (one has-prompt flag per request) through the entries
  that touch it — not the full mutation-log replay the parser uses;
* ``state.vscdb``: non-blank prompts in the ``inline-chat-history`` value.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson

from agentdex.readers import connect_readonly, guard


def _has_prompt(request: object) -> bool:
    if not isinstance(request, dict):
        return False
    return _message_has_text(request.get("message"))


def _message_has_text(message: object) -> bool:
    if isinstance(message, str):
        return bool(message.strip())
    if not isinstance(message, dict):
        return False
    text = message.get("text")
    if not isinstance(text, str):
        parts = message.get("parts")
        text = "".join(
            p.get("text", "") if isinstance(p, dict) and isinstance(p.get("text"), str) else ""
            for p in (parts if isinstance(parts, list) else [])
        )
    return bool(text.strip())


def _loads(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            return orjson.loads(raw.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            return None


def _track(flags: list[bool], entry: dict[str, Any]) -> list[bool]:
    """Follow one log entry's effect on the per-request has-prompt flags."""
    kind, path, value = entry.get("kind"), entry.get("k"), entry.get("v")
    if kind == 0:
        requests = value.get("requests") if isinstance(value, dict) else None
        return [_has_prompt(r) for r in requests] if isinstance(requests, list) else []
    if not isinstance(path, list) or not path or path[0] != "requests":
        return flags
    if len(path) == 1:
        if kind == 1:
            return [_has_prompt(r) for r in value] if isinstance(value, list) else []
        if kind == 2:
            index = entry.get("i")
            kept = flags[:index] if isinstance(index, int) and index >= 0 else flags
            items = value if isinstance(value, list) else []
            return kept + [_has_prompt(r) for r in items]
        if kind == 3:
            return []
        return flags
    n = path[1]
    if not isinstance(n, int) or not 0 <= n < len(flags):
        return flags
    rest = path[2:]
    if kind == 1 and not rest:
        flags[n] = _has_prompt(value)
    elif kind == 1 and rest == ["message"]:
        flags[n] = _message_has_text(value)
    elif kind == 1 and rest == ["message", "text"]:
        flags[n] = isinstance(value, str) and bool(value.strip())
    elif kind == 3 and rest in ([], ["message"]):
        flags[n] = False
    return flags


def count_session_raw(path: Path) -> int:
    """Requests with a non-blank prompt in a session ``.json`` or ``.jsonl`` (see module doc)."""
    try:
        guard(path)
        raw = Path(path).read_bytes()
    except OSError:
        return 0
    if Path(path).suffix == ".jsonl":
        flags: list[bool] = []
        for chunk in raw.split(b"\n"):
            entry = _loads(chunk) if chunk.strip() else None
            if isinstance(entry, dict):
                flags = _track(flags, entry)
        return sum(flags)
    data = _loads(raw)
    requests = data.get("requests") if isinstance(data, dict) else None
    return sum(1 for r in requests if _has_prompt(r)) if isinstance(requests, list) else 0


def count_inline_raw(path: Path) -> int:
    """Non-blank prompts stored under ``ItemTable['inline-chat-history']``."""
    try:
        conn = connect_readonly(path)
    except (OSError, sqlite3.Error):
        return 0
    try:
        conn.execute("PRAGMA busy_timeout = 250")
        row = conn.execute(
            "SELECT value FROM ItemTable WHERE key = ?", ("inline-chat-history",)
        ).fetchone()
    except sqlite3.Error:
        return 0
    finally:
        conn.close()
    if row is None or not isinstance(row[0], str | bytes):
        return 0
    raw = row[0].encode() if isinstance(row[0], str) else row[0]
    data = _loads(raw)
    if not isinstance(data, list):
        return 0
    count = 0
    for entry in data:
        if isinstance(entry, dict):
            entry = next(
                (entry[k] for k in ("text", "value", "message", "prompt") if k in entry), ""
            )
        if isinstance(entry, str) and entry.strip():
            count += 1
    return count
