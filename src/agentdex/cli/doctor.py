"""``agentdex doctor``: where agentdex looked for each store, what it found, and why not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from agentdex.cli._common import console, home_of, json_option, print_result

_STYLES = {
    "found": "green",
    "empty": "yellow",
    "not-found": "dim",
    "skipped": "yellow",
    "private": "dim",
}


@click.command("doctor")
@json_option
@click.option("--all", "show_all", is_flag=True, help="Also list every folder looked in.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool, show_all: bool) -> None:
    """Run this when a store you expected is missing.

    Shows the home, data dir, config file and this home's index; the WSL
    bridge; every environment override in force; and for each store of
    every agent whether it was found, is empty, skipped (why: opt-in,
    disabled in the config), private (never opened) or not found, with the
    folders looked in (all of them with --all) and unreadable files.
    """
    from agentdex.api.doctor import doctor as run

    data = run(home_of(ctx))
    print_result(as_json, data, _human, show_all)


def _human(data: dict[str, Any], show_all: bool) -> None:
    from rich.markup import escape

    from agentdex.cli._format import human_size, tilde

    out = console()
    home = data["home"]

    def path(value: str) -> str:
        return escape(tilde(value, home))

    config = data["config"]
    if config["error"]:
        config_state = f"[red]invalid[/]: {escape(config['error'])}"
    elif config["exists"]:
        config_state = "[green]read[/]"
    else:
        config_state = "[dim]none (defaults)[/]"
    index = data["index"]
    if index.get("generation"):
        index_state = f"{index.get('records', 0)} records, {human_size(index.get('bytes'))}"
    else:
        index_state = "[dim]not built yet (agentdex index, or any search)[/]"
    sem = data["semantic"]
    if sem.get("problem"):
        sem_state = f"[red]off:[/] {escape(sem['problem'])}"
    elif sem.get("eligible"):
        from agentdex.cli.index import semantic_line

        sem_state = escape(semantic_line(sem).removeprefix("Embeddings: "))
        if not sem.get("embedded"):
            sem_state += "  [dim](agentdex index --semantic)[/]"
    else:
        sem_state = "[dim]nothing to embed yet[/]"
    embedder = _embedder_state(data["embedder"], path)
    searcher = _searcher_state(data["searcher"], path)
    wsl = data["wsl"]
    wsl_state = "on" if wsl["enabled"] else "off"
    if wsl["forced"] is not None:
        wsl_state += f" (AGENTDEX_WSL={wsl['forced']})"
    if wsl["enabled"]:
        exists = "" if wsl["users_root_exists"] else " [red](missing)[/]"
        wsl_state += f", Windows users in {path(wsl['users_root'])}{exists}"
    for label, value in (
        ("home", f"{escape(home)}  [dim](from {data['home_from']})[/]"),
        ("data dir", path(data["data_dir"])),
        ("config", f"{path(config['path'])}  {config_state}"),
        ("index", f"{path(index['path'])}  {index_state}"),
        ("embeddings", sem_state),
        ("embedder", embedder),
        ("searcher", searcher),
        ("WSL bridge", wsl_state),
    ):
        out.print(f"[bold]{label:<11}[/]{value}", soft_wrap=True)
    out.print("[bold]environment[/]" + ("" if data["environment"] else "  [dim]no overrides[/]"))
    for var in data["environment"]:
        out.print(
            f"  {var['name']}={escape(var['value'])}  [dim]{escape(var['purpose'])}[/]",
            soft_wrap=True,
        )
    if data["plugins"]:
        out.print("[bold]plug-ins[/]")
    for plugin in data["plugins"]:
        state = "[green]loaded[/]" if plugin["error"] is None else "[red]left out[/]"
        dist = f" [dim]({escape(plugin['distribution'])})[/]" if plugin["distribution"] else ""
        out.print(f"  {state} {escape(plugin['entry_point'])}{dist}", soft_wrap=True)
    for warning in data["warnings"]:
        out.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
    out.print("[bold]stores[/]")
    plugged = {p["agent"]: p["distribution"] for p in data["plugins"] if p["error"] is None}
    agent = ""
    for store in data["stores"]:
        if store["agent"] != agent:
            agent = store["agent"]
            via = f" [dim](plug-in {escape(plugged[agent])})[/]" if agent in plugged else ""
            out.print(f"  [bold]{agent}[/]{via}")
        name = store["store"].removeprefix(agent + ".")
        style = _STYLES.get(store["status"], "white")
        out.print(
            f"    [{style}]{store['status']:<9}[/] {name:<22} "
            f"{escape(store['reason'].replace(home.rstrip('/') + '/', '~/'))}",
            soft_wrap=True,
        )
        if store.get("note"):
            out.print(f"              [dim]{escape(store['note'])}[/]", soft_wrap=True)
        looked = store["looked_in"]
        if store["status"] == "not-found" or show_all:
            for place in looked:
                mark = "exists" if place["exists"] else "missing"
                out.print(
                    f"        [dim]looked in {path(place['path'])} ({mark})[/]", soft_wrap=True
                )
        for bad in store["unreadable"]:
            out.print(f"        [red]unreadable:[/] {path(bad)}", soft_wrap=True)
    totals = data["totals"]
    out.print(
        f"{totals['found']} stores found, {totals['empty']} empty, {totals['not-found']} not "
        f"found, {totals['skipped']} skipped, {totals['private']} private (never opened)"
    )


def _idle(info: dict[str, Any]) -> str:
    minutes = info.get("idle_exit_seconds", 0) / 60
    return f"{minutes:.0f} min" if minutes >= 1 else f"{minutes * 60:.0f} s"


def _searcher_state(info: dict[str, Any], path: Callable[[str], str]) -> str:
    """``resident, pid 123, 60 MB, 4 searches; exits after 10 min idle`` (or why not)."""
    if info.get("running"):
        rss = f", {info['rss_mb']:.0f} MB" if info.get("rss_mb") is not None else ""
        state = f"resident, pid {info.get('pid')}{rss}, {info.get('requests', 0)} searches"
        return f"{state}; exits after {_idle(info)} idle  [dim]{path(info['socket'])}[/]"
    if not info.get("enabled"):
        return "[dim]off (AGENTDEX_RESIDENT_SEARCH=0): each search runs in its own process[/]"
    return f"[dim]not running (the next search starts it; it exits after {_idle(info)} idle)[/]"


def _embedder_state(info: dict[str, Any], path: Callable[[str], str]) -> str:
    """``resident, pid 123, 290 MB, 4 queries; exits after 10 min idle`` (or why not)."""
    from rich.markup import escape

    idle = _idle(info)
    if info.get("running"):
        rss = f", {info['rss_mb']:.0f} MB" if info.get("rss_mb") is not None else ""
        state = f"resident, pid {info.get('pid')}{rss}, {info.get('requests', 0)} queries"
        if info.get("error"):
            return f"[red]resident, failing:[/] {escape(info['error'])}"
        return f"{state}; exits after {idle} idle  [dim]{path(info['socket'])}[/]"
    if not info.get("enabled"):
        return "[dim]off (AGENTDEX_RESIDENT_EMBEDDER=0): each search loads the model itself[/]"
    return f"[dim]not running (a search by meaning starts it; it exits after {idle} idle)[/]"
