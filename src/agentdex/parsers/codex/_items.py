"""What one Codex response item or user event is: the records it gives.

Shared by the JSONL rollout and the legacy JSON parsers. User text is
sorted here: text Codex composes itself (``<environment_context>``,
``<user_instructions>``, ``# AGENTS.md instructions``... see
:data:`INJECTED_PREFIXES`) is ``system``/``message``; an IDE's wrapper
(``# Context from my IDE setup:`` / ``# Files mentioned by the user:``
... ``## My request for Codex:``) is split into the request the person
typed (the prompt) and the context the IDE added (``system``/``message``,
kept searchable); a ``<codex_delegation>`` task and every user message of
a subagent rollout are ``user``/``message``: an agent wrote them.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers._jsonl import clip, compact_json
from agentdex.records import Kind, Role

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
#: Wrappers an IDE (or the app) puts around what the person typed.
IDE_WRAPPERS = (
    "# Context from my IDE setup:",
    "# Files mentioned by the user:",
    "<in-app-browser-context",
)
_REQUEST = re.compile(r"^## My request(?: for [^\n:]+)?:[ \t]*$", re.MULTILINE)
_IMAGE = re.compile(r"<image\b[^>]*>.*?</image>", re.DOTALL)

#: Response item types that are a tool call, and those that are its output.
TOOL_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
TOOL_OUTPUTS = ("function_call_output", "custom_tool_call_output")
#: Payload types a bare (unwrapped, early era) line may have.
ITEM_TYPES = ("message", "reasoning", "agent_message", *TOOL_CALLS, *TOOL_OUTPUTS)
#: Typed-looking user texts a rollout turn holds at most before deciding them.
HELD_MAX = 256
USER_ITEM_TYPES = ("UserMessage", "userMessage", "user_message")
MESSAGE_ROLES = ("user", "assistant", "developer", "system", "tool")
#: Rollout line types this parser reads; ``event_msg`` payloads are mostly echoes, read
#: only for user text and token counts, so their other types are not drift.
LINE_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
#: Response item types that give no record on purpose (undo snapshots, encrypted compaction).
SKIPPED_ITEM_TYPES = ("ghost_snapshot", "compaction", "compaction_summary")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)

Item = tuple[Role, Kind, str, dict[str, Any]]


def blocks_text(content: Any) -> str:
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


def split_ide_context(text: str) -> tuple[str, str] | None:
    """``(context, request)`` of an IDE-wrapped user text; None when it is not wrapped.

    ``request`` is what follows ``## My request for Codex:`` (``""`` when the
    wrapper holds no request); image tags attached to it go with the context.
    """
    if not text.lstrip().startswith(IDE_WRAPPERS):
        return None
    found = _REQUEST.search(text)
    if found is None:
        return text.strip(), ""
    request = text[found.end() :]
    images = _IMAGE.findall(request)
    context = "\n".join([text[: found.start()].strip(), *images]).strip()
    return context, _IMAGE.sub("", request).strip()


def typed_text(text: str) -> str:
    """What the person typed: the request inside an IDE wrapper, else the text."""
    wrapped = split_ide_context(text)
    return text if wrapped is None else wrapped[1]


def text_key(text: str) -> str:
    """Identity of a user text for pairing twins (the typed part, whitespace-insensitive):
    compared only within one turn, so the text itself (no digest of it)."""
    typed = typed_text(text)
    if "<image" in typed:  # (what ``_IMAGE`` removes starts so)
        typed = _IMAGE.sub("", typed)
    return "".join(typed.split())


def is_injected(text: str) -> bool:
    """Text Codex or the IDE composed, with nothing the person typed in it."""
    head = text.lstrip()
    return head.startswith(INJECTED_PREFIXES) or typed_text(text).strip() == ""


def user_items(text: str, subagent: bool, *, by_agent: bool | None = None) -> list[Item]:
    """The records a user text gives: the typed part first, then any IDE context.

    The typed part is a ``prompt`` unless an agent wrote it (a subagent's
    rollout, a delegation); ``by_agent``, when given, decides that instead
    (the twin event of a user item says who typed it).
    """
    head = text.lstrip()
    if head.startswith(INJECTED_PREFIXES):
        return [("system", "message", text, {"injected": True})]
    wrapped = split_ide_context(text)
    context: list[Item] = []
    if wrapped is not None:
        context = [("system", "message", wrapped[0], {"injected": True, "ide_context": True})]
        text = wrapped[1]
        if not text:
            return context
    typed_by_agent = head.startswith(DELEGATION_PREFIX) or subagent
    typed_by_agent = typed_by_agent if by_agent is None else by_agent
    return [("user", "message" if typed_by_agent else "prompt", text, {}), *context]


def output_text(output: Any) -> str:
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
        return blocks_text(output)
    return "" if output is None else compact_json(output)


def call_text(ptype: str, payload: dict[str, Any]) -> str:
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


def items_of(payload: dict[str, Any], subagent: bool) -> list[Item]:
    """The records one response item gives (none for an unknown type or no text)."""
    ptype = payload.get("type")
    if ptype is None and isinstance(payload.get("role"), str):
        ptype = "message"
    if ptype == "message":
        role, text = payload.get("role"), blocks_text(payload.get("content"))
        if not text.strip():
            return []
        if role == "user":
            return user_items(text, subagent)
        if role == "assistant":
            return [("assistant", "message", text, {})]
        if role in ("developer", "system"):
            return [("system", "message", text, {})]
        if role == "tool":
            return [("tool", "tool_result", text, {})]
        return []
    if ptype == "reasoning":
        text = blocks_text(payload.get("summary")) or blocks_text(payload.get("content"))
        return [("assistant", "reasoning", text, {})] if text.strip() else []
    if ptype == "agent_message":
        text = blocks_text(payload.get("content"))
        extra = {k: payload[k] for k in ("author", "recipient") if isinstance(payload.get(k), str)}
        return [("user", "message", text, extra)] if text.strip() else []
    if ptype in TOOL_CALLS:
        extra = {"call_id": payload.get("call_id") or payload.get("id")}
        return [("assistant", "tool_call", clip(call_text(ptype, payload), extra), extra)]
    if ptype in TOOL_OUTPUTS:
        extra = {"call_id": payload.get("call_id")}
        return [("tool", "tool_result", clip(output_text(payload.get("output")), extra), extra)]
    return []


def unknown_item(payload: dict[str, Any]) -> tuple[str, object] | None:
    """(what, name) of a response item this parser does not know (format drift), else None."""
    ptype = payload.get("type")
    if ptype is None and isinstance(payload.get("role"), str):
        ptype = "message"
    if ptype == "message":
        role = payload.get("role")
        return None if role in MESSAGE_ROLES else ("message role", role)
    if ptype in ITEM_TYPES or ptype in SKIPPED_ITEM_TYPES:
        return None
    return ("payload type", ptype)


def event_user_text(payload: dict[str, Any]) -> str | None:
    """The typed text a user event carries (``user_message`` or user ``item_completed``)."""
    ptype = payload.get("type")
    if ptype == "user_message":
        message = payload.get("message")
        return message if isinstance(message, str) else None
    if ptype == "item_completed":
        item = payload.get("item")
        if isinstance(item, dict) and item.get("type") in USER_ITEM_TYPES:
            text = blocks_text(item.get("content")) or item.get("text") or item.get("message")
            return text if isinstance(text, str) else None
    return None


def session_from_name(path: Path) -> str:
    match = _UUID.search(path.stem)
    return match.group(0) if match else path.stem


def is_subagent(meta: dict[str, Any]) -> bool:
    source = meta.get("source")
    return meta.get("thread_source") == "subagent" or (
        isinstance(source, dict) and "subagent" in source
    )
