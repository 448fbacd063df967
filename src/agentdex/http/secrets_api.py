"""``/api/v0/secrets``: where secrets were found (agent, conversation, kind, when), never
their values: the same JSON as ``agentdex secrets --json``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from agentdex.api import secrets as api

router = APIRouter(tags=["history"])


@router.get("")
def secrets(
    request: Request,
    agent: str | None = Query(None, max_length=64, pattern=r"^[a-z0-9-]+$"),
    refresh: bool = True,
) -> dict[str, Any]:
    """``{status, redact, findings, conversations, stats}``: each finding is one masked
    secret (agent, session_id, ref, kind, timestamp); values are never stored."""
    home = getattr(request.app.state, "home", None)
    return api.found(home=home, refresh_first=refresh, agent=agent).to_json()
