"""Take the README's screenshots of the web explorer on the sample home and a real one.

Renders ``examples/sample_home.py`` into a temporary folder, runs ``agentdex ui`` on it
and drives Debian's chromium (Playwright, headless) to write
``docs/ui-search.png`` and ``docs/ui-conversation.png`` (1280 px wide); then, on the
real-shaped home of ``examples/corpus_home.py`` (when ``../shared/corpus`` is there),
``docs/ui-phone-search.png``, ``docs/ui-phone-conversation.png`` (390x844, a deep
link into the 600-message conversation) and ``docs/ui-real-conversation.png``
(1280x800, the same message).

    python scripts/ui_screenshots.py [--out docs]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from ui_support import browser_available, launch_args, render_sample_home, ui_server  # noqa: E402

CHAT = "3b5e9c2a-7d41-4f0e-9a6b-2c8d1e4f7a90"


def wsl(home: Path) -> dict[str, str]:
    """Let discovery see the sample's Windows user through its WSL mount (as the tour does)."""
    return {"AGENTDEX_WSL": "1", "AGENTDEX_WSL_USERS_ROOT": str(home / "mnt" / "c" / "Users")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args()
    reason = browser_available()
    if reason:
        print(f"ui_screenshots: {reason}", file=sys.stderr)
        return 1
    from playwright.sync_api import expect, sync_playwright

    with tempfile.TemporaryDirectory(prefix="agentdex-shots-") as tmp:
        home = render_sample_home(Path(tmp) / "home")
        with (
            ui_server(home, Path(tmp) / "data", home / "src" / "shop", wsl(home)) as info,
            sync_playwright() as playwright,
        ):
            browser = playwright.chromium.launch(**launch_args())
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.goto(info["page"])  # the one-time login link, as `agentdex ui` opens it
            page.get_by_text("Recent conversations").wait_for()  # indexed
            page.locator("#q").press_sequentially("retry", delay=30)
            expect(page.locator("#facets .facet").first).to_be_visible()
            expect(page.locator("#results .result").first).to_be_visible()
            page.locator("#q").press("Escape")
            page.keyboard.press("j")
            page.wait_for_timeout(300)
            page.screenshot(path=str(args.out / "ui-search.png"))
            page.goto(f"{info['url']}/#/c/{quote(CHAT + '@line:9', safe='')}")
            expect(page.locator("article.msg.focus")).to_be_visible()
            expect(page.locator("#live")).to_have_text("live")
            page.locator('article[data-ref$="@line:8"] summary').click()
            page.locator("#main").evaluate("main => { main.scrollTop = 0; }")
            page.wait_for_timeout(300)
            page.screenshot(path=str(args.out / "ui-conversation.png"))
            browser.close()
    print(f"wrote {args.out / 'ui-search.png'} and {args.out / 'ui-conversation.png'}")
    return real_home_shots(args.out)


def real_home_shots(out: Path) -> int:
    """The phone and desk shots on the real-shaped home (skipped without the corpus)."""
    from playwright.sync_api import expect, sync_playwright

    from corpus_support import corpus_home_module

    module = corpus_home_module()
    corpus = module.find_corpus()
    if corpus is None:
        print("ui_screenshots: no ../shared/corpus; the real-home shots were skipped")
        return 0
    link = f"#/c/{quote(module.LONG_ID + '@line:311', safe='')}"
    with tempfile.TemporaryDirectory(prefix="agentdex-shots-") as tmp:
        home = module.render(Path(tmp) / "home", corpus)
        env = module.environment(home)
        extra = {k: env[k] for k in ("AGENTDEX_CONFIG", "AGENTDEX_NOW")}
        with (
            ui_server(home, Path(tmp) / "data", home / "src" / "longchat", extra) as info,
            sync_playwright() as playwright,
        ):
            browser = playwright.chromium.launch(**launch_args())
            for name, size in (("phone", (390, 844)), ("real", (1280, 800))):
                context = browser.new_context(viewport={"width": size[0], "height": size[1]})
                token = info["token"]
                context.add_init_script(f"sessionStorage.setItem('agentdex.token', {token!r})")
                page = context.new_page()
                page.goto(f"{info['url']}/#/search")
                page.get_by_text("Recent conversations").wait_for()
                if name == "phone":
                    page.locator("#q").press_sequentially("race", delay=30)
                    expect(page.locator("#results .result").first).to_be_visible()
                    page.wait_for_timeout(300)
                    page.screenshot(path=str(out / "ui-phone-search.png"))
                page.goto(f"{info['url']}/{link}")
                expect(page.locator("article.msg.focus")).to_be_visible()
                page.wait_for_timeout(2500)  # the deep link settles in view
                page.screenshot(path=str(out / f"ui-{name}-conversation.png"))
                context.close()
            browser.close()
    print(f"wrote {out}/ui-phone-search.png, ui-phone-conversation.png, ui-real-conversation.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
