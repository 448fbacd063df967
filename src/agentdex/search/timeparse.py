"""``since:``/``until:`` values: ISO dates/times, ``7d``/``2w``/``3h``, ``today``, ``yesterday``.

Dates without a time are whole UTC days: ``since:2026-01-02`` starts at that
day's midnight, ``until:2026-01-02`` ends at the next midnight (inclusive of
the day). Relative values count back from now.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

from agentdex.errors import UsageError

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)(s|min|m|h|d|w|y)$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _midnight(now: float) -> datetime:
    day = datetime.fromtimestamp(now, UTC)
    return day.replace(hour=0, minute=0, second=0, microsecond=0)


def parse_time(value: str, *, end: bool, now: float | None = None) -> float:
    """Epoch seconds for a since (``end=False``) or until (``end=True``) value."""
    now = time.time() if now is None else now
    text = value.strip().lower()
    if text in ("now",):
        return now
    if text in ("today", "yesterday"):
        start = _midnight(now) - timedelta(days=1 if text == "yesterday" else 0)
        return (start + timedelta(days=1) if end else start).timestamp()
    match = _RELATIVE.match(text)
    if match:
        return now - float(match.group(1)) * _UNITS[match.group(2)]
    if _DATE.match(text):
        try:
            day = datetime.fromisoformat(text).replace(tzinfo=UTC)
        except ValueError as exc:
            raise UsageError(f"invalid date {value!r}: {exc}") from None
        return (day + timedelta(days=1) if end else day).timestamp()
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"invalid time {value!r}: use an ISO date (2026-01-31, 2026-01-31T09:30),"
            " a relative age (30m, 12h, 7d, 2w, 1y), 'today' or 'yesterday'"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()
