"""A fresh ``agentdex search`` read without click (cli/_argv.search_call, cli/_fast.py).

The click command stays the definition: every command line here is read by
both, and they must agree on what the search gets, or the reader must leave
the line to click (help, every mistake: click's own messages and statuses).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import pytest

from agentdex.api import search as api
from agentdex.cli import _argv, _fast
from agentdex.cli import search as search_cli
from agentdex.cli._common import run_main
from agentdex.cli._group import cli
from agentdex.config import MAX_TIME_BUDGET
from test_index_fixtures import ROWS, register, store_dir, write_file

#: command lines click runs as a search; the reader must read each one as click does
RUN = [
    ["search", "retry"],
    ["search", "retry", "backoff", "-n", "5"],
    ["search", "-n5", "retry"],
    ["search", "-n", "-5", "retry"],
    ["search", "--limit=7", "--limit", "8", "retry"],
    ["search", "-iw", "-E", "a|b"],
    ["search", "-Ewis", "x"],
    ["search", "-backoff", "retry"],  # an exclusion, not -b -a -c...
    ["search", "-nothing", "retry"],  # an exclusion, not -n othing
    ["search", "-n=5", "retry"],
    ["search", "-in", "retry"],  # not a cluster of flags: a word
    ["search", "-hn", "retry"],
    ["search", "-V", "retry"],
    ["search", "-", "retry"],
    ["search", "-5", "retry"],
    ["search", "retry", "--", "--json", "-n", "3"],
    ["search", "--", "--", "x"],
    ["search", "--json", "--ndjson", "x"],
    ["--json", "search", "x"],
    ["search", "x", "--json"],
    ["search", "--sort", "time", "--sort=relevance", "x"],
    ["search", "--time-budget", "2.5", "x"],
    ["search", "--time-budget=3600", "x"],
    ["search", "--url", "--team", "x"],
    ["search", "--url=postgres://h/db", "--team", "x"],
    ["search", "x", "--url"],  # click takes the "--" before the words as the URL
    ["search", "--no-refresh", "--here", "--only-here", "--no-dedup", "x"],
    ["search", "--lexical", "--semantic", "--exact-count", "x"],
    ["search", "--no-pager", "x", "--color", "never"],
    ["--color=always", "--no-pager", "search", "x"],
    ["--home", "{home}", "search", "x"],
    ["search", "x", "--home={home}"],
    ["search", "--home", "{home}", "--", "x"],
]
#: command lines click does not run as a search (help, a mistake, another command)
NOT_RUN = [
    ["search"],
    ["search", "-n"],
    ["search", "-n", "five", "x"],
    ["search", "--limit=x", "x"],
    ["search", "--help"],
    ["search", "-h", "x"],
    ["search", "-ih", "x"],
    ["search", "--json=1", "x"],
    ["search", "--bogus", "x"],
    ["search", "--sort", "Time", "x"],
    ["search", "--time-budget", "0", "x"],
    ["search", "--time-budget", "3601", "x"],
    ["search", "--time-budget", "soon", "x"],
    ["search", "--url"],
    ["search", "x", "--sort"],
    ["search", "--color", "pink", "x"],
    ["--home", "{missing}", "search", "x"],
    ["--home", "{file}", "search", "x"],
    ["-V", "search", "x"],
    ["--help", "search", "x"],
    ["--bogus", "search", "x"],
    ["searches", "x"],
    ["index"],
]


def _lines(lines: list[list[str]], tmp_path: Path) -> list[list[str]]:
    places = {"home": tmp_path, "missing": tmp_path / "missing", "file": tmp_path / "a-file"}
    (tmp_path / "a-file").write_text("")
    return [[arg.format(**places) for arg in line] for line in lines]


def _click_reading(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any] | None, int | str | None]:
    """What click hands the search (None: it never ran it) and how click's run ended."""
    got: dict[str, Any] = {}

    def record(query: tuple[str, ...], **values: Any) -> int:
        got.update(values, query=query)
        return 0

    monkeypatch.setattr(search_cli, "run", record)
    try:
        status = run_main(cli, args)
    except SystemExit as exc:
        status = exc.code
    return (got or None), status


def _fast_reading(args: list[str]) -> dict[str, Any] | None:
    call = _argv.search_call(args)
    if call is None:
        return None
    group, values, _json_mode = call
    values = dict(values, home=group["home"])
    values["as_json"] = values["as_json"] or group["json"]
    return values


