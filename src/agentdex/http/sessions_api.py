"""``/api/v0/sessions``: create, list, show and re-point sessions over HTTP (thin over the API)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from agentdex.api import sessions as api

router = APIRouter(tags=["sessions"])


class NewSessionBody(BaseModel):
    working_directory: str | None = None
    worktree: str | None = None
    repo: str | None = None
    label: str | None = None
    agent: str | None = None


class WorkdirBody(BaseModel):
    working_directory: str | None


@router.get("")
def list_sessions(workdir: str | None = Query(None)) -> dict[str, Any]:
    """Sessions, oldest first; ``?workdir=`` keeps those at or inside that directory."""
    return api.list_sessions(workdir)


@router.post("", status_code=201)
def new_session(body: NewSessionBody) -> dict[str, Any]:
    """Create a session; it has no work directory unless one is given."""
    created = api.new_session(
        workdir=body.working_directory,
        worktree=body.worktree,
        label=body.label,
        agent=body.agent,
        repo=body.repo,
    )
    return {"created": created}


@router.get("/{session_id}")
def show_session(session_id: str, request: Request) -> dict[str, Any]:
    """One session with its events and linked agent history."""
    home = getattr(request.app.state, "home", None)
    return api.show_session(session_id, home=home)


@router.put("/{session_id}/workdir")
def set_workdir(session_id: str, body: WorkdirBody) -> dict[str, Any]:
    """Set (or, with null, clear) this one session's work directory."""
    return api.set_workdir(session_id, body.working_directory)
