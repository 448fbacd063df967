"""The web explorer on a real-shaped home, at a desk (1280x800) and on a phone (390x844).

The home is ``examples/corpus_home.py``: the shared corpus's real Claude Code and
Aider transcripts plus a generated 600-message conversation. Each view must fit a
phone (nothing wider than the screen, every control reachable), the nav folds
behind a menu there and is absent before login, tables stack, a deep link into
the long conversation lands with its message in view, and empty results say what
to try. Skips without chromium/Playwright or without ``../shared/corpus``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from corpus_support import cli, on_terminal, render_corpus_home
from ui_support import browser_available, launch_args, server_env, ui_server

REASON = browser_available()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

pytestmark = pytest.mark.serial
expect.set_options(timeout=30_000)

LONG = "600c0de0-0000-4000-8000-000000000600"
DESK = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
#: The nav in its order (each page's registerView order).
NAV = [
    "Search", "Conversations", "Context", "Usage", "Sessions", "Worktrees", "Sources", "Secrets"
]  # fmt: skip
VIEWS = (
    "search?q=race",
    "conversations",
    f"c/{LONG}",
    "context",
    "sessions",
    "worktrees",
    "sources",
    "usage",
    "secrets",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home, env = render_corpus_home(tmp_path_factory.mktemp("real-ui") / "home")
    extra = {"AGENTDEX_CONFIG": env["AGENTDEX_CONFIG"], "AGENTDEX_NOW": env["AGENTDEX_NOW"]}
    data = tmp_path_factory.mktemp("real-ui-data")
    with ui_server(home, data, home / "src" / "longchat", extra) as info:
        info["cli_env"] = {**server_env(home, data), **extra}  # the CLI on the same index
        yield info


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**launch_args())
        yield launched
        launched.close()


def _page(
    browser: Browser, server: dict[str, Any], size: dict[str, int], *, token: bool = True
) -> Page:
    context = browser.new_context(viewport=size)
    context.set_default_timeout(30_000)
    if token:
        context.add_init_script(f"sessionStorage.setItem('agentdex.token', {server['token']!r})")
    page = context.new_page()
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(server["url"]) else outside.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    SEEN[id(page)] = (outside, errors)
    return page


#: Per page: requests to another host, and script errors (both must stay empty).
SEEN: dict[int, tuple[list[str], list[str]]] = {}


def _close(page: Page) -> None:
    outside, errors = SEEN.pop(id(page))
    assert outside == []  # nothing asked of another host
    assert errors == []
    page.context.close()


def _settled(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("body.ready")).to_have_count(1)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)


#: Controls and links in the page that lie (partly) outside the screen's width.
OFF_SCREEN = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  const controls = 'main button, main input, main select, main a, header button, header a';
  for (const el of document.querySelectorAll(controls)) {
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || getComputedStyle(el).visibility === 'hidden') continue;
    if (box.left < -1 || box.right > width + 1)
      out.push(`${el.tagName} ${el.textContent.trim().slice(0, 30)} ${box.left}..${box.right}`);
  }
  return out;
}"""


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_every_view_fits_the_screen(
    browser: Browser, server: dict[str, Any], size: dict[str, int]
) -> None:
    page = _page(browser, server, size)
    for view in VIEWS:
        _settled(page, f"{server['url']}/#/{view}")
        page.locator("main section").first.wait_for()
        widths = page.evaluate(
            "() => [document.documentElement.scrollWidth, document.getElementById('main')"
            ".scrollWidth, document.getElementById('main').clientWidth]"
        )
        assert widths[0] <= size["width"], (view, widths)
        assert widths[1] <= widths[2], (view, widths)  # nothing scrolls sideways
        assert page.evaluate(OFF_SCREEN) == [], view
    _close(page)


