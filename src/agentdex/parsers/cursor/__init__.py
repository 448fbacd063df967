"""Cursor IDE ``state.vscdb`` (global and per-workspace), every era.

Only these keys are ever read — never ``SELECT *``, never ``cursorAuth/*``:

- ``cursorDiskKV`` ``composerData:<composerId>`` (current and inline eras)
  and ``bubbleId:<composerId>:<bubbleId>`` (current era: one row per
  message);
- ``ItemTable`` ``composer.composerData`` (composer -> workspace mapping,
  and the oldest composers, inline), ``workbench.panel.aichat.view.aichat.chatdata``
  (legacy chat tabs) and ``aiService.prompts`` (legacy prompt log).

Order and branches. A composer's conversation is the bubbles its
``fullConversationHeadersOnly`` lists, in that order (a header without a
row is skipped). Bubbles of the composer the list does not name are an
*abandoned branch* (an edited or retried message, a restored checkpoint):
Cursor no longer shows them, but they are what was said, so they are kept,
searchable, as a conversation of their own, ``<composerId>:abandoned``
(title ``<name> (abandoned branch)``), ordered by time; ``audit`` reports
them as abandoned. A composer without headers falls back to its bubble
keys ordered by time.

Time. Each bubble carries its own: ``createdAt``, else its
``timingInfo`` send time (epoch milliseconds; the page-relative
``clientStartTime`` is not a wall clock); a bubble without one takes the
previous bubble's, the first ones the composer's ``createdAt``. Legacy
rows with no time get the file's mtime.

Locators are ``row:<table>/<key>`` plus, for a message inside a value,
the JSON pointer to it (``row:cursorDiskKV/composerData:<id>/conversation/3``,
``row:ItemTable/aiService.prompts/0``); the parts of one bubble add their
field (:mod:`._bubbles`).

Databases reach gigabytes, so keys are listed first (key ranges use the
``UNIQUE`` index) and values fetched per composer, bubbles in batches of
:data:`BATCH`: memory holds one composer and one batch, never the file.
The project of a composer comes from the workspace DB that lists it (the
sibling ``workspace.json`` names the folder); models from ``modelConfig``.
Token usage: a bubble's ``tokenCount`` (:mod:`._usage`).

Drift. A bubble ``type`` other than :data:`BUBBLE_TYPES` is reported as
format drift (``bubble type``; Cursor records no app version there) and its
text still kept, as an assistant's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from agentdex.parsers._agent_common import dict_of, file_mtime, make_record, opt_str, str_of
from agentdex.parsers.base import ParseCursor, ParserSpec, SourceRef
from agentdex.parsers.cursor._bubbles import bubble_records, bubble_time
from agentdex.parsers.cursor._counts import count_raw, count_roles
from agentdex.parsers.cursor._usage import note_bubble_usage
from agentdex.readers import Diagnostics, connect_readonly, read_json
from agentdex.records import Record, parse_timestamp
from agentdex.uris import uri_to_path

__all__ = ["BATCH", "PARSERS", "parse_state_vscdb"]

#: Bubble values fetched per query.
BATCH = 256
COMPOSER_PREFIX = "composerData:"
BUBBLE_PREFIX = "bubbleId:"
CHATDATA_KEY = "workbench.panel.aichat.view.aichat.chatdata"
PROMPTS_KEY = "aiService.prompts"
COMPOSERS_KEY = "composer.composerData"
#: Bubble ``type`` values: 1 the user, 2 the assistant (older inline composers: strings).
#: Any other is format drift (its text is still kept, as an assistant's).
BUBBLE_TYPES = (1, 2, "user", "ai", "assistant")
#: Session-id suffix of a composer's abandoned branch.
ABANDONED = ":abandoned"


def key_range(prefix: str) -> tuple[str, str]:
    """``key >= ? AND key < ?`` bounds equal to ``LIKE 'prefix%'`` (case-sensitive, indexed)."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _loads(value: object) -> Any:
    if value is None:
        return None
    if isinstance(value, memoryview):
        value = bytes(value)
    try:
        return orjson.loads(value)  # type: ignore[arg-type]
    except (orjson.JSONDecodeError, TypeError):
        return None


