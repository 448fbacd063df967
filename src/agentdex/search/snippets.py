"""A short, one-line excerpt around the first match, with highlight spans.

A tool call's text is its name and its arguments as JSON (``Edit {"old_string":
"a\\nb"}``); its excerpt shows the arguments as text (:func:`readable_call`:
``Edit old_string: a b``), not JSON escapes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentdex.search.budget import Budget, BudgetInterrupt

WIDTH = 160
_SPACE = re.compile(r"\s+")


def make_snippet(
    text: str,
    matchers: list[re.Pattern[str]],
    width: int = WIDTH,
    *,
    budget: Budget | None = None,
    kind: str | None = None,
    words: list[re.Pattern[str]] | None = None,
) -> tuple[str, list[tuple[int, int]]]:
    """``(snippet, [(start, end), ...])``: spans index into the returned snippet.

    With a ``budget`` (regex searches), highlighting runs only while it
    lasts and is interruptible: past it, the snippet is the text's head.
    ``kind="tool_call"`` reads the text as a call (:func:`readable_call`). ``words``
    (:func:`word_patterns`): the excerpt is cut around the first whole-word match when
    there is one (the reason the record ranks where it does), else the first match.
    """
    if kind == "tool_call":
        text = readable_call(text)
    flat = _SPACE.sub(" ", text).strip()
    if budget is None:
        return _snippet(flat, matchers, width, words)
    if not budget.expired():
        try:
            with budget.interruptible():
                return _snippet(flat, matchers, width, words)
        except BudgetInterrupt:
            pass
    return _snippet(flat, [], width)


#: ``name {json}``, ``name [json]`` or ``name({json})``: how parsers write a tool call.
_CALL = re.compile(r"^([\w.:/-]+)\s*\(?\s*([\[{].*[\]}])\s*\)?\s*$", re.S)


def readable_call(text: str) -> str:
    r"""A tool call's arguments as text: ``Bash {"command": "ls\n"}`` -> ``Bash command: ls``.

    >>> readable_call('Edit {"file_path": "a.py", "old": "x = \\"1\\"", "all": false}')
    'Edit file_path: a.py old: x = "1"'
    >>> readable_call('shell {"command": ["bash", "-lc", "ls"]}')
    'shell command: bash -lc ls'
    >>> readable_call("copilot_readFile")
    'copilot_readFile'
    """
    match = _CALL.match(text)
    if not match:
        return text
    try:
        arguments = json.loads(match.group(2))
    except ValueError:
        return text
    return f"{match.group(1)} {_as_text(arguments)}".rstrip(" ")


def _as_text(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(
            f"{key}: {_as_text(item)}" for key, item in value.items() if item not in _EMPTY
        )
    if isinstance(value, list):
        joiner = " " if all(isinstance(item, str | int | float) for item in value) else "; "
        return joiner.join(_as_text(item) for item in value)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


#: Arguments left out of the excerpt: they say nothing (``"replace_all": false``).
_EMPTY: tuple[object, ...] = (None, False, "", [], {})


def _snippet(
    flat: str,
    matchers: list[re.Pattern[str]],
    width: int,
    words: list[re.Pattern[str]] | None = None,
) -> tuple[str, list[tuple[int, int]]]:
    first = _first(flat, words or []) or _first(flat, matchers)
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


def _first(flat: str, patterns: list[re.Pattern[str]]) -> tuple[int, int] | None:
    first: tuple[int, int] | None = None
    for pattern in patterns:
        match = pattern.search(flat)
        if match and match.end() > match.start() and (first is None or match.start() < first[0]):
            first = (match.start(), match.end())
    return first


def word_patterns(needles: list[str], *, sensitive: bool) -> list[re.Pattern[str]]:
    """Each literal as a whole word (not inside a run of letters and digits)."""
    flags = 0 if sensitive else re.IGNORECASE
    return [re.compile(rf"(?<![^\W_]){re.escape(n)}(?![^\W_])", flags) for n in needles if n]


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