def test_the_nav_folds_on_a_phone_and_is_absent_before_login(
    browser: Browser, server: dict[str, Any]
) -> None:
    page = _page(browser, server, PHONE, token=False)
    page.goto(f"{server['url']}/")
    expect(page.locator("#token")).to_be_visible()
    expect(page.locator("#nav")).to_be_hidden()
    expect(page.locator("#menu")).to_be_hidden()
    expect(page.locator("#nav a")).to_have_count(len(NAV))  # built, but not shown before login
    _close(page)

    page = _page(browser, server, PHONE)
    _settled(page, f"{server['url']}/#/search")
    expect(page.locator("#nav")).to_be_hidden()
    expect(page.locator("#where")).to_have_text("Search")
    page.locator("#menu").click()
    expect(page.locator("#menu")).to_have_attribute("aria-expanded", "true")
    links = page.locator("#nav a")
    expect(links).to_have_text(NAV)
    for i in range(len(NAV)):
        expect(links.nth(i)).to_be_visible()
    links.nth(NAV.index("Sources")).click()
    expect(page).to_have_url(f"{server['url']}/#/sources")
    expect(page.locator("#nav")).to_be_hidden()  # the menu closes on a choice
    expect(page.locator("#where")).to_have_text("Sources")
    page.locator("#menu").click()
    page.keyboard.press("Escape")
    expect(page.locator("#nav")).to_be_hidden()
    _close(page)

    page = _page(browser, server, DESK)
    _settled(page, f"{server['url']}/#/search")
    expect(page.locator("#nav a").first).to_be_visible()
    expect(page.locator("#menu")).to_be_hidden()
    _close(page)


def test_tables_stack_on_a_phone(browser: Browser, server: dict[str, Any]) -> None:
    for size, shown in ((PHONE, "block"), (DESK, "table-cell")):
        page = _page(browser, server, size)
        _settled(page, f"{server['url']}/#/sources")
        cell = page.locator("#sources tbody tr:not(.group) td").nth(4)
        expect(cell).to_have_attribute("data-label", "path")
        assert cell.evaluate("el => getComputedStyle(el).display") == shown
        if size is PHONE:
            label = cell.evaluate("el => getComputedStyle(el, '::before').content")
            assert label == '"path"'
        _close(page)


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_a_deep_link_into_600_messages_lands_in_view(
    browser: Browser, server: dict[str, Any], size: dict[str, int]
) -> None:
    page = _page(browser, server, size)
    for line in (101, 333, 599):
        page.goto(f"{server['url']}/#/search")
        page.goto(f"{server['url']}/#/c/{LONG}%40line%3A{line}")
        focus = page.locator("article.msg.focus")
        expect(focus).to_have_attribute("data-ref", f"{LONG}@line:{line}")
        page.wait_for_timeout(2500)  # every message around it laid out
        box = focus.bounding_box()
        view = page.locator("#main").bounding_box()
        assert box and view
        assert view["y"] <= box["y"] and box["y"] + box["height"] <= view["y"] + view["height"], (
            line,
            box,
            view,
        )
    _close(page)


def test_empty_results_say_what_to_try(browser: Browser, server: dict[str, Any]) -> None:
    page = _page(browser, server, PHONE)
    # exact mode: whether a nonsense query finds something by meaning is not this test's
    _settled(page, f"{server['url']}/#/search?q=zzqqxx%20agent:codex&mode=lexical")
    expect(page.locator("#no-results")).to_contain_text("Drop a filter")
    _settled(page, f"{server['url']}/#/conversations?q=zzqqxx")
    expect(page.locator("#conversations .empty")).to_contain_text(
        "No conversation has a message matching"
    )
    for selector in ("#conv-q",):
        assert page.locator(selector).get_attribute("placeholder").startswith("Filter, e.g.")
    _close(page)


def test_a_panel_registers_in_its_slot(browser: Browser, server: dict[str, Any]) -> None:
    """What another page's file does: register a panel; the conversation shows it."""
    page = _page(browser, server, DESK)
    _settled(page, f"{server['url']}/#/search")
    page.evaluate(
        """async () => {
      const views = await import('/ui/views.js');
      views.registerPanel('conversation-toolbar', {
        id: 'probe', render: ({conv}) => Object.assign(document.createElement('span'),
          {id: 'probe', textContent: `probe ${conv.session_id.slice(0, 8)}`}) });
      let twice = null;
      try { views.registerView({name: 'search', mount: () => null}); }
      catch (e) { twice = e.message; }
      window.probeTwice = twice;
    }"""
    )
    assert "registered twice" in page.evaluate("window.probeTwice")
    page.goto(f"{server['url']}/#/c/{LONG}")
    expect(page.locator(".toolbar #probe")).to_have_text("probe 600c0de0")
    _close(page)


