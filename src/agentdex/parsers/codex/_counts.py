"""Codex's independent counters: plain ``json`` per line (:func:`raw_objects`), none of the
parser's code paths.

Rollout units and roles are counted per *turn*: the stretch between two
agent outputs (a reply, reasoning, a tool call or output). In a turn, the
person's texts appear as ``a`` user items and ``b`` user events; twins pair
up, so the turn gives ``max(a, b)`` units. Once the rollout has had a user
event, the events are what was typed (Codex's own rule for its titles): the
turn's prompts are its events; an item left without one is context. Before
that, the items are. Text Codex or an IDE composed (injected prefixes, an
IDE wrapper with no request) is counted on its own, never paired. A turn
holding ``HELD_MAX`` such texts is closed early (the parser decides it then).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers.base import RoleCounts, prompts_by_session
from agentdex.parsers.codex._items import (
    DELEGATION_PREFIX,
    HELD_MAX,
    IDE_WRAPPERS,
    INJECTED_PREFIXES,
    ITEM_TYPES,
    MESSAGE_ROLES,
    TOOL_CALLS,
    TOOL_OUTPUTS,
    USER_ITEM_TYPES,
    session_from_name,
)
from agentdex.parsers.codex._legacy import legacy_doc, legacy_session_id
from agentdex.readers import Diagnostics

_ASK = re.compile(r"^## My request[^\n]*:[ \t]*$", re.M)
_IMAGES = re.compile(r"<image\b[^>]*>.*?</image>", re.S)


def _words(content: Any) -> str:
    if isinstance(content, str):
        return content if content.strip() else ""
    found = (
        [b["text"] for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]
        if isinstance(content, list)
        else []
    )
    return " ".join(found) if " ".join(found).strip() else ""


def _lines_of(content: Any) -> str:
    """User text as Codex joins it (blocks one per line), for the IDE-wrapper check."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    )


def _event_text(payload: dict[str, Any]) -> str:
    if payload.get("type") == "user_message" and isinstance(payload.get("message"), str):
        return payload["message"].strip()
    item = payload.get("item")
    if (
        payload.get("type") == "item_completed"
        and isinstance(item, dict)
        and item.get("type") in USER_ITEM_TYPES
    ):
        return _words(item.get("content")).strip() or str(item.get("text") or "").strip()
    return ""


def _user_sort(text: str, subagent: bool) -> str:
    """``injected``, ``prompt`` or ``other`` (typed by an agent), and whether it has IDE context."""
    head = text.lstrip()
    if head.startswith(INJECTED_PREFIXES):
        return "injected"
    if head.startswith(IDE_WRAPPERS):
        found = _ASK.search(text)
        if found is None or not _IMAGES.sub("", text[found.end() :]).strip():
            return "injected"
        return "other" if subagent else "prompt+context"
    return "other" if head.startswith(DELEGATION_PREFIX) or subagent else "prompt"


class _Tally:
    """Per-session counts, turn by turn."""

    def __init__(self) -> None:
        self.units = 0
        self.roles: RoleCounts = {}
        self.session = ""
        self.items: list[str] = []
        self.events: list[str] = []
        self.events_seen = False

    def role(self, name: str, n: int = 1) -> None:
        entry = self.roles.setdefault(self.session, {"prompts": 0, "replies": 0})
        entry[name] += n

    def end_turn(self) -> None:
        self.units += max(len(self.items), len(self.events))
        typed = self.events if self.events_seen else self.items
        prompts = sum(s.startswith("prompt") for s in typed)
        if prompts:
            self.role("prompts", prompts)
        self.items, self.events = [], []


