"""Cline task folders (``<globalStorage>/saoudrizwan.claude-dev/tasks/<id>/``, ``~/.cline/data``).

``api_conversation_history.json`` is the Anthropic message list Cline sent:
``[{role, content: str | [text|tool_use|tool_result|image], ts?, modelInfo?}]``.
User text is wrapped: ``<task>`` (the first prompt), ``<feedback>``,
``<answer>``, ``<user_message>`` are what the person typed; an
``<environment_details>`` block is injected context and dropped. Older
versions reported tool results as user text starting ``[tool_name ...]
Result:`` — those become tool results. The task id is the creation time
in ms; the cwd comes from ``state/taskHistory.json``
(``cwdOnTaskInitialization``) or the environment details.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    dict_of,
    make_record,
    opt_str,
    str_of,
    strip_tags,
    tool_call_text,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Record, parse_timestamp

_USER_TAGS = ("task", "feedback", "answer", "user_message")
_DROP_TAGS = ("environment_details",)
_TOOL_RESULT_RE = re.compile(r"^\[[^\]\n]+\] Result:")
_CWD_RE = re.compile(r"Current Working Directory \(([^)\n]+)\)")


@lru_cache(maxsize=8)
def _task_history(path: str, mtime: float) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, list):
        return {}
    return {str(item["id"]): item for item in data if isinstance(item, dict) and "id" in item}


def _task_info(root: Path, task_id: str) -> dict[str, Any]:
    path = root / "state" / "taskHistory.json"
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return {}
    return _task_history(str(path), mtime).get(task_id, {})


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def parse_task(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    data = read_json(path, diagnostics)
    if data is None:
        return
    if not isinstance(data, list):
        diagnostics.add(path, "", "conversation history is not a JSON array; skipped")
        return
    task_id = path.parent.name
    info = _task_info(Path(ref.root), task_id)
    cwd = info.get("cwdOnTaskInitialization") or info.get("cwd")
    cwd = cwd if isinstance(cwd, str) else None
    task_model = opt_str(info.get("modelId"))
    base_ts = parse_timestamp(task_id)
    for index, msg in enumerate(data):
        if not isinstance(msg, dict):
            continue
        loc = f"json:/{index}"
        role = msg.get("role")
        ts = parse_timestamp(msg.get("ts")) or base_ts
        model_info = dict_of(msg.get("modelInfo"))
        model = opt_str(model_info.get("modelId"))
        records: list[Record] = []
        for block in _user_blocks(msg.get("content")):
            btype = block.get("type")
            if btype == "text":
                raw = str_of(block.get("text"))
                if cwd is None and (found := _CWD_RE.search(raw)):
                    cwd = found.group(1)
                if role == "assistant":
                    if raw.strip():
                        records.append(
                            make_record(
                                ref,
                                loc,
                                task_id,
                                "assistant",
                                "message",
                                raw,
                                model=model or task_model,
                            )
                        )
                    continue
                if _TOOL_RESULT_RE.match(raw):
                    body = strip_tags(raw, drop=_DROP_TAGS, unwrap=())
                    if body:
                        records.append(
                            make_record(ref, loc, task_id, "tool", "tool_result", clip(body))
                        )
                    continue
                text = strip_tags(raw, drop=_DROP_TAGS, unwrap=_USER_TAGS)
                if text:
                    records.append(make_record(ref, loc, task_id, "user", "prompt", text))
            elif btype == "tool_use":
                records.append(
                    make_record(
                        ref,
                        loc,
                        task_id,
                        "assistant",
                        "tool_call",
                        tool_call_text(block.get("name"), block.get("input")),
                        model=model or task_model,
                        extra={"call_id": block.get("id")},
                    )
                )
            elif btype == "tool_result":
                body = strip_tags(as_text(block.get("content")), drop=_DROP_TAGS, unwrap=())
                if body:
                    records.append(
                        make_record(
                            ref,
                            loc,
                            task_id,
                            "tool",
                            "tool_result",
                            clip(body),
                            extra={"call_id": block.get("tool_use_id")},
                        )
                    )
        if records:
            cursor.units += 1
            for record in records:
                record.timestamp, record.cwd = ts, cwd
                yield record


def count_raw(path: Path) -> int:
    """Messages with a text/tool block that is not only injected environment details."""
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return 0
    count = 0
    for msg in data if isinstance(data, list) else []:
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                count += 1
                break
            text = block.get("text") if block.get("type") == "text" else block.get("content")
            text = text if isinstance(text, str) else json.dumps(text) if text else ""
            text = re.sub(r"<environment_details>.*?</environment_details>", "", text, flags=re.S)
            if text.strip():
                count += 1
                break
    return count


PARSERS = (ParserSpec("cline.api_history_json.v1", parse_task, count_raw=count_raw),)
