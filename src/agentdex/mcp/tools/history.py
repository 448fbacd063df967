"""History tools: list_sources and show_session (:mod:`agentdex.api.history`)."""

from __future__ import annotations

from typing import Any

from agentdex.mcp.tools import outputs
from agentdex.mcp.tools._base import (
    OFFSET,
    Settings,
    ToolSpec,
    agent_property,
    api_function,
    integer,
    listed_stores,
    offset_paging,
    window,
)

# -- list_sources -----------------------------------------------------------------------


def _list_sources(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    sources = api_function("history", "sources")
    data = sources(settings.home, check=arguments.get("check", True))
    rows = [
        row
        for row in data["sources"]
        if arguments.get("agent") in (None, row.get("agent"))
        and arguments.get("store") in (None, row.get("store"))
    ]
    offset, limit = arguments.get("offset", 0), arguments.get("limit", 100)
    return {
        "home": data.get("home"),
        "warnings": data.get("warnings", []),
        "total": len(rows),
        "offset": offset,
        "sources": window(rows, offset, limit),
    }


LIST_SOURCES = ToolSpec(
    name="list_sources",
    title="List agent stores",
    description=(
        "Every agent history store discovered on this machine (one row per file), with its "
        "coverage (default / opt-in / listed) and whether it parses (parse_status: ok, empty, "
        "error, not-parsed). Private stores (credentials) are never listed. Use it to see "
        "which agents' history agentdex can search."
    ),
    properties={
        "agent": agent_property("Only this agent's stores."),
        "store": {
            "type": "string",
            "enum": listed_stores(),
            "description": "Only this store (see the agentdex://catalogue resource).",
        },
        "check": {
            "type": "boolean",
            "default": True,
            "description": "Probe each file's parse status (slower on many files).",
        },
        "offset": OFFSET,
        "limit": integer("At most this many rows.", 100, 1, 1000),
    },
    handler=_list_sources,
    output=outputs.LIST_SOURCES,
    paging=offset_paging("list_sources", "sources"),
)


# -- show_session -----------------------------------------------------------------------


def _clip_text(record: dict[str, Any], max_chars: int) -> dict[str, Any]:
    text = record.get("text")
    if max_chars and isinstance(text, str) and len(text) > max_chars:
        cut = len(text) - max_chars
        record = {**record, "text": f"{text[:max_chars]}…[{cut} more characters; raise max_chars]"}
    return record


def _hoist_common(records: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Fields with one value across the page move to ``common`` (lossless, saves budget)."""
    if len(records) < 2:
        return {}, records
    keys = [k for k in records[0] if k != "text"]
    common = {
        k: records[0][k] for k in keys if all(k in r and r[k] == records[0][k] for r in records)
    }
    return common, [{k: v for k, v in r.items() if k not in common} for r in records]


def _show_session(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    show = api_function("history", "show")
    data = show(arguments["ref"], settings.home, agent=arguments.get("agent"))
    records: list[dict[str, Any]] = data["records"]
    focus = data.get("focus")
    limit = arguments.get("limit", 40)
    if "offset" in arguments or focus is None:
        start = arguments.get("offset", 0)
    else:
        start = max(0, focus - arguments.get("around", 5))
        limit = min(limit, focus - start + arguments.get("around", 5) + 1)
    page = [_clip_text(r, arguments.get("max_chars", 4000)) for r in window(records, start, limit)]
    common, page = _hoist_common(page)
    end = start + len(page)
    return {
        "session_id": data["session_id"],
        "id": data.get("id") or data["session_id"],
        "agent": data.get("agent"),
        "project": data.get("project"),
        "total_records": len(records),
        "focus": focus,
        "offset": start,
        "next_offset": end if end < len(records) else None,
        "common": common,
        "records": page,
    }


SHOW_SESSION = ToolSpec(
    name="show_session",
    title="Show a conversation",
    description=(
        "One conversation, normalized and in order (role, kind, text, timestamp per record). "
        "'ref' is a conversation id or session id, a unique prefix of either, or a search "
        "result's short_ref/ref ID@LOCATOR (a prefix naming several is an error listing them); "
        "with a "
        "ref that has a locator and no offset, returns a window of 'around' records either side "
        "of it ('focus' is its index). Page with offset/limit; fields shared by every record on "
        "the page are listed once under 'common'. Long texts are clipped to max_chars."
    ),
    properties={
        "ref": {
            "type": "string",
            "minLength": 1,
            "description": "Conversation id or session id, a unique prefix, or ID@LOCATOR.",
        },
        "agent": agent_property("Only look in this agent's stores (faster)."),
        "offset": OFFSET,
        "limit": integer("At most this many records.", 40, 1, 500),
        "around": integer("Records either side of the ref's locator (window mode).", 5, 0, 100),
        "max_chars": integer(
            "Clip each record's text to this many characters (0: no clip).", 4000, 0, 10**7
        ),
    },
    required=("ref",),
    handler=_show_session,
    output=outputs.SHOW_SESSION,
    paging=offset_paging("show_session", "records"),
)
