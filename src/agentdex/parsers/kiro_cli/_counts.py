"""Independent counts for ``audit``: plain SQL and ``json``, not the parsers' code.

Units: a history entry (or the compaction summary) with any text, tool call or tool
result; a session-log line of kind Prompt, AssistantMessage or ToolResults with text or a
tool block. Roles: prompts = timestamped ``Prompt`` (and ``CancelledToolUses``) prompts
with text; replies = assistant messages with text. A conversation read from another store
(see ``_sqlite``) is not counted here either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentdex.parsers.base import RoleCounts, add_role
from agentdex.parsers.kiro_cli._sqlite import sessions_dir
from agentdex.readers import connect_readonly


def _json(value: Any) -> Any:
    try:
        return json.loads(value) if isinstance(value, str | bytes) else None
    except ValueError:
        return None


def _states(path: Path) -> dict[str, dict[str, Any]]:
    """conversation id -> state, newest ``conversations_v2`` row first, then ``conversations``."""
    conn = connect_readonly(path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        newest: dict[str, tuple[Any, Any, str, Any]] = {}
        if "conversations_v2" in names:
            sql = "SELECT conversation_id, updated_at, created_at, key, value FROM conversations_v2"
            for cid, updated, created, key, value in conn.execute(sql):
                rank = (updated or 0, created or 0, str(key))
                if cid and (cid not in newest or rank > newest[cid][:3]):
                    newest[cid] = (*rank, value)
        legacy = (
            list(conn.execute("SELECT key, value FROM conversations"))
            if "conversations" in names
            else []
        )
    finally:
        conn.close()
    states: dict[str, dict[str, Any]] = {}
    for cid, row in newest.items():
        state = _json(row[3])
        states[str(cid)] = state if isinstance(state, dict) else {}
    for key, value in legacy:
        state = _json(value)
        state = state if isinstance(state, dict) else {}
        cid = str(state.get("conversation_id") or f"key:{key}")
        states.setdefault(cid, state)
    cli = sessions_dir(path)
    hidden = set()
    if path.parent.name == "amazon-q":
        beside = path.parent.parent / "kiro-cli" / "data.sqlite3"
        if beside.is_file():
            hidden = set(_states(beside))
    return {
        cid: state
        for cid, state in states.items()
        if cid not in hidden and not (cli is not None and (cli / f"{cid}.jsonl").exists())
    }


def _pairs(state: dict[str, Any]) -> list[tuple[dict[str, Any], Any]]:
    out = []
    for entry in state.get("history") or []:
        if isinstance(entry, list) and len(entry) == 2:
            out.append((entry[0] if isinstance(entry[0], dict) else {}, entry[1]))
        elif isinstance(entry, dict):
            user = entry.get("user")
            out.append((user if isinstance(user, dict) else {}, entry.get("assistant")))
    return out


def _one(value: Any) -> dict[str, Any]:
    """The body of a one-key object (serde's tagged enum), whatever its tag."""
    if isinstance(value, dict) and len(value) == 1:
        body = next(iter(value.values()))
        return body if isinstance(body, dict) else {}
    return {}


def _user_said(user: dict[str, Any]) -> tuple[bool, bool]:
    """(typed a prompt, has a prompt or tool result with text)."""
    content = user.get("content")
    body = _one(content)
    if not isinstance(content, dict) or not (
        {"Prompt", "ToolUseResults", "CancelledToolUses"} & set(content)
    ):
        return False, False
    prompt = body.get("prompt")
    has_prompt = isinstance(prompt, str) and prompt.strip() != ""
    results = any(
        any(
            (isinstance(b.get("Text"), str) and b["Text"].strip()) or "Json" in b
            for b in (r.get("content") or [])
            if isinstance(b, dict)
        )
        for r in (body.get("tool_use_results") or [])
        if isinstance(r, dict)
    )
    return has_prompt and user.get("timestamp") is not None, has_prompt or results


def _assistant_said(assistant: Any) -> tuple[bool, bool]:
    """(a reply with text, anything: text or a tool use)."""
    if not isinstance(assistant, dict) or not ({"Response", "ToolUse"} & set(assistant)):
        return False, False
    body = _one(assistant)
    text = body.get("content")
    has_text = isinstance(text, str) and text.strip() != ""
    return has_text, has_text or bool(body.get("tool_uses"))


def count_db(path: Path) -> int:
    total = 0
    for state in _states(path).values():
        summary = state.get("latest_summary")
        if isinstance(summary, list) and summary and str(summary[0] or "").strip():
            total += 1
        for user, assistant in _pairs(state):
            if _user_said(user)[1] or _assistant_said(assistant)[1]:
                total += 1
    return total


def count_db_roles(path: Path) -> RoleCounts:
    counts: RoleCounts = {}
    for cid, state in _states(path).items():
        for user, assistant in _pairs(state):
            if _user_said(user)[0]:
                add_role(counts, cid, "prompts")
            if _assistant_said(assistant)[0]:
                add_role(counts, cid, "replies")
    return counts


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    with open(path, "rb") as handle:
        for raw in handle:
            value = _json(raw.decode("utf-8", "replace")) if raw.strip() else None
            if isinstance(value, dict):
                out.append(value)
    return out


def _content(line: dict[str, Any]) -> list[dict[str, Any]]:
    data = line.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(blocks: list[dict[str, Any]]) -> str:
    return "".join(
        b["data"] for b in blocks if b.get("kind") == "text" and isinstance(b.get("data"), str)
    ).strip()


def _line_unit(line: dict[str, Any]) -> bool:
    kind, blocks = line.get("kind"), _content(line)
    if kind == "Prompt":
        return bool(_text(blocks))
    if kind == "AssistantMessage":
        return bool(_text(blocks)) or any(b.get("kind") == "toolUse" for b in blocks)
    if kind == "ToolResults":
        return any(b.get("kind") == "toolResult" and (b.get("data") or {}).get("content")
                   for b in blocks)  # fmt: skip
    data = line.get("data")
    return (
        kind == "Compaction"
        and isinstance(data, dict)
        and bool(str(data.get("summary") or "").strip())
    )


def count_session(path: Path) -> int:
    return sum(_line_unit(line) for line in _lines(path))


def count_session_roles(path: Path) -> RoleCounts:
    meta_path = path.with_suffix(".json")
    meta = _json(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else None
    meta = meta if isinstance(meta, dict) else {}
    sid = str(meta.get("session_id") or path.stem)
    subagent = meta.get("session_created_reason") == "subagent"
    counts: RoleCounts = {}
    for line in _lines(path):
        text = _text(_content(line))
        if not text:
            continue
        if line.get("kind") == "AssistantMessage":
            add_role(counts, sid, "replies")
        elif (
            line.get("kind") == "Prompt"
            and not subagent
            and "session naming agent" not in text[:40]
        ):
            add_role(counts, sid, "prompts")
    return counts
