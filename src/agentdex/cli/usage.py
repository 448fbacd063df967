"""``agentdex usage``: tokens and cost per day, week, month, agent, model, project, branch or
conversation (``docs/usage.md``)."""

from __future__ import annotations

from typing import Any

import click

from agentdex.cli._common import emit_json, home_of, json_option
from agentdex.cli._table import Column

BY = ("day", "week", "month", "agent", "model", "project", "branch", "session")
#: the count columns shown, after the key: (header, field)
NUMBERS = (
    ("calls", "calls"),
    ("input", "input_tokens"),
    ("cache read", "cache_read_tokens"),
    ("cache write", "cache_write_tokens"),
    ("output", "output_tokens"),
    ("total", "total_tokens"),
)
UNPRICED_MARK = "*"
#: columns that give way first on a narrow terminal
DROPPABLE = ("calls", "cache write")
#: rows a table of ``--by session`` shows unless ``-n`` says (the largest first)
SESSION_ROWS = 50


@click.command("usage")
@click.option(
    "--by",
    type=click.Choice(BY),
    default="day",
    show_default=True,
    help="One row per day, week (from Monday), month, agent, model, project, branch or session.",
)
@click.option("--since", metavar="YYYY-MM-DD", help="From this local day on (inclusive).")
@click.option("--until", metavar="YYYY-MM-DD", help="Up to this local day (inclusive).")
@click.option("--agent", metavar="AGENT", help="Only this agent's calls (e.g. claude-code).")
@click.option(
    "--prices",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Price table to use instead of the shipped one (JSON, see docs/usage.md).",
)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    help="Show this many rows: the largest (of a day, week or month view, the latest)."
    f" Default: all, {SESSION_ROWS} with --by session (--json: all unless given)."
    " The totals are always every row's.",
)
@json_option
@click.option("--no-refresh", is_flag=True, help="Read the index as it is (no refresh).")
@click.pass_context
def usage(
    ctx: click.Context,
    by: str,
    since: str | None,
    until: str | None,
    agent: str | None,
    prices: str | None,
    limit: int | None,
    as_json: bool,
    no_refresh: bool,
) -> None:
    """Tokens and cost of every model call the agents recorded.

    Rows and a totals row; every view of the same calls adds up to the same
    totals. Input is fresh input only; cache reads and writes are their own
    columns; output includes reasoning. Cost is priced offline from the
    shipped table (or --prices); a model without a price has no cost and
    is listed as unpriced (a row with such calls shows the priced part, marked
    *). Days are local days. A table of conversations (--by session) shows the
    largest 50 unless -n says; --json has every row unless -n is given.
    """
    from agentdex.api.usage import usage as api_usage

    if limit is None and by == "session" and not as_json:
        limit = SESSION_ROWS
    result = api_usage(
        by,
        since=since,
        until=until,
        agent=agent,
        prices=prices,
        home=home_of(ctx),
        refresh_first=not no_refresh,
        limit=limit,
    )
    if as_json:
        emit_json(result)
    elif result["status"] == "no-index" or not result["rows"]:
        click.echo("No model calls with token usage.", err=True)
    else:
        from agentdex.cli._output import paged

        with paged():
            _human(result, home_of(ctx))
        _footer(result)
    if result["status"] == "partial":
        _partial(result)


def _footer(result: dict[str, Any]) -> None:
    """How many rows were left out, as ``conversations`` says it (stderr, after the table)."""
    total, returned = result["stats"].get("total", 0), result["stats"].get("returned", 0)
    if total > returned:
        what = "conversations" if result["by"] == "session" else "rows"
        click.echo(
            f"({returned:,} of {total:,} {what}; -n for more; the total row counts all {total:,})",
            err=True,
        )


def _partial(result: dict[str, Any]) -> None:
    """One line on stderr, then exit 7: the index is still being built."""
    import sys

    from agentdex.errors import EXIT_PARTIAL

    sys.stdout.flush()
    share = f"{result.get('coverage', {}).get('fraction', 0.0):.0%}"
    refresh = result["stats"].get("refresh")
    if isinstance(refresh, dict) and refresh.get("background_pid"):
        who = "it goes on building in the background"
    else:
        who = "the next command or `agentdex index` goes on building it"
    click.echo(
        f"agentdex: the index is still being built: these are the calls of the newest {share}"
        f" of the history; {who}; run `agentdex usage` again for complete totals",
        err=True,
    )
    sys.exit(EXIT_PARTIAL)


