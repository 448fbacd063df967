"""``agentdex conversations``: list conversations (agent chats) from the index.

``agentdex sessions`` is its old name, kept as an alias that says so:
``agentdex session`` (singular) runs agentdex's own sessions, and one word
should mean one thing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
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

#: On a terminal wider than :data:`WIDE`: every count in its own column. Counts and
#: times are never cut (their floor is their width); tools and project give way first.
WIDE_COLUMNS = (
    Column("agent", floor=11, style="bold cyan"),
    Column("id", cut="never"),
    Column("last", right=True, cut="never", style="dim"),
    Column("prompts", right=True, cut="never"),
    Column("replies", right=True, cut="never"),
    Column("tools", right=True, cut="never", droppable=True),
    # the conversation's model calls (`agentdex usage`): all tokens, and their cost at list
    # prices ("-": none recorded, or a call whose model has no price)
    Column("tokens", right=True, cut="never", droppable=True),
    Column("cost", right=True, cut="never", droppable=True),
    Column("project", floor=10, keep=28, cut="start", droppable=True, style="green"),
    Column("title", floor=24, flex=True),
)
#: Narrower: one count, ``messages`` (prompts plus replies: the exchange as the person saw it).
COLUMNS = (
    Column("agent", floor=11, style="bold cyan"),
    Column("id", cut="never"),
    Column("last", right=True, cut="never", style="dim"),
    Column("messages", right=True, cut="never"),
    Column("project", floor=10, keep=28, cut="start", droppable=True, style="green"),
    Column("title", floor=22, flex=True),
)
WIDE = 110

#: Said under a listing with times its stores do not record.
MTIME_NOTE = "~ these stores keep no times: the file's modification time is shown"
#: Said (stderr, and in JSON ``warnings``) when the old name is used.
ALIAS_NOTE = (
    "'agentdex sessions' is the old name of 'agentdex conversations' (an alias, kept);"
    " 'agentdex session' runs agentdex's own sessions"
)

HELP = """List conversations (agent chats), newest activity first.

    With QUERY (same language as `agentdex search`), only conversations
    holding a matching message (exit status 1 when none does). Each shows
    agent, id, last activity, prompts (typed by a person), replies (the
    agent's answers), tools (tool calls and results), project (where the
    conversation was launched) and title. On a terminal the id is cut to the
    shortest prefix that stays unique (`agentdex show` takes it); in a pipe
    each conversation is one tab-separated line: agent, id, last activity
    (ISO-8601), prompts, replies, tools, project, title. Past -n, a note on stderr says how many
    were left out.
    """


def _options(function: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        (
            click.argument("query", nargs=-1),
            json_option,
            ndjson_option,
            click.option("-n", "--limit", type=int, default=50, show_default=True),
            click.option(
                "--here", is_flag=True, help="This project/worktree's conversations first."
            ),
            click.option(
                "--only-here", is_flag=True, help="Only this project/worktree's conversations."
            ),
            click.option(
                "--no-refresh", is_flag=True, help="List from the index as it is (no refresh)."
            ),
            click.pass_context,
        )
    ):
        function = option(function)
    return function


@click.command("conversations", cls=QueryCommand, help=HELP)
@_options
def conversations(ctx: click.Context, **options: Any) -> None:
    _run(ctx, alias=False, **options)


@click.command(
    "sessions",
    cls=QueryCommand,
    help="The old name of `agentdex conversations` (same options, same output).\n\n"
    "`agentdex session` runs agentdex's own sessions; this lists agent chats.",
)
@_options
def sessions(ctx: click.Context, **options: Any) -> None:
    _run(ctx, alias=True, **options)


def _run(
    ctx: click.Context,
    *,
    alias: bool,
    query: tuple[str, ...],
    as_json: bool,
    ndjson: bool,
    limit: int,
    here: bool,
    only_here: bool,
    no_refresh: bool,
) -> None:
    from agentdex.api import search as api
    from agentdex.cli._format import pinned_now
    from agentdex.cli.search import _progress

    one_format(as_json, ndjson)
    # a first build on a big home takes a while: the index command's bar, on a terminal
    with _progress(not (as_json or ndjson or no_refresh) and sys.stderr.isatty()) as bar:
        result = api.conversations(
            " ".join(query) or None,
            home=home_of(ctx),
            refresh_first=not no_refresh,
            limit=limit,
            now=pinned_now(),
            here=os.getcwd() if (here or only_here) else None,
            only_here=only_here,
            progress=bar,
        )
    if alias:
        result.warnings.append(ALIAS_NOTE)
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
        _footer(result.stats)
    if alias:
        click.echo(f"agentdex: note: {ALIAS_NOTE}", err=True)
    if result.status == "partial":
        _partial(result.stats, result.coverage or {})
    if query and not result.conversations:
        ctx.exit(1)  # like grep: a query that matches nothing is status 1


def _partial(stats: dict[str, Any], coverage: dict[str, Any]) -> None:
    """One line on stderr, then exit 7 (as ``search``): the index is still being built, so
    the listing holds the conversations of the newest files read so far."""
    from agentdex.cli.search import _building_line
    from agentdex.errors import EXIT_PARTIAL

    sys.stdout.flush()
    line = _building_line(
        stats,
        coverage,
        found="listed the conversations of",
        again="run `agentdex conversations` again for all of them",
    )
    click.echo(f"agentdex: {line}", err=True)
    sys.exit(EXIT_PARTIAL)


def _footer(stats: dict[str, Any]) -> None:
    """How many were left out, as ``search`` says it (stderr, after the listing)."""
    total, returned = stats.get("total", 0), stats.get("returned", 0)
    if total > returned:
        click.echo(f"({returned} of {total} conversations; -n for more)", err=True)


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
                    (c["id"], ""),
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
    wide = settings.width is None or settings.width >= WIDE
    rows = []
    for c in conversations:
        counts = (
            [str(c["prompts"]), str(c["replies"]), str(c["tool_events"]), *_spent(c)]
            if wide
            else [str(c["message_count"])]
        )
        project = tilde(c["project"], base) if c["project"] else "-"
        when = _approx(c) + relative_time(c["last_activity"])
        rows.append((c["agent"], c["short_id"], when, *counts, project, _one_line(_title(c))))
    for line in render(WIDE_COLUMNS if wide else COLUMNS, rows, settings.width):
        out.print(line, no_wrap=True, overflow="ignore", crop=False)
    if any(_approx(c) for c in conversations):
        out.print(f"[dim]{MTIME_NOTE}[/]", soft_wrap=True)


def _spent(conversation: dict[str, Any]) -> tuple[str, str]:
    """The tokens and cost cells: ``35.4M``, ``$12.34``; ``-`` where there is none."""
    from agentdex.cli.usage import compact_number

    tokens = conversation.get("total_tokens")
    cost = conversation.get("cost_usd")
    return (
        compact_number(tokens) if tokens else "-",
        f"${cost:,.2f}" if cost is not None and tokens else "-",
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _approx(conversation: dict[str, Any]) -> str:
    return "~" if conversation.get("time_source") == "file-mtime" else ""


def _title(conversation: dict[str, Any]) -> str:
    """The title, marked when only agentdex's archive still holds part of the conversation."""
    title = conversation["title"] or ""
    return f"(source gone) {title}".rstrip() if conversation.get("source_gone") else title
