"""``agentdex context``: what agents are told in a workspace.

Forms (the first argument decides)::

    agentdex context [DIR] [--json] [--payload] [--watch]   # same as `context show`
    agentdex context [DIR] --at TIME | --history             # from the context history
    agentdex context diff DIR FROM [TO]
    agentdex context add PATH | remove PATH | sources

If the first argument is ``add``, ``remove``, ``sources``, ``diff`` or
``show`` it names a subcommand; anything else is the ``show`` form, so a
directory literally named ``add`` is written ``agentdex context ./add``.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from agentdex.cli._common import console, emit_json, emit_ndjson, home_of, json_option

SUBCOMMANDS = ("show", "diff", "add", "remove", "sources")

_BADGES = {
    "ok": "[green]ok[/]",
    "oversize": "[yellow]oversize[/]",
    "excluded": "[yellow]excluded[/]",
    "invalid": "[red]invalid[/]",
    "unreadable": "[red]unreadable[/]",
}
_KIND_TITLES = {
    "instruction_file": "Instruction files",
    "skill": "Skills",
    "mcp_config": "MCP configs (metadata only)",
}


class ContextGroup(click.Group):
    """A group whose bare form (``context [DIR]``) runs the ``show`` subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = ["show", *args]
        return super().parse_args(ctx, args)


@click.group(cls=ContextGroup)
def context() -> None:
    """What agents are told in a workspace: instruction files, skills, MCP configs.

    \b
    agentdex context [DIR] [--json] [--watch]   show DIR (default: .)
    agentdex context [DIR] --at TIME            the snapshot in force at TIME
    agentdex context [DIR] --history            recorded versions
    agentdex context diff DIR FROM [TO]         what changed (TO: now)
    agentdex context add PATH                   add a user source
    agentdex context remove PATH                forget a user source
    agentdex context sources                    list user sources

    A directory named like a subcommand is written ./add.
    """


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"


def render(snapshot: dict[str, Any], home: str | None = None) -> None:
    """Print a snapshot as a tree grouped by kind, with status badges and sizes.

    On a terminal paths under the home read ``~/...``; in a pipe they stay
    absolute and no line is wrapped.
    """
    from rich.markup import escape
    from rich.tree import Tree

    from agentdex.cli._format import tilde
    from agentdex.cli._output import is_terminal
    from agentdex.paths import home_dir

    base = str(home_dir(home))

    def shown(path: str) -> str:
        return escape(tilde(path, base) if is_terminal() else path)

    out = console()
    history = snapshot.get("history")
    if history is not None:
        from agentdex.cli._context_history import history_banner

        out.print(history_banner(history), soft_wrap=True)
    title = (
        f"[bold]{shown(snapshot['workspace'])}[/]  v{snapshot['version']}  "
        f"{snapshot['resource_count']} resources, {_size(snapshot['total_payload_bytes'])} payload"
    )
    tree = Tree(title)
    groups: dict[str, list[dict[str, Any]]] = {}
    for res in snapshot["resources"]:
        groups.setdefault(res["kind"], []).append(res)
    for kind, items in groups.items():
        branch = tree.add(f"[bold]{_KIND_TITLES.get(kind, kind)}[/] ({len(items)})")
        for res in items:
            label = f"{_BADGES.get(res['status'], res['status'])} {shown(res['source'])}"
            if res["scope"] != "workspace":
                label += f" [cyan]({res['scope']})[/]"
            label += f"  [dim]{_size(res['size'])}[/]"
            if res["name"]:
                label += f"  {escape(res['name'])}"
            if res["servers"]:
                label += f"  servers: {escape(', '.join(res['servers']))}"
            if res["aliases"]:
                label += f"  [dim](also {escape(', '.join(res['aliases']))})[/]"
            node = branch.add(label)
            if res["error"]:
                node.add(f"[dim]{escape(res['error'])}[/]")
    if not groups:
        tree.add("[dim]no context files found[/]")
    out.print(tree)
    if snapshot["error"]:
        out.print(f"[yellow]warning:[/] {escape(snapshot['error'])}")


