"""``/api/v0/usage``: tokens and cost by day, week, month, agent, model, project, branch or
conversation (a thin shell over :mod:`agentdex.api.usage`; ``docs/usage.md``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict

from agentdex.api import usage as api
from agentdex.http import params

router = APIRouter(tags=["usage"])

By = Literal["day", "week", "month", "agent", "model", "project", "branch", "session"]


class Counts(BaseModel):
    """The normalized counts of some calls, and what they cost."""

    model_config = ConfigDict(extra="allow")  # a row also carries its key (day, model, ...)

    calls: int
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cache_write_1h_tokens: int
    output_tokens: int
    reasoning_tokens: int
    total_tokens: int
    cost_usd: float | None
    priced_cost_usd: float
    unpriced_calls: int
    unpriced_tokens: int
    models: list[str | None]


class Unpriced(BaseModel):
    model: str | None
    calls: int
    tokens: int


class Prices(BaseModel):
    date: str
    source: str
    file: str | None
    shipped: bool
    models: int


class UsageBody(BaseModel):
    by: By
    since: str | None
    until: str | None
    agent: str | None
    timezone: str
    status: Literal["ok", "no-index"]
    prices: Prices
    stats: dict[str, Any]
    rows: list[Counts]
    totals: Counts
    unpriced: list[Unpriced]


@router.get("", response_model=UsageBody)
def usage(
    request: Request,
    by: Annotated[By, Query(description="One row per day, week, month, agent, model, ...")] = "day",
    since: Annotated[
        params.Day | None, Query(description="From this local day (inclusive).")
    ] = None,
    until: Annotated[
        params.Day | None, Query(description="Up to this local day (inclusive).")
    ] = None,
    agent: Annotated[params.AgentId | None, Query(description="Only this agent's calls.")] = None,
    split: Annotated[
        Literal["model", "agent"] | None,
        Query(description="Add to each row its `parts`: the same counts per model or agent."),
    ] = None,
    refresh: bool = True,
) -> dict[str, Any]:
    """Same JSON as ``agentdex usage --json``: rows, a totals row every view shares, and the
    models without a price (``cost_usd`` is null for them, never 0)."""
    return api.usage(
        by,
        since=since,
        until=until,
        agent=agent,
        home=getattr(request.app.state, "home", None),
        refresh_first=refresh,
        split=split,
    )
