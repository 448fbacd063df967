"""Token usage of a Cline SDK-era session (``docs/usage.md``, "Cline sessions").

Cline's agent runtime (``@cline/agents`` ``agent-runtime.ts``) stamps each
assistant message it appends with ``metrics``: the usage of the one model
request that produced it (``usageDelta`` of the run's usage before and after
the request), ``{inputTokens, outputTokens, cacheReadTokens,
cacheWriteTokens, cost}`` (``reasoningTokenCount`` exists in the runtime but
is not persisted: ``agentMetricsToMetrics``). A message without ``metrics``
(an earlier message of a turn, a request that reported nothing) is no call.

* ``inputTokens`` is the **whole prompt**, cache reads and writes included
  (the AI SDK convention its gateway follows; ``agent-events.ts``
  ``legacyTokenUsageFromUsageEvent`` subtracts both to get "uncached input
  only"), except for the few hosts' registered ``ApiHandler`` providers
  whose input is already uncached. So input = ``inputTokens -
  cacheReadTokens - cacheWriteTokens`` when that is not negative, else
  ``inputTokens`` (Cline clamps to 0 there, losing the fresh input).
* ``outputTokens`` -> output (reasoning included); ``reasoningTokenCount``
  -> reasoning when a file has it (none does today).
* Model: ``modelInfo.id`` (as the provider names it, e.g.
  ``anthropic/claude-sonnet-4.6`` through Cline's own provider; the price
  table drops a ``provider/`` prefix), else the manifest's ``model``.
* The call id is the message's ``id``: a forked session (``/fork``, the
  extension's fork from a checkpoint) copies its parent's messages with their
  ids and metrics, so a copied call is counted once. The agent's ``cost`` is
  not used (agentdex prices calls from its table).
"""

from __future__ import annotations

from typing import Any

from agentdex.parsers._agent_common import dict_of, opt_str
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import Usage

_REQUIRED = ("inputTokens", "outputTokens")
_OPTIONAL = ("cacheReadTokens", "cacheWriteTokens", "reasoningTokenCount")


def fresh_input(counts: dict[str, int]) -> int:
    """The fresh part of ``inputTokens`` (whole prompt when it can be; see the module doc)."""
    cached = counts["cacheReadTokens"] + counts["cacheWriteTokens"]
    whole = counts["inputTokens"]
    return whole - cached if whole >= cached else whole


def note_call(
    ref: SourceRef,
    cursor: ParseCursor,
    diag: Diagnostics,
    message: dict[str, Any],
    session: str,
    loc: str,
    stamp: float | None,
    model: str | None,
    cwd: str | None,
) -> None:
    """Hand the model call an assistant message's ``metrics`` record to ``cursor``."""
    locator = f"{loc}/metrics"
    counts = read_counts(message.get("metrics"), _REQUIRED, _OPTIONAL)
    if isinstance(counts, str):
        cursor.skip_usage(diag, ref.path, locator, counts)
        return
    own = opt_str(message.get("id"))
    cursor.add_usage(
        Usage(
            agent=ref.agent,
            store=ref.store,
            source_path=str(ref.path),
            locator=locator,
            session_id=session,
            call_id=f"cline-sdk:{own}" if own else f"cline-sdk:{session}:{loc}",
            input_tokens=fresh_input(counts),
            cache_read_tokens=counts["cacheReadTokens"],
            cache_write_tokens=counts["cacheWriteTokens"],
            output_tokens=counts["outputTokens"],
            reasoning_tokens=min(counts["reasoningTokenCount"], counts["outputTokens"]),
            timestamp=stamp,
            model=opt_str(dict_of(message.get("modelInfo")).get("id")) or model,
            cwd=cwd,
            host=ref.host,
        ),
        diag,
    )
