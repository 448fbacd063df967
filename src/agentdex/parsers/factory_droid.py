"""Factory Droid sessions (``~/.factory/sessions/<cwd slug>/<id>.jsonl`` + ``<id>.settings.json``).

Droid is closed source. The shape is the one independent public readers parse, several of
them written against real machines (Dicklesworthstone/franken_agent_detection
``src/connectors/factory.rs``; jazzyalex/agent-sessions ``DroidSessionParser.swift``; a
TypeScript adapter "verified on a real machine, 2026-07"; the droid_dash and tokscale usage
readers), see ``docs/agents.md``:

* the first line ``{"type": "session_start", "id", "title", "sessionTitle", "owner",
  "version", "cwd"}``; then ``{"type": "message", "id", "parentId", "timestamp" (ISO),
  "message": {"role": "user"|"assistant", "content": str | blocks}}`` with Anthropic-style
  blocks (``text``, ``tool_use`` {id, name, input}, ``tool_result`` {tool_use_id, content,
  is_error}, ``thinking``); ``todo_state`` lines (the todo list) give no record. Other
  line types and blocks are format drift.
* Prompt = a user message's text. Droid puts ``<system-reminder>...</system-reminder>``
  sections at the head of user text: those are ``system``/``message``, what follows them
  is the prompt. A subagent's session starts with the task its parent sent ("# Task Tool
  Invocation", also its title): that is ``user``/``message``, and so is every user text
  of that session. Reply = an assistant message's text blocks joined (one per line);
  ``thinking`` = reasoning; ``tool_use`` = tool call; ``tool_result`` = tool result.
* Title = ``sessionTitle``, else ``title``, of the last ``session_start``. cwd = its
  ``cwd`` (the folder name is ``cwd`` with every ``/`` turned into ``-``, which cannot be
  turned back, so it is not used).
* ``<id>.settings.json``: ``model``, ``providerLock``, ``providerLockTimestamp`` and
  ``tokenUsage`` {inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens,
  thinkingTokens}: the session's running totals, one usage entry per session.

Not resumable: the settings file's totals change with every turn, so a change re-reads the
whole session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdex.parsers._agent_common import (
    as_text,
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
from agentdex.readers import Diagnostics, JsonlReader, read_json
from agentdex.records import Record, Usage, parse_timestamp

LINE_TYPES = frozenset({"session_start", "message", "todo_state"})
BLOCKS = frozenset({"text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image"})
#: How a subagent's session begins (the task its parent droid sent; also its title).
SUBAGENT_TASK = "# Task Tool Invocation"
_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>", re.DOTALL)
USAGE_REQUIRED = ("inputTokens", "outputTokens")
USAGE_OPTIONAL = ("cacheCreationTokens", "cacheReadTokens", "thinkingTokens")


def settings_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".jsonl") + ".settings.json")


def settings(path: Path) -> dict[str, Any]:
    """The ``<id>.settings.json`` beside a session ({} when absent or unreadable)."""
    beside = settings_path(path)
    return dict_of(read_json(beside, Diagnostics())) if beside.is_file() else {}


def split_reminders(text: str) -> tuple[str, str]:
    """``(leading <system-reminder> sections, the rest)`` of a user text."""
    end = 0
    while found := _REMINDER.match(text, end):
        end = found.end()
    return text[:end].strip(), text[end:].strip()


def blocks_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


class _Session:
    """What the lines before the current one said about the session."""

    def __init__(self, ref: SourceRef, meta: dict[str, Any]) -> None:
        self.ref = ref
        self.sid = Path(ref.path).name.removesuffix(".jsonl")
        self.cwd: str | None = None
        self.version: str | None = None
        self.subagent = False
        self.model = opt_str(meta.get("model"))
        self.stamp: float | None = None

    def start(self, obj: dict[str, Any], cursor: ParseCursor) -> None:
        self.sid = opt_str(obj.get("id")) or self.sid
        self.cwd = opt_str(obj.get("cwd")) or self.cwd
        version = obj.get("version")
        self.version = str(version) if isinstance(version, (str, int)) else self.version
        title = opt_str(obj.get("sessionTitle")) or opt_str(obj.get("title"))
        if title:
            self.subagent = title.lstrip().startswith(SUBAGENT_TASK)
            cursor.titles[self.sid] = " ".join(title.split())

    def record(self, where: str, offset: int, role: Any, kind: Any, text: str,
               **extra: Any) -> Record:  # fmt: skip
        return make_record(
            self.ref, where, self.sid, role, kind, text, timestamp=self.stamp, cwd=self.cwd,
            model=self.model if role == "assistant" else None, offset=offset,
            extra={k: v for k, v in extra.items() if v is not None},
        )  # fmt: skip


def _user(session: _Session, block: dict[str, Any], where: str, offset: int) -> list[Record]:
    reminder, rest = split_reminders(str_of(block.get("text")))
    out = []
    if reminder:
        out.append(session.record(where, offset, "system", "message", reminder))
    if rest:
        task = rest.startswith(SUBAGENT_TASK)
        session.subagent = session.subagent or task
        typed = not session.subagent
        out.append(session.record(where, offset, "user", "prompt" if typed else "message", rest,
                                  subagent_task=True if task else None))  # fmt: skip
    return out


def _message(session: _Session, obj: dict[str, Any], where: str, offset: int,
             diag: Diagnostics) -> list[Record]:  # fmt: skip
    message = dict_of(obj.get("message"))
    role = message.get("role")
    if role not in ("user", "assistant"):
        diag.unrecognised("message role", str(role), version=session.version,
                          path=session.ref.path, locator=where)  # fmt: skip
        return []
    session.model = opt_str(message.get("model")) or session.model
    out: list[Record] = []
    texts: list[str] = []
    reply_at: int | None = None
    for block in blocks_of(message):
        kind = block.get("type")
        if not isinstance(kind, str) or kind not in BLOCKS:
            diag.unrecognised("content block", str(kind), version=session.version,
                              path=session.ref.path, locator=where)  # fmt: skip
        elif kind == "text" and role == "user":
            out.extend(_user(session, block, where, offset))
        elif kind == "text" and role == "assistant":
            texts.append(str_of(block.get("text")))
            reply_at = len(out) if reply_at is None else reply_at
        elif kind == "thinking" and (thought := str_of(block.get("thinking")).strip()):
            out.append(session.record(where, offset, "assistant", "reasoning", thought))
        elif kind == "tool_use":
            text = tool_call_text(block.get("name"), block.get("input"))
            out.append(session.record(where, offset, "assistant", "tool_call", text,
                                      call_id=opt_str(block.get("id"))))  # fmt: skip
        elif kind == "tool_result":
            content = block.get("content")
            text = as_text(content) or (compact_json(content) if content else "")
            if text.strip():
                failed = block.get("is_error")
                out.append(session.record(
                    where, offset, "tool", "tool_result", clip(text),
                    call_id=opt_str(block.get("tool_use_id")),
                    ok=(not failed) if isinstance(failed, bool) else None,
                ))  # fmt: skip
    reply = "\n\n".join(t.strip() for t in texts if t.strip())
    if reply and reply_at is not None:
        out.insert(reply_at, session.record(where, offset, "assistant", "message", reply))
    return out


def parse_session(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    path = Path(ref.path)
    meta = settings(path)
    session = _Session(ref, meta)
    for line in JsonlReader(path, diag):
        obj = line.value
        if not isinstance(obj, dict):
            continue
        kind, where = obj.get("type"), f"line:{line.lineno}"
        if kind == "session_start":
            session.start(obj, cursor)
            continue
        if not isinstance(kind, str) or kind not in LINE_TYPES:
            diag.unrecognised("line type", str(kind), version=session.version, path=path,
                              locator=where)  # fmt: skip
            continue
        session.stamp = parse_timestamp(obj.get("timestamp")) or session.stamp
        if kind != "message":
            continue
        out = _message(session, obj, where, line.offset, diag)
        if out:
            cursor.units += 1
            yield from number_parts(out)
    _usage(ref, cursor, diag, session, meta)


def _usage(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics, session: _Session,
           meta: dict[str, Any]) -> None:  # fmt: skip
    raw = meta.get("tokenUsage")
    if raw is None:
        return
    locator = f"{settings_path(Path(ref.path)).name}:json:/tokenUsage"
    counts = read_counts(raw, USAGE_REQUIRED, USAGE_OPTIONAL)
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, locator, counts)
        return
    thinking = counts["thinkingTokens"]
    usage = Usage(
        agent=ref.agent, store=ref.store, source_path=os.fspath(ref.path), locator=locator,
        session_id=session.sid, call_id=f"droid:{session.sid}:session-total",
        input_tokens=counts["inputTokens"], cache_read_tokens=counts["cacheReadTokens"],
        cache_write_tokens=counts["cacheCreationTokens"],
        output_tokens=counts["outputTokens"] + thinking, reasoning_tokens=thinking,
        timestamp=session.stamp or parse_timestamp(meta.get("providerLockTimestamp")),
        model=opt_str(meta.get("model")), cwd=session.cwd, host=ref.host,
    )  # fmt: skip
    cursor.add_usage(usage, diag)


# Independent counts (``audit``): plain json over the raw lines, none of the parser's code.


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    for item in JsonlReader(path, Diagnostics()):
        if isinstance(item.value, dict):
            yield item.value


def _content(obj: dict[str, Any]) -> tuple[Any, list[dict[str, Any]]]:
    message = obj.get("message")
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    blocks = content if isinstance(content, list) else []
    return message.get("role"), [b for b in blocks if isinstance(b, dict)]


def _useful(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    if kind == "text":
        return bool(str(block.get("text") or "").strip())
    if kind == "thinking":
        return bool(str(block.get("thinking") or "").strip())
    if kind == "tool_result":
        content = block.get("content")
        return bool(content.strip() if isinstance(content, str) else content)
    return kind == "tool_use"


def count_raw(path: Path) -> int:
    """``message`` lines of a user or assistant with a non-blank text, thinking, tool use or a
    tool result with content."""
    return sum(
        obj.get("type") == "message"
        and _content(obj)[0] in ("user", "assistant")
        and any(_useful(b) for b in _content(obj)[1])
        for obj in _lines(path)
    )


def count_roles(path: Path) -> RoleCounts:
    """Prompts: user text left after the leading system reminders, in a session that is not a
    subagent's (title or first user text "# Task Tool Invocation"); replies: assistant
    lines with text."""
    counts: RoleCounts = {}
    sid, subagent = path.name.removesuffix(".jsonl"), False
    for obj in _lines(path):
        if obj.get("type") == "session_start":
            sid = str(obj.get("id") or sid)
            title = str(obj.get("sessionTitle") or obj.get("title") or "")
            subagent = title.lstrip().startswith("# Task Tool Invocation")
            continue
        if obj.get("type") != "message":
            continue
        role, content = _content(obj)
        texts = [str(b.get("text") or "") for b in content if b.get("type") == "text"]
        if role == "assistant" and any(t.strip() for t in texts):
            add_role(counts, sid, "replies")
        elif role == "user":
            for text in texts:
                rest = re.sub(r"^(\s*<system-reminder>.*?</system-reminder>)*", "", text,
                              flags=re.DOTALL).strip()  # fmt: skip
                if rest.startswith("# Task Tool Invocation"):
                    subagent = True
                elif rest and not subagent:
                    add_role(counts, sid, "prompts")
    return counts


PARSERS = (
    ParserSpec(
        "factory-droid.session_jsonl.v1",
        parse_session,
        count_raw=count_raw,
        count_roles=count_roles,
    ),
)
