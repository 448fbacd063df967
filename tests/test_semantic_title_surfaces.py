"""A conversation found by its title carries ``why.title`` on every surface.

The library and the CLI are checked in test_semantic_titles.py; here the same title
hit goes through a real ``agentdex serve`` (HTTP ``/api/v0/search?mode=``) and a
real ``agentdex mcp`` over stdio (the search tool's ``mode``), each with the real
model and index in a temp home. The page is checked in test_semantic_ui.py.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from semantic_support import (
    NOTES,
    THROTTLE,
    TITLE,
    TITLE_QUERY,
    TITLED,
    TWIN,
    write_history,
    write_titled,
)


@pytest.fixture
def titled(home: Path, run_cli: Any) -> Path:
    write_history(home)
    write_titled(home)
    done = run_cli("index", "--semantic", "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["semantic"]["run"]["titles_done"] == 1
    return home


def _check_title_hit(data: dict[str, Any], mode: str) -> None:
    top = data["results"][0]
    assert top["session_id"] == TITLED, (mode, data["results"][:3])
    assert top["why"]["match"] == "semantic", mode
    assert top["why"]["title"] == TITLE, mode
    assert top["why"]["similarity"] >= 0.27, mode
    # reported as the conversation's first prompt, a real record `show` opens
    assert top["kind"] == "prompt" and top["ref"].startswith(TITLED + "@"), mode
    # a hit found by its own words says no title
    assert all("title" not in r["why"] for r in data["results"] if r["session_id"] != TITLED)


def _get(info: dict[str, Any], path: str, **params: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{info['url']}{path}?{urlencode(params)}",
        headers={"Authorization": f"Bearer {info['token']}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_http_search_reports_a_title_hit_and_similar_answers(titled: Path) -> None:
    from hardening_support import served

    answers: dict[str, dict[str, Any]] = {}
    with served() as info:
        for mode in ("semantic", "hybrid", "lexical"):
            status, answers[mode] = _get(
                info, "/api/v0/search", q=TITLE_QUERY, mode=mode, refresh="false"
            )
            assert status == 200, answers[mode]
        similar = _get(info, "/api/v0/similar", ref=NOTES, limit="3")
        missing = _get(info, "/api/v0/similar", ref="no-such-session")
    # GET /api/v0/similar: the JSON of `similar --json`, 404 for an unknown conversation
    assert similar[0] == 200, similar
    assert similar[1]["session_id"] == NOTES
    assert similar[1]["results"][0]["session_id"] == TWIN  # the same request word for word
    assert len(similar[1]["results"]) <= 3
    assert missing[0] == 404, missing
    _check_title_hit(answers["semantic"], "semantic")
    _check_title_hit(answers["hybrid"], "hybrid")
    assert answers["hybrid"]["stats"]["search_mode"] == "hybrid"
    # exact matching alone has nothing: the title's words are not in its messages
    assert all(r["session_id"] != TITLED for r in answers["lexical"]["results"])


def test_mcp_search_reports_a_title_hit(titled: Path) -> None:
    from mcp_support import json_of, stdio_session

    async def scenario() -> dict[str, dict[str, Any]]:
        out = {}
        async with stdio_session() as session:
            for mode in ("semantic", "hybrid"):
                result = await session.call_tool("search", {"query": TITLE_QUERY, "mode": mode})
                out[mode] = json_of(result)
        return out

    answers = asyncio.run(scenario())
    _check_title_hit(answers["semantic"], "semantic")
    _check_title_hit(answers["hybrid"], "hybrid")
    # the tool's declared output schema names the field it carries
    from agentdex.mcp.tools.outputs import WHY

    assert WHY["properties"]["title"] == {"type": "string"}


def test_the_terminal_shows_why_each_hit_matched(titled: Path) -> None:
    from corpus_support import on_terminal
    from mcp_support import server_env

    code, screen = on_terminal(
        server_env(), "search", "--semantic", "--no-refresh", TITLE_QUERY, columns=120
    )
    assert code == 0, screen
    lines = screen.splitlines()
    heading = next(i for i, line in enumerate(lines) if "meaning" in line)
    assert "(title)" in lines[heading], screen
    # the next line, the snippet, starts with the title that matched
    assert lines[heading + 1].strip().startswith(f"title “{TITLE}” · ok, go ahead"), screen
    # found both ways: the heading names the exact terms and the similarity
    code, screen = on_terminal(server_env(), "search", "--no-refresh", "retry backoff", columns=160)
    assert code == 0, screen
    heading = next(line for line in screen.splitlines() if "claude-code" in line)
    assert "exact: retry, backoff + meaning 0." in heading, screen
    assert THROTTLE not in heading  # (the ref is on its own line)
