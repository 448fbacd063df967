"""Reading an agent's raw token counts into :class:`agentdex.records.Usage`.

Each agent names its counts its own way; a parser maps them with
:func:`read_counts` (which says what is wrong with a count instead of
raising) and hands the result to ``cursor.add_usage`` (which skips and
counts bad input). The per-agent rules are in ``docs/usage.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentdex.records import MAX_CALL_TOKENS, count_problem


def read_counts(
    raw: Any, required: Iterable[str], optional: Iterable[str] = (), *, cumulative: bool = False
) -> dict[str, int] | str:
    """``raw``'s counts by name as ints (absent optional ones are 0), or why they are bad.

    A required count that is absent or null is bad input, as is any count that
    is not a whole non-negative number of at most ``MAX_CALL_TOKENS`` (no upper
    bound for ``cumulative`` totals: the delta taken from them is checked).

    >>> read_counts({"input_tokens": 3, "output_tokens": 5.0}, ["input_tokens", "output_tokens"])
    {'input_tokens': 3, 'output_tokens': 5}
    >>> read_counts({"input_tokens": "3"}, ["input_tokens"])
    "input_tokens is not a number ('3')"
    >>> read_counts({}, ["output_tokens"])
    'output_tokens is missing'
    """
    if not isinstance(raw, Mapping):
        return f"usage is not an object ({type(raw).__name__})"
    counts: dict[str, int] = {}
    for names, needed in ((required, True), (optional, False)):
        for name in names:
            value = raw.get(name)
            if value is None:
                if needed:
                    return f"{name} is missing"
                counts[name] = 0
                continue
            why = count_problem(value, None if cumulative else MAX_CALL_TOKENS)
            if why is not None:
                return f"{name} {why}"
            counts[name] = int(value)
    return counts
