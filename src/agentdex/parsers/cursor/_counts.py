"""Cursor's independent counters: stdlib ``json`` over the rows, none of the parser's code.

``count_raw`` counts every bubble row (listed by a header or not), inline
bubble, legacy chat bubble and legacy prompt with content, so a bubble the
parser never reaches (a row whose composer is gone) shows up in ``audit``.
``count_roles`` counts per conversation the bubbles with text: type 1
(``user``) a prompt, any other type a reply; rows a composer's header list
does not name go to its abandoned branch, ``<composerId>:abandoned``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentdex.parsers.base import RoleCounts
from agentdex.readers import connect_readonly
from agentdex.uris import uri_to_path

_BUBBLES = ("bubbleId:", "bubbleId;")
_COMPOSERS = ("composerData:", "composerData;")
_ITEM_KEYS = (
    "composer.composerData",
    "workbench.panel.aichat.view.aichat.chatdata",
    "aiService.prompts",
)


def _json(value: object) -> Any:
    try:
        return json.loads(value) if isinstance(value, str | bytes) else None
    except ValueError:
        return None


def _has_content(bubble: object) -> bool:
    if not isinstance(bubble, dict):
        return False
    text = bubble.get("text")
    if isinstance(text, str) and text.strip():
        return True
    if bubble.get("type") in (1, "user"):
        return False
    thinking = bubble.get("thinking")
    return isinstance(bubble.get("toolFormerData"), dict) or (
        isinstance(thinking, dict) and bool(str(thinking.get("text") or "").strip())
    )


def _tables(path: Path) -> tuple[Any, set[str]]:
    conn = connect_readonly(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return conn, tables


def _range(conn: Any, bounds: tuple[str, str]) -> Any:
    return conn.execute("SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", bounds)


def _items(conn: Any) -> dict[str, Any]:
    found = {}
    for key in _ITEM_KEYS:
        row = conn.execute("SELECT value FROM ItemTable WHERE key = ?", (key,)).fetchone()
        found[key] = _json(row[0]) if row else None
    return found


def count_raw(path: Path) -> int:
    """Every bubble row / inline bubble / chat bubble / legacy prompt with content."""
    conn, tables = _tables(path)
    total = 0
    try:
        if "cursorDiskKV" in tables:
            for _, value in _range(conn, _BUBBLES):
                total += _has_content(_json(value))
            for _, value in _range(conn, _COMPOSERS):
                data = _json(value)
                if isinstance(data, dict) and isinstance(data.get("conversation"), list):
                    total += sum(_has_content(b) for b in data["conversation"])
        if "ItemTable" in tables:
            items = _items(conn)
            composers = items["composer.composerData"]
            if isinstance(composers, dict):
                for entry in composers.get("allComposers") or []:
                    conv = entry.get("conversation") if isinstance(entry, dict) else None
                    total += sum(_has_content(b) for b in conv or [])
            chat = items["workbench.panel.aichat.view.aichat.chatdata"]
            for tab in chat.get("tabs") or [] if isinstance(chat, dict) else []:
                for b in tab.get("bubbles") or [] if isinstance(tab, dict) else []:
                    total += isinstance(b, dict) and bool(
                        str(b.get("text") or b.get("rawText") or "").strip()
                    )
            prompts = items["aiService.prompts"]
            if isinstance(prompts, list):
                total += sum(
                    1
                    for p in prompts
                    if str((p.get("text") if isinstance(p, dict) else p) or "").strip()
                )
    finally:
        conn.close()
    return total


def _tally(
    counts: RoleCounts, session: str, bubble: object, *, raw_text: bool = False, **marks: int
) -> None:
    """Count a bubble with text (``raw_text``: legacy chat bubbles fall back to ``rawText``)."""
    if not isinstance(bubble, dict):
        return
    text = bubble.get("text")
    if raw_text and not (isinstance(text, str) and text.strip()):
        text = bubble.get("rawText")
    if not isinstance(text, str) or not text.strip():
        return
    entry = counts.setdefault(session, {"prompts": 0, "replies": 0, **marks})
    entry["prompts" if bubble.get("type") in (1, "user") else "replies"] += 1


def count_roles(path: Path) -> RoleCounts:
    """Prompts and replies per composer, chat tab and prompt list (see the module doc)."""
    conn, tables = _tables(path)
    counts: RoleCounts = {}
    try:
        if "cursorDiskKV" in tables:
            _disk_roles(conn, counts)
        if "ItemTable" in tables:
            _item_roles(conn, counts, path)
    finally:
        conn.close()
    return counts


def _disk_roles(conn: Any, counts: RoleCounts) -> None:
    shown: dict[str, set[str] | None] = {}  # composer -> header ids (None: inline era)
    for key, value in _range(conn, _COMPOSERS):
        data = _json(value)
        if not isinstance(data, dict):
            continue
        cid = data.get("composerId", key.split(":", 1)[1])
        if not isinstance(cid, str):
            continue
        conversation = data.get("conversation")
        if isinstance(conversation, list) and conversation:
            shown[cid] = None
            for bubble in conversation:
                _tally(counts, cid, bubble)
            continue
        headers = data.get("fullConversationHeadersOnly")
        shown[cid] = {
            h["bubbleId"]
            for h in (headers if isinstance(headers, list) else [])
            if isinstance(h, dict) and isinstance(h.get("bubbleId"), str)
        }
    for key, value in _range(conn, _BUBBLES):
        cid, _, bid = key[len("bubbleId:") :].rpartition(":")
        listed = shown.get(cid)
        if cid not in shown or listed is None:
            continue  # no composer (or an inline one): not part of any conversation
        if not listed or bid in listed:
            _tally(counts, cid, _json(value))
        else:
            _tally(counts, f"{cid}:abandoned", _json(value), abandoned=1)


def _item_roles(conn: Any, counts: RoleCounts, path: Path) -> None:
    items = _items(conn)
    composers = items["composer.composerData"]
    for entry in composers.get("allComposers") or [] if isinstance(composers, dict) else []:
        if isinstance(entry, dict) and isinstance(entry.get("composerId"), str):
            for bubble in entry.get("conversation") or []:
                _tally(counts, entry["composerId"], bubble)
    chat = items["workbench.panel.aichat.view.aichat.chatdata"]
    tabs = chat.get("tabs") if isinstance(chat, dict) else None
    for t_index, tab in enumerate(tabs if isinstance(tabs, list) else []):
        if not isinstance(tab, dict) or not isinstance(tab.get("bubbles"), list):
            continue
        session = str(tab.get("tabId") or f"{path}#tab{t_index}")
        for bubble in tab["bubbles"]:
            _tally(counts, session, bubble, raw_text=True)
    prompts = items["aiService.prompts"]
    if isinstance(prompts, list):
        meta = path.parent / "workspace.json"
        folder = None
        if path.parent.parent.name == "workspaceStorage" and meta.is_file():
            data = _json(meta.read_text(encoding="utf-8", errors="replace"))
            if isinstance(data, dict):
                folder = uri_to_path(data.get("folder") or data.get("workspace"))
        session = f"cursor-prompts:{folder or path}"
        for item in prompts:
            text = item.get("text") if isinstance(item, dict) else item
            if isinstance(text, str) and text.strip():
                counts.setdefault(session, {"prompts": 0, "replies": 0})["prompts"] += 1
