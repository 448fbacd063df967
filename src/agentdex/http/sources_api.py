"""``/api/v0/sources``: every agent store found and whether it parsed (``agentdex sources``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict

from agentdex.api import history as api

router = APIRouter(tags=["history"])


class StoreFile(BaseModel):
    model_config = ConfigDict(extra="allow")

    agent: str
    store: str
    path: str
    format: str
    holds: str
    size: int
    modified: str | None
    coverage: str
    host: str | None
    parse_status: str | None = None
    diagnostics: list[dict[str, Any]] | None = None


class SourcesBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    home: str
    warnings: list[str]
    sources: list[StoreFile]


@router.get("", response_model=SourcesBody, response_model_exclude_unset=True)
def sources(request: Request, check: bool = True) -> dict[str, Any]:
    """Same JSON as ``agentdex sources --json``; ``check=false`` skips the parse probe."""
    return api.sources(getattr(request.app.state, "home", None), check=check)
