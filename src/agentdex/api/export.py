"""Export API: one conversation as a readable document (Markdown, standalone HTML, JSON).

:func:`conversation` gathers what a reader needs (the records in order, and a
header: agent, project, branch, worktree, model, times), masking secrets with
``redact=True`` (only in what it returns: no store and no index is touched).
:func:`export` renders it; the renderers live in
:mod:`agentdex.api.export_render`.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson

from agentdex import __version__
from agentdex.errors import AgentdexError, UsageError

#: Export formats and their media types.
MEDIA_TYPES: dict[str, str] = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "json": "application/json",
}
FORMATS: tuple[str, ...] = tuple(MEDIA_TYPES)

#: Bumped when the JSON export changes incompatibly (keys are only ever added).
EXPORT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Export:
    """A rendered document and what a caller needs to save or serve it."""

    format: str
    content: str
    media_type: str
    filename: str
    agent: str
    session_id: str
    redacted: int | None

    def to_json(self) -> dict[str, Any]:
        """What ``agentdex export -o FILE --json`` reports (the content is in the file)."""
        return {
            "format": self.format,
            "agent": self.agent,
            "session_id": self.session_id,
            "media_type": self.media_type,
            "filename": self.filename,
            "bytes": len(self.content.encode("utf-8")),
            "redacted": self.redacted,
        }


def conversation(ref: str, home: str | None = None, *, redact: bool = False) -> dict[str, Any]:
    """Conversation ``ref`` with its header, ready to render (the JSON export's shape)."""
    from agentdex.api import history

    data = history.show(ref, home)
    records: list[dict[str, Any]] = [dict(r) for r in data["records"]]
    title = _indexed_title(data["agent"], data["session_id"], home) or _first_prompt_line(records)
    redaction: dict[str, Any] | None = None
    if redact:
        from agentdex.api.redaction import Redactor

        mask = Redactor()
        for record in records:
            record["text"] = mask(record["text"])
        title = mask(title) if title else title
        redaction = {"count": mask.total, "by_pattern": dict(sorted(mask.counts.items()))}
    stamps = [r["timestamp"] for r in records if r.get("timestamp")]
    return {
        "export_version": EXPORT_VERSION,
        "generator": f"agentdex {__version__}",
        "agent": data["agent"],
        "session_id": data["session_id"],
        "title": title,
        "project": data.get("project"),
        "cwd": next(iter(_distinct(records, "cwd")), None),
        "branches": _distinct(records, "branch"),
        "worktrees": _distinct(records, "worktree"),
        "models": _distinct(records, "model"),
        "hosts": _distinct(records, "host"),
        "started": min(stamps) if stamps else None,
        "ended": max(stamps) if stamps else None,
        "focus": data.get("focus"),
        "counts": dict(Counter(r["role"] for r in records)),
        "redaction": redaction,
        "records": records,
    }


def export(
    ref: str, home: str | None = None, *, format: str = "md", redact: bool = False
) -> Export:
    """Conversation ``ref`` rendered as ``format`` (``md``, ``html`` or ``json``)."""
    if format not in MEDIA_TYPES:
        raise UsageError(f"unknown export format {format!r}; use one of {', '.join(FORMATS)}")
    data = conversation(ref, home, redact=redact)
    if format == "json":
        content = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"
    else:
        from agentdex.api import export_render

        content = export_render.markdown(data) if format == "md" else export_render.html(data)
    redaction = data["redaction"]
    return Export(
        format=format,
        content=content,
        media_type=MEDIA_TYPES[format],
        filename=_filename(data["agent"], data["session_id"], format),
        agent=data["agent"],
        session_id=data["session_id"],
        redacted=None if redaction is None else redaction["count"],
    )


def _distinct(records: list[dict[str, Any]], key: str) -> list[str]:
    """The values of ``key`` in the order they first appear."""
    return list(dict.fromkeys(r[key] for r in records if r.get(key)))


def _indexed_title(agent: str, session_id: str, home: str | None) -> str | None:
    """The title the index holds (agent-given or first prompt); None without an index."""
    from agentdex.api.conversations import conversation_title
    from agentdex.api.index import reader

    try:
        with reader(None, home) as engine:
            return None if engine is None else conversation_title(engine, agent, session_id)
    except (AgentdexError, sqlite3.Error, OSError):  # a title is a nicety: never fail on it
        return None


def _first_prompt_line(records: list[dict[str, Any]]) -> str | None:
    for record in records:
        if record["kind"] == "prompt" and record["text"].strip():
            line = record["text"].strip().splitlines()[0]
            return line if len(line) <= 100 else line[:99] + "…"
    return None


def _filename(agent: str, session_id: str, format: str) -> str:
    """A safe file name such as ``claude-code-4f1c2b3a.md``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{agent}-{session_id[:64]}").strip("-.")
    return f"{stem or 'conversation'}.{format}"
