"""OpenCode: one assistant message's ``tokens`` as a model call (``docs/usage.md``).

OpenCode stores, per assistant message, ``tokens: {input, output, reasoning,
cache: {read, write}}`` (its ``getUsage``: ``input`` already has the cache
reads and writes taken out, for every provider) and prices reasoning at the
output rate on top of ``output``. So: input = ``input``, cache read =
``cache.read``, cache write = ``cache.write``, output = ``output +
reasoning``, reasoning = ``reasoning``. One call per message id; the model
is ``modelID`` (``providerID`` is kept out of the id, as the agent logs it).
"""

from __future__ import annotations

from typing import Any

from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Usage, parse_timestamp


def note_usage(
    ref: SourceRef,
    cursor: ParseCursor,
    diag: Diagnostics,
    msg: dict[str, Any],
    where: tuple[str, str, str, str | None],
    timestamp: object = None,
) -> None:
    """Hand an assistant message's ``tokens`` to ``cursor`` (``where``: message id, locator,
    session id, cwd). Messages without tokens are no call."""
    tokens = msg.get("tokens")
    if msg.get("role") not in (None, "assistant") or tokens is None:
        return
    mid, locator, session, cwd = where
    counts = read_counts(tokens, ("input", "output"), ("reasoning",))
    cache = tokens.get("cache") if isinstance(tokens, dict) else None
    cached = read_counts(cache if cache is not None else {}, (), ("read", "write"))
    if isinstance(counts, str) or isinstance(cached, str):
        why = counts if isinstance(counts, str) else f"cache {cached}"
        cursor.skip_usage(diag, ref.path, locator, why)
        return
    model = msg.get("modelID")
    when = msg.get("time")
    stamp = when.get("created") if isinstance(when, dict) else None
    cursor.add_usage(
        Usage(
            agent=ref.agent,
            store=ref.store,
            source_path=str(ref.path),
            locator=locator,
            session_id=session,
            call_id=mid,
            input_tokens=counts["input"],
            cache_read_tokens=cached["read"],
            cache_write_tokens=cached["write"],
            output_tokens=counts["output"] + counts["reasoning"],
            reasoning_tokens=counts["reasoning"],
            timestamp=parse_timestamp(stamp) or parse_timestamp(timestamp),
            model=model if isinstance(model, str) and model else None,
            cwd=cwd,
            host=ref.host,
        ),
        diag,
    )
