"""``agentdex search``: search every agent's history (a thin shell over agentdex.api.search)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from agentdex.cli._common import emit_json, emit_ndjson, home_of, json_option
from agentdex.config import MAX_TIME_BUDGET
from agentdex.errors import EXIT_PARTIAL

HELP = """Search every agent's history.

\b
Query language (exact substrings, grep semantics):
  retry backoff          both words (AND), anywhere in a message
  "exact phrase"         a phrase, spaces included
  -word   NOT word       exclude
  a OR b                 either;  ( ) groups:  (a OR b) c
  field:value            filters (value quoted when it has spaces):
    agent:codex          exact agent id        role:user   kind:prompt
    session:ID           session id prefix     model:opus  branch:feat  host:wsl
    project:/abs/path    path prefix (or a substring when not absolute);
    cwd:  worktree:  path:   likewise (path: is the store file)
    since:7d until:2026-01-31   ISO dates, 30m/12h/7d/2w/1y, today, yesterday (UTC)
\b
Case is smart: all-lowercase terms ignore case, any capital makes the search
case-sensitive (-i / -s force it). -w matches whole words; -E treats each
term as a Python regex. Unknown fields or malformed queries exit with status 2.
Each result has a reference (SESSION@LOCATOR) that `agentdex show` opens.
With many matches the first page does not wait for all of them: the total
is then a lower bound (--exact-count counts every match). A search stops at
its time budget (--time-budget, default [search] time_budget in config.toml,
else 5 s), prints what it found so far and exits with status 7. See
docs/query-language.md and docs/search.md.
"""


def _print_plain(data: dict[str, Any]) -> None:
    from agentdex.cli._format import relative_time

    for item in data["results"]:
        where = item["project"] or item["cwd"] or "-"
        branch = f" ({item['branch']})" if item["branch"] else ""
        gone = "  [source gone]" if item.get("source_gone") else ""
        click.echo(
            f"{item['agent']}  {where}{branch}  {relative_time(item['timestamp'])}"
            f"  {item['role']}/{item['kind']}  {item['ref']}{gone}"
        )
        click.echo(f"    {item['snippet']}")


def _print_rich(data: dict[str, Any], highlights: list[list[tuple[int, int]]]) -> None:
    from rich.text import Text

    from agentdex.cli._common import console
    from agentdex.cli._format import relative_time

    out = console()
    for item, spans in zip(data["results"], highlights, strict=False):
        head = Text()
        head.append(item["agent"], style="bold cyan")
        head.append("  ")
        head.append(item["worktree"] or item["project"] or item["cwd"] or "-", style="green")
        if item["branch"]:
            head.append(f" ({item['branch']})", style="magenta")
        head.append(f"  {relative_time(item['timestamp'])}", style="dim")
        head.append(f"  {item['role']}/{item['kind']}", style="yellow")
        if item.get("source_gone"):
            head.append("  source gone (archived)", style="red")
        out.print(head)
        snippet = Text("    " + item["snippet"])
        for start, end in spans:
            snippet.stylize("bold red", start + 4, end + 4)
        out.print(snippet)
        out.print(Text(f"    {item['ref']}", style="dim"))


@click.command("search", help=HELP)
@click.argument("query", nargs=-1, required=True)
@json_option
@click.option("--ndjson", is_flag=True, help="One JSON object per result, per line.")
@click.option("-n", "--limit", type=int, default=20, show_default=True, help="Most results shown.")
@click.option(
    "--sort", type=click.Choice(["relevance", "time"]), default="relevance", show_default=True
)
@click.option("-E", "--regex", is_flag=True, help="Terms are regular expressions.")
@click.option("-w", "--word", is_flag=True, help="Match whole words only.")
@click.option("-i", "--ignore-case", is_flag=True, help="Ignore case.")
@click.option("-s", "--case-sensitive", is_flag=True, help="Match case exactly.")
@click.option("--no-refresh", is_flag=True, help="Search the index as it is (no refresh).")
@click.option("--here", is_flag=True, help="Rank results from this project/worktree first.")
@click.option("--only-here", is_flag=True, help="Only results from this project/worktree.")
@click.option("--no-dedup", is_flag=True, help="Keep repeated identical messages.")
@click.option(
    "--exact-count",
    is_flag=True,
    help="Count every match (slower); by default a big total is a lower bound.",
)
@click.option(
    "--time-budget",
    type=click.FloatRange(0, MAX_TIME_BUDGET, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Stop after this long with the results so far (exit 7). [default: 5, or config]",
)
@click.pass_context
def search(
    ctx: click.Context,
    query: tuple[str, ...],
    as_json: bool,
    ndjson: bool,
    limit: int,
    sort: str,
    regex: bool,
    word: bool,
    ignore_case: bool,
    case_sensitive: bool,
    no_refresh: bool,
    here: bool,
    only_here: bool,
    no_dedup: bool,
    time_budget: float | None,
    exact_count: bool,
) -> None:
    from agentdex.api import search as api
    from agentdex.errors import UsageError

    if ignore_case and case_sensitive:
        raise UsageError("-i and -s contradict each other")
    case = "insensitive" if ignore_case else "sensitive" if case_sensitive else "smart"
    cwd = os.getcwd() if (here or only_here) else None
    show_progress = not (as_json or ndjson or no_refresh) and sys.stderr.isatty()
    with _progress(show_progress) as bar:
        result = api.search(
            " ".join(query),
            home=home_of(ctx),
            refresh_first=not no_refresh,
            regex=regex,
            word=word,
            case=case,
            limit=limit,
            sort=sort,
            here=cwd,
            only_here=only_here,
            dedup=not no_dedup,
            progress=bar,
            budget=None if time_budget is None else api.Budget(time_budget),
            exact_total=exact_count,
        )
    data = result.to_json()
    if as_json:
        emit_json(data)
    elif ndjson:
        for item in data["results"]:
            emit_ndjson(item)
    else:
        _human(result, data)
    if result.status == "partial":
        _stopped(data["stats"])


def _stopped(stats: dict[str, Any]) -> None:
    """One line on stderr, then exit 7: the results printed are not all there are."""
    if stats.get("stopped") == "cancelled":
        why = "search was cancelled"
    else:
        why = f"search stopped at its time budget of {stats.get('time_budget'):g} s"
    sys.stdout.flush()
    click.echo(
        f"agentdex: {why}; {stats.get('returned', 0)} result(s) so far "
        "(raise --time-budget or narrow the query)",
        err=True,
    )
    sys.exit(EXIT_PARTIAL)


def _progress(enabled: bool) -> Any:
    """The index command's progress bar on a terminal; a no-op context otherwise."""
    if enabled:
        from agentdex.cli.index import _ProgressBar

        return _ProgressBar()
    from contextlib import nullcontext

    return nullcontext(None)


def _human(result: Any, data: dict[str, Any]) -> None:
    for warning in data["stats"].get("warnings", []):
        click.echo(f"agentdex: {warning}", err=True)
    for note in data["stats"].get("notes", []):
        click.echo(f"agentdex: note: {note}", err=True)
    if result.status == "no-index":
        click.echo("agentdex: nothing indexed yet (run `agentdex index`)", err=True)
        return
    if not data["results"]:
        click.echo("No results.", err=True)
        return
    if sys.stdout.isatty():
        _print_rich(data, result.highlights)
    else:
        _print_plain(data)
    stats = data["stats"]
    if not stats.get("total_exact", True):
        click.echo(
            f"({stats['returned']} of at least {stats['total']} results;"
            " --exact-count counts them all, --limit shows more)",
            err=True,
        )
    elif stats["total"] > stats["returned"]:
        click.echo(f"({stats['returned']} of {stats['total']} results; --limit for more)", err=True)
