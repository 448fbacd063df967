"""``agentdex serve --team``: HTTP and MCP over the team database (a real server process)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentdex.api import team as api
from conftest import SRC_DIR
from team_helpers import claude_session, make_team, random_home


@pytest.fixture
def served(home: Path, pg_server: Any, team_db: str) -> Any:
    random_home(home, sessions=4, per_session=6, seed=5)
    claude_session(home, "shop", "5e7e7ea0-1111-4222-8333-000000000001", ["served retry prompt"])
    team = make_team(pg_server, team_db)
    api.push(team.writers["m1"], machine="laptop")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentdex", "serve", "--team", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC_DIR), "AGENTDEX_TEAM_URL": team.reader},
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        yield team, info
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_http_routes_read_the_team_database(served: Any) -> None:
    _team, info = served
    assert info["team"].startswith("postgresql://") and ":***@" in info["team"]
    headers = {"Authorization": f"Bearer {info['token']}"}
    with httpx.Client(base_url=info["url"], headers=headers, timeout=30) as client:
        found = client.get("/api/v0/search", params={"q": "served retry"}).json()
        assert [r["machine"] for r in found["results"]] == ["laptop"]
        ref = found["results"][0]["ref"]
        convs = client.get("/api/v0/conversations", params={"limit": 10}).json()
        assert len(convs["conversations"]) == 5
        assert {c["machine"] for c in convs["conversations"]} == {"laptop"}
        some = client.get("/api/v0/conversations", params={"q": "served"}).json()
        assert [c["session_id"] for c in some["conversations"]] == [ref.split("@")[0]]
        shown = client.get("/api/v0/show", params={"ref": ref}).json()
        assert shown["machine"] == "laptop" and shown["focus"] == 0
        assert shown["records"][0]["text"] == "served retry prompt"
        record = client.get("/api/v0/show/record", params={"ref": ref}).json()
        assert record["text"] == "served retry prompt"
        missing = client.get("/api/v0/show", params={"ref": "nope-not-there"})
        assert missing.status_code == 404
        facets = client.get("/api/v0/facets", params={"q": "served"}).json()
        assert facets["total"] == 1 and facets["facets"]["agent"]["values"][0]["count"] == 1
        every = client.get("/api/v0/facets").json()
        assert every["total"] == 4 * 6 + 1
        bad = client.get("/api/v0/search", params={"q": '"open'})
        assert bad.status_code == 400


def test_mcp_search_takes_a_team_scope(served: Any) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    _, info = served

    async def call() -> dict[str, Any]:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {info['token']}"})
        async with (
            client,
            streamable_http_client(info["mcp"], http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("search", {"query": "served", "scope": "team"})
            assert not result.is_error, result
            return dict(result.structured_content or {})

    data = asyncio.run(asyncio.wait_for(call(), 60))
    assert [r["machine"] for r in data["results"]] == ["laptop"]
    assert data["run"]["status"] == "complete"


def test_serve_team_without_a_database_fails_before_binding(run_cli: Any) -> None:
    done = run_cli("serve", "--team", "--port", "0", env={"AGENTDEX_TEAM_URL": ""})
    assert done.returncode == 2 and "no team database" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("size", [(1280, 800), (390, 844)])
def test_web_explorer_over_the_team(served: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    """Real headless Chromium: search the team, see the machine, open the conversation."""
    from ui_support import browser_available, launch_args

    why = browser_available()
    if why:
        pytest.skip(why)
    from playwright.sync_api import expect, sync_playwright

    _, info = served
    with sync_playwright() as play:
        browser = play.chromium.launch(**launch_args())
        context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        context.set_default_timeout(60_000)
        context.add_init_script(f"sessionStorage.setItem('agentdex.token', {info['token']!r})")
        page = context.new_page()
        page.goto(f"{info['url']}/#/search")
        page.locator("#q").press_sequentially("served retry", delay=30)
        expect(page.locator("#result-count")).to_have_text("1 result")
        expect(page.locator(".result .badge.machine")).to_have_text("laptop")
        page.screenshot(path=str(tmp_path / f"team-search-{size[0]}.png"))
        page.locator(".result a.ref").first.click()
        expect(page.locator("article.msg.focus")).to_contain_text("served retry prompt")
        expect(page.locator(".machine-note .badge.machine")).to_have_text("laptop")
        page.screenshot(path=str(tmp_path / f"team-conversation-{size[0]}.png"))
        shots = os.environ.get("AGENTDEX_TEAM_SHOTS")
        if shots:  # for looking at them by hand
            for png in tmp_path.glob("team-*.png"):
                Path(shots).mkdir(parents=True, exist_ok=True)
                (Path(shots) / png.name).write_bytes(png.read_bytes())
        browser.close()
