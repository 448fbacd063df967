"""Continue sessions (``~/.continue/sessions/<id>.json``), and Kiro IDE's, which share the shape.

continuedev/continue ``core/index.d.ts`` (``Session``, ``ChatHistoryItem``,
``ChatMessage``) and ``core/util/paths.ts``: a session is ``{sessionId, title,
workspaceDirectory, history: [{message: {role, content, toolCalls?, usage?,
toolCallId?}, contextItems, promptLogs, reasoning?, conversationSummary?}],
chatModelTitle?, usage?}``; ``sessions.json`` beside the files is the index
``[{sessionId, title, dateCreated, workspaceDirectory, messageCount?}]``.

* ``user`` = prompt (its text; attached context items are not what was typed);
  ``assistant`` = one reply (its text) plus a tool call per ``toolCalls`` entry;
  ``thinking`` messages and an item's ``reasoning.text`` = reasoning; ``tool``
  = tool result; ``system`` = ``system``/``message``; an item's
  ``conversationSummary`` = summary. Other roles are format drift.
* cwd: ``workspaceDirectory``, a ``file://`` URI in the session file (a plain
  path in the index): decoded to a path.
* Time: messages carry none. Every record of a session gets the index's
  ``dateCreated`` (epoch ms, a string in real files) when the index lists it,
  else the file's modification time.
* Title: the session title, unless it is a model's ``<think>`` preamble
  rather than a title (the ``<think>…</think>`` part is dropped; a title that
  is only a preamble, or the default "New Session", is none).
* Usage: each assistant message's ``usage`` (one model call), read as
  Continue's own cost calculation reads it: ``promptTokens`` fresh input,
  ``promptTokensDetails.cachedTokens`` / ``cacheWriteTokens`` cache reads and
  writes, ``completionTokens`` output (``reasoningTokens`` its reasoning part).

The index parser gives titles only, and a diagnostic for each session it
lists whose file is gone (Continue does not always remove the entry).

Kiro IDE (closed source; shape from real files as read by the agentsview
peer): ``workspace-sessions/<base64 path>/<uuid>.json`` is this shape; its
older ``<workspace hash>/<hash>.chat`` files are ``{executionId, chat: [{role:
human|bot|tool, content}], metadata: {modelId, startTime, endTime}}``, where
Kiro's own system prompt and steering rules are sent as ``human`` turns.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    dict_of,
    file_mtime,
    make_record,
    number_parts,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Kind, Record, Role, Usage, parse_timestamp
from agentdex.uris import uri_to_path

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
DEFAULT_TITLES = frozenset({"new session", ""})
KNOWN_ROLES = frozenset({"user", "assistant", "thinking", "tool", "system"})


def clean_title(title: object) -> str | None:
    """A session title without a model's ``<think>`` preamble; None when nothing is left."""
    if not isinstance(title, str):
        return None
    text = _THINK.sub("", title).strip()
    return None if text.lower() in DEFAULT_TITLES else text


def workspace_path(value: object) -> str | None:
    """``workspaceDirectory`` as a path (the session file has a ``file://`` URI)."""
    if not isinstance(value, str) or not value.strip():
        return None
    if "://" in value:
        return uri_to_path(value)
    return value


def _index(folder: Path) -> dict[str, dict[str, Any]]:
    index = folder / "sessions.json"
    data = read_json(index, Diagnostics()) if index.is_file() else None
    entries = data if isinstance(data, list) else []
    return {str(e.get("sessionId")): e for e in entries if isinstance(e, dict)}


