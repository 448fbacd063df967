"""``agentdex archive [export|prune]``: agentdex's own copy of the conversations it indexed.

Exit codes: 0 ok, 2 usage (bad duration or time, a directory as output
file), 1 a write failure. See docs/archive.md.
"""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import console, emit_json, home_of, json_option


@click.group("archive", invoke_without_command=True)
@json_option
@click.pass_context
def archive(ctx: click.Context, as_json: bool) -> None:
    """Where the archive is, its size per agent, and what only it still holds.

    While indexing, agentdex keeps a compressed, deduplicated copy of every
    conversation it reads, so search and show keep working after an agent
    deletes or rewrites its files. Turn it off with `archive = false` in
    config.toml. Subcommands: export, prune. See docs/archive.md.
    """
    if ctx.invoked_subcommand is not None:
        return
    from agentdex.api import archive as api

    info = api.status(home=home_of(ctx))
    if as_json:
        emit_json(info)
        return
    _print_status(info)


def _print_status(info: dict[str, Any]) -> None:
    from rich.table import Table

    from agentdex.cli._format import human_size

    out = console()
    state = "on" if info["enabled"] else "off (archive = false in config.toml)"
    out.print(f"Archive at {info['path']}: {state}", soft_wrap=True)
    out.print(
        f"{info['records']} records in {info['conversations']} conversations, "
        f"{human_size(info['bytes'])} on disk (index: {human_size(info['index_bytes'])}); "
        f"{human_size(info['text_bytes'])} of text, {info['raw_lines']} raw prompt lines"
    )
    gone = info["source_gone"]
    out.print(
        f"Kept only by the archive (source gone): {gone['records']} records in "
        f"{gone['conversations']} conversations; forgotten: {info['forgotten']}"
    )
    if not info["agents"]:
        return
    table = Table(box=None, pad_edge=False)
    for column in ("agent", "conversations", "records", "text", "stored"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for row in info["agents"]:
        table.add_row(
            row["agent"],
            str(row["conversations"]),
            str(row["records"]),
            human_size(row["text_bytes"]),
            human_size(row["stored_bytes"]),
        )
    out.print(table)


@archive.command("export")
@click.option(
    "-o",
    "--output",
    "output",
    required=True,
    help="File to write (JSON Lines); '-' for stdout.",
)
@click.option("--agent", default=None, help="Only this agent's records.")
@click.option("--session", default=None, help="Only this conversation (id or unique prefix).")
@click.option(
    "--since", default=None, help="Only records from then on (2026-01-31, 30d, yesterday...)."
)
@json_option
@click.pass_context
def export_cmd(
    ctx: click.Context,
    output: str,
    agent: str | None,
    session: str | None,
    since: str | None,
    as_json: bool,
) -> None:
    """Write archived records as JSON Lines: each record's JSON plus archived_at,
    source_gone and the raw source line where it was kept (raw / raw_base64)."""
    from agentdex.api import archive as api

    if output == "-" and as_json:
        raise click.UsageError("--json prints a summary on stdout; give -o FILE, not -o -")
    result = api.export(output, agent=agent, session=session, since=since, home=home_of(ctx))
    if as_json:
        emit_json(result)
    elif output != "-":
        click.echo(
            f"wrote {result['records']} records of {result['conversations']} conversations"
            f" to {result['path']}"
        )


@archive.command("prune")
@click.option(
    "--older-than",
    "older_than",
    required=True,
    help="Conversations last active before this: 90d, 12w, 1y, or a date (2025-06-30).",
)
@click.option("--no-refresh", is_flag=True, help="Do not refresh the index first.")
@json_option
@click.pass_context
def prune_cmd(ctx: click.Context, older_than: str, no_refresh: bool, as_json: bool) -> None:
    """Remove archived conversations last active before --older-than. Records an
    agent's files still hold are never removed (a refresh runs first to know them)."""
    from agentdex.api import archive as api

    result = api.prune(older_than, home=home_of(ctx), refresh_first=not no_refresh)
    if as_json:
        emit_json(result)
        return
    click.echo(
        f"removed {result['records_removed']} archived records of "
        f"{len(result['conversations'])} conversations last active before {result['cutoff']}; "
        f"kept {result['records_kept_live']} that their source still holds"
    )
