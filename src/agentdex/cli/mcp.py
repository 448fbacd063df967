"""``agentdex mcp``: the MCP server on stdio, for Claude Code, Codex, VS Code and others.

stdout carries only MCP messages; anything else goes to stderr. The server is
the same one ``agentdex serve`` mounts at ``/mcp`` (``docs/mcp.md``).
"""

from __future__ import annotations

import click

from agentdex.cli._common import home_of


@click.command("mcp")
@click.option(
    "--home",
    "local_home",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Home directory to discover agent stores in (default: the global --home, else $HOME).",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=2048),
    default=None,
    envvar="AGENTDEX_MCP_MAX_BYTES",
    help="Size budget of one response in bytes (default 24576).",
)
@click.pass_context
def mcp(ctx: click.Context, local_home: str | None, max_bytes: int | None) -> None:
    """Run the MCP server on stdio (one client, until it disconnects).

    \b
    Claude Code:  claude mcp add agentdex -- agentdex mcp
    Codex:        [mcp_servers.agentdex] command = "agentdex" args = ["mcp"]
    """
    from agentdex.asgi import run_mcp_stdio

    home = local_home if local_home is not None else home_of(ctx)
    run_mcp_stdio(home=home, max_bytes=max_bytes)
