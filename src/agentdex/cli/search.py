"""``agentdex search``: search every agent's history (a thin shell over agentdex.api.search)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from agentdex.cli._common import (
    QueryCommand,
    emit_json,
    emit_ndjson,
    home_of,
    json_option,
    ndjson_option,
    one_format,
)
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
term as a Python regex. Options may come anywhere; a dash word that is not
an option (-backoff) is an exclusion (write NOT is for a word like -is).
With many matches the first page does not wait for all of them: the total
is then a lower bound (--exact-count counts every match). A search stops at
its time budget (--time-budget, default [search] time_budget in config.toml,
else 5 s), prints what it found so far and exits with status 7.
\b
Search by meaning: when `agentdex index --semantic` has embedded the history,
a search is hybrid: exact matches and messages close in meaning to the query,
fused (an exact phrase still ranks its conversation first). --lexical or
--semantic choose one. Each result says why it matched (the terms, or the
similarity).
\b
Exit status: 0 results found, 1 none (like grep), 2 a malformed query,
7 stopped at the time budget (the results so far are printed).
On a terminal each result shows its reference (SESSION@LOCATOR), which
`agentdex show` opens; in a pipe each result is one tab-separated line
starting with it. --team searches the team database instead (every machine's
pushed history; each result names its machine, and in a pipe the machine follows
the reference): docs/team.md. See docs/query-language.md and docs/search.md.
"""


def _where(item: dict[str, Any]) -> str:
    return item["worktree"] or item["project"] or item["cwd"] or "-"


def _print_rows(data: dict[str, Any], highlights: list[list[tuple[int, int]]]) -> None:
    """Off a terminal: one tab-separated line per result, nothing cut or wrapped.

    ``ref, agent, where, branch, timestamp, role/kind, snippet``: ``cut -f1``
    gives references ``agentdex show`` opens.
    """
    from agentdex.cli._output import emit_row

    for item, _spans in zip(data["results"], highlights, strict=False):
        machine = [(item["machine"], "bold blue")] if "machine" in item else []
        emit_row(
            [
                (item.get("short_ref") or item["ref"], "dim"),
                *machine,
                (item["agent"], "bold cyan"),
                (_where(item), "green"),
                (item["branch"] or "-", "magenta"),
                (item["timestamp"] or "-", "dim"),
                (f"{item['role']}/{item['kind']}", "yellow"),
                (item["snippet"], ""),
            ]
        )


def why_text(why: dict[str, Any] | None) -> str:
    """``why`` in a few words: ``meaning 0.62``, ``meaning 0.62 (title)`` (found by its
    conversation's title), or ``exact: retry + meaning 0.62``.

    An exact match alone says nothing here: its terms are highlighted in the
    snippet already (and ``why`` is in the JSON)."""
    if not why or why.get("match") == "exact":
        return ""
    parts = []
    if why.get("terms") and why.get("match") != "semantic":
        parts.append("exact: " + ", ".join(why["terms"][:4]))
    if why.get("similarity") is not None:
        parts.append(f"meaning {why['similarity']:.2f}")
        if why.get("title"):
            parts[-1] += " (title)"  # the conversation's title matched, not this message
    return " + ".join(parts)


def _print_rich(data: dict[str, Any], highlights: list[list[tuple[int, int]]], home: str) -> None:
    """On a terminal: a heading per result (never wrapped), the snippet, the reference."""
    from rich.padding import Padding
    from rich.text import Text

    from agentdex.cli._common import console
    from agentdex.cli._format import relative_time, tilde, time_mark

    out = console()
    approximate = False
    for item, spans in zip(data["results"], highlights, strict=False):
        head = Text(no_wrap=True, overflow="ellipsis")
        if "machine" in item:
            head.append(f"{item['machine']}  ", style="bold blue")
        head.append(item["agent"], style="bold cyan")
        mark = time_mark(item["store"])
        approximate = approximate or bool(mark)
        head.append(f"  {mark}{relative_time(item['timestamp'])}", style="dim")
        head.append(f"  {item['role']}/{item['kind']}", style="yellow")
        head.append("  ")
        head.append(tilde(_where(item), home), style="green")
        if item["branch"]:
            head.append(f" ({item['branch']})", style="magenta")
        if item.get("source_gone"):
            head.append("  source gone (archived)", style="red")
        why = why_text(item.get("why"))
        if why:
            head.append(f"  {why}", style="blue")
        out.print(head)
        snippet = Text(item["snippet"])
        for start, end in spans:
            snippet.stylize("bold red", start, end)
        title = (item.get("why") or {}).get("title")
        if title:  # found by its conversation's title: say which (the snippet need not)
            snippet = Text.assemble(
                ("title ", "dim"), (f"“{title}”", "bold"), (" · ", "dim"), snippet
            )
        out.print(Padding(snippet, (0, 0, 0, 4)))
        ref = item.get("short_ref") or item["ref"]
        out.print(Text(f"    {ref}", style="dim", no_wrap=True, overflow="ellipsis"))
    if approximate:
        from agentdex.cli.conversations import MTIME_NOTE

        out.print(Text(MTIME_NOTE, style="dim"))


