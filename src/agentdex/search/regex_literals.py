"""What text a regex needs: its required literals, for choosing candidates.

From Python's own parse of the pattern (``re._parser``), a *requirement* is
built that every matching text satisfies:

* a ``str``: the text contains it;
* a ``list``: all of its items hold (AND);
* an :class:`Alternatives`: at least one of its items holds (OR).

Adjacent literal characters join into strings; a group or alternation of
literal strings (``(retry|backoff)``, ``colou?r`` is not) joins with its
neighbours into a small set of alternative strings (``word1 (word2|zzq)``
needs ``word1 word2`` or ``word1 zzq``). Anything else (``.``, classes,
optional or repeated parts, back-references) ends a literal run; a part
repeated at least once still contributes what it needs. Zero-width
assertions do not break adjacency. This is the classic "regex to required
substrings" analysis (as in code search engines); it only ever weakens the
requirement, never strengthens it, so no match is lost.
"""

from __future__ import annotations

import re
from typing import Any

#: cross products of alternatives stop growing past this many strings
MAX_ALTERNATIVES = 32
#: a character class of at most this many characters counts as literal alternatives
MAX_CLASS = 4


class Alternatives(tuple[Any, ...]):
    """An OR of requirements."""


Requirement = Any  # str | list[Requirement] | Alternatives


def required_literals(pattern: str, sensitive: bool) -> tuple[Requirement | None, bool]:
    """(requirement or None when nothing is required, whether case is ignored anywhere)."""
    from re import _constants as c
    from re import _parser as sre_parse  # type: ignore[attr-defined]

    flags = 0 if sensitive else re.IGNORECASE
    try:
        parsed = sre_parse.parse(pattern, flags)
    except Exception:  # the matcher reports bad patterns; here it only means "no literals"
        return None, not sensitive
    ignore = bool(parsed.state.flags & re.IGNORECASE) or _local_case_flags(parsed.data, c)
    requirement = _simplify(_sequence(list(parsed.data), c))
    return requirement, ignore


def _local_case_flags(items: Any, c: Any) -> bool:
    stack = [items]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            if len(item) == 2 and item[0] is c.SUBPATTERN:
                _group, add, remove, _body = item[1]
                if (add | remove) & re.IGNORECASE:
                    return True
            stack.extend(item)
        elif hasattr(item, "data"):
            stack.append(item.data)
    return False


def _finite(op: Any, av: Any, c: Any) -> list[str] | None:
    """The strings a sequence item matches when they are few and literal, else None."""
    if op is c.LITERAL:
        return [chr(av)]
    if op is c.IN:
        chars = []
        for sub_op, sub_av in av:
            if sub_op is not c.LITERAL:
                return None
            chars.append(chr(sub_av))
        return chars if 0 < len(chars) <= MAX_CLASS else None
    if op is c.SUBPATTERN:
        return _finite_sequence(list(av[3]), c)
    if op is c.BRANCH:
        out: list[str] = []
        for branch in av[1]:
            strings = _finite_sequence(list(branch), c)
            if strings is None:
                return None
            out.extend(strings)
            if len(out) > MAX_ALTERNATIVES:
                return None
        return out
    return None


def _finite_sequence(items: list[Any], c: Any) -> list[str] | None:
    strings = [""]
    for op, av in items:
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue
        options = _finite(op, av, c)
        if options is None:
            return None
        strings = [s + o for s in strings for o in options]
        if len(strings) > MAX_ALTERNATIVES:
            return None
    return strings


def _sequence(items: list[Any], c: Any) -> list[Requirement]:
    """AND of what a sequence needs: runs of finite parts, and what the other parts need."""
    out: list[Requirement] = []
    run: list[str] = [""]

    def close() -> None:
        nonlocal run
        strings = [s for s in run if s]
        if strings and len(strings) == len(run):
            out.append(strings[0] if len(strings) == 1 else Alternatives(strings))
        run = [""]

    for op, av in items:
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue  # zero-width: adjacent literals stay adjacent
        options = _finite(op, av, c)
        if options is not None:
            grown = [s + o for s in run for o in options]
            if len(grown) <= MAX_ALTERNATIVES:
                run = grown
                continue
            close()
            run = list(options)
            continue
        close()
        inner = _needs(op, av, c)
        if inner is not None:
            out.append(inner)
    close()
    return out


def _needs(op: Any, av: Any, c: Any) -> Requirement | None:
    """What a non-literal item needs (None: nothing)."""
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
        low, _high, body = av
        return _simplify(_sequence(list(body), c)) if low >= 1 else None
    if op is c.SUBPATTERN:
        return _simplify(_sequence(list(av[3]), c))
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _simplify(_sequence(list(av), c))
    if op is c.BRANCH:
        branches = [_simplify(_sequence(list(branch), c)) for branch in av[1]]
        if any(b is None for b in branches):
            return None
        return Alternatives(branches)
    return None


def _simplify(requirement: list[Requirement]) -> Requirement | None:
    parts = [r for r in requirement if r is not None and r != []]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return parts
