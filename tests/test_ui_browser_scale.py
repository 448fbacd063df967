"""The web explorer with a lot of data: 10,000 listed results and a 5,000-message
conversation stay responsive because only what is on screen exists in the DOM
(the result list is virtualised, the conversation is rendered in pages).

These check the structure (how many rows/messages exist while everything is
reachable), not timings; ``bench/bench_ui.py`` measures the timings
(docs/performance.md, "Web explorer").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ui_support import (
    LONG_CHAT,
    browser_available,
    browser_context,
    build_big_home,
    launch_args,
    ui_server,
)

REASON = browser_available()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402

pytestmark = pytest.mark.serial
expect.set_options(timeout=30_000)  # a loaded CI machine is slow, not wrong

LONG = LONG_CHAT
MAX_ROWS = 80  # a screenful of 64 px rows plus the overscan, far below 10,000
MAX_MESSAGES = 400  # a few pages of 150, far below 5,000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("scale") / "home"
    workspace = build_big_home(home)
    with ui_server(home, tmp_path_factory.mktemp("scale-data"), workspace) as info:
        yield info


@pytest.fixture
def page(big: dict[str, Any]) -> Iterator[Page]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        yield browser_context(browser, big["token"]).new_page()
        browser.close()


def test_ten_thousand_results_are_listed_but_few_rows_exist(
    page: Page, big: dict[str, Any]
) -> None:
    page.goto(f"{big['url']}/#/search?q=zebra")
    expect(page.locator("#result-count")).to_have_text("12,000 results")
    rows = page.locator("#results .result")
    assert 0 < rows.count() <= MAX_ROWS
    # Scrolling to the end loads the rest, up to the 10,000 the API lists at most.
    page.evaluate("document.getElementById('results').scrollTop = 1e9")
    expect(page.locator("#result-shown")).to_contain_text("the first 10,000 are listed")
    assert page.evaluate("window.agentdexResults.items.length") == 10_000
    page.evaluate("document.getElementById('results').scrollTop = 1e9")
    expect(page.locator('#results .result[data-index="9999"]')).to_be_visible()
    assert rows.count() <= MAX_ROWS
    page.locator("#q").press("Escape")
    page.keyboard.press("k")
    expect(page.locator(".result.selected")).to_be_visible()
    # Back to the top: the first rows come back, the last ones are gone.
    page.evaluate("document.getElementById('results').scrollTop = 0")
    expect(page.locator('#results .result[data-index="0"]')).to_be_visible()
    expect(page.locator('#results .result[data-index="9999"]')).to_have_count(0)


def test_five_thousand_messages_render_in_pages(page: Page, big: dict[str, Any]) -> None:
    page.goto(f"{big['url']}/#/c/{LONG}")
    expect(page.locator("#message-count")).to_have_text("5,000 messages")
    articles = page.locator("#messages article")
    assert 0 < articles.count() <= MAX_MESSAGES
    page.locator("button", has_text="End").click()
    expect(articles.last).to_contain_text("zebra message 4999")
    assert articles.count() <= MAX_MESSAGES
    # A deep link into the middle renders around its message, and scrolling up adds pages.
    page.goto(f"{big['url']}/#/c/{LONG}%40line%3A2501")
    focused = page.locator("article.msg.focus")
    expect(focused).to_contain_text("zebra message 2500 ")
    before = articles.count()
    for _ in range(6):
        page.evaluate("document.getElementById('main').scrollTop = 0")
        page.wait_for_timeout(150)
    assert articles.count() > before
    assert articles.count() <= MAX_MESSAGES + 6 * 150
