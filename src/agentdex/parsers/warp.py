"""Warp's agent conversations in ``warp.sqlite`` (``warp.sqlite.v1``).

Warp is closed source. Where the file is comes from Warp's own docs (docs.warp.dev,
"Session Restoration": macOS ``~/Library/Application Support/dev.warp.Warp-Stable``,
Windows ``%LOCALAPPDATA%\\warp\\Warp\\data``, Linux ``${XDG_STATE_HOME:-~/.local/state}
/warp-terminal``; current macOS builds use the ``2BBY89MBSN.dev.warp`` group container,
as the public readers found); the tables are the ones public readers query
(kenn-io/agentsview ``internal/parser/warp.go``; marcus/sidecar
``internal/adapter/warp``; coder/codeburn ``docs/providers/warp.md``):

* ``ai_queries(exchange_id, conversation_id, start_ts, input, working_directory,
  output_status, model_id, ...)``: one row per exchange sent to the model. ``input`` is a
  JSON list of items: ``{"Query": {"text", "context": [{"Directory": {pwd}}, {"Git":
  {head}}, ...]}}`` = what the person typed (a prompt: its branch is ``Git.head``, its
  cwd the row's ``working_directory`` or ``Directory.pwd``); ``{"ActionResult": {"id",
  "result": {...}}}`` = what a tool gave back (a tool result: a command and its output for
  ``RequestCommandOutput``, the JSON otherwise). Other items are format drift.
* ``blocks``: terminal blocks; those whose ``ai_metadata`` JSON names a conversation are
  commands the agent ran (``stylized_command``, ANSI-coloured): tool calls. Warp keeps
  only the last blocks of each pane (session restoration), so older ones are gone.
* ``agent_conversations(conversation_id, conversation_data, last_modified_at)``: only
  whether the conversation exists (``conversation_data`` holds credits and per-model
  ``warp_tokens`` with no input/output split: no usage is taken from it).

**Warp does not keep the agent's answers on disk**: a Warp conversation has prompts,
tool calls and tool results, and no replies. Times in ``start_ts`` are UTC. Only these
three tables are queried: the file also holds the terminal's command history, panes and
settings.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers._agent_common import (
    clip,
    compact_json,
    dict_of,
    make_record,
    number_parts,
    open_sqlite_store,
    opt_str,
    str_of,
    table_columns,
)
from agentdex.parsers.base import ParseCursor, ParserSpec, RoleCounts, SourceRef, add_role
from agentdex.readers import Diagnostics, connect_readonly
from agentdex.records import Record, parse_timestamp

ITEMS = frozenset({"Query", "ActionResult"})
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_QUERY_COLUMNS = ("exchange_id", "conversation_id", "start_ts", "input", "working_directory",
                  "model_id")  # fmt: skip


def _loads(value: object) -> Any:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return None
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


def _plain(value: object) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str_of(value)
    return _ANSI.sub("", text).strip()


def _context(query: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in query.get("context") or []:
        if isinstance(item, dict):
            found.update(item)
    return found


def _action_text(result: dict[str, Any]) -> str:
    command = dict_of(dict_of(result.get("RequestCommandOutput")).get("result"))
    done = command.get("Success")
    if isinstance(done, dict):
        return f"$ {str_of(done.get('command'))}\n{str_of(done.get('output'))}".strip()
    return compact_json(result) if result else ""


def _queries(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    have = table_columns(conn, "ai_queries")
    columns = ", ".join(c if c in have else "NULL" for c in _QUERY_COLUMNS)
    return conn.execute(
        f"SELECT {columns} FROM ai_queries ORDER BY conversation_id, start_ts, id"
    ).fetchall()


def _blocks(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "blocks" not in tables or "ai_metadata" not in table_columns(conn, "blocks"):
        return []
    return conn.execute(
        "SELECT id, stylized_command, exit_code, start_ts, pwd, ai_metadata FROM blocks "
        "WHERE ai_metadata IS NOT NULL ORDER BY start_ts, id"
    ).fetchall()


def parse_db(ref: SourceRef, cursor: ParseCursor, diag: Diagnostics) -> Iterator[Record]:
    conn = open_sqlite_store(ref, diag, "Warp", {"ai_queries"})
    if conn is None:
        return
    try:
        queries, blocks = _queries(conn), _blocks(conn)
    except sqlite3.Error as exc:
        diag.add(ref.path, "", f"Warp database unreadable: {exc}")
        return
    finally:
        conn.close()
    units: list[tuple[float, str, list[Record]]] = []
    for exchange, conv, start, raw, cwd, model in queries:
        out = _exchange(ref, diag, str_of(exchange), str_of(conv), start, raw, cwd, model)
        if out:
            units.append((out[0].timestamp or 0.0, str_of(conv), out))
    for row in blocks:
        if record := _block(ref, row):
            units.append((record.timestamp or 0.0, record.session_id, [record]))
    units.sort(key=lambda unit: (unit[1], unit[0]))
    for _, _, out in units:
        cursor.units += 1
        yield from number_parts(out)


def _exchange(
    ref: SourceRef, diag: Diagnostics, exchange: str, conv: str, start: object, raw: object,
    cwd: object, model: object,
) -> list[Record]:  # fmt: skip
    items = _loads(raw)
    if not conv or not isinstance(items, list):
        return []
    where, stamp = f"row:ai_queries/{exchange}", parse_timestamp(start)
    out = []
    for item in items:
        kind = next(iter(item), None) if isinstance(item, dict) and len(item) == 1 else None
        if kind not in ITEMS:
            diag.unrecognised("input item", str(kind), path=ref.path, locator=where)
            continue
        body = dict_of(item[kind])
        if kind == "Query":
            context = _context(body)
            text = str_of(body.get("text")).strip()
            if text:
                out.append(make_record(
                    ref, where, conv, "user", "prompt", text, timestamp=stamp,
                    cwd=opt_str(cwd) or opt_str(dict_of(context.get("Directory")).get("pwd")),
                    branch=opt_str(dict_of(context.get("Git")).get("head")),
                    model=opt_str(model),
                ))  # fmt: skip
        else:
            if text := _action_text(dict_of(body.get("result"))):
                call = opt_str(body.get("id"))
                out.append(make_record(
                    ref, where, conv, "tool", "tool_result", clip(text), timestamp=stamp,
                    cwd=opt_str(cwd), extra={"call_id": call} if call else {},
                ))  # fmt: skip
    return out


def _block(ref: SourceRef, row: tuple[Any, ...]) -> Record | None:
    block_id, command, exit_code, start, pwd, meta = row
    meta = dict_of(_loads(meta))
    conv, text = opt_str(meta.get("conversation_id")), _plain(command)
    if not conv or not text:
        return None
    extra = {"call_id": opt_str(meta.get("action_id")), "exit_code": exit_code}
    return make_record(
        ref, f"row:blocks/{block_id}", conv, "assistant", "tool_call", f"$ {text}",
        timestamp=parse_timestamp(start), cwd=opt_str(pwd),
        extra={k: v for k, v in extra.items() if v is not None},
    )  # fmt: skip


# Independent counts (``audit``): plain sqlite3 and json, none of the parser's code.


def _rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    try:
        conn = connect_readonly(path)
    except (sqlite3.Error, OSError):
        return []
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def _items(raw: object) -> list[dict[str, Any]]:
    try:
        value = orjson.loads(raw) if isinstance(raw, str | bytes) else None
    except orjson.JSONDecodeError:
        return []
    return [i for i in value if isinstance(i, dict)] if isinstance(value, list) else []


def count_raw(path: Path) -> int:
    """Exchanges with a typed query or a tool result, plus blocks naming a conversation."""
    count = 0
    for conv, raw in _rows(path, "SELECT conversation_id, input FROM ai_queries"):
        useful = False
        for item in _items(raw):
            query, action = item.get("Query"), item.get("ActionResult")
            if isinstance(query, dict) and str(query.get("text") or "").strip():
                useful = True
            if isinstance(action, dict) and action.get("result"):
                useful = True
        count += bool(conv and useful)
    sql = "SELECT stylized_command, ai_metadata FROM blocks WHERE ai_metadata IS NOT NULL"
    for command, meta in _rows(path, sql):
        try:
            conv = orjson.loads(meta).get("conversation_id")
        except (orjson.JSONDecodeError, AttributeError):
            continue
        cmd = command.decode("utf-8", "replace") if isinstance(command, bytes) else command
        count += bool(conv and isinstance(cmd, str) and re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "",
                                                                  cmd).strip())  # fmt: skip
    return count


def count_roles(path: Path) -> RoleCounts:
    """Prompts: each non-blank ``Query.text``; replies: none (Warp keeps no answers)."""
    counts: RoleCounts = {}
    for conv, raw in _rows(path, "SELECT conversation_id, input FROM ai_queries"):
        for item in _items(raw):
            query = item.get("Query")
            if conv and isinstance(query, dict) and str(query.get("text") or "").strip():
                add_role(counts, str(conv), "prompts")
    return counts


PARSERS = (ParserSpec("warp.sqlite.v1", parse_db, count_raw=count_raw, count_roles=count_roles),)