@pytest.mark.parametrize("index", range(len(RUN)))
def test_a_search_is_read_as_click_reads_it(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _lines(RUN, tmp_path)[index]
    by_click, _status = _click_reading(args, monkeypatch)
    assert by_click is not None, f"click did not run {args}"
    assert _fast_reading(args) == by_click


@pytest.mark.parametrize("index", range(len(NOT_RUN)))
def test_what_click_would_not_run_is_left_to_click(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _lines(NOT_RUN, tmp_path)[index]
    by_click, _status = _click_reading(args, monkeypatch)
    assert by_click is None, f"click ran {args}"
    assert _argv.search_call(args) is None


def test_agentdex_home_is_read_as_click_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDEX_HOME", str(tmp_path))
    for args in (["search", "x"], ["--home", str(tmp_path / "a"), "search", "x"]):
        (tmp_path / "a").mkdir(exist_ok=True)
        by_click, _ = _click_reading(args, monkeypatch)
        assert _fast_reading(args) == by_click
    monkeypatch.setenv("AGENTDEX_HOME", str(tmp_path / "missing"))
    assert _click_reading(["search", "x"], monkeypatch)[0] is None  # click's usage error
    assert _argv.search_call(["search", "x"]) is None
    monkeypatch.setenv("AGENTDEX_HOME", "")  # empty: unset, as click reads it
    assert _fast_reading(["search", "x"]) == _click_reading(["search", "x"], monkeypatch)[0]


def test_the_reader_knows_exactly_the_commands_options() -> None:
    """A search option added to the click command must be added to the reader too."""
    ctx = click.Context(search_cli.search)
    options = [p for p in search_cli.search.params if isinstance(p, click.Option)]
    longs = {name for p in options for name in p.opts if name.startswith("--")}
    shorts = {name for p in options for name in p.opts if not name.startswith("--")}
    assert longs == set(_argv.SEARCH_OPTIONS)
    assert shorts == {"-n", *(f"-{letter}" for letter in _argv.SEARCH_FLAGS)}
    defaults = _argv.search_defaults()
    for option in options:
        long = next(name for name in option.opts if name.startswith("--"))
        name, kind = _argv.SEARCH_OPTIONS[long]
        assert option.name == name and option.is_flag == (kind is None), long
        assert option.get_default(ctx) == defaults[name], long
        for short in (n for n in option.opts if not n.startswith("--")):
            assert _argv.SEARCH_FLAGS.get(short[1], "--limit") == long, short
    assert _argv.MAX_SECONDS == MAX_TIME_BUDGET
    sort = next(p for p in options if p.name == "sort")
    assert isinstance(sort.type, click.Choice) and tuple(sort.type.choices) == _argv.SORTS
    color = next(p for p in cli.params if p.name == "color")
    assert isinstance(color.type, click.Choice) and tuple(color.type.choices) == _argv.COLORS
    assert {p.name for p in cli.params} >= {"home", "color", "no_pager", "as_json"}


@pytest.fixture
def indexed(home: Path) -> Path:
    register()
    rows = [
        {"session": "s1", "role": "user", "kind": "prompt", "text": "How to add retry backoff?"},
        {"session": "s1", "role": "assistant", "kind": "message", "text": "Use backoff, jitter."},
        {"session": "s2", "role": "user", "kind": "prompt", "text": "unrelated question"},
    ]
    write_file(
        store_dir(home) / "a.jsonl",
        [dict(row, ts=1_767_000_000 + n, cwd="/nonexistent/app") for n, row in enumerate(rows)],
    )
    api.refresh(home=str(home), rows=ROWS)
    return home


_SECONDS = re.compile(r'"(seconds|query_seconds)": [0-9.e-]+')


def _ended(run: Any, capsys: pytest.CaptureFixture[str]) -> tuple[Any, str, str]:
    try:
        status = run()
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status or 0, _SECONDS.sub("", out), err


@pytest.mark.parametrize(
    "args",
    [
        ["search", "--no-refresh", "--json", "backoff"],
        ["search", "--no-refresh", "backoff", "-n", "1"],  # rows on a pipe, and a footer
        ["search", "--no-refresh", "--ndjson", "backoff", "-jitter"],
        ["search", "--no-refresh", "--json", "zzqq"],  # nothing found: status 1
        ["search", "--no-refresh", "zzqq"],
        ["search", "--no-refresh", "--json", "--ndjson", "x"],  # usage errors: status 2
        ["search", "--no-refresh", "-i", "-s", "x"],
        ["search", "--no-refresh", "--json", "colour:red"],
        ["search", "--no-refresh", "--url", "x", "y"],
    ],
)
def test_the_search_without_click_answers_as_with_it(
    indexed: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    call = _argv.search_call(args)
    assert call is not None
    with_click = _ended(lambda: run_main(cli, args), capsys)
    without = _ended(lambda: _fast.run(*call), capsys)
    assert without == with_click
    assert with_click[0] in (0, 1, 2)