def _usage(
    ref: SourceRef, sid: str, where: str, message: dict[str, Any], common: dict[str, Any],
    cursor: ParseCursor, diag: Diagnostics,
) -> None:  # fmt: skip
    raw = message.get("usage")
    if raw is None:
        return
    counts = read_counts(raw, ["promptTokens", "completionTokens"])
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, where, counts)
        return
    details = dict_of(dict_of(raw).get("promptTokensDetails"))
    extra = read_counts(details, [], ["cachedTokens", "cacheWriteTokens"])
    out = read_counts(dict_of(dict_of(raw).get("completionTokensDetails")), [], ["reasoningTokens"])
    if isinstance(extra, str) or isinstance(out, str):
        cursor.skip_usage(diag, ref.path, where, extra if isinstance(extra, str) else str(out))
        return
    cursor.add_usage(
        Usage(
            agent=ref.agent,
            store=ref.store,
            source_path=os.fspath(ref.path),
            locator=where,
            session_id=sid,
            call_id=f"{sid}:{where}",
            input_tokens=counts["promptTokens"],
            cache_read_tokens=extra["cachedTokens"],
            cache_write_tokens=extra["cacheWriteTokens"],
            output_tokens=counts["completionTokens"],
            reasoning_tokens=out["reasoningTokens"],
            timestamp=common["timestamp"],
            model=common["model"],
            cwd=common["cwd"],
            host=ref.host,
        ),
        diag,
    )


