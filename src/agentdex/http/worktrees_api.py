"""``/api/v0/worktrees``: list, add and remove worktrees over HTTP (thin over the API).

Errors map by exit code (400 invalid name / primary, 404 unknown branch or
path, 409 conflict, 422 over the maximum); a dirty worktree answers 409
``{"error": "WORKTREE_DIRTY", "dirty_file_count": n}``.
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from agentdex.api import worktrees as api

router = APIRouter(tags=["worktrees"])


class AddWorktreeBody(BaseModel):
    branch: str = Field(min_length=1)
    create_branch: bool = False
    base_branch: str | None = None


def _repo(request: Request, repo: str | None) -> str:
    """The repository asked for, else the workspace ``serve`` was started for, else cwd."""
    if repo:
        return repo
    workspace = getattr(request.app.state, "context_workspace", None)
    return str(workspace) if workspace else os.getcwd()


@router.get("")
def list_worktrees(request: Request, repo: str | None = Query(None)) -> dict[str, Any]:
    """Every worktree of ``repo`` (default: the server's workspace)."""
    return {"worktrees": api.list_worktrees(_repo(request, repo))}


@router.post("", status_code=201)
def add_worktree(
    request: Request, body: AddWorktreeBody, repo: str | None = Query(None)
) -> dict[str, Any]:
    """Create the sibling worktree for ``branch`` (``create_branch`` makes a new branch)."""
    created = api.add_worktree(
        body.branch, create=body.create_branch, base=body.base_branch, repo=_repo(request, repo)
    )
    return {"created": created}


@router.delete("", response_model=None)
def remove_worktree(
    request: Request,
    path: str = Query(..., min_length=1),
    force: bool = Query(False),
    repo: str | None = Query(None),
) -> dict[str, Any] | JSONResponse:
    """Remove a linked worktree and detach the sessions bound to it."""
    try:
        return api.remove_worktree(path, force=force, repo=_repo(request, repo))
    except api.WorktreeDirtyError as exc:
        body = {
            "error": exc.code,
            "message": exc.message,
            "dirty_file_count": exc.dirty_file_count,
        }
        return JSONResponse(status_code=409, content=body)
