"""Cursor IDE: a bubble's ``tokenCount`` as usage (``docs/usage.md``).

A bubble (``cursorDiskKV`` ``bubbleId:<composer>:<bubble>``, or a message of an
inline composer) carries ``tokenCount: {inputTokens, outputTokens}``. On the
stores public readers looked at, it is 0/0 on every bubble except the last
assistant bubble of a turn, and Cursor 3 writes 0/0 everywhere (its counts are
server-side only). Cursor records no cache split and no reasoning split, and
is closed source: whether a turn's count covers every model call of the turn
or its last one is not known. So a bubble with a count is one "call":
``inputTokens`` -> input (cached prompt cannot be told apart, so it is priced at
the fresh rate: an upper bound), ``outputTokens`` -> output. Model: the
bubble's ``modelInfo.modelName``, else the composer's ``modelConfig``
(``default`` is Cursor's Auto mode, not a model: unpriced). The call is named by
the composer and bubble, so an abandoned branch's copy of a bubble is the same
call.
"""

from __future__ import annotations

from typing import Any

from agentdex.parsers._agent_common import dict_of
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Usage

_COUNTS = ("inputTokens", "outputTokens")
#: Cursor's Auto mode and placeholders: not a model a price can be found for.
_NOT_MODELS = frozenset({"default", "auto", ""})


def note_bubble_usage(
    ref: SourceRef,
    cursor: ParseCursor,
    diag: Diagnostics,
    bubble: dict[str, Any],
    where: tuple[str, str, str, str | None, float | None],
    model: str | None,
) -> None:
    """Hand a bubble's ``tokenCount`` to ``cursor`` (``where``: locator, session id, call
    name, cwd, time); a bubble without one, or with 0/0, is no call."""
    raw = bubble.get("tokenCount")
    if raw is None:
        return
    locator, session, name, cwd, stamp = where
    counts = read_counts(raw, _COUNTS)
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, f"{locator}/tokenCount", counts)
        return
    own = dict_of(bubble.get("modelInfo")).get("modelName")
    model = own if isinstance(own, str) and own else model
    cursor.add_usage(
        Usage(
            agent=ref.agent,
            store=ref.store,
            source_path=str(ref.path),
            locator=f"{locator}/tokenCount",
            session_id=session,
            call_id=f"cursor:{name}",
            input_tokens=counts["inputTokens"],
            output_tokens=counts["outputTokens"],
            timestamp=stamp,
            model=None if model is None or model.lower() in _NOT_MODELS else model,
            cwd=cwd,
            host=ref.host,
        ),
        diag,
    )
