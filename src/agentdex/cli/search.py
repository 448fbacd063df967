"""``agentdex search``: search every agent's history (a thin shell over agentdex.api.search).

The options are declared here for click; the work is in :mod:`agentdex.cli._searching`,
which a fresh search whose command line needs no click runs directly
(:mod:`agentdex.cli._fast`: :data:`agentdex.cli._argv.SEARCH_OPTIONS` must name the
same options as this command).
"""

from __future__ import annotations

import click

from agentdex.cli._common import QueryCommand, home_of, json_option, ndjson_option
from agentdex.cli._searching import _building_line as _building_line
from agentdex.cli._searching import _progress as _progress
from agentdex.cli._searching import run
from agentdex.cli._searching import why_text as why_text
from agentdex.config import MAX_TIME_BUDGET

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
    status = run(
        query,
        home=home_of(ctx),
        as_json=as_json,
        ndjson=ndjson,
        limit=limit,
        sort=sort,
        regex=regex,
        word=word,
        ignore_case=ignore_case,
        case_sensitive=case_sensitive,
        no_refresh=no_refresh,
        here=here,
        only_here=only_here,
        no_dedup=no_dedup,
        lexical=lexical,
        semantic=semantic,
        time_budget=time_budget,
        exact_count=exact_count,
        team=team,
        url=url,
    )
    if status:
        ctx.exit(status)
