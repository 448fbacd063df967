"""Kimi CLI's independent counters: stdlib ``json`` per line, none of the parsers' code.

Wire: a line counts when its message (or a ``SubagentEvent``'s, unless the
subagent has its own wire log) carries text the documented rules index;
prompts are typed turn inputs (not ``/commands``, not ``<system…>`` text,
not a turn opened inside another, not a subagent's), steering input, ``/btw``
questions and refusal feedback; replies are text parts and ``/btw`` answers.
Context: message lines with text or tool calls, outside sessions that keep
a wire log and not carried over from the previous rotation.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers.base import RoleCounts

_COMMAND = re.compile(r"^\s*/[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)*(\s|$)")
_SYSTEM = re.compile(r"^\s*<system(-reminder)?>")
_ROTATION = re.compile(r"^(.+?)(_sub_\d+)?(?:_(\d+))?\.jsonl$")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            p if isinstance(p, str) else str(p.get("text") or "")
            for p in value
            if isinstance(p, str) or (isinstance(p, dict) and p.get("type") == "text")
        )
    return ""


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _blank(value: Any) -> bool:
    return not (isinstance(value, str) and value.strip())


def _wire_session(path: Path) -> tuple[str, Path, bool]:
    """(session id, session folder, whether the file is a subagent's own wire)."""
    if path.parent.parent.name == "subagents":
        return path.parent.parent.parent.name, path.parent.parent.parent, True
    return path.parent.name, path.parent, False


def _wire_lines(path: Path) -> list[tuple[str, dict[str, Any], bool]]:
    """(message type, payload, written by a subagent) per line that is indexed here."""
    session_dir = _wire_session(path)[1]
    own = _wire_session(path)[2]
    out = []
    for obj in raw_objects(path):
        message = obj.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            continue
        mtype, payload = message["type"], _obj(message.get("payload"))
        sub = own
        if mtype == "SubagentEvent":
            agent = payload.get("agent_id")
            if agent and (session_dir / "subagents" / str(agent) / "wire.jsonl").is_file():
                continue
            parent = payload.get("parent_tool_call_id") or payload.get("task_tool_call_id")
            if not (agent or parent):
                continue
            inner = payload.get("event")
            if not isinstance(inner, dict) or not isinstance(inner.get("type"), str):
                continue
            mtype = inner["type"]
            payload = _obj(inner.get("payload"))
            sub = True
        out.append((mtype, payload, sub))
    return out


def _gives(mtype: str, p: dict[str, Any]) -> bool:
    if mtype in ("TurnBegin", "SteerInput"):
        return bool(_text(p.get("user_input")).strip())
    if mtype == "ContentPart":
        return (p.get("type") == "text" and not _blank(p.get("text"))) or (
            p.get("type") == "think" and not _blank(p.get("think"))
        )
    if mtype == "ToolCall":
        return True
    if mtype == "ToolResult":
        value = _obj(p.get("return_value"))
        return bool(_text(value.get("output")).strip()) or not _blank(value.get("message"))
    if mtype in ("ApprovalResponse", "ApprovalRequestResolved"):
        return not _blank(p.get("feedback"))
    if mtype == "QuestionResponse":
        answers = _obj(p.get("answers"))
        return any(str(a).strip() for a in answers.values())
    fields = {
        "BtwBegin": ("question",),
        "BtwEnd": ("response",),
        "Notification": ("title", "body"),
        "PlanDisplay": ("content",),
    }
    return any(not _blank(p.get(f)) for f in fields.get(mtype, ()))


def count_wire(path: Path) -> int:
    """Lines whose message gives a record."""
    return sum(_gives(mtype, p) for mtype, p, _ in _wire_lines(path))


def count_wire_roles(path: Path) -> RoleCounts:
    """Prompts and replies of the session the wire belongs to."""
    prompts = replies = depth = 0
    for mtype, p, sub in _wire_lines(path):
        if mtype == "TurnBegin":
            text = _text(p.get("user_input"))
            typed = not sub and depth == 0 and text.strip() and not _SYSTEM.match(text)
            prompts += bool(typed and not _COMMAND.match(text))
            depth += not sub
        elif mtype == "SteerInput":
            text = _text(p.get("user_input"))
            ok = not sub and text.strip() and not _SYSTEM.match(text)
            prompts += bool(ok and not _COMMAND.match(text))
        elif mtype == "TurnEnd" and not sub:
            depth = max(0, depth - 1)
        elif mtype == "StepInterrupted" and not sub:
            depth = 0
        elif mtype in ("BtwBegin", "ApprovalResponse", "ApprovalRequestResolved"):
            prompts += not _blank(p.get("question" if mtype == "BtwBegin" else "feedback"))
        elif mtype == "ContentPart":
            replies += p.get("type") == "text" and not _blank(p.get("text"))
        elif mtype == "BtwEnd":
            replies += not _blank(p.get("response"))
    session = _wire_session(path)[0]
    return {session: {"prompts": prompts, "replies": replies}} if prompts or replies else {}


# ----------------------------------------------------------------------------- context


def _context_session(path: Path) -> tuple[str, Path, bool]:
    """(session id, session folder, subagent file?) of a context file."""
    found = _ROTATION.match(path.name)
    stem = found.group(1) if found else path.stem
    sub = bool(found and found.group(2))
    if stem == "context":
        return path.parent.name, path.parent, sub
    return stem, path.parent / stem, sub


def _wire_has_messages(folder: Path) -> bool:
    try:
        with open(folder / "wire.jsonl", encoding="utf-8", errors="replace") as handle:
            return any('"TurnBegin"' in line for line in handle)
    except OSError:
        return False


def _older(path: Path) -> Path | None:
    found = _ROTATION.match(path.name)
    if found is None:
        return None
    base = found.group(1) + (found.group(2) or "")
    if found.group(3):
        n = int(found.group(3)) - 1
        older = path.with_name(f"{base}_{n}.jsonl")
        return older if n >= 1 and older.is_file() else None
    numbers = [
        int(m.group(1))
        for other in path.parent.iterdir()
        if (m := re.fullmatch(re.escape(base) + r"_(\d+)\.jsonl", other.name))
    ]
    return path.with_name(f"{base}_{max(numbers)}.jsonl") if numbers else None


def _key(obj: dict[str, Any]) -> str:
    raw = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha1(raw.encode("utf-8", "replace"), usedforsecurity=False).hexdigest()


def _messages(path: Path) -> list[dict[str, Any]]:
    """The context file's messages that are indexed (see the module docstring)."""
    _, folder, _ = _context_session(path)
    if _wire_has_messages(folder):
        return []
    older = _older(path)
    carried = {_key(o) for o in raw_objects(older)} if older else set()
    out = []
    for obj in raw_objects(path):
        if obj.get("role") not in ("user", "assistant", "tool", "system"):
            continue
        content = obj.get("content")
        text = _text(content if isinstance(content, list) else [{"type": "text", "text": content}])
        parts = content if isinstance(content, list) else []
        thought = any(
            isinstance(p, dict) and p.get("type") == "think" and not _blank(p.get("think"))
            for p in parts
        )
        has = text.strip() or obj.get("tool_calls") or thought
        if obj.get("role") == "system" or not has or (carried and _key(obj) in carried):
            continue
        out.append(obj)
    return out


def count_context(path: Path) -> int:
    return len(_messages(path))


def count_context_roles(path: Path) -> RoleCounts:
    session, _, sub = _context_session(path)
    prompts = replies = 0
    for obj in _messages(path):
        content = obj.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = [
            str(p.get("text") or "")
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text"
        ]
        joined = "\n".join(t for t in texts if t.strip())
        if joined.lstrip().startswith("<system>Previous context has been compacted"):
            continue
        if obj.get("role") == "user" and not sub:
            prompts += any(t.strip() and not _SYSTEM.match(t) for t in texts)
        elif obj.get("role") == "assistant":
            replies += bool(joined.strip())
    return {session: {"prompts": prompts, "replies": replies}} if prompts or replies else {}
