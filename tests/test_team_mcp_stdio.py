"""``agentdex mcp`` over stdio (a real subprocess, the MCP SDK's client) searching with
``scope: "team"`` against a real PostgreSQL (conftest's ``pg_server``): the team scope
reads the team database named by ``AGENTDEX_TEAM_URL``, the local scope this machine's
index, and without a team database the team scope is a tool error naming the fix."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentdex.api import team as api
from mcp_support import json_of, stdio_session, text_of
from team_helpers import claude_session, make_team, random_home

PUSHED = "5e7e7ea0-2222-4333-8444-000000000001"
LOCAL_ONLY = "5e7e7ea0-2222-4333-8444-000000000002"


def _calls(env: dict[str, str], calls: list[dict[str, Any]]) -> list[Any]:
    async def run() -> list[Any]:
        async with stdio_session(env=env) as session:
            return [await session.call_tool("search", arguments) for arguments in calls]

    return asyncio.run(asyncio.wait_for(run(), 120))


def test_mcp_stdio_searches_the_team_scope(home: Path, pg_server: Any, team_db: str) -> None:
    random_home(home, sessions=3, per_session=4, seed=7)
    claude_session(home, "shop", PUSHED, ["stdio needle retry prompt", "a reply about the needle"])
    team = make_team(pg_server, team_db)
    api.push(team.writers["m1"], machine="laptop")
    # written after the push: only the local scope can find it
    claude_session(home, "shop", LOCAL_ONLY, ["stdio needle seen only here"])

    team_hits, regex_hits, local_hits = _calls(
        {"AGENTDEX_TEAM_URL": team.reader},
        [
            {"query": "stdio needle", "scope": "team", "full_text": True},
            {"query": "st[d]io ne+dle", "scope": "team", "regex": True, "full_text": True},
            {"query": "stdio needle", "full_text": True},
        ],
    )
    for result in (team_hits, regex_hits, local_hits):
        assert not result.is_error, text_of(result)
    team_data, regex_data, local_data = map(json_of, (team_hits, regex_hits, local_hits))

    assert {r["session_id"] for r in team_data["results"]} == {PUSHED}
    assert {r["machine"] for r in team_data["results"]} == {"laptop"}
    assert all("needle" in r["text"] for r in team_data["results"])
    assert team_data["run"]["status"] == "complete"
    # the same hits, in the same order, as the library's team search of that database
    direct = api.search("stdio needle", url=team.reader).to_json()
    assert [r["ref"] for r in team_data["results"]] == [r["ref"] for r in direct["results"]]
    assert [r["ref"] for r in regex_data["results"]] == [r["ref"] for r in team_data["results"]]

    assert {r["session_id"] for r in local_data["results"]} == {PUSHED, LOCAL_ONLY}
    assert all(r.get("machine") is None for r in local_data["results"])


def test_mcp_stdio_team_scope_without_a_database_is_a_tool_error(home: Path) -> None:
    claude_session(home, "shop", PUSHED, ["stdio needle retry prompt"])
    (result,) = _calls({"AGENTDEX_TEAM_URL": ""}, [{"query": "needle", "scope": "team"}])
    assert result.is_error
    message = text_of(result)
    assert "no team database" in message and "AGENTDEX_TEAM_URL" in message
    assert "Traceback" not in message
