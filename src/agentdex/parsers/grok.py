"""Grok CLI (``${GROK_HOME:-~/.grok}/sessions/<url-encoded project>/...``).

- ``<session>/chat_history.jsonl``: ``{type, content}`` lines; ``type`` is
  ``system`` (skipped), ``user``, ``assistant`` (``tool_calls[]``),
  ``reasoning`` (``summary[{text}]``), ``tool_use``, ``tool_result``,
  ``backend_tool_call``. Injected user lines carry ``synthetic_reason``
  (kept as messages, not prompts). Most versions write no timestamps: the
  file's mtime stands in. Any other ``type`` is format drift (``line type``;
  the history records no Grok version).
- ``prompt_history.jsonl`` per project: ``{timestamp, session_id, prompt, is_bash}``.
- ``<session>/subagents/<id>/meta.json``: the delegated ``prompt``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

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
from agentdex.parsers._jsonl import raw_objects
from agentdex.parsers.base import (
    ParseCursor,
    ParserSpec,
    RoleCounts,
    SourceRef,
    prompts_by_session,
)
from agentdex.readers import Diagnostics, JsonlReader, is_one_of, read_json
from agentdex.records import Record, parse_timestamp

_LINE_TYPES = frozenset(
    ("system", "user", "assistant", "reasoning", "tool_use", "tool_result", "backend_tool_call")
)


def project_of(project_dir: str) -> str | None:
    """The project path a session folder names (URL-encoded absolute path)."""
    decoded = unquote(project_dir)
    return decoded if os.path.isabs(decoded) else None


def _summary_cwd(session_dir: Path, diagnostics: Diagnostics) -> str | None:
    summary = session_dir / "summary.json"
    if not summary.is_file():
        return None
    data = read_json(summary, diagnostics)
    cwd = data.get("cwd") if isinstance(data, dict) else None
    return cwd if isinstance(cwd, str) else None


def _project_cwd(project_dir: Path, diagnostics: Diagnostics) -> str | None:
    """A project folder's cwd: a session's ``summary.json`` says it best, else the folder name."""
    try:
        sessions = sorted(p for p in project_dir.iterdir() if p.is_dir())
    except OSError:
        sessions = []
    for session in sessions[:20]:
        cwd = _summary_cwd(session, diagnostics)
        if cwd:
            return cwd
    return project_of(project_dir.name)


def _tool_calls(calls: Any) -> Iterator[tuple[object, object, object]]:
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        function = dict_of(call.get("function")) or call
        yield function.get("name"), function.get("arguments"), call.get("id")


def parse_chat_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    sid = path.parent.name
    if "cwd" not in cursor.state:
        cursor.state["cwd"] = _summary_cwd(path.parent, diagnostics) or project_of(
            path.parent.parent.name
        )
    cwd = cursor.state["cwd"]
    mtime = file_mtime(path)
    reader = JsonlReader(path, diagnostics, start_offset=cursor.offset, start_line=cursor.line)
    for line in reader:
        entry = line.value
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        loc = f"line:{line.lineno}"
        if not is_one_of(kind, _LINE_TYPES):
            diagnostics.unrecognised("line type", kind, path=ref.path, locator=loc)
            continue
        common: dict[str, Any] = {
            "timestamp": parse_timestamp(entry.get("timestamp")) or mtime,
            "cwd": cwd,
            "offset": line.offset,
            "model": opt_str(entry.get("model")),
        }
        records: list[Record] = []
        text = as_text(entry.get("content")).strip()
        if kind == "user" and text:
            synthetic = entry.get("synthetic_reason")
            records.append(
                make_record(
                    ref,
                    loc,
                    sid,
                    "user",
                    "message" if synthetic else "prompt",
                    text,
                    extra={"synthetic_reason": synthetic} if synthetic else {},
                    **common,
                )
            )
        elif kind == "assistant":
            if text:
                records.append(make_record(ref, loc, sid, "assistant", "message", text, **common))
            for name, args, call_id in _tool_calls(entry.get("tool_calls")):
                records.append(
                    make_record(
                        ref,
                        loc,
                        sid,
                        "assistant",
                        "tool_call",
                        tool_call_text(name, args),
                        extra={"call_id": call_id},
                        **common,
                    )
                )
        elif kind == "reasoning":
            summary = entry.get("summary")
            parts = [dict_of(s).get("text") for s in summary] if isinstance(summary, list) else []
            joined = "\n".join(p for p in parts if isinstance(p, str) and p).strip() or text
            if joined:
                records.append(
                    make_record(ref, loc, sid, "assistant", "reasoning", joined, **common)
                )
        elif kind in ("tool_use", "backend_tool_call"):
            name = entry.get("name") or (opt_str(entry.get("tool")))
            body = text or tool_call_text(name, entry.get("arguments") or entry.get("input"))
            if body:
                records.append(
                    make_record(ref, loc, sid, "assistant", "tool_call", clip(body), **common)
                )
        elif kind == "tool_result" and text:
            records.append(make_record(ref, loc, sid, "tool", "tool_result", clip(text), **common))
        if records:
            cursor.units += 1
            yield from number_parts(records)
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line


def count_chat_history(path: Path) -> int:
    count = 0
    for entry in raw_objects(path):
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if (
            (
                kind in ("user", "tool_result", "tool_use", "backend_tool_call")
                and entry.get("content")
            )
            or (kind == "assistant" and (entry.get("content") or entry.get("tool_calls")))
            or (kind == "reasoning" and (entry.get("summary") or entry.get("content")))
        ):
            count += 1
    return count


def count_chat_roles(path: Path) -> RoleCounts:
    """Typed user lines (no ``synthetic_reason``) and assistant lines with text, by folder."""
    prompts = replies = 0
    for entry in raw_objects(path):
        content = entry.get("content")
        blocks = content if isinstance(content, list) else [content]
        has_text = any(
            (
                b if isinstance(b, str) else str(b.get("text") or "") if isinstance(b, dict) else ""
            ).strip()
            for b in blocks
        )
        if entry.get("type") == "user" and has_text and not entry.get("synthetic_reason"):
            prompts += 1
        elif entry.get("type") == "assistant" and has_text:
            replies += 1
    return (
        {path.parent.name: {"prompts": prompts, "replies": replies}} if prompts or replies else {}
    )


def parse_prompt_history(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    cwd = _project_cwd(path.parent, diagnostics)
    reader = JsonlReader(path, diagnostics, start_offset=cursor.offset, start_line=cursor.line)
    for line in reader:
        entry = line.value
        if not isinstance(entry, dict):
            continue
        prompt = entry.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            continue
        sid = str_of(entry.get("session_id"))
        cursor.units += 1
        yield make_record(
            ref,
            f"{path.name}:line:{line.lineno}",  # the session's chat history has lines too
            sid or f"grok-prompts:{path.parent.name}",
            "user",
            "prompt",
            prompt,
            timestamp=parse_timestamp(entry.get("timestamp")),
            cwd=cwd,
            offset=line.offset,
            extra={"is_bash": bool(entry.get("is_bash"))},
        )
    cursor.resume_offset, cursor.resume_line = reader.resume_offset, reader.resume_line


def count_prompt_history(path: Path) -> int:
    count = 0
    for entry in raw_objects(path):
        if isinstance(entry, dict) and str(entry.get("prompt") or "").strip():
            count += 1
    return count


def count_prompt_roles(path: Path) -> RoleCounts:
    """One prompt per entry with a ``prompt``, by ``session_id`` (else the project folder)."""
    fallback = f"grok-prompts:{path.parent.name}"
    return prompts_by_session(
        (str(e.get("session_id") or "") or fallback, e.get("prompt")) for e in raw_objects(path)
    )


def parse_subagent(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    data = read_json(ref.path, diagnostics)
    if not isinstance(data, dict):
        return
    prompt = data.get("prompt")
    sid = data.get("child_session_id") or data.get("subagent_id") or Path(ref.path).parent.name
    if isinstance(data.get("description"), str) and data["description"]:
        cursor.titles[str(sid)] = data["description"]
    if not isinstance(prompt, str) or not prompt.strip():
        return
    cursor.units += 1
    yield make_record(
        ref,
        "json:/prompt",
        str(sid),
        "user",
        "message",
        prompt,
        timestamp=parse_timestamp(data.get("started_at")) or file_mtime(ref.path),
        cwd=opt_str(data.get("child_cwd")),
        model=opt_str(data.get("effective_model_id")),
        extra={
            "parent_session_id": data.get("parent_session_id"),
            "subagent_type": data.get("subagent_type"),
        },
    )


def count_subagent(path: Path) -> int:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return 0
    return 1 if isinstance(data, dict) and str(data.get("prompt") or "").strip() else 0


PARSERS = (
    ParserSpec(
        "grok.chat_history_jsonl.v1",
        parse_chat_history,
        resumable=True,
        count_raw=count_chat_history,
        count_roles=count_chat_roles,
    ),
    ParserSpec(
        "grok.prompt_history_jsonl.v1",
        parse_prompt_history,
        resumable=True,
        count_raw=count_prompt_history,
        count_roles=count_prompt_roles,
    ),
    ParserSpec("grok.subagent_json.v1", parse_subagent, count_raw=count_subagent),
)
