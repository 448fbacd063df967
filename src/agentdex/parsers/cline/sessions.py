"""Cline's SDK-era sessions (``cline.sessions_json.v1``).

Cline's 2026 rebuild on ``@cline/core`` (the CLI, the desktop app and the
VS Code extension from 4.0) keeps one folder per session in its session data
directory (``$CLINE_SESSION_DATA_DIR``, else ``$CLINE_DATA_DIR/sessions``,
else ``$CLINE_DIR/data/sessions``, else ``~/.cline/data/sessions`` on every
OS: ``%USERPROFILE%`` on Windows):

* ``<id>/<id>.messages.json``: ``{version: 1, updated_at, agent:
  lead|subagent|teammate, sessionId, taskType?, messages[], system_prompt?}``
  (``messages-contract-v1.md``; a bare list of messages is read too, as
  Cline's own reader does). A message is ``{id, role: user|assistant,
  content: [blocks], ts (epoch ms), modelInfo?: {id, provider, family?},
  metrics?: {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens,
  cost}, metadata?}``; blocks are Anthropic's (``text``, ``thinking``,
  ``redacted_thinking``, ``tool_use``, ``tool_result``) plus Cline's
  ``file`` (``{path, content}``: a file the person attached), ``image`` and
  ``media``.
* ``<id>/<id>.json``: the manifest (``session_id``, ``cwd``,
  ``workspace_root``, ``model``, ``provider``, ``started_at``,
  ``metadata.title``, ``metadata.fork``).
* ``<id>/<agent>.messages.json`` (``<agent>__<team task>.messages.json``): a
  subagent's or teammate's messages, in its root session's folder.

Records (``locator`` ``json:/messages/<i>/content/<j>``; a subagent's file
prefixes its name, ``<file>:json:...``):

* user ``text``: what the person typed, without Cline's ``<user_input
  mode=...>`` / ``<user_command slash=...>`` wrappers and its
  ``<mode_notice>`` elements -> ``user``/``prompt``; the ``<file_content>``
  blocks attached after it and ``file`` blocks -> ``system``/``message``;
  the runtime's own user-role text (``[SYSTEM] ...`` reminders,
  ``<hook_context>`` blocks, the legacy-resume warning) ->
  ``system``/``message``. In a subagent's or teammate's file, user text was
  written by the lead agent: ``user``/``message``.
* ``tool_result`` -> ``tool``/``tool_result``; assistant ``thinking`` ->
  ``reasoning``, the ``text`` blocks of a message -> one reply,
  ``tool_use`` -> ``tool_call``. Other block types are format drift.

Time: the message's ``ts``, else the one before, else the manifest's
``started_at``. cwd: the manifest's ``cwd`` (else ``workspace_root``).
Title: the manifest's ``metadata.title``.

**A task carried over from the task folders.** When Cline (VS Code 4.x)
resumes a task of its older format it converts the task's history into a
session *with the task's id* and appends a warning message ("Warning: this
is a legacy conversation, ..."); the task folder stays where it was and
agentdex reads it (:mod:`agentdex.parsers.cline`). So the messages up to and
including that warning are a copy of the task folder: they give no records
and no usage here (the task folder gives both, per request), and the
conversation continues in this file after the warning.

**Usage** (:mod:`._sdk_usage`): every assistant message with ``metrics``
is one model call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    clip,
    compact_json,
    dict_of,
    make_record,
    number_parts,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.parsers.cline._sdk_usage import note_call
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Kind, Record, Role, parse_timestamp

__all__ = ["PARSERS", "parse_session"]

#: The sentence Cline appends to a task it converted from the task folders
#: (``apps/vscode/src/sdk/legacy-task-handling.ts`` ``LEGACY_RESUME_MODEL_WARNING``).
LEGACY_WARNING = "Warning: this is a legacy conversation, which means tool names may have changed."
#: Content blocks read or knowingly skipped; others are format drift.
KNOWN_BLOCKS = frozenset(
    {"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "file", "image", "media"}
)
_WRAPPER = re.compile(r"</?(?:user_input|user_command)\b[^>]*>")
_NOTICE = re.compile(r"<mode_notice>.*?</mode_notice>", re.DOTALL)
_ATTACHED = re.compile(r"<file_content\b[^>]*>.*?</file_content>", re.DOTALL)
#: User-role text the runtime writes, not the person.
_HARNESS = re.compile(r"\A\s*(?:\[SYSTEM\]|<hook_context\b|\[migration\])")

Part = tuple[Role, Kind, str, dict[str, Any]]


def _messages(doc: Any) -> tuple[list[Any], dict[str, Any]] | None:
    """(messages, header) of a messages file; None when it is not one."""
    if isinstance(doc, list):
        return doc, {}
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return doc["messages"], doc
    return None


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict_of(b) for b in content] if isinstance(content, list) else []


def manifest_of(folder: Path) -> dict[str, Any]:
    """The session's manifest (``<id>/<id>.json``), {} when absent or unreadable."""
    path = folder / f"{folder.name}.json"
    if not path.is_file():
        return {}
    doc = read_json(path, Diagnostics())
    return doc if isinstance(doc, dict) else {}