def test_an_aider_chat_opens_by_its_short_id(browser: Browser, server: dict[str, Any]) -> None:
    """Aider's session ids hold spaces and '@': links and refs use the typeable id."""
    page = _page(browser, server, DESK)
    _settled(page, f"{server['url']}/#/conversations?q=agent:aider")
    link = page.locator("#conversations tbody a").first
    href = link.get_attribute("href") or ""
    assert href.startswith("#/c/aider-") and "%20" not in href and "%40" not in href
    link.click()
    head = page.locator(".conv-head")
    expect(head).to_contain_text("aider-")
    ref = page.locator("article.msg").nth(2).get_attribute("data-ref") or ""
    assert ref.startswith("aider-") and " " not in ref
    page.goto(f"{server['url']}/#/search")
    page.goto(f"{server['url']}/#/c/{ref}")
    expect(page.locator("article.msg.focus")).to_have_attribute("data-ref", ref)
    _close(page)


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_replies_render_as_markdown_with_a_raw_switch(
    browser: Browser, server: dict[str, Any], size: dict[str, int], tmp_path: Any
) -> None:
    page = _page(browser, server, size)
    page.goto(f"{server['url']}/#/c/{LONG}%40line%3A141")  # (live: never network-idle)
    reply = page.locator("article.role-assistant.kind-message", has_text="Step 140:")
    md = reply.locator(".md")
    expect(md.locator("h4")).to_have_text("Step 140: what changed")  # "## " under the head
    expect(md.locator("p strong").first).to_have_text("case 140")
    expect(md.locator("p em").first).to_have_text("keeps")
    expect(md.locator("ul > li")).to_have_count(3)  # the "1." items after it: a list of their own
    expect(md.locator("ul > li code")).to_have_text("140")
    expect(md.locator(".md-table th")).to_have_text(["file", "lines"])
    expect(md.locator(".md-table td.al-right").first).to_have_text("420")
    expect(md.locator(".codeblock code")).to_contain_text("def step_140(rows):")
    expect(md.locator("ol > li")).to_have_text(["run the tests", "check message 140 in the page"])
    plain = page.locator("article.role-assistant.kind-message", has_text="Step 128:").locator(".md")
    expect(plain.locator("ul > li")).to_have_count(3)
    expect(plain.locator("ol > li")).to_have_count(2)
    assert "**" not in (md.text_content() or "") and "|" not in (md.text_content() or "")
    expect(reply.locator(".md-raw")).to_be_hidden()
    page.wait_for_timeout(800)  # painted (messages off screen are skipped until then)
    page.screenshot(path=str(tmp_path / f"markdown-{size['width']}.png"))
    assert page.evaluate(OFF_SCREEN) == []
    page.locator("#raw-toggle").click()  # the text as written
    expect(md).to_be_hidden()
    expect(reply.locator(".md-raw")).to_contain_text("## Step 140: what changed")
    expect(reply.locator(".md-raw")).to_contain_text("| parser.py | 420 |")
    page.reload()  # the switch is remembered
    expect(page.locator("#raw-toggle")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("article.role-assistant .md").first).to_be_hidden()
    page.locator("#raw-toggle").click()
    expect(page.locator("article.role-assistant .md").first).to_be_visible()
    _close(page)


