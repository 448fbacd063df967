"""Codex JSONL rollouts (``codex.rollout_jsonl.v1``): the resumable parser.

**User text once.** Codex writes what a person typed twice: as a
``response_item`` user message and as an ``event_msg`` (``user_message``,
or a user ``item_completed``). The two are not always equal: the item may
carry an IDE wrapper the event lacks, one side may have images stripped or
text redacted, whitespace differs. So twins are found by position, helped
by text: an arriving user text pairs with an unpaired user text of the
other kind written since the agent last produced output (a reply,
reasoning, a tool call or result), preferring one with the same typed text
(whitespace-insensitive); only the first of a pair is kept. An event with
no twin (an era that logs only events) is kept. Pending texts live in
``cursor.state``, so a resume sees the same pairs as a full parse.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from agentdex.parsers._agent_common import number_parts
from agentdex.parsers._jsonl import LineStream
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.codex._items import (
    ITEM_TYPES,
    Item,
    event_user_text,
    is_injected,
    is_subagent,
    items_of,
    session_from_name,
    text_key,
    user_items,
)
from agentdex.readers import Diagnostics
from agentdex.records import Record, parse_timestamp

#: Unpaired user texts kept at once (they are cleared at each agent output).
PENDING_MAX = 256


def is_twin(state: dict[str, Any], origin: str, text: str) -> bool:
    """True when ``text`` pairs with a pending user text of the other origin (drop it)."""
    pending: list[list[str]] = state["pending"]
    key = text_key(text)
    others = [i for i, (other, _) in enumerate(pending) if other != origin]
    if others:
        same = [i for i in others if pending[i][1] == key]
        del pending[(same or others)[0]]
        return True
    pending.append([origin, key])
    del pending[:-PENDING_MAX]
    return False


def envelope(obj: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """(line type, payload), reading the early unwrapped era too."""
    payload = obj.get("payload")
    if isinstance(payload, dict):
        return obj.get("type"), payload
    if obj.get("type") in ITEM_TYPES or (obj.get("type") is None and "role" in obj):
        return "response_item", obj
    if obj.get("type") is None and "id" in obj and "timestamp" in obj:
        return "session_meta", obj
    return None, None


_INITIAL: dict[str, Any] = {
    "session": None,
    "meta_seen": False,
    "cwd": None,
    "branch": None,
    "model": None,
    "subagent": False,
    "copying": False,
    "pending": [],
}


def _context(state: dict[str, Any], payload: dict[str, Any], ltype: str, path: Any) -> None:
    """Apply a ``session_meta`` or ``turn_context`` line to the state."""
    if ltype == "turn_context":
        state["copying"] = False
        if isinstance(payload.get("cwd"), str) and payload["cwd"]:
            state["cwd"] = payload["cwd"]
        if isinstance(payload.get("model"), str) and payload["model"]:
            state["model"] = payload["model"]
        return
    meta_id = payload.get("id")
    state["pending"] = []  # twins never straddle a session header
    if not state["meta_seen"]:
        state["meta_seen"] = True
        state["session"] = meta_id if isinstance(meta_id, str) and meta_id else None
        state["session"] = state["session"] or session_from_name(path)
        if isinstance(payload.get("cwd"), str) and payload["cwd"]:
            state["cwd"] = payload["cwd"]
        git = payload.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str):
            state["branch"] = git["branch"] or None
        state["subagent"] = is_subagent(payload)
    elif isinstance(meta_id, str) and meta_id != state["session"]:
        state["copying"] = True


def _line_items(state: dict[str, Any], ltype: str | None, payload: dict[str, Any]) -> list[Item]:
    """The records one (non-copied) conversational line gives, after the user-once rule."""
    if ltype == "response_item":
        items = items_of(payload, state["subagent"])
        is_user = payload.get("role") == "user" and (payload.get("type") in (None, "message"))
        if items and is_user and items[0][0] != "system" and is_twin(state, "item", items[0][2]):
            return []
        if any(role in ("assistant", "tool") for role, *_ in items):
            state["pending"] = []  # the agent answered: earlier texts have no twin to come
        return items
    if ltype == "event_msg":
        text = event_user_text(payload)
        if not text or not text.strip():
            return []
        if not is_injected(text) and is_twin(state, "event", text):
            return []
        return [
            (r, k, t, {**e, "from_event": True})
            for r, k, t, e in user_items(text, state["subagent"])
        ]
    if ltype == "compacted":
        message = payload.get("message")
        if isinstance(message, str) and message.strip():
            return [("system", "summary", message, {})]
    return []


def parse_rollout(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Stream the records of one JSONL rollout."""
    stream = LineStream(ref, cursor, diag, _INITIAL)
    state = stream.state
    source = os.fspath(ref.path)
    for line, obj in stream.lines():
        ltype, payload = envelope(obj)
        if payload is None:
            if "payload" in obj:
                diag.add(ref.path, f"line:{line.lineno}", "payload is not an object")
            continue
        if ltype in ("session_meta", "turn_context"):
            _context(state, payload, ltype, ref.path)
            continue
        if state["copying"]:
            continue
        items = _line_items(state, ltype, payload)
        if not items:
            continue
        stream.produced()
        session = state["session"] or session_from_name(ref.path)
        timestamp = parse_timestamp(obj.get("timestamp")) or parse_timestamp(
            payload.get("timestamp")
        )
        records = [
            Record(
                agent=ref.agent,
                store=ref.store,
                source_path=source,
                locator=f"line:{line.lineno}",
                session_id=session,
                role=role,
                kind=kind,
                text=text,
                timestamp=timestamp,
                model=state["model"],
                cwd=state["cwd"],
                branch=state["branch"],
                host=ref.host,
                offset=line.offset,
                extra={k: v for k, v in extra.items() if v is not None},
            )
            for role, kind, text, extra in items
        ]
        yield from number_parts(records)