def copied_until(messages: list[Any]) -> int:
    """Index of the legacy-resume warning (the end of a converted task's copy), else -1."""
    for i, message in enumerate(messages):
        message = dict_of(message)
        if message.get("role") != "user":
            continue
        if any(LEGACY_WARNING in str_of(b.get("text")) for b in _blocks(message.get("content"))):
            return i
    return -1


def _result_item(item: Any) -> str:
    """One item of a tool result's content: a text block, or Cline's ``{query, result |
    error, success}`` object (its tools' answers, one per file or command)."""
    if isinstance(item, str):
        return item
    item = dict_of(item)
    if item.get("type") == "text":
        return str_of(item.get("text"))
    if "result" in item or "error" in item:
        value = item.get("result") if "result" in item else item.get("error")
        body = value if isinstance(value, str) else compact_json(value)
        return "\n".join(part for part in (str_of(item.get("query")), body) if part)
    return compact_json(item) if item else ""


def result_text(content: Any) -> str:
    """A tool result's text (``content`` is a string, a list of items or one item)."""
    items = content if isinstance(content, list) else [content]
    return "\n\n".join(t for t in (_result_item(i).strip() for i in items) if t)


def typed_text(raw: str) -> tuple[str, str]:
    """(what the person typed, what was attached to it) of a user text block."""
    attached = "\n\n".join(m.group(0) for m in _ATTACHED.finditer(raw))
    text = _WRAPPER.sub("", _NOTICE.sub("", _ATTACHED.sub("", raw)))
    return text.strip(), attached.strip()


def user_parts(blocks: list[dict[str, Any]], lead: bool) -> list[tuple[int, Part]]:
    """(block index, record part) of a user message's blocks."""
    parts: list[tuple[int, Part]] = []
    for j, block in enumerate(blocks):
        btype = block.get("type")
        if btype == "text":
            raw = str_of(block.get("text"))
            if not raw.strip():
                continue
            if _HARNESS.match(raw) or LEGACY_WARNING in raw:
                parts.append((j, ("system", "message", raw.strip(), {})))
                continue
            typed, attached = typed_text(raw)
            if typed:
                parts.append((j, ("user", "prompt" if lead else "message", typed, {})))
            if attached:
                parts.append((j, ("system", "message", clip(attached), {})))
        elif btype == "file":
            body = str_of(block.get("content"))
            if body.strip():
                text = clip(f"{str_of(block.get('path'))}\n{body}".strip())
                parts.append((j, ("system", "message", text, {"path": block.get("path")})))
        elif btype == "tool_result":
            text = result_text(block.get("content")).strip()
            if text:
                extra = {"call_id": block.get("tool_use_id"), "tool": block.get("name")}
                parts.append((j, ("tool", "tool_result", clip(text), extra)))
    return parts


def assistant_parts(blocks: list[dict[str, Any]]) -> list[tuple[int, Part]]:
    """Reasoning, one reply (at its first text block) and tool calls, in block order."""
    parts: list[tuple[int, Part]] = []
    reply: list[str] = []
    reply_at: int | None = None
    for j, block in enumerate(blocks):
        btype = block.get("type")
        if btype == "text" and str_of(block.get("text")).strip():
            reply.append(str_of(block.get("text")).strip())
            reply_at = j if reply_at is None else reply_at
        elif btype == "thinking" and str_of(block.get("thinking")).strip():
            parts.append((j, ("assistant", "reasoning", str_of(block["thinking"]).strip(), {})))
        elif btype == "tool_use":
            text = tool_call_text(block.get("name"), block.get("input"))
            parts.append((j, ("assistant", "tool_call", text, {"call_id": block.get("id")})))
    if reply_at is not None:
        parts.append((reply_at, ("assistant", "message", "\n\n".join(reply), {})))
    parts.sort(key=lambda item: item[0])
    return parts


