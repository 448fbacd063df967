"""GitHub Copilot CLI (``$COPILOT_HOME`` or ``~/.copilot``).

- ``session-state/<id>/events.jsonl`` (current) and ``session-state/<id>.jsonl``
  (older flat layout): an event log ``{type, id, parentId, timestamp, data}``.
  ``session.start`` gives ``sessionId`` and ``context.cwd``/``branch``;
  ``user.message`` ``data.content`` is a prompt; ``assistant.message`` has
  ``content`` and ``toolRequests[{name, arguments}]``; ``assistant.reasoning``;
  ``tool.execution_complete`` ``result.content``; ``session.model_change``
  ``newModel``. Other events (turn markers, info, usage, compaction, hooks,
  subagents: ``_QUIET_EVENTS``) carry no conversation; any other type is format
  drift, reported with ``session.start``'s ``copilotVersion``. Token usage: the
  per-model totals of ``session.shutdown`` (:mod:`._copilot_usage`).
- ``command-history-state.json``: the prompt recall list, newest first.
- ``history-session-state/*.json`` (before session-state): one document
  ``{sessionId, startTime, chatMessages[{role, content, tool_calls?}]}``;
  ``system`` messages give nothing, a role other than user/assistant/tool/system
  is drift.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    dict_of,
    make_record,
    number_parts,
    opt_str,
    tool_call_text,
    typed_prompts,
)
from agentdex.parsers._copilot_usage import new_run, note_shutdown
from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers.base import (
    ParseCursor,
    ParserSpec,
    RoleCounts,
    SourceRef,
    add_role,
    prompts_by_session,
)
from agentdex.readers import Diagnostics, JsonlReader, is_one_of, read_json
from agentdex.records import Record, parse_timestamp

_CONVERSATION_EVENTS = (
    "user.message",
    "assistant.message",
    "assistant.reasoning",
    "tool.execution_complete",
)
#: Known event types that carry no conversation (skipped on purpose, not drift).
_QUIET_EVENTS = frozenset(
    {
        "session.start",
        "session.model_change",
        "session.info",
        "session.error",
        "session.resume",
        "session.truncation",
        "session.compaction_start",
        "session.compaction_complete",
        "session.usage_info",
        "session.shutdown",
        "session.handoff",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.intent",
        "assistant.usage",
        "assistant.message_delta",
        "assistant.reasoning_delta",
        "tool.execution_start",
        "tool.execution_partial_result",
        "tool.execution_progress",
        "tool.user_requested",
        "subagent.started",
        "subagent.completed",
        "subagent.failed",
        "subagent.selected",
        "hook.start",
        "hook.end",
        "system.message",
        "abort",
    }
)
_HISTORY_ROLES = ("user", "assistant", "tool", "system")


def _session_id(path: Path) -> str:
    return path.parent.name if path.name == "events.jsonl" else path.stem


def parse_events(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    state = cursor.state
    state.setdefault("session_id", _session_id(path))
    reader = JsonlReader(path, diagnostics, start_offset=cursor.offset, start_line=cursor.line)
    for line in reader:
        event = line.value
        if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
            continue
        kind, data = event.get("type"), event["data"]
        if kind == "session.start":
            if isinstance(data.get("sessionId"), str):
                state["session_id"] = data["sessionId"]
            context = dict_of(data.get("context"))
            for key in ("cwd", "branch"):
                if isinstance(context.get(key), str):
                    state[key] = context[key]
            if isinstance(data.get("selectedModel"), str):
                state["model"] = data["selectedModel"]
            if isinstance(data.get("copilotVersion"), str):
                state["version"] = data["copilotVersion"]
            new_run(state)
            continue
        if kind == "session.shutdown":  # (a session.resume carries the totals over)
            where = (f"line:{line.lineno}", line.offset, state["session_id"], state.get("cwd"),
                     state.get("branch"))  # fmt: skip
            note_shutdown(ref, cursor, diagnostics, event, where)
        if kind == "session.model_change" and isinstance(data.get("newModel"), str):
            state["model"] = data["newModel"]
            continue
        if kind not in _CONVERSATION_EVENTS:
            if not is_one_of(kind, _QUIET_EVENTS):
                diagnostics.unrecognised("event type", kind, version=state.get("version"),
                                         path=ref.path, locator=f"line:{line.lineno}")  # fmt: skip
            continue
        sid, loc = state["session_id"], f"line:{line.lineno}"
        common: dict[str, Any] = {
            "timestamp": parse_timestamp(event.get("timestamp")),
            "cwd": state.get("cwd"),
            "branch": state.get("branch"),
            "offset": line.offset,
        }
        model = data.get("model") if isinstance(data.get("model"), str) else state.get("model")
        text = as_text(data.get("content")).strip()
        records: list[Record] = []
        if kind == "user.message" and text:
            records.append(make_record(ref, loc, sid, "user", "prompt", text, **common))
        elif kind == "assistant.message":
            if text:
                records.append(
                    make_record(ref, loc, sid, "assistant", "message", text, model=model, **common)
                )
            requests = data.get("toolRequests")
            for req in requests if isinstance(requests, list) else []:
                if isinstance(req, dict):
                    records.append(
                        make_record(
                            ref,
                            loc,
                            sid,
                            "assistant",
                            "tool_call",
                            tool_call_text(req.get("name"), req.get("arguments")),
                            model=model,
                            extra={"call_id": req.get("toolCallId")},
                            **common,
                        )
                    )
        elif kind == "assistant.reasoning" and text:
            records.append(
                make_record(ref, loc, sid, "assistant", "reasoning", text, model=model, **common)
            )
        elif kind == "tool.execution_complete":
            result = dict_of(data.get("result"))
            output = as_text(result.get("content")).strip() or as_text(data.get("error")).strip()
            if output:
                records.append(
                    make_record(
                        ref,
                        loc,
                        sid,
                        "tool",
                        "tool_result",
                        clip(output),
                        extra={"call_id": data.get("toolCallId")},
                        **common,
                    )
                )
        if records:
            cursor.units += 1
            yield from number_parts(records)
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line


def count_events(path: Path) -> int:
    count = 0
    for event in raw_objects(path):
        if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
            continue
        data = event["data"]
        if event.get("type") in ("user.message", "assistant.reasoning"):
            count += bool(str(data.get("content") or "").strip())
        elif event.get("type") == "assistant.message":
            count += bool(str(data.get("content") or "").strip() or data.get("toolRequests"))
        elif event.get("type") == "tool.execution_complete":
            result = data.get("result") or {}
            count += bool(str(result.get("content") or "").strip() or data.get("error"))
    return count


def _content_text(content: object) -> str:
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text") or "") if isinstance(b, dict) else ""
            for b in content
        )
    return content if isinstance(content, str) else ""


def count_events_roles(path: Path) -> RoleCounts:
    """``user.message`` and ``assistant.message`` events with content, by session."""
    session = path.parent.name if path.name == "events.jsonl" else path.stem
    counts: RoleCounts = {}
    for event in raw_objects(path):
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        if event.get("type") == "session.start" and isinstance(data.get("sessionId"), str):
            session = data["sessionId"]
        role = {"user.message": "prompts", "assistant.message": "replies"}.get(
            str(event.get("type"))
        )
        if role and _content_text(data.get("content")).strip():
            add_role(counts, session, role)
    return counts


def parse_history_json(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    data = read_json(ref.path, diagnostics)
    if not isinstance(data, dict):
        if data is not None:
            diagnostics.add(ref.path, "", "not a session object; skipped")
        return
    sid = opt_str(data.get("sessionId")) or Path(ref.path).stem
    ts = parse_timestamp(data.get("startTime"))
    messages = data.get("chatMessages")
    for index, msg in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(msg, dict):
            continue
        loc, role = f"json:/chatMessages/{index}", msg.get("role")
        text = as_text(msg.get("content")).strip()
        records: list[Record] = []
        if role == "user" and text:
            records.append(make_record(ref, loc, sid, "user", "prompt", text, timestamp=ts))
        elif role == "assistant":
            if text:
                records.append(
                    make_record(ref, loc, sid, "assistant", "message", text, timestamp=ts)
                )
            calls = msg.get("tool_calls")
            for call in calls if isinstance(calls, list) else []:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict):
                    records.append(
                        make_record(
                            ref,
                            loc,
                            sid,
                            "assistant",
                            "tool_call",
                            tool_call_text(fn.get("name"), fn.get("arguments")),
                            timestamp=ts,
                        )
                    )
        elif role == "tool" and text:
            records.append(
                make_record(ref, loc, sid, "tool", "tool_result", clip(text), timestamp=ts)
            )
        elif role not in _HISTORY_ROLES:
            diagnostics.unrecognised("message role", role, path=ref.path, locator=loc)
        if records:
            cursor.units += 1
            yield from number_parts(records)


def count_history_json(path: Path) -> int:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return 0
    messages = data.get("chatMessages") if isinstance(data, dict) else None
    count = 0
    for msg in messages if isinstance(messages, list) else []:
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant", "tool"):
            continue
        count += bool(str(msg.get("content") or "").strip() or msg.get("tool_calls"))
    return count


def count_history_json_roles(path: Path) -> RoleCounts:
    """User and assistant chat messages with content."""
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    session = data.get("sessionId") if isinstance(data.get("sessionId"), str) else None
    counts: RoleCounts = {}
    messages = data.get("chatMessages")
    for msg in messages if isinstance(messages, list) else []:
        role = {"user": "prompts", "assistant": "replies"}.get(
            str(msg.get("role")) if isinstance(msg, dict) else ""
        )
        if role and _content_text(msg.get("content")).strip():
            add_role(counts, session or path.stem, role)
    return counts


def parse_command_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    """``command-history-state.json``: ``{commandHistory: [newest first]}``; no times (mtime)."""
    data = read_json(ref.path, diagnostics)
    history = data.get("commandHistory") if isinstance(data, dict) else None
    if not isinstance(history, list):
        if data is not None:
            diagnostics.add(ref.path, "", "no commandHistory list; skipped")
        return
    yield from typed_prompts(ref, cursor, history, "/commandHistory", "copilot-cli.command_history")


def count_command_history(path: Path) -> int:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return 0
    items = data.get("commandHistory") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return 0
    return sum(1 for i in items if isinstance(i, str) and i.strip())


def count_command_history_roles(path: Path) -> RoleCounts:
    """Each non-blank command of the recall list is a prompt."""
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    items = data.get("commandHistory") if isinstance(data, dict) else None
    session = "copilot-cli.command_history"
    return prompts_by_session((session, i) for i in (items if isinstance(items, list) else []))


PARSERS = (
    ParserSpec(
        "copilot-cli.command_history_json.v1",
        parse_command_history,
        count_raw=count_command_history,
        count_roles=count_command_history_roles,
    ),
    ParserSpec(
        "copilot-cli.events_jsonl.v1",
        parse_events,
        resumable=True,
        count_raw=count_events,
        count_roles=count_events_roles,
    ),
    ParserSpec(
        "copilot-cli.history_session_json.v1",
        parse_history_json,
        count_raw=count_history_json,
        count_roles=count_history_json_roles,
    ),
)
