"""``agentdex resume``: reopen a conversation in its own agent, in its own directory."""

from __future__ import annotations

import sys

import click

from agentdex.cli._common import emit_json, home_of, json_option


@click.command("resume")
@click.argument("ref")
@click.option(
    "--print",
    "print_only",
    is_flag=True,
    help="Print the command (cd DIR && AGENT ...) instead of running it.",
)
@json_option
@click.pass_context
def resume(ctx: click.Context, ref: str, print_only: bool, as_json: bool) -> None:
    """Reopen conversation REF in its agent (claude --resume, codex resume, ...),
    in the directory or worktree it ran in.

    REF is a session id, a unique prefix of one, or a search result
    reference SESSION@LOCATOR. Without --print the agent takes over this
    terminal. --json describes the command and never runs it. An agent that
    cannot resume from a command line (VS Code chat, Cursor IDE, Cline,
    Aider, Windsurf) exits 8 and says why.
    """
    from agentdex.api import resume as api
    from agentdex.errors import UnsupportedError

    found = api.plan(ref, home_of(ctx))
    if as_json:
        emit_json(found.to_json())
        if not found.supported:
            sys.exit(UnsupportedError.exit_code)
        return
    if print_only:
        if not found.supported:
            raise UnsupportedError(found.reason or f"{found.agent} cannot resume")
        _notes(found.warnings)
        from agentdex.cli._output import terminal_safe

        click.echo(terminal_safe(found.command or ""))
        return
    _notes(api.check_launchable(found))
    from agentdex.cli._output import terminal_safe

    click.echo(
        terminal_safe(f"agentdex: resuming {found.agent} {found.session_id}: {found.command}"),
        err=True,
    )
    sys.exit(api.launch(found))


def _notes(warnings: list[str]) -> None:
    from agentdex.cli._output import terminal_safe

    for warning in warnings:
        click.echo(terminal_safe(f"agentdex: note: {warning}"), err=True)