def _tally_rollout(path: Path) -> _Tally:
    tally = _Tally()
    session: Any = None
    subagent = copying = False
    for obj in raw_objects(path):
        payload, ltype = obj.get("payload"), obj.get("type")
        if not isinstance(payload, dict):  # the early unwrapped era
            payload = obj
            if ltype in ITEM_TYPES or (ltype is None and "role" in obj):
                ltype = "item"
            elif ltype is None and "id" in obj and "timestamp" in obj:
                ltype = "session_meta"
        if ltype == "session_meta":
            tally.end_turn()
            if session is None:
                session = payload.get("id")
                session = session if isinstance(session, str) and session else None
                session = session or session_from_name(path)
                source = payload.get("source")
                subagent = payload.get("thread_source") == "subagent" or (
                    isinstance(source, dict) and "subagent" in source
                )
                tally.session = session
            elif isinstance(payload.get("id"), str) and payload["id"] != session:
                copying = True
            continue
        if ltype == "turn_context":
            copying = False
            continue
        if copying:
            continue
        tally.session = tally.session or session_from_name(path)
        if ltype == "event_msg":
            text = _event_text(payload)
            if text:
                tally.events_seen = True
                sort = _user_sort(text, subagent)
                if sort == "injected":
                    tally.units += 1
                else:
                    tally.events.append(sort)
                    _close_full_turn(tally)
            continue
        if ltype == "compacted":
            tally.units += isinstance(payload.get("message"), str) and bool(
                payload["message"].strip()
            )
            continue
        if ltype not in ("response_item", "item"):
            continue
        _count_item(tally, payload, subagent)
    tally.end_turn()
    return tally


def _close_full_turn(tally: _Tally) -> None:
    if len(tally.items) + len(tally.events) >= HELD_MAX:
        tally.end_turn()


def _count_item(tally: _Tally, payload: dict[str, Any], subagent: bool) -> None:
    ptype = payload.get("type") or ("message" if "role" in payload else None)
    role = payload.get("role")
    if ptype in TOOL_CALLS or ptype in TOOL_OUTPUTS:
        tally.end_turn()
        tally.units += 1
    elif ptype == "reasoning":
        body = _words(payload.get("summary")) or _words(payload.get("content"))
        if body.strip():
            tally.end_turn()
            tally.units += 1
    elif ptype == "agent_message":
        tally.units += bool(_words(payload.get("content")))
    elif ptype == "message" and role in MESSAGE_ROLES:
        words = _words(payload.get("content"))
        if not words:
            return
        if role in ("assistant", "tool"):
            tally.end_turn()
            tally.units += 1
            if role == "assistant":
                tally.role("replies")
        elif role == "user":
            sort = _user_sort(_lines_of(payload.get("content")), subagent)
            if sort == "injected":
                tally.units += 1
            else:
                tally.items.append(sort)
                _close_full_turn(tally)
        else:
            tally.units += 1


def count_rollout(path: Path) -> int:
    """Lines that give a record, counted turn by turn (see the module docstring)."""
    return _tally_rollout(path).units


def count_rollout_roles(path: Path) -> RoleCounts:
    """Typed prompts (twins once) and assistant replies of the rollout's session."""
    return _tally_rollout(path).roles


def count_legacy(path: Path) -> int:
    """Independent unit count: items that are conversational with text."""
    _, items = legacy_doc(path, Diagnostics())
    count = 0
    for payload in items:
        if not isinstance(payload, dict):
            continue
        ptype = payload.get("type") or ("message" if "role" in payload else None)
        if ptype in TOOL_CALLS or ptype in TOOL_OUTPUTS:
            count += 1
        elif ptype in ("message", "agent_message", "reasoning"):
            body = _words(payload.get("content")) or _words(payload.get("summary"))
            role_ok = ptype != "message" or payload.get("role") in MESSAGE_ROLES
            count += bool(body.strip()) and role_ok
    return count


def count_legacy_roles(path: Path) -> RoleCounts:
    """Typed prompts and assistant replies among a legacy rollout's items."""
    session, items = legacy_doc(path, Diagnostics())
    prompts = replies = 0
    for payload in items:
        if not isinstance(payload, dict):
            continue
        if (payload.get("type") or "message") != "message":
            continue
        words = _words(payload.get("content"))
        if words and payload.get("role") == "assistant":
            replies += 1
        elif words and payload.get("role") == "user":
            prompts += _user_sort(_lines_of(payload.get("content")), False).startswith("prompt")
    return {legacy_session_id(path, session): {"prompts": prompts, "replies": replies}}


def count_history(path: Path) -> int:
    """Independent unit count: lines with a non-blank ``text`` string."""
    return sum(
        1 for obj in raw_objects(path) if isinstance(obj.get("text"), str) and obj["text"].strip()
    )


def count_history_roles(path: Path) -> RoleCounts:
    """Each line with text is one prompt of its ``session_id``."""
    return prompts_by_session(
        (str(obj.get("session_id") or "") or "unknown", obj.get("text"))
        for obj in raw_objects(path)
    )
