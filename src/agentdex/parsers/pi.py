"""Pi coding agent sessions (``~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl``).

Line 1 is the session header ``{type: "session", id, cwd, version, title?}``;
then entries linked by ``parentId`` (v3; v1 files are linear and carry no
ids). ``message`` entries hold ``message.role``: ``user`` (prompt),
``assistant`` (``text``/``thinking``/``toolCall`` blocks), ``toolResult``,
``bashExecution`` (a ``!cmd`` the user ran); the omp fork adds
``developer`` (harness chatter, skipped). ``compaction`` and
``branch_summary`` carry summaries; ``session_info.name`` is the title.
Abandoned branches are kept: they are history the user wrote. A line
giving several records locates the further ones ``line:N#1``... Roles
(``count_roles``): user messages with text, assistant text blocks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    make_record,
    number_parts,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers._pi_usage import note_usage
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef
from agentdex.readers import Diagnostics, JsonlReader, is_one_of
from agentdex.records import Record, parse_timestamp

_SKIPPED_ROLES = {"developer", "system"}
#: Entry types that give no record on purpose (settings changes, extension data, labels).
_SKIPPED_TYPES = {"model_change", "thinking_level_change", "custom", "custom_message", "label"}
_KNOWN_TYPES = {"session", "message", "compaction", "branch_summary", "session_info"}
_KNOWN_ROLES = {"user", "assistant", "toolResult", "bashExecution"}
_BLOCK_TYPES = {"text", "thinking", "toolCall"}


def _unknown(entry: dict[str, Any]) -> list[tuple[str, object]]:
    """(what, name) of each part of ``entry`` this parser does not know (format drift)."""
    kind = entry.get("type")
    if not is_one_of(kind, _KNOWN_TYPES):
        return [] if is_one_of(kind, _SKIPPED_TYPES) else [("record type", kind)]
    message = entry.get("message")
    if kind != "message" or not isinstance(message, dict):
        return []
    role = message.get("role")
    if not is_one_of(role, _KNOWN_ROLES):
        return [] if is_one_of(role, _SKIPPED_ROLES) else [("message role", role)]
    content = message.get("content")
    if role != "assistant" or not isinstance(content, list):
        return []
    return [
        ("content block", block.get("type"))
        for block in content
        if isinstance(block, dict) and not is_one_of(block.get("type"), _BLOCK_TYPES)
    ]


def _drift(
    diagnostics: Diagnostics, ref: SourceRef, locator: str, version: Any, entry: dict[str, Any]
) -> None:
    label = str(version) if isinstance(version, (str, int)) and version != "" else None
    for what, name in _unknown(entry):
        diagnostics.unrecognised(what, name, version=label, path=ref.path, locator=locator)


def _message_records(
    ref: SourceRef,
    locator: str,
    offset: int,
    sid: str,
    cwd: str | None,
    ts: float | None,
    message: dict[str, Any],
) -> Iterator[Record]:
    role = message.get("role")
    ts = parse_timestamp(message.get("timestamp")) or ts
    common: dict[str, Any] = {"timestamp": ts, "cwd": cwd, "offset": offset}
    content = message.get("content")
    if role == "user":
        text = as_text(content).strip()
        if text:
            yield make_record(ref, locator, sid, "user", "prompt", text, **common)
    elif role == "assistant":
        model = opt_str(message.get("model"))
        blocks = content if isinstance(content, list) else [content]
        for block in blocks:
            if isinstance(block, str) and block.strip():
                yield make_record(
                    ref, locator, sid, "assistant", "message", block, model=model, **common
                )
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and str(block.get("text") or "").strip():
                yield make_record(
                    ref, locator, sid, "assistant", "message", block["text"], model=model, **common
                )
            elif kind == "thinking" and str(block.get("thinking") or "").strip():
                yield make_record(
                    ref,
                    locator,
                    sid,
                    "assistant",
                    "reasoning",
                    block["thinking"],
                    model=model,
                    **common,
                )
            elif kind == "toolCall":
                yield make_record(
                    ref,
                    locator,
                    sid,
                    "assistant",
                    "tool_call",
                    tool_call_text(block.get("name"), block.get("arguments")),
                    model=model,
                    extra={"call_id": block.get("id")},
                    **common,
                )
    elif role == "toolResult":
        text = as_text(content).strip()
        if text:
            yield make_record(
                ref,
                locator,
                sid,
                "tool",
                "tool_result",
                clip(text),
                extra={"call_id": message.get("toolCallId"), "tool": message.get("toolName")},
                **common,
            )
    elif role == "bashExecution":
        command = message.get("command")
        if isinstance(command, str) and command.strip():
            output = str_of(message.get("output"))
            yield make_record(
                ref,
                locator,
                sid,
                "tool",
                "tool_result",
                clip(f"$ {command}\n{output}".rstrip()),
                **common,
            )


def parse_session(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    state = cursor.state
    state.setdefault("session_id", Path(ref.path).stem.rpartition("_")[2] or Path(ref.path).stem)
    reader = JsonlReader(ref.path, diagnostics, start_offset=cursor.offset, start_line=cursor.line)
    for line in reader:
        entry = line.value
        if not isinstance(entry, dict):
            diagnostics.add(ref.path, f"line:{line.lineno}", "not a JSON object; skipped")
            continue
        kind = entry.get("type")
        locator = f"line:{line.lineno}"
        ts = parse_timestamp(entry.get("timestamp"))
        if kind == "session":
            if isinstance(entry.get("id"), str):
                state["session_id"] = entry["id"]
            if isinstance(entry.get("cwd"), str):
                state["cwd"] = entry["cwd"]
            if isinstance(entry.get("title"), str) and entry["title"]:
                cursor.titles[state["session_id"]] = entry["title"]
            if isinstance(entry.get("version"), (str, int)):
                state["version"] = entry["version"]
            continue
        _drift(diagnostics, ref, locator, state.get("version"), entry)
        sid, cwd = state["session_id"], state.get("cwd")
        produced = 0
        if kind == "message" and isinstance(entry.get("message"), dict):
            note_usage(ref, cursor, diagnostics, entry, (locator, line.offset, sid, cwd, ts))
            if is_one_of(entry["message"].get("role"), _SKIPPED_ROLES):
                continue
            records = list(
                _message_records(ref, locator, line.offset, sid, cwd, ts, entry["message"])
            )
            produced += len(records)
            yield from number_parts(records)
        elif kind in ("compaction", "branch_summary"):
            summary = entry.get("summary")
            if isinstance(summary, str) and summary.strip():
                produced += 1
                yield make_record(
                    ref,
                    locator,
                    sid,
                    "system",
                    "summary",
                    summary,
                    timestamp=ts,
                    cwd=cwd,
                    offset=line.offset,
                )
        elif kind == "session_info" and isinstance(entry.get("name"), str) and entry["name"]:
            cursor.titles[sid] = entry["name"]
        if produced:
            cursor.units += 1
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line


def count_raw(path: Path) -> int:
    """Message lines of a conversational role with content, plus summaries."""
    count = 0
    for entry in raw_objects(path):
        if not isinstance(entry, dict):
            continue
        if entry.get("type") in ("compaction", "branch_summary") and entry.get("summary"):
            count += 1
        message = entry.get("message")
        if entry.get("type") != "message" or not isinstance(message, dict):
            continue
        role = message.get("role")
        if (role in ("user", "assistant", "toolResult") and message.get("content")) or (
            role == "bashExecution" and message.get("command")
        ):
            count += 1
    return count


def _block_text(block: object, kinds: tuple[object, ...]) -> str:
    if isinstance(block, str):
        return block
    if isinstance(block, dict) and block.get("type") in kinds:
        return str(block.get("text") or "")
    return ""


def count_roles(path: Path) -> RoleCounts:
    """User messages with text (prompts) and assistant text blocks (replies) of the session."""
    session = path.stem.rpartition("_")[2] or path.stem
    prompts = replies = 0
    for entry in raw_objects(path):
        if entry.get("type") == "session" and isinstance(entry.get("id"), str):
            session = entry["id"]
        message = entry.get("message")
        if entry.get("type") != "message" or not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        if message.get("role") == "user":
            prompts += any(_block_text(b, (None, "text", "output_text")).strip() for b in blocks)
        elif message.get("role") == "assistant":
            replies += sum(bool(_block_text(b, ("text",)).strip()) for b in blocks)
    return {session: {"prompts": prompts, "replies": replies}} if prompts or replies else {}


PARSERS = (
    ParserSpec(
        "pi.session_jsonl.v1",
        parse_session,
        resumable=True,
        count_raw=count_raw,
        count_roles=count_roles,
    ),
)
