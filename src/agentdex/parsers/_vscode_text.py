"""VS Code Copilot Chat's text: prompts, markdown replies, links, tool arguments and the
workspace folder of a session file (:mod:`agentdex.parsers.vscode_copilot`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from agentdex.readers import Diagnostics, read_json
from agentdex.uris import uri_to_path

#: Tool-call arguments longer than this are shortened in the record text.
MAX_ARGS_CHARS = 2000
MARKDOWN_KINDS = frozenset({"markdownContent", "markdownVuln", "markdown"})
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def markdown_value(value: object) -> str:
    """Text of a string or a ``MarkdownString``-shaped ``{value}``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("value"), str):
        return str(value["value"])
    return ""


def readable_links(text: str) -> str:
    """``Read [](file:///a/b.py)`` -> ``Read /a/b.py``: tool messages link files without labels."""

    def label(match: re.Match[str]) -> str:
        return match.group(1) or uri_to_path(match.group(2)) or match.group(2)

    return _LINK.sub(label, text)


def uri_label(value: object) -> str:
    """A path or name for a serialized URI, a Location (``{uri, range}``) or a string."""
    if isinstance(value, dict) and "uri" in value:
        value = value["uri"]  # a Location: one level, never recursive
    if isinstance(value, str):
        return uri_to_path(value) or value
    if isinstance(value, dict):
        for key in ("fsPath", "path", "external"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return ""


def compact(value: object) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = orjson.dumps(value).decode()
        except TypeError:
            text = str(value)
    return text if len(text) <= MAX_ARGS_CHARS else text[: MAX_ARGS_CHARS - 1] + "…"


def message_text(message: object) -> str:
    """A request's prompt: ``message.text``, else its parts' text (older sessions)."""
    if isinstance(message, str):
        return message
    if not isinstance(message, dict):
        return ""
    if isinstance(message.get("text"), str):
        return str(message["text"])
    parts = message.get("parts")
    if isinstance(parts, list):
        return "".join(
            p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def workspace_cwd(session_path: Path, diagnostics: Diagnostics) -> str | None:
    """The workspace folder of a ``workspaceStorage/<md5>/chatSessions/<id>`` file."""
    storage = session_path.parent.parent
    if session_path.parent.name != "chatSessions" or storage.parent.name != "workspaceStorage":
        return None
    meta_path = storage / "workspace.json"
    try:
        if not meta_path.is_file():
            return None
    except OSError:
        return None
    data = read_json(meta_path, diagnostics)
    if not isinstance(data, dict):
        return None
    folder = uri_to_path(data.get("folder"))
    if folder:
        return folder
    workspace = uri_to_path(data.get("workspace"))
    if workspace and workspace.endswith(".code-workspace"):
        return str(Path(workspace).parent)
    return None


def thinking_text(value: object) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return markdown_value(value)


def reply_piece(kind: str | None, part: dict[str, Any]) -> str | None:
    """The text a markdown or inline-reference part adds to the reply (None: not one)."""
    if kind is None or kind in MARKDOWN_KINDS:
        return markdown_value(part.get("content", part))
    if kind == "inlineReference":
        name = part.get("name")
        label = name if isinstance(name, str) and name else uri_label(part.get("inlineReference"))
        return f"`{label}`" if label else ""
    return None
