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
    snapshot = api_function("context", "snapshot")
    data: dict[str, Any] = snapshot(
        settings.directory(arguments.get("directory")),
        payload=arguments.get("payloads", False),
        home=settings.home,
    )
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
        "instruction and skill text. Resources page with offset/limit."
    ),
    properties={
        "directory": {
            "type": "string",
            "description": "The workspace (default: the server's cwd).",
        },
        "payloads": {"type": "boolean", "default": False, "description": "Include file contents."},
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
