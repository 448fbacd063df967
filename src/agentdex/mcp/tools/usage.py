"""The usage tool: tokens and cost by day, model, project, conversation (api/usage.py)."""

from __future__ import annotations

from typing import Any

from agentdex.mcp.tools import outputs
from agentdex.mcp.tools._base import Settings, ToolSpec, agent_property, api_function

BY = ("day", "week", "month", "agent", "model", "project", "branch", "session")
DATE = {
    "type": "string",
    "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "description": "A local date, YYYY-MM-DD (inclusive).",
}


#: conversations a session view returns unless ``limit`` says (a history can hold thousands)
SESSION_ROWS = 50


def _usage(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    usage = api_function("usage", "usage")
    by = arguments.get("by", "day")
    limit = arguments.get("limit")
    if limit is None and by == "session":
        limit = SESSION_ROWS
    data: dict[str, Any] = usage(
        by,
        since=arguments.get("since"),
        until=arguments.get("until"),
        agent=arguments.get("agent"),
        home=settings.home,
        limit=limit,
    )
    return data


USAGE = ToolSpec(
    name="usage",
    title="Tokens and cost",
    description=(
        "Tokens and cost of the model calls agents recorded, one row per day (or week, month, "
        "agent, model, project, branch, session), with a totals row that every grouping "
        "shares. input_tokens is fresh input only; cache reads and writes are their own "
        "counts; output_tokens includes reasoning. cost_usd is priced offline and is null "
        "(never 0) for a model without a known price; those models are listed in 'unpriced'."
    ),
    properties={
        "by": {"type": "string", "enum": list(BY), "default": "day", "description": "Grouping."},
        "since": {**DATE, "description": "From this local day on (inclusive), YYYY-MM-DD."},
        "until": {**DATE, "description": "Up to this local day (inclusive), YYYY-MM-DD."},
        "agent": agent_property("Only this agent's calls."),
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100_000,
            "description": "At most this many rows: the largest (of a day, week or month "
            f"view, the latest). Default: every row, {SESSION_ROWS} by session. The totals and "
            "stats.total always count every row.",
        },
    },
    handler=_usage,
    output=outputs.USAGE,
)