def _item(conn: sqlite3.Connection, key: str) -> Any:
    row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (key,)).fetchone()
    return _loads(row[0]) if row else None


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def workspace_folder(db_path: Path, diagnostics: Diagnostics) -> str | None:
    """The folder of a ``workspaceStorage/<hash>/state.vscdb`` (from ``workspace.json``)."""
    meta = db_path.parent / "workspace.json"
    if db_path.parent.parent.name != "workspaceStorage" or not meta.is_file():
        return None
    data = read_json(meta, diagnostics)
    if not isinstance(data, dict):
        return None
    return uri_to_path(data.get("folder") or data.get("workspace"))


def composer_projects(user_dir: Path, diagnostics: Diagnostics) -> dict[str, str]:
    """composerId -> workspace folder, from every workspace DB's ``composer.composerData``."""
    mapping: dict[str, str] = {}
    storage = user_dir / "workspaceStorage"
    if not storage.is_dir():
        return mapping
    for db in sorted(storage.glob("*/state.vscdb")):
        folder = workspace_folder(db, diagnostics)
        if folder is None:
            continue
        try:
            conn = connect_readonly(db)
        except sqlite3.Error:
            continue
        try:
            data = _item(conn, COMPOSERS_KEY) if "ItemTable" in _tables(conn) else None
        except sqlite3.DatabaseError as exc:
            diagnostics.add(db, "", f"SQLite error: {exc}")
            data = None
        finally:
            conn.close()
        for entry in (data or {}).get("allComposers", []) if isinstance(data, dict) else []:
            if isinstance(entry, dict) and isinstance(entry.get("composerId"), str):
                mapping.setdefault(entry["composerId"], folder)
    return mapping


def _fetch_bubbles(conn: sqlite3.Connection, cid: str, ids: list[str]) -> Iterator[tuple[str, Any]]:
    """``(bubbleId, value)`` for ``ids`` in their order, batch by batch (missing ones skipped)."""
    for start in range(0, len(ids), BATCH):
        chunk = ids[start : start + BATCH]
        keys = [f"{BUBBLE_PREFIX}{cid}:{bid}" for bid in chunk]
        marks = ",".join("?" * len(keys))
        found = {
            key: value
            for key, value in conn.execute(
                f"SELECT key, value FROM cursorDiskKV WHERE key IN ({marks})", keys
            )
        }
        for bid, key in zip(chunk, keys, strict=True):
            if key in found:
                yield bid, _loads(found[key])


def _bubble_ids(conn: sqlite3.Connection, cid: str) -> list[str]:
    """Every bubble id stored for a composer (keys only: an index range scan)."""
    low, high = key_range(f"{BUBBLE_PREFIX}{cid}:")
    rows = conn.execute("SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ?", (low, high))
    return [key[len(low) :] for (key,) in rows]


def _by_time(conn: sqlite3.Connection, cid: str, ids: list[str]) -> list[tuple[str, Any]]:
    """Bubbles of ``ids`` ordered by their own time (then id): no sequence says otherwise."""
    pairs = [(bid, v) for bid, v in _fetch_bubbles(conn, cid, ids) if isinstance(v, dict)]
    pairs.sort(key=lambda p: (bubble_time(p[1]) or 0.0, p[0]))
    return pairs


