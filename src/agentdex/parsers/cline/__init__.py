"""Cline task folders (``<globalStorage>/saoudrizwan.claude-dev/tasks/<id>/``, ``~/.cline/data``).

``api_conversation_history.json`` is the Anthropic message list Cline sent:
``[{role, content: str | [text|thinking|tool_use|tool_result|image], ts?,
modelInfo?}]``. The task id is the creation time in ms.

Records, per content block (``locator`` ``json:/<message>/content/<block>``,
``json:/<message>/content`` for string content; a block giving several
records numbers the further ones ``#1``, ``#2``):

* user ``text`` / ``tool_result`` blocks: :mod:`._text` decides what is a
  prompt (the body of ``<task>``, ``<feedback>``, ``<answer>``,
  ``<user_message>``), a ``tool``/``tool_result`` (``[tool ...] Result:``
  texts and tool_result blocks) and harness text (``system``/``message``);
  ``<environment_details>`` is dropped.
* assistant blocks: ``thinking`` -> ``reasoning``; the ``text`` blocks of
  one message -> **one** reply (``assistant``/``message``, at its first
  text block), without the ``[Response interrupted by ...]`` note Cline
  appends (a message holding only that note is ``system``/``message``);
  ``tool_use`` -> ``tool_call``.

Time: the message's ``ts``, else the time Cline's UI log
(``ui_messages.json``, entries tagged ``conversationHistoryIndex``) shows
for it, else the one before, else the task id. cwd: the task's
``history_item.json`` (``workspace``: Roo Code from 3.50, Feb 2026), else
``state/taskHistory.json`` (``cwdOnTaskInitialization``), else the
environment details.

The same parser reads the Cline forks, Roo Code and the Kilo Code extension
(``parsers/roo_code.py``, ``parsers/kilo_code.py``): their tasks keep this
shape, tag what the person typed ``<user_message>`` (Roo-Code ``Task.ts``),
add ``reasoning`` blocks (``{text, summary}``, or only ``encrypted_content``)
and mark a condensed-context message ``isSummary`` (a ``summary``, not a
prompt; Roo-Code ``condense/index.ts``). Block types outside
:data:`KNOWN_BLOCKS` are reported as format drift.

**Usage** (:mod:`._usage`): the requests the task's UI log counted, one call each.

**Units** (``cursor.units``, ``count_raw``): messages that give a record.
**Roles** (``count_roles``, :mod:`._counts`): from the UI log when present
(the task plus each ``user_feedback``; each ``text`` said by the agent),
else tag counts over the raw history.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    as_text,
    clip,
    dict_of,
    make_record,
    number_parts,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.parsers.cline._counts import count_raw, count_roles
from agentdex.parsers.cline._text import INTERRUPTED, user_text_parts
from agentdex.parsers.cline._usage import load_ui_log, note_task_usage
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Record, parse_timestamp

__all__ = ["PARSERS", "parse_task"]

#: Where the environment details name the cwd: Cline's, and Roo Code's ("# Current
#: Workspace Directory (/w) Files", Roo-Code ``getEnvironmentDetails.ts``).
_CWD_MARKS = ("Current Working Directory (", "Current Workspace Directory (")
#: Content blocks read or knowingly skipped (``image``, signed or encrypted reasoning...);
#: others are format drift.
KNOWN_BLOCKS = frozenset(
    {"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking", "reasoning"}
)


@lru_cache(maxsize=8)
def _task_history(path: str, mtime: float) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, list):
        return {}
    return {str(item["id"]): item for item in data if isinstance(item, dict) and "id" in item}


def _task_info(root: Path, task_dir: Path) -> dict[str, Any]:
    """The task's history item: Roo Code's per-task ``history_item.json`` (``workspace``),
    else Cline's ``state/taskHistory.json`` entry (``cwdOnTaskInitialization``)."""
    own = task_dir / "history_item.json"
    try:
        item = json.loads(own.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        item = None
    if isinstance(item, dict):
        return item
    path = root / "state" / "taskHistory.json"
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return {}
    return _task_history(str(path), mtime).get(task_dir.name, {})


def _blocks(content: Any) -> tuple[str, list[dict[str, Any]]]:
    """(locator prefix, blocks) of a message's content: a string is one text block."""
    if isinstance(content, str):
        return "content", [{"type": "text", "text": content}]
    if isinstance(content, list):
        return "content/", [b if isinstance(b, dict) else {} for b in content]
    return "content", []


def _cwd_from(text: str) -> str | None:
    for mark in _CWD_MARKS:
        start = text.find(mark)
        if start < 0:
            continue
        start += len(mark)
        end = text.find(")", start)
        value = text[start:end] if end > start else ""
        return value if value and "\n" not in value else None
    return None


def _thought(block: dict[str, Any]) -> str:
    """The readable reasoning of a ``thinking`` block, or of Roo Code's ``reasoning`` block
    (``text``; an encrypted-only one has none)."""
    return str_of(block.get("thinking") or block.get("text")).strip()


def _drift(blocks: list[dict[str, Any]], path: Path, loc: str, diagnostics: Diagnostics) -> None:
    for j, block in enumerate(blocks):
        btype = block.get("type")
        if btype not in KNOWN_BLOCKS:
            diagnostics.unrecognised("content block", btype, path=path, locator=f"{loc}{j}")


def ui_message_times(ui: Any) -> dict[int, float]:
    """API message index -> the time Cline's UI log (``ui``, the parsed
    ``ui_messages.json``) first shows activity for it.

    A UI entry carries ``conversationHistoryIndex`` = the index of the last
    API message when it was written, so entries tagged ``i - 1`` belong to
    message ``i``. Empty when the log is missing or unreadable (``ui`` None).
    """
    times: dict[int, float] = {}
    for entry in ui if isinstance(ui, list) else []:
        if not isinstance(entry, dict) or not isinstance(
            entry.get("conversationHistoryIndex"), int
        ):
            continue
        stamp = parse_timestamp(entry.get("ts"))
        index = entry["conversationHistoryIndex"] + 1
        if stamp is not None and (index not in times or stamp < times[index]):
            times[index] = stamp
    return times


class _Task:
    """Turns one task's messages into records."""

    def __init__(self, ref: SourceRef, task_id: str, info: dict[str, Any]) -> None:
        self.ref, self.task_id = ref, task_id
        cwd = info.get("cwdOnTaskInitialization") or info.get("cwd") or info.get("workspace")
        self.cwd: str | None = cwd if isinstance(cwd, str) else None
        self.task_model = opt_str(info.get("modelId"))

    def user(self, loc: str, blocks: list[dict[str, Any]], single: bool) -> Iterator[Record]:
        for j, block in enumerate(blocks):
            where = loc if single else f"{loc}{j}"
            btype = block.get("type")
            if btype == "text":
                raw = str_of(block.get("text"))
                self.cwd = self.cwd or _cwd_from(raw)
                parts = user_text_parts(raw)
                extra: dict[str, Any] = {}
            elif btype == "tool_result":
                parts = user_text_parts(as_text(block.get("content")), tool_result=True)
                extra = {"call_id": block.get("tool_use_id")}
            else:
                continue
            records = [
                make_record(
                    self.ref,
                    where,
                    self.task_id,
                    role,
                    kind,
                    clip(text) if kind == "tool_result" else text,
                    extra=dict(extra) if kind == "tool_result" else {},
                )
                for role, kind, text in parts
            ]
            yield from number_parts(records)

    def assistant(
        self, loc: str, blocks: list[dict[str, Any]], single: bool, model: str | None
    ) -> Iterator[Record]:
        reply: list[str] = []
        reply_at: int | None = None
        pending: list[tuple[int, Record]] = []
        for j, block in enumerate(blocks):
            where = loc if single else f"{loc}{j}"
            btype = block.get("type")
            if btype == "text":
                text = str_of(block.get("text"))
                if text.strip():
                    reply.append(text.strip())
                    reply_at = j if reply_at is None else reply_at
            elif btype in ("thinking", "reasoning") and _thought(block):
                thought = _thought(block)
                pending.append((j, self.record(where, "assistant", "reasoning", thought, model)))
            elif btype == "tool_use":
                text = tool_call_text(block.get("name"), block.get("input"))
                call = self.record(where, "assistant", "tool_call", text, model)
                call.extra = {"call_id": block.get("id")}
                pending.append((j, call))
        if reply_at is not None:
            where = loc if single else f"{loc}{reply_at}"
            joined = "\n\n".join(reply)
            answer = INTERRUPTED.sub("", joined).strip()
            if answer:
                pending.append(
                    (reply_at, self.record(where, "assistant", "message", answer, model))
                )
            else:
                pending.append((reply_at, self.record(where, "system", "message", joined, model)))
        pending.sort(key=lambda item: item[0])
        for _, record in pending:
            yield record

    def record(self, loc: str, role: Any, kind: Any, text: str, model: str | None) -> Record:
        return make_record(
            self.ref, loc, self.task_id, role, kind, text, model=model or self.task_model
        )


def parse_task(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    data = read_json(path, diagnostics)
    if data is None:
        return
    if not isinstance(data, list):
        diagnostics.add(path, "", "conversation history is not a JSON array; skipped")
        return
    task_id = path.parent.name
    info = _task_info(Path(ref.root), path.parent)
    task = _Task(ref, task_id, info)
    ui = load_ui_log(path.parent)
    ui_times = ui_message_times(ui)
    previous = parse_timestamp(task_id) or parse_timestamp(info.get("ts"))
    last_model: str | None = None
    for index, msg in enumerate(data):
        if not isinstance(msg, dict):
            continue
        stamp = parse_timestamp(msg.get("ts")) or ui_times.get(index) or previous
        previous = stamp
        prefix, blocks = _blocks(msg.get("content"))
        loc = f"json:/{index}/{prefix}"
        single = not prefix.endswith("/")
        model = opt_str(dict_of(msg.get("modelInfo")).get("modelId"))
        last_model = model or last_model
        _drift(blocks, path, loc, diagnostics)
        if msg.get("role") == "assistant":
            records = list(task.assistant(loc, blocks, single, model))
        else:
            records = list(task.user(loc, blocks, single))
            if msg.get("isSummary") is True:  # Roo Code's condensed context: not typed
                for record in records:
                    record.role, record.kind = "system", "summary"
        if records:
            cursor.units += 1
            for record in records:
                record.timestamp, record.cwd = stamp, task.cwd
                yield record
    note_task_usage(ref, cursor, diagnostics, ui, task_id, task.cwd, task.task_model or last_model)


PARSERS = (
    ParserSpec(
        "cline.api_history_json.v1", parse_task, count_raw=count_raw, count_roles=count_roles
    ),
)
