"""Cline's independent counters (plain ``json`` and regexes; none of the parser's code).

Roles come from Cline's *UI* log (``ui_messages.json`` beside the history)
when it exists: there the person's words are ``say`` entries of their own
(the task as the first entry, then every ``user_feedback``) and each reply
the agent wrote is a ``say: text`` entry after the task. Without a UI log,
the raw history is counted: the four user tags in a user text, or ending a
tool result (outside ``<environment_details>`` and what ``@`` mentions
attached), and assistant messages with text
beyond Cline's ``[Response interrupted ...]`` note.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentdex.parsers.base import RoleCounts

_ENV = re.compile(r"<environment_details>.*?(</environment_details>|$)", re.S)
_TAGGED = re.compile(r"<(task|feedback|answer|user_message)>\s*\S.*?</\1>", re.S)
_TRAILING = re.compile(r"<(feedback|answer|user_message)>\s*\S.*?</\1>\s*$", re.S)
#: Blocks ``@`` mentions append after the text (file, folder, URL, problems, terminal, git).
_ATTACHED = re.compile(
    r"<(file_content|folder_content|url_content|workspace_diagnostics|terminal_output"
    r"|git_working_state|git_commit)\b[^>]*>.*?</\1>",
    re.S,
)
_RESULT_HEADER = re.compile(
    r"^\s*(\[[a-z][a-z0-9_]*\b.*?\] Result:|Tool \[[^\]\n]+\] was not executed)", re.S
)
_NOTE = re.compile(r"\[Response interrupted by [^\]\n]*\]")


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def _texts(msg: dict[str, Any]) -> list[tuple[str, str]]:
    """(block type, text) for the text-bearing blocks of a message."""
    content = msg.get("content")
    if isinstance(content, str):
        return [("text", content)]
    out = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            out.append(("text", block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            out.append(("thinking", block["thinking"]))
        elif kind == "tool_use":
            out.append(("tool_use", "x"))
        elif kind == "tool_result":
            body = block.get("content")
            if isinstance(body, list):
                body = "\n".join(b.get("text", "") for b in body if isinstance(b, dict))
            out.append(("tool_result", body if isinstance(body, str) else ""))
    return out


def count_raw(path: Path) -> int:
    """Messages with a tool call, or text that is not only environment details."""
    data = _load(path)
    count = 0
    for msg in data if isinstance(data, list) else []:
        if not isinstance(msg, dict):
            continue
        for kind, text in _texts(msg):
            if kind == "tool_use" or _ENV.sub("", text).strip():
                count += 1
                break
    return count


def count_roles(path: Path) -> RoleCounts:
    """Prompts and replies of the task (one conversation, the folder's name)."""
    task = path.parent.name
    ui = _load(path.parent / "ui_messages.json")
    if isinstance(ui, list) and ui:
        return {task: _from_ui([e for e in ui if isinstance(e, dict)])}
    data = _load(path)
    prompts = replies = 0
    for msg in data if isinstance(data, list) else []:
        if not isinstance(msg, dict):
            continue
        texts = [t for kind, t in _texts(msg) if kind in ("text", "tool_result")]
        if msg.get("role") == "assistant":
            replies += bool(_NOTE.sub("", "".join(texts)).strip())
            continue
        for kind, text in _texts(msg):
            body = _ATTACHED.sub("", _ENV.sub("", text)).strip()
            if kind == "tool_result" or _RESULT_HEADER.match(body):
                prompts += bool(_TRAILING.search(body))
            elif kind == "text":
                prompts += len(_TAGGED.findall(body))
    return {task: {"prompts": prompts, "replies": replies}}


def _from_ui(entries: list[dict[str, Any]]) -> dict[str, int]:
    def said(entry: dict[str, Any], what: str) -> bool:
        text = entry.get("text")
        return entry.get("say") == what and isinstance(text, str) and bool(text.strip())

    first = entries[0]
    prompts = int(said(first, "task") or said(first, "text"))
    prompts += sum(said(e, "user_feedback") for e in entries[1:])
    replies = sum(said(e, "text") for e in entries[1:])
    return {"prompts": prompts, "replies": replies}