@click.command("search", help=HELP, cls=QueryCommand)
@click.argument("query", nargs=-1, required=True)
@json_option
@ndjson_option
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
@click.option("--lexical", is_flag=True, help="Exact matches only (no search by meaning).")
@click.option("--semantic", is_flag=True, help="By meaning only (needs `index --semantic`).")
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
@click.option(
    "--team",
    is_flag=True,
    help="Search the team database (every machine's pushes) instead of this machine's index.",
)
@click.option("--url", default=None, help="Team database URL (with --team; else the config's).")
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
    lexical: bool,
    semantic: bool,
    time_budget: float | None,
    exact_count: bool,
    team: bool,
    url: str | None,
) -> None:
    from agentdex.cli._format import pinned_now
    from agentdex.errors import UsageError

    one_format(as_json, ndjson)
    if ignore_case and case_sensitive:
        raise UsageError("-i and -s contradict each other")
    if lexical and semantic:
        raise UsageError("--lexical and --semantic contradict each other")
    mode = "lexical" if lexical else "semantic" if semantic else "hybrid"
    case = "insensitive" if ignore_case else "sensitive" if case_sensitive else "smart"
    cwd = os.getcwd() if (here or only_here) else None
    show_progress = not (as_json or ndjson or no_refresh or team) and sys.stderr.isatty()
    if url is not None and not team:
        raise UsageError("--url is for the team database: add --team")
    if team and (here or only_here):
        raise UsageError("--here and --only-here search this machine's places: not with --team")
    if team and semantic:
        raise UsageError("--semantic searches this machine's embeddings: not with --team")
    options: dict[str, Any] = {
        "regex": regex,
        "word": word,
        "case": case,
        "limit": limit,
        "sort": sort,
        "dedup": not no_dedup,
        "now": pinned_now(),
        "exact_total": exact_count,
    }
    result: Any
    if team:
        from agentdex.api.team_resident import team_search

        result = team_search(" ".join(query), url=url, time_budget=time_budget, **options)
    else:
        from agentdex.api import search as api
        from agentdex.api.semantic import use_resident_embedder
        from agentdex.cli import _exit

        _exit.allow()  # nothing of a local search needs the interpreter's teardown

        options["budget"] = None if time_budget is None else api.Budget(time_budget)

        use_resident_embedder()  # a fresh process: the model stays loaded between searches
        with _progress(show_progress) as bar:
            result = api.search(
                " ".join(query),
                home=home_of(ctx),
                refresh_first=not no_refresh,
                here=cwd,
                only_here=only_here,
                progress=bar,
                mode=mode,
                **options,
            )
    data = result.to_json()
    if as_json:
        emit_json(data)
    elif ndjson:
        for item in data["results"]:
            emit_ndjson(item)
    else:
        from agentdex.cli._output import paged
        from agentdex.paths import home_dir

        with paged():
            _human(result, data, str(home_dir(home_of(ctx))))
        _footer(data["stats"])  # after the results, even when they were paged
    if result.status == "partial":
        _stopped(data["stats"], data.get("coverage"))
    if not data["results"]:
        ctx.exit(1)  # like grep: nothing found is status 1


def _footer(stats: dict[str, Any]) -> None:
    """How many results were left out (a lower bound when the search stopped counting)."""
    if not stats.get("total_exact", True):
        click.echo(
            f"({stats['returned']} of at least {stats['total']} results;"
            " --exact-count counts them all, -n shows more)",
            err=True,
        )
    elif stats.get("total", 0) > stats.get("returned", 0):
        click.echo(f"({stats['returned']} of {stats['total']} results; -n for more)", err=True)


def _stopped(stats: dict[str, Any], coverage: dict[str, Any] | None = None) -> None:
    """One line on stderr, then exit 7: the results printed are not all there are."""
    sys.stdout.flush()
    if stats.get("stopped") == "cancelled":
        why = "search was cancelled"
    elif stats.get("stopped"):
        why = f"search stopped at its time budget of {stats.get('time_budget'):g} s"
    else:
        click.echo(f"agentdex: {_building_line(stats, coverage or {})}", err=True)
        sys.exit(EXIT_PARTIAL)
    click.echo(
        f"agentdex: {why}; {stats.get('returned', 0)} result(s) so far "
        "(raise --time-budget or narrow the query)",
        err=True,
    )
    sys.exit(EXIT_PARTIAL)


def _building_line(
    stats: dict[str, Any],
    coverage: dict[str, Any],
    found: str = "searched",
    again: str = "run the search again for complete results",
) -> str:
    """What a command reading an index still being built covered, and what happens next:
    ``found`` names what it did with the newest share of the history, ``again`` the advice."""
    from datetime import datetime

    share = f"{coverage.get('fraction', 0.0):.0%}"
    back_to = coverage.get("back_to")
    since = ""
    if back_to:
        since = f", back to {datetime.fromtimestamp(back_to).strftime('%Y-%m-%d %H:%M')}"
    refresh = stats.get("refresh")
    if isinstance(refresh, dict) and refresh.get("background_pid"):
        who = "it goes on building in the background"
    elif isinstance(refresh, str) and refresh.startswith("skipped"):
        who = "another agentdex process is building it"
    else:
        who = "the next search or `agentdex index` goes on building it"
    return (
        f"the index is still being built: {found} the newest {share} of the history{since};"
        f" {who}; {again}"
    )


def _progress(enabled: bool) -> Any:
    """The index command's progress bar on a terminal; a no-op context otherwise."""
    if enabled:
        from agentdex.cli.index import _ProgressBar

        return _ProgressBar()
    from contextlib import nullcontext

    return nullcontext(None)


def _human(result: Any, data: dict[str, Any], home: str) -> None:
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
    from agentdex.cli._output import is_terminal

    if is_terminal():
        _print_rich(data, result.highlights, home)
    else:
        _print_rows(data, result.highlights)