def parse_session(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    data = read_json(path, diagnostics)
    if not isinstance(data, dict):
        if data is not None:
            diagnostics.add(path, "", "not a session object; skipped")
        return
    sid = str_of(data.get("sessionId")) or path.stem
    listed = _index(path.parent).get(sid, {})
    title = clean_title(data.get("title")) or clean_title(listed.get("title"))
    if title:
        cursor.titles[sid] = title
    common: dict[str, Any] = {
        "timestamp": parse_timestamp(listed.get("dateCreated")) or file_mtime(path),
        "cwd": workspace_path(data.get("workspaceDirectory"))
        or workspace_path(listed.get("workspaceDirectory")),
        "model": opt_str(data.get("chatModelTitle")),
    }
    history = data.get("history")
    for i, item in enumerate(history if isinstance(history, list) else []):
        item = dict_of(item)
        message = dict_of(item.get("message"))
        where = f"json:/history/{i}"
        role = message.get("role")
        out: list[Record] = []

        def add(
            r: Any, k: Any, text: str, where: str = where, out: list[Record] = out, **extra: Any
        ) -> None:
            if text.strip():
                fields = dict(common, model=common["model"] if r == "assistant" else None)
                out.append(make_record(ref, where, sid, r, k, text, extra=extra, **fields))

        text = as_text(message.get("content")).strip()
        if role == "user":
            add("user", "prompt", text)
        elif role == "assistant":
            add("assistant", "reasoning", str_of(dict_of(item.get("reasoning")).get("text")))
            add("assistant", "message", text)
            for call in message.get("toolCalls") or []:
                function = dict_of(dict_of(call).get("function"))
                add("assistant", "tool_call",
                    tool_call_text(function.get("name"), function.get("arguments")),
                    call_id=dict_of(call).get("id"))  # fmt: skip
            _usage(ref, sid, where, message, common, cursor, diagnostics)
        elif role == "thinking":
            add("assistant", "reasoning", text)
        elif role == "tool":
            add("tool", "tool_result", clip(text), call_id=message.get("toolCallId"))
        elif role == "system":
            add("system", "message", text)
        elif message:
            diagnostics.unrecognised("message role", role, path=path, locator=where)
        summary = item.get("conversationSummary")
        if isinstance(summary, str):
            add("system", "summary", summary)
        if out:
            cursor.units += 1
            yield from number_parts(out)


def parse_index(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    """Titles from the index, and one diagnostic per listed session whose file is gone."""
    path = Path(ref.path)
    data = read_json(path, diagnostics)
    for i, entry in enumerate(data if isinstance(data, list) else []):
        sid = str_of(dict_of(entry).get("sessionId"))
        if not sid:
            continue
        title = clean_title(dict_of(entry).get("title"))
        if title:
            cursor.titles[sid] = title
        if not (path.parent / f"{sid}.json").exists():
            diagnostics.add(path, f"json:/{i}", f"listed session {sid} has no file (deleted)")
    return iter(())


def _raw_text(content: object) -> str:
    """A message's text by plain ``json`` (a string, or its parts' ``text``)."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def count_sessions(path: Path) -> int:
    """History items of a known role with text, tool calls or a summary (plain ``json``)."""
    data = read_json(path, Diagnostics())
    history = data.get("history") if isinstance(data, dict) else None
    count = 0
    for item in history if isinstance(history, list) else []:
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict) or message.get("role") not in KNOWN_ROLES:
            continue
        text = _raw_text(message.get("content"))
        reasoning = (item.get("reasoning") or {}).get("text") if isinstance(item, dict) else ""
        count += bool(
            text.strip()
            or message.get("toolCalls")
            or (message.get("role") == "assistant" and str(reasoning or "").strip())
            or str(item.get("conversationSummary") or "").strip()
        )
    return count


def count_session_roles(path: Path) -> RoleCounts:
    """User messages with text (prompts), assistant messages with text (replies)."""
    data = read_json(path, Diagnostics())
    if not isinstance(data, dict):
        return {}
    sid = str(data.get("sessionId") or path.stem)
    counts: RoleCounts = {}
    for item in data.get("history") or []:
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict):
            continue
        text = _raw_text(message.get("content"))
        if not text.strip():
            continue
        if message.get("role") == "user":
            add_role(counts, sid, "prompts")
        elif message.get("role") == "assistant":
            add_role(counts, sid, "replies")
    return counts


#: Kiro's own system prompt and steering rules, sent as ``human`` turns (agentsview peer).
_KIRO_HARNESS = ("# System Prompt", "# Identity", "<identity>", "## Included Rules",
                 "You are operating in a workspace")  # fmt: skip
_KIRO_WRAPPER = re.compile(r"\A\s*<kiro-ide-message>(.*?)</kiro-ide-message>\s*\Z", re.DOTALL)


def _kiro_turn(role: object, content: str) -> tuple[Role, Kind, str] | None:
    text = content.strip()
    if not text:
        return None
    if role == "human":
        if text.startswith(_KIRO_HARNESS):
            return "system", "message", text
        wrapped = _KIRO_WRAPPER.match(text)
        return "user", "prompt", (wrapped.group(1).strip() if wrapped else text)
    if role == "bot":
        if text == "I will follow these instructions.":
            return "system", "message", text
        return "assistant", "message", text
    if role == "tool":
        return "tool", "tool_result", clip(text)
    return None


def parse_kiro_chat(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    data = read_json(path, diagnostics)
    if not isinstance(data, dict):
        return
    meta = dict_of(data.get("metadata"))
    sid = f"{path.parent.name}:{path.stem}"
    when = parse_timestamp(meta.get("startTime")) or file_mtime(path)
    model = opt_str(meta.get("modelId"))
    chat = data.get("chat")
    for i, turn in enumerate(chat if isinstance(chat, list) else []):
        turn = dict_of(turn)
        role = turn.get("role")
        found = _kiro_turn(role, str_of(turn.get("content")))
        if found is None:
            if role not in ("human", "bot", "tool"):
                diagnostics.unrecognised("chat role", role, path=path, locator=f"json:/chat/{i}")
            continue
        who, kind, text = found
        cursor.units += 1
        yield make_record(
            ref,
            f"json:/chat/{i}",
            sid,
            who,
            kind,
            text,
            timestamp=when,
            model=model if who == "assistant" else None,
        )


def count_kiro_chat(path: Path) -> int:
    data = read_json(path, Diagnostics())
    chat = data.get("chat") if isinstance(data, dict) else None
    turns = chat if isinstance(chat, list) else []
    return sum(
        1
        for t in turns
        if isinstance(t, dict)
        and t.get("role") in ("human", "bot", "tool")
        and str(t.get("content") or "").strip()
    )


PARSERS = (
    ParserSpec("continue.session_json.v1", parse_session, count_raw=count_sessions,
               count_roles=count_session_roles),
    ParserSpec("continue.sessions_index.v1", parse_index),
    ParserSpec("kiro-ide.session_json.v1", parse_session, count_raw=count_sessions,
               count_roles=count_session_roles),
    ParserSpec("kiro-ide.sessions_index.v1", parse_index),
    ParserSpec("kiro-ide.chat_json.v1", parse_kiro_chat, count_raw=count_kiro_chat),
)  # fmt: skip
