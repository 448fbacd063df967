"""``agentdex sessions``: list conversations (agent chats) from the index."""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import (
    QueryCommand,
    emit_json,
    emit_ndjson,
    home_of,
    json_option,
    ndjson_option,
    one_format,
)
from agentdex.cli._table import Column

#: On a terminal: title and last activity stay readable at 80 columns; the rest shrinks.
COLUMNS = (
    Column("agent", floor=11, style="bold cyan"),
    Column("session", floor=8, cut="plain"),
    Column("last", floor=8, right=True, style="dim"),
    Column("p/r/t", floor=5, right=True),
    Column("project", floor=10, cut="start", droppable=True, style="green"),
    Column("title", floor=24, flex=True),
)

#: Said under a listing with times its stores do not record.
MTIME_NOTE = "~ these stores keep no times: the file's modification time is shown"


@click.command("sessions", cls=QueryCommand)
@click.argument("query", nargs=-1)
@json_option
@ndjson_option
@click.option("-n", "--limit", type=int, default=50, show_default=True)
@click.option("--no-refresh", is_flag=True, help="List from the index as it is (no refresh).")
@click.pass_context
def sessions(
    ctx: click.Context,
    query: tuple[str, ...],
    as_json: bool,
    ndjson: bool,
    limit: int,
    no_refresh: bool,
) -> None:
    """List conversations, newest activity first.

    With QUERY (same language as `agentdex search`), only conversations
    holding a matching message (exit status 1 when none does). Each shows
    agent, id, last activity, p/r/t (prompts the person typed / replies the
    agent gave / tool calls and results), project and title. On a terminal
    the id is cut to a prefix `agentdex show` accepts; in a pipe each
    conversation is one tab-separated line: agent, id, last activity
    (ISO-8601), prompts, replies, tool events, project, title.
    """
    from agentdex.api import search as api
    from agentdex.cli._format import pinned_now

    one_format(as_json, ndjson)
    result = api.conversations(
        " ".join(query) or None,
        home=home_of(ctx),
        refresh_first=not no_refresh,
        limit=limit,
        now=pinned_now(),
    )
    if as_json:
        emit_json(result.to_json())
    elif ndjson:
        for conversation in result.conversations:
            emit_ndjson(conversation)
    elif not result.conversations:
        click.echo("No conversations.", err=True)
    else:
        from agentdex.cli._output import paged

        with paged():
            _human(result.conversations, home_of(ctx))
    if query and not result.conversations:
        ctx.exit(1)  # like grep: a query that matches nothing is status 1


def _human(conversations: list[dict[str, Any]], home: str | None) -> None:
    from agentdex.cli._common import console
    from agentdex.cli._format import relative_time, tilde
    from agentdex.cli._output import current
    from agentdex.cli._table import render
    from agentdex.paths import home_dir

    out = console()
    settings = current()
    if not settings.terminal:
        from agentdex.cli._output import emit_row

        for c in conversations:
            emit_row(
                [
                    (c["agent"], "bold cyan"),
                    (c["session_id"], ""),
                    (c["last_activity"] or "-", "dim"),
                    (str(c["prompts"]), ""),
                    (str(c["replies"]), ""),
                    (str(c["tool_events"]), ""),
                    (c["project"] or "-", "green"),
                    (_title(c), ""),
                ]
            )
        return
    base = str(home_dir(home))
    rows = [
        (
            c["agent"],
            c["session_id"],
            _approx(c) + relative_time(c["last_activity"]),
            f"{c['prompts']}/{c['replies']}/{c['tool_events']}",
            tilde(c["project"], base) if c["project"] else "-",
            " ".join(_title(c).split()),
        )
        for c in conversations
    ]
    for line in render(COLUMNS, rows, settings.width):
        out.print(line, no_wrap=True, overflow="ignore", crop=False)
    if any(_approx(c) for c in conversations):
        out.print(f"[dim]{MTIME_NOTE}[/]", soft_wrap=True)


def _approx(conversation: dict[str, Any]) -> str:
    return "~" if conversation.get("time_source") == "file-mtime" else ""


def _title(conversation: dict[str, Any]) -> str:
    """The title, marked when only agentdex's archive still holds part of the conversation."""
    title = conversation["title"] or ""
    return f"(source gone) {title}".rstrip() if conversation.get("source_gone") else title
