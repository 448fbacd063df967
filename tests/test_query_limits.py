"""Hostile queries get a one-line usage error on every surface, never a traceback."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agentdex.errors import UsageError
from agentdex.http.app import create_app
from agentdex.search.query import MAX_DEPTH, MAX_QUERY_CHARS, parse_query
from hardening_support import child_env
from mcp_support import stdio_session, text_of, write_claude_session

#: (name, query, regex): each is within the 4,000-character limit
DEEP = [
    ("500 nested parentheses", "(" * 500 + "x" + ")" * 500, False),
    ("3,990 leading dashes", "-" * 3990 + "x", False),
    ("990 NOTs", "NOT " * 990 + "x", False),
    ("500 standalone regex groups", "( " * 500 + "x" + " )" * 500, True),
]


@pytest.mark.parametrize(("name", "query", "regex"), DEEP, ids=[d[0] for d in DEEP])
def test_deep_queries_are_a_usage_error(name: str, query: str, regex: bool) -> None:
    assert len(query) <= MAX_QUERY_CHARS, name
    with pytest.raises(UsageError, match="nests too deeply"):
        parse_query(query, regex=regex)


def test_nesting_up_to_the_limit_still_parses() -> None:
    node = parse_query("(" * MAX_DEPTH + "x" + ")" * MAX_DEPTH)
    assert node is not None
    assert parse_query("-" * (MAX_DEPTH // 2) + "x") is not None
    flat = " ".join(f"NOT w{i}" for i in range(60))  # many NOTs side by side nest nothing
    assert parse_query(flat) is not None


def test_cli_deep_query_is_one_line_exit_2(run_cli: Any) -> None:
    for name, query, regex in DEEP:
        args = ["search", "--no-refresh", *(["-E"] if regex else []), "--", query]
        done = run_cli(*args)
        assert done.returncode == 2, (name, done.stderr[-300:])
        assert done.stderr.count("\n") == 1 and "nests too deeply" in done.stderr, name


def test_non_utf8_bytes_in_a_query_are_a_clean_error(tmp_path: Path) -> None:
    for args in ([b"search", b"\xff"], [b"search", b"--json", b"ab\xffc"]):
        done = subprocess.run(
            [sys.executable.encode(), b"-m", b"agentdex", *args],
            capture_output=True,
            env={k.encode(): v.encode() for k, v in child_env().items()},
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
        stderr = done.stderr.decode("utf-8", "replace")
        assert done.returncode == 2, stderr
        assert stderr.count("\n") == 1 and "not valid UTF-8: byte 0xff" in stderr, stderr
        if b"--json" in args:  # a JSON run gets its error as JSON on stdout too
            assert json.loads(done.stdout)["error"]["code"] == "USAGE"
        else:
            assert done.stdout == b""


def test_http_deep_query_is_400() -> None:
    client = TestClient(create_app(token="t"))
    headers = {"Authorization": "Bearer t"}
    for name, query, regex in DEEP:
        params = {"q": query, "regex": str(regex).lower(), "refresh": "false"}
        answer = client.get("/api/v0/search", params=params, headers=headers)
        assert answer.status_code == 400, (name, answer.text[:200])
        assert "nests too deeply" in answer.json()["message"]
        listed = client.get("/api/v0/conversations", params=params, headers=headers)
        assert listed.status_code == 400, name


def test_mcp_deep_query_is_a_tool_error(home: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(cwd=home) as session:
            for name, query, regex in DEEP:
                answer = await session.call_tool("search", {"query": query, "regex": regex})
                assert answer.is_error and "nests too deeply" in text_of(answer), name
                check = await session.call_tool("validate_query", {"query": query})
                assert not check.is_error and '"valid":false' in text_of(check), name
            assert not (await session.call_tool("validate_query", {"query": "x"})).is_error

    asyncio.run(scenario())


def test_walks_of_a_maximal_tree_stay_within_the_stack(home: Path) -> None:
    """The deepest accepted query goes through the whole search path without RecursionError."""
    from agentdex.api import search as api

    write_claude_session(home, "deep0000-0001", home / "p", [("user", "y marks the spot")])
    query = "(" * (MAX_DEPTH - 1) + "y -x" + ")" * (MAX_DEPTH - 1)  # NOT is the last level
    assert api.validate_query(query).valid
    result = api.search(query, home=str(home))
    assert result.status == "ok" and result.stats["total"] == 1
