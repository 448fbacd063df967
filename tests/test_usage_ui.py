"""The usage page in real headless Chromium (Playwright), at 1280x800 and 390x844, against a
real ``agentdex ui`` on the rendered sample home: the page shows the API's numbers.

The bars are one per day with usage, their segments the models of that day; the totals
and the per-project table are the API's; the range buttons narrow the dates; nothing is
asked of another host and no script fails. Screenshots go to the test's temp folder
(``AGENTDEX_UI_SHOTS=DIR`` keeps them, e.g. to refresh ``docs/ui-usage*.png``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ui_support import browser_available, launch_args, render_sample_home, ui_server

REASON = browser_available()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

from playwright.sync_api import Browser, expect, sync_playwright  # noqa: E402

pytestmark = pytest.mark.serial
expect.set_options(timeout=30_000)

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    sample = render_sample_home(tmp_path_factory.mktemp("usage-ui") / "home")
    data = tmp_path_factory.mktemp("usage-ui-data")
    with ui_server(sample, data, sample / "src" / "shop") as info:
        yield info


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**launch_args())
        yield launched
        launched.close()


def _api(page: Any, server: dict[str, Any], query: str) -> dict[str, Any]:
    answer = page.request.get(
        f"{server['url']}/api/v0/usage?{query}",
        headers={"Authorization": f"Bearer {server['token']}"},
    )
    assert answer.status == 200
    data: dict[str, Any] = answer.json()
    return data


@pytest.mark.parametrize("size", sorted(SIZES))
def test_usage_page_shows_the_apis_numbers(
    browser: Browser, server: dict[str, Any], size: str, tmp_path: Path
) -> None:
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script(f"sessionStorage.setItem('agentdex.token', {server['token']!r})")
    page = context.new_page()
    outside: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(server["url"]) else outside.append(r.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    days = _api(page, server, "by=day&split=model")  # (this first one builds the index)
    projects = _api(page, server, "by=project")
    page.goto(f"{server['url']}/#/usage")
    assert days["totals"]["calls"] > 0 and days["unpriced"]  # the sample home has both kinds

    expect(page.locator(".usage-totals")).to_contain_text(f"{days['totals']['calls']:,}")
    bars = page.locator(".usage-chart g.bar")
    dated = [row for row in days["rows"] if row["day"]]
    expect(bars).to_have_count(len(dated))
    segments = page.locator(".usage-chart g.bar rect")
    expect(segments).to_have_count(sum(len(row["parts"]) for row in dated))
    first = page.locator(".usage-chart g.bar").first
    assert first.get_attribute("data-day") == dated[0]["day"]
    rows = page.locator("table.usage-projects tbody tr")
    expect(rows).to_have_count(len(projects["rows"]))
    expect(page.locator(".usage-unpriced")).to_contain_text("never guessed")
    # the chart fits the window: nothing wider than the viewport
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, (size, scroll)
    shots = Path(os.environ.get("AGENTDEX_UI_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"ui-usage-{size}.png"), full_page=True)

    # a narrower range: only the days from `since` on, and the totals follow
    last = dated[-1]["day"]
    page.goto(f"{server['url']}/#/usage?since={last}&range=custom")
    narrowed = _api(page, server, f"by=day&split=model&since={last}")
    expect(bars).to_have_count(1)
    expect(page.locator(".usage-totals")).to_contain_text(f"{narrowed['totals']['calls']:,}")
    page.locator(".usage-toggle button[data-metric='cost']").click()
    expect(page.locator(".usage-chart")).to_have_attribute(
        "aria-label", "Cost per day, stacked by model"
    )
    context.close()
    assert outside == [] and errors == []
