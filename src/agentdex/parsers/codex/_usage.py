"""Codex token usage: one call per rise of the cumulative ``total_token_usage``.

Codex writes an ``event_msg`` ``token_count`` after each model response:
``info.total_token_usage`` (the conversation's running total) and
``info.last_token_usage`` (that response). Newer rollouts write the same
event more than once, and a forked or subagent rollout starts with a copy of
its parent's items, token counts included (``persist_rollout_items`` of the
forked history, as they were), so neither per-event counts nor a file's
events can simply be summed. The rule here:

* a call is the difference between a ``total_token_usage`` and the previous
  one in the file; an event that does not raise it (a repeat) is no call;
* an event whose ``last_token_usage`` is all zero is no call either: it
  carries a total over (the counter a subagent starts from);
* a total below the previous one (a counter that restarted) counts from 0;
* the call is named by its event's counts (the cumulative and the last), so
  the copy of a parent's event in a forked rollout is the parent's call and
  is counted once (the earliest-written copy is the one kept, see
  ``index/usage.py``);
* ``input_tokens`` includes the cached part: fresh input is
  ``input_tokens - cached_input_tokens``, cache read is
  ``cached_input_tokens``; ``output_tokens`` includes
  ``reasoning_output_tokens``; Codex reports no cache writes.
"""

from __future__ import annotations

import os
from typing import Any

from agentdex.parsers._jsonl import LineStream
from agentdex.parsers._usage import read_counts
from agentdex.parsers.base import ParseCursor, SourceRef
from agentdex.parsers.codex._items import session_from_name
from agentdex.readers import Diagnostics, JsonlLine
from agentdex.records import Usage, parse_timestamp

#: Codex's counts, in the order kept in ``state["usage_total"]``
FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")


def is_token_count(ltype: str | None, payload: dict[str, Any]) -> bool:
    return ltype == "event_msg" and payload.get("type") == "token_count"


def note_token_count(
    stream: LineStream,
    line: JsonlLine,
    obj: dict[str, Any],
    payload: dict[str, Any],
    ref: SourceRef,
    cursor: ParseCursor,
    diag: Diagnostics,
) -> None:
    """Read one ``token_count`` event: a call into ``cursor`` when the total rose."""
    info = payload.get("info")
    if info is None:  # a rate-limits-only event
        return
    state = stream.state
    locator = f"line:{line.lineno}"
    raw_total = info.get("total_token_usage") if isinstance(info, dict) else None
    if raw_total is None:
        return
    total = read_counts(
        raw_total, FIELDS[:1] + FIELDS[2:3], FIELDS[1:2] + FIELDS[3:], cumulative=True
    )
    if isinstance(total, str):
        cursor.skip_usage(diag, ref.path, locator, f"total_token_usage: {total}")
        return
    now = [total[name] for name in FIELDS]
    last_raw = info.get("last_token_usage")
    last = read_counts(last_raw, (), FIELDS, cumulative=True) if last_raw is not None else None
    if isinstance(last, str):
        last = None
    before: list[int] | None = state.get("usage_total")
    state["usage_total"] = now
    if last is not None and not any(last.values()):
        return  # carries a total over: no call
    if before is None or any(n < b for n, b in zip(now, before, strict=True)):
        before = [0] * len(FIELDS)
    delta = [n - b for n, b in zip(now, before, strict=True)]
    if not any(delta):
        return  # a repeated event
    fresh = delta[0] - delta[1]
    if fresh < 0:
        cursor.skip_usage(diag, ref.path, locator, "cached_input_tokens exceed input_tokens")
        return
    name = "t" + ",".join(map(str, now))
    if last is not None:
        name += "/l" + ",".join(str(last[f]) for f in FIELDS)
    timestamp = parse_timestamp(obj.get("timestamp")) or parse_timestamp(payload.get("timestamp"))
    cursor.add_usage(
        Usage(
            agent=ref.agent,
            store=ref.store,
            source_path=os.fspath(ref.path),
            locator=locator,
            session_id=state["session"] or session_from_name(ref.path),
            call_id=name,
            input_tokens=fresh,
            cache_read_tokens=delta[1],
            output_tokens=delta[2],
            reasoning_tokens=delta[3],
            timestamp=timestamp,
            model=state["model"],
            cwd=state["cwd"],
            branch=state["branch"],
            host=ref.host,
            offset=line.offset,
        ),
        diag,
    )