class _Composer:
    """Turns one composer (any era) into records."""

    def __init__(
        self,
        ref: SourceRef,
        cursor: ParseCursor,
        data: dict[str, Any],
        cwd: str | None,
        diagnostics: Diagnostics,
    ) -> None:
        self.ref, self.cursor, self.cwd, self.diagnostics = ref, cursor, cwd, diagnostics
        self.cid: str = data["composerId"]
        self.name = data.get("name") if isinstance(data.get("name"), str) else None
        self.model = opt_str(dict_of(data.get("modelConfig")).get("modelName"))
        self.created = parse_timestamp(data.get("createdAt"))
        if self.name and self.name.strip():
            cursor.titles[self.cid] = self.name

    def records(
        self, bubbles: Iterable[tuple[str, Any]], locate: Any, sid: str, **extra: Any
    ) -> Iterator[Record]:
        """Records of ``bubbles`` (``(id, value)``), located by ``locate(id)``."""
        carried = self.created
        for bid, bubble in bubbles:
            if not isinstance(bubble, dict):
                continue
            carried = bubble_time(bubble) or carried
            if bubble.get("type") not in BUBBLE_TYPES:
                self.diagnostics.unrecognised(
                    "bubble type", bubble.get("type"), path=self.ref.path, locator=locate(bid)
                )
            produced = bubble_records(
                self.ref,
                locate(bid),
                sid,
                bubble,
                cwd=self.cwd,
                model=self.model,
                timestamp=carried,
                extra=extra or None,
            )
            own = bubble.get("bubbleId")
            name = f"{self.cid}:{own if isinstance(own, str) and own else bid}"
            where = (locate(bid), sid, name, self.cwd, carried)
            note_bubble_usage(self.ref, self.cursor, self.diagnostics, bubble, where, self.model)
            if produced:
                self.cursor.units += 1
                yield from produced

    def from_disk(self, conn: sqlite3.Connection, headers: Any) -> Iterator[Record]:
        def row(bid: str) -> str:
            return f"row:cursorDiskKV/{BUBBLE_PREFIX}{self.cid}:{bid}"

        listed = [
            h["bubbleId"]
            for h in (headers if isinstance(headers, list) else [])
            if isinstance(h, dict) and isinstance(h.get("bubbleId"), str)
        ]
        if not listed:
            yield from self.records(
                _by_time(conn, self.cid, _bubble_ids(conn, self.cid)), row, self.cid
            )
            return
        yield from self.records(_fetch_bubbles(conn, self.cid, listed), row, self.cid)
        shown = set(listed)
        abandoned = [bid for bid in _bubble_ids(conn, self.cid) if bid not in shown]
        if abandoned:
            branch = self.cid + ABANDONED
            if self.name and self.name.strip():
                self.cursor.titles[branch] = f"{self.name} (abandoned branch)"
            pairs = _by_time(conn, self.cid, abandoned)
            yield from self.records(pairs, row, branch, abandoned=True)

    def inline(self, conversation: list[Any], where: str) -> Iterator[Record]:
        bubbles = ((str(i), b) for i, b in enumerate(conversation))
        yield from self.records(bubbles, lambda i: f"{where}/conversation/{i}", self.cid)


def _disk_composers(
    ref: SourceRef,
    conn: sqlite3.Connection,
    cursor: ParseCursor,
    diagnostics: Diagnostics,
    projects: dict[str, str],
    folder: str | None,
) -> Iterator[Record]:
    low, high = key_range(COMPOSER_PREFIX)
    keys = [
        k
        for (k,) in conn.execute(
            "SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY key", (low, high)
        )
    ]
    for key in keys:
        row = conn.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()
        data = _loads(row[0]) if row else None
        if not isinstance(data, dict):
            if row is not None and row[0] is not None:
                diagnostics.add(
                    ref.path, f"row:cursorDiskKV/{key}", "composer value is not a JSON object"
                )
            continue
        data.setdefault("composerId", key[len(COMPOSER_PREFIX) :])
        if not isinstance(data["composerId"], str):
            continue
        cwd = projects.get(data["composerId"], folder)
        composer = _Composer(ref, cursor, data, cwd, diagnostics)
        inline = data.get("conversation")
        if isinstance(inline, list) and inline:
            yield from composer.inline(inline, f"row:cursorDiskKV/{key}")
        else:
            yield from composer.from_disk(conn, data.get("fullConversationHeadersOnly"))


