"""``agentdex show``: one conversation, normalized, in order."""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import console, home_of, json_option, print_result


@click.command("show")
@click.argument("ref")
@json_option
@click.option("--agent", default=None, help="Only look in this agent's stores.")
@click.option(
    "--context",
    "window",
    type=int,
    default=None,
    help="With a ref, print only N records either side of it.",
)
@click.pass_context
def show(
    ctx: click.Context, ref: str, as_json: bool, agent: str | None, window: int | None
) -> None:
    """Show the conversation REF (a session id, a unique prefix, or a search
    result reference ``SESSION@LOCATOR``, which opens at that spot)."""
    from agentdex.api import history

    data = history.show(ref, home_of(ctx), agent=agent)
    records = data["records"]
    focus = data["focus"]
    if window is not None and focus is not None:
        start = max(0, focus - window)
        records = records[start : focus + window + 1]
        focus -= start
        data = {**data, "records": records, "focus": focus}
    print_result(as_json, data, _human)


def _human(data: dict[str, Any]) -> None:
    from rich.markup import escape

    records = data["records"]
    focus = data["focus"]
    from agentdex.cli._format import shown_path

    out = console()
    project = shown_path(data["project"])
    out.print(
        f"[bold]{data['agent']}[/] session [cyan]{data['session_id']}[/]"
        + (f"  project {escape(project)}" if project else ""),
        soft_wrap=True,
    )
    colours = {"user": "green", "assistant": "blue", "tool": "magenta", "system": "yellow"}
    for index, record in enumerate(records):
        marker = "[reverse]>>[/]" if index == focus else "  "
        when = (record["timestamp"] or "")[:19].replace("T", " ")
        head = f"{marker} [{colours.get(record['role'], 'white')}]{record['role']}[/]"
        head += f" [dim]{record['kind']} {when} {record['locator']}[/]"
        out.print(head)
        text = record["text"]
        if len(text) > 2000 and index != focus:
            text = text[:2000] + f"… [{len(record['text']) - 2000} more chars]"
        out.print(escape(text), soft_wrap=True)
        out.print()
