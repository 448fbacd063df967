"""The JSON bodies of ``/api/v0/context`` (:mod:`agentdex.http.context_api`), as pydantic
models: what the OpenAPI schema publishes and responses are checked against."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentdex.http import params


class RecordedResourceBody(BaseModel):
    """A resource without its text (as ``/diff`` lists added and removed ones)."""

    id: str
    kind: str
    source: str
    source_path: str | None
    scope: str
    root: str
    status: str
    error: str | None
    content_hash: str | None
    size: int
    name: str | None
    description: str | None
    servers: list[str] | None
    target: str | None
    aliases: list[str]
    payload_bytes: int


class ResourceBody(RecordedResourceBody):
    payload: str | None


class RootBody(BaseModel):
    path: str
    scope: str
    status: str
    source_path: str | None
    error: str | None


class SnapshotBody(BaseModel):
    schema_version: int
    version: int
    workspace: str
    aggregate_hash: str
    total_payload_bytes: int
    resource_count: int
    status_counts: dict[str, int]
    payload_included: bool
    error: str | None
    roots: list[RootBody]
    resources: list[ResourceBody]


class VersionInfoBody(BaseModel):
    """One recorded version of a workspace's context."""

    version: int = Field(description="Its number in the workspace's history (v1, v2, ...).")
    version_id: int
    recorded_at: str = Field(description="When this content was first observed (ISO UTC).")
    last_seen_at: str = Field(description="The latest observation that still found it.")
    recorded_by: str = Field(description="context, watch, http, mcp, index or show.")
    aggregate_hash: str
    resource_count: int
    error: str | None


class HistoryBody(VersionInfoBody):
    at: str | None = Field(description="The time asked for (null for a vN reference).")
    match: Literal["in_force", "earliest_after"]
    note: str | None


class HistoricalSnapshotBody(SnapshotBody):
    history: HistoryBody


class ChangesBody(BaseModel):
    added: int
    removed: int
    changed: int


class VersionListItem(VersionInfoBody):
    changes: ChangesBody | None = Field(description="Against the previous version (null: first).")


class VersionsBody(BaseModel):
    workspace: str
    recording: bool
    total: int
    versions: list[VersionListItem]


class DiffSideBody(VersionInfoBody):
    at: str | None


class FieldChangeBody(BaseModel):
    from_: Any = Field(alias="from")
    to: Any


class ChangedResourceBody(BaseModel):
    id: str
    kind: str
    source: str
    fields: dict[str, FieldChangeBody]
    diff: str | None = Field(description="Unified diff of the text, when both texts are stored.")
    diff_note: str | None = Field(description="Why there is no text diff.")


class ErrorChangeBody(BaseModel):
    from_: str | None = Field(alias="from")
    to: str | None


class DiffBody(BaseModel):
    workspace: str
    from_: DiffSideBody = Field(alias="from")
    to: DiffSideBody
    identical: bool
    added: list[RecordedResourceBody]
    removed: list[RecordedResourceBody]
    changed: list[ChangedResourceBody]
    error: ErrorChangeBody | None


class SourceBody(BaseModel):
    path: str
    added_at: str | None
    workspace: str | None
    status: str


class SourcesBody(BaseModel):
    sources: list[SourceBody]


class AddSourceRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: params.SourcePath = Field(description="Absolute or ~/ path under an allowed root.")
    workspace: params.Path | None = Field(
        default=None, description="Workspace that makes the path allowed (default: server's)."
    )


class AddedSourceBody(SourceBody):
    created: bool


class NotFoundBody(BaseModel):
    """agentdex's error body, or the router's own ``{"detail"}`` for an unroutable path."""

    error: str | None = None
    message: str | None = None
    detail: str | None = None
