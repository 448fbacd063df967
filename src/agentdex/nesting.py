"""Bounded nesting for documents agentdex parses but did not write.

A document nested thousands of levels deep is valid JSON, TOML or YAML, and
every parser or walk that recurses once per level turns it into a
``RecursionError`` (``tomllib``, ``orjson.dumps`` past 255 levels, ``repr``)
or, in PyYAML's C loader, a segmentation fault. No agent writes anything
near ``MAX_NESTING`` levels, so deeper input is refused (configs, front
matter) or cut (store lines, whose shallow fields are still indexed) before
anything recursive sees it. Every function here is iterative.
"""

from __future__ import annotations

from typing import Any

#: Deepest nesting of arrays/objects (tables, mappings) accepted in a parsed document.
MAX_NESTING = 128
#: What replaces a container found below ``MAX_NESTING`` levels when a value is cut.
CUT_MARKER = f"[nested deeper than {MAX_NESTING} levels; cut]"


def value_depth(value: Any, stop_above: int | None = None) -> int:
    """Nesting depth of lists/dicts in ``value`` (a scalar is 0), counted without recursion.

    With ``stop_above``, the walk ends as soon as the depth exceeds it.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if stop_above is not None and deepest > stop_above:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def cut_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    """Replace, in place, every container below ``limit`` levels with ``CUT_MARKER``.

    Returns whether anything was cut. Meant for freshly parsed JSON (dicts
    and lists only).
    """
    cut = False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            keys: Any = list(item)
        elif isinstance(item, list):
            keys = range(len(item))
        else:
            continue
        for key in keys:
            child = item[key]
            if not isinstance(child, dict | list):
                continue
            if depth >= limit:
                item[key] = CUT_MARKER
                cut = True
            else:
                stack.append((child, depth + 1))
    return cut


def may_be_deeper(raw: bytes | str, limit: int = MAX_NESTING) -> bool:
    """Cheap pre-check: can this JSON text nest deeper than ``limit``? (C-speed counts.)"""
    if isinstance(raw, bytes):
        return raw.count(b"[") + raw.count(b"{") > limit
    return raw.count("[") + raw.count("{") > limit
