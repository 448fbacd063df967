"""``agentdex sources``: every discovered store, its coverage and whether it parsed."""

from __future__ import annotations

import click

from agentdex.cli._common import console, emit_json, home_of, json_option
from agentdex.cli._format import human_size, relative_time


@click.command("sources")
@json_option
@click.option("--no-check", is_flag=True, help="Skip the parse probe (faster on huge homes).")
@click.pass_context
def sources(ctx: click.Context, as_json: bool, no_check: bool) -> None:
    """List every discovered agent store file.

    Each file shows its agent, store id, format, size, modification time,
    coverage (default / opt-in / listed) and whether it parsed (a probe that
    stops at the first record).
    """
    from agentdex.api import history

    data = history.sources(home_of(ctx), check=not no_check)
    if as_json:
        emit_json(data)
        return
    from rich.table import Table

    out = console()
    for warning in data["warnings"]:
        console(stderr=True).print(f"[yellow]warning:[/] {warning}")
    if not data["sources"]:
        out.print(f"No agent stores found under {data['home']}.")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("agent", "store", "format", "size", "modified", "coverage", "parsed", "path"):
        table.add_column(column, overflow="fold" if column == "path" else "ellipsis")
    styles = {"ok": "green", "empty": "yellow", "error": "red", "not-parsed": "dim"}
    for row in data["sources"]:
        status = row.get("parse_status", "-")
        path = row["path"] + (f"  [dim]({row['host']})[/]" if row["host"] else "")
        table.add_row(
            row["agent"],
            row["store"],
            row["format"],
            human_size(row["size"]),
            relative_time(row["modified"]),
            row["coverage"],
            f"[{styles.get(status, 'white')}]{status}[/]",
            path,
        )
    out.print(table)
