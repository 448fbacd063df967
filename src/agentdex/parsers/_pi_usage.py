"""Pi: an assistant message's ``usage`` as a model call (``docs/usage.md``).

Pi (``pi-ai``) stores ``usage: {input, output, cacheRead, cacheWrite,
totalTokens, cost}`` on each assistant message, filled per provider so that
``input`` is fresh input (Anthropic's ``input_tokens``; OpenAI's and Gemini's
prompt count less the cached part) and ``output`` holds everything generated
(Gemini's thoughts added in; ``reasoning``, when present, is a part of it):
``totalTokens = input + output + cacheRead + cacheWrite``. One call per
``responseId`` (else the entry's ``id``: a forked session keeps its entries'
ids, so a copied message is the same call).
"""

from __future__ import annotations

from typing import Any

from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Usage


def note_usage(
    ref: SourceRef,
    cursor: ParseCursor,
    diag: Diagnostics,
    entry: dict[str, Any],
    where: tuple[str, int, str, str | None, float | None],
) -> None:
    """Hand an assistant message entry's ``usage`` to ``cursor`` (``where``: locator,
    offset, session id, cwd, time)."""
    message = entry["message"]
    raw = message.get("usage")
    if message.get("role") != "assistant" or raw is None:
        return
    locator, offset, session, cwd, ts = where
    counts = read_counts(raw, ("input", "output"), ("cacheRead", "cacheWrite", "reasoning"))
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, locator, counts)
        return
    call = message.get("responseId") or entry.get("id")
    if not isinstance(call, str) or not call:
        call = f"{session}/{locator}"
    model = message.get("model")
    cursor.add_usage(
        Usage(
            agent=ref.agent,
            store=ref.store,
            source_path=str(ref.path),
            locator=locator,
            session_id=session,
            call_id=call,
            input_tokens=counts["input"],
            cache_read_tokens=counts["cacheRead"],
            cache_write_tokens=counts["cacheWrite"],
            output_tokens=counts["output"],
            reasoning_tokens=counts["reasoning"],
            timestamp=ts,
            model=model if isinstance(model, str) and model else None,
            cwd=cwd,
            host=ref.host,
            offset=offset,
        ),
        diag,
    )
