"""The ``agentdex`` click group (:func:`agentdex.cli.main` runs it).

Subcommands live one module each and are imported only when run, so
``agentdex --help`` stays fast. Register a command by adding it to
``COMMANDS``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from agentdex import __version__

#: command name -> "module:attribute" (imported lazily), with one-line help for --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "sources": ("agentdex.cli.sources:sources", "List every discovered agent store."),
    "show": ("agentdex.cli.show:show", "Show one conversation, normalized, in order."),
    "resume": ("agentdex.cli.resume:resume", "Reopen a conversation in its own agent."),
    "export": ("agentdex.cli.export:export", "Write a conversation as Markdown, HTML or JSON."),
    "audit": ("agentdex.cli.audit:audit", "Compare parsed records against raw counts."),
    "index": ("agentdex.cli.index:index", "Build or refresh the search index."),
    "archive": (
        "agentdex.cli.archive:archive",
        "agentdex's own copy of history: size, export, prune.",
    ),
    "forget": ("agentdex.cli.forget:forget", "Remove conversations from index and archive."),
    "search": ("agentdex.cli.search:search", "Search every agent's history."),
    "conversations": (
        "agentdex.cli.conversations:conversations",
        "List conversations (agent chats), newest first.",
    ),
    "sessions": ("agentdex.cli.conversations:sessions", "Old name of `conversations` (an alias)."),
    "secrets": (
        "agentdex.cli.secrets:secrets",
        "Where secrets were found (kinds, never values).",
    ),
    "usage": ("agentdex.cli.usage:usage", "Tokens and cost per day, model, project, session."),
    "similar": (
        "agentdex.cli.similar:similar",
        "Conversations closest in meaning to one conversation.",
    ),
    "context": ("agentdex.cli.context:context", "What agents are told in a workspace."),
    "worktree": ("agentdex.cli.worktree:worktree", "List, add and remove git worktrees."),
    "session": ("agentdex.cli.session:session", "Run agents in sessions bound to a work dir."),
    "serve": ("agentdex.cli.serve:serve", "Serve the HTTP API (and MCP) on loopback."),
    "mcp": ("agentdex.cli.mcp:mcp", "Run the MCP server on stdio."),
    "doctor": ("agentdex.cli.doctor:doctor", "Why is something missing? Where agentdex looked."),
    "ui": ("agentdex.cli.ui:ui", "Open the web explorer in a browser (local server)."),
    "team": ("agentdex.cli.team:team", "Push to and search a team PostgreSQL database."),
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when it is invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target[0].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return _missing(cmd_name)
        command: click.Command = getattr(module, attr)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        """Turn a closed stdout into :class:`PipeClosed` before click maps it to exit 1."""
        from agentdex.cli._common import PipeClosed

        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            raise PipeClosed from exc

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _missing(name: str) -> click.Command:
    @click.command(name, context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def _not_built(args: tuple[str, ...]) -> None:
        click.echo(f"agentdex: '{name}' is not available in this build", err=True)
        sys.exit(1)

    return _not_built


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="agentdex")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=str),
    envvar="AGENTDEX_HOME",
    default=None,
    help="Home directory to discover agent stores in (default: $HOME). Each home has its "
    "own index.",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour: auto = on a terminal unless NO_COLOR is set.",
)
@click.option("--no-pager", is_flag=True, help="Never page long output on a terminal.")
@click.option("--json", "as_json", is_flag=True, help="JSON output for the command that follows.")
@click.pass_context
def cli(ctx: click.Context, home: str | None, color: str, no_pager: bool, as_json: bool) -> None:
    """agentdex: search every AI coding agent's history, see what each workspace
    tells its agents, and run agent sessions in their own git worktrees.

    \b
    Quick tour:
      agentdex sources                 stores found on this machine
      agentdex search retry backoff    search all history
      agentdex context .               instruction files, skills, MCP configs here
      agentdex doctor                  why a store is missing: where agentdex looked
      agentdex worktree add feat/x --new && agentdex session new --worktree feat/x

    \b
    --home, --color and --no-pager may also follow the subcommand.
    Output follows the terminal: in a pipe there is no colour, no wrapping
    and no pager. Exit status: 0 ok, 1 nothing found (search) or a failure,
    2 usage error, 3 not found, 4 conflict, 5 limit, 6 corrupt, 7 partial,
    8 unsupported (docs/json-output.md).
    """
    from agentdex.cli._output import configure

    configure(color, pager=not no_pager)
    ctx.ensure_object(dict)
    ctx.obj["home"] = _checked_home(ctx, home)
    ctx.obj["json"] = as_json
    _warn_missing_config()


def _checked_home(ctx: click.Context, home: str | None) -> str | None:
    """``--home`` (or ``$AGENTDEX_HOME``) must name an existing directory."""
    import os

    from agentdex.errors import UsageError

    if home is None:
        return None
    if not os.path.isdir(os.path.expanduser(home)):
        source = ctx.get_parameter_source("home")
        given = "AGENTDEX_HOME" if source is click.core.ParameterSource.ENVIRONMENT else "--home"
        raise UsageError(f"{given} {home}: no such directory")
    return home


def _warn_missing_config() -> None:
    """``$AGENTDEX_CONFIG`` naming a missing file is said once (defaults are used)."""
    from agentdex.config import missing_config_warning

    message = missing_config_warning()
    if message:
        click.echo(f"agentdex: warning: {message}", err=True)
