"""``/api/v0/worktrees``: list, add and remove worktrees over HTTP (thin over the API).

Errors map by exit code (400 a parameter the schema refuses, 404 unknown
branch, path or repository, 409 conflict: already checked out, target
exists, the primary worktree, dirty; 422 over the maximum); a dirty worktree
answers 409 ``{"error": "WORKTREE_DIRTY", "dirty_file_count": n}``.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentdex.api import worktrees as api
from agentdex.http import params

router = APIRouter(tags=["worktrees"])

RepoQuery = Annotated[
    params.Path | None,
    Query(description="Any directory inside the repository (default: the server's)."),
]


class AddWorktreeBody(BaseModel):
    """A branch to check out; ``base_branch`` only together with ``create_branch: true``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"required": ["base_branch"], "properties": {"base_branch": {"type": "string"}}},
            "then": {
                "required": ["create_branch"],
                "properties": {"create_branch": {"const": True}},
            },
        },
    )

    branch: params.Branch
    create_branch: bool = Field(False, description="Create the branch (from base_branch or HEAD).")
    base_branch: params.Revision | None = Field(
        None, description="Start point of the new branch; needs create_branch: true."
    )

    @model_validator(mode="after")
    def _base_needs_create(self) -> AddWorktreeBody:
        if self.base_branch is not None and not self.create_branch:
            raise ValueError("base_branch needs create_branch: true")
        return self


class ConflictBody(BaseModel):
    """agentdex's error body; a dirty worktree adds how many files are dirty."""

    error: str
    message: str
    detail: Any = None
    dirty_file_count: int | None = None


def _repo(request: Request, repo: str | None) -> str:
    """The repository asked for, else the workspace ``serve`` was started for, else cwd."""
    if repo:
        return repo
    workspace = getattr(request.app.state, "context_workspace", None)
    return str(workspace) if workspace else os.getcwd()


@router.get("")
def list_worktrees(request: Request, repo: RepoQuery = None) -> dict[str, Any]:
    """Every worktree of ``repo`` (default: the server's workspace)."""
    return {"worktrees": api.list_worktrees(_repo(request, repo))}


_CREATED_LINKS = {
    "201": {
        "links": {
            "RemoveWorktree": {
                "operationId": "remove_worktree",
                "parameters": {"path": "$response.body#/created/path"},
            }
        }
    }
}


@router.post("", status_code=201, openapi_extra={"responses": _CREATED_LINKS})
def add_worktree(request: Request, body: AddWorktreeBody, repo: RepoQuery = None) -> dict[str, Any]:
    """Create the sibling worktree for ``branch`` (``create_branch`` makes a new branch)."""
    created = api.add_worktree(
        body.branch, create=body.create_branch, base=body.base_branch, repo=_repo(request, repo)
    )
    return {"created": created}


@router.delete(
    "",
    operation_id="remove_worktree",
    response_model=None,
    responses={409: {"model": ConflictBody, "description": "Conflict (a dirty worktree: how)"}},
)
def remove_worktree(
    request: Request,
    path: Annotated[params.WorktreePath, Query(description="The linked worktree's path.")],
    force: Annotated[
        bool, Query(description="Remove even with uncommitted or untracked files.")
    ] = False,
    repo: RepoQuery = None,
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
