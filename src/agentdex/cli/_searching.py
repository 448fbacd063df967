"""``agentdex search``'s work: run the search, print its results (click-free).

:mod:`agentdex.cli.search` declares the command's options for click; a fresh
``agentdex search`` whose command line :func:`agentdex.cli._argv.search_call`
reads runs :func:`run` without importing click (:mod:`agentdex.cli._fast`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from agentdex.cli._emit import emit_json, emit_ndjson, one_format, say
from agentdex.errors import EXIT_PARTIAL, UsageError


def run(
    query: tuple[str, ...],
    *,
    home: str | None,
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
) -> int:
    """Run ``agentdex search`` with its options as click gives them (``home``: the group's
    ``--home``); prints the results and returns the exit status (0 found, 1 none). A
    usage error raises :class:`UsageError`; a partial answer exits 7 (:func:`_stopped`)."""
    from agentdex.cli._format import pinned_now

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
        from agentdex.api import search_resident
        from agentdex.cli import _exit

        _exit.allow()  # nothing of a local search needs the interpreter's teardown
        # the resident searcher answers when it can (api/search_resident.py), else this process
        result = search_resident.search(
            " ".join(query),
            refresh_first=not no_refresh,
            seconds=time_budget,
            mode=mode,
            home=home,
            here=cwd,
            only_here=only_here,
            render="json" if as_json else "ndjson" if ndjson else None,
            **options,
        )
        if isinstance(result, search_resident.Printed):  # the resident printed it as below
            sys.stdout.buffer.write(result.output)
            sys.stdout.flush()
            if result.status == "partial":
                _stopped(result.stats, result.coverage)
            return 0 if result.found else 1
        if isinstance(result, search_resident.Fallback):
            result = _search_here(
                query,
                home,
                no_refresh,
                cwd,
                only_here,
                mode,
                result.known,
                show_progress,
                time_budget,
                options,
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
            _human(result, data, str(home_dir(home)))
        _footer(data["stats"])  # after the results, even when they were paged
    if not team:
        from agentdex.api.search_resident import start_after

        start_after()  # none answered this search: one answers the next (after this output)
    if result.status == "partial":
        _stopped(data["stats"], data.get("coverage"))
    return 0 if data["results"] else 1  # like grep: nothing found is status 1


def _search_here(
    query: tuple[str, ...],
    home: str | None,
    no_refresh: bool,
    cwd: str | None,
    only_here: bool,
    mode: str,
    known: Any,
    show_progress: bool,
    time_budget: float | None,
    options: dict[str, Any],
) -> Any:
    """The search in this process (no resident answered): refreshed first unless
    ``no_refresh`` (``known``: the store files the resident's client found changed)."""
    from agentdex.api import search as api
    from agentdex.api.semantic import use_resident_embedder

    budget = None if time_budget is None else api.Budget(time_budget)
    use_resident_embedder()  # a fresh process: the model stays loaded between searches
    with _progress(show_progress) as bar:
        return api.search(
            " ".join(query),
            home=home,
            refresh_first=not no_refresh,
            here=cwd,
            only_here=only_here,
            progress=bar,
            mode=mode,
            budget=budget,
            known_changes=known,
            **options,
        )


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

    from agentdex.cli._format import relative_time, tilde, time_mark
    from agentdex.cli._output import console

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


def _footer(stats: dict[str, Any]) -> None:
    """How many results were left out (a lower bound when the search stopped counting)."""
    if not stats.get("total_exact", True):
        say(
            f"({stats['returned']} of at least {stats['total']} results;"
            " --exact-count counts them all, -n shows more)"
        )
    elif stats.get("total", 0) > stats.get("returned", 0):
        say(f"({stats['returned']} of {stats['total']} results; -n for more)")


def _stopped(stats: dict[str, Any], coverage: dict[str, Any] | None = None) -> None:
    """One line on stderr, then exit 7: the results printed are not all there are."""
    sys.stdout.flush()
    if stats.get("stopped") == "cancelled":
        why = "search was cancelled"
    elif stats.get("stopped"):
        why = f"search stopped at its time budget of {stats.get('time_budget'):g} s"
    else:
        say(f"agentdex: {_building_line(stats, coverage or {})}")
        sys.exit(EXIT_PARTIAL)
    say(
        f"agentdex: {why}; {stats.get('returned', 0)} result(s) so far "
        "(raise --time-budget or narrow the query)"
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
        say(f"agentdex: {warning}")
    for note in data["stats"].get("notes", []):
        say(f"agentdex: note: {note}")
    if result.status == "no-index":
        say("agentdex: nothing indexed yet (run `agentdex index`)")
        return
    if not data["results"]:
        say("No results.")
        return
    from agentdex.cli._output import is_terminal

    if is_terminal():
        _print_rich(data, result.highlights, home)
    else:
        _print_rows(data, result.highlights)
