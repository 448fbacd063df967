"""The MCP tools: argument schemas and thin calls into :mod:`agentdex.api`.

Each tool is a :class:`ToolSpec`: a JSON schema for its arguments (enums come
from the catalogue or from the API module that owns them, never retyped), a
handler that calls the same library function the CLI calls, and how its
response pages. Handlers only select, window and reshape what the API
returns; they never search, parse or resolve anything themselves. A tool
whose API module is not in this build raises :class:`Unavailable`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentdex.catalogue import CATALOGUE, Coverage, agents
from agentdex.mcp.budget import Paging


class Unavailable(Exception):
    """The library API a tool needs is not part of this build."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What every handler may use: the home to discover stores in and the default directory."""

    home: str | None = None
    cwd: str = field(default_factory=os.getcwd)

    def directory(self, value: str | None) -> str:
        """A directory argument: absolute as given, relative to the server's cwd otherwise."""
        if not value:
            return self.cwd
        expanded = os.path.expanduser(value)
        return os.path.normpath(os.path.join(self.cwd, expanded))


Handler = Callable[[dict[str, Any], Settings], dict[str, Any]]
#: (arguments, response) -> how the response pages
PagingRule = Callable[[dict[str, Any], dict[str, Any]], Paging | None]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    properties: dict[str, Any]
    handler: Handler
    required: tuple[str, ...] = ()
    paging: PagingRule | None = None

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": self.properties,
            "additionalProperties": False,
        }
        if self.required:
            schema["required"] = list(self.required)
        return schema


def api_function(module: str, attr: str) -> Callable[..., Any]:
    """``agentdex.api.<module>.<attr>``, or :class:`Unavailable` when this build lacks it."""
    name = f"agentdex.api.{module}"
    try:
        loaded = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise Unavailable(f"{name} is not available in this build") from None
    function = getattr(loaded, attr, None)
    if function is None:
        raise Unavailable(f"{name}.{attr} is not available in this build")
    result: Callable[..., Any] = function
    return result


# -- shared argument schemas ------------------------------------------------------------


def _agent_property(purpose: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(agents()), "description": purpose}


def _listed_stores() -> list[str]:
    """Store ids a listing can contain (private stores are never listed)."""
    return [row.store for row in CATALOGUE if row.coverage is not Coverage.PRIVATE]


def _int(description: str, default: int, minimum: int, maximum: int) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": minimum,
        "maximum": maximum,
        "default": default,
        "description": description,
    }


OFFSET = _int(
    "Skip this many items (for paging; 'next' in a cut response says where).", 0, 0, 10**9
)


def offset_paging(tool: str, key: str) -> PagingRule:
    """Paging that continues at the response's ``offset`` + items kept, same arguments."""

    def rule(arguments: dict[str, Any], response: dict[str, Any]) -> Paging:
        start = int(response.get("offset") or 0)

        def next_arguments(kept: int) -> dict[str, Any]:
            return {**arguments, "offset": start + kept}

        return Paging(tool, key, next_arguments)

    return rule


def _window(items: list[Any], offset: int, limit: int) -> list[Any]:
    return items[offset : offset + limit]


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
        "sources": _window(rows, offset, limit),
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
        "agent": _agent_property("Only this agent's stores."),
        "store": {
            "type": "string",
            "enum": _listed_stores(),
            "description": "Only this store (see the agentdex://catalogue resource).",
        },
        "check": {
            "type": "boolean",
            "default": True,
            "description": "Probe each file's parse status (slower on many files).",
        },
        "offset": OFFSET,
        "limit": _int("At most this many rows.", 100, 1, 1000),
    },
    handler=_list_sources,
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
    page = [_clip_text(r, arguments.get("max_chars", 4000)) for r in _window(records, start, limit)]
    common, page = _hoist_common(page)
    end = start + len(page)
    return {
        "session_id": data["session_id"],
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
        "'ref' is a session id, a unique prefix, or a search result ref SESSION@LOCATOR; with a "
        "ref that has a locator and no offset, returns a window of 'around' records either side "
        "of it ('focus' is its index). Page with offset/limit; fields shared by every record on "
        "the page are listed once under 'common'. Long texts are clipped to max_chars."
    ),
    properties={
        "ref": {
            "type": "string",
            "minLength": 1,
            "description": "Session id, unique prefix, or SESSION@LOCATOR from a search result.",
        },
        "agent": _agent_property("Only look in this agent's stores (faster)."),
        "offset": OFFSET,
        "limit": _int("At most this many records.", 40, 1, 500),
        "around": _int("Records either side of the ref's locator (window mode).", 5, 0, 100),
        "max_chars": _int(
            "Clip each record's text to this many characters (0: no clip).", 4000, 0, 10**7
        ),
    },
    required=("ref",),
    handler=_show_session,
    paging=offset_paging("show_session", "records"),
)


# -- search, validate_query, list_sessions (agentdex.api.search) ----------------------


def _search_option(name: str) -> list[str] | None:
    """A choice list the search API publishes (e.g. sort orders), if this build has it."""
    try:
        module = importlib.import_module("agentdex.api.search")
    except ModuleNotFoundError:
        return None
    values = getattr(module, name, None)
    return [str(v) for v in values] if values else None


