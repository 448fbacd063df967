"""Human output for the context history: ``context --at``, ``--history``, ``diff``,
and the context block of ``show --context``."""

from __future__ import annotations

from typing import Any

from agentdex.cli._common import console, emit_json


def _when(iso: str | None) -> str:
    """``2026-01-31 09:30:12 UTC`` (to the second) from an ISO timestamp."""
    return (iso or "?")[:19].replace("T", " ") + (" UTC" if iso else "")


def history_banner(history: dict[str, Any]) -> str:
    """One line saying which recorded version this is and how sure that is."""
    from rich.markup import escape

    recorded = _when(history["recorded_at"])
    seen = _when(history["last_seen_at"])
    if history["match"] == "earliest_after":
        return (
            f"[bold yellow]not recorded then:[/] {escape(history['note'] or '')}\n"
            f"[yellow]showing v{history['version']}, first recorded {recorded}, "
            f"last seen {seen}[/]"
        )
    asked = f" in force at {_when(history['at'])}" if history.get("at") else ""
    return f"[bold]v{history['version']}[/]{asked}: first recorded {recorded}, last seen {seen}"


def show_history(
    directory: str | None,
    *,
    at: str | None,
    payload: bool,
    home: str | None,
    as_json: bool,
    limit: int | None,
) -> None:
    """``context [DIR] --at TIME`` or ``context [DIR] --history``."""
    from agentdex.api import context_history as api

    if at is not None:
        data = api.snapshot_at(directory, at, payload=payload, home=home)
        if as_json:
            emit_json(data)
            return
        from agentdex.cli.context import render

        render(data)
        return
    listing = api.versions(directory, limit=limit, home=home)
    if as_json:
        emit_json(listing)
        return
    render_versions(listing)


def render_versions(listing: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    out = console()
    if not listing["versions"]:
        out.print(f"no context history for {escape(listing['workspace'])}")
    else:
        table = Table(title=escape(listing["workspace"]), title_justify="left")
        for column in ("version", "first recorded", "last seen", "resources", "changes", "by"):
            table.add_column(column)
        for item in listing["versions"]:
            changes = item["changes"]
            delta = (
                "first"
                if changes is None
                else f"+{changes['added']} -{changes['removed']} ~{changes['changed']}"
            )
            table.add_row(
                f"v{item['version']}",
                _when(item["recorded_at"]),
                _when(item["last_seen_at"]),
                str(item["resource_count"]),
                delta,
                item["recorded_by"],
            )
        out.print(table)
        shown, total = len(listing["versions"]), listing["total"]
        if shown < total:
            out.print(f"[dim]{total - shown} older version(s) not shown[/]")
    if not listing["recording"]:
        out.print("[yellow]recording is off ([context] history = false)[/]")


def _label(resource: dict[str, Any]) -> str:
    return f"{resource['kind']} {resource['source']}"


def render_diff(data: dict[str, Any]) -> None:
    from rich.markup import escape

    out = console()
    old, new = data["from"], data["to"]
    out.print(
        f"[bold]{escape(data['workspace'])}[/]: v{old['version']} "
        f"({_when(old['recorded_at'])}) -> v{new['version']} ({_when(new['recorded_at'])})",
        soft_wrap=True,
    )
    if data["identical"]:
        out.print("no changes")
        return
    for resource in data["added"]:
        out.print(f"[green]+ added[/]   {escape(_label(resource))}", soft_wrap=True)
    for resource in data["removed"]:
        out.print(f"[red]- removed[/] {escape(_label(resource))}", soft_wrap=True)
    for change in data["changed"]:
        fields = ", ".join(change["fields"])
        out.print(
            f"[yellow]~ changed[/] {escape(_label(change))}  [dim]({escape(fields)})[/]",
            soft_wrap=True,
        )
        if change["diff_note"]:
            out.print(f"  [dim]{escape(change['diff_note'])}[/]", soft_wrap=True)
        if change["diff"]:
            _print_unified(out, change["diff"])
    if data["error"]:
        out.print(
            f"[yellow]snapshot error:[/] {escape(str(data['error']['from']))} -> "
            f"{escape(str(data['error']['to']))}",
            soft_wrap=True,
        )


def _print_unified(out: Any, text: str) -> None:
    from rich.markup import escape

    colours = {"+": "green", "-": "red", "@": "cyan"}
    for line in text.splitlines():
        colour = colours.get(line[:1]) if not line.startswith(("+++", "---")) else "bold"
        shown = escape(line)
        out.print(f"[{colour}]{shown}[/]" if colour else shown, soft_wrap=True)


def render_conversation_context(context: dict[str, Any]) -> None:
    """The context block of ``show --context``: said plainly when it is not "then"."""
    from rich.markup import escape

    from agentdex.cli.context import render

    out = console()
    if context["snapshot"] is None:
        where = escape(context["workspace"] or "no workspace")
        out.print(f"[yellow]no context snapshot for {where}:[/] {escape(context['note'] or '')}")
        return
    render(context["snapshot"])
