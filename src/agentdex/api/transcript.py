"""One conversation for reading: its records in order with a header, and live updates.

:func:`conversation` is ``show`` (:func:`agentdex.api.history.show`) plus what a
reader wants on top: the conversation's title, the projects, branches,
worktrees and models it touched, first and last activity, counts per kind,
and per record its ``ref`` (the deep link the CLI takes) and its position.
Long texts can be cut at ``max_chars`` (``chars`` keeps the full length) so a
5,000-message conversation stays a reasonable download; :func:`record` gives
one record in full.

:class:`TranscriptWatch` follows a conversation while an agent writes it: it
watches the size and mtime of the conversation's files and, when one changes,
refreshes the index and returns only the records not seen before.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from agentdex.api._order import record_place
from agentdex.api.ids import conversation_id
from agentdex.api.titles import title_of
from agentdex.errors import NotFoundError

#: What the page asks for by default; 0 means "never cut".
DEFAULT_MAX_CHARS = 0
MAX_MAX_CHARS = 10_000_000


def _distinct(values: list[Any]) -> list[Any]:
    """Non-empty values in first-seen order."""
    seen: dict[Any, None] = {}
    for value in values:
        if value:
            seen.setdefault(value, None)
    return list(seen)


def _focus(data: dict[str, Any], ref: str) -> int | None:
    """The position ``ref`` names; also when the session id itself holds an ``@``.

    ``show`` splits a REF at its first ``@``; Aider's chat ids look like
    ``<dir>@<time>``, so their refs are matched here against each record's whole ref.
    """
    if data["focus"] is not None:
        return int(data["focus"])
    wanted = ref.strip()
    if wanted.count("@") < 2:
        return None
    return next(
        (i for i, r in enumerate(data["records"]) if f"{r['session_id']}@{r['locator']}" == wanted),
        None,
    )


def _reading(
    record: dict[str, Any], position: int, max_chars: int, home: str | None = None
) -> dict[str, Any]:
    """A record as the page reads it: ``ref``, ``position``, ``chars``, maybe cut."""
    text = record["text"] or ""
    out = {key: value for key, value in record.items() if key not in ("snippet", "score")}
    out["ref"] = f"{record['session_id']}@{record['locator']}"
    conversation = conversation_id(record["agent"], record["session_id"], home)
    out["short_ref"] = f"{conversation}@{record['locator']}"
    out["position"] = position
    out["chars"] = len(text)
    out["truncated"] = bool(max_chars) and len(text) > max_chars
    if out["truncated"]:
        out["text"] = text[:max_chars]
    return out


def conversation(
    ref: str,
    *,
    home: str | None = None,
    agent: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    refresh_first: bool = False,
) -> dict[str, Any]:
    """The conversation ``ref`` names (session id, unique prefix or ``SESSION@LOCATOR``).

    ``refresh_first`` brings the index up to date before reading (without
    waiting for another indexer), so the title is the agent's own. Returns
    ``{session_id, agent, title, focus, project, cwd, branches, worktrees,
    models, first_activity, last_activity, source_paths, message_count,
    kind_counts, records}``; ``focus`` is the position of the referenced
    record (null for a bare id).
    """
    from agentdex.api import history

    if refresh_first:
        from agentdex.api.index import refresh

        refresh(home=home, wait=False)
    data = history.show(ref, home, agent=agent)
    raw = data["records"]
    focus = _focus(data, ref)
    stamps = [r["timestamp"] for r in raw if r["timestamp"]]
    return {
        "session_id": data["session_id"],
        "id": conversation_id(data["agent"], data["session_id"], home),
        "agent": data["agent"],
        "title": title_of(data["agent"], data["session_id"], raw, home),
        "focus": focus,
        "project": data["project"],
        "cwd": record_place(raw)[1],
        "branches": _distinct([r["branch"] for r in raw]),
        "worktrees": _distinct([r["worktree"] for r in raw]),
        "models": _distinct([r["model"] for r in raw]),
        "first_activity": min(stamps) if stamps else None,
        "last_activity": max(stamps) if stamps else None,
        "source_paths": _distinct([r["source_path"] for r in raw]),
        "message_count": len(raw),
        "kind_counts": dict(Counter(r["kind"] for r in raw)),
        "records": [_reading(r, i, max_chars, home) for i, r in enumerate(raw)],
    }


def record(ref: str, *, home: str | None = None, agent: str | None = None) -> dict[str, Any]:
    """The one record ``SESSION@LOCATOR`` names, never cut."""
    from agentdex.api import history

    data = history.show(ref, home, agent=agent)
    focus = _focus(data, ref)
    if focus is None:
        raise NotFoundError(f"{ref!r} names no record: give SESSION@LOCATOR as search shows it")
    return _reading(data["records"][focus], focus, 0, home)


def _signature(paths: list[str]) -> tuple[tuple[int, int] | None, ...]:
    """(size, mtime_ns) of each file and its SQLite WAL; None for a file that is gone."""
    out: list[tuple[int, int] | None] = []
    for path in paths:
        for candidate in (path, path + "-wal"):
            try:
                info = os.stat(candidate)
            except OSError:
                out.append(None)
            else:
                out.append((info.st_size, info.st_mtime_ns))
    return tuple(out)


class TranscriptWatch:
    """Follow one conversation: :meth:`poll` returns the records added since the last look.

    Cheap while nothing changes (a ``stat`` per file). When a file of the
    conversation changed, the index is refreshed (without waiting for another
    indexer) so search sees the new messages too, and the conversation is
    read again; records are told apart by (source file, locator).
    """

    def __init__(
        self,
        ref: str,
        *,
        home: str | None = None,
        agent: str | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        self._home = home
        self._agent = agent
        self._max_chars = max_chars
        data = conversation(ref, home=home, agent=agent, max_chars=max_chars)
        self.session_id: str = data["session_id"]
        self.agent: str = data["agent"]
        self.message_count: int = data["message_count"]
        self._seen = {(r["source_path"], r["locator"]) for r in data["records"]}
        self._paths: list[str] = data["source_paths"]
        self._signature = _signature(self._paths)

    def poll(self) -> list[dict[str, Any]]:
        """Records not seen before (each with its position), oldest first; [] when unchanged."""
        signature = _signature(self._paths)
        if signature == self._signature:
            return []
        from agentdex.api.index import refresh

        refresh(home=self._home, wait=False)
        try:
            data = conversation(
                self.session_id, home=self._home, agent=self._agent, max_chars=self._max_chars
            )
        except NotFoundError:
            self._signature = signature  # the files are gone: nothing new to say
            return []
        self._signature = signature
        if data["source_paths"] != self._paths:
            self._paths = data["source_paths"]
            self._signature = _signature(self._paths)
        self.message_count = data["message_count"]
        fresh = [r for r in data["records"] if (r["source_path"], r["locator"]) not in self._seen]
        self._seen.update((r["source_path"], r["locator"]) for r in fresh)
        return fresh
