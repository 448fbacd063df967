"""``/api/v0/limits``: the caps that bound what the API answers, so a client can say
"64 KiB cap" next to an ``oversize`` file instead of hard-coding numbers."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from agentdex.api import context, search, transcript

router = APIRouter(tags=["meta"])


class LimitsBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    context: dict[str, int]
    search: dict[str, int]
    show: dict[str, int]
    home: str = Field(
        description="The home the server reads (the page writes paths under it ~/...)."
    )
    now: str | None = Field(
        None, description="$AGENTDEX_NOW when the server pins it (ISO-8601), else null."
    )


@router.get("", response_model=LimitsBody)
def limits(request: Request) -> dict[str, Any]:
    """Context caps (per file, total payload, resources, ...), search and show maxima; the
    home the server reads and its pinned "now", so the page shows paths and ages as the CLI."""
    from agentdex.paths import home_dir
    from agentdex.records import iso_utc

    now = _pinned_now()
    return {
        "context": dataclasses.asdict(context.DEFAULT_LIMITS),
        "search": {"max_limit": search.MAX_LIMIT},
        "show": {"max_max_chars": transcript.MAX_MAX_CHARS},
        "home": str(home_dir(getattr(request.app.state, "home", None))),
        "now": iso_utc(now) if now is not None else None,
    }


def _pinned_now() -> float | None:
    """``$AGENTDEX_NOW`` (ISO-8601 or epoch seconds) as the CLI reads it; None when unset."""
    import os

    from agentdex.records import parse_timestamp

    value = os.environ.get("AGENTDEX_NOW", "").strip()
    try:
        return float(value) if value else None
    except ValueError:
        return parse_timestamp(value)
