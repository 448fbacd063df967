"""``agentdex secrets``: where secrets were found in the history (never their values)."""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import emit_json, home_of, json_option
from agentdex.cli._table import Column

COLUMNS = (
    Column("agent", floor=11, style="bold cyan"),
    Column("session", floor=8, cut="plain"),
    Column("last", floor=8, right=True, style="dim"),
    Column("kinds", floor=16, flex=True, style="red"),
    Column("title", floor=16, flex=True, droppable=True),
)


@click.command("secrets")
@json_option
@click.option("--agent", help="Only this agent's conversations.")
@click.option("--no-refresh", is_flag=True, help="List from the index as it is (no refresh).")
@click.pass_context
def secrets(ctx: click.Context, as_json: bool, agent: str | None, no_refresh: bool) -> None:
    """List the conversations where secrets were found, by kind, so you know which keys
    to rotate.

    agentdex masks secrets (API keys, tokens, private keys, passwords in URLs
    and assignments) as [REDACTED:<kind>] before anything is indexed or
    archived, so no value is ever shown; this lists the agent, conversation,
    kinds and when. With --json each secret is one finding (agent, session_id,
    ref, kind, timestamp). Exit status 1 when none was found.
    """
    from agentdex.api.secrets import found

    result = found(home=home_of(ctx), refresh_first=not no_refresh, agent=agent)
    if as_json:
        emit_json(result.to_json())
    elif not result.conversations:
        note = "" if result.stats.get("redact") else " ([privacy] redact is off)"
        click.echo(f"No secrets found{note}.", err=True)
    else:
        _human(result.conversations)
    if not result.findings:
        ctx.exit(1)


def _human(conversations: list[dict[str, Any]]) -> None:
    """A fitted table on a terminal; in a pipe one tab-separated line per conversation
    (agent, id, last seen as ISO-8601, kinds, title)."""
    from agentdex.cli._common import console
    from agentdex.cli._format import relative_time
    from agentdex.cli._output import current, emit_row
    from agentdex.cli._table import render

    settings = current()
    rows = [
        (
            c["agent"],
            c["session_id"],
            relative_time(c["last_seen"]) if settings.terminal else (c["last_seen"] or "-"),
            _kinds(c),
            " ".join((c["title"] or "").split()),
        )
        for c in conversations
    ]
    if settings.terminal:
        out = console()
        for line in render(COLUMNS, rows, settings.width):
            out.print(line, no_wrap=True, overflow="ignore", crop=False)
        return
    for row in rows:
        emit_row([(value, column.style) for value, column in zip(row, COLUMNS, strict=True)])


def _kinds(conversation: dict[str, Any]) -> str:
    return ", ".join(
        f"{kind} x{count}" if count > 1 else kind for kind, count in conversation["kinds"].items()
    )