def test_markdown_is_sanitised_by_construction(browser: Browser, server: dict[str, Any]) -> None:
    """Transcript text is never markup: tags stay text, only http(s)/mailto links are links."""
    page = _page(browser, server, DESK)
    _settled(page, f"{server['url']}/#/search")
    found = page.evaluate(
        """async () => {
      const { markdown } = await import('/ui/markdown.js');
      const el = markdown([
        '# <img src=x onerror="window.owned=1">',
        '[click](javascript:window.owned=1) [ok](https://example.org/a?b=1) <script>x</script>',
        '| a | <b>b</b> |', '| - | - |', '| [x](data:text/html,hi) | **y** |',
        '- <iframe src=/>', '> <style>body{display:none}</style>',
      ].join('\\n'));
      document.body.append(el);
      return {
        tags: [...el.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()),
        hrefs: [...el.querySelectorAll('a')].map((a) => [a.href, a.rel, a.target]),
        text: el.textContent, owned: window.owned || 0,
      };
    }"""
    )
    assert not {"img", "script", "iframe", "style", "b"} & set(found["tags"]), found
    assert found["hrefs"] == [
        ["https://example.org/a?b=1", "noopener noreferrer nofollow", "_blank"]
    ]
    assert '<img src=x onerror="window.owned=1">' in found["text"] and found["owned"] == 0
    assert "click (javascript:window.owned=1)" in found["text"]
    _close(page)


def test_emoji_are_in_the_font_stack(browser: Browser, server: dict[str, Any]) -> None:
    """Transcripts hold emoji: the text and code fonts both end with the colour emoji fonts."""
    page = _page(browser, server, PHONE)
    page.goto(f"{server['url']}/#/c/{LONG}%40line%3A3")
    expect(page.locator("article.msg.focus")).to_have_count(1)
    fonts = page.evaluate(
        "() => [document.body, document.querySelector('.msg-head .when'),"
        " document.querySelector('.md code, .prose code, pre code')]"
        ".filter(Boolean).map((el) => getComputedStyle(el).fontFamily)"
    )
    assert len(fonts) >= 2 and all("Noto Color Emoji" in f for f in fonts), fonts
    _close(page)


def test_ages_and_paths_read_as_on_the_terminal(browser: Browser, server: dict[str, Any]) -> None:
    """Item 10: one age format and one path style: the page's conversation list shows each
    conversation's last activity and project exactly as ``agentdex conversations`` does."""
    page = _page(browser, server, DESK)
    _settled(page, f"{server['url']}/#/conversations")  # (the server indexes the home first)
    shown = page.evaluate(
        """() => [...document.querySelectorAll('#conversations tbody tr')].map((tr) => {
          const href = new URL(tr.querySelector('a').href);
          const [path, query] = href.hash.slice('#/c/'.length).split('?');
          return [new URLSearchParams(query).get('agent'), decodeURIComponent(path),
                  tr.querySelector('td.path').textContent, tr.lastElementChild.textContent];
        })"""
    )
    _close(page)

    env = server["cli_env"]
    listed = json.loads(cli(env, "conversations", "--no-refresh", "--json", "-n", "30").stdout)
    ids = {(c["agent"], c["short_id"]): c["id"] for c in listed["conversations"]}
    code, screen = on_terminal(env, "conversations", "--no-refresh", "-n", "30", columns=300)
    assert code == 0
    rows = [row for row in screen.splitlines() if row.strip()]
    header = rows[0]
    assert header.startswith("agent"), screen[:2000]
    project, title = header.index("project"), header.index("title")
    terminal = {}
    for row in rows[1:31]:
        agent, short = row.split()[:2]
        age = re.search(r"\s(\d+(?:y|mo|d|h|m) ago|just now)\s", row)  # right-aligned
        assert age, row
        place = row[project:title].strip()
        terminal[(agent, ids[(agent, short)])] = (age[1], "" if place == "-" else place)
    assert len(terminal) == 30
    compared = 0
    for agent, conv_id, path, age in shown:
        if (agent, conv_id) in terminal:
            assert (age, path) == terminal[(agent, conv_id)], (agent, conv_id)
            compared += 1
    assert compared == 30
    assert any(path.startswith("~/") for _, path in terminal.values())  # under the home: ~
    assert any(age.endswith("mo ago") or age.endswith("y ago") for age, _ in terminal.values())
