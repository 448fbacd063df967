"""Workspace tools: workspace_context and list_worktrees."""

from __future__ import annotations

from typing import Any

from agentdex.mcp.tools._base import Settings, ToolSpec, api_function, list_paging


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
    paging=list_paging("list_worktrees", "worktrees"),
)
