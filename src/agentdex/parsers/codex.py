"""Codex CLI: rollouts (JSONL and legacy JSON) and ``history.jsonl``.

Rollouts (``codex.rollout_jsonl.v1``)
    ``sessions/YYYY/MM/DD/rollout-*.jsonl`` and ``archived_sessions/``. Eras
    handled: the ``{timestamp, type, payload}`` envelope (``session_meta``,
    ``turn_context``, ``response_item``, ``event_msg``, ``compacted``); the
    early unwrapped lines (a bare ``{id, timestamp, instructions}`` first
    line, then bare response items); payloads with ``role`` but no
    ``type`` (peer samples) read as messages; ``event_msg`` ``item_completed``.

    ``session_meta`` gives the session id (else the uuid in the file name),
    ``cwd``, ``git.branch``; ``turn_context`` updates ``cwd`` and ``model``.
    A later ``session_meta`` with a *different* id starts the parent
    history a forked/subagent rollout copies in: its lines are skipped until
    the next ``turn_context`` (the child's own first turn), so the parent's
    turns are indexed once, from the parent's rollout.

    ``response_item`` -> records (``locator`` ``line:N``):
    ``message`` role ``user`` -> ``user``/``prompt``; role ``assistant`` ->
    ``message``; ``developer``/``system`` -> ``system``/``message``;
    ``reasoning`` (summary, else content text) -> ``reasoning``;
    ``function_call``/``custom_tool_call``/``local_shell_call``/
    ``web_search_call`` -> ``tool_call`` (name + compact arguments);
    ``function_call_output``/``custom_tool_call_output`` -> ``tool``/``tool_result``;
    ``agent_message`` (a parent agent's message to this child) ->
    ``user``/``message``; ``compacted`` -> ``system``/``summary``.

    Not prompts: text Codex injects as a user message (``<environment_context>``,
    ``<user_instructions>``, ``# AGENTS.md instructions``, ``<INSTRUCTIONS>`` and
    the like, see :data:`INJECTED_PREFIXES`) becomes ``system``/``message``
    (kept searchable, never ranked as typed); a ``<codex_delegation>`` task and
    every user message of a subagent rollout (``thread_source: subagent``)
    becomes ``user``/``message``: an agent wrote it, not a person.

    **User text once.** Typed text is written twice, as a ``response_item``
    user message and as an ``event_msg`` ``user_message`` (or a user
    ``item_completed``). The first of the pair is kept (the response item
    in every rollout seen so far: it exists in every era and carries the
    content blocks) and the second is dropped; an event whose twin never
    appears (an era that logs only events) is still kept. Pairs match on the
    text with whitespace removed; unmatched texts wait in ``cursor.state``
    (the last 32), so a resume sees the same pairs as a full parse.
    ``agent_message``/``agent_reasoning`` events echo response items and
    are skipped.

    **Unit** (``cursor.units`` and ``count_raw``): one line that gives a
    record (a line gives at most one): a conversational ``response_item``
    (message with non-blank text, reasoning with non-blank text, tool call,
    tool output, agent message with text), a ``compacted`` line with a
    message, plus each user event whose text has no response-item twin in
    the file, all outside copied parent history.

Legacy rollouts (``codex.rollout_json.v1``)
    ``sessions/rollout-*.json`` = ``{session:{id,timestamp,model}, items:[...]}``;
    items are response items as above (``locator`` ``json:/items/N``). Not
    resumable. **Unit**: an item that gives a record.

History (``codex.history_jsonl.v1``)
    ``{session_id, ts (unix seconds), text}``: one ``user``/``prompt`` per
    line. **Unit**: a line with a non-blank ``text`` string.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers._jsonl import LineStream, clip, compact_json, raw_objects
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Kind, Record, Role, parse_timestamp

#: User-role text Codex composes itself (context, instructions, notices).
INJECTED_PREFIXES = (
    "<environment_context",
    "<user_instructions",
    "<INSTRUCTIONS",
    "# AGENTS.md instructions",
    "<permissions instructions",
    "<turn_aborted",
    "<subagent_notification",
)
DELEGATION_PREFIX = "<codex_delegation"

#: Response item types that are a tool call, and those that are its output.
TOOL_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")
#: Payload types a bare (unwrapped, early era) line may have.
ITEM_TYPES = ("message", "reasoning", "agent_message", *TOOL_CALLS, *TOOL_OUTPUTS)
_USER_ITEM_TYPES = ("UserMessage", "userMessage", "user_message")
_MESSAGE_ROLES = ("user", "assistant", "developer", "system", "tool")
_PENDING_MAX = 32
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)

Item = tuple[Role, Kind, str, dict[str, Any]]


# --------------------------------------------------------------------------- shared pieces


def _blocks_text(content: Any) -> str:
    """Text of a content list (``input_text``/``output_text``/``text`` blocks) or a string."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


