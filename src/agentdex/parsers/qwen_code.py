"""Qwen Code sessions (``~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl``).

One ``ChatRecord`` per line (QwenLM/qwen-code
``packages/core/src/services/chatRecordingService.ts``): ``uuid``,
``parentUuid`` (a tree: a rewind starts a branch; abandoned branches are
kept), ``sessionId``, ``timestamp`` (ISO), ``type`` (``user`` / ``assistant``
/ ``tool_result`` / ``system``), ``subtype``, ``provenance``, ``cwd``,
``version``, ``gitBranch``, ``message`` (a Gemini ``Content``: ``parts`` of
``text``, ``text`` + ``thought``, ``functionCall``, ``functionResponse``),
``model``, ``usageMetadata``, ``toolCallResult``, ``systemPayload``,
``isSidechain``/``agentId`` (a subagent's records).

* Prompt: a ``user`` record with no subtype (or ``mid_turn_user_message``:
  typed while tools ran) whose provenance is ``real_user`` (or absent, in
  files before provenance existed) and that is not a subagent's; its text is
  ``systemPayload.displayText`` when given (what the person typed, before
  ``@file`` expansion or hook context), else the text parts. Other user
  records (``cron``, ``notification``, goal control, a subagent's task) are
  ``user``/``message``.
* ``assistant``: its text parts are one reply; ``thought`` parts are
  reasoning; ``functionCall`` parts are tool calls. ``tool_result``: each
  ``functionResponse`` (else the ``toolCallResult`` display) is a tool result.
* ``system``: ``custom_title`` is the title (the last one wins: Qwen re-appends
  it); ``chat_compression`` gives its summary turn as a ``summary``; a
  ``slash_command`` invocation is ``user``/``message``. The other subtypes
  Qwen writes (telemetry, snapshots, goals...) are known and skipped;
  anything else is format drift, reported per Qwen version.
* Usage: ``usageMetadata`` of each assistant record (``promptTokenCount``
  includes the cached tokens; reasoning is counted once whether the provider
  put it inside ``candidatesTokenCount`` (OpenAI-compatible) or beside it
  (Gemini), told apart by ``totalTokenCount``).

Resumable: every line carries its own session, cwd and branch.
"""

from __future__ import annotations

import os
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
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import Diagnostics, JsonlReader
from agentdex.records import Record, Usage, parse_timestamp

#: Subtypes of user records that are what a person typed.
TYPED_SUBTYPES = (None, "mid_turn_user_message")
#: Every subtype Qwen Code writes (``ChatRecord['subtype']``); others are drift.
KNOWN_SUBTYPES = frozenset(
    {
        "session_notes", "chat_compression", "slash_command", "ui_telemetry", "at_command",
        "attribution_snapshot", "notification", "background_task_completed", "cron",
        "mid_turn_user_message", "custom_title", "parent_session", "session_source",
        "session_execution_engine", "omni_recall", "session_model", "session_approval_mode",
        "rewind", "agent_bootstrap", "agent_launch_prompt", "agent_retry",
        "agent_session_ready", "file_history_snapshot", "user_text_elements",
        "session_artifact_event", "session_artifact_snapshot", "session_sources_snapshot",
        "branch_checkpoint", "goal_state", "goal_runtime", "goal_turn_end",
        "realtime_message", "turn_result", "managed_session_header_v1",
        "managed_session_event_v1", "managed_session_commit_v1",
    }
)  # fmt: skip
KNOWN_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
_PART_KEYS = frozenset(
    {"text", "thought", "thoughtSignature", "functionCall", "functionResponse", "inlineData",
     "fileData", "executableCode", "codeExecutionResult", "videoMetadata"}
)  # fmt: skip


def _parts(obj: dict[str, Any]) -> list[dict[str, Any]]:
    parts = dict_of(obj.get("message")).get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _plain_text(parts: list[dict[str, Any]]) -> str:
    return "".join(
        str_of(p.get("text")) for p in parts if "text" in p and not p.get("thought")
    ).strip()


def is_prompt(obj: dict[str, Any]) -> bool:
    """A user record a person typed (see the module docstring)."""
    return (
        obj.get("type") == "user"
        and obj.get("subtype") in TYPED_SUBTYPES
        and obj.get("provenance") in (None, "real_user")
        and not obj.get("isSidechain")
    )


def _user_text(obj: dict[str, Any]) -> str:
    shown = dict_of(obj.get("systemPayload")).get("displayText")
    if isinstance(shown, str) and shown.strip():
        return shown.strip()
    return _plain_text(_parts(obj))


def _response_text(part: dict[str, Any]) -> str:
    response = part.get("response")
    if isinstance(response, dict):
        for key in ("output", "error", "llmContent"):
            value = response.get(key)
            if isinstance(value, str) and value.strip():
                return value
        return compact_json(response)
    return str_of(response)


