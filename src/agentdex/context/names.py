"""Which file names count as context, and as what kind (exact case, by position).

Classification uses only the path, never the file's bytes, so a file keeps
its kind (and therefore its id) whether or not it can be read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

INSTRUCTION_NAMES = frozenset({"AGENTS.md", "CLAUDE.md", "GEMINI.md", ".cursorrules"})
SKILL_FILE = "SKILL.md"
SKILLS_CONTAINER = "skills"
KEBAB_CASE = r"^[a-z0-9]+(-[a-z0-9]+)*$"

#: Directories never descended anywhere (VCS, dependency trees, virtualenvs, caches).
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".next",
        ".nuxt",
        ".gradle",
        ".terraform",
    }
)

#: Inside user-level agent folders: history and caches, never context.
USER_SKIP_DIRS = SKIP_DIRS | frozenset(
    {
        "projects",
        "todos",
        "shell-snapshots",
        "statsig",
        "sessions",
        "archived_sessions",
        "history",
        "log",
        "logs",
        "tmp",
        "file-history",
        "ide",
        "cache",
        "debug",
        "plugins",
        "antigravity",
    }
)


@dataclass(frozen=True, slots=True)
class McpFormat:
    """How an MCP config file is laid out."""

    syntax: str  # "json", "jsonc" or "toml"
    servers_key: str  # "mcpServers", "servers" or "mcp_servers"
    shared: bool  # a general settings file: MCP section optional, hash covers it only


MCP_DOTFILE = McpFormat("json", "mcpServers", shared=False)
MCP_CURSOR = McpFormat("json", "mcpServers", shared=False)
MCP_VSCODE = McpFormat("jsonc", "servers", shared=False)
MCP_CLAUDE_JSON = McpFormat("json", "mcpServers", shared=True)
MCP_GEMINI = McpFormat("jsonc", "mcpServers", shared=True)
MCP_CODEX = McpFormat("toml", "mcp_servers", shared=True)


def classify(path: str | PurePath) -> str | None:
    """The kind of the file at ``path`` by its name and parents, or None.

    >>> classify("/w/AGENTS.md"), classify("/w/agents.md"), classify("/w/.claude/skills/a/SKILL.md")
    ('instruction_file', None, 'skill')
    >>> classify("/w/.vscode/mcp.json"), classify("/h/.codex/config.toml"), classify("/w/mcp.json")
    ('mcp_config', 'mcp_config', None)
    """
    parts = PurePath(path).parts
    name = parts[-1] if parts else ""
    parent = parts[-2] if len(parts) >= 2 else ""
    grandparent = parts[-3] if len(parts) >= 3 else ""
    if name in INSTRUCTION_NAMES:
        return "instruction_file"
    if name == "copilot-instructions.md" and parent == ".github":
        return "instruction_file"
    if name.endswith(".mdc") and parent == "rules" and grandparent == ".cursor":
        return "instruction_file"
    if name == SKILL_FILE and grandparent == SKILLS_CONTAINER:
        return "skill"
    if mcp_format(path) is not None:
        return "mcp_config"
    return None


def mcp_format(path: str | PurePath) -> McpFormat | None:
    """The MCP layout of ``path``, or None when it is not an MCP config."""
    parts = PurePath(path).parts
    name = parts[-1] if parts else ""
    parent = parts[-2] if len(parts) >= 2 else ""
    if name == ".mcp.json":
        return MCP_DOTFILE
    if name == ".claude.json":
        return MCP_CLAUDE_JSON
    if name == "mcp.json" and parent == ".cursor":
        return MCP_CURSOR
    if name == "mcp.json" and parent == ".vscode":
        return MCP_VSCODE
    if name == "settings.json" and parent == ".gemini":
        return MCP_GEMINI
    if name == "config.toml" and parent == ".codex":
        return MCP_CODEX
    return None


def classify_file_source(path: str | PurePath) -> str:
    """Kind of a file the user added explicitly: recognized kinds, else an instruction file."""
    return classify(path) or "instruction_file"
