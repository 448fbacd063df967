"""``agentdex similar REF``: the conversations closest in meaning to one conversation."""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import emit_json, home_of, json_option


@click.command("similar")
@click.argument("ref")
@json_option
@click.option("-n", "--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.pass_context
def similar(ctx: click.Context, ref: str, as_json: bool, limit: int) -> None:
    """List the conversations closest in meaning to REF.

    REF is a session id or a result reference (SESSION@LOCATOR, as `search`
    prints). The conversation's embedded messages are averaged and the other
    conversations ranked by their closest message. Needs embeddings
    (`agentdex index --semantic`). Exit status 3 when REF or its embeddings
    are not found.
    """
    from agentdex.api.semantic import similar as api_similar

    data = api_similar(ref, home=home_of(ctx), limit=limit)
    if as_json:
        emit_json(data)
        return
    _print(data)
    if not data["results"]:
        ctx.exit(1)


def _print(data: dict[str, Any]) -> None:
    from agentdex.cli._output import emit_row

    if not data["results"]:
        click.echo("No similar conversations.", err=True)
    for item in data["results"]:
        emit_row(
            [
                (f"{item['similarity']:.2f}", "blue"),
                (item["session_id"], "dim"),
                (item["agent"], "bold cyan"),
                (item["project"] or item["cwd"] or "-", "green"),
                (item["timestamp"] or "-", "dim"),
                ((item.get("title") or item["snippet"])[:120], ""),
            ]
        )