def _text_key(text: str) -> str:
    """Identity of a user text for the user-once rule (whitespace-insensitive)."""
    return hashlib.sha1("".join(text.split()).encode(), usedforsecurity=False).hexdigest()[:20]


def _user_kind(text: str, subagent: bool) -> tuple[Role, Kind, dict[str, Any]]:
    head = text.lstrip()
    if head.startswith(INJECTED_PREFIXES):
        return "system", "message", {"injected": True}
    if head.startswith(DELEGATION_PREFIX) or subagent:
        return "user", "message", {}
    return "user", "prompt", {}


def _output_text(output: Any) -> str:
    """Tool output: plain text, or the ``output`` field of Codex's JSON wrapper."""
    if isinstance(output, str):
        if output.startswith("{"):
            try:
                decoded = orjson.loads(output)
            except orjson.JSONDecodeError:
                return output
            if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
                return decoded["output"]
        return output
    if isinstance(output, dict):
        for key in ("output", "content"):
            if isinstance(output.get(key), str):
                return output[key]
        return compact_json(output)
    if isinstance(output, list):
        return _blocks_text(output)
    return "" if output is None else compact_json(output)


def _call_text(ptype: str, payload: dict[str, Any]) -> str:
    if ptype == "function_call":
        args = payload.get("arguments")
        if isinstance(args, str):
            with contextlib.suppress(orjson.JSONDecodeError):
                args = compact_json(orjson.loads(args))
        else:
            args = compact_json(args)
        return f"{payload.get('name') or 'function'} {args}"
    if ptype == "custom_tool_call":
        body = payload.get("input")
        body = body if isinstance(body, str) else compact_json(body)
        return f"{payload.get('name') or 'tool'} {body}"
    action = payload.get("action")
    if ptype == "local_shell_call":
        command = action.get("command") if isinstance(action, dict) else None
        if isinstance(command, list):
            return "shell " + " ".join(str(part) for part in command)
        return "shell " + compact_json(action)
    query = action.get("query") if isinstance(action, dict) else None
    return "web_search " + (query if isinstance(query, str) else compact_json(action or {}))


def item_of(payload: dict[str, Any], subagent: bool) -> Item | None:
    """The record one response item gives, or None (unknown type, no text)."""
    ptype = payload.get("type")
    if ptype is None and isinstance(payload.get("role"), str):
        ptype = "message"
    if ptype == "message":
        role, text = payload.get("role"), _blocks_text(payload.get("content"))
        if not text.strip():
            return None
        if role == "user":
            user_role, kind, extra = _user_kind(text, subagent)
            return user_role, kind, text, extra
        if role == "assistant":
            return "assistant", "message", text, {}
        if role in ("developer", "system"):
            return "system", "message", text, {}
        if role == "tool":
            return "tool", "tool_result", text, {}
        return None
    if ptype == "reasoning":
        text = _blocks_text(payload.get("summary")) or _blocks_text(payload.get("content"))
        return ("assistant", "reasoning", text, {}) if text.strip() else None
    if ptype == "agent_message":
        text = _blocks_text(payload.get("content"))
        extra = {k: payload[k] for k in ("author", "recipient") if isinstance(payload.get(k), str)}
        return ("user", "message", text, extra) if text.strip() else None
    if ptype in TOOL_CALLS:
        extra = {"call_id": payload.get("call_id") or payload.get("id")}
        return "assistant", "tool_call", clip(_call_text(ptype, payload), extra), extra
    if ptype in TOOL_OUTPUTS:
        extra = {"call_id": payload.get("call_id")}
        return "tool", "tool_result", clip(_output_text(payload.get("output")), extra), extra
    return None