class _Line:
    """The records of one ChatRecord line."""

    def __init__(self, ref: SourceRef, obj: dict[str, Any], where: str, offset: int) -> None:
        self.ref, self.obj, self.where = ref, obj, where
        self.sid = str_of(obj.get("sessionId")) or Path(ref.path).stem
        self.common: dict[str, Any] = {
            "timestamp": parse_timestamp(obj.get("timestamp")),
            "cwd": opt_str(obj.get("cwd")),
            "branch": opt_str(obj.get("gitBranch")),
            "model": opt_str(obj.get("model")),
            "offset": offset,
        }
        if obj.get("isSidechain"):
            agent = obj.get("agentId")
            self.common["extra"] = {"sidechain": True, **({"agent_id": agent} if agent else {})}
        self.out: list[Record] = []

    def add(self, role: Any, kind: Any, text: str, **extra: Any) -> None:
        if not text.strip():
            return
        fields = dict(self.common)
        if extra:
            fields["extra"] = {**fields.get("extra", {}), **extra}
        self.out.append(make_record(self.ref, self.where, self.sid, role, kind, text, **fields))

    def user(self) -> None:
        if is_prompt(self.obj):
            self.add("user", "prompt", _user_text(self.obj))
        else:
            self.add("user", "message", _user_text(self.obj))

    def assistant(self, diag: Diagnostics, version: str | None) -> None:
        texts: list[str] = []
        reply_at: int | None = None
        for part in _parts(self.obj):
            if "text" in part and part.get("thought"):
                self.add("assistant", "reasoning", str_of(part.get("text")).strip())
            elif "text" in part:
                texts.append(str_of(part.get("text")))
                reply_at = len(self.out) if reply_at is None else reply_at
            elif isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                text = tool_call_text(call.get("name"), call.get("args"))
                self.add("assistant", "tool_call", text, call_id=call.get("id"))
            self._drift(part, diag, version)
        reply = "".join(texts).strip()
        if reply and reply_at is not None:  # one reply, where its first text part was
            self.add("assistant", "message", reply)
            self.out.insert(reply_at, self.out.pop())

    def tool_result(self, diag: Diagnostics, version: str | None) -> None:
        found = False
        for part in _parts(self.obj):
            response = part.get("functionResponse")
            if isinstance(response, dict):
                found = True
                text = clip(_response_text(response))
                self.add("tool", "tool_result", text, call_id=response.get("id"))
            self._drift(part, diag, version)
        if not found:
            display = dict_of(self.obj.get("toolCallResult")).get("resultDisplay")
            if isinstance(display, str):
                self.add("tool", "tool_result", clip(display))

    def system(self, cursor: ParseCursor) -> None:
        subtype = self.obj.get("subtype")
        payload = dict_of(self.obj.get("systemPayload"))
        if subtype == "custom_title":
            title = payload.get("customTitle")
            if isinstance(title, str) and title.strip():
                cursor.titles[self.sid] = title.strip()
        elif subtype == "chat_compression":
            history = payload.get("compressedHistory")
            first = history[0] if isinstance(history, list) and history else {}
            self.add("system", "summary", _plain_text(_parts({"message": first})))
        elif subtype == "slash_command" and payload.get("phase") == "invocation":
            self.add("user", "message", str_of(payload.get("rawCommand")))

    def _drift(self, part: dict[str, Any], diag: Diagnostics, version: str | None) -> None:
        unknown = set(part) - _PART_KEYS
        if unknown and not (set(part) & _PART_KEYS):
            diag.unrecognised(
                "part", sorted(unknown)[0], version=version, path=self.ref.path, locator=self.where
            )


def _usage(ref: SourceRef, line: _Line, cursor: ParseCursor, diag: Diagnostics) -> None:
    raw = line.obj.get("usageMetadata")
    if raw is None:
        return
    counts = read_counts(
        raw,
        ["promptTokenCount"],
        [
            "candidatesTokenCount",
            "thoughtsTokenCount",
            "cachedContentTokenCount",
            "totalTokenCount",
        ],
    )
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, line.where, counts)
        return
    prompt, cached = counts["promptTokenCount"], counts["cachedContentTokenCount"]
    out, thoughts = counts["candidatesTokenCount"], counts["thoughtsTokenCount"]
    # OpenAI-compatible providers count reasoning inside the completion (total = prompt +
    # candidates); Gemini counts it beside (total = prompt + candidates + thoughts).
    inside = thoughts > 0 and counts["totalTokenCount"] == prompt + out
    usage = Usage(
        agent=ref.agent,
        store=ref.store,
        source_path=os.fspath(ref.path),
        locator=line.where,
        session_id=line.sid,
        call_id=str_of(line.obj.get("uuid")) or f"{line.sid}:{line.where}",
        input_tokens=max(prompt - cached, 0),
        cache_read_tokens=min(cached, prompt),
        output_tokens=out if inside else out + thoughts,
        reasoning_tokens=thoughts,
        timestamp=line.common["timestamp"],
        model=line.common["model"],
        cwd=line.common["cwd"],
        branch=line.common["branch"],
        host=ref.host,
        offset=line.common["offset"],
    )
    cursor.add_usage(usage, diag)


