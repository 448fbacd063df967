"""``agentdex mcp``: the MCP server on stdio, for Claude Code, Codex, VS Code and others.

stdout carries only MCP messages; anything else goes to stderr. The server is
the same one ``agentdex serve`` mounts at ``/mcp`` (``docs/mcp.md``).
"""

from __future__ import annotations

import click

from agentdex.cli._common import home_of


@click.command("mcp")
@click.option(
    "--max-bytes",
    type=click.IntRange(min=2048),
    default=None,
    envvar="AGENTDEX_MCP_MAX_BYTES",
    help="Size budget of one response in bytes (default 24576).",
)
@click.pass_context
def mcp(ctx: click.Context, max_bytes: int | None) -> None:
    """Run the MCP server on stdio (one client, until it disconnects).

    \b
    Claude Code:  claude mcp add agentdex -- agentdex mcp
    Codex:        [mcp_servers.agentdex] command = "agentdex" args = ["mcp"]

    `agentdex mcp --home DIR` serves another home (--home may follow the command).
    """
    from agentdex.asgi import run_mcp_stdio

    run_mcp_stdio(home=home_of(ctx), max_bytes=max_bytes)
