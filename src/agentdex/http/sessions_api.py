"""``/api/v0/sessions``: create, list, show and re-point sessions over HTTP (thin over the API)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentdex.api import sessions as api
from agentdex.http import params

router = APIRouter(tags=["sessions"])

SessionIdParam = Annotated[
    params.SessionId, Path(description="A session id, or a unique prefix of one.")
]


class NewSessionBody(BaseModel):
    """A new session: a work directory, or a worktree (sets the directory too), or neither."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            # working_directory and worktree exclude each other
            "not": {"required": ["working_directory", "worktree"]},
        },
    )

    working_directory: params.Path | None = Field(
        None, description="An existing directory. Not together with worktree."
    )
    worktree: params.WorktreeRef | None = Field(
        None,
        description="Branch or path of a worktree of repo. Not together with working_directory.",
    )
    repo: params.Path | None = Field(
        None, description="Repository of the worktree (default: the server's workspace)."
    )
    label: str | None = None
    agent: str | None = Field(None, description="Command `session run` starts, e.g. 'claude'.")

    @model_validator(mode="after")
    def _one_place(self) -> NewSessionBody:
        if "working_directory" in self.model_fields_set and "worktree" in self.model_fields_set:
            raise ValueError("give working_directory or worktree, not both")
        return self


class WorkdirBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    working_directory: params.Path | None = Field(
        description="The new work directory (an existing directory), or null to clear it."
    )


@router.get("")
def list_sessions(
    workdir: Annotated[
        params.Path | None,
        Query(description="Only sessions whose work directory is this directory or inside it."),
    ] = None,
) -> dict[str, Any]:
    """Sessions, oldest first; ``?workdir=`` keeps those at or inside that directory."""
    return api.list_sessions(workdir)


#: For schema-driven clients (and fuzzers): where a created session's id goes next.
_CREATED_LINKS = {
    "201": {
        "links": {
            "ShowSession": {
                "operationId": "show_session",
                "parameters": {"session_id": "$response.body#/created/id"},
            },
            "SetSessionWorkdir": {
                "operationId": "set_session_workdir",
                "parameters": {"session_id": "$response.body#/created/id"},
            },
        }
    }
}


@router.post("", status_code=201, openapi_extra={"responses": _CREATED_LINKS})
def new_session(request: Request, body: NewSessionBody) -> dict[str, Any]:
    """Create a session; it has no work directory unless one is given."""
    repo = body.repo or getattr(request.app.state, "context_workspace", None)
    created = api.new_session(
        workdir=body.working_directory,
        worktree=body.worktree,
        label=body.label,
        agent=body.agent,
        repo=repo if body.worktree else body.repo,
    )
    return {"created": created}


@router.get("/{session_id}", operation_id="show_session")
def show_session(request: Request, session_id: SessionIdParam) -> dict[str, Any]:
    """One session with its events and linked agent history (409: the prefix is ambiguous)."""
    home = getattr(request.app.state, "home", None)
    return api.show_session(session_id, home=home)


@router.put("/{session_id}/workdir", operation_id="set_session_workdir")
def set_workdir(body: WorkdirBody, session_id: SessionIdParam) -> dict[str, Any]:
    """Set (or, with null, clear) this one session's work directory."""
    return api.set_workdir(session_id, body.working_directory)
