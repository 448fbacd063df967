"""Copilot CLI: token usage from ``session.shutdown`` events (``docs/usage.md``).

Copilot CLI emits an ``assistant.usage`` event per model call, but it is
*ephemeral*: never written to ``events.jsonl`` (the SDK's generated event schema:
"Always true for events that are transient and not persisted to the session
event log on disk"). What the log keeps is ``session.shutdown``, written when
the CLI leaves a session, whose ``data.modelMetrics`` holds per model
``{requests: {count, cost}, usage: {inputTokens, outputTokens, cacheReadTokens,
cacheWriteTokens, reasoningTokens?}}``: the totals of the run that ends there.

* ``inputTokens`` is the whole prompt, cache reads and writes included (real
  published shutdowns: 71,282 input = 35,495 read + 35,783 written + 4; the
  per-type ``tokenDetails.input`` equals ``inputTokens - cacheReadTokens``), so
  input = ``inputTokens - cacheReadTokens - cacheWriteTokens`` (``inputTokens``
  itself should the difference be negative). ``outputTokens`` -> output,
  ``reasoningTokens`` its reasoning part (when not above it).
* **Shutdowns are running totals**, within a run and (Copilot CLI 1.x) across
  the runs of a resumed session: the CLI's tracker only adds, and a resumed
  session's next shutdown carries the earlier runs' totals (a three-run session
  whose shutdowns read 1.85 M, then 14.06 M cache reads, getagentseal/codeburn
  #946; ccusage #1721). So each shutdown is compared with the one before it in
  the file: when no model of the earlier one is missing and none of its counts
  (requests included) fell, only the rise is new; else the counter restarted
  (older CLIs, 0.0.x, started a resumed session at zero: copilot-cli #524,
  #1628) and the whole shutdown is new. A call is thus never counted twice;
  an older CLI's resumed run that outgrew the run before it in every count is
  counted short by that run's totals.
* The totals of ``n`` requests (``requests.count``) are spread over ``n`` calls
  (equal shares, the remainder on the first ones), so the calls are counted
  right and a long session's totals, which pass the 10 M per-call bound, stay
  within it; each share is priced as an average request of the run.
"""

from __future__ import annotations

from typing import Any

from agentdex.parsers._agent_common import dict_of
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.readers import Diagnostics
from agentdex.records import MAX_CALL_TOKENS, Usage, parse_timestamp

_REQUIRED = ("inputTokens", "outputTokens")
_OPTIONAL = ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
#: The order a run's totals per model are kept in ``cursor.state`` (JSON-serializable).
_KEPT = (*_REQUIRED, *_OPTIONAL, "requests")
_RUN = "usage_run"


def new_run(state: dict[str, Any]) -> None:
    """A ``session.start``: the file's first shutdown is all new."""
    state[_RUN] = {}


def _shares(total: int, parts: int) -> list[int]:
    quotient, rest = divmod(total, parts)
    return [quotient + (i < rest) for i in range(parts)]


def note_shutdown(
    ref: SourceRef,
    cursor: ParseCursor,
    diag: Diagnostics,
    event: dict[str, Any],
    where: tuple[str, int, str, str | None, str | None],
) -> None:
    """Hand a ``session.shutdown`` event's new usage per model to ``cursor`` (``where``:
    locator, offset, session id, cwd, branch)."""
    locator, offset, session, cwd, branch = where
    data = dict_of(event.get("data"))
    metrics = data.get("modelMetrics")
    if not isinstance(metrics, dict):
        return
    earlier: dict[str, list[int]] = cursor.state.setdefault(_RUN, {})
    stamp = parse_timestamp(event.get("timestamp"))
    name = event.get("id") if isinstance(event.get("id"), str) else f"{session}/{locator}"
    totals: dict[str, list[int]] = {}
    for model, metric in metrics.items():
        metric = dict_of(metric)
        counts = read_counts(metric.get("usage"), _REQUIRED, _OPTIONAL, cumulative=True)
        requests = dict_of(metric.get("requests")).get("count")
        if isinstance(counts, str):
            cursor.skip_usage(diag, ref.path, f"{locator}/{model}", counts)
            continue
        calls = requests if isinstance(requests, int) and requests > 0 else 1
        totals[model] = [*(counts[k] for k in (*_REQUIRED, *_OPTIONAL)), calls]
    # a running total of the shutdown before (same run or a resumed one), or a restart?
    running = all(
        model in metrics
        and (model not in totals or all(a >= b for a, b in zip(totals[model], before, strict=True)))
        for model, before in earlier.items()
    )
    if not running:
        earlier.clear()
    for model, now in totals.items():
        before = earlier.get(model)
        new = now if before is None else [a - b for a, b in zip(now, before, strict=True)]
        earlier[model] = now
        at = (f"{locator}/{model}", offset, session, cwd, branch)
        _emit(ref, cursor, diag, dict(zip(_KEPT, new, strict=True)), at, (str(name), model, stamp))


def _emit(
    ref: SourceRef,
    cursor: ParseCursor,
    diag: Diagnostics,
    counts: dict[str, int],
    where: tuple[str, int, str, str | None, str | None],
    what: tuple[str, str, float | None],
) -> None:
    locator, offset, session, cwd, branch = where
    name, model, stamp = what
    cached = counts["cacheReadTokens"] + counts["cacheWriteTokens"]
    fresh = counts["inputTokens"]
    fresh = fresh - cached if fresh >= cached else fresh
    output = counts["outputTokens"]
    reasoning = counts["reasoningTokens"] if counts["reasoningTokens"] <= output else 0
    parts = max(1, counts["requests"])
    largest = max(fresh, counts["cacheReadTokens"], counts["cacheWriteTokens"], output)
    if -(-largest // parts) > MAX_CALL_TOKENS:
        why = f"{largest} tokens in {parts} requests is absurd (> {MAX_CALL_TOKENS} a request)"
        cursor.skip_usage(diag, ref.path, locator, why)
        return
    split = [
        _shares(v, parts)
        for v in (fresh, counts["cacheReadTokens"], counts["cacheWriteTokens"], output, reasoning)
    ]
    for i in range(parts):
        cursor.add_usage(
            Usage(
                agent=ref.agent,
                store=ref.store,
                source_path=str(ref.path),
                locator=locator,
                session_id=session,
                call_id=f"copilot:{session}:{name}:{model}:{i}",
                input_tokens=split[0][i],
                cache_read_tokens=split[1][i],
                cache_write_tokens=split[2][i],
                output_tokens=split[3][i],
                reasoning_tokens=split[4][i],
                timestamp=stamp,
                model=model,
                cwd=cwd,
                branch=branch,
                host=ref.host,
                offset=offset,
            ),
            diag,
        )
