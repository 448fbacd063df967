"""The size budget: no MCP response may flood a model's context.

Every tool result is serialized here as compact JSON and cut to fit
``max_bytes`` (UTF-8). Cutting is done in the order that loses least: first
the pageable list is shortened from the end (so what is kept is whole and in
order), then long strings are clipped, and as a last resort the payload is
replaced by the marker alone. Whenever anything was cut, the response carries
a ``response_truncated`` object saying what was cut and, for paged tools, the
exact arguments that fetch the rest.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

#: Default ceiling for one response (bytes of compact UTF-8 JSON).
DEFAULT_MAX_BYTES = 24 * 1024
#: Smallest budget accepted: below this even the marker may not fit.
MIN_MAX_BYTES = 2048
#: Env var that overrides the default budget (``agentdex mcp --max-bytes`` wins).
BUDGET_ENV = "AGENTDEX_MCP_MAX_BYTES"
#: The key of the marker added to a response that was cut.
MARKER_KEY = "response_truncated"
#: Strings are never clipped below this many characters.
_MIN_CLIP = 80


@dataclass(frozen=True, slots=True)
class Paging:
    """How a tool's response pages: the list that may be cut and how to ask for the rest.

    ``next_arguments(kept)`` returns the tool arguments that continue after the
    first ``kept`` items of ``key`` (``None`` when the tool cannot page).
    """

    tool: str
    key: str
    next_arguments: Callable[[int], dict[str, Any] | None]


def resolve_max_bytes(value: int | None = None) -> int:
    """The budget in force: an explicit value, else ``$AGENTDEX_MCP_MAX_BYTES``, else 24 KB."""
    if value is None:
        raw = os.environ.get(BUDGET_ENV, "").strip()
        value = int(raw) if raw.isdigit() else DEFAULT_MAX_BYTES
    if value < MIN_MAX_BYTES:
        raise ValueError(f"the response budget must be at least {MIN_MAX_BYTES} bytes")
    return value


def dumps(data: Any) -> bytes:
    """Compact JSON, the wire form every budget check measures."""
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS, default=str)


def fit(payload: dict[str, Any], max_bytes: int, paging: Paging | None = None) -> str:
    """``payload`` as JSON text of at most ``max_bytes`` bytes, cut with a marker if needed."""
    raw = dumps(payload)
    if len(raw) <= max_bytes:
        return raw.decode("utf-8")
    items = payload.get(paging.key) if paging is not None else None
    if paging is not None and isinstance(items, list) and items:
        kept = _longest_prefix(payload, paging, items, max_bytes)
        if kept > 0:
            return _with_items(payload, paging, items, kept, max_bytes).decode("utf-8")
        # Not even one item fits whole: keep the first and clip its strings.
        head = _with_items(payload, paging, items, 1, max_bytes)
        return _clip_strings(orjson.loads(head), max_bytes, already_cut=True).decode("utf-8")
    return _clip_strings(payload, max_bytes, already_cut=False).decode("utf-8")


def _marker(max_bytes: int, cut: str, next_call: dict[str, Any] | None) -> dict[str, Any]:
    marker: dict[str, Any] = {
        "reason": f"the response exceeded the size budget of {max_bytes} bytes",
        "cut": cut,
    }
    if next_call is not None:
        marker["next"] = next_call
    return marker


def _with_items(
    payload: dict[str, Any],
    paging: Paging,
    items: list[Any],
    kept: int,
    max_bytes: int,
) -> bytes:
    arguments = paging.next_arguments(kept) if kept < len(items) else None
    cut = f"kept the first {kept} of {len(items)} {paging.key}"
    if arguments is not None:
        cut += f"; call {paging.tool} with the arguments in 'next' for the rest"
    elif kept < len(items):
        cut += "; ask for fewer at a time (a smaller limit) or narrow the request"
    data = dict(payload)
    data[paging.key] = items[:kept]
    next_call = {"tool": paging.tool, "arguments": arguments} if arguments is not None else None
    data[MARKER_KEY] = _marker(max_bytes, cut, next_call)
    return dumps(data)


def _longest_prefix(
    payload: dict[str, Any], paging: Paging, items: list[Any], max_bytes: int
) -> int:
    """Largest ``k`` whose response (with the marker) fits; 0 when none does."""
    low, high = 0, len(items) - 1  # len(items) itself is known not to fit
    while low < high:
        mid = (low + high + 1) // 2
        if len(_with_items(payload, paging, items, mid, max_bytes)) <= max_bytes:
            low = mid
        else:
            high = mid - 1
    return low


def _clip(value: Any, limit: int) -> tuple[Any, int]:
    """``value`` with strings longer than ``limit`` clipped; returns (value, strings clipped)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value, 0
        cut = len(value) - limit
        return f"{value[:limit]}…[{cut} more characters cut by the size budget]", 1
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        total = 0
        for key, item in value.items():
            out[key], n = _clip(item, limit)
            total += n
        return out, total
    if isinstance(value, list):
        items = []
        total = 0
        for item in value:
            clipped, n = _clip(item, limit)
            items.append(clipped)
            total += n
        return items, total
    return value, 0


def _longest_string(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max((_longest_string(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return max((_longest_string(v) for v in value), default=0)
    return 0


def _clipped_response(
    payload: dict[str, Any], limit: int, max_bytes: int, already_cut: bool
) -> bytes:
    body = {k: v for k, v in payload.items() if k != MARKER_KEY}
    clipped, count = _clip(body, limit)
    marker = payload.get(MARKER_KEY) if already_cut else None
    note = f"clipped {count} long text field(s) to {limit} characters"
    if isinstance(marker, dict):
        marker = dict(marker)
        marker["cut"] = f"{marker.get('cut', '')}; {note}".lstrip("; ")
    else:
        marker = _marker(max_bytes, note, None)
    clipped[MARKER_KEY] = marker
    return dumps(clipped)


def _clip_strings(payload: dict[str, Any], max_bytes: int, *, already_cut: bool) -> bytes:
    """Clip strings to the longest common length that fits; the marker alone if none does."""
    longest = _longest_string(payload)
    low, high = _MIN_CLIP, max(_MIN_CLIP, longest)
    best: bytes | None = None
    while low <= high:
        mid = (low + high) // 2
        attempt = _clipped_response(payload, mid, max_bytes, already_cut)
        if len(attempt) <= max_bytes:
            best, low = attempt, mid + 1
        else:
            high = mid - 1
    if best is not None:
        return best
    keys = ", ".join(sorted(str(k) for k in payload)[:20])
    return dumps(
        {
            MARKER_KEY: _marker(
                max_bytes,
                f"everything: the response is too large even with text clipped (keys: {keys});"
                " ask for fewer items (a smaller limit) or a narrower query",
                None,
            )
        }
    )


def fit_text(text: str, max_bytes: int, rest: str) -> str:
    """A plain-text document cut at a line boundary to fit, ending with a marker line."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    marker = (
        f"\n\n[{MARKER_KEY}: this document is {len(data)} bytes, over the size budget of "
        f"{max_bytes} bytes; {rest}]\n"
    )
    room = max_bytes - len(marker.encode("utf-8"))
    head = data[:room].decode("utf-8", errors="ignore")
    cut = head.rfind("\n")
    return (head[:cut] if cut > 0 else head) + marker
