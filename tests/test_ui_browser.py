"""The web explorer as a person uses it: Debian's chromium, driven by Playwright, against a
real ``agentdex ui`` process on the rendered sample home.

Log in with the one-time link (and be refused with a used link or a wrong token),
search as you type, narrow with a facet, walk the results with j/k and open one with
Enter, follow a deep link, copy as Markdown, watch a message arrive while an agent
writes, read a workspace's context, add and remove a worktree, create a session.
Every test also checks that the page asked nothing of any other host.

Skips cleanly when playwright or chromium is missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from ui_support import (
    browser_available,
    browser_context,
    claude_line,
    launch_args,
    render_sample_home,
    ui_server,
)

REASON = browser_available()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

pytestmark = pytest.mark.serial
expect.set_options(timeout=30_000)  # a loaded CI machine is slow, not wrong

SHOP_CHAT = "3b5e9c2a-7d41-4f0e-9a6b-2c8d1e4f7a90"
TIMEOUT = 15_000


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_sample_home(tmp_path_factory.mktemp("ui") / "home")


@pytest.fixture(scope="module")
def server(sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    data = tmp_path_factory.mktemp("ui-data")
    with ui_server(sample, data, sample / "src" / "shop") as info:
        yield info


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**launch_args())
        yield launched
        launched.close()


def _context_page(browser: Browser, server: dict[str, Any], *, token: str | None) -> Any:
    context = browser_context(browser, token, timeout=TIMEOUT)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server["url"])
    page = context.new_page()
    outside: list[str] = []
    page.on(
        "request",
        lambda request: (
            None if request.url.startswith(server["url"]) else outside.append(request.url)
        ),
    )
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, outside, errors


@pytest.fixture
def page(browser: Browser, server: dict[str, Any]) -> Iterator[Page]:
    """A logged-in tab; afterwards, no request left the server and no script failed."""
    context, tab, outside, errors = _context_page(browser, server, token=server["token"])
    yield tab
    context.close()
    assert outside == []
    assert errors == []


def test_login_link_works_once_and_a_wrong_token_is_refused(
    browser: Browser, server: dict[str, Any]
) -> None:
    context, tab, outside, errors = _context_page(browser, server, token=None)
    tab.goto(server["page"])
    expect(tab.locator("#q")).to_be_visible()
    assert "login=" not in tab.url  # the code left the address bar at once
    assert tab.evaluate("sessionStorage.getItem('agentdex.token')") == server["token"]
    context.close()

    context, tab, outside, errors = _context_page(browser, server, token=None)
    tab.goto(server["page"])  # the same link again: spent
    expect(tab.locator("#login-message")).to_contain_text("already used")
    tab.fill("#token", "not-the-token")
    tab.press("#token", "Enter")
    expect(tab.locator("#login-message")).to_have_text("That token was refused.")
    expect(tab.locator("#q")).to_have_count(0)
    refused = tab.request.get(
        f"{server['url']}/api/v0/search?q=retry", headers={"Authorization": "Bearer nope"}
    )
    assert refused.status == 401
    tab.fill("#token", server["token"])
    tab.press("#token", "Enter")
    expect(tab.locator("#q")).to_be_visible()
    context.close()
    assert outside == [] and errors == []


def _total(page: Page, server: dict[str, Any], query: str) -> int:
    """What the API says, to compare the page with."""
    answer = page.request.get(
        f"{server['url']}/api/v0/search?q={quote(query)}",
        headers={"Authorization": f"Bearer {server['token']}"},
    )
    total: int = answer.json()["stats"]["total"]
    return total


def test_search_facets_keyboard_and_open_a_hit(page: Page, server: dict[str, Any]) -> None:
    everything, claude_only = (
        _total(page, server, "retry"),
        _total(page, server, "retry agent:claude-code"),
    )
    assert everything > claude_only >= 2
    page.goto(f"{server['url']}/#/search")
    page.locator("#q").press_sequentially("retry", delay=40)
    count = page.locator("#result-count")
    expect(count).to_have_text(f"{everything} results")
    expect(page.locator(".result mark").first).to_have_text("retry", ignore_case=True)
    claude = page.locator('#facets button[data-filter="agent:claude-code"]')
    expect(claude.locator(".n")).to_have_text(str(claude_only))
    claude.click()
    expect(page.locator("#q")).to_have_value("retry agent:claude-code")
    expect(count).to_have_text(f"{claude_only} results")
    assert "agent%3Aclaude-code" in page.url or "agent:claude-code" in page.url
    page.locator("#q").press("Escape")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.locator("#q").press("Escape")
    page.keyboard.press("j")
    expect(page.locator(".result.selected")).to_have_attribute("data-index", "1")
    page.keyboard.press("k")
    expect(page.locator(".result.selected")).to_have_attribute("data-index", "0")
    ref = page.locator(".result.selected a.ref").inner_text()
    page.keyboard.press("Enter")
    expect(page.locator("article.msg.focus")).to_have_attribute("data-ref", ref)
    expect(page.locator(".conv-head")).to_contain_text("project ~/src/shop")
    expect(page.locator(".conv-head")).to_contain_text("branch main")
    expect(page.locator(".conv-head")).to_contain_text("claude-sonnet-4-5")
    expect(page.locator("article.msg.focus")).to_contain_text("retry")


def test_deep_link_folds_and_copy_as_markdown(page: Page, server: dict[str, Any]) -> None:
    ref = f"{SHOP_CHAT}@line:6"  # a tool result: folded, unfolded when it is the target
    page.goto(f"{server['url']}/#/c/{quote(ref, safe='')}")
    focused = page.locator("article.msg.focus")
    expect(focused).to_have_attribute("data-ref", ref)
    expect(focused.locator("details")).to_have_attribute("open", "")
    expect(focused).to_contain_text("ConnectTimeout")
    assert focused.is_visible() and focused.bounding_box() is not None
    call_ref = page.locator("article.kind-tool_call").first.get_attribute("data-ref")
    folded = page.locator(f'article[data-ref="{call_ref}"] details')
    expect(folded).not_to_have_attribute("open", "")
    expect(folded.locator("summary .size")).to_contain_text("B")
    expect(page.locator("article.kind-reasoning details")).not_to_have_attribute("open", "")
    expect(folded.locator(".codeblock")).to_have_count(0)  # bodies render when unfolded
    folded.locator("summary").click()
    expect(folded.locator(".codeblock .tok-s").first).to_be_visible()  # highlighted JSON
    # The page's own link for that message is the same REF the CLI takes.
    href = focused.locator("a.permalink").get_attribute("href")
    assert href == f"#/c/{quote(ref, safe='')}"
    title = page.locator(".conv-head h1").inner_text()
    assert title == "Fix flaky checkout test with retry and backoff"  # the agent's own title
    page.locator("#copy-markdown").click()
    expect(page.locator("#toast")).to_contain_text("Copied the conversation as Markdown")
    markdown = page.evaluate("navigator.clipboard.readText()")
    assert markdown.startswith("# ") and f"`{SHOP_CHAT}`" in markdown
    assert "## 1. User" in markdown and "ConnectTimeout" in markdown
    # Resume shows the agent's own command to copy; nothing is run.
    page.locator("#resume").click()
    expect(page.locator("#resume-command")).to_contain_text(f"claude --resume {SHOP_CHAT}")
    page.locator("dialog.confirm button", has_text="Close").click()
    # Export downloads a standalone HTML file (no script, nothing external).
    page.locator("#export summary").click()
    with page.expect_download() as info:
        page.locator('#export button[data-format="html"]').click()
    html = Path(info.value.path()).read_text(encoding="utf-8")
    assert info.value.suggested_filename.endswith(".html")
    assert "ConnectTimeout" in html and "<script" not in html
    # A bare session id opens at the top; the header links back to the search.
    page.goto(f"{server['url']}/#/c/{SHOP_CHAT}")
    expect(page.locator("#messages article").first).to_contain_text("fails about one run in five")


def test_live_message_appears_without_reload(
    page: Page, server: dict[str, Any], sample: Path
) -> None:
    path = next((sample / ".claude" / "projects").glob(f"*/{SHOP_CHAT}.jsonl"))
    page.goto(f"{server['url']}/#/c/{SHOP_CHAT}")
    expect(page.locator("#live")).to_have_text("live")
    page.evaluate("window.__sameDocument = true")
    before = page.locator("#messages article").count()
    line = claude_line(
        SHOP_CHAT,
        99,
        role="assistant",
        ts=time.time(),
        cwd=str(sample / "src" / "shop"),
        text="Live from the agent: the retry patch is merged.",
    )
    import json

    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
    arrived = page.locator("#messages article.new")
    expect(arrived).to_contain_text("Live from the agent", timeout=20_000)
    assert page.locator("#messages article").count() == before + 1
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    expect(page.locator("#message-count")).to_have_text(f"{before + 1} messages")


def test_context_view_shows_caps_hashes_and_no_secret(
    page: Page, server: dict[str, Any], sample: Path
) -> None:
    shop = sample / "src" / "shop"
    page.goto(f"{server['url']}/#/context?dir={quote(str(shop), safe='')}")
    expect(page.locator("#context-live")).to_contain_text("live · v1")
    agents = page.locator('li.resource[data-kind="instruction_file"]', has_text="AGENTS.md")
    expect(agents).to_contain_text("64 KB cap")
    expect(agents.locator(".hash")).to_contain_text("sha256 ")
    mcp = page.locator('li.resource[data-kind="mcp_config"]')
    expect(mcp.locator("code.chip")).to_have_text(["docs", "payments-sandbox"])
    body = page.locator("body").inner_text()
    assert "fake-sk-test" not in body and "fake-docs-token" not in body
    (shop / "AGENTS.md").write_text("# Shop: agent instructions\n\nNew rule.\n", encoding="utf-8")
    expect(page.locator("#context-live")).to_contain_text("v2", timeout=20_000)
    expect(agents).to_contain_text("B / 64 KB cap")


def test_worktree_add_and_remove_with_confirmation_and_a_session(
    page: Page, server: dict[str, Any], sample: Path
) -> None:
    shop = sample / "src" / "shop"
    page.goto(f"{server['url']}/#/worktrees?repo={quote(str(shop), safe='')}")
    expect(page.locator("#worktrees tbody tr")).to_have_count(2)
    page.fill('#new-worktree input[name="branch"]', "feat/ui-test")
    page.check('#new-worktree input[name="create_branch"]')
    page.click("#new-worktree button[type=submit]")
    row = page.locator("#worktrees tr", has_text="feat/ui-test")
    expect(row).to_have_count(1)
    created = sample / "src" / "shop-wt-feat-ui-test"
    assert created.is_dir()
    row.locator("button", has_text="Remove").click()
    dialog = page.locator("dialog.confirm")
    expect(dialog).to_contain_text("Remove worktree?")
    dialog.locator("button", has_text="Cancel").click()
    assert created.is_dir()  # cancelled: nothing removed
    row.locator("button", has_text="Remove").click()
    page.locator("dialog.confirm button", has_text="Remove").click()
    expect(row).to_have_count(0)
    assert not created.exists()

    page.goto(f"{server['url']}/#/sessions")
    page.fill('#new-session input[name="label"]', "ui test session")
    page.fill('#new-session input[name="working_directory"]', str(shop))
    page.click("#new-session button[type=submit]")
    link = page.locator("#session-list tr", has_text="ui test session").locator("a")
    link.click()
    expect(page.locator("#session-events li").first).to_contain_text("start")
    expect(page.locator("#session-events li").first).to_contain_text(f"working_directory: {shop}")
    # Transcripts link only when active while the session was: these are older.
    expect(page.locator(".session-view")).to_contain_text("None yet.")
