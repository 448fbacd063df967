"""``agentdex forget REF | --session ID | --project PATH``: remove conversations for good.

Exit codes: 0 forgotten, 1 declined at the prompt, 2 usage (none or several
of REF/--session/--project), 3 nothing matched. See docs/archive.md.
"""

from __future__ import annotations

import sys

import click

from agentdex.cli._common import console, emit_json, fail, home_of, json_option
from agentdex.errors import UsageError


@click.command("forget")
@click.argument("ref", required=False)
@click.option("--session", default=None, help="A conversation id (exact, any agent).")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Every conversation whose project or working dir is PATH or inside it.",
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--purge",
    is_flag=True,
    help="Also rebuild the index now, so none of its files keeps the text"
    " (takes as long as `agentdex index --full`).",
)
@json_option
@click.pass_context
def forget(
    ctx: click.Context,
    ref: str | None,
    session: str | None,
    project: str | None,
    yes: bool,
    purge: bool,
    as_json: bool,
) -> None:
    """Remove conversations from the index and the archive, for good.

    REF is a conversation's id or session id, a unique prefix of either, or
    a search result reference ID@LOCATOR. A tombstone keeps them out of every later refresh and
    rebuild (agentdex never changes the agents' own files, which still hold
    them). They leave every answer at once; the index's files keep the
    text's bytes until it is rebuilt, which --purge does now. Asks for
    confirmation on a terminal; elsewhere (a script, a pipe) it refuses
    without --yes (exit 2), as gh does.
    """
    from agentdex.api import archive as api

    home = home_of(ctx)
    plan = api.forget_plan(ref, session=session, project=project, home=home)
    if not yes and not sys.stdin.isatty():
        raise UsageError(
            f"forget would remove {len(plan.conversations)} conversation(s) for good and cannot"
            " ask here (not a terminal); add --yes to confirm"
        )
    if not yes:
        _describe(plan.conversations)
        if not click.confirm(f"Forget {len(plan.conversations)} conversation(s)?", default=False):
            fail("nothing forgotten", 1)
    result = api.forget(plan, home=home, purge=purge)
    if as_json:
        emit_json(result)
        return
    click.echo(
        f"forgot {len(result['forgotten'])} conversation(s): "
        f"{result['index_records_removed']} index records, "
        f"{result['archive_records_removed']} archived records removed"
    )
    if purge:
        click.echo(f"index rebuilt without them ({result['records_after_purge']} records)")
    else:
        click.echo(
            "note: the index's files keep the text's bytes until it is rebuilt:"
            " `agentdex index --full` (or forget with --purge)",
            err=True,
        )


def _describe(conversations: list[dict[str, object]]) -> None:
    out = console(stderr=True)
    for c in conversations:
        title = f"  {c['title']}" if c.get("title") else ""
        out.print(
            f"{c['agent']}  {c['session_id']}  indexed {c['index_records']},"
            f" archived {c['archive_records']}{title}",
            soft_wrap=True,
            markup=False,
        )
