"""Search tools: search, list_sessions, validate_query (:mod:`agentdex.api.search`).

``search`` returns what ``agentdex search --json`` prints, result for result
(same refs, same order); it leaves out each result's full ``text`` unless
asked (the ``snippet`` shows the match, ``show_session`` the whole exchange),
and adds ``run``: complete or truncated, with why, from the API's own counts.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentdex.errors import UsageError
from agentdex.mcp.tools import outputs
from agentdex.mcp.tools._base import (
    OFFSET,
    Settings,
    ToolSpec,
    agent_property,
    api_function,
    integer,
    list_paging,
    offset_paging,
)


def _published(name: str) -> list[str] | None:
    """A choice list the search API publishes (sort orders, case modes), if in this build."""
    try:
        module = importlib.import_module("agentdex.api.search")
    except ModuleNotFoundError as exc:
        if exc.name != "agentdex.api.search":
            raise
        return None
    values = getattr(module, name, None)
    return [str(v) for v in values] if values else None


def _choice(description: str, published: str) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string", "description": description}
    choices = _published(published)
    if choices:
        prop["enum"] = choices
        prop["default"] = choices[0]
    return prop


def _run_status(status: str, stats: dict[str, Any], limit: int) -> dict[str, Any]:
    """complete / truncated (with why) / partial / no-index, from the API's status and counts."""
    if status == "partial":
        if stats.get("stopped") == "cancelled":
            return {"status": "partial", "why": "the search was cancelled"}
        return {
            "status": "partial",
            "why": f"stopped at the time budget of {stats.get('time_budget'):g} s with "
            f"{stats.get('returned', 0)} result(s) so far; raise 'time_budget' or narrow the query",
        }
    if status != "ok":
        why = "nothing is indexed yet" if status == "no-index" else status
        return {"status": status, "why": why}
    total, returned = stats.get("total", 0), stats.get("returned", 0)
    if total > returned:
        return {
            "status": "truncated",
            "why": f"limit {limit} reached: {returned} of {total} matching results returned; "
            "raise 'limit' or narrow the query",
        }
    return {"status": "complete", "why": f"all {total} matching results returned"}


def _search(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    search = api_function("search_worker", "search_in_worker")  # stoppable, off this process
    here = arguments.get("here", False) or arguments.get("only_here", False)
    limit = arguments.get("limit", 20)
    options: dict[str, Any] = {}
    for name in ("sort", "case", "regex", "word", "time_budget", "mode"):
        if name in arguments:
            options[name] = arguments[name]
    team = arguments.get("scope", "local") == "team"
    if team and here:
        raise UsageError("here/only_here rank this machine's places: not with scope 'team'")
    result = search(
        arguments["query"],
        team=team,
        cancel=settings.cancel,
        home=settings.home,
        limit=limit,
        here=settings.directory(arguments.get("cwd")) if here else None,
        only_here=arguments.get("only_here", False),
        **options,
    )
    data: dict[str, Any] = result.to_json()
    if not arguments.get("full_text", False):
        data["results"] = [{k: v for k, v in r.items() if k != "text"} for r in data["results"]]
    data["run"] = _run_status(data.get("status", "ok"), data.get("stats", {}), limit)
    return data


SEARCH = ToolSpec(
    name="search",
    title="Search agent history",
    description=(
        "Search every coding agent's history on this machine (prompts, answers, tool calls, "
        "across Claude Code, Codex, Gemini CLI, VS Code Copilot...) with the agentdex query "
        'language: words (AND), "phrases", -exclude, a OR b, field:value filters such as '
        "agent:codex project:/abs/path since:7d (resource agentdex://query-language; check "
        "with validate_query). Each result has a 'ref' for show_session and a 'snippet'. "
        "'run' says whether the result list is complete or truncated, and why. here=true "
        "ranks results from cwd's project/worktree first; only_here=true keeps only them. "
        "mode 'hybrid' (default) also finds messages close in meaning when embeddings exist "
        "(describe the problem in your own words); 'lexical' exact only, 'semantic' meaning "
        "only. Each result's 'why' gives the exact terms matched and/or the similarity."
    ),
    properties={
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "A query, e.g. 'retry backoff agent:codex since:7d'.",
        },
        "limit": integer("At most this many results.", 20, 1, 200),
        "sort": _choice("Result order.", "SORTS"),
        "case": _choice("Case matching (smart: a capital makes it sensitive).", "CASES"),
        "regex": {"type": "boolean", "default": False, "description": "Terms are regexes."},
        "word": {"type": "boolean", "default": False, "description": "Whole words only."},
        "cwd": {
            "type": "string",
            "description": "Directory for here/only_here (default: the server's cwd).",
        },
        "here": {
            "type": "boolean",
            "default": False,
            "description": "Rank results from cwd's project/worktree first.",
        },
        "only_here": {
            "type": "boolean",
            "default": False,
            "description": "Only results from cwd's project/worktree.",
        },
        "scope": {
            "type": "string",
            "enum": ["local", "team"],
            "default": "local",
            "description": "local: this machine's index; team: the team PostgreSQL database "
            "(every machine's pushed history; each result names its 'machine'; the URL from "
            "AGENTDEX_TEAM_URL, [team] url, or `serve --team`).",
        },
        "full_text": {
            "type": "boolean",
            "default": False,
            "description": "Include each result's full text (default: the snippet only).",
        },
        "mode": _choice(
            "hybrid: exact matches fused with search by meaning (when embeddings exist); "
            "lexical: exact only; semantic: by meaning only.",
            "MODES",
        ),
        "time_budget": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": 3600,
            "description": "Seconds the search may run (default 5 or the config's); past it "
            "the result is partial ('run' says so). Cancelling the call stops it too.",
        },
    },
    required=("query",),
    handler=_search,
    output=outputs.SEARCH,
    paging=list_paging("search", "results"),
)