@context.command("show")
@click.argument("directory", required=False, type=click.Path(path_type=str))
@json_option
@click.option("--payload", is_flag=True, help="Include instruction and skill text in --json.")
@click.option("--watch", is_flag=True, help="Reprint on every change (Ctrl-C to stop).")
@click.option(
    "--max-updates",
    type=click.IntRange(min=1),
    default=None,
    help="With --watch: stop after this many prints.",
)
@click.option(
    "--debounce",
    type=click.FloatRange(min=0.01, max=10),
    default=0.25,
    show_default=True,
    help="With --watch: seconds of quiet before re-resolving.",
)
@click.option(
    "--at",
    "at",
    metavar="TIME",
    default=None,
    help="The recorded snapshot in force at TIME (2026-01-31T09:30, 2h, 7d, yesterday, vN).",
)
@click.option("--history", is_flag=True, help="List the recorded versions of DIR.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="With --history: only the newest N versions.",
)
@click.pass_context
def show(
    ctx: click.Context,
    directory: str | None,
    as_json: bool,
    payload: bool,
    watch: bool,
    max_updates: int | None,
    debounce: float,
    at: str | None,
    history: bool,
    limit: int | None,
) -> None:
    """Show the context snapshot of DIR (default: the current directory)."""
    from agentdex.api import context as api

    home = home_of(ctx)
    if sum((watch, at is not None, history)) > 1:
        raise click.UsageError("--watch, --at and --history are exclusive")
    if limit is not None and not history:
        raise click.UsageError("--limit goes with --history")
    if at is not None or history:
        from agentdex.cli._context_history import show_history

        show_history(directory, at=at, payload=payload, home=home, as_json=as_json, limit=limit)
        return
    if not watch:
        once = api.snapshot(directory, payload=payload, home=home, warn=_warn)
        if as_json:
            emit_json(once)
            return
        from agentdex.cli._output import paged

        with paged():
            render(once, home)
        return
    printed = 0
    with api.watch(directory, home=home, debounce=debounce) as live:
        snap: dict[str, Any] | None = live.snapshot(payload=payload)
        try:
            while snap is not None:
                emit_ndjson(snap) if as_json else render(snap, home)
                sys.stdout.flush()
                printed += 1
                if max_updates is not None and printed >= max_updates:
                    return
                last = snap["version"]
                snap = live.wait(last, timeout=None, payload=payload)
        except KeyboardInterrupt:
            return


def _warn(message: str) -> None:
    click.echo(f"agentdex: {message}", err=True)


@context.command("diff")
@click.argument("directory", type=click.Path(path_type=str))
@click.argument("since", metavar="FROM")
@click.argument("until", metavar="[TO]", required=False, default="now")
@json_option
@click.pass_context
def diff(ctx: click.Context, directory: str, since: str, until: str, as_json: bool) -> None:
    """What changed in DIR's context between FROM and TO (default: now).

    FROM and TO are times (2026-01-31, 2026-01-31T09:30Z, 2h, 7d,
    yesterday, now) or recorded versions (v1, v2, ... from --history).
    Changed instruction files and skills show a unified diff of their text.
    """
    from agentdex.api import context_history as api
    from agentdex.cli._context_history import render_diff

    data = api.diff(directory, since, until, home=home_of(ctx))
    emit_json(data) if as_json else render_diff(data)


@context.command("add")
@click.argument("path", type=str)
@click.option(
    "--workspace",
    type=click.Path(path_type=str),
    default=None,
    help="Workspace that makes PATH allowed (default: current directory).",
)
@json_option
@click.pass_context
def add(ctx: click.Context, path: str, workspace: str | None, as_json: bool) -> None:
    """Add PATH (absolute or ~/...) as a user source."""
    from agentdex.api import context as api

    entry = api.add_source(path, workspace, home=home_of(ctx))
    if as_json:
        emit_json(entry)
    else:
        verb = "added" if entry["created"] else "already a source"
        click.echo(f"{verb}: {entry['path']}")


@context.command("remove")
@click.argument("path", type=str)
@json_option
@click.pass_context
def remove(ctx: click.Context, path: str, as_json: bool) -> None:
    """Forget the user source PATH."""
    from agentdex.api import context as api

    api.remove_source(path, home=home_of(ctx))
    if as_json:
        emit_json({"removed": path})
    else:
        click.echo(f"removed: {path}")


@context.command("sources")
@click.option(
    "--workspace",
    type=click.Path(path_type=str),
    default=None,
    help="Workspace to check allowed roots against (default: current directory).",
)
@json_option
@click.pass_context
def sources(ctx: click.Context, workspace: str | None, as_json: bool) -> None:
    """List user sources and whether each is still usable."""
    from agentdex.api import context as api

    entries = api.list_sources(workspace, home=home_of(ctx))
    if as_json:
        emit_json({"sources": entries})
        return
    if not entries:
        click.echo("no user sources (add one with: agentdex context add PATH)")
    for entry in entries:
        click.echo(f"{entry['status']:<12} {entry['path']}")
