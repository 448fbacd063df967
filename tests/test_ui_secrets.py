"""The Secrets page in real headless Chromium (1280x800 and 390x844): the conversations
where secrets were found, with their kinds and a link, and never a secret's value."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_secrets_surfaces import NEEDLES, SECRETS, SESSION, plant
from ui_support import browser_available, browser_context, launch_args, ui_server

REASON = browser_available()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

from playwright.sync_api import expect, sync_playwright  # noqa: E402

pytestmark = pytest.mark.serial


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("secrets") / "home"
    home.mkdir()
    plant(home)
    with ui_server(home, tmp_path_factory.mktemp("secrets-data"), home) as info:
        yield info


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_secrets_page_lists_kinds_and_links_never_values(
    server: dict[str, Any], size: tuple[int, int], tmp_path: Path
) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(**launch_args())
        try:
            context = browser_context(browser, server["token"], timeout=30_000)
            page = context.new_page()
            page.set_viewport_size({"width": size[0], "height": size[1]})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{server['url']}/#/secrets")
            table = page.locator("#secrets table")
            expect(table).to_contain_text("aws-access-key-id", timeout=30_000)
            for kind in SECRETS:
                expect(table).to_contain_text(kind)
            link = table.locator("a").first
            expect(link).to_have_attribute("href", f"#/c/{SESSION}?agent=claude-code")
            expect(link).to_contain_text("[REDACTED:aws-access-key-id]")  # the masked title
            page.screenshot(path=str(tmp_path / f"secrets-{size[0]}.png"), full_page=True)
            body = page.locator("body").inner_text()
            assert [n[:12] for n in NEEDLES if n in body] == []
            link.click()
            expect(page.locator("body")).to_contain_text("[REDACTED:jwt]", timeout=30_000)
            shown = page.locator("body").inner_text()
            assert [n[:12] for n in NEEDLES if n in shown] == []
            assert errors == []
            context.close()
        finally:
            browser.close()