def _legacy_items(
    ref: SourceRef,
    conn: sqlite3.Connection,
    cursor: ParseCursor,
    diagnostics: Diagnostics,
    folder: str | None,
) -> Iterator[Record]:
    composers = _item(conn, COMPOSERS_KEY)
    entries = composers.get("allComposers", []) if isinstance(composers, dict) else []
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("composerId"), str):
            continue
        if isinstance(entry.get("conversation"), list):
            where = f"row:ItemTable/{COMPOSERS_KEY}/allComposers/{index}"
            composer = _Composer(ref, cursor, entry, folder, diagnostics)
            yield from composer.inline(entry["conversation"], where)
    chat = _item(conn, CHATDATA_KEY)
    tabs = chat.get("tabs") if isinstance(chat, dict) else None
    for t_index, tab in enumerate(tabs if isinstance(tabs, list) else []):
        if not isinstance(tab, dict):
            continue
        sid = str(tab.get("tabId") or f"{ref.path}#tab{t_index}")
        if isinstance(tab.get("chatTitle"), str) and tab["chatTitle"]:
            cursor.titles[sid] = tab["chatTitle"]
        ts = parse_timestamp(tab.get("lastSendTime"))
        bubbles = tab.get("bubbles")
        for b_index, bubble in enumerate(bubbles if isinstance(bubbles, list) else []):
            if not isinstance(bubble, dict):
                continue
            text = str_of(bubble.get("text"))
            if not text.strip():
                text = str_of(bubble.get("rawText"))
            if not text.strip():
                continue
            loc = f"row:ItemTable/{CHATDATA_KEY}/tabs/{t_index}/bubbles/{b_index}"
            is_user = bubble.get("type") == "user"
            cursor.units += 1
            yield make_record(
                ref,
                loc,
                sid,
                "user" if is_user else "assistant",
                "prompt" if is_user else "message",
                text,
                timestamp=ts,
                cwd=folder,
                model=opt_str(bubble.get("modelType")),
            )
    prompts = _item(conn, PROMPTS_KEY)
    for index, item in enumerate(prompts if isinstance(prompts, list) else []):
        text = str_of(item.get("text") if isinstance(item, dict) else item)
        if text.strip():
            cursor.units += 1
            yield make_record(
                ref,
                f"row:ItemTable/{PROMPTS_KEY}/{index}",
                prompt_log_session(folder, ref.path),
                "user",
                "prompt",
                text,
                cwd=folder,
            )


def prompt_log_session(folder: str | None, path: Path) -> str:
    """The conversation id of a legacy ``aiService.prompts`` list (one per workspace)."""
    return f"cursor-prompts:{folder or path}"


def parse_state_vscdb(
    ref: SourceRef, cursor: ParseCursor, diagnostics: Diagnostics
) -> Iterator[Record]:
    path = Path(ref.path)
    try:
        conn = connect_readonly(path)
        tables = _tables(conn)
    except sqlite3.Error as exc:
        diagnostics.add(path, "", f"cannot open SQLite store: {exc}")
        return
    mtime = file_mtime(path)
    try:
        folder = workspace_folder(path, diagnostics)
        streams: list[Iterator[Record]] = []
        if "cursorDiskKV" in tables:
            is_global = path.parent.name == "globalStorage"
            projects = composer_projects(path.parent.parent, diagnostics) if is_global else {}
            streams.append(_disk_composers(ref, conn, cursor, diagnostics, projects, folder))
        if "ItemTable" in tables:
            streams.append(_legacy_items(ref, conn, cursor, diagnostics, folder))
        for stream in streams:
            for record in stream:
                if record.timestamp is None:  # legacy eras kept no times: mtime, as a last resort
                    record.timestamp = mtime
                yield record
    except sqlite3.DatabaseError as exc:
        diagnostics.add(path, "", f"SQLite error: {exc}")
    finally:
        conn.close()


PARSERS = (
    ParserSpec(
        "cursor.state_vscdb.v1", parse_state_vscdb, count_raw=count_raw, count_roles=count_roles
    ),
)
