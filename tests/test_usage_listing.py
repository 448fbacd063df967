"""Tokens and cost where people look: the `conversations` table on a wide terminal.

Real Claude Code transcripts, `agentdex conversations` on a real pty: a wide table shows each
conversation's tokens and cost (the numbers `agentdex usage --by session` gives), a narrow
one gives them up before anything else, and a conversation without a priced model shows no
cost rather than $0.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import SRC_DIR
from corpus_support import on_terminal
from test_usage_index import _claude, _transcript

pytestmark = pytest.mark.deferred_postings


def _rows(screen: str) -> dict[str, list[str]]:
    return {line.split()[1]: line.split() for line in screen.splitlines() if "claude" in line}


def test_the_wide_listing_shows_tokens_and_cost(home: Path, run_cli: Any) -> None:
    _transcript(home, "aaaa1111", [
        _claude("aaaa1111", "m1", "2026-03-01T10:00:00Z", (1000, 2_000_000, 300_000, 45_000)),
    ])  # fmt: skip
    _transcript(home, "bbbb2222", [
        _claude("bbbb2222", "m2", "2026-03-01T11:00:00Z", (10, 0, 0, 5), model="nobody-knows"),
    ])  # fmt: skip
    _transcript(home, "cccc3333", [{"type": "user", "sessionId": "cccc3333", "cwd": "/w/app",
        "timestamp": "2026-03-01T12:00:00Z", "uuid": "u1",
        "message": {"role": "user", "content": "no model call here"}}])  # fmt: skip
    done = run_cli("usage", "--by", "session", "--json")
    by_session = {r["session_id"]: r for r in json.loads(done.stdout)["rows"]}
    # the pty's size decides the table's width (a COLUMNS of the test runner's would win)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(SRC_DIR)
    code, screen = on_terminal(env, "conversations", "--no-refresh", columns=160)
    assert code == 0, screen
    header = next(line for line in screen.splitlines() if "prompts" in line)
    assert "tokens" in header and "cost" in header
    rows = _rows(screen)
    priced = by_session["aaaa1111"]
    assert priced["total_tokens"] == 2_346_000
    assert "2.35M" in rows["aaaa1111"] and f"${priced['cost_usd']:,.2f}" in rows["aaaa1111"]
    assert "15" in rows["bbbb2222"] and "$0.00" not in rows["bbbb2222"]  # unpriced: no cost
    assert rows["cccc3333"].count("-") >= 2  # no model call: neither tokens nor cost
    # a narrower wide table gives the two columns up before the title or the counts
    code, narrow = on_terminal(env, "conversations", "--no-refresh", columns=112)
    assert code == 0
    header = next(line for line in narrow.splitlines() if "prompts" in line)
    assert "title" in header and "replies" in header


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)], ids=["desk", "phone"])
def test_the_page_lists_each_conversations_tokens_and_cost(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Real Chromium on a real-shaped home (shared corpus sessions + a 600-message chat): the
    conversations table has a tokens column with the API's numbers, nothing scrolls sideways,
    and on a phone the cell stacks with its label. Screenshots are left in the test's
    temporary folder."""
    from corpus_support import render_corpus_home
    from ui_support import browser_available, launch_args, server_env, ui_server

    why = browser_available()
    if why:
        pytest.skip(why)
    from playwright.sync_api import expect, sync_playwright

    home, env = render_corpus_home(tmp_path / "home")
    extra = {"AGENTDEX_CONFIG": env["AGENTDEX_CONFIG"], "AGENTDEX_NOW": env["AGENTDEX_NOW"]}
    data = tmp_path / "data"
    with (
        ui_server(home, data, home / "src" / "longchat", extra) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(**launch_args())
        context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        token = server["token"]
        context.add_init_script(f"sessionStorage.setItem('agentdex.token', {token!r})")
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{server['url']}/#/conversations")
        expect(page.locator("body.ready")).to_have_count(1)
        page.wait_for_load_state("networkidle")
        expect(page.locator("main table.grid thead th", has_text="tokens")).to_have_count(1)
        cells = page.locator("main table.grid tbody td.tokens")
        shown = [text for text in cells.all_inner_texts() if text.strip()]
        page.screenshot(path=str(tmp_path / f"conversations-{size[0]}.png"), full_page=False)
        widths = page.evaluate(
            "() => [document.documentElement.scrollWidth,"
            " document.getElementById('main').scrollWidth,"
            " document.getElementById('main').clientWidth]"
        )
        label = cells.first.evaluate("el => getComputedStyle(el, '::before').content")
        browser.close()
    assert errors == []
    assert widths[0] <= size[0] and widths[1] <= widths[2], widths
    listing = run_json({**server_env(home, data), **extra}, "conversations", "--no-refresh")
    listed = [c for c in json.loads(listing)["conversations"] if c["total_tokens"]]
    assert listed and len(shown) == len(listed)
    first = max(listed, key=lambda c: c["total_tokens"])
    assert any(text.startswith(_tokens(first["total_tokens"])) for text in shown), shown
    assert any(f"${first['cost_usd']:.2f}" in text for text in shown), shown
    if size[0] < 600:
        assert label == '"tokens"'  # the phone's stacked cell says what it is


def _tokens(n: int) -> str:
    """The page's three significant digits (dom.js ``tokens``)."""
    from agentdex.cli.usage import compact_number

    return compact_number(n)


def run_json(env: dict[str, str], *args: str) -> str:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "agentdex", *args, "--json"],
        env={**env, "PYTHONPATH": str(SRC_DIR)},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout
