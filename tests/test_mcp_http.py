"""MCP over streamable HTTP under the ``agentdex serve`` app, on a real uvicorn server.

The server binds 127.0.0.1 on a free port inside the test, answers a bounded
number of requests and is stopped by the test itself.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from agentdex.asgi import MCP_PATH, build_app
from mcp_support import TOOL_NAMES, json_of, server_env, write_claude_session

TOKEN = "test-token-0123456789"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def served(home: Path) -> Iterator[str]:
    """``build_app`` on uvicorn at 127.0.0.1:<free port>; yields the base URL."""
    app = build_app(TOKEN, home=str(home), cwd=str(home))
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        assert not thread.is_alive()


async def _session_calls(url: str, token: str) -> tuple[set[str], dict[str, Any]]:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        sources = json_of(await session.call_tool("list_sources", {}))
        bad = await session.call_tool("list_sources", {"limit": "many"})
        assert bad.is_error
        context = json_of(await session.call_tool("workspace_context", {}))
        return names, {**sources, "default_workspace": context["workspace"]}


def test_mcp_over_http_with_the_serve_token(served: str, home: Path) -> None:
    path = write_claude_session(home, "4770aaaa-0001", home / "shop", [("user", "hello")])
    names, sources = asyncio.run(_session_calls(served + MCP_PATH, TOKEN))
    assert names == TOOL_NAMES
    assert str(path) in json.dumps(sources)


def test_mcp_without_or_with_a_wrong_token_is_401(served: str) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=served, timeout=10) as client:
        for auth in (None, "Bearer wrong-token", f"Basic {TOKEN}", TOKEN):
            sent = dict(headers) if auth is None else {**headers, "Authorization": auth}
            response = client.post(MCP_PATH, json=init, headers=sent)
            assert response.status_code == 401, auth
            assert response.headers["www-authenticate"] == "Bearer"
        # The serve token itself opens it, and the REST API takes the very same token.
        good = {**headers, "Authorization": f"Bearer {TOKEN}"}
        assert client.post(MCP_PATH, json=init, headers=good).status_code == 200
        rest = "/api/v0/context/snapshot"
        assert client.get(rest).status_code == 401
        assert client.get(rest, headers={"Authorization": f"Bearer {TOKEN}"}).status_code != 401

    # The SDK client itself is refused too (it reports the 401 as an error response).
    with pytest.raises(ExceptionGroup) as refused:
        asyncio.run(asyncio.wait_for(_session_calls(served + MCP_PATH, "wrong-token"), 20))
    assert refused.group_contains(MCPError, match="error response")


@pytest.mark.serial
def test_agentdex_serve_process_serves_mcp_behind_its_token(home: Path) -> None:
    """`agentdex serve` as a real process: MCP at /mcp with the printed token, 401 without."""
    path = write_claude_session(home, "5e7e0000-0001", home / "shop", [("user", "served")])
    workspace = home / "ws"
    workspace.mkdir()
    command = ["-m", "agentdex", "--home", str(home), "serve", "--port", "0", "--json"]
    proc = subprocess.Popen(
        [sys.executable, *command, "--workspace", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=server_env(),
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["url"].startswith("http://127.0.0.1:")
        assert info["mcp"] == info["url"] + MCP_PATH
        names, sources = asyncio.run(_session_calls(info["mcp"], info["token"]))
        assert names == TOOL_NAMES
        assert str(path) in json.dumps(sources)  # the global --home reached the MCP tools
        assert sources["default_workspace"] == str(workspace.resolve())  # --workspace too
        response = httpx.post(info["mcp"], json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=10)
