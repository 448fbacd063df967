"""``~/.kiro/sessions/cli/<id>.jsonl`` and its ``<id>.json`` (``kiro-cli.session_jsonl.v1``).

Kiro CLI 2.x is closed source; this shape is what public readers parse (agentsview
``internal/parser/kiro.go``; mxmehl/kiro-cli-history; the abtop and aws-bench collectors):

* each line ``{"version": "v1", "kind": K, "data": {...}}``. ``Prompt``:
  ``data.content`` blocks ``{"kind": "text", "data": s}``, ``data.meta.timestamp`` (unix
  seconds); ``AssistantMessage``: text blocks and ``{"kind": "toolUse", "data":
  {toolUseId, name, input}}``; ``ToolResults``: ``{"kind": "toolResult", "data":
  {toolUseId, content: [{kind: text|json, data}], status}}``. ``Clear``, ``ResetTo``,
  ``CancelledPrompt`` and ``Compaction`` mark the conversation's state; what they
  carry is not known, so they give no record (a ``Compaction`` with a ``summary`` string
  gives a ``system``/``summary``). Other kinds and blocks are format drift.
* ``<id>.json``: ``session_id``, ``cwd``, ``title``, ``created_at``, ``updated_at``,
  ``session_created_reason`` (``subagent`` for a session another agent started: its
  prompts are ``user``/``message``), ``session_state.conversation_metadata
  .user_turn_metadatas[]`` (one per model turn: ``result.Ok.id``, ``end_timestamp``,
  ``model``, ``input_token_count``, ``output_token_count``,
  ``cache_read_input_token_count``, ``cache_write_input_token_count``,
  ``metering_usage`` credits) and ``rts_model_state.model_info.model_id``.

Prompt = a ``Prompt`` line's text, except Kiro's own title request ("You are a session
naming agent", ``system``/``message``). Reply = an ``AssistantMessage``'s text blocks
joined; ``toolUse`` = tool call; ``toolResult`` = tool result. Only prompts carry a time:
replies and tool events get their prompt's (the session's ``created_at`` before any).
Usage: one entry per turn of ``user_turn_metadatas`` (``call_id`` = its response id, so a
resumed session's copied turns count once; all-zero turns, which Kiro writes when it
reports only credits, are left out). ``input_token_count`` is taken as the fresh input,
as the public usage readers do.
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
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics, JsonlReader, read_json
from agentdex.records import Record, Usage, parse_timestamp

KINDS = frozenset({"Prompt", "AssistantMessage", "ToolResults"})
MARKERS = frozenset({"Clear", "ResetTo", "CancelledPrompt", "Compaction"})
BLOCKS = frozenset({"text", "toolUse", "toolResult", "image"})
NAMING = "You are a session naming agent"
TURN_COUNTS = ("input_token_count", "output_token_count")
TURN_CACHE = ("cache_read_input_token_count", "cache_write_input_token_count")
TURNS_POINTER = "/session_state/conversation_metadata/user_turn_metadatas"


def sidecar(path: Path) -> dict[str, Any]:
    """The ``<id>.json`` beside a session log ({} when absent or unreadable)."""
    meta_path = path.with_suffix(".json")
    if not meta_path.is_file():
        return {}
    return dict_of(read_json(meta_path, Diagnostics()))


def session_id(path: Path, meta: dict[str, Any]) -> str:
    return opt_str(meta.get("session_id")) or path.stem


def blocks(data: object) -> list[dict[str, Any]]:
    content = dict_of(data).get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def block_text(items: list[dict[str, Any]]) -> str:
    texts = [str_of(b.get("data")) for b in items if b.get("kind") == "text"]
    return "\n\n".join(t.strip() for t in texts if t.strip())


def is_naming_prompt(text: str) -> bool:
    return text.lstrip().startswith(NAMING)


def _result_text(result: dict[str, Any]) -> str:
    parts = []
    for item in result.get("content") or []:
        if isinstance(item, dict) and item.get("kind") == "text":
            parts.append(str_of(item.get("data")))
        elif isinstance(item, dict):
            parts.append(compact_json(item.get("data", item)))
        elif isinstance(item, str):
            parts.append(item)
    return "\n".join(p for p in parts if p)


def parse_session(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    meta = sidecar(path)
    sid = session_id(path, meta)
    if title := opt_str(meta.get("title")):
        cursor.titles[sid] = " ".join(title.split())
    cwd = opt_str(meta.get("cwd"))
    by_agent = meta.get("session_created_reason") == "subagent"
    state = dict_of(meta.get("session_state"))
    model = opt_str(
        dict_of(dict_of(state.get("rts_model_state")).get("model_info")).get("model_id")
    )
    last = parse_timestamp(meta.get("created_at")) or _mtime(path)
    for line in JsonlReader(path, diag):
        obj = line.value
        if not isinstance(obj, dict):
            continue
        kind, data = obj.get("kind"), dict_of(obj.get("data"))
        version = opt_str(obj.get("version"))
        where = f"line:{line.lineno}"
        last = parse_timestamp(dict_of(data.get("meta")).get("timestamp")) or last
        if kind not in KINDS:
            if kind == "Compaction" and (summary := str_of(data.get("summary"))).strip():
                cursor.units += 1
                yield _rec(ref, where, sid, "system", "summary", summary, last, cwd, line.offset)
            elif kind not in MARKERS:
                diag.unrecognised("line kind", str(kind), version=version, path=path,
                                  locator=where)  # fmt: skip
            continue
        items = blocks(data)
        for item in items:
            if item.get("kind") not in BLOCKS:
                diag.unrecognised("content block", str(item.get("kind")), version=version,
                                  path=path, locator=where)  # fmt: skip
        out: list[Record] = []
        if kind == "Prompt":
            text = block_text(items)
            typed = not by_agent and not is_naming_prompt(text)
            role, what = (
                ("user", "prompt")
                if typed
                else (("system", "message") if is_naming_prompt(text) else ("user", "message"))
            )
            if text:
                out.append(_rec(ref, where, sid, role, what, text, last, cwd, line.offset))
        elif kind == "AssistantMessage":
            if text := block_text(items):
                out.append(_rec(ref, where, sid, "assistant", "message", text, last, cwd,
                                line.offset, model=model))  # fmt: skip
            for item in items:
                if item.get("kind") == "toolUse":
                    use = dict_of(item.get("data"))
                    out.append(_rec(
                        ref, where, sid, "assistant", "tool_call",
                        tool_call_text(use.get("name"), use.get("input")), last, cwd,
                        line.offset, model=model, call_id=opt_str(use.get("toolUseId")),
                    ))  # fmt: skip
        else:
            for item in items:
                if item.get("kind") != "toolResult":
                    continue
                result = dict_of(item.get("data"))
                text = _result_text(result)
                if text.strip():
                    status = str_of(result.get("status")).lower()
                    out.append(_rec(
                        ref, where, sid, "tool", "tool_result", clip(text), last, cwd,
                        line.offset, call_id=opt_str(result.get("toolUseId")),
                        ok=(status != "error") if status else None,
                    ))  # fmt: skip
        if out:
            cursor.units += 1
            yield from number_parts(out)
    _usage(ref, cursor, diag, sid, state, cwd, model)


def _rec(
    ref: SourceRef, where: str, sid: str, role: Any, kind: Any, text: str,
    stamp: float | None, cwd: str | None, offset: int, model: str | None = None, **extra: Any,
) -> Record:  # fmt: skip
    record = make_record(
        ref, where, sid, role, kind, text, timestamp=stamp, cwd=cwd, model=model,
        extra={k: v for k, v in extra.items() if v is not None},
    )  # fmt: skip
    record.offset = offset
    return record


def turns(state: dict[str, Any]) -> list[Any]:
    found = dict_of(state.get("conversation_metadata")).get("user_turn_metadatas")
    return found if isinstance(found, list) else []


def _usage(
    ref: SourceRef, cursor: ParseCursor, diag: Diagnostics, sid: str, state: dict[str, Any],
    cwd: str | None, model: str | None,
) -> None:  # fmt: skip
    for n, turn in enumerate(turns(state)):
        if not isinstance(turn, dict) or not any(k in turn for k in TURN_COUNTS + TURN_CACHE):
            continue  # a turn with credits only: no tokens recorded
        locator = f"{Path(ref.path).stem}.json:json:{TURNS_POINTER}/{n}"
        counts = read_counts(turn, TURN_COUNTS, TURN_CACHE)
        if isinstance(counts, str):
            cursor.skip_usage(diag, ref.path, locator, counts)
            continue
        response = opt_str(dict_of(dict_of(turn.get("result")).get("Ok")).get("id"))
        cursor.add_usage(
            Usage(
                agent=ref.agent, store=ref.store, source_path=os.fspath(ref.path),
                locator=locator, session_id=sid,
                call_id=f"kiro:{response}" if response else f"kiro:{sid}:{n}",
                input_tokens=counts["input_token_count"],
                cache_read_tokens=counts["cache_read_input_token_count"],
                cache_write_tokens=counts["cache_write_input_token_count"],
                output_tokens=counts["output_token_count"],
                timestamp=parse_timestamp(turn.get("end_timestamp")),
                model=opt_str(turn.get("model")) or model, cwd=cwd, host=ref.host,
            ),
            diag,
        )  # fmt: skip


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None