def _sort_property() -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string", "description": "Result order."}
    choices = _search_option("SORTS")
    if choices:
        prop["enum"] = choices
    return prop


def _search(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    search = api_function("search", "search")
    result: dict[str, Any] = search(
        arguments["query"],
        home=settings.home,
        limit=arguments.get("limit", 20),
        sort=arguments.get("sort"),
        cwd=settings.directory(arguments.get("cwd")),
        here=arguments.get("here", False),
        only_here=arguments.get("only_here", False),
    )
    return result


SEARCH = ToolSpec(
    name="search",
    title="Search agent history",
    description=(
        "Search every agent's history on this machine (prompts, answers, tool calls) with the "
        "agentdex query language (see resource agentdex://query-language; check a query with "
        "validate_query). Each result has a 'ref' to pass to show_session. The run 'status' "
        "is complete or truncated, with why. here=true ranks results from the given cwd's "
        "project first; only_here=true keeps only them."
    ),
    properties={
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "A query, e.g. 'retry backoff agent:codex since:7d'.",
        },
        "limit": _int("At most this many results.", 20, 1, 200),
        "sort": _sort_property(),
        "cwd": {
            "type": "string",
            "description": "Directory for here/only_here (default: the server's cwd).",
        },
        "here": {
            "type": "boolean",
            "default": False,
            "description": "Rank results from cwd's project first.",
        },
        "only_here": {
            "type": "boolean",
            "default": False,
            "description": "Only results from cwd's project.",
        },
    },
    required=("query",),
    handler=_search,
    paging=lambda _arguments, _response: Paging("search", "results", lambda _kept: None),
)


def _validate_query(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    validate = api_function("search", "validate_query")
    result: dict[str, Any] = validate(arguments["query"])
    return result


VALIDATE_QUERY = ToolSpec(
    name="validate_query",
    title="Check a search query",
    description=(
        "Explain how agentdex reads a query (terms, phrases, field filters, operators), or "
        "say exactly what is wrong with it. Does not search."
    ),
    properties={"query": {"type": "string", "description": "The query to check."}},
    required=("query",),
    handler=_validate_query,
)


def _list_sessions(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    conversations = api_function("search", "conversations")
    offset, limit = arguments.get("offset", 0), arguments.get("limit", 20)
    result: dict[str, Any] = conversations(
        home=settings.home,
        agent=arguments.get("agent"),
        project=arguments.get("project"),
        worktree=arguments.get("worktree"),
        limit=offset + limit,
    )
    return result


LIST_SESSIONS = ToolSpec(
    name="list_sessions",
    title="List recent conversations",
    description=(
        "Recent agent conversations, newest first, with agent, project, worktree, branch, "
        "time span and first prompt; filter by agent, project or worktree. Pass a session id "
        "to show_session to read it."
    ),
    properties={
        "agent": _agent_property("Only this agent's conversations."),
        "project": {"type": "string", "description": "Only conversations in this project (path)."},
        "worktree": {
            "type": "string",
            "description": "Only conversations in this worktree (path).",
        },
        "offset": OFFSET,
        "limit": _int("At most this many conversations.", 20, 1, 200),
    },
    handler=_list_sessions,
    paging=offset_paging("list_sessions", "sessions"),
)


# -- workspace_context (agentdex.api.context), list_worktrees (agentdex.api.worktrees) --


def _workspace_context(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    snapshot = api_function("context", "snapshot")
    result: dict[str, Any] = snapshot(
        settings.directory(arguments.get("directory")),
        payload=arguments.get("payloads", False),
        home=settings.home,
    )
    return result


WORKSPACE_CONTEXT = ToolSpec(
    name="workspace_context",
    title="What a workspace tells its agents",
    description=(
        "The context snapshot of a directory: instruction files (AGENTS.md, CLAUDE.md, ...), "
        "skills, MCP server configs (names and commands only, never their env or header "
        "values) and which agent reads each. payloads=true adds file contents."
    ),
    properties={
        "directory": {
            "type": "string",
            "description": "The workspace (default: the server's cwd).",
        },
        "payloads": {"type": "boolean", "default": False, "description": "Include file contents."},
    },
    handler=_workspace_context,
)


def _list_worktrees(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    list_worktrees = api_function("worktrees", "list_worktrees")
    repo = settings.directory(arguments.get("repo"))
    return {"repo": repo, "worktrees": list_worktrees(repo)}


LIST_WORKTREES = ToolSpec(
    name="list_worktrees",
    title="List a repository's git worktrees",
    description=(
        "Every git worktree of the repository containing 'repo' (primary first) with its "
        "branch and path: where else in this project work may have happened."
    ),
    properties={
        "repo": {
            "type": "string",
            "description": "A path inside the repository (default: the server's cwd).",
        },
    },
    handler=_list_worktrees,
    paging=lambda _arguments, _response: Paging("list_worktrees", "worktrees", lambda _kept: None),
)


TOOLS: tuple[ToolSpec, ...] = (
    SEARCH,
    SHOW_SESSION,
    LIST_SESSIONS,
    LIST_SOURCES,
    WORKSPACE_CONTEXT,
    LIST_WORKTREES,
    VALIDATE_QUERY,
)
