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


def _usage(arguments: dict[str, Any], settings: Settings) -> dict[str, Any]:
    usage = api_function("usage", "usage")
    data: dict[str, Any] = usage(
        arguments.get("by", "day"),
        since=arguments.get("since"),
        until=arguments.get("until"),
        agent=arguments.get("agent"),
        home=settings.home,
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
    },
    handler=_usage,
    output=outputs.USAGE,
)
