"""Gemini CLI: one ``gemini`` message's ``tokens`` as a model call (``docs/usage.md``).

A ``gemini`` message's ``tokens`` are Gemini CLI's copy of the response's
``usageMetadata`` (``recordMessageTokens``: ``input`` = promptTokenCount,
``output`` = candidatesTokenCount, ``cached`` = cachedContentTokenCount,
``thoughts``, ``tool`` = toolUsePromptTokenCount). The prompt count includes
the cached part; thoughts and the tool-use prompt are counted apart from it
(``totalTokenCount`` is prompt + candidates + thoughts + tool-use prompt). So:
input = ``input - cached + tool`` (the tool-use prompt is prompt tokens),
cache read = ``cached``, output = ``output + thoughts``, reasoning =
``thoughts``. One call per live message ``id`` (a re-emitted id is one call;
a rewound message is gone from the chat, and from its usage).
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
    locator: str,
    offset: int,
    session_id: str,
    cwd: str | None,
) -> None:
    """Hand ``msg["tokens"]`` to ``cursor`` as one call (bad counts are skipped, counted)."""
    counts = read_counts(msg["tokens"], ("input", "output"), ("cached", "thoughts", "tool"))
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, locator, counts)
        return
    fresh = counts["input"] - counts["cached"]
    if fresh < 0:
        cursor.skip_usage(diag, ref.path, locator, "cached exceeds input")
        return
    model = msg.get("model")
    mid = msg.get("id")
    cursor.add_usage(
        Usage(
            agent=ref.agent,
            store=ref.store,
            source_path=str(ref.path),
            locator=locator,
            session_id=session_id,
            call_id=mid if isinstance(mid, str) and mid else f"{session_id}/{locator}",
            input_tokens=fresh + counts["tool"],
            cache_read_tokens=counts["cached"],
            output_tokens=counts["output"] + counts["thoughts"],
            reasoning_tokens=counts["thoughts"],
            timestamp=parse_timestamp(msg.get("timestamp")),
            model=model if isinstance(model, str) and model else None,
            cwd=cwd,
            host=ref.host,
            offset=offset,
        ),
        diag,
    )