def _quoted(value: str) -> str:
    """A field value in the query language's quoted form (``\\"`` for a quote)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _list_sessions(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    conversations = api_function("search", "conversations")
    parts = [arguments["query"]] if arguments.get("query") else []
    if arguments.get("agent"):
        parts.append(f"agent:{arguments['agent']}")
    for field in ("project", "worktree"):
        if arguments.get(field):
            parts.append(f"{field}:{_quoted(settings.directory(arguments[field]))}")
    offset, limit = arguments.get("offset", 0), arguments.get("limit", 20)
    query = " ".join(parts) or None
    result = conversations(query, home=settings.home, limit=offset + limit)
    data: dict[str, Any] = result.to_json()
    data["offset"] = offset
    data["conversations"] = data["conversations"][offset:]
    return data


LIST_SESSIONS = ToolSpec(
    name="list_sessions",
    title="List recent conversations",
    description=(
        "Recent agent conversations, newest activity first, with agent, title (or first "
        "prompt), project, cwd, first/last activity and counts of prompts typed, replies "
        "and tool events. Filter by agent, "
        "project or worktree (paths), and optionally by a query (only conversations with a "
        "matching record). Pass a session_id to show_session to read it."
    ),
    properties={
        "agent": agent_property("Only this agent's conversations."),
        "project": {"type": "string", "description": "Only conversations in this project."},
        "worktree": {"type": "string", "description": "Only conversations in this worktree."},
        "query": {"type": "string", "description": "Only conversations matching this query."},
        "offset": OFFSET,
        "limit": integer("At most this many conversations.", 20, 1, 200),
    },
    handler=_list_sessions,
    output=outputs.LIST_SESSIONS,
    paging=offset_paging("list_sessions", "conversations"),
)


def _validate_query(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    validate = api_function("search", "validate_query")
    options = {name: arguments[name] for name in ("regex", "word") if name in arguments}
    result = validate(arguments["query"], **options)
    data: dict[str, Any] = result.to_json() if hasattr(result, "to_json") else dict(result)
    return data


VALIDATE_QUERY = ToolSpec(
    name="validate_query",
    title="Check a search query",
    description=(
        "Explain how agentdex reads a query (terms, phrases, field filters, operators), or "
        "say exactly what is wrong with it. Does not search."
    ),
    properties={
        "query": {"type": "string", "description": "The query to check."},
        "regex": {"type": "boolean", "default": False, "description": "Terms are regexes."},
        "word": {"type": "boolean", "default": False, "description": "Whole words only."},
    },
    required=("query",),
    handler=_validate_query,
    output=outputs.VALIDATE_QUERY,
)
