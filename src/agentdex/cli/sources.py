"""``agentdex sources``: every discovered store, its coverage and whether it parsed."""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import console, emit_json, home_of, json_option
from agentdex.cli._format import human_size, relative_time, tilde


@click.command("sources")
@json_option
@click.option("--no-check", is_flag=True, help="Skip the parse probe (faster on huge homes).")
@click.pass_context
def sources(ctx: click.Context, as_json: bool, no_check: bool) -> None:
    """List every discovered agent store file.

    Each file shows its agent, store id, whether it parsed (a probe that
    stops at the first record; "retry" when the last index could not read it,
    locked, busy or an I/O error, and the next index will read it again),
    size, modification time and path, plus its coverage when not default
    (opt-in / listed), the Windows user it was found through (WSL) and
    whether the store keeps no times of its own. Nothing listed that you
    expected? `agentdex doctor` says where it looked.
    """
    from agentdex.api import history

    data = history.sources(home_of(ctx), check=not no_check)
    if as_json:
        emit_json(data)
        return
    for warning in data["warnings"]:
        console(stderr=True).print(f"[yellow]warning:[/] {warning}")
    if not data["sources"]:
        console().print(
            f"No agent stores found under {data['home']} (`agentdex doctor` says where it looked)."
        )
        return
    from agentdex.cli._output import paged

    with paged():
        _human(data)


def _human(data: dict[str, Any]) -> None:
    """One line per file; on a terminal a path that does not fit goes on its own line."""
    from rich.markup import escape

    from agentdex.cli._output import current

    width = current().width
    out = console()
    styles = {"ok": "green", "empty": "yellow", "error": "red", "retry": "red", "not-parsed": "dim"}
    agent = None
    unrecorded = False
    plugged = {p["agent"]: p["distribution"] for p in data.get("plugins", []) if not p["error"]}
    for row in data["sources"]:
        if row["agent"] != agent:
            agent = row["agent"]
            via = f" [dim](plug-in {escape(plugged[agent])})[/]" if agent in plugged else ""
            out.print(f"[bold]{agent}[/]{via}")
        status = row.get("parse_status", "-")
        if row.get("index_error"):  # the last index could not read it; the next one retries
            status = "retry"
        store = row["store"].removeprefix(row["agent"] + ".")
        mark = "~" if row.get("times") == "file-mtime" else ""
        unrecorded = unrecorded or bool(mark)
        head = (
            f"  {store:<15} [{styles.get(status, 'white')}]{status:<10}[/] "
            f"{human_size(row['size']):>8} {mark + relative_time(row['modified']):>8}  "
        )
        notes = "" if row["coverage"] == "default" else f" [dim]({row['coverage']})[/]"
        if row["host"]:
            notes += f" [dim]via {escape(row['host'])}[/]"
        path = row["path"] if width is None else tilde(row["path"], data["home"])
        line = f"{head}{escape(path)}{notes}"
        if width is not None and len(out.render_str(line).plain) > width:
            out.print(head.rstrip())
            line = f"      {escape(path)}{notes}"
        out.print(line, soft_wrap=True)
    if unrecorded:
        from agentdex.cli.conversations import MTIME_NOTE

        out.print(f"[dim]{MTIME_NOTE}[/]", soft_wrap=True)
