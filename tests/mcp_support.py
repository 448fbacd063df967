"""Helpers for the MCP tests: a real ``agentdex mcp`` subprocess, SDK clients, sample stores.

The server always runs as ``python -m agentdex mcp`` with the hermetic env of
the calling test (HOME, XDG and agentdex dirs in tmp, PYTHONPATH = src).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

import agentdex

SRC_DIR = Path(agentdex.__file__).resolve().parent.parent

TOOL_NAMES = {
    "search",
    "show_session",
    "list_sessions",
    "list_sources",
    "workspace_context",
    "list_worktrees",
    "validate_query",
    "usage",
}


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The hermetic environment (set by conftest's autouse fixture) plus PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC_DIR) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("COLUMNS", None)
    env.update(extra or {})
    return env


@asynccontextmanager
async def stdio_session(
    *args: str,
    mcp_args: tuple[str, ...] = (),
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with ``python -m agentdex [args] mcp [mcp_args]``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentdex", *args, "mcp", *mcp_args],
        env=server_env(env),
        cwd=str(cwd) if cwd else None,
    )
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def text_of(result: CallToolResult) -> str:
    """The text of a tool result (agentdex tools answer with one text block)."""
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def json_of(result: CallToolResult) -> dict[str, Any]:
    """A successful tool result's JSON payload."""
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = json.loads(text_of(result))
    return data


def unavailable(result: CallToolResult) -> bool:
    return bool(result.is_error) and "not available in this build" in text_of(result)


def api_present(module: str, attr: str) -> bool:
    """Is ``agentdex.api.<module>.<attr>`` in this build?"""
    if importlib.util.find_spec(f"agentdex.api.{module}") is None:
        return False
    return hasattr(importlib.import_module(f"agentdex.api.{module}"), attr)


def require_api(module: str, attr: str) -> None:
    """Skip (documented reason) when a tool's library API is not in this build yet."""
    if not api_present(module, attr):
        pytest.skip(f"agentdex.api.{module}.{attr} is not in this build: the tool says so")


def require_parser(module: str) -> None:
    if importlib.util.find_spec(f"agentdex.parsers.{module}") is None:
        pytest.skip(f"agentdex.parsers.{module} is not in this build")


# -- sample stores (shapes per shared/STORES.md) -----------------------------------------


def claude_slug(cwd: Path) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(cwd))


def _iso(start: str, seconds: int) -> str:
    """``start`` (``YYYY-MM-DDTHH:MM``) plus ``seconds``, as an ISO UTC timestamp."""
    moment = datetime.fromisoformat(start).replace(tzinfo=UTC) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def write_claude_session(
    home: Path,
    session_id: str,
    cwd: Path,
    turns: list[tuple[str, str]],
    *,
    start: str = "2026-11-20T09:00",
) -> Path:
    """A Claude Code transcript: ``turns`` are (role, text) pairs, one line each."""
    folder = home / ".claude" / "projects" / claude_slug(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    lines = []
    parent = None
    for i, (role, text) in enumerate(turns):
        uuid = f"{session_id[:8]}-{i:04d}"
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            message.update(model="claude-test", id=f"msg_{i}", type="message")
        lines.append(
            {
                "type": role,
                "uuid": uuid,
                "parentUuid": parent,
                "isSidechain": False,
                "sessionId": session_id,
                "cwd": str(cwd),
                "gitBranch": "main",
                "version": "2.0.0",
                "timestamp": _iso(start, i),
                "message": message,
            }
        )
        parent = uuid
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_codex_session(
    home: Path, session_id: str, cwd: Path, turns: list[tuple[str, str]], *, day: str = "20"
) -> Path:
    """A Codex rollout: session_meta then one response_item message per turn."""
    folder = home / ".codex" / "sessions" / "2026" / "11" / day
    folder.mkdir(parents=True, exist_ok=True)
    stamp = f"2026-11-{day}T10-00-00"
    path = folder / f"rollout-{stamp}-{session_id}.jsonl"
    ts = f"2026-11-{day}T10:00:00.000Z"
    lines: list[dict[str, Any]] = [
        {
            "timestamp": ts,
            "type": "session_meta",
            "payload": {
                "id": session_id,
                "timestamp": ts,
                "cwd": str(cwd),
                "originator": "codex_cli_rs",
                "cli_version": "0.50.0",
                "git": {"branch": "main"},
            },
        }
    ]
    for i, (role, text) in enumerate(turns):
        kind = "input_text" if role == "user" else "output_text"
        lines.append(
            {
                "timestamp": f"2026-11-{day}T10:00:{i + 1:02d}.000Z",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": role,
                    "content": [{"type": kind, "text": text}],
                },
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
