"""``/api/v0/archive``: the archive's status, read-only (the same JSON as ``agentdex archive``).

Forgetting, pruning and exporting stay on the command line: they remove data
for good or write files, and ``forget`` asks for confirmation on a terminal;
the HTTP API serves reads (and the non-destructive worktree/session actions)
to pages and tools on this machine (``docs/archive.md``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from agentdex.api import archive as archive_api

router = APIRouter(tags=["archive"])


class AgentArchiveBody(BaseModel):
    agent: str
    conversations: int
    records: int
    text_bytes: int
    stored_bytes: int
    raw_lines: int


class GoneBody(BaseModel):
    records: int
    conversations: int


class ArchiveBody(BaseModel):
    """Same JSON as ``agentdex archive --json``."""

    path: str
    enabled: bool
    bytes: int
    index_bytes: int
    records: int
    conversations: int
    text_bytes: int
    raw_lines: int
    forgotten: int
    agents: list[AgentArchiveBody]
    source_gone: GoneBody


@router.get("", response_model=ArchiveBody)
def status(request: Request) -> dict[str, Any]:
    """Where the archive is, its size per agent, and what only it still holds."""
    return archive_api.status(home=getattr(request.app.state, "home", None))
