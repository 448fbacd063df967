"""Workspace tools: workspace_context and list_worktrees."""

from __future__ import annotations

from typing import Any

from agentdex.mcp.tools import outputs
from agentdex.mcp.tools._base import (
    OFFSET,
    Settings,
    ToolSpec,
    api_function,
    integer,
    list_paging,
    offset_paging,
)


def _workspace_context(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    directory = settings.directory(arguments.get("directory"))
    payload = arguments.get("payloads", False)
    data: dict[str, Any]
    if arguments.get("at"):
        snapshot_at = api_function("context_history", "snapshot_at")
        data = snapshot_at(
            directory,
            arguments["at"],
            payload=payload,
            home=settings.home,
            recorded_by="mcp",
        )
    else:
        snapshot = api_function("context", "snapshot")
        data = snapshot(directory, payload=payload, home=settings.home, recorded_by="mcp")
    resources = data.get("resources")
    if isinstance(resources, list):
        offset, limit = arguments.get("offset", 0), arguments.get("limit", 100)
        data["total_resources"] = len(resources)
        data["offset"] = offset
        data["resources"] = resources[offset : offset + limit]
    return data


WORKSPACE_CONTEXT = ToolSpec(
    name="workspace_context",
    title="What a workspace tells its agents",
    description=(
        "What a directory tells its agents: the context snapshot of its instruction files "
        "(AGENTS.md, CLAUDE.md, ...), skills and MCP server configs (server names only, never "
        "their values), with which agent reads each and in what order. payloads=true adds "
        "instruction and skill text. at='2026-01-31T09:30Z' (or 2h, 7d, yesterday, v3) "
        "answers what was recorded in force then, from agentdex's context history. "
        "Resources page with offset/limit."
    ),
    properties={
        "directory": {
            "type": "string",
            "description": "The workspace (default: the server's cwd).",
        },
        "payloads": {"type": "boolean", "default": False, "description": "Include file contents."},
        "at": {
            "type": "string",
            "maxLength": 100,
            "description": "A past time (ISO, 2h, 7d, yesterday) or vN: the snapshot recorded "
            "in force then (error NOT_FOUND when nothing was recorded by then).",
        },
        "offset": OFFSET,
        "limit": integer("At most this many resources.", 100, 1, 1000),
    },
    handler=_workspace_context,
    output=outputs.WORKSPACE_CONTEXT,
    paging=offset_paging("workspace_context", "resources"),
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
    output=outputs.LIST_WORKTREES,
    paging=list_paging("list_worktrees", "worktrees"),
)