def _event_user_text(payload: dict[str, Any]) -> str | None:
    """The typed text a user event carries (``user_message`` or user ``item_completed``)."""
    ptype = payload.get("type")
    if ptype == "user_message":
        message = payload.get("message")
        return message if isinstance(message, str) else None
    if ptype == "item_completed":
        item = payload.get("item")
        if isinstance(item, dict) and item.get("type") in _USER_ITEM_TYPES:
            text = _blocks_text(item.get("content")) or item.get("text") or item.get("message")
            return text if isinstance(text, str) else None
    return None


def _session_from_name(path: Path) -> str:
    match = _UUID.search(path.stem)
    return match.group(0) if match else path.stem


def _is_subagent(meta: dict[str, Any]) -> bool:
    source = meta.get("source")
    return meta.get("thread_source") == "subagent" or (
        isinstance(source, dict) and "subagent" in source
    )


# --------------------------------------------------------------------------- JSONL rollouts


def _first_twin(state: dict[str, Any], origin: str, text: str) -> bool:
    """User-once rule: True when this text is the first of its pair (emit it)."""
    key = _text_key(text)
    pending: list[list[str]] = state["pending"]
    for index, (other, other_key) in enumerate(pending):
        if other != origin and other_key == key:
            del pending[index]
            return False
    pending.append([origin, key])
    del pending[:-_PENDING_MAX]
    return True


