"""Gemini CLI's text: message content, thoughts, tool calls and their results as record text
(:mod:`agentdex.parsers.gemini_cli`)."""

from __future__ import annotations

from typing import Any

import orjson

#: Tool-call arguments longer than this are shortened in the record text.
MAX_ARGS_CHARS = 2000


def content_text(content: object) -> str:
    """Text of a Gemini ``content``: a string, a ``{text}`` part, or a list of those."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else [content]
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "".join(texts)


def thought_text(thought: object) -> str:
    if isinstance(thought, str):
        return thought
    if not isinstance(thought, dict):
        return ""
    subject = thought.get("subject")
    description = thought.get("description")
    parts = [p.strip() for p in (subject, description) if isinstance(p, str) and p.strip()]
    return ": ".join(parts)


def compact(value: object, limit: int = MAX_ARGS_CHARS) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def call_text(call: dict[str, Any]) -> str:
    name = call.get("name") or call.get("displayName") or "tool"
    args = call.get("args")
    return f"{name}({compact(args)})" if args not in (None, {}, []) else f"{name}()"


def result_text(call: dict[str, Any]) -> str:
    """Readable output of a tool call: functionResponse outputs, else the display text."""
    pieces: list[str] = []
    result = call.get("result")
    for part in result if isinstance(result, list) else [result]:
        if isinstance(part, str):
            pieces.append(part)
            continue
        if not isinstance(part, dict):
            continue
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            if isinstance(body, dict):
                for key in ("output", "error", "content"):
                    value = body.get(key)
                    if isinstance(value, str) and value:
                        pieces.append(value)
                        break
                else:
                    if body:
                        pieces.append(compact(body))
            elif isinstance(body, str):
                pieces.append(body)
        elif isinstance(part.get("text"), str):
            pieces.append(part["text"])
    if not any(p.strip() for p in pieces):
        display = call.get("resultDisplay")
        if isinstance(display, str):
            pieces = [display]
    return "\n".join(p for p in pieces if p)
