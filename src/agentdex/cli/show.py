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
    "--around",
    "window",
    type=click.IntRange(min=0),
    default=None,
    help="With a ref, print only N records either side of it.",
)
@click.option(
    "--context",
    "with_context",
    is_flag=True,
    help="Also show what the workspace told its agents at the first message.",
)
@click.pass_context
def show(
    ctx: click.Context,
    ref: str,
    as_json: bool,
    agent: str | None,
    window: int | None,
    with_context: bool,
) -> None:
    """Show the conversation REF (its id or session id, a unique prefix of
    either, or a search result reference ``ID@LOCATOR``, which opens at that
    spot). A prefix naming several conversations is a conflict (exit 4) that
    lists them.

    --context adds the context snapshot (instruction files, skills, MCP
    configs) of the conversation's workspace as recorded at its first
    message; when nothing was recorded before then it says so and shows the
    earliest later version, marked as such."""
    from agentdex.api import history

    data = history.show(ref, home_of(ctx), agent=agent)
    if with_context:
        from agentdex.api import context_history

        data["context"] = context_history.conversation_context(data, home=home_of(ctx))
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

    from agentdex.cli._format import shown_path

    records = data["records"]
    focus = data["focus"]
    out = console()
    project = shown_path(data["project"])
    named = f"[cyan]{escape(data['session_id'])}[/]"
    if data.get("id") and data["id"] != data["session_id"]:
        named = f"[cyan]{escape(data['id'])}[/] (session {escape(data['session_id'])})"
    out.print(
        f"[bold]{data['agent']}[/] {'' if '(' in named else 'session '}{named}"
        + (f"  project {escape(project)}" if project else ""),
        soft_wrap=True,
    )
    if "context" in data:  # --context
        from agentdex.cli._context_history import render_conversation_context

        render_conversation_context(data["context"])
        out.print()
    colours = {"user": "green", "assistant": "blue", "tool": "magenta", "system": "yellow"}
    for index, record in enumerate(records):
        marker = "[reverse]>>[/]" if index == focus else "  "
        when = (record["timestamp"] or "")[:19].replace("T", " ")
        head = f"{marker} [{colours.get(record['role'], 'white')}]{record['role']}[/]"
        head += f" [dim]{record['kind']} {when} {record['locator']}[/]"
        if record.get("source_gone"):
            head += " [red]source gone (archived)[/]"
        out.print(head)
        text = record["text"]
        if len(text) > 2000 and index != focus:
            text = text[:2000] + f"… [{len(record['text']) - 2000} more chars]"
        out.print(escape(text))  # wrapped to the terminal (a pipe is never wrapped)
        out.print()
