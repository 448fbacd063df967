"""Amp's legacy local threads: ``~/.local/share/amp/threads/T-<id>.json`` (``amp.thread_json.v1``).

Amp (Sourcegraph/ampcode.com) is closed source; the shape is taken from the
public readers that parse these files (kenn-io/agentsview ``internal/parser/amp.go``
and its tests) and is said to be written only by CLI versions up to early
2026: current versions keep threads on ampcode.com and write nothing here.

One JSON document per thread: ``{v, id, created (epoch ms), title, env.initial.
trees[{displayName, uri}], messages[{role, content[], usage?}], meta.traces}``.
Content blocks are Anthropic's (``text``, ``thinking``, ``tool_use``,
``tool_result``); Amp's own tool results are ``{"type": "tool_result",
"toolUseID", "run": {"status", "result" | "error"}}``. Records (``locator``
``json:/messages/<i>[/content/<j>]``): user text -> ``user``/``prompt``,
tool results -> ``tool_result``; assistant text -> one reply per message,
``thinking`` -> ``reasoning``, ``tool_use`` -> ``tool_call``. Times: an
assistant message's ``usage.timestamp``, else the thread's ``created``.
cwd: the first tree's ``file://`` uri. Title: ``title``. Usage: each
assistant message's ``usage`` (``inputTokens`` fresh, cache read/creation
apart). Unit: a message that gives a record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    clip,
    compact_json,
    dict_of,
    make_record,
    opt_str,
    str_of,
    tool_call_text,
)
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import Diagnostics, read_json
from agentdex.records import Kind, Record, Role, Usage, parse_timestamp
from agentdex.uris import uri_to_path

Item = tuple[Role, Kind, str, str, dict[str, Any]]
_BLOCKS = {"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"}


def _result_text(block: dict[str, Any]) -> str:
    """A tool result: Anthropic's ``content`` or Amp's ``run`` (result, error, cancelled)."""
    if "content" in block:
        content = block["content"]
        if isinstance(content, list):
            return "\n".join(str_of(dict_of(c).get("text")) for c in content).strip()
        return content if isinstance(content, str) else compact_json(content)
    run = dict_of(block.get("run"))
    result = run.get("result")
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        for key in ("output", "content", "diff"):
            if isinstance(result.get(key), str):
                return str(result[key])
    if result is not None:
        return compact_json(result)
    if run.get("status") == "error":
        return str_of(dict_of(run.get("error")).get("message")) or "[error]"
    return "[cancelled]" if run.get("status") == "cancelled" else ""


def message_items(message: dict[str, Any], at: str) -> tuple[list[Item], set[str]]:
    """(records, unknown block types) of one message."""
    role, content = message.get("role"), message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    items: list[Item] = []
    unknown: set[str] = set()
    texts: list[str] = []
    text_at: int | None = None  # where the text goes among the items: at its first block
    for j, block in enumerate(blocks):
        block = dict_of(block)
        kind = block.get("type")
        if kind not in _BLOCKS:
            unknown.add(str(kind))
        elif kind == "text" and str_of(block.get("text")).strip():
            texts.append(block["text"])
            text_at = len(items) if text_at is None else text_at
        elif kind == "thinking" and role == "assistant" and str_of(block.get("thinking")).strip():
            items.append(("assistant", "reasoning", block["thinking"], f"{at}/content/{j}", {}))
        elif kind == "tool_use":
            text = tool_call_text(block.get("name"), block.get("input"))
            extra = {"call_id": opt_str(block.get("id"))}
            items.append(("assistant", "tool_call", text, f"{at}/content/{j}", extra))
        elif kind == "tool_result":
            text = _result_text(block).strip()
            call = opt_str(block.get("toolUseID")) or opt_str(block.get("tool_use_id"))
            if text:
                items.append(
                    ("tool", "tool_result", clip(text), f"{at}/content/{j}", {"call_id": call})
                )
    text = "\n".join(texts).strip()
    if text and role in ("user", "assistant"):
        role_kind: tuple[Role, Kind] = (
            ("user", "prompt") if role == "user" else ("assistant", "message")
        )
        items.insert(text_at or 0, (*role_kind, text, f"{at}/content", {}))
    return items, unknown


def thread_id(path: Path, doc: dict[str, Any]) -> str:
    return path.stem if path.stem.startswith("T-") else str_of(doc.get("id")) or path.stem


def _cwd(doc: dict[str, Any]) -> str | None:
    trees = dict_of(dict_of(doc.get("env")).get("initial")).get("trees")
    first = dict_of(trees[0]) if isinstance(trees, list) and trees else {}
    uri = opt_str(first.get("uri"))
    return uri_to_path(uri) if uri else None


def parse_thread(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    cursor.units = 0
    doc = read_json(path, diag)
    if not isinstance(doc, dict):
        if doc is not None:
            diag.add(path, "", "not a thread object; skipped")
        return
    session, cwd = thread_id(path, doc), _cwd(doc)
    created = doc.get("created")
    started = created / 1000 if isinstance(created, int | float) and created > 0 else None
    if title := " ".join(str_of(doc.get("title")).split()):
        cursor.titles[session] = title
    version = str(doc["v"]) if isinstance(doc.get("v"), int | str) else None
    for i, message in enumerate(doc.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        at = f"/messages/{i}"
        items, unknown = message_items(message, at)
        for name in sorted(unknown):
            diag.unrecognised(
                "content block", name, version=version, path=path, locator=f"json:{at}"
            )
        usage = dict_of(message.get("usage"))
        stamp = parse_timestamp(usage.get("timestamp")) or started
        if message.get("role") == "assistant" and usage:
            _usage(ref, cursor, diag, session, f"json:{at}/usage", usage, stamp, cwd)
        if not items:
            continue
        cursor.units += 1
        model = opt_str(usage.get("model"))
        for role, kind, text, pointer, extra in items:
            yield make_record(
                ref, f"json:{pointer}", session, role, kind, text,
                timestamp=stamp, cwd=cwd, model=model if role == "assistant" else None,
                extra={k: v for k, v in extra.items() if v is not None},
            )  # fmt: skip


def _usage(
    ref: SourceRef, cursor: ParseCursor, diag: Diagnostics, session: str, locator: str,
    raw: dict[str, Any], stamp: float | None, cwd: str | None,
) -> None:  # fmt: skip
    counts = read_counts(
        raw, ["outputTokens"], ["inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens"]
    )
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, locator, counts)
        return
    cursor.add_usage(
        Usage(
            agent=ref.agent, store=ref.store, source_path=os.fspath(ref.path), locator=locator,
            session_id=session, call_id=f"amp:{session}:{locator}",
            input_tokens=counts["inputTokens"], cache_read_tokens=counts["cacheReadInputTokens"],
            cache_write_tokens=counts["cacheCreationInputTokens"],
            output_tokens=counts["outputTokens"], timestamp=stamp,
            model=opt_str(raw.get("model")), cwd=cwd, host=ref.host,
        ),
        diag,
    )  # fmt: skip


def _load(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    return [b for b in blocks if isinstance(b, dict)]


def count_thread(path: Path) -> int:
    """Messages of a user or assistant with text, thinking, a tool call or a tool result."""
    count = 0
    for m in _load(path).get("messages") or []:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            continue
        count += any(
            (b.get("type") == "text" and str_of(b.get("text")).strip())
            or (
                m["role"] == "assistant"
                and b.get("type") == "thinking"
                and str_of(b.get("thinking")).strip()
            )
            or b.get("type") == "tool_use"
            or (b.get("type") == "tool_result" and _result_text(b).strip())
            for b in _blocks(m)
        )
    return count


def count_thread_roles(path: Path) -> RoleCounts:
    doc = _load(path)
    session = thread_id(path, doc)
    counts: RoleCounts = {}
    for m in doc.get("messages") or []:
        if not isinstance(m, dict):
            continue
        text = any(b.get("type") == "text" and str_of(b.get("text")).strip() for b in _blocks(m))
        if text and m.get("role") == "user":
            add_role(counts, session, "prompts")
        elif text and m.get("role") == "assistant":
            add_role(counts, session, "replies")
    return counts


PARSERS = (
    ParserSpec(
        "amp.thread_json.v1", parse_thread, count_raw=count_thread, count_roles=count_thread_roles
    ),
)
