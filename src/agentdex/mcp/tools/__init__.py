"""The MCP tools: argument schemas and thin calls into :mod:`agentdex.api`.

Each tool is a :class:`ToolSpec`: a JSON schema for its arguments (enums come
from the catalogue or from the API module that owns them, never retyped), a
handler that calls the same library function the CLI calls, and how its
response pages. Handlers only select, window and reshape what the API
returns; they never search, parse or resolve anything themselves. A tool
whose API is not in this build raises :class:`Unavailable`, which the server
reports as "not available in this build".
"""

from __future__ import annotations

from agentdex.mcp.tools._base import Settings, ToolSpec, Unavailable, api_function
from agentdex.mcp.tools.history import LIST_SOURCES, SHOW_SESSION
from agentdex.mcp.tools.search import LIST_SESSIONS, SEARCH, VALIDATE_QUERY
from agentdex.mcp.tools.usage import USAGE
from agentdex.mcp.tools.workspace import LIST_WORKTREES, WORKSPACE_CONTEXT

TOOLS: tuple[ToolSpec, ...] = (
    SEARCH,
    SHOW_SESSION,
    LIST_SESSIONS,
    LIST_SOURCES,
    WORKSPACE_CONTEXT,
    LIST_WORKTREES,
    VALIDATE_QUERY,
    USAGE,
)

__all__ = ["TOOLS", "Settings", "ToolSpec", "Unavailable", "api_function"]