def _key(by: str, row: dict[str, Any], base: str) -> str:
    from agentdex.cli._format import tilde

    if by == "session":
        title = " ".join((row.get("title") or "").split())
        return f"{row['agent']} {row['session_id'][:8]} {title}".rstrip()
    if by == "branch":
        project = tilde(row["project"], base) if row["project"] else "-"
        return f"{project} @ {row['branch'] or '-'}"
    if by == "project":
        return tilde(row["project"], base) if row["project"] else "-"
    value = row.get(by)
    if value is None:
        return "(no time)" if by in ("day", "week", "month") else "(unknown)"
    return str(value)


def _cost(row: dict[str, Any]) -> str:
    if row["cost_usd"] is not None:
        return f"${row['cost_usd']:,.2f}"
    if row["priced_cost_usd"]:
        return f"${row['priced_cost_usd']:,.2f}{UNPRICED_MARK}"
    return "unpriced"


def _number(value: int, compact: bool) -> str:
    """``35,394,107``, or with ``compact`` ``35.4M`` (three significant digits)."""
    if not compact or value < 10_000:
        return f"{value:,}"
    for unit, size in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= size:
            scaled = value / size
            return f"{scaled:.3g}{unit}" if scaled < 1000 else f"{scaled:,.0f}{unit}"
    return str(value)


def compact_number(value: int) -> str:
    """``35.4M``: a count in three significant digits (``9,876`` below 10,000)."""
    return _number(value, True)


def _table(keys: list[str], rows: list[dict[str, Any]], *, compact: bool) -> list[tuple[str, ...]]:
    return [
        (key, *(_number(row[f], compact) for _, f in NUMBERS), _cost(row))
        for key, row in zip(keys, rows, strict=True)
    ]


def _natural(table: list[tuple[str, ...]], i: int) -> int:
    return max([len(NUMBERS[i - 1][0]) if i <= len(NUMBERS) else 4, *(len(r[i]) for r in table)])


def _min_width(table: list[tuple[str, ...]], key: int) -> int:
    """The narrowest line with every number whole, the key ``key`` wide, droppable columns
    gone."""
    numbers = sum(
        _natural(table, i + 1) + 2 for i, (h, _) in enumerate(NUMBERS) if h not in DROPPABLE
    )
    return key + numbers + 2 + _natural(table, len(NUMBERS) + 1)


def _human(result: dict[str, Any], home: str | None) -> None:
    import sys

    from agentdex.cli._output import current, emit_row, terminal_safe
    from agentdex.cli._table import layout, sgr_line
    from agentdex.paths import home_dir

    by = result["by"]
    base = str(home_dir(home))
    settings = current()
    rows = [*result["rows"], {**result["totals"], "_total": True}]
    if not settings.terminal:
        for row in rows:
            key = "total" if row.get("_total") else _key(by, row, base)
            cost = "" if row["cost_usd"] is None else f"{row['cost_usd']:.6f}"
            emit_row([(key, ""), *((str(row[f]), "") for _, f in NUMBERS), (cost, "")])
        return
    keys = ["total" if row.get("_total") else _key(by, row, base) for row in rows]
    table = _table(keys, rows, compact=False)
    readable = 28 if by in ("session", "project", "branch") else 10
    if settings.width is not None and _min_width(table, readable) > settings.width:
        table = _table(keys, rows, compact=True)  # 35,394,107 -> 35.4M: numbers are never cut
    columns = (
        Column(by, floor=10, flex=True, cut="start" if by in ("project", "branch") else "end"),
        *(
            Column(h, floor=_natural(table, i + 1), right=True, droppable=h in DROPPABLE)
            for i, (h, _) in enumerate(NUMBERS)
        ),
        Column("cost", floor=_natural(table, len(NUMBERS) + 1), right=True, style="bold"),
    )
    lines = layout(columns, table, settings.width)
    # the header dim, the totals row bold; written as Rich would, without importing it
    styles = ["dim", *([""] * (len(lines) - 2)), "bold"]
    out = [
        sgr_line(line, style, color=settings.color)
        for line, style in zip(lines, styles, strict=True)
    ]
    notes = []
    if result["unpriced"]:
        names = ", ".join(str(u["model"] or "(unknown model)") for u in result["unpriced"])
        calls = sum(u["calls"] for u in result["unpriced"])
        notes.append(
            f"{UNPRICED_MARK} unpriced: {calls:,} calls of {names} (no price known;"
            " cost shown is the priced part)"
        )
    prices = result["prices"]
    where = prices["file"] or f"shipped table of {prices['date']}"
    notes.append(f"prices: {where}; days in {result['timezone']}")
    out.extend(sgr_line([(terminal_safe(note), "")], "dim", color=settings.color) for note in notes)
    sys.stdout.write("\n".join(out) + "\n")
