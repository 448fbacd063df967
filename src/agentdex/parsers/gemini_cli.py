"""Gemini CLI: saved chats (``tmp/<dir>/chats/session-*.json[l]``) and ``logs.json``.

Eras handled
------------
* **.json** (older): one document ``{sessionId, projectHash, startTime,
  lastUpdated, messages[], summary?}``. Read whole with :func:`read_json`
  (size-capped); locators are ``json:/messages/<i>`` (+ ``/thoughts/<j>``,
  ``/toolCalls/<j>``, ``/toolCalls/<j>/result``).
* **.jsonl** (newer): line 1 is the header ``{sessionId, projectHash,
  startTime, lastUpdated, kind, directories?}``; then message records
  (``{id, timestamp, type, content, ...}``), ``{"$set": {...}}`` metadata
  updates and ``{"$rewindTo": id}``. Replay follows Gemini CLI's own loader
  (``loadConversationRecord``): a message record *upserts* by ``id`` (a
  re-emitted id keeps its first position, takes the newest body);
  ``$rewindTo`` removes the named message **and** everything after it (the
  CLI rewinds "to the state just before" that message; an unknown id clears
  the table); ``$set`` merges into the metadata. ``$set.messages`` is the
  model's context view (masked tool output, compression summaries), not the
  transcript, so it is used only when the file has no message records at
  all. Locators are ``line:<n>`` of the line that last wrote the message
  (+ ``#/thoughts/<j>`` ...); ``offset`` is that line's byte offset.
  Memory: the replay keeps a table of live message ids and line offsets
  (upsert/rewind make that inherent), then re-reads the surviving lines, so
  memory grows with the number of messages, not their size (a 53 MB log
  peaks near 8 MB). A line that changed between the passes is skipped with
  a diagnostic. Not resumable: the whole file is replayed each time.
* When the CLI resumes an old .json chat it copies it into a sibling
  ``.jsonl`` and continues there, leaving the .json behind: a .json with a
  sibling .jsonl is skipped (with a diagnostic) so the chat is not indexed
  twice.
* **logs.json**: an array of ``{sessionId, messageId, timestamp, type:
  "user", message}`` prompts; locators ``json:/<i>``.

Mapping
-------
``user`` -> user/prompt; ``gemini`` -> assistant/message (``content``),
assistant/reasoning per ``thoughts[]`` entry, assistant/tool_call per
``toolCalls[]`` entry and tool/tool_result when the call carries a result;
``info``/``error``/``warning`` -> system/message. ``summary`` becomes a
system/summary record and the session title.

Usage (``cursor.usage``): a ``gemini`` message's ``tokens``, one call per live
message id (:mod:`agentdex.parsers._gemini_usage`).

Units counted (``cursor.units`` and ``count_raw``)
--------------------------------------------------
Chats: live messages (after replay) of a known type that produced at least
one record. ``count_raw`` (:mod:`agentdex.parsers._gemini_counts`) counts,
without the parser's code, messages of a known type with non-blank
``content`` (or, for ``gemini``, non-empty ``thoughts``/``toolCalls``): for
.json over ``messages[]``; for .jsonl by tracking only message ids, their
qualification and rewinds. logs.json: entries with ``type == "user"`` and
a non-empty string ``message``. Roles (``count_roles``): per session,
``user`` messages with text and ``gemini`` messages with text (logs.json:
user entries, by ``sessionId``).

Project (cwd)
-------------
``tmp/<dir>/.project_root`` holds the literal root when present; newer
installs name ``<dir>`` by a readable slug listed in ``~/.gemini/projects.json``
(``{"projects": {root: slug}}``); older ones use ``sha256(root)``, matched
against the roots known from those two sources, the session's
``directories`` and the home directory. Unresolved means ``cwd=None``:
never a guess.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from agentdex.parsers._gemini_counts import (
    count_chat_raw,
    count_chat_roles,
    count_logs_raw,
    count_logs_roles,
    superseded,
)
from agentdex.parsers._gemini_project import project_dir, resolve_project_root
from agentdex.parsers._gemini_text import (
    call_text,
    content_text,
    result_text,
    thought_text,
)
from agentdex.parsers._gemini_usage import note_usage
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.readers import MAX_LINE_BYTES, Diagnostics, JsonlReader, read_json
from agentdex.records import Kind, Record, Role, parse_timestamp

_SYSTEM_TYPES = frozenset({"info", "error", "warning"})


# --------------------------------------------------------------------------- record building


class _Emitter:
    """Builds records for one source, counting units and keeping titles."""

    def __init__(self, ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> None:
        self.ref, self.cursor, self.diagnostics = ref, cursor, diagnostics
        self.session_id = ref.path.stem
        self.cwd: str | None = None
        self.unknown_types: set[str] = set()

    def record(
        self,
        locator: str,
        role: Role,
        kind: Kind,
        text: str,
        timestamp: object,
        *,
        model: object = None,
        offset: int = -1,
        extra: dict[str, Any] | None = None,
    ) -> Record:
        return Record(
            agent=self.ref.agent,
            store=self.ref.store,
            source_path=str(self.ref.path),
            locator=locator,
            session_id=self.session_id,
            role=role,
            kind=kind,
            text=text,
            timestamp=parse_timestamp(timestamp),
            model=model if isinstance(model, str) and model else None,
            cwd=self.cwd,
            host=self.ref.host,
            offset=offset,
            extra=extra or {},
        )

    def message(self, msg: dict[str, Any], locator: str, sep: str, offset: int) -> list[Record]:
        """Records for one message (``sep`` joins sub-locators: ``/`` or ``#/``)."""
        kind_of = str(msg.get("type"))  # str(): a list here must not break set lookups
        stamp = msg.get("timestamp")
        extra = {"message_id": msg["id"]} if isinstance(msg.get("id"), str) else {}
        out: list[Record] = []
        text = content_text(msg.get("content"))
        if kind_of == "user":
            if text.strip():
                out.append(
                    self.record(locator, "user", "prompt", text, stamp, offset=offset, extra=extra)
                )
        elif kind_of in _SYSTEM_TYPES:
            if text.strip():
                out.append(
                    self.record(
                        locator,
                        "system",
                        "message",
                        text,
                        stamp,
                        offset=offset,
                        extra={**extra, "type": kind_of},
                    )
                )
        elif kind_of == "gemini":
            model = msg.get("model")
            if msg.get("tokens") is not None:
                note_usage(self.ref, self.cursor, self.diagnostics, msg, locator, offset,
                           self.session_id, self.cwd)  # fmt: skip
            thoughts = msg.get("thoughts")
            for j, thought in enumerate(thoughts if isinstance(thoughts, list) else []):
                body = thought_text(thought)
                if body:
                    when = thought.get("timestamp") if isinstance(thought, dict) else None
                    out.append(
                        self.record(
                            f"{locator}{sep}thoughts/{j}",
                            "assistant",
                            "reasoning",
                            body,
                            when or stamp,
                            model=model,
                            offset=offset,
                            extra=dict(extra),
                        )
                    )
            if text.strip():
                out.append(
                    self.record(
                        locator,
                        "assistant",
                        "message",
                        text,
                        stamp,
                        model=model,
                        offset=offset,
                        extra=dict(extra),
                    )
                )
            calls = msg.get("toolCalls")
            for j, call in enumerate(calls if isinstance(calls, list) else []):
                if not isinstance(call, dict):
                    continue
                loc = f"{locator}{sep}toolCalls/{j}"
                call_extra = {
                    **extra,
                    "tool": call.get("name"),
                    "call_id": call.get("id"),
                    "status": call.get("status"),
                }
                when = call.get("timestamp") or stamp
                out.append(
                    self.record(
                        loc,
                        "assistant",
                        "tool_call",
                        call_text(call),
                        when,
                        model=model,
                        offset=offset,
                        extra=call_extra,
                    )
                )
                output = result_text(call)
                if output.strip():
                    out.append(
                        self.record(
                            f"{loc}/result",
                            "tool",
                            "tool_result",
                            output,
                            when,
                            offset=offset,
                            extra=dict(call_extra),
                        )
                    )
        else:
            self.unknown_types.add(str(kind_of))
            # format drift (the chat files record no CLI version)
            self.diagnostics.unrecognised(
                "message type", msg.get("type"), path=self.ref.path, locator=locator
            )
        if out:
            self.cursor.units += 1
        return out

    def summary(
        self, summary: object, locator: str, stamp: object, offset: int = -1
    ) -> list[Record]:
        if not isinstance(summary, str) or not summary.strip():
            return []
        self.cursor.titles[self.session_id] = summary.strip()
        return [self.record(locator, "system", "summary", summary, stamp, offset=offset)]

    def finish(self) -> None:
        if self.unknown_types:
            self.diagnostics.add(
                self.ref.path, "", f"unknown message types skipped: {sorted(self.unknown_types)}"
            )


def _session_dirs(meta: dict[str, Any]) -> tuple[str, ...]:
    dirs = meta.get("directories")
    return tuple(d for d in dirs if isinstance(d, str)) if isinstance(dirs, list) else ()


def _start(ref: SourceRef, emitter: _Emitter, meta: dict[str, Any]) -> None:
    sid = meta.get("sessionId")
    if isinstance(sid, str) and sid:
        emitter.session_id = sid
    emitter.cwd = resolve_project_root(
        project_dir(ref.path, ref.root), ref.root, _session_dirs(meta)
    )


# --------------------------------------------------------------------------- chats


def _parse_chat_json(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    data = read_json(ref.path, diag)
    if data is None:
        return
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        diag.add(ref.path, "", "not a Gemini chat (no messages[]); skipped")
        return
    emitter = _Emitter(ref, cursor, diag)
    _start(ref, emitter, data)
    for i, msg in enumerate(data["messages"]):
        if isinstance(msg, dict):
            yield from emitter.message(msg, f"json:/messages/{i}", "/", -1)
        else:
            diag.add(ref.path, f"json:/messages/{i}", "message is not an object; skipped")
    yield from emitter.summary(data.get("summary"), "json:/summary", data.get("lastUpdated"))
    emitter.finish()


def _reread(handle: BinaryIO, offset: int) -> Any:
    """Decode the line at ``offset`` again (invalid UTF-8 replaced); ``None`` if it is not JSON."""
    handle.seek(offset)
    raw = handle.readline(MAX_LINE_BYTES + 1).strip()
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            return orjson.loads(raw.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            return None


def _parse_chat_jsonl(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    # Pass 1 replays the log keeping only positions: message id -> (line, offset), in
    # first-seen order as in the CLI. Pass 2 re-reads the surviving lines, so memory grows
    # with the number of live ids, not with the size of their content.
    meta: dict[str, Any] = {}
    table: dict[str, tuple[int, int]] = {}
    summary_at: tuple[int, int] = (0, -1)
    snapshot_at: tuple[int, int] | None = None  # last line that set a non-empty messages[]
    saw_header = False
    reader = JsonlReader(ref.path, diag)
    for line in reader:
        value = line.value
        if not isinstance(value, dict):
            diag.add(ref.path, f"line:{line.lineno}", "not an object; skipped")
            continue
        rewind = value.get("$rewindTo")
        if isinstance(rewind, str):
            _rewind(table, rewind)
            continue
        if isinstance(value.get("id"), str):
            table[value["id"]] = (line.lineno, line.offset)
            continue
        update = value.get("$set")
        if not isinstance(update, dict) and isinstance(value.get("sessionId"), str):
            update, saw_header = value, True
        if not isinstance(update, dict):
            diag.add(ref.path, f"line:{line.lineno}", "unrecognized record; skipped")
            continue
        if "messages" in update:
            messages = update["messages"]
            nonempty = isinstance(messages, list) and bool(messages)
            snapshot_at = (line.lineno, line.offset) if nonempty else None
        meta.update((k, v) for k, v in update.items() if k != "messages")
        if "summary" in update:
            summary_at = (line.lineno, line.offset)
    if not saw_header and not table and snapshot_at is None:
        if reader.lines_read:
            diag.add(ref.path, "", "no Gemini header or messages found")
        return
    emitter = _Emitter(ref, cursor, diag)
    _start(ref, emitter, meta)
    with open(ref.path, "rb") as handle:
        if table:
            for mid, (lineno, offset) in table.items():
                msg = _reread(handle, offset)
                if not isinstance(msg, dict) or msg.get("id") != mid:
                    diag.add(ref.path, f"line:{lineno}", "changed while reading; skipped")
                    continue
                yield from emitter.message(msg, f"line:{lineno}", "#/", offset)
        elif snapshot_at is not None:
            # Only a metadata snapshot holds messages (no records were appended).
            holder = _reread(handle, snapshot_at[1])
            holder = holder.get("$set", holder) if isinstance(holder, dict) else None
            messages = holder.get("messages") if isinstance(holder, dict) else None
            for i, msg in enumerate(messages if isinstance(messages, list) else []):
                if isinstance(msg, dict):
                    yield from emitter.message(msg, f"meta:/messages/{i}", "/", -1)
    lineno, offset = summary_at
    yield from emitter.summary(
        meta.get("summary"), f"line:{lineno}", meta.get("lastUpdated"), offset
    )
    emitter.finish()


def _rewind(table: dict[str, tuple[int, int]], target: str) -> None:
    """Drop ``target`` and every later message; an unknown target clears the table.

    Walks from the end: a rewind names a recent message, so this stays cheap on long logs.
    """
    if target not in table:
        table.clear()
        return
    stale: list[str] = []
    for key in reversed(table):
        stale.append(key)
        if key == target:
            break
    for key in stale:
        del table[key]


def parse_chat(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    """Records of one saved chat (.json document or .jsonl replay log)."""
    if not _is_file(ref.path, diagnostics):
        return
    if ref.path.suffix == ".jsonl":
        yield from _parse_chat_jsonl(ref, cursor, diagnostics)
    elif superseded(ref.path):
        diagnostics.add(ref.path, "", f"migrated to {ref.path.name}l; read there instead")
    else:
        yield from _parse_chat_json(ref, cursor, diagnostics)


def _is_file(path: Path, diagnostics: Diagnostics) -> bool:
    try:
        if path.is_file():
            return True
    except OSError:
        pass
    diagnostics.add(path, "", "not a regular file; skipped")
    return False


# --------------------------------------------------------------------------- logs.json


def parse_logs(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    """One user/prompt record per ``type: "user"`` entry of ``logs.json``."""
    if not _is_file(ref.path, diagnostics):
        return
    data = read_json(ref.path, diagnostics)
    if data is None:
        return
    if not isinstance(data, list):
        diagnostics.add(ref.path, "", "logs.json is not an array; skipped")
        return
    emitter = _Emitter(ref, cursor, diagnostics)
    emitter.cwd = resolve_project_root(project_dir(ref.path, ref.root), ref.root)
    skipped = 0
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or entry.get("type") != "user":
            skipped += 1
            continue
        text = entry.get("message")
        if not isinstance(text, str) or not text.strip():
            skipped += 1
            continue
        sid = entry.get("sessionId")
        emitter.session_id = sid if isinstance(sid, str) and sid else ref.path.stem
        extra = {"message_id": entry.get("messageId")}
        yield emitter.record(
            f"json:/{i}", "user", "prompt", text, entry.get("timestamp"), extra=extra
        )
        cursor.units += 1
    if skipped:
        diagnostics.add(ref.path, "", f"{skipped} entries without a user prompt skipped")


PARSERS: tuple[ParserSpec, ...] = (
    ParserSpec(
        "gemini-cli.chat.v1",
        parse_chat,
        resumable=False,
        count_raw=count_chat_raw,
        count_roles=count_chat_roles,
    ),
    ParserSpec(
        "gemini-cli.logs_json.v1",
        parse_logs,
        resumable=False,
        count_raw=count_logs_raw,
        count_roles=count_logs_roles,
    ),
)
