"""The order of a conversation: each file as the agent wrote it, files interleaved by time.

Timestamps alone cannot order a conversation: a prompt and its reply often
share one (VS Code stamps only the request), stores omit them (legacy
Cursor, Cursor CLI) or carry one per chat (Cline's task id). A parser emits
records in its store's own sequence, so within one file that sequence is
kept as it is; only separate files of one conversation (a transcript and
its subagents, a prompt log) are merged, by time, without reordering any
file's own records.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

#: A locator is a scheme (``line:``, ``json:``, ``row:``...), optionally after the name
#: of the file it is in (``history.jsonl:line:3``) when a conversation spans files.
_LOCATOR = re.compile(r"^(?:[^@\s/]*?:)?(?:line|json|row|part|meta|request|key):")


def conversation_order(
    items: Iterable[T],
    source: Callable[[T], str],
    timestamp: Callable[[T], float | None],
) -> list[T]:
    """``items`` (in parse order within each source) as one conversation.

    A record without a time takes the one before it in its file (or, at the
    start of a file, the first time the file has), so it stays beside its
    neighbours when files are merged.
    """
    files: dict[str, list[T]] = {}
    for item in items:
        files.setdefault(source(item), []).append(item)
    streams: list[list[tuple[float, T]]] = []
    for path in files:
        sequence = files[path]
        known = [t for t in map(timestamp, sequence) if t is not None]
        carried = known[0] if known else 0.0
        keyed: list[tuple[float, T]] = []
        for item in sequence:
            stamp = timestamp(item)
            if stamp is not None:
                carried = stamp
            keyed.append((carried, item))
        streams.append(keyed)
    streams.sort(key=lambda stream: stream[0][0])
    merged = heapq.merge(*streams, key=lambda pair: pair[0])
    return [item for _, item in merged]


def launch_place(
    items: Iterable[T],
    project: Callable[[T], str | None],
    cwd: Callable[[T], str | None],
    timestamp: Callable[[T], float | None],
) -> tuple[str | None, str | None]:
    """A conversation's project and cwd: where it was launched.

    The one notion every surface uses (the listing, ``show``, ``export``,
    ``resume``, the page): the project of the earliest item that has one
    (items without a time come after timed ones; ties keep the given order),
    with that item's cwd; a conversation with no project gets the earliest cwd.
    """
    ranked = sorted(
        enumerate(items),
        key=lambda pair: (timestamp(pair[1]) is None, timestamp(pair[1]) or 0.0, pair[0]),
    )
    for _, item in ranked:
        if project(item):
            return project(item), cwd(item)
    for _, item in ranked:
        if cwd(item):
            return None, cwd(item)
    return None, None


def record_place(records: Iterable[dict[str, object]]) -> tuple[str | None, str | None]:
    """:func:`launch_place` of records in their JSON form (``show --json``'s ``records``)."""
    from agentdex.records import parse_timestamp

    def text(value: object) -> str | None:
        return value if isinstance(value, str) and value else None

    return launch_place(
        records,
        lambda r: text(r.get("project")),
        lambda r: text(r.get("cwd")),
        lambda r: parse_timestamp(r.get("timestamp")),
    )


def split_ref(ref: str) -> tuple[str, str | None]:
    """``<session>@<locator>`` -> (session, locator); a bare session id has no locator.

    Session ids may hold ``@`` (Aider's are ``<folder>@<start time>``);
    locators never do, so the split is at the last ``@`` followed by a
    locator scheme.
    """
    ref = ref.strip()
    head, sep, tail = ref.rpartition("@")
    if sep and head and _LOCATOR.match(tail):
        return head, tail
    return ref, None
