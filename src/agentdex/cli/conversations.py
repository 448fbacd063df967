"""``agentdex sessions``: list conversations (agent chats) from the index."""

from __future__ import annotations

import sys

import click

from agentdex.cli._common import emit_json, home_of, json_option


@click.command("sessions")
@click.argument("query", nargs=-1)
@json_option
@click.option("-n", "--limit", type=int, default=50, show_default=True)
@click.option("--no-refresh", is_flag=True, help="List from the index as it is (no refresh).")
@click.pass_context
def sessions(
    ctx: click.Context, query: tuple[str, ...], as_json: bool, limit: int, no_refresh: bool
) -> None:
    """List conversations, newest activity first.

    With QUERY (same language as `agentdex search`), only conversations
    holding a matching message. Each shows agent, id, title, project, first
    and last activity, and how many prompts the person typed, replies the
    agent gave and tool calls/results it made.
    """
    from agentdex.api import search as api

    result = api.conversations(
        " ".join(query) or None, home=home_of(ctx), refresh_first=not no_refresh, limit=limit
    )
    if as_json:
        emit_json(result.to_json())
        return
    if not result.conversations:
        click.echo("No conversations.", err=True)
        return
    from agentdex.cli._format import relative_time

    if not sys.stdout.isatty():
        for c in result.conversations:
            click.echo(
                f"{c['agent']}\t{c['session_id']}\t{relative_time(c['last_activity'])}\t"
                f"{c['prompts']}\t{c['replies']}\t{c['tool_events']}\t"
                f"{c['project'] or '-'}\t{c['title'] or ''}"
            )
        return
    from rich.table import Table

    from agentdex.cli._common import console

    table = Table(box=None, pad_edge=False)
    columns = (
        "agent",
        "session",
        "title",
        "project",
        "first",
        "last",
        "prompts",
        "replies",
        "tools",
    )
    for column in columns:
        table.add_column(column, overflow="ellipsis", no_wrap=column != "title")
    for c in result.conversations:
        table.add_row(
            c["agent"],
            c["session_id"],
            c["title"] or "",
            c["project"] or "-",
            relative_time(c["first_activity"]),
            relative_time(c["last_activity"]),
            str(c["prompts"]),
            str(c["replies"]),
            str(c["tool_events"]),
        )
    console().print(table)
