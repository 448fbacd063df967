"""VS Code Copilot Chat: the independent raw counts ``audit`` compares with the parser.

Written apart from :mod:`agentdex.parsers.vscode_copilot` on purpose:

* session ``.json``: requests whose ``message.text`` (or, when absent, the
  joined ``message.parts[].text``) is non-blank;
* session ``.jsonl``: the same, over a narrow replay that tracks only the
  ``requests`` array (one has-prompt flag per request) through the entries
  that touch it — not the full mutation-log replay the parser uses;
* ``state.vscdb``: non-blank prompts in the ``inline-chat-history`` value.

Roles per session (``count_session_roles``): requests with a prompt, and
the runs of reply text (markdown values, inline references) beyond
whitespace in each ``response[]``, a tool invocation ending a run (the
model's next round); a ``.jsonl`` log is replayed by a plain
set/push/delete walk of its own.
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


#: What the tracker knows about ``requests``: flags when it is an array, ``None`` when
#: absent (a later push creates it), ``OTHER`` when it holds something else.
OTHER = "other"
Requests = list[bool] | None | str


def _requests_from(value: object) -> Requests:
    if isinstance(value, list):
        return [_has_prompt(r) for r in value]
    return None if value is None else OTHER


def _track(flags: Requests, entry: dict[str, Any]) -> Requests:
    """Follow one log entry's effect on the per-request has-prompt flags."""
    kind, path, value = entry.get("kind"), entry.get("k"), entry.get("v")
    if kind == 0:
        return _requests_from(value.get("requests")) if isinstance(value, dict) else OTHER
    if not isinstance(path, list) or not path or path[0] != "requests":
        return flags
    if len(path) == 1:
        if kind == 1:
            return _requests_from(value)
        if kind == 2 and flags != OTHER:
            index = entry.get("i")
            valid = isinstance(index, int) and not isinstance(index, bool) and index >= 0
            kept = flags if isinstance(flags, list) else []
            kept = kept[:index] if valid else kept
            items = value if isinstance(value, list) else []
            return kept + [_has_prompt(r) for r in items]
        return None if kind == 3 else flags
    n, rest = path[1], path[2:]
    if not isinstance(flags, list) or not isinstance(n, int) or isinstance(n, bool):
        return flags
    if kind == 1 and not rest and n == len(flags):  # setting one past the end appends
        return [*flags, _has_prompt(value)]
    if not 0 <= n < len(flags):
        return flags
    if kind == 1 and not rest:
        flags[n] = _has_prompt(value)
    elif kind == 1 and rest == ["message"]:
        flags[n] = _message_has_text(value)
    elif kind == 1 and rest == ["message", "text"]:
        flags[n] = isinstance(value, str) and bool(value.strip())
    elif kind == 3 and rest in ([], ["message"], ["message", "text"]):
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
        flags: Requests = OTHER
        started = False  # entries before the initial (kind 0) one change nothing
        for chunk in raw.split(b"\n"):
            entry = _loads(chunk) if chunk.strip() else None
            if isinstance(entry, dict) and (started or entry.get("kind") == 0):
                started = True
                flags = _track(flags, entry)
        return sum(flags) if isinstance(flags, list) else 0
    data = _loads(raw)
    requests = data.get("requests") if isinstance(data, dict) else None
    return sum(1 for r in requests if _has_prompt(r)) if isinstance(requests, list) else 0


_REPLY_KINDS = (None, "markdownContent", "markdownVuln", "markdown", "inlineReference")


def _replies(request: object) -> int:
    """Reply texts in a request's ``response[]``: runs of markdown values and inline
    references with text, each ended by a tool invocation (the model's next round)."""
    response = request.get("response") if isinstance(request, dict) else None
    count, text, linked = 0, "", False
    for part in response if isinstance(response, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("kind") in ("toolInvocation", "toolInvocationSerialized"):
            count += linked or bool(text.strip())
            text, linked = "", False
        if part.get("kind") not in _REPLY_KINDS:
            continue
        if part.get("kind") == "inlineReference":
            linked = True
            continue
        value = part.get("content", part)
        value = value.get("value") if isinstance(value, dict) else value
        text += value if isinstance(value, str) else ""
    return count + (linked or bool(text.strip()))


def _walk_log(raw: bytes) -> Any:
    """The state a mutation log ends in: a plain walk of set (1), push (2), delete (3)."""
    state: Any = None
    for chunk in raw.split(b"\n"):
        entry = _loads(chunk) if chunk.strip() else None
        if not isinstance(entry, dict):
            continue
        if entry.get("kind") == 0:
            state = entry.get("v")
            continue
        keys = entry.get("k")
        if state is None or not isinstance(keys, list) or not keys:
            continue
        node = state
        try:
            for key in keys[:-1]:
                node = node[key]
            last = keys[-1]
            if entry.get("kind") == 1:
                if isinstance(node, list) and last == len(node):
                    node.append(entry.get("v"))
                else:
                    node[last] = entry.get("v")
            elif entry.get("kind") == 2:
                items = node.get(last) if isinstance(node, dict) else node[last]
                items = items if isinstance(items, list) else []
                if isinstance(entry.get("i"), int) and entry["i"] >= 0:
                    del items[entry["i"] :]
                pushed = entry.get("v")
                items.extend(pushed if isinstance(pushed, list) else [])
                node[last] = items
            elif entry.get("kind") == 3:
                if isinstance(node, dict):
                    node.pop(last, None)
                else:
                    node[last] = None
        except (KeyError, IndexError, TypeError):
            continue
    return state


def count_session_roles(path: Path) -> dict[str, dict[str, int]]:
    """Per session: requests with a prompt, and the replies (one per model round) given."""
    try:
        guard(path)
        raw = Path(path).read_bytes()
    except OSError:
        return {}
    state = _walk_log(raw) if Path(path).suffix == ".jsonl" else _loads(raw)
    if not isinstance(state, dict) or not isinstance(state.get("requests"), list):
        return {}
    session = state.get("sessionId")
    session = session if isinstance(session, str) and session else Path(path).stem
    requests = state["requests"]
    return {
        session: {
            "prompts": sum(_has_prompt(r) for r in requests),
            "replies": sum(_replies(r) for r in requests),
        }
    }


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


def count_inline_roles(path: Path) -> dict[str, dict[str, int]]:
    """Every inline-chat prompt is a prompt of the one ``inline-chat-history`` conversation."""
    prompts = count_inline_raw(path)
    return {"inline-chat-history": {"prompts": prompts, "replies": 0}} if prompts else {}