def _envelope(obj: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """(line type, payload), reading the early unwrapped era too."""
    payload = obj.get("payload")
    if isinstance(payload, dict):
        return obj.get("type"), payload
    if obj.get("type") in ITEM_TYPES or (obj.get("type") is None and "role" in obj):
        return "response_item", obj
    if obj.get("type") is None and "id" in obj and "timestamp" in obj:
        return "session_meta", obj
    return None, None


def parse_rollout(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Stream the records of one JSONL rollout."""
    initial: dict[str, Any] = {
        "session": None,
        "meta_seen": False,
        "cwd": None,
        "branch": None,
        "model": None,
        "subagent": False,
        "copying": False,
        "pending": [],
    }
    stream = LineStream(ref, cursor, diag, initial)
    state = stream.state
    source = os.fspath(ref.path)
    for line, obj in stream.lines():
        ltype, payload = _envelope(obj)
        if payload is None:
            if "payload" in obj:
                diag.add(ref.path, f"line:{line.lineno}", "payload is not an object")
            continue
        item: Item | None = None
        if ltype == "session_meta":
            meta_id = payload.get("id")
            if not state["meta_seen"]:
                state["meta_seen"] = True
                state["session"] = meta_id if isinstance(meta_id, str) and meta_id else None
                state["session"] = state["session"] or _session_from_name(ref.path)
                if isinstance(payload.get("cwd"), str) and payload["cwd"]:
                    state["cwd"] = payload["cwd"]
                git = payload.get("git")
                if isinstance(git, dict) and isinstance(git.get("branch"), str):
                    state["branch"] = git["branch"] or None
                state["subagent"] = _is_subagent(payload)
            elif isinstance(meta_id, str) and meta_id != state["session"]:
                state["copying"] = True
            continue
        if ltype == "turn_context":
            state["copying"] = False
            if isinstance(payload.get("cwd"), str) and payload["cwd"]:
                state["cwd"] = payload["cwd"]
            if isinstance(payload.get("model"), str) and payload["model"]:
                state["model"] = payload["model"]
            continue
        if state["copying"]:
            continue
        if ltype == "response_item":
            item = item_of(payload, state["subagent"])
            paired = item and payload.get("role") == "user" and item[0] != "system"
            if item and paired and not _first_twin(state, "item", item[2]):
                item = None
        elif ltype == "event_msg":
            text = _event_user_text(payload)
            if text and text.strip() and _first_twin(state, "event", text):
                role, kind, extra = _user_kind(text, state["subagent"])
                item = (role, kind, text, {**extra, "from_event": True})
        elif ltype == "compacted":
            message = payload.get("message")
            if isinstance(message, str) and message.strip():
                item = ("system", "summary", message, {})
        if item is None:
            continue
        stream.produced()
        role, kind, text, extra = item
        session = state["session"] or _session_from_name(ref.path)
        timestamp = parse_timestamp(obj.get("timestamp")) or parse_timestamp(
            payload.get("timestamp")
        )
        yield Record(
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


def count_rollout(path: Path) -> int:
    """Independent unit count over the raw file (see the module docstring's *Unit*)."""
    count = 0
    session: Any = None
    copying = False
    item_users: Counter[bytes] = Counter()
    event_users: Counter[bytes] = Counter()
    for obj in raw_objects(path):
        payload, ltype = obj.get("payload"), obj.get("type")
        if not isinstance(payload, dict):  # the early unwrapped era
            payload = obj
            if ltype in ITEM_TYPES or (ltype is None and "role" in obj):
                ltype = "item"
            elif ltype is None and "id" in obj and "timestamp" in obj:
                ltype = "session_meta"
        if ltype == "session_meta":
            if session is None:
                session = payload.get("id")
                session = session if isinstance(session, str) and session else None
                session = session or _session_from_name(path)
            elif isinstance(payload.get("id"), str) and payload["id"] != session:
                copying = True
            continue
        if ltype == "turn_context":
            copying = False
            continue
        if copying:
            continue
        ptype = payload.get("type") or ("message" if "role" in payload else None)
        if ltype == "event_msg":
            text = _event_text_raw(payload)
            if text:
                event_users[_raw_key(text)] += 1
            continue
        if ltype == "compacted":
            count += isinstance(payload.get("message"), str) and bool(payload["message"].strip())
            continue
        if ltype not in ("response_item", "item"):
            continue
        if ptype in TOOL_CALLS or ptype in TOOL_OUTPUTS:
            count += 1
        elif ptype in ("message", "agent_message"):
            words = _words(payload.get("content"))
            role = payload.get("role")
            if words and (ptype == "agent_message" or role in _MESSAGE_ROLES):
                count += 1
                if role == "user" and not words.lstrip().startswith(INJECTED_PREFIXES):
                    item_users[_raw_key(words)] += 1
        elif ptype == "reasoning":
            body = _words(payload.get("summary")) or _words(payload.get("content"))
            count += bool(body.strip())
    return count + sum(max(0, n - item_users[key]) for key, n in event_users.items())


def _raw_key(text: str) -> bytes:
    """A 16-byte digest, so the count's memory grows with prompts, not their length."""
    return hashlib.blake2b("".join(text.split()).encode(), digest_size=16).digest()


def _words(content: Any) -> str:
    if isinstance(content, str):
        return content if content.strip() else ""
    found = (
        [b["text"] for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]
        if isinstance(content, list)
        else []
    )
    return " ".join(found) if " ".join(found).strip() else ""


def _event_text_raw(payload: dict[str, Any]) -> str:
    if payload.get("type") == "user_message" and isinstance(payload.get("message"), str):
        return payload["message"].strip()
    item = payload.get("item")
    if (
        payload.get("type") == "item_completed"
        and isinstance(item, dict)
        and item.get("type") in _USER_ITEM_TYPES
    ):
        return _words(item.get("content")).strip() or str(item.get("text") or "").strip()
    return ""


# --------------------------------------------------------------------------- legacy JSON


def _legacy_doc(path: Path, diag: Diagnostics) -> tuple[dict[str, Any], list[Any]]:
    try:
        doc = read_json(path, diag)
    except OSError as exc:  # a secret name, refused by the guard
        diag.add(path, "", f"unreadable: {exc}")
        return {}, []
    if not isinstance(doc, dict):
        if doc is not None:
            diag.add(path, "", "not a legacy rollout object")
        return {}, []
    session, items = doc.get("session"), doc.get("items")
    return (
        session if isinstance(session, dict) else {},
        items if isinstance(items, list) else [],
    )


def parse_legacy(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Records of a legacy single-document rollout (whole file each time)."""
    session, items = _legacy_doc(ref.path, diag)
    session_id = session.get("id") if isinstance(session.get("id"), str) else None
    session_id = session_id or _session_from_name(ref.path)
    model = session.get("model") if isinstance(session.get("model"), str) else None
    started = parse_timestamp(session.get("timestamp"))
    cursor.units = 0
    for index, payload in enumerate(items):
        if not isinstance(payload, dict):
            continue
        item = item_of(payload, False)
        if item is None:
            continue
        cursor.units += 1
        role, kind, text, extra = item
        yield Record(
            agent=ref.agent,
            store=ref.store,
            source_path=os.fspath(ref.path),
            locator=f"json:/items/{index}",
            session_id=session_id,
            role=role,
            kind=kind,
            text=text,
            timestamp=parse_timestamp(payload.get("timestamp")) or started,
            model=model,
            host=ref.host,
            extra={k: v for k, v in extra.items() if v is not None},
        )


def count_legacy(path: Path) -> int:
    """Independent unit count: items that are conversational with text."""
    _, items = _legacy_doc(path, Diagnostics())
    count = 0
    for payload in items:
        if not isinstance(payload, dict):
            continue
        ptype = payload.get("type") or ("message" if "role" in payload else None)
        if ptype in TOOL_CALLS or ptype in TOOL_OUTPUTS:
            count += 1
        elif ptype in ("message", "agent_message", "reasoning"):
            body = _words(payload.get("content")) or _words(payload.get("summary"))
            role_ok = ptype != "message" or payload.get("role") in _MESSAGE_ROLES
            count += bool(body.strip()) and role_ok
    return count


# --------------------------------------------------------------------------- history.jsonl


def parse_history(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """One ``user``/``prompt`` record per line of ``history.jsonl``."""
    stream = LineStream(ref, cursor, diag, {})
    source = os.fspath(ref.path)
    for line, obj in stream.lines():
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        session = obj.get("session_id")
        stream.produced()
        yield Record(
            agent=ref.agent,
            store=ref.store,
            source_path=source,
            locator=f"line:{line.lineno}",
            session_id=session if isinstance(session, str) and session else "unknown",
            role="user",
            kind="prompt",
            text=text,
            timestamp=parse_timestamp(obj.get("ts")),
            host=ref.host,
            offset=line.offset,
        )


def count_history(path: Path) -> int:
    """Independent unit count: lines with a non-blank ``text`` string."""
    return sum(
        1 for obj in raw_objects(path) if isinstance(obj.get("text"), str) and obj["text"].strip()
    )


PARSERS: tuple[ParserSpec, ...] = (
    ParserSpec(
        id="codex.rollout_jsonl.v1", parse=parse_rollout, resumable=True, count_raw=count_rollout
    ),
    ParserSpec(id="codex.rollout_json.v1", parse=parse_legacy, count_raw=count_legacy),
    ParserSpec(
        id="codex.history_jsonl.v1", parse=parse_history, resumable=True, count_raw=count_history
    ),
)
