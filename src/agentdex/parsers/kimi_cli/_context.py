"""Kimi CLI ``context.jsonl``: the model's context, for sessions without a wire log.

(``kimi-cli.context_jsonl.v1``.) ``src/kimi_cli/soul/context.py`` writes one
``Message`` per line (``{role: user|assistant|tool, content: str | parts,
tool_calls?, tool_call_id?}``, parts ``text``/``think``/media) and markers
(``_system_prompt``, ``_checkpoint``, ``_usage``), with no times. The file is
not a log: ``/clear``, a compaction and a revert rotate it to
``context_<n>.jsonl`` and start a new one holding what is kept, so a
compacted context may open with the summary as an *assistant* turn (before
2025-11-20) or a user turn. Subagents of the Task tool wrote
``context_sub_<n>.jsonl`` beside it; before 2025-11-25 the files sat flat in
the work dir folder as ``<session id>.jsonl`` (same suffixes).

Since 2025-11-26 every session also has ``wire.jsonl`` (:mod:`._wire`), the
better transcript: a session whose wire log holds a turn (``TurnBegin``, what
Kimi itself titles a session from) gives nothing here. Otherwise each file
of the session is read; a message that is a copy of one in the previous
rotation (what a revert or a compaction carried over) is not indexed twice.

Records (``locator`` ``line:N``; the file's modification time, the store
keeps none): user text -> ``user``/``prompt`` (``user``/``message`` in a
subagent's file), its ``<system>``/``<system-reminder>`` parts ->
``system``/``message``; the compaction summary (``Previous context has been
compacted``) -> ``system``/``summary``; assistant ``text`` parts -> one
reply, ``think`` -> ``reasoning``, ``tool_calls`` -> ``tool_call``; ``tool``
messages -> ``tool_result``. **Unit**: a message line that gives a record.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers._agent_common import (
    clip,
    dict_of,
    file_mtime,
    json_or_text,
    make_record,
    number_parts,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.kimi_cli._common import is_harness, session_place, user_text, work_dir
from agentdex.parsers.kimi_cli._wire import Item
from agentdex.readers import Diagnostics, JsonlReader
from agentdex.records import Record

#: ``<stem>[_sub_<n>][_<rotation>].jsonl``.
_NAME = re.compile(r"^(?P<stem>.+?)(?:_sub_(?P<sub>\d+))?(?:_(?P<rot>\d+))?\.jsonl$")
COMPACTED = "<system>Previous context has been compacted"
MARKERS = ("_system_prompt", "_checkpoint", "_usage")


def file_parts(path: Path) -> tuple[str, str | None, int | None]:
    """(stem, subagent number, rotation number) of a context file's name."""
    found = _NAME.match(path.name)
    if found is None:
        return path.stem, None, None
    rot = found.group("rot")
    return found.group("stem"), found.group("sub"), int(rot) if rot else None


def has_wire(path: Path) -> bool:
    """The session keeps a wire log with a turn in it: the wire is read instead."""
    stem, _, _ = file_parts(path)
    folder = path.parent / stem if stem not in ("context",) else path.parent
    wire = folder / "wire.jsonl"
    try:
        with open(wire, "rb") as handle:
            for raw in handle:
                if b'"TurnBegin"' in raw:
                    return True
    except OSError:
        return False
    return False


def previous_rotation(path: Path) -> Path | None:
    """The file this one was started from (its newest older rotation), if any."""
    stem, sub, rot = file_parts(path)
    base = f"{stem}_sub_{sub}" if sub else stem
    if rot is not None:
        older = path.parent / f"{base}_{rot - 1}.jsonl"
        return older if rot > 1 and older.is_file() else None
    numbers = []
    for other in path.parent.glob(f"{base}_*.jsonl"):
        o_stem, o_sub, o_rot = file_parts(other)
        if o_stem == stem and o_sub == sub and o_rot is not None:
            numbers.append(o_rot)
    return path.parent / f"{base}_{max(numbers)}.jsonl" if numbers else None


def digest(value: Any) -> bytes:
    """Identity of one context line's content (key order and spacing aside)."""
    try:
        raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return b""
    return hashlib.sha1(raw, usedforsecurity=False).digest()


def line_digests(path: Path | None, diag: Diagnostics) -> set[bytes]:
    """Digests of an older rotation's messages (for the carried-over check)."""
    if path is None:
        return set()
    return {
        digest(line.value)
        for line in JsonlReader(path, diag)
        if isinstance(line.value, dict) and line.value.get("role") not in MARKERS
    }


def message_items(msg: dict[str, Any], by_agent: bool) -> list[Item]:
    """The records one context message gives."""
    role, content = msg.get("role"), msg.get("content")
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    texts = [
        str_of(p.get("text")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
    ]
    texts = [t for t in texts if t.strip()]
    joined = "\n".join(texts)
    if role in ("user", "assistant") and joined.lstrip().startswith(COMPACTED):
        return [("system", "summary", joined, {})]
    if role == "user":
        typed = "\n".join(t for t in texts if not is_harness(t)).strip()
        harness = "\n".join(t for t in texts if is_harness(t)).strip()
        items: list[Item] = []
        if typed:
            items.append(("user", "message" if by_agent else "prompt", typed, {}))
        if harness:
            items.append(("system", "message", harness, {}))
        return items
    if role == "assistant":
        items = [
            ("assistant", "reasoning", str_of(p.get("think")), {})
            for p in parts
            if isinstance(p, dict) and p.get("type") == "think" and str_of(p.get("think")).strip()
        ]
        if joined.strip():
            items.append(("assistant", "message", joined, {}))
        for call in msg.get("tool_calls") or []:
            function = dict_of(dict_of(call).get("function"))
            text = tool_call_text(function.get("name"), json_or_text(function.get("arguments")))
            items.append(("assistant", "tool_call", text, {"call_id": opt_str(call.get("id"))}))
        return items
    if role == "tool":
        text = user_text(content).strip()
        extra = {"call_id": opt_str(msg.get("tool_call_id"))}
        return [("tool", "tool_result", clip(text), extra)] if text else []
    return []


def parse_context(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    """Records of one context file of a session without a wire log (whole file each time)."""
    path = Path(ref.path)
    cursor.units = 0
    if has_wire(path):
        return
    stem, sub, _ = file_parts(path)
    session, group, _ = session_place(
        path if stem == "context" else path.with_name(f"{stem}.jsonl")
    )
    cwd = work_dir(Path(ref.root), group)
    stamp = file_mtime(path)
    seen = line_digests(previous_rotation(path), Diagnostics())
    agent = f"sub_{sub}" if sub else None
    source = os.fspath(path)
    for line in JsonlReader(path, diag):
        msg = line.value
        if not isinstance(msg, dict):
            diag.add(source, f"line:{line.lineno}", "not a JSON object; skipped")
            continue
        role = msg.get("role")
        if role in MARKERS:
            continue
        if role not in ("user", "assistant", "tool", "system"):
            diag.unrecognised("message role", role, path=source, locator=f"line:{line.lineno}")
            continue
        items = message_items(msg, agent is not None)
        if not items or digest(msg) in seen:
            continue
        cursor.units += 1
        if agent is not None:
            items = [(r, k, t, {**e, "sidechain": True, "agent_id": agent}) for r, k, t, e in items]
        yield from number_parts(
            [
                make_record(
                    ref, f"line:{line.lineno}", session, r, k, t,
                    timestamp=stamp, cwd=cwd, offset=line.offset,
                    extra={key: v for key, v in e.items() if v is not None},
                )
                for r, k, t, e in items
            ]
        )  # fmt: skip