def parse_chat(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    reader = JsonlReader(ref.path, diagnostics, start_offset=cursor.offset, start_line=cursor.line)
    for item in reader:
        obj = item.value
        if not isinstance(obj, dict):
            continue
        kind, version = obj.get("type"), opt_str(obj.get("version"))
        where = f"line:{item.lineno}"
        line = _Line(ref, obj, where, item.offset)
        if kind not in KNOWN_TYPES:
            diagnostics.unrecognised("record type", kind, version=version, path=ref.path,
                                     locator=where)  # fmt: skip
            continue
        subtype = obj.get("subtype")
        if subtype is not None and subtype not in KNOWN_SUBTYPES:
            diagnostics.unrecognised("subtype", subtype, version=version, path=ref.path,
                                     locator=where)  # fmt: skip
        if kind == "user":
            line.user()
        elif kind == "assistant":
            line.assistant(diagnostics, version)
            _usage(ref, line, cursor, diagnostics)
        elif kind == "tool_result":
            line.tool_result(diagnostics, version)
        else:
            line.system(cursor)
        if line.out:
            cursor.units += 1
            yield from number_parts(line.out)
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line


def _objects(path: Path) -> Iterator[dict[str, Any]]:
    for item in JsonlReader(path, Diagnostics()):
        if isinstance(item.value, dict):
            yield item.value


def count_raw(path: Path) -> int:
    """Lines with text, a call or a response (user, assistant, tool result), plus compression
    summaries and slash-command invocations: plain ``json``, none of the parser's code."""
    count = 0
    for obj in _objects(path):
        kind = obj.get("type")
        message = obj.get("message")
        parts = message.get("parts") if isinstance(message, dict) else []
        payload: dict[str, Any] = obj.get("systemPayload") or {}
        if not isinstance(payload, dict):
            payload = {}
        if kind in ("user", "assistant", "tool_result"):
            useful = any(
                isinstance(p, dict)
                and (
                    (isinstance(p.get("text"), str) and p["text"].strip())
                    or "functionCall" in p
                    or "functionResponse" in p
                )
                for p in parts or []
            )
            shown = payload.get("displayText")
            display = (obj.get("toolCallResult") or {}).get("resultDisplay")
            count += bool(
                useful
                or (isinstance(shown, str) and shown.strip())
                or (kind == "tool_result" and isinstance(display, str) and display.strip())
            )
        elif kind == "system" and obj.get("subtype") == "chat_compression":
            history = payload.get("compressedHistory") or [{}]
            first = history[0] if isinstance(history[0], dict) else {}
            count += any(
                isinstance(p, dict) and not p.get("thought") and str(p.get("text", "")).strip()
                for p in first.get("parts") or []
            )
        elif kind == "system" and obj.get("subtype") == "slash_command":
            count += payload.get("phase") == "invocation" and bool(payload.get("rawCommand"))
    return count


def count_roles(path: Path) -> RoleCounts:
    """Per session: user records with no subtype (or typed mid-turn) from the real user,
    not a subagent's; assistant records with a non-thought text part."""
    counts: RoleCounts = {}
    for obj in _objects(path):
        session = str(obj.get("sessionId") or path.stem)
        parts = (obj.get("message") or {}).get("parts") or []
        if obj.get("type") == "user":
            if obj.get("subtype") not in (None, "mid_turn_user_message"):
                continue
            if obj.get("provenance") not in (None, "real_user") or obj.get("isSidechain"):
                continue
            shown = (obj.get("systemPayload") or {}).get("displayText")
            typed = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
            if (isinstance(shown, str) and shown.strip()) or typed.strip():
                add_role(counts, session, "prompts")
        elif obj.get("type") == "assistant":
            said = "".join(
                p.get("text", "") for p in parts if isinstance(p, dict) and not p.get("thought")
            )
            if said.strip():
                add_role(counts, session, "replies")
    return counts


PARSERS = (
    ParserSpec(
        "qwen-code.chat_jsonl.v1",
        parse_chat,
        resumable=True,
        count_raw=count_raw,
        count_roles=count_roles,
    ),
)
