"""The web explorer says when an answer is partial: a first build that has committed only
the newest files (the HTTP JSON's ``status: partial`` and ``coverage``) shows a note with
how much was searched, at desktop and phone size, and the page goes on asking until the
index is complete, when the note goes and every result is there.

Real Claude Code transcripts under a temporary home; a real ``agentdex search`` stops its
first build after one file (deadline 0 s); the test holds the index's writer lock so the
server's own refresh is skipped ("another process is building it") until it lets go.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentdex.index.lock import WriterLock
from ui_support import browser_available, browser_context, launch_args, server_env, ui_server

REASON = browser_available()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

from playwright.sync_api import Browser, expect, sync_playwright  # noqa: E402

pytestmark = pytest.mark.serial
FILES = 6
STOP_AT_ONCE = {
    "AGENTDEX_FIRST_ANSWER_BYTES": "0",
    "AGENTDEX_FIRST_ANSWER_SECONDS": "0",
    "AGENTDEX_BACKGROUND_BUILD": "0",
}


def _write_transcripts(home: Path) -> None:
    """Six one-prompt transcripts (``wombat N``); file N is N hours old."""
    folder = home / ".claude" / "projects" / "-work-app"
    folder.mkdir(parents=True)
    now = time.time()
    for n in range(FILES):
        line = {
            "type": "user",
            "sessionId": f"c{n}",
            "uuid": f"u-{n}",
            "cwd": "/work/app",
            "timestamp": "2026-11-01T10:00:00Z",
            "message": {"role": "user", "content": f"why does wombat {n} burrow"},
        }
        path = folder / f"c{n}.jsonl"
        path.write_bytes(orjson.dumps(line) + b"\n")
        os.utime(path, (now - 3600 * n, now - 3600 * n))


@pytest.fixture
def partial_home(tmp_path: Path) -> Iterator[dict[str, Any]]:
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    data.mkdir()
    (data / "config.toml").write_text("")
    _write_transcripts(home)
    env = {**server_env(home, data), **STOP_AT_ONCE}
    first = subprocess.run(
        [sys.executable, "-m", "agentdex", "search", "--json", "wombat"],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert first.returncode == 7, first.stderr  # partial: one file of six committed
    assert orjson.loads(first.stdout)["coverage"]["files"] == 1
    (lock_path,) = data.glob("homes/*/index/writer.lock")  # the index that search built
    lock = WriterLock(lock_path)
    lock.acquire(0)
    try:
        with ui_server(home, data, home, {"AGENTDEX_BACKGROUND_EMBED": "0"}) as info:
            yield {**info, "lock": lock, "shots": tmp_path}
    finally:
        lock.release()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(**launch_args())
        yield launched
        launched.close()


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_a_partial_answer_says_so_and_fills_in(
    browser: Browser, partial_home: dict[str, Any], size: tuple[int, int]
) -> None:
    context = browser_context(browser, partial_home["token"])
    page = context.new_page()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(f"{partial_home['url']}/#/search?q=wombat")
        note = page.locator("#index-note")
        expect(note).to_contain_text("Partial: the index is still being built")
        expect(note).to_contain_text("searched the newest")
        expect(note).to_have_attribute("data-partial", "coverage")
        expect(page.locator("#result-count")).to_have_attribute("data-total", "1")
        box = note.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= size[0] + 1
        page.screenshot(path=str(partial_home["shots"] / f"partial-{size[0]}.png"))
        partial_home["lock"].release()  # the "other process" is done: the page's retry builds
        expect(page.locator("#result-count")).to_have_attribute("data-total", str(FILES))
        expect(page.locator("#index-note")).to_have_count(0)
        assert errors == []
    finally:
        context.close()
