"""Output schemas: what each tool's ``structuredContent`` holds (MCP ``outputSchema``).

Every tool returns a JSON object; the server sends it twice, as
``structuredContent`` and as its text serialization (for clients without
structured output). Both are the object *after* the size budget
(:mod:`agentdex.mcp.budget`) fitted it, so each schema also allows the
``response_truncated`` marker, a shortened list or clipped strings, and, as
the budget's last resort, the marker alone. Objects stay open
(``additionalProperties``): fields are only ever added (docs/json-output.md).
"""

from __future__ import annotations

from typing import Any

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
BOOL: dict[str, Any] = {"type": "boolean"}
NUMBER: dict[str, Any] = {"type": "number"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null, spelled with ``anyOf`` (a ``type`` list is less portable)."""
    return {"anyOf": [schema, {"type": "null"}]}


OPT_STR = nullable(STR)
OPT_INT = nullable(INT)


def obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


TRUNCATED = obj(
    {
        "reason": STR,
        "cut": STR,
        "next": obj({"tool": STR, "arguments": {"type": "object"}}, ("tool", "arguments")),
    },
    ("reason", "cut"),
)


def response(properties: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    """A tool's output schema: the full object, or (budget exhausted) the marker alone."""
    schema = obj({**properties, "response_truncated": TRUNCATED})
    schema["anyOf"] = [{"required": list(required)}, {"required": ["response_truncated"]}]
    return schema


#: One normalized record (``docs/json-output.md``), as search results and show_session carry it.
RECORD_FIELDS: dict[str, Any] = {
    "agent": STR,
    "store": STR,
    "session_id": STR,
    "role": STR,
    "kind": STR,
    "timestamp": OPT_STR,
    "text": STR,
    "cwd": OPT_STR,
    "project": OPT_STR,
    "branch": OPT_STR,
    "worktree": OPT_STR,
    "model": OPT_STR,
    "host": OPT_STR,
    "source_path": STR,
    "locator": STR,
    "ref": STR,
    #: the conversation's typeable id (docs/search.md "Conversation ids") and id@locator
    "id": STR,
    "short_ref": STR,
    #: only agentdex's archive still holds it (docs/archive.md)
    "source_gone": BOOL,
}

#: why a search result matched: the exact terms it holds, the similarity of its meaning
WHY = obj(
    {
        "match": {"type": "string", "enum": ["exact", "semantic", "both"]},
        "terms": array(STR),
        "similarity": nullable(NUMBER),
        # present when the conversation was found by its title (docs/search.md)
        "title": STR,
    },
    ("match",),
)

SEARCH = response(
    {
        "query": STR,
        "status": STR,
        "stats": obj({"total": INT, "returned": INT}),
        "results": array(
            obj(
                # machine: with scope "team", the machine that pushed it (docs/team.md)
                {**RECORD_FIELDS, "snippet": STR, "score": NUMBER, "machine": STR, "why": WHY},
                ("agent", "session_id", "locator", "ref"),
            )
        ),
        "run": obj({"status": STR, "why": STR}, ("status", "why")),
    },
    ("query", "status", "stats", "results", "run"),
)

SHOW_SESSION = response(
    {
        "session_id": STR,
        "id": STR,
        "agent": OPT_STR,
        "project": OPT_STR,
        "total_records": INT,
        "focus": OPT_INT,
        "offset": INT,
        "next_offset": OPT_INT,
        "common": obj(RECORD_FIELDS),
        "records": array(obj(RECORD_FIELDS)),
    },
    ("session_id", "total_records", "offset", "records"),
)

LIST_SESSIONS = response(
    {
        "query": OPT_STR,
        "status": STR,
        "stats": {"type": "object"},
        "offset": INT,
        "conversations": array(
            obj(
                {
                    "agent": STR,
                    "session_id": STR,
                    "id": STR,
                    "short_id": STR,
                    "title": OPT_STR,
                    "project": OPT_STR,
                    "cwd": OPT_STR,
                    "first_activity": OPT_STR,
                    "last_activity": OPT_STR,
                    "message_count": INT,
                    "time_source": STR,
                    "source_gone": BOOL,
                },
                ("agent", "session_id"),
            )
        ),
    },
    ("status", "conversations", "offset"),
)

LIST_SOURCES = response(
    {
        "home": OPT_STR,
        "warnings": array(STR),
        "total": INT,
        "offset": INT,
        "sources": array(
            obj(
                {
                    "agent": STR,
                    "store": STR,
                    "path": STR,
                    "format": STR,
                    "holds": STR,
                    "size": OPT_INT,
                    "modified": OPT_STR,
                    "coverage": STR,
                    "host": OPT_STR,
                    "times": STR,
                    "parse_status": STR,
                    "diagnostics": array({"type": "object"}),
                },
                ("agent", "store", "path"),
            )
        ),
    },
    ("total", "offset", "sources"),
)

WORKSPACE_CONTEXT = response(
    {
        "schema_version": INT,
        "version": INT,
        "workspace": STR,
        "aggregate_hash": STR,
        "resource_count": INT,
        "total_resources": INT,
        "offset": INT,
        "error": OPT_STR,
        "roots": array({"type": "object"}),
        "resources": array(
            obj(
                {"kind": STR, "source": STR, "status": STR, "scope": STR, "payload": OPT_STR},
                ("kind", "source", "status"),
            )
        ),
    },
    ("workspace", "version", "resources"),
)

LIST_WORKTREES = response(
    {
        "repo": STR,
        "worktrees": array(
            obj(
                {
                    "path": STR,
                    "branch": OPT_STR,
                    "label": STR,
                    "head": OPT_STR,
                    "primary": BOOL,
                    "detached": BOOL,
                    "dirty": nullable(BOOL),
                    "dirty_file_count": OPT_INT,
                },
                ("path", "primary"),
            )
        ),
    },
    ("repo", "worktrees"),
)

VALIDATE_QUERY = response(
    {
        "query": STR,
        "valid": BOOL,
        "error": OPT_STR,
        "explanation": OPT_STR,
        "terms": array(obj({"text": STR, "phrase": BOOL, "regex": BOOL})),
        "fields": array(obj({"field": STR, "value": STR, "time": STR})),
        "valid_fields": array(STR),
    },
    ("query", "valid"),
)

#: the normalized counts of some model calls and their cost (``docs/usage.md``)
USAGE_COUNTS: dict[str, Any] = {
    "calls": INT,
    "input_tokens": INT,
    "cache_read_tokens": INT,
    "cache_write_tokens": INT,
    "cache_write_1h_tokens": INT,
    "output_tokens": INT,
    "reasoning_tokens": INT,
    "total_tokens": INT,
    "cost_usd": nullable(NUMBER),
    "priced_cost_usd": NUMBER,
    "unpriced_calls": INT,
    "unpriced_tokens": INT,
    "models": array(OPT_STR),
}
_COUNTED = ("calls", "input_tokens", "output_tokens", "total_tokens", "cost_usd")

USAGE = response(
    {
        "by": STR,
        "since": OPT_STR,
        "until": OPT_STR,
        "agent": OPT_STR,
        "timezone": STR,
        "status": STR,
        "prices": obj(
            {"date": STR, "source": STR, "file": OPT_STR, "shipped": BOOL, "models": INT}
        ),
        "stats": {"type": "object"},
        "rows": array(obj(USAGE_COUNTS, _COUNTED)),
        "totals": obj(USAGE_COUNTS, _COUNTED),
        "unpriced": array(obj({"model": OPT_STR, "calls": INT, "tokens": INT}, ("model",))),
    },
    ("by", "status", "rows", "totals", "unpriced"),
)
