"""OpenCode: the SQLite store (>= 1.2) and the older JSON file tree.

SQLite (``opencode.db``, WAL; ``$OPENCODE_DB``), two schemas:

- 1.x: ``session(id, directory, title, parent_id, time_created)``,
  ``message(id, session_id, data{role, modelID, time})``, ``part(id,
  message_id, session_id, data{type: text|reasoning|tool|..., text})``.
- 2.x: ``session_v2`` and ``session_message(id, session_id, type, seq,
  data)``: user rows carry ``data.text``; assistant rows carry
  ``data.content[]`` parts inline and ``data.model.id``.

Only those tables are read (``account``/``credential`` never). Rows are
streamed session by session. Text parts OpenCode injects itself
(``synthetic``/``ignored`` flags, or "Called the X tool with the following
input:" narration) are not prompts and are skipped.

JSON tree (before 1.2): ``storage/message/<sessionID>/<msgID>.json`` with
parts in ``storage/part/<msgID>/*.json`` and the session in
``storage/session/<projectID>/<sessionID>.json``.

Locators: ``row:part/<id>`` (1.x), ``row:session_message/<id>`` (a 2.x user
row) or ``row:session_message/<id>/content/<j>`` (a 2.x assistant part),
``part:<file>`` (JSON tree); a tool part's result adds ``#1``. Each text
part of an assistant message is a reply (OpenCode shows them as separate
blocks between tool calls). Roles (``count_roles``): text parts of user
messages and of assistant messages, counted by plain SQL / ``json``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

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
from agentdex.parsers._opencode_usage import note_usage
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import Diagnostics, connect_readonly, is_one_of, read_json
from agentdex.records import Record, parse_timestamp

_NARRATION_RE = re.compile(r"^Called the \S+ tool with the following input:")
_NARRATION_LIKE = "Called the % tool with the following input:%"


def _loads(value: object) -> dict[str, Any]:
    if isinstance(value, bytes | str):
        try:
            data = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}
    return {}


def _is_injected(part: dict[str, Any]) -> bool:
    text = part.get("text")
    return bool(part.get("synthetic") or part.get("ignored")) or (
        isinstance(text, str) and bool(_NARRATION_RE.match(text))
    )


#: Part types that give no record on purpose (step markers, snapshots, patches, files...).
_SKIPPED_PARTS = frozenset(
    {"step-start", "step-finish", "snapshot", "patch", "file", "agent", "subtask", "retry",
     "compaction"}
)  # fmt: skip
_KNOWN_PARTS = frozenset({"text", "reasoning", "tool"})


def _drift(
    diag: Diagnostics, ref: SourceRef, what: str, name: object, locator: str, version: object
) -> None:
    """Report a part type (or 2.x message type) this parser does not know: format drift."""
    known = ("user", "assistant") if what == "message type" else _KNOWN_PARTS | _SKIPPED_PARTS
    if not is_one_of(name, known):
        label = version if isinstance(version, str) and version else None
        diag.unrecognised(what, name, version=label, path=ref.path, locator=locator)


def _part_records(
    ref: SourceRef, loc: str, sid: str, role: str, part: dict[str, Any], **common: Any
) -> Iterator[Record]:
    ptype = part.get("type")
    if ptype == "text":
        text = part.get("text")
        if isinstance(text, str) and text.strip() and not _is_injected(part):
            if role == "user":
                yield make_record(ref, loc, sid, "user", "prompt", text, **common)
            else:
                yield make_record(ref, loc, sid, "assistant", "message", text, **common)
    elif ptype == "reasoning":
        text = part.get("text")
        if isinstance(text, str) and text.strip():
            yield make_record(ref, loc, sid, "assistant", "reasoning", text, **common)
    elif ptype == "tool":
        state = dict_of(part.get("state"))
        name = part.get("tool") or part.get("name")
        call_id = part.get("callID") or part.get("id")
        yield make_record(
            ref,
            loc,
            sid,
            "assistant",
            "tool_call",
            tool_call_text(name, state.get("input")),
            extra={"call_id": call_id},
            **common,
        )
        output = state.get("output")
        text = output if isinstance(output, str) else as_text(state.get("content"))
        text = text or (str_of(state.get("error")))
        if text.strip():
            yield make_record(
                ref,
                loc,
                sid,
                "tool",
                "tool_result",
                clip(text),
                extra={"call_id": call_id, "tool": name},
                **{k: v for k, v in common.items() if k != "model"},
            )


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _version_column(conn: sqlite3.Connection, table: str) -> str:
    """``version`` when ``table`` has that column (the OpenCode that wrote the session)."""
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    return "version" if "version" in columns else "NULL"


def _sessions_v1(
    ref: SourceRef, conn: sqlite3.Connection, cursor: ParseCursor, diag: Diagnostics
) -> Iterator[Record]:
    sessions = conn.execute(
        f"SELECT id, directory, title, {_version_column(conn, 'session')} FROM session"
        " ORDER BY time_created, id"
    )
    for sid, directory, title, version in sessions.fetchall():
        if isinstance(title, str) and title:
            cursor.titles[sid] = title
        for mid, data, created in conn.execute(
            "SELECT id, data, time_created FROM message WHERE session_id = ? ORDER BY id", (sid,)
        ).fetchall():
            where = (str(mid), f"row:message/{mid}", sid, directory)
            note_usage(ref, cursor, diag, _loads(data), where, created)
        rows = conn.execute(
            "SELECT p.id, p.data, p.time_created, m.data, m.time_created FROM part p "
            "JOIN message m ON m.id = p.message_id WHERE p.session_id = ? "
            "ORDER BY m.time_created, m.id, p.time_created, p.id",
            (sid,),
        )
        for part_id, part_data, part_time, msg_data, msg_time in rows:
            part, msg = _loads(part_data), _loads(msg_data)
            _drift(diag, ref, "part type", part.get("type"), f"row:part/{part_id}", version)
            role = "user" if msg.get("role") == "user" else "assistant"
            model = opt_str(msg.get("modelID"))
            ts = parse_timestamp(part_time) or parse_timestamp(msg_time)
            produced = number_parts(
                [
                    *_part_records(
                        ref,
                        f"row:part/{part_id}",
                        sid,
                        role,
                        part,
                        timestamp=ts,
                        cwd=directory,
                        model=model,
                    )
                ]
            )
            if produced:
                cursor.units += 1
                yield from produced


def _sessions_v2(
    ref: SourceRef, conn: sqlite3.Connection, cursor: ParseCursor, diag: Diagnostics
) -> Iterator[Record]:
    sessions = conn.execute(
        f"SELECT id, directory, title, {_version_column(conn, 'session_v2')} FROM session_v2"
        " ORDER BY time_created, id"
    ).fetchall()
    for sid, directory, title, version in sessions:
        if isinstance(title, str) and title:
            cursor.titles[sid] = title
        rows = conn.execute(
            "SELECT id, type, time_created, data FROM session_message WHERE session_id = ? "
            "ORDER BY seq, time_created, id",
            (sid,),
        )
        for msg_id, mtype, msg_time, raw in rows:
            data = _loads(raw)
            loc = f"row:session_message/{msg_id}"
            ts = parse_timestamp(dict_of(data.get("time")).get("created")) or parse_timestamp(
                msg_time
            )
            produced: list[Record] = []
            _drift(diag, ref, "message type", mtype, loc, version)
            if mtype == "user":
                produced.extend(
                    _part_records(
                        ref,
                        loc,
                        sid,
                        "user",
                        {
                            "type": "text",
                            "text": data.get("text"),
                            "synthetic": data.get("synthetic"),
                        },
                        timestamp=ts,
                        cwd=directory,
                    )
                )
            elif mtype == "assistant":
                model_info = dict_of(data.get("model"))
                model = opt_str(model_info.get("id"))
                content = data.get("content")
                for j, part in enumerate(content if isinstance(content, list) else []):
                    if isinstance(part, dict):
                        _drift(diag, ref, "part type", part.get("type"), f"{loc}/content/{j}",
                               version)  # fmt: skip
                        produced.extend(
                            number_parts(
                                [
                                    *_part_records(
                                        ref,
                                        f"{loc}/content/{j}",
                                        sid,
                                        "assistant",
                                        part,
                                        timestamp=ts,
                                        cwd=directory,
                                        model=model,
                                    )
                                ]
                            )
                        )
            if produced:
                cursor.units += 1
                yield from produced


def parse_db(ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics) -> Iterator[Record]:
    try:
        conn = connect_readonly(ref.path)
    except sqlite3.Error as exc:
        diagnostics.add(ref.path, "", f"cannot open SQLite store: {exc}")
        return
    try:
        tables = _tables(conn)
        if {"session", "message", "part"} <= tables:
            yield from _sessions_v1(ref, conn, cursor, diagnostics)
        if {"session_v2", "session_message"} <= tables:
            yield from _sessions_v2(ref, conn, cursor, diagnostics)
        if not ({"session", "part"} <= tables or "session_message" in tables):
            diagnostics.add(ref.path, "", "no OpenCode session tables; skipped")
    except sqlite3.DatabaseError as exc:
        diagnostics.add(ref.path, "", f"SQLite error: {exc}")
    finally:
        conn.close()


def count_db(path: Path) -> int:
    """Parts (1.x) and messages (2.x) that carry text or a tool call, by plain SQL."""
    conn = connect_readonly(path)
    try:
        tables = _tables(conn)
        total = 0
        if "part" in tables:
            total += conn.execute(
                "SELECT count(*) FROM part WHERE json_valid(data) AND ("
                " json_extract(data,'$.type') = 'tool' OR ("
                "  json_extract(data,'$.type') IN ('text','reasoning')"
                "  AND trim(coalesce(json_extract(data,'$.text'),'')) <> ''"
                "  AND coalesce(json_extract(data,'$.synthetic'),0) = 0"
                "  AND coalesce(json_extract(data,'$.ignored'),0) = 0"
                "  AND json_extract(data,'$.text') NOT LIKE ?))",
                (_NARRATION_LIKE,),
            ).fetchone()[0]
        if "session_message" in tables:
            total += conn.execute(
                "SELECT count(*) FROM session_message WHERE json_valid(data) AND ("
                " (type = 'user' AND trim(coalesce(json_extract(data,'$.text'),'')) <> ''"
                "  AND json_extract(data,'$.text') NOT LIKE ?)"
                " OR (type = 'assistant' AND json_array_length(data,'$.content') > 0))",
                (_NARRATION_LIKE,),
            ).fetchone()[0]
        return int(total)
    finally:
        conn.close()


_TYPED_SQL = (
    "trim(coalesce(json_extract({c},'$.text'),'')) <> ''"
    " AND coalesce(json_extract({c},'$.synthetic'),0) = 0"
    " AND coalesce(json_extract({c},'$.ignored'),0) = 0"
    " AND json_extract({c},'$.text') NOT LIKE ?"
)


def count_db_roles(path: Path) -> RoleCounts:
    """Per session, by plain SQL: text parts of user messages (prompts) and of assistant
    messages (replies), injected ones left out; 2.x user rows and assistant content parts."""
    conn = connect_readonly(path)
    counts: RoleCounts = {}
    try:
        tables = _tables(conn)
        queries: list[str] = []
        if {"part", "message"} <= tables:
            queries.append(
                "SELECT p.session_id, json_extract(m.data,'$.role') = 'user' FROM part p"
                " JOIN message m ON m.id = p.message_id"
                " WHERE json_valid(p.data) AND json_valid(m.data)"
                " AND json_extract(p.data,'$.type') = 'text' AND " + _TYPED_SQL.format(c="p.data")
            )
        if "session_message" in tables:
            queries.append(
                "SELECT session_id, 1 FROM session_message WHERE json_valid(data)"
                " AND type = 'user' AND " + _TYPED_SQL.format(c="data")
            )
            queries.append(
                "SELECT s.session_id, 0 FROM session_message s, json_each(s.data, '$.content') c"
                " WHERE json_valid(s.data) AND s.type = 'assistant'"
                " AND json_extract(c.value,'$.type') = 'text' AND " + _TYPED_SQL.format(c="c.value")
            )
        for query in queries:
            for session, typed in conn.execute(query, (_NARRATION_LIKE,)):
                add_role(counts, session, "prompts" if typed else "replies")
    finally:
        conn.close()
    return counts


def _storage_root(message_path: Path) -> Path:
    return message_path.parents[2]  # storage/message/<sid>/<mid>.json -> storage


def _session_info(storage: Path, sid: str, diagnostics: Diagnostics) -> dict[str, Any]:
    for candidate in sorted((storage / "session").glob(f"*/{sid}.json")):
        data = read_json(candidate, diagnostics)
        if isinstance(data, dict):
            return data
    return {}


def parse_storage_message(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    msg = read_json(path, diagnostics)
    if not isinstance(msg, dict):
        return
    storage = _storage_root(path)
    sid = opt_str(msg.get("sessionID")) or path.parent.name
    info = _session_info(storage, sid, diagnostics)
    if isinstance(info.get("title"), str) and info["title"]:
        cursor.titles[sid] = info["title"]
    cwd = opt_str(info.get("directory"))
    role = "user" if msg.get("role") == "user" else "assistant"
    model = opt_str(msg.get("modelID"))
    ts = parse_timestamp(dict_of(msg.get("time")).get("created"))
    mid = opt_str(msg.get("id")) or path.stem
    note_usage(ref, cursor, diagnostics, msg, (mid, f"file:{path.name}", sid, cwd))
    part_dir = storage / "part" / mid
    part_files = sorted(part_dir.glob("*.json")) if part_dir.is_dir() else []
    for part_file in part_files:
        part = read_json(part_file, diagnostics)
        if not isinstance(part, dict):
            continue
        _drift(diagnostics, ref, "part type", part.get("type"), f"part:{part_file.name}",
               info.get("version"))  # fmt: skip
        pts = parse_timestamp(dict_of(part.get("time")).get("start")) or ts
        produced = number_parts(
            [
                *_part_records(
                    ref,
                    f"part:{part_file.name}",
                    sid,
                    role,
                    part,
                    timestamp=pts,
                    cwd=cwd,
                    model=model,
                )
            ]
        )
        if produced:
            cursor.units += 1
            yield from produced


def count_storage_roles(path: Path) -> RoleCounts:
    """The message's text parts: prompts when it is a user message, else replies."""
    try:
        msg = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    if not isinstance(msg, dict):
        return {}
    session = msg.get("sessionID") if isinstance(msg.get("sessionID"), str) else None
    session = session or path.parent.name
    mid = opt_str(msg.get("id")) or path.stem
    counts: RoleCounts = {}
    for part_file in sorted((path.parents[2] / "part" / mid).glob("*.json")):
        try:
            part = json.loads(part_file.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError):
            continue
        if not isinstance(part, dict) or part.get("type") != "text":
            continue
        text = part.get("text")
        if part.get("synthetic") or part.get("ignored") or not isinstance(text, str):
            continue
        if text.strip() and not text.startswith("Called the "):
            add_role(counts, session, "prompts" if msg.get("role") == "user" else "replies")
    return counts


def count_storage_message(path: Path) -> int:
    try:
        msg = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return 0
    mid = opt_str(msg.get("id")) if isinstance(msg, dict) else None
    mid = mid or path.stem
    count = 0
    for part_file in sorted((path.parents[2] / "part" / mid).glob("*.json")):
        try:
            part = json.loads(part_file.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError):
            continue
        if not isinstance(part, dict) or part.get("synthetic") or part.get("ignored"):
            continue
        text = str(part.get("text") or "")
        if part.get("type") == "tool" or (
            part.get("type") in ("text", "reasoning")
            and text.strip()
            and not text.startswith("Called the ")
        ):
            count += 1
    return count


PARSERS = (
    ParserSpec("opencode.sqlite.v1", parse_db, count_raw=count_db, count_roles=count_db_roles),
    ParserSpec(
        "opencode.storage_json.v1",
        parse_storage_message,
        count_raw=count_storage_message,
        count_roles=count_storage_roles,
    ),
)
