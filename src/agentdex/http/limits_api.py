"""``/api/v0/limits``: the caps that bound what the API answers, so a client can say
"64 KiB cap" next to an ``oversize`` file instead of hard-coding numbers."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

from agentdex.api import context, search, transcript

router = APIRouter(tags=["meta"])


class LimitsBody(BaseModel):
    model_config = ConfigDict(extra="allow")

    context: dict[str, int]
    search: dict[str, int]
    show: dict[str, int]


@router.get("", response_model=LimitsBody)
def limits() -> dict[str, Any]:
    """Context caps (per file, total payload, resources, ...), search and show maxima."""
    return {
        "context": dataclasses.asdict(context.DEFAULT_LIMITS),
        "search": {"max_limit": search.MAX_LIMIT},
        "show": {"max_max_chars": transcript.MAX_MAX_CHARS},
    }
