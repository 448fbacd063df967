"""``/api/v0/search`` and ``/api/v0/conversations``: the CLI's JSON over HTTP."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request

from agentdex.api import search as api
from agentdex.http import params

router = APIRouter(tags=["search"])

Sort = Literal["relevance", "time"]
Case = Literal["smart", "insensitive", "sensitive"]


@router.get("/search")
def search(
    request: Request,
    q: Annotated[params.Query, Query(description="Query (docs/query-language.md).")],
    limit: int = Query(20, ge=1, le=api.MAX_LIMIT),
    sort: Annotated[Sort, Query(description="Result order.")] = "relevance",
    case: Annotated[
        Case, Query(description="smart: a capital letter makes it sensitive.")
    ] = "smart",
    regex: bool = False,
    word: bool = False,
    refresh: bool = True,
) -> dict[str, Any]:
    """Same JSON as ``agentdex search --json``: ``{query, status, stats, results}``.

    A malformed query (unbalanced quote or parenthesis, unknown field, bad
    ``since:``, an invalid regex with ``regex``) is a 400.
    """
    home = getattr(request.app.state, "home", None)
    result = api.search(
        q,
        home=home,
        limit=limit,
        sort=sort,
        case=case,
        regex=regex,
        word=word,
        refresh_first=refresh,
    )
    return result.to_json()


@router.get("/conversations")
def conversations(
    request: Request,
    q: Annotated[
        params.Query | None, Query(description="Only conversations with a matching message.")
    ] = None,
    limit: int = Query(50, ge=1, le=api.MAX_LIMIT),
    refresh: bool = True,
) -> dict[str, Any]:
    """Same JSON as ``agentdex sessions --json``: ``{query, status, stats, conversations}``."""
    home = getattr(request.app.state, "home", None)
    return api.conversations(q, home=home, limit=limit, refresh_first=refresh).to_json()