def parse_session(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    cursor.units = 0
    doc = read_json(path, diagnostics)
    if doc is None:
        return
    found = _messages(doc)
    if found is None:
        diagnostics.add(path, "", "not a Cline session messages file; skipped")
        return
    messages, header = found
    folder = path.parent
    session = folder.name
    own_file = path.name == f"{session}.messages.json"
    lead = own_file and header.get("agent") in (None, "lead")
    qualifier = "" if own_file else f"{path.name}:"
    version = header.get("version")
    if version not in (None, 1):
        diagnostics.unrecognised("file version", version, path=path, locator="json:/version")
    manifest = manifest_of(folder)
    cwd = opt_str(manifest.get("cwd")) or opt_str(manifest.get("workspace_root"))
    title = " ".join(str_of(dict_of(manifest.get("metadata")).get("title")).split())
    if own_file and title:
        cursor.titles[session] = title
    task_model = opt_str(manifest.get("model"))
    prefix = "json:" if isinstance(doc, list) else "json:/messages"
    stamp = parse_timestamp(manifest.get("started_at"))
    skip_to = copied_until(messages)
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        stamp = parse_timestamp(message.get("ts")) or stamp
        if i <= skip_to:
            continue
        loc = f"{qualifier}{prefix}/{i}"
        blocks = _blocks(message.get("content"))
        for j, block in enumerate(blocks):
            if block.get("type") not in KNOWN_BLOCKS:
                diagnostics.unrecognised(
                    "content block", block.get("type"), path=path,
                    locator=f"{loc}/content/{j}",
                )  # fmt: skip
        model = opt_str(dict_of(message.get("modelInfo")).get("id")) or task_model
        if message["role"] == "assistant":
            parts = assistant_parts(blocks)
            if "metrics" in message:
                note_call(ref, cursor, diagnostics, message, session, loc, stamp, model, cwd)
        else:
            parts = user_parts(blocks, lead)
        if not parts:
            continue
        cursor.units += 1
        by_block: dict[int, list[Record]] = {}
        for j, (role, kind, text, extra) in parts:
            record = make_record(
                ref, f"{loc}/content/{j}", session, role, kind, text, timestamp=stamp, cwd=cwd,
                model=model if role == "assistant" else None,
                extra={k: v for k, v in extra.items() if v is not None},
            )  # fmt: skip
            by_block.setdefault(j, []).append(record)
        for records in by_block.values():
            yield from number_parts(records)


def _load(path: Path) -> tuple[list[Any], dict[str, Any]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return [], {}
    return _messages(doc) or ([], {})


def _after_copy(path: Path) -> Iterator[dict[str, Any]]:
    messages, _ = _load(path)
    skip_to = copied_until(messages)
    for i, message in enumerate(messages):
        if i > skip_to and isinstance(message, dict):
            yield message


def count_raw(path: Path) -> int:
    """Messages (after a converted task's copy) holding a non-blank text, thinking, file,
    tool call or tool result."""
    count = 0
    for message in _after_copy(path):
        if message.get("role") not in ("user", "assistant"):
            continue
        for block in _blocks(message.get("content")):
            btype = block.get("type")
            body = block.get({"thinking": "thinking", "file": "content"}.get(str(btype), "text"))
            if btype in ("tool_use", "tool_result") or (
                btype in ("text", "thinking", "file") and str_of(body).strip()
            ):
                count += 1
                break
    return count


def count_roles(path: Path) -> RoleCounts:
    """Prompts: user text blocks of a lead file that are not the runtime's; replies:
    assistant messages with text."""
    counts: RoleCounts = {}
    session = path.parent.name
    _, header = _load(path)
    lead = path.name == f"{session}.messages.json" and header.get("agent") in (None, "lead")
    for message in _after_copy(path):
        texts = [
            str_of(b.get("text"))
            for b in _blocks(message.get("content"))
            if b.get("type") == "text"
        ]
        if message.get("role") == "assistant" and any(t.strip() for t in texts):
            add_role(counts, session, "replies")
        elif message.get("role") == "user" and lead:
            for text in texts:
                harness = _HARNESS.match(text) or LEGACY_WARNING in text
                if not harness and typed_text(text)[0]:
                    add_role(counts, session, "prompts")
    return counts


PARSERS = (
    ParserSpec(
        "cline.sessions_json.v1", parse_session, count_raw=count_raw, count_roles=count_roles
    ),
)
