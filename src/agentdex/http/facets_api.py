"""``/api/v0/facets``: how the records matching a query split by agent, project, branch,
worktree, role, kind and age (a thin shell over :mod:`agentdex.api.facets`)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict

from agentdex.api import facets as api

router = APIRouter(tags=["search"])


class FacetValue(BaseModel):
    value: str
    count: int
    filter: str


class Facet(BaseModel):
    values: list[FacetValue]
    missing: int
    others: int
    distinct: int


class TimeBucket(BaseModel):
    filter: str
    label: str
    count: int


class FacetsBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    query: str
    status: str
    total: int
    facets: dict[str, Facet]
    time: list[TimeBucket]
    undated: int
    stats: dict[str, Any]


@router.get("", response_model=FacetsBody)
def facets(
    request: Request,
    q: str = Query("", description="Query (docs/query-language.md); empty: every record."),
    case: Literal["smart", "insensitive", "sensitive"] = "smart",
    regex: bool = False,
    word: bool = False,
    top: int = Query(api.DEFAULT_TOP, ge=1, le=api.MAX_TOP, description="Values per facet."),
    refresh: bool = False,
) -> dict[str, Any]:
    """Facet counts over the records ``GET /search`` would return for ``q``."""
    return api.facets(
        q,
        home=getattr(request.app.state, "home", None),
        refresh_first=refresh,
        regex=regex,
        word=word,
        case=case,
        top=top,
        team_url=getattr(request.app.state, "team_url", None),
    )
