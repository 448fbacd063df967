"""How one text term matches one record (verification) or every record of a block (scans).

Semantics (the brute-force oracle in the tests states the same rules):

* case-insensitive literal: ``term.lower() in text.lower()``;
* case-sensitive literal: ``term in text``;
* ``-w``: the occurrence has no word character (``\\w``) right before or after
  it, in the lower-cased text (insensitive) or the text (sensitive);
* regex: ``re.search(term, text)`` with ``re.IGNORECASE`` when insensitive,
  wrapped in ``(?<!\\w)(?:...)(?!\\w)`` with ``-w``.

Which records are worth checking is the postings' business
(:mod:`agentdex.search.plan`); every answer is checked here.

Regex matching runs in the budget's interruptible region
(:mod:`agentdex.search.budget`): a runaway pattern is stopped inside
``re.search`` by :class:`~agentdex.search.budget.BudgetInterrupt`, which is
*not* caught here. A half-evaluated record or block is no answer at all, so
the engine catches it where a whole record or block is decided.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from agentdex.errors import UsageError
from agentdex.index.segments import Block, encode
from agentdex.search.budget import Budget, unlimited

MAX_REGEX_CHARS = 1000


def _context_free(pattern: str, flags: int) -> bool:
    """False when the regex holds anchors or lookarounds (matches depend on context)."""
    from re import _parser as sre_parse  # type: ignore[attr-defined]
    from re._constants import ASSERT, ASSERT_NOT, AT

    try:
        items: object = sre_parse.parse(pattern, flags).data
    except Exception:
        return False
    stack = [items]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple | list):
            if len(item) == 2 and item[0] in (AT, ASSERT, ASSERT_NOT):
                return False
            stack.extend(item)
        elif hasattr(item, "data"):
            stack.append(item.data)
    return True


_GLOBAL_FLAGS = re.compile(r"^(\(\?[aiLmsux]+\))?(.*)$", re.DOTALL)


def _word_regex(pattern: str) -> str:
    """``pattern`` as a whole word; leading global flags like ``(?i)`` stay in front."""
    match = _GLOBAL_FLAGS.match(pattern)
    assert match is not None
    flags, body = match.groups()
    return f"{flags or ''}(?<!\\w)(?:{body})(?!\\w)"


class TermMatcher:
    """Matches one term against one record or every record of a block."""

    def __init__(
        self,
        text: str,
        *,
        case_sensitive: bool,
        word: bool,
        regex: bool,
        budget: Budget | None = None,
    ) -> None:
        self.text = text
        self.budget = budget if budget is not None else unlimited()
        self.case_sensitive = case_sensitive
        self.word = word
        self.regex = regex
        self.pattern: re.Pattern[str] | None = None
        self.block_pattern: re.Pattern[str] | None = None
        if regex:
            if len(text) > MAX_REGEX_CHARS:
                raise UsageError(f"regex too long ({len(text)} characters)")
            flags = 0 if case_sensitive else re.IGNORECASE
            source = _word_regex(text) if word else text
            try:
                self.pattern = re.compile(source, flags)
            except (re.error, RecursionError, OverflowError) as exc:
                raise UsageError(f"invalid regex {text!r}: {exc}") from None
            if not word and _context_free(text, flags):
                self.block_pattern = self.pattern
        else:
            self.needle_lower = encode(text.lower())
            if word:
                target = text if case_sensitive else text.lower()
                self.pattern = re.compile(f"(?<!\\w){re.escape(target)}(?!\\w)")

    # -- one record (used for restricted scans and by ranking) ------------------
    def matches_text(self, text: str) -> bool:
        if self.regex:
            assert self.pattern is not None
            with self.budget.interruptible():
                return self.pattern.search(text) is not None
        target = text if self.case_sensitive else text.lower()
        if self.pattern is not None:
            return self.pattern.search(target) is not None
        return (self.text if self.case_sensitive else self.text.lower()) in target

    def matches_record(self, block: Block, index: int) -> bool:
        """Does record ``index`` of ``block`` match (the lower-cased bytes for plain terms)?"""
        if self.regex or self.case_sensitive:
            return self.matches_text(block.original_text(index))
        lower = block.lower_record(index)
        if self.needle_lower not in lower:
            return False
        if self.pattern is None:
            return True
        return self.pattern.search(lower.decode("utf-8", "surrogatepass")) is not None

    # -- a block -------------------------------------------------------------------
    def scan(self, block: Block, local: list[int] | None = None) -> list[int]:
        """Positions (0-based within the block) of matching records, optionally only ``local``."""
        if self.regex:
            return self._scan_regex(block, local)
        if self.case_sensitive:
            found = self._scan_literal_str(block, local)
        else:
            found = self._scan_literal_bytes(block, local)
        if self.pattern is not None:
            text_of = block.original_text if self.case_sensitive else block.lower_text
            found = [i for i in found if self.pattern.search(text_of(i))]
        return found

    def _scan_literal_bytes(self, block: Block, local: list[int] | None) -> list[int]:
        needle, count = self.needle_lower, block.count
        if local is not None and len(local) * 8 < count:
            return [i for i in local if needle in block.lower_record(i)]
        return _records_containing(block.lower, needle, lambda: block.lower_starts, count, local)

    def _scan_literal_str(self, block: Block, local: list[int] | None) -> list[int]:
        data, needle = block.original, self.text
        return _records_containing(data, needle, lambda: block.original_starts, block.count, local)

    def _scan_regex(self, block: Block, local: list[int] | None) -> list[int]:
        assert self.pattern is not None
        with self.budget.interruptible():
            if self.block_pattern is not None and self.block_pattern.search(block.original) is None:
                return []
            search = self.pattern.search
            indices = local if local is not None else range(block.count)
            return [i for i in indices if search(block.original_text(i)) is not None]


def _records_containing(
    data: Any,
    needle: Any,
    starts_of: Callable[[], Sequence[int]],
    count: int,
    local: list[int] | None,
) -> list[int]:
    """Indexes of the records (``starts_of()``: their offsets in ``data``, asked for only
    when ``needle`` is there) holding ``needle``.

    One ``find`` per match; after a hit the scan jumps to the next record, so
    a record is reported once however often it matches. ``local`` restricts
    the answer to those records.
    """
    out: list[int] = []
    n = len(needle)
    size = len(data)
    pos = data.find(needle)
    if pos == -1:
        return out
    starts = starts_of()
    while pos != -1:
        idx = bisect_right(starts, pos) - 1
        end = starts[idx + 1] - 1 if idx + 1 < count else size
        if pos + n <= end:
            out.append(idx)
            pos = data.find(needle, end + 1)
        else:
            pos = data.find(needle, pos + 1)
    if local is not None:
        wanted = set(local)
        out = [i for i in out if i in wanted]
    return out
