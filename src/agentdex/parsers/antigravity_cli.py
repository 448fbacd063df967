"""Antigravity CLI (``agy``, ``~/.gemini/antigravity-cli``).

- ``history.jsonl``: the prompt recall log ``{display, timestamp (ms),
  workspace, conversationId?}``.
- ``brain/<conversation>/.system_generated/logs/transcript_full.jsonl`` (or
  the truncated ``transcript.jsonl`` when no full one exists): step lines
  ``{type, source, created_at, content, tool_calls?}``. ``USER_INPUT`` is a
  prompt (the ``<USER_REQUEST>`` body, metadata wrappers dropped),
  ``PLANNER_RESPONSE`` the model's reply and tool calls, other ``MODEL``
  steps with content are tool output. The workspace comes from the
  history line with the same ``conversationId``.
- ``conversations/*.db`` hold protobuf blobs: listed, not parsed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    clip,
    make_record,
    number_parts,
    opt_str,
    str_of,
    strip_tags,
    tool_call_text,
)
from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers.base import (
    ParseCursor,
    ParserSpec,
    RoleCounts,
    SourceRef,
    prompts_by_session,
)
from agentdex.readers import Diagnostics, JsonlReader
from agentdex.records import Record, parse_timestamp


def parse_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    reader = JsonlReader(ref.path, diagnostics, start_offset=cursor.offset, start_line=cursor.line)
    for line in reader:
        entry = line.value
        if not isinstance(entry, dict):
            continue
        text = entry.get("display")
        if not isinstance(text, str) or not text.strip():
            continue
        sid = entry.get("conversationId")
        cursor.units += 1
        yield make_record(
            ref,
            f"{Path(ref.path).name}:line:{line.lineno}",  # the transcript has lines too
            sid if isinstance(sid, str) and sid else "antigravity-cli.history",
            "user",
            "prompt",
            text,
            timestamp=parse_timestamp(entry.get("timestamp")),
            cwd=opt_str(entry.get("workspace")),
            offset=line.offset,
        )
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line


def count_history(path: Path) -> int:
    count = 0
    for entry in raw_objects(path):
        count += isinstance(entry, dict) and bool(str(entry.get("display") or "").strip())
    return count


@lru_cache(maxsize=16)
def _workspaces(history: str, mtime: float) -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        with open(history, encoding="utf-8", errors="replace") as handle:
            for raw in handle:
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get("workspace"), str):
                    cid = entry.get("conversationId")
                    if isinstance(cid, str):
                        found[cid] = entry["workspace"]
    except OSError:
        pass
    return found


def _workspace_of(root: Path, conversation: str) -> str | None:
    history = root / "history.jsonl"
    try:
        mtime = history.stat().st_mtime
    except OSError:
        return None
    return _workspaces(str(history), mtime).get(conversation)


def _user_text(content: str) -> str:
    return strip_tags(content, drop=("ADDITIONAL_METADATA",), unwrap=("USER_REQUEST",))


def _has_full_sibling(path: Path) -> bool:
    return path.name == "transcript.jsonl" and (path.parent / "transcript_full.jsonl").is_file()


def parse_transcript(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    if _has_full_sibling(path):
        return  # the truncated twin of transcript_full.jsonl; that one is read instead
    conversation = path.parents[2].name
    cwd = _workspace_of(Path(ref.root), conversation)
    reader = JsonlReader(path, diagnostics, start_offset=cursor.offset, start_line=cursor.line)
    for line in reader:
        step = line.value
        if not isinstance(step, dict):
            continue
        loc = f"line:{line.lineno}"
        kind = step.get("type")
        content = str_of(step.get("content"))
        common: dict[str, Any] = {
            "timestamp": parse_timestamp(step.get("created_at")),
            "cwd": cwd,
            "offset": line.offset,
        }
        records: list[Record] = []
        if kind == "USER_INPUT":
            text = _user_text(content)
            if text:
                records.append(
                    make_record(ref, loc, conversation, "user", "prompt", text, **common)
                )
        elif kind == "PLANNER_RESPONSE":
            if content.strip():
                records.append(
                    make_record(ref, loc, conversation, "assistant", "message", content, **common)
                )
            calls = step.get("tool_calls")
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, dict):
                    records.append(
                        make_record(
                            ref,
                            loc,
                            conversation,
                            "assistant",
                            "tool_call",
                            tool_call_text(call.get("name"), call.get("args")),
                            **common,
                        )
                    )
        elif step.get("source") == "MODEL" and content.strip():
            records.append(
                make_record(
                    ref,
                    loc,
                    conversation,
                    "tool",
                    "tool_result",
                    clip(content),
                    extra={"step": kind},
                    **common,
                )
            )
        if records:
            cursor.units += 1
            yield from number_parts(records)
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line


def count_transcript(path: Path) -> int:
    if _has_full_sibling(path):
        return 0
    count = 0
    for step in raw_objects(path):
        if not isinstance(step, dict):
            continue
        if step.get("type") == "PLANNER_RESPONSE":
            count += bool(step.get("content") or step.get("tool_calls"))
        elif step.get("type") == "USER_INPUT" or step.get("source") == "MODEL":
            count += bool(str(step.get("content") or "").strip())
    return count


_REQUEST = re.compile(r"<USER_REQUEST>(.*?)</USER_REQUEST>", re.S)
_METADATA = re.compile(r"<ADDITIONAL_METADATA>.*?</ADDITIONAL_METADATA>", re.S)


def count_transcript_roles(path: Path) -> RoleCounts:
    """``USER_INPUT`` steps with request text, ``PLANNER_RESPONSE`` steps with content."""
    if path.name == "transcript.jsonl" and (path.parent / "transcript_full.jsonl").is_file():
        return {}
    conversation = path.parents[2].name
    prompts = replies = 0
    for step in raw_objects(path):
        raw = step.get("content")
        content = raw if isinstance(raw, str) else ""
        if step.get("type") == "USER_INPUT":
            body = _METADATA.sub("", _REQUEST.sub(r"\1", content))
            prompts += bool(body.strip())
        elif step.get("type") == "PLANNER_RESPONSE":
            replies += bool(content.strip())
    return {conversation: {"prompts": prompts, "replies": replies}} if prompts or replies else {}


def count_history_roles(path: Path) -> RoleCounts:
    """One prompt per line with a ``display``, by ``conversationId``."""
    return prompts_by_session(
        (str(e.get("conversationId") or "") or "antigravity-cli.history", e.get("display"))
        for e in raw_objects(path)
    )


PARSERS = (
    ParserSpec(
        "antigravity-cli.history_jsonl.v1",
        parse_history,
        resumable=True,
        count_raw=count_history,
        count_roles=count_history_roles,
    ),
    ParserSpec(
        "antigravity-cli.transcript_jsonl.v1",
        parse_transcript,
        resumable=True,
        count_raw=count_transcript,
        count_roles=count_transcript_roles,
    ),
)
