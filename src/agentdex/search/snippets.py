"""A short, one-line excerpt around the first match, with highlight spans."""

from __future__ import annotations

import re

from agentdex.search.budget import Budget, BudgetInterrupt

WIDTH = 160
_SPACE = re.compile(r"\s+")


def make_snippet(
    text: str,
    matchers: list[re.Pattern[str]],
    width: int = WIDTH,
    *,
    budget: Budget | None = None,
) -> tuple[str, list[tuple[int, int]]]:
    """``(snippet, [(start, end), ...])``: spans index into the returned snippet.

    With a ``budget`` (regex searches), highlighting runs only while it
    lasts and is interruptible: past it, the snippet is the text's head.
    """
    flat = _SPACE.sub(" ", text).strip()
    if budget is None:
        return _snippet(flat, matchers, width)
    if not budget.expired():
        try:
            with budget.interruptible():
                return _snippet(flat, matchers, width)
        except BudgetInterrupt:
            pass
    return _snippet(flat, [], width)


def _snippet(
    flat: str, matchers: list[re.Pattern[str]], width: int
) -> tuple[str, list[tuple[int, int]]]:
    first: tuple[int, int] | None = None
    for pattern in matchers:
        match = pattern.search(flat)
        if match and match.end() > match.start() and (first is None or match.start() < first[0]):
            first = (match.start(), match.end())
    start = 0 if first is None else max(0, first[0] - width // 3)
    end = min(len(flat), start + width)
    start = max(0, min(start, end - width))
    snippet = flat[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    spans: list[tuple[int, int]] = []
    for pattern in matchers:
        for match in pattern.finditer(snippet):
            if match.end() > match.start():
                spans.append((match.start() + len(prefix), match.end() + len(prefix)))
            if len(spans) > 20:
                break
    spans.sort()
    return prefix + snippet + suffix, spans


def highlight_patterns(
    needles: list[str], *, regex: bool, sensitive: bool
) -> list[re.Pattern[str]]:
    flags = 0 if sensitive else re.IGNORECASE
    out: list[re.Pattern[str]] = []
    for needle in needles:
        try:
            out.append(re.compile(needle if regex else re.escape(needle), flags))
        except re.error:
            continue
    return out
