"""``agentdex sources``: every discovered store, its coverage and whether it parsed."""

from __future__ import annotations

import click

from agentdex.cli._common import console, emit_json, home_of, json_option
from agentdex.cli._format import human_size, relative_time, tilde


@click.command("sources")
@json_option
@click.option("--no-check", is_flag=True, help="Skip the parse probe (faster on huge homes).")
@click.pass_context
def sources(ctx: click.Context, as_json: bool, no_check: bool) -> None:
    """List every discovered agent store file.

    Each file shows its agent, store id, format, size, modification time,
    coverage (default / opt-in / listed) and whether it parsed (a probe that
    stops at the first record); "retry" when the last index could not read it
    (locked, busy, I/O error) and the next index will read it again.
    """
    from agentdex.api import history

    data = history.sources(home_of(ctx), check=not no_check)
    if as_json:
        emit_json(data)
        return
    out = console()
    for warning in data["warnings"]:
        console(stderr=True).print(f"[yellow]warning:[/] {warning}")
    if not data["sources"]:
        out.print(f"No agent stores found under {data['home']}.")
        return
    styles = {"ok": "green", "empty": "yellow", "error": "red", "retry": "red", "not-parsed": "dim"}
    agent = None
    for row in data["sources"]:
        if row["agent"] != agent:
            agent = row["agent"]
            out.print(f"[bold]{agent}[/]")
        status = row.get("parse_status", "-")
        if row.get("index_error"):  # the last index could not read it; the next one retries
            status = "retry"
        store = row["store"].removeprefix(row["agent"] + ".")
        coverage = "" if row["coverage"] == "default" else f" [dim]({row['coverage']})[/]"
        host = f" [dim]via {row['host']}[/]" if row["host"] else ""
        out.print(
            f"  {store:<18} [{styles.get(status, 'white')}]{status:<10}[/] "
            f"{human_size(row['size']):>9}  {relative_time(row['modified']):>8}  "
            f"{tilde(row['path'], data['home'])}{coverage}{host}",
            soft_wrap=True,
        )
