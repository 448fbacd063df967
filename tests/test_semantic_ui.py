"""The web explorer's search by meaning: the mode toggle and each result's why, in real
headless Chromium at desktop and phone sizes (screenshots under the test's tmp dir)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from semantic_support import PHOTOS, TITLE, TITLE_QUERY, TITLED, write_history, write_titled
from ui_support import browser_available, browser_context, launch_args, server_env, ui_server

REASON = browser_available()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

from playwright.sync_api import Browser, expect, sync_playwright  # noqa: E402

pytestmark = pytest.mark.serial
expect.set_options(timeout=30_000)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("semantic-ui")
    home, data = base / "home", base / "data"
    home.mkdir()
    data.mkdir()
    (data / "config.toml").write_text("")
    write_history(home)
    write_titled(home)
    env = {**server_env(home, data), "AGENTDEX_BACKGROUND_EMBED": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "agentdex", "index", "--semantic"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    workspace = home / "work"
    workspace.mkdir(exist_ok=True)
    with ui_server(home, data, workspace, {"AGENTDEX_BACKGROUND_EMBED": "0"}) as info:
        info["shots"] = base / "shots"
        info["shots"].mkdir()
        yield info


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**launch_args())
        yield launched
        launched.close()


def _open(browser: Browser, server: dict[str, Any], size: Any) -> tuple[Any, Any, list[str]]:
    """A logged-in tab at ``size``, and the list its page errors go to."""
    context = browser_context(browser, server["token"])
    page = context.new_page()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, errors


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_mode_toggle_and_why(browser: Browser, server: dict[str, Any], size: Any) -> None:
    context, page, errors = _open(browser, server, size)
    page.goto(f"{server['url']}/#/search?q={quote('pictures rotated wrongly')}")
    first = page.locator(".result").first
    expect(first).to_contain_text("meaning")
    expect(first.locator(".why")).to_have_attribute("data-why", "semantic")
    expect(first.locator("a.ref")).to_contain_text(PHOTOS)
    toggle = page.locator(".mode-toggle")
    expect(toggle.locator('[aria-checked="true"]')).to_have_text("hybrid")
    # the why tag and the ref stay inside the result's meta line (nothing cut off below);
    # measured in one evaluation, so a re-render of the list cannot fall between them
    rows = page.evaluate(
        """() => [...document.querySelectorAll('.result')].slice(0, 2).map(r =>
            ['.meta', '.why', 'a.ref'].map(s => r.querySelector(s)).map(e => {
                if (!e) return null;
                const b = e.getBoundingClientRect();
                return {x: b.x, y: b.y, width: b.width, height: b.height};
            }))"""
    )
    assert rows
    for meta, *parts in rows:
        for box in parts:
            assert meta and box, rows
            assert box["y"] + box["height"] <= meta["y"] + meta["height"] + 1, rows
            assert box["x"] + box["width"] <= size[0], rows
    page.screenshot(path=str(server["shots"] / f"hybrid-{size[0]}.png"))
    toggle.locator('[data-mode="lexical"]').click()
    expect(page.locator("#result-count")).to_have_text("0 results")
    assert "mode=lexical" in page.url
    page.fill("#q", "exif_transpose")
    expect(page.locator(".result .why").first).to_have_text("exact: exif_transpose")
    toggle.locator('[data-mode="semantic"]').click()
    expect(page.locator(".result").first).to_contain_text("meaning")
    # the toggle fits the phone's width: nothing scrolls sideways
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= size[0], width
    page.screenshot(path=str(server["shots"] / f"semantic-{size[0]}.png"))
    context.close()
    assert errors == []


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_a_title_hit_says_it_matched_the_title(
    browser: Browser, server: dict[str, Any], size: Any
) -> None:
    context, page, errors = _open(browser, server, size)
    page.goto(f"{server['url']}/#/search?q={quote(TITLE_QUERY)}&mode=semantic")
    first = page.locator(".result").first
    expect(first.locator("a.ref")).to_contain_text(TITLED[:8])
    why = first.locator(".why")
    expect(why).to_have_attribute("data-why", "semantic")
    expect(why).to_contain_text("(title)")
    # the title that matched is on the page, whole, not only in a tooltip a phone cannot
    # show: inside its (fixed-height) row, nothing of it cut off
    matched = first.locator(".why-title q")
    expect(matched).to_have_text(TITLE)
    boxes = page.evaluate(
        """() => ['.why-title q', ''].map(s => {
            const row = document.querySelector('.result');
            const b = (s ? row.querySelector(s) : row).getBoundingClientRect();
            return {left: b.left, right: b.right, top: b.top, bottom: b.bottom};
        })"""
    )
    title, row = boxes
    assert row["left"] <= title["left"] and title["right"] <= row["right"], boxes
    assert row["top"] <= title["top"] and title["bottom"] <= row["bottom"], boxes
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= size[0], width
    page.screenshot(path=str(server["shots"] / f"title-{size[0]}.png"))
    # a result found by its own words carries no title line
    page.fill("#q", "pictures rotated wrongly")
    expect(page.locator(".result").first.locator("a.ref")).to_contain_text(PHOTOS)
    expect(page.locator(".result").first.locator(".why-title")).to_have_count(0)
    context.close()
    assert errors == []
