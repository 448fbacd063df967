"""``/api/v0/search`` and ``/api/v0/conversations``: the CLI's JSON over HTTP.

A search runs in a worker process (:mod:`agentdex.api.search_worker`), so a
runaway query stops at its time budget and never stalls other requests.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request

from agentdex.api import search as api
from agentdex.api import search_worker
from agentdex.config import MAX_TIME_BUDGET
from agentdex.http import params

router = APIRouter(tags=["search"])

Sort = Literal["relevance", "time"]
Mode = Literal["hybrid", "lexical", "semantic"]
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
    time_budget: float | None = Query(
        None,
        gt=0,
        le=MAX_TIME_BUDGET,
        description="Seconds the search may run (default: config, else 5); past it the "
        "answer is `status: partial` with `stats.stopped`.",
    ),
    highlights: bool = Query(
        False, description="Add `highlights`: [start, end) spans of the match in `snippet`."
    ),
    text: bool = Query(True, description="Include each result's full `text`."),
    mode: Annotated[
        Mode,
        Query(
            description="hybrid: exact matches fused with search by meaning when the index has"
            " embeddings (else lexical); lexical or semantic alone (docs/search.md)."
        ),
    ] = "hybrid",
) -> dict[str, Any]:
    """Same JSON as ``agentdex search --json``: ``{query, status, stats, results}``.

    Each result's ``why`` says what matched: the exact ``terms``, the
    ``similarity`` of its meaning, or both. ``highlights=true`` adds to each
    result the match spans in its snippet (code-point offsets); ``text=false``
    leaves out the full text (a results list needs only the snippet). A
    malformed query (unbalanced quote or parenthesis, unknown field, bad
    ``since:``, an invalid regex with ``regex``) is a 400; ``mode=semantic``
    before any embedding exists is a 404.
    """
    home = getattr(request.app.state, "home", None)
    result = search_worker.search_in_worker(
        q,
        team_url=getattr(request.app.state, "team_url", None),
        home=home,
        limit=limit,
        sort=sort,
        case=case,
        regex=regex,
        word=word,
        refresh_first=refresh,
        time_budget=time_budget,
        mode=mode,
    )
    data = result.to_json()
    for hit, spans in zip(data["results"], result.highlights, strict=False):
        if highlights:
            hit["highlights"] = [list(span) for span in spans]
        if not text:
            hit.pop("text", None)
    return data


@router.get("/similar")
def similar(
    request: Request,
    ref: Annotated[
        params.Ref,
        Query(description="A session id or a search reference SESSION@LOCATOR."),
    ],
    limit: int = Query(10, ge=1, le=200),
) -> dict[str, Any]:
    """Same JSON as ``agentdex similar --json``: the conversations closest in meaning to one.

    404 when the conversation or its embeddings are not found.
    """
    from agentdex.api.semantic import similar as api_similar

    home = getattr(request.app.state, "home", None)
    return api_similar(ref, home=home, limit=limit)


@router.get("/conversations")
def conversations(
    request: Request,
    q: Annotated[
        params.Query | None, Query(description="Only conversations with a matching message.")
    ] = None,
    limit: int = Query(50, ge=1, le=api.MAX_LIMIT),
    refresh: bool = True,
) -> dict[str, Any]:
    """Same JSON as ``agentdex conversations --json``: ``{query, status, stats, conversations}``."""
    team_url = getattr(request.app.state, "team_url", None)
    if team_url is not None:  # serve --team
        from agentdex.api import team_views

        return team_views.conversations(q, url=team_url, limit=limit)
    home = getattr(request.app.state, "home", None)
    return api.conversations(q, home=home, limit=limit, refresh_first=refresh).to_json()
