"""One Cursor bubble (a message) to records, and its own time.

A bubble's fields become records in this order, each located by a pointer
into the bubble's value so a search hit reopens exactly it: ``thinking``
-> ``assistant``/``reasoning`` (``<row>/thinking``), ``toolFormerData`` ->
``tool_call`` (``<row>/toolFormerData``) and, when it has one,
``tool``/``tool_result`` (``<row>/toolFormerData/result``), ``text`` ->
``user``/``prompt`` (type 1) or ``assistant``/``message`` (``<row>``).
"""

from __future__ import annotations

from typing import Any

from agentdex.parsers._agent_common import clip, dict_of, make_record, str_of, tool_call_text
from agentdex.parsers.base import SourceRef
from agentdex.records import Record, parse_timestamp

#: Epoch seconds before which a number is not a wall-clock time (``clientStartTime``
#: is a page-relative clock; only epoch milliseconds are real times).
_PLAUSIBLE = 1e9
_TIMING_KEYS = ("clientRpcSendTime", "clientSettleTime", "clientEndTime", "clientStartTime")


def _wall_clock(value: object) -> float | None:
    stamp = parse_timestamp(value)
    return stamp if stamp is not None and stamp > _PLAUSIBLE else None


def bubble_time(bubble: dict[str, Any]) -> float | None:
    """The bubble's own time: ``createdAt``, else its ``timingInfo`` send/settle/end time."""
    stamp = _wall_clock(bubble.get("createdAt")) or _wall_clock(bubble.get("timestamp"))
    if stamp is not None:
        return stamp
    timing = dict_of(bubble.get("timingInfo"))
    for key in _TIMING_KEYS:
        value = timing.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 1e12:
            return value / 1000.0
    return None


def bubble_records(
    ref: SourceRef,
    loc: str,
    sid: str,
    bubble: dict[str, Any],
    *,
    cwd: str | None,
    model: str | None,
    timestamp: float | None,
    extra: dict[str, Any] | None = None,
) -> list[Record]:
    """The records of one bubble located at ``loc`` (its row, or its place in a value)."""
    btype = bubble.get("type")
    text = str_of(bubble.get("text"))
    info = dict_of(bubble.get("modelInfo"))
    model = info.get("modelName") if isinstance(info.get("modelName"), str) else model
    base = dict(extra or {})

    def record(where: str, role: Any, kind: Any, body: str, **more: Any) -> Record:
        return make_record(ref, where, sid, role, kind, body, timestamp=timestamp, cwd=cwd, **more)

    if btype in (1, "user"):
        return [record(loc, "user", "prompt", text, extra=base)] if text.strip() else []
    out: list[Record] = []
    thinking = bubble.get("thinking")
    thought = thinking.get("text") if isinstance(thinking, dict) else None
    if isinstance(thought, str) and thought.strip():
        out.append(
            record(f"{loc}/thinking", "assistant", "reasoning", thought, model=model, extra=base)
        )
    tool = bubble.get("toolFormerData")
    if isinstance(tool, dict):
        status = tool.get("status")
        call_id = tool.get("toolCallId")
        args = tool.get("rawArgs") or tool.get("params")
        out.append(
            record(
                f"{loc}/toolFormerData",
                "assistant",
                "tool_call",
                tool_call_text(tool.get("name"), args),
                model=model,
                extra={**base, "call_id": call_id, "status": status},
            )
        )
        result = tool.get("result")
        if isinstance(result, str) and result.strip():
            ok = status not in ("error", "failed")
            out.append(
                record(
                    f"{loc}/toolFormerData/result",
                    "tool",
                    "tool_result",
                    clip(result),
                    extra={**base, "call_id": call_id, "ok": ok},
                )
            )
    if text.strip():
        out.append(record(loc, "assistant", "message", text, model=model, extra=base))
    return out
